// CPU time of the steady StreamsGroupHeartbeat straight into the streams group manager, in one
// process, over the members of bench/streams/member-memory.ts's shape: `members` stable members in
// groups of `perGroup` (one stateless subtopology, 20 tasks a group), Kafka Streams' id shapes.
// Each member's session timer is marked armed, as the runtime marks it, so a heartbeat that writes
// nothing moves the soft deadline (the steady path). The heartbeat is what Kafka Streams sends when
// nothing changed: member id and epoch, the tasks it owns, every other field null or -1, the same
// client id and host (a string of its own each time, as a request decoder makes it).
//
// Each sample: `count` heartbeats over the members in a fixed shuffled order, CPU time
// (process.cpuUsage, user + system) ÷ count; the median of `samples` samples is printed.
//
//   node --expose-gc --import tsx bench/streams/member-heartbeat.ts [members=10000] [perGroup=5] [count=100000] [samples=7]
import {
  STREAMS_GROUP_CONFIG_DEFAULTS,
  type StreamsGroupConfig,
} from '../../src/coordinator/shard/streams/index.js'
import {
  APPLICATION,
  bytes,
  flat,
  type MemberDriver,
  memberRequest,
  newManager,
  newMembers,
  untilStable,
} from './member-shape.js'

const members = Number(process.argv[2] ?? 10_000)
const perGroup = Number(process.argv[3] ?? 5)
const count = Number(process.argv[4] ?? 100_000)
const samples = Number(process.argv[5] ?? 7)
if (!(members > 0) || !(perGroup > 0) || members % perGroup !== 0 || !(count > 0) || !(samples > 0)) {
  console.error('usage: member-heartbeat.ts [members>0] [perGroup>0, divides members] [count>0] [samples>0]')
  process.exit(2)
}

const HOST = '/10.0.0.7'
const CONFIG: StreamsGroupConfig = {
  ...STREAMS_GROUP_CONFIG_DEFAULTS,
  initialRebalanceDelayMs: 0,
  assignmentIntervalMs: 0,
  sessionTimeoutMs: 600_000,
}
interface Driver extends MemberDriver {
  readonly groupId: string
}

const manager = newManager()

/** The steady heartbeat answers endpoint epoch 0 (no member has an endpoint); a join sends -1. */
const request = (d: Driver) => memberRequest(d.groupId, d, d.epoch === 0 ? -1 : 0)

function heartbeat(d: Driver, nowMs: number, clientId: string) {
  const result = manager.streamsGroupHeartbeat(
    { nowMs, requestApiVersion: 1, clientId, clientHost: HOST, config: CONFIG },
    request(d),
  )
  for (const r of result.records) manager.replay(r)
  const res = result.response
  if (res.errorCode !== 0) throw new Error(`${d.memberId}: error ${res.errorCode} ${res.errorMessage}`)
  const changed = res.activeTasks !== null || res.memberEpoch !== d.epoch || result.records.length > 0
  d.epoch = res.memberEpoch
  if (res.activeTasks !== null) d.active = res.activeTasks
  return changed
}

// 1. Build the stable members (as member-memory.ts does).
const drivers: Driver[] = []
let nowMs = 1_000_000
for (let g = 0; g < members / perGroup; g++) {
  const groupId = `${APPLICATION}-g${g}`
  const group: Driver[] = newMembers(perGroup).map((d) => ({ ...d, groupId }))
  untilStable(groupId, group, (d) => heartbeat(d, nowMs++, d.clientId))
  drivers.push(...group)
}
// The runtime marks an armed session timer on its watch; a steady heartbeat then moves the soft
// deadline instead of asking for a timer.
for (const d of drivers) {
  const session = manager.group(d.groupId)!.slot(d.memberId)!
  session.armed = true
  session.dueMs = Number.MAX_SAFE_INTEGER
}
// A fixed shuffled order.
for (let i = drivers.length - 1; i > 0; i--) {
  const j = (bytes(4).readUInt32LE(0) % (i + 1)) | 0
  ;[drivers[i], drivers[j]] = [drivers[j]!, drivers[i]!]
}
// Each request's client id is a string of its own, made before the timing.
const clientIds = drivers.map((d) => flat(d.clientId))

// 2. Samples.
const results: number[] = []
let k = 0
for (let s = 0; s < samples; s++) {
  ;(globalThis as { gc?: () => void }).gc?.()
  const start = process.cpuUsage()
  for (let i = 0; i < count; i++) {
    const d = drivers[k]!
    if (heartbeat(d, nowMs, clientIds[k]!)) throw new Error(`${d.memberId}: not a steady heartbeat`)
    k = k + 1 === drivers.length ? 0 : k + 1
  }
  const used = process.cpuUsage(start)
  results.push((used.user + used.system) / count)
  nowMs += 1
}
const sorted = [...results].sort((a, b) => a - b)
console.log(
  `steady heartbeat, ${members} members in groups of ${perGroup}, ${count} a sample: median ${sorted[samples >> 1]!.toFixed(2)} µs CPU (samples ${results.map((r) => r.toFixed(2)).join(', ')}); Node ${process.version}`,
)
