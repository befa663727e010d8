/**
 * The consumer group assignors (`uniform`, `range`) at scale, measured as the streams sticky task
 * assignor is (bench/streams/assignor.ts): n members × 10n partitions for n = 1,000 and 2,000, the
 * time of one assignment (median CPU and wall time of 21 calls after 5 warm-up calls) and the
 * ratio of CPU times time(2n) / time(n) (goal ≤ 2.2, close to linear); and for each case its
 * balance and stickiness. Not part of the test gate.
 *
 * Shape: 10 topics of n partitions each. "homogeneous": every member subscribes to every topic;
 * "heterogeneous": member i subscribes to the 5 topics i … i+4 (mod 10), so each topic has half the
 * members. Two cases each:
 * - cold: no member holds anything (the first assignment of a group);
 * - rebalance: every member holds its previous target, member 0 left and a new member joined.
 *
 * Balance: the spread (most − fewest partitions of a member). Stickiness: how many partitions of the
 * members that stayed changed owner in the rebalance, next to the least that must (the partitions
 * the member that left held, which go to the new member or are spread over the others).
 *
 * Run: npx tsx bench/consumer/assignor.ts [assignor] (part of `npm run bench -- consumer`); with an
 * assignor name (`uniform`, `range`), only that assignor's cases.
 */
import {
  type ConsumerGroupPartitionAssignor,
  type GroupSpec,
  type MemberSubscriptionSpec,
  RangeAssignor,
  UniformAssignor,
} from '../../src/coordinator/shard/consumer/assignor/index.js'
import type { PartitionSet } from '../../src/coordinator/shard/consumer/partitions.js'

const TOPICS = 10
const TOPICS_PER_MEMBER = 5
type Shape = 'homogeneous' | 'heterogeneous'

const topicIds = Array.from({ length: TOPICS }, (_, t) => `topic-${t}`)

function subscriptionOf(index: number, shape: Shape): Set<string> {
  if (shape === 'homogeneous') return new Set(topicIds)
  return new Set(Array.from({ length: TOPICS_PER_MEMBER }, (_, k) => topicIds[(index + k) % TOPICS]!))
}

function group(
  indexes: readonly number[],
  shape: Shape,
  current: ReadonlyMap<string, PartitionSet> = new Map(),
): GroupSpec {
  const members = new Map<string, MemberSubscriptionSpec>()
  for (const i of indexes) {
    const id = `member-${String(i).padStart(5, '0')}`
    members.set(id, {
      instanceId: null,
      rackId: null,
      subscribedTopicIds: subscriptionOf(i, shape),
      assignment: current.get(id) ?? new Map(),
    })
  }
  return { members, homogeneous: shape === 'homogeneous' }
}

const describer = (partitions: number) => ({
  numPartitions: (id: string) => (topicIds.includes(id) ? partitions : -1),
})

function owners(result: ReadonlyMap<string, PartitionSet>): Map<string, string> {
  const out = new Map<string, string>()
  for (const [member, set] of result) {
    for (const [topic, ps] of set) for (const p of ps) out.set(`${topic}-${p}`, member)
  }
  return out
}

function spread(spec: GroupSpec, result: ReadonlyMap<string, PartitionSet>): number {
  let most = 0
  let fewest = Number.POSITIVE_INFINITY
  for (const id of spec.members.keys()) {
    let n = 0
    for (const ps of result.get(id)?.values() ?? []) n += ps.size
    most = Math.max(most, n)
    fewest = Math.min(fewest, n)
  }
  return most - fewest
}

interface Case {
  readonly name: string
  readonly assignor: ConsumerGroupPartitionAssignor
  readonly spec: GroupSpec
  readonly partitions: number
  readonly report: string
}

const sizes = [1_000, 2_000]
const only = process.argv[2]
const assignors = [new UniformAssignor(), new RangeAssignor()].filter(
  (a) => only === undefined || a.name() === only,
)
const shapes: readonly Shape[] = ['homogeneous', 'heterogeneous']
const cases: Case[] = []
for (const assignor of assignors) {
  for (const shape of shapes) {
    for (const n of sizes) {
      const all = Array.from({ length: n }, (_, i) => i)
      const cold = group(all, shape)
      const first = assignor.assign(cold, describer(n))
      // Member 0 leaves, member n joins (with member 0's subscription); the rest hold their targets.
      const rebalance = group([...all.slice(1), n], shape, first)
      const second = assignor.assign(rebalance, describer(n))
      const before = owners(first)
      const after = owners(second)
      const leaver = 'member-00000'
      let moved = 0
      let mustMove = 0
      for (const [tp, owner] of before) {
        if (owner === leaver) mustMove++
        else if (after.get(tp) !== owner) moved++
      }
      const label = `${assignor.name()} ${shape}`
      cases.push({
        name: `${label} cold ${n}`,
        assignor,
        spec: cold,
        partitions: n,
        report: `spread ${spread(cold, first)}`,
      })
      cases.push({
        name: `${label} rebalance ${n}`,
        assignor,
        spec: rebalance,
        partitions: n,
        report: `spread ${spread(rebalance, second)}, moved ${moved} of the stayers' ${before.size - mustMove} (must move: the leaver's ${mustMove})`,
      })
    }
  }
}

/**
 * Median wall and CPU time of one assignment, over `samples` calls after `warmup`: CPU time (user +
 * system of this process) is the steadier figure on a shared machine, where wall time includes the
 * time the process waits for a core.
 */
function measure(c: Case, warmup = 5, samples = 21): { wallMs: number; cpuMs: number } {
  for (let i = 0; i < warmup; i++) c.assignor.assign(c.spec, describer(c.partitions))
  const wall: number[] = []
  const cpu: number[] = []
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now()
    const u0 = process.cpuUsage()
    c.assignor.assign(c.spec, describer(c.partitions))
    const u = process.cpuUsage(u0)
    wall.push(performance.now() - t0)
    cpu.push((u.user + u.system) / 1000)
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
  return { wallMs: median(wall), cpuMs: median(cpu) }
}

const medians = new Map<string, number>()
for (const c of cases) {
  const { wallMs, cpuMs } = measure(c)
  medians.set(c.name, cpuMs)
  console.log(
    `${c.name.padEnd(40)} cpu ${cpuMs.toFixed(2).padStart(8)} ms  wall ${wallMs.toFixed(2).padStart(8)} ms  ${c.report}`,
  )
}
for (const assignor of assignors) {
  for (const shape of shapes) {
    for (const kind of ['cold', 'rebalance']) {
      const name = (n: number) => `${assignor.name()} ${shape} ${kind} ${n}`
      const [small, large] = sizes.map((n) => medians.get(name(n))!)
      console.log(
        `${`${assignor.name()} ${shape} ${kind}`.padEnd(34)} cpu time(2n)/time(n) = ${(large! / small!).toFixed(2)} (goal ≤ 2.2)`,
      )
    }
  }
}
