import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import {
  type AssignorLogger,
  type GroupAssignment,
  type GroupSpec,
  StickyTaskAssignor,
  TaskAssignorException,
  type TopologyDescriber,
} from '../../../../../src/coordinator/shard/streams/assignor/index.js'
import { checkInvariants, count, group, type MemberInput, plain, type Tasks, topology } from './fixtures.js'

const assignor = new StickyTaskAssignor()

function activeOf(assignment: GroupAssignment, memberId: string): Tasks {
  return Object.fromEntries(assignment.members.get(memberId)!.activeTasks)
}
function standbyOf(assignment: GroupAssignment, memberId: string): Tasks {
  return Object.fromEntries(assignment.members.get(memberId)!.standbyTasks)
}

describe('StickyTaskAssignor examples', () => {
  test('name is sticky', () => {
    assert.equal(assignor.name(), 'sticky')
    assert.equal(String(assignor), 'sticky')
  })

  test('one active task per process when there are as many tasks as processes', () => {
    const spec = group({ m1: { processId: 'p1' }, m2: { processId: 'p2' }, m3: { processId: 'p3' } })
    const result = assignor.assign(spec, topology({ s: [3, false] }))
    for (const id of ['m1', 'm2', 'm3']) assert.equal(count(result.members.get(id)!.activeTasks), 1)
    checkInvariants(spec, topology({ s: [3, false] }), result)
  })

  test('starting empty is range-like: each member gets one task of each subtopology, standbys the others', () => {
    const spec = group({ member1: { processId: 'process1' }, member2: { processId: 'process2' } }, 1)
    const result = assignor.assign(spec, topology({ s1: [2, true], s2: [2, true] }))
    assert.deepEqual(plain(result), {
      member1: { active: { s1: [0], s2: [0] }, standby: { s1: [1], s2: [1] }, warmup: {} },
      member2: { active: { s1: [1], s2: [1] }, standby: { s1: [0], s2: [0] }, warmup: {} },
    })
  })

  test('a new member takes tasks over the quota from existing members, the rest stay', () => {
    const spec = group({
      m1: { processId: 'p1', active: { s: [0, 1, 2] } },
      m2: { processId: 'p2', active: { s: [3, 4, 5] } },
      m3: { processId: 'p3' },
    })
    const result = assignor.assign(spec, topology({ s: [6, false] }))
    assert.deepEqual(activeOf(result, 'm1'), { s: [0, 1] })
    assert.deepEqual(activeOf(result, 'm2'), { s: [3, 4] })
    assert.deepEqual(activeOf(result, 'm3'), { s: [2, 5] })
  })

  test('a member leaves: only its tasks move', () => {
    const spec = group({
      m1: { processId: 'p1', active: { s: [0, 1] } },
      m2: { processId: 'p2', active: { s: [2, 3] } },
    })
    // m3 held 4 and 5 and is gone.
    const result = assignor.assign(spec, topology({ s: [6, false] }))
    assert.deepEqual(activeOf(result, 'm1'), { s: [0, 1, 4] })
    assert.deepEqual(activeOf(result, 'm2'), { s: [2, 3, 5] })
  })

  test('a previous standby is promoted to active before anyone else', () => {
    const spec = group({
      m2: { processId: 'p2', standby: { s: [0, 1] } },
      m3: { processId: 'p3' },
    })
    const result = assignor.assign(spec, topology({ s: [2, true] }))
    assert.deepEqual(activeOf(result, 'm2'), { s: [0] })
    assert.deepEqual(activeOf(result, 'm3'), { s: [1] })
  })

  test('cold start: members regain the tasks whose offsets they report', () => {
    const spec = group({
      member1: { processId: 'process1', offsets: { s: { 0: 100, 1: 100 } } },
      member2: { processId: 'process2', offsets: { s: { 2: 100, 3: 100 } } },
    })
    const result = assignor.assign(spec, topology({ s: [4, true] }))
    assert.deepEqual(activeOf(result, 'member1'), { s: [0, 1] })
    assert.deepEqual(activeOf(result, 'member2'), { s: [2, 3] })
  })

  test('cold start with several members per process: tasks stay on the process holding the state', () => {
    const p1 = { s: { 0: 100, 1: 100 } }
    const p2 = { s: { 2: 100, 3: 100 } }
    const spec = group({
      member1_1: { processId: 'process1', offsets: p1 },
      member1_2: { processId: 'process1', offsets: p1 },
      member2_1: { processId: 'process2', offsets: p2 },
      member2_2: { processId: 'process2', offsets: p2 },
    })
    const result = assignor.assign(spec, topology({ s: [4, true] }))
    assert.deepEqual(activeOf(result, 'member1_1'), { s: [0] })
    assert.deepEqual(activeOf(result, 'member1_2'), { s: [1] })
    assert.deepEqual(activeOf(result, 'member2_1'), { s: [2] })
    assert.deepEqual(activeOf(result, 'member2_2'), { s: [3] })
  })

  test('current owners rank ahead of reported offsets; the most caught-up reporter comes first', () => {
    const spec = group({
      member1: { processId: 'process1', active: { s: [0] } },
      member2: { processId: 'process2', standby: { s: [0, 1] } },
      member3: { processId: 'process3', offsets: { s: { 0: 1_000_000, 1: 1_000_000, 2: 100 } } },
      member4: { processId: 'process4', offsets: { s: { 2: 50 } } },
    })
    const result = assignor.assign(spec, topology({ s: [4, true] }))
    assert.deepEqual(activeOf(result, 'member1'), { s: [0] })
    assert.deepEqual(activeOf(result, 'member2'), { s: [1] })
    assert.deepEqual(activeOf(result, 'member3'), { s: [2] })
    assert.deepEqual(activeOf(result, 'member4'), { s: [3] })
  })

  test('among current standbys the one with the larger offset wins', () => {
    const spec = group({
      a: { processId: 'pa', standby: { s: [0] }, offsets: { s: { 0: 10 } } },
      b: { processId: 'pb', standby: { s: [0] }, offsets: { s: { 0: 20 } } },
    })
    const result = assignor.assign(spec, topology({ s: [1, true] }))
    assert.deepEqual(activeOf(result, 'b'), { s: [0] })
    assert.deepEqual(activeOf(result, 'a'), {})
  })

  test('cold start with standbys: standbys land on the other process', () => {
    const spec = group(
      {
        member1: { processId: 'process1', offsets: { s: { 0: 100 } } },
        member2: { processId: 'process2', offsets: { s: { 1: 100 } } },
      },
      1,
    )
    const result = assignor.assign(spec, topology({ s: [2, true] }))
    assert.deepEqual(plain(result), {
      member1: { active: { s: [0] }, standby: { s: [1] }, warmup: {} },
      member2: { active: { s: [1] }, standby: { s: [0] }, warmup: {} },
    })
  })

  test('standbys stay with their previous holders', () => {
    const spec = group(
      {
        m1: { processId: 'p1', active: { s: [0] }, standby: { s: [1] } },
        m2: { processId: 'p2', active: { s: [1] }, standby: { s: [2] } },
        m3: { processId: 'p3', active: { s: [2] }, standby: { s: [0] } },
      },
      1,
    )
    const result = assignor.assign(spec, topology({ s: [3, true] }))
    assert.deepEqual(plain(result), {
      m1: { active: { s: [0] }, standby: { s: [1] }, warmup: {} },
      m2: { active: { s: [1] }, standby: { s: [2] }, warmup: {} },
      m3: { active: { s: [2] }, standby: { s: [0] }, warmup: {} },
    })
  })

  test('an active task moved away leaves a standby with its previous active owner', () => {
    // m1 held both tasks; the new member takes one, and m1 keeps its state as the standby.
    const spec = group({ m1: { processId: 'p1', active: { s: [0, 1] } }, m2: { processId: 'p2' } }, 1)
    const result = assignor.assign(spec, topology({ s: [2, true] }))
    assert.deepEqual(plain(result), {
      m1: { active: { s: [0] }, standby: { s: [1] }, warmup: {} },
      m2: { active: { s: [1] }, standby: { s: [0] }, warmup: {} },
    })
  })

  test('stateless subtopologies get no standbys', () => {
    const spec = group({ m1: { processId: 'p1' }, m2: { processId: 'p2' }, m3: { processId: 'p3' } }, 2)
    const describer = topology({ stateless: [4, false], stateful: [2, true] })
    const result = assignor.assign(spec, describer)
    let standbys = 0
    for (const m of result.members.values()) {
      assert.equal(m.standbyTasks.has('stateless'), false)
      standbys += count(m.standbyTasks)
    }
    assert.equal(standbys, 4)
    checkInvariants(spec, describer, result)
  })

  test('two members of one process never share a task as active and standby', () => {
    const spec = group({ a: { processId: 'p' }, b: { processId: 'p' } }, 1)
    const result = assignor.assign(spec, topology({ s: [4, true] }))
    for (const m of result.members.values()) assert.equal(m.standbyTasks.size, 0)
    assert.equal(count(result.members.get('a')!.activeTasks), 2)
    assert.equal(count(result.members.get('b')!.activeTasks), 2)
  })

  test('standby replicas are capped by the other processes, with a warning', () => {
    const warnings: string[] = []
    const logger: AssignorLogger = { warn: (_fields, message) => warnings.push(message) }
    const spec = group({ m1: { processId: 'p1' }, m2: { processId: 'p2' } }, 3)
    const describer = topology({ s: [1, true] })
    const result = new StickyTaskAssignor({ logger }).assign(spec, describer)
    assert.deepEqual(activeOf(result, 'm1'), { s: [0] })
    assert.deepEqual(standbyOf(result, 'm2'), { s: [0] })
    assert.deepEqual(warnings, [
      'Unable to assign 2 of 3 standby tasks for task [s_0]. There is not enough available capacity. ' +
        'You should increase the number of threads and/or application instances to maintain the requested ' +
        'number of standby replicas.',
    ])
    checkInvariants(spec, describer, result)
  })

  test('process capacity: a process with more members gets more tasks', () => {
    const spec = group({
      a1: { processId: 'a' },
      a2: { processId: 'a' },
      a3: { processId: 'a' },
      b: { processId: 'b' },
    })
    const result = assignor.assign(spec, topology({ s: [8, false] }))
    for (const id of ['a1', 'a2', 'a3', 'b']) assert.equal(count(result.members.get(id)!.activeTasks), 2)
  })

  test('ties go to the smaller process id, then the smaller member id, whatever the input order', () => {
    const spec = group({ z: { processId: 'p2' }, y: { processId: 'p1' }, x: { processId: 'p1' } })
    const result = assignor.assign(spec, topology({ s: [3, false] }))
    // p1 (load 0) and p2 (load 0) tie: p1 first, and in p1 member x before y.
    assert.deepEqual(activeOf(result, 'x'), { s: [0] })
    assert.deepEqual(activeOf(result, 'z'), { s: [1] })
    assert.deepEqual(activeOf(result, 'y'), { s: [2] })
    assert.deepEqual([...result.members.keys()], ['z', 'y', 'x'])
  })

  test('current tasks outside the topology and warm-ups are ignored; warm-ups are never assigned', () => {
    const spec = group({
      m1: { processId: 'p1', active: { gone: [0], s: [5] }, warmup: { s: [0] } },
      m2: { processId: 'p2' },
    })
    const result = assignor.assign(spec, topology({ s: [2, true] }))
    assert.deepEqual(plain(result), {
      m1: { active: { s: [0] }, standby: {}, warmup: {} },
      m2: { active: { s: [1] }, standby: {}, warmup: {} },
    })
  })

  test('no members and no tasks: empty assignment; tasks but no members: TaskAssignorException', () => {
    assert.equal(assignor.assign(group({}), topology({})).members.size, 0)
    assert.throws(
      () => assignor.assign(group({}), topology({ s: [1, false] })),
      (e: unknown) =>
        e instanceof TaskAssignorException && e.message === 'No process available to assign active task s_0.',
    )
  })

  test('members without tasks are present with empty maps', () => {
    const result = assignor.assign(
      group({ m1: { processId: 'p' }, m2: { processId: 'q' } }),
      topology({ s: [1, false] }),
    )
    assert.equal(result.members.get('m2')!.activeTasks.size, 0)
    assert.equal(result.members.get('m2')!.standbyTasks.size, 0)
  })
})

