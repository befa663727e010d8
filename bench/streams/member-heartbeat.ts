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
  armSessions,
  flat,
  managerHeartbeat,
  newManager,
  shuffleInPlace,
  stableMembers,
  steadyArgs,
} from './member-shape.js'

const [members, perGroup, count, samples] = steadyArgs('member-heartbeat.ts', [10_000, 5, 100_000, 7])

const manager = newManager()

// 1. Build the stable members (as member-memory.ts does).
const built = stableMembers(manager, members, perGroup, 1_000_000)
const drivers = built.drivers
let nowMs = built.nowMs
armSessions(manager, drivers)
shuffleInPlace(drivers)
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
    if (managerHeartbeat(manager, d, nowMs, clientIds[k]!))
      throw new Error(`${d.memberId}: not a steady heartbeat`)
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
