/**
 * Sticky task assignor at scale: n members × 10n tasks, for n = 1,000 and 2,000, and the ratio
 * time(2n) / time(n) (goal ≤ 2.2, i.e. close to linear). Not part of the test gate.
 *
 * Shape: 10 subtopologies (half stateful), 4 members per process, 1 standby replica. Two cases:
 * - cold: no member holds anything (the first assignment of a group);
 * - rebalance: every member holds its previous target, one member left and a new one joined.
 *
 * Run: npx tsx bench/streams/assignor.ts
 */
import { Bench } from 'tinybench'
import {
  type AssignmentMemberSpec,
  createTopologyDescriber,
  type GroupSpec,
  StickyTaskAssignor,
  type SubtopologyTasks,
  type TopologyDescriber,
} from '../../src/coordinator/shard/streams/assignor/index.js'

const SUBTOPOLOGIES = 10
const MEMBERS_PER_PROCESS = 4
const assignor = new StickyTaskAssignor()

function describer(numTasks: number): TopologyDescriber {
  const subs = new Map<string, SubtopologyTasks>()
  for (let s = 0; s < SUBTOPOLOGIES; s++) {
    subs.set(`subtopology-${s}`, { numberOfTasks: numTasks / SUBTOPOLOGIES, isStateful: s % 2 === 0 })
  }
  return createTopologyDescriber(subs)
}

function memberSpec(index: number, active = new Map(), standby = new Map()): AssignmentMemberSpec {
  return {
    instanceId: null,
    rackId: null,
    processId: `process-${Math.floor(index / MEMBERS_PER_PROCESS)}`,
    clientTags: new Map(),
    activeTasks: active,
    standbyTasks: standby,
    warmupTasks: new Map(),
    taskOffsets: new Map(),
    taskEndOffsets: new Map(),
  }
}

function coldGroup(numMembers: number): GroupSpec {
  const members = new Map<string, AssignmentMemberSpec>()
  for (let i = 0; i < numMembers; i++) members.set(`member-${i}`, memberSpec(i))
  return { members, configs: { numStandbyReplicas: 1, rackAwareAssignmentTags: [] } }
}

/** The cold group's assignment as current tasks, minus member 0, plus a new member. */
function rebalanceGroup(numMembers: number, topology: TopologyDescriber): GroupSpec {
  const cold = coldGroup(numMembers)
  const previous = assignor.assign(cold, topology)
  const members = new Map<string, AssignmentMemberSpec>()
  for (let i = 1; i < numMembers; i++) {
    const m = previous.members.get(`member-${i}`)!
    members.set(`member-${i}`, memberSpec(i, m.activeTasks, m.standbyTasks))
  }
  members.set(`member-${numMembers}`, memberSpec(numMembers))
  return { members, configs: cold.configs }
}

const sizes = [1_000, 2_000]
const bench = new Bench({ time: 2_000, iterations: 10, warmupIterations: 3 })
for (const n of sizes) {
  const topology = describer(10 * n)
  const cold = coldGroup(n)
  const rebalance = rebalanceGroup(n, topology)
  bench.add(`cold ${n} members × ${10 * n} tasks`, () => {
    assignor.assign(cold, topology)
  })
  bench.add(`rebalance ${n} members × ${10 * n} tasks`, () => {
    assignor.assign(rebalance, topology)
  })
}
await bench.run()

const medians = new Map<string, number>()
for (const task of bench.tasks) {
  const r = task.result
  if (r.state !== 'completed') throw new Error(`${task.name}: ${r.state}`)
  medians.set(task.name, r.latency.p50)
  console.log(
    `${task.name.padEnd(36)} median ${r.latency.p50.toFixed(2)} ms  mean ${r.latency.mean.toFixed(2)} ms`,
  )
}
for (const kind of ['cold', 'rebalance']) {
  const [small, large] = sizes.map((n) => medians.get(`${kind} ${n} members × ${10 * n} tasks`)!)
  console.log(`${kind}: time(2n)/time(n) = ${(large / small).toFixed(2)} (goal ≤ 2.2)`)
}
