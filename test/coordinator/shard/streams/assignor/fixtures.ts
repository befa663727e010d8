// Builders and checks shared by the assignor tests.
import assert from 'node:assert/strict'
import {
  type AssignmentMemberSpec,
  createTopologyDescriber,
  type GroupAssignment,
  type GroupSpec,
  type TopologyDescriber,
} from '../../../../../src/coordinator/shard/streams/assignor/index.js'

export type Tasks = Record<string, number[]>

export interface MemberInput {
  readonly processId: string
  readonly active?: Tasks
  readonly standby?: Tasks
  readonly warmup?: Tasks
  readonly offsets?: Record<string, Record<number, number>>
}

function toMap(tasks: Tasks | undefined): Map<string, number[]> {
  return new Map(Object.entries(tasks ?? {}))
}

export function member(input: MemberInput): AssignmentMemberSpec {
  const offsets = new Map<string, Map<number, bigint>>()
  for (const [sub, byPartition] of Object.entries(input.offsets ?? {})) {
    offsets.set(sub, new Map(Object.entries(byPartition).map(([p, o]) => [Number(p), BigInt(o)])))
  }
  return {
    instanceId: null,
    rackId: null,
    processId: input.processId,
    clientTags: new Map(),
    activeTasks: toMap(input.active),
    standbyTasks: toMap(input.standby),
    warmupTasks: toMap(input.warmup),
    taskOffsets: offsets,
    taskEndOffsets: new Map(),
  }
}

export function group(members: Record<string, MemberInput>, numStandbyReplicas = 0): GroupSpec {
  return {
    members: new Map(Object.entries(members).map(([id, m]) => [id, member(m)])),
    configs: { numStandbyReplicas, rackAwareAssignmentTags: [] },
  }
}

/** Subtopology id → [number of tasks, stateful]. */
export function topology(subtopologies: Record<string, readonly [number, boolean]>): TopologyDescriber {
  return createTopologyDescriber(
    new Map(Object.entries(subtopologies).map(([id, [n, s]]) => [id, { numberOfTasks: n, isStateful: s }])),
  )
}

/** The assignment as plain objects, for deepEqual. */
export function plain(
  assignment: GroupAssignment,
): Record<string, { active: Tasks; standby: Tasks; warmup: Tasks }> {
  const out: Record<string, { active: Tasks; standby: Tasks; warmup: Tasks }> = {}
  for (const [id, m] of assignment.members) {
    out[id] = {
      active: Object.fromEntries(m.activeTasks),
      standby: Object.fromEntries(m.standbyTasks),
      warmup: Object.fromEntries(m.warmupTasks),
    }
  }
  return out
}

export function count(tasks: ReadonlyMap<string, readonly number[]>): number {
  let n = 0
  for (const partitions of tasks.values()) n += partitions.length
  return n
}

/** Checks the invariants every sticky assignment has; returns active owner by task key "sub_p". */
export function checkInvariants(
  spec: GroupSpec,
  describer: TopologyDescriber,
  assignment: GroupAssignment,
): Map<string, string> {
  assert.deepEqual([...assignment.members.keys()], [...spec.members.keys()])
  const activeOwner = new Map<string, string>()
  const holders = new Map<string, Set<string>>() // task → processes holding it
  const processes = new Set([...spec.members.values()].map((m) => m.processId))
  for (const [memberId, m] of assignment.members) {
    assert.equal(m.warmupTasks.size, 0)
    const processId = spec.members.get(memberId)!.processId
    for (const [kind, tasks] of [
      ['active', m.activeTasks],
      ['standby', m.standbyTasks],
    ] as const) {
      const subs = [...tasks.keys()]
      assert.deepEqual(subs, [...subs].sort(), 'subtopologies sorted')
      for (const [sub, partitions] of tasks) {
        assert.ok(partitions.length > 0, 'no empty partition list')
        assert.deepEqual(
          partitions,
          [...partitions].sort((a, b) => a - b),
          'partitions sorted',
        )
        for (const p of partitions) {
          assert.ok(p >= 0 && p < describer.maxNumInputPartitions(sub), `task ${sub}_${p} exists`)
          const key = `${sub}_${p}`
          if (kind === 'active') {
            assert.ok(!activeOwner.has(key), `${key} active once`)
            activeOwner.set(key, memberId)
          } else {
            assert.ok(describer.isStateful(sub), `standby ${key} only for stateful`)
          }
          const h = holders.get(key) ?? new Set<string>()
          assert.ok(!h.has(processId), `${key} held at most once by process ${processId}`)
          h.add(processId)
          holders.set(key, h)
        }
      }
    }
  }
  const standby = spec.configs.numStandbyReplicas
  for (const sub of describer.subtopologies()) {
    for (let p = 0; p < describer.maxNumInputPartitions(sub); p++) {
      const key = `${sub}_${p}`
      assert.ok(activeOwner.has(key), `${key} assigned`)
      const expectedStandbys = describer.isStateful(sub) ? Math.min(standby, processes.size - 1) : 0
      assert.equal(holders.get(key)!.size - 1, expectedStandbys, `standby replicas of ${key}`)
    }
  }
  return activeOwner
}
