// CPU time of the steady StreamsGroupHeartbeat against the same members built two ways, in one
// process: live (every member joined and reconciled by its own heartbeats, their records replayed
// as the runtime replays a write's records) and loaded (a fresh manager replaying the same records
// encoded and decoded as the record store keeps them, as a restarted server loads its shard).
// Members as in bench/streams/member-heartbeat.ts; each member's session timer marked armed on both.
//
// Each round times one sample on each manager, alternating which goes first; a sample is `count`
// heartbeats over the members in a fixed shuffled order, CPU time (process.cpuUsage) ÷ count. The
// medians of `rounds` rounds are printed, and the loaded manager's ÷ the live one's round by round.
// With `--allow-natives-syntax`, the objects of each member and group on the two managers are
// first compared by their V8 hidden class (%HaveSameMap), and the mismatches counted.
//
//   node --expose-gc [--allow-natives-syntax] --import tsx bench/streams/replayed-heartbeat.ts [members=10000] [perGroup=10] [count=50000] [rounds=15]
import { coordinatorRecordSerde } from '../../src/coordinator/service/records.js'
import type {
  StreamsCoordinatorRecord,
  StreamsGroupManager,
} from '../../src/coordinator/shard/streams/index.js'
import * as shape from './member-shape.js'

const [members, perGroup, count, rounds] = shape.steadyArgs('replayed-heartbeat.ts', [10_000, 10, 50_000, 15])

/** Every record the live manager replayed, in order. */
const log: StreamsCoordinatorRecord[] = []

// 1. The live manager: the members join and reconcile by their heartbeats.
const live = shape.newManager()
const built = shape.stableMembers(live, members, perGroup, 1_000_000, log)
const drivers = built.drivers
let nowMs = built.nowMs

// 2. The loaded manager: the same records through the store's encoding, replayed into a fresh one.
const stored = log.map((r) => {
  const e = coordinatorRecordSerde.serialize(r)
  return { key: Uint8Array.from(e.key), value: e.value === null ? null : Uint8Array.from(e.value) }
})
const loaded = shape.newManager()
for (const s of stored) loaded.replay(coordinatorRecordSerde.deserialize(s) as StreamsCoordinatorRecord)

shape.armSessions(live, drivers)
shape.armSessions(loaded, drivers)
shape.shuffleInPlace(drivers)
const clientIds = drivers.map((d) => shape.flat(d.clientId))

// The first heartbeat of each group on the loaded manager configures its topology again (soft
// state a restart drops): one pass over every member on each before the timing.
for (const m of [live, loaded]) {
  for (let k = 0; k < drivers.length; k++) shape.managerHeartbeat(m, drivers[k]!, nowMs, clientIds[k]!)
}

if (process.execArgv.includes('--allow-natives-syntax')) {
  // Natives syntax does not parse as TypeScript: the check is compiled at run time.
  const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean
  const differ = { groups: 0, slots: 0, targets: 0, topologies: 0 }
  for (const d of drivers) {
    const [a, b] = [live.group(d.groupId)!, loaded.group(d.groupId)!]
    if (!sameMap(a, b)) differ.groups++
    if (!sameMap(a.slot(d.memberId)!, b.slot(d.memberId)!)) differ.slots++
    if (!sameMap(a.targetAssignment(d.memberId), b.targetAssignment(d.memberId))) differ.targets++
    if (!sameMap(a.topology!, b.topology!)) differ.topologies++
  }
  console.log(
    `hidden classes differing between live and loaded, of ${drivers.length} members: ${JSON.stringify(differ)}`,
  )
}

let k = 0
function sample(m: StreamsGroupManager): number {
  ;(globalThis as { gc?: () => void }).gc?.()
  const start = process.cpuUsage()
  for (let i = 0; i < count; i++) {
    const d = drivers[k]!
    if (shape.managerHeartbeat(m, d, nowMs, clientIds[k]!))
      throw new Error(`${d.memberId}: not a steady heartbeat`)
    k = k + 1 === drivers.length ? 0 : k + 1
  }
  const used = process.cpuUsage(start)
  nowMs += 1
  return (used.user + used.system) / count
}

const liveUs: number[] = []
const loadedUs: number[] = []
for (let r = 0; r < rounds; r++) {
  if (r % 2 === 0) {
    liveUs.push(sample(live))
    loadedUs.push(sample(loaded))
  } else {
    loadedUs.push(sample(loaded))
    liveUs.push(sample(live))
  }
}
const median = (a: readonly number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!
const ratios = liveUs.map((l, i) => loadedUs[i]! / l)
console.log(
  `steady heartbeat, ${members} members in groups of ${perGroup}, ${count} a sample, ${rounds} rounds (${log.length} records): ` +
    `live median ${median(liveUs).toFixed(2)} µs CPU, loaded ${median(loadedUs).toFixed(2)}; loaded ÷ live median ${median(ratios).toFixed(3)} (min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)}); Node ${process.version}`,
)
console.log(`live   ${liveUs.map((x) => x.toFixed(2)).join(' ')}`)
console.log(`loaded ${loadedUs.map((x) => x.toFixed(2)).join(' ')}`)