// ---- properties ----

interface Scenario {
  readonly spec: GroupSpec
  readonly describer: TopologyDescriber
}

const subtopologiesArb = fc.dictionary(
  fc.constantFrom('0', '1', '2', '10', 'a', 'b'),
  fc.tuple(fc.integer({ min: 0, max: 12 }), fc.boolean()),
  { minKeys: 1, maxKeys: 4 },
)

/** Members with arbitrary (possibly overlapping, possibly out-of-range) current tasks and offsets. */
function scenarioArb(opts: { fresh: boolean; minMembers?: number }): fc.Arbitrary<Scenario> {
  return subtopologiesArb.chain((subs) => {
    const subIds = Object.keys(subs)
    const tasksArb = fc.dictionary(
      fc.constantFrom(...subIds),
      fc.uniqueArray(fc.integer({ min: 0, max: 13 }), { maxLength: 5 }),
    )
    const offsetsArb = fc.dictionary(
      fc.constantFrom(...subIds),
      fc.dictionary(fc.integer({ min: 0, max: 13 }).map(String), fc.integer({ min: 0, max: 5 })),
    )
    const memberArb: fc.Arbitrary<MemberInput> = opts.fresh
      ? fc.record({ processId: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5') })
      : fc.record({
          processId: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5'),
          active: tasksArb,
          standby: tasksArb,
          offsets: offsetsArb,
        })
    return fc
      .record({
        members: fc.dictionary(fc.string({ minLength: 1, maxLength: 3 }), memberArb, {
          minKeys: opts.minMembers ?? 1,
          maxKeys: 12,
        }),
        standby: fc.integer({ min: 0, max: 3 }),
      })
      .map(({ members, standby }) => ({ spec: group(members, standby), describer: topology(subs) }))
  })
}

function reversedMembers(spec: GroupSpec): GroupSpec {
  return { ...spec, members: new Map([...spec.members].reverse()) }
}

function assignmentByMember(a: GroupAssignment): Map<string, unknown> {
  return new Map([...a.members].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
}

describe('StickyTaskAssignor properties', () => {
  test('every task is active exactly once; standbys only for stateful tasks, never twice on a process, min(n, processes − 1) of them', () => {
    fc.assert(
      fc.property(scenarioArb({ fresh: false }), ({ spec, describer }) => {
        checkInvariants(spec, describer, assignor.assign(spec, describer))
      }),
      { numRuns: 300 },
    )
  })

  test('deterministic: same input, same output, whatever the order of the members', () => {
    fc.assert(
      fc.property(scenarioArb({ fresh: false }), ({ spec, describer }) => {
        const a = assignor.assign(spec, describer)
        assert.deepEqual(assignor.assign(spec, describer), a)
        assert.deepEqual(
          assignmentByMember(assignor.assign(reversedMembers(spec), describer)),
          assignmentByMember(a),
        )
      }),
      { numRuns: 200 },
    )
  })

  test('fresh group: active task counts per member differ by at most one', () => {
    fc.assert(
      fc.property(scenarioArb({ fresh: true }), ({ spec, describer }) => {
        const counts = [...assignor.assign(spec, describer).members.values()].map((m) => count(m.activeTasks))
        assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `counts ${counts}`)
      }),
      { numRuns: 300 },
    )
  })

  test('a member leaves: every task of the members that stay keeps its owner', () => {
    fc.assert(
      fc.property(scenarioArb({ fresh: true, minMembers: 2 }), fc.nat(), ({ spec, describer }, pick) => {
        const first = assignor.assign(spec, describer)
        const ids = [...spec.members.keys()]
        const leaving = ids[pick % ids.length]
        const next = group(
          Object.fromEntries(
            ids
              .filter((id) => id !== leaving)
              .map((id) => {
                const m = first.members.get(id)!
                return [
                  id,
                  {
                    processId: spec.members.get(id)!.processId,
                    active: Object.fromEntries(m.activeTasks),
                    standby: Object.fromEntries(m.standbyTasks),
                  },
                ]
              }),
          ),
          spec.configs.numStandbyReplicas,
        )
        const second = assignor.assign(next, describer)
        for (const [id, m] of second.members) {
          for (const [sub, partitions] of first.members.get(id)!.activeTasks) {
            const now = new Set(m.activeTasks.get(sub) ?? [])
            for (const p of partitions) assert.ok(now.has(p), `${id} keeps ${sub}_${p}`)
          }
        }
      }),
      { numRuns: 300 },
    )
  })
})
