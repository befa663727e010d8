// Direct tests of buildCurrentAssignment (Kafka's CurrentAssignmentBuilder): revoke before assign,
// unreleased tasks held back, epochs advanced only once nothing is left to revoke.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError } from '../../../../src/coordinator/shard/api-error.js'
import {
  buildCurrentAssignment,
  type TaskOwnership,
} from '../../../../src/coordinator/shard/streams/current-assignment-builder.js'
import {
  MemberState,
  newMember,
  type StreamsGroupMember,
} from '../../../../src/coordinator/shard/streams/member.js'
import {
  EMPTY_TASK_SET,
  type TaskList,
  TaskListBuilder,
  type TasksTuple,
  type TasksTupleWithEpochs,
} from '../../../../src/coordinator/shard/streams/tasks.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'

const NOBODY: TaskOwnership = {
  activeTaskProcess: () => undefined,
  standbyTaskProcesses: () => new Set(),
  warmupTaskProcesses: () => new Set(),
}

/** Active tasks of subtopology "0" at the given epochs. */
const activeAt = (epochs: Record<number, number>): TasksTupleWithEpochs => {
  const b = new TaskListBuilder()
  for (const [p, e] of Object.entries(epochs)) b.set('0', Number(p), e)
  return { active: b.build(), standby: EMPTY_TASK_SET, warmup: EMPTY_TASK_SET }
}
/** Tasks of subtopology "0". */
const zero = (partitions: number[]): TaskList => {
  const b = new TaskListBuilder()
  for (const p of partitions) b.add('0', p)
  return b.build()
}
const target = (active: number[], standby: number[] = []): TasksTuple => ({
  active: zero(active),
  standby: zero(standby),
  warmup: EMPTY_TASK_SET,
})
const owned = (active: number[]): TasksTuple => ({
  active: zero(active),
  standby: EMPTY_TASK_SET,
  warmup: EMPTY_TASK_SET,
})
/** [partition, epoch] of the tasks of subtopology "0". */
const epochsOfZero = (l: TaskList): [number, number][] => {
  const out: [number, number][] = []
  l.forEach((id, p, e) => {
    if (id === '0') out.push([p, e])
  })
  return out
}
const member = (p: Partial<StreamsGroupMember>): StreamsGroupMember => ({
  ...newMember('m1'),
  processId: 'p1',
  ...p,
})
const actives = (m: StreamsGroupMember) => epochsOfZero(m.assignedTasks.active).sort()
const revoking = (m: StreamsGroupMember) => epochsOfZero(m.tasksPendingRevocation.active).sort()

describe('buildCurrentAssignment', () => {
  it('a stable member at the target epoch is returned as it is', () => {
    const m = member({ memberEpoch: 3, assignedTasks: activeAt({ 0: 3 }) })
    assert.equal(
      buildCurrentAssignment({
        member: m,
        targetEpoch: 3,
        target: target([0]),
        owned: owned([0]),
        ownership: NOBODY,
      }),
      m,
    )
  })

  it('a new epoch with only new tasks: assigned at once at the target epoch, STABLE', () => {
    const m = member({ memberEpoch: 1, assignedTasks: activeAt({ 0: 1 }) })
    const next = buildCurrentAssignment({
      member: m,
      targetEpoch: 2,
      target: target([0, 1]),
      owned: owned([0]),
      ownership: NOBODY,
    })
    assert.deepEqual([next.state, next.memberEpoch, next.previousMemberEpoch], [MemberState.STABLE, 2, 1])
    assert.deepEqual(actives(next), [
      [0, 1],
      [1, 2],
    ])
  })

  it('tasks to give up are revoked first: UNREVOKED_TASKS at the old epoch, nothing new yet', () => {
    const m = member({ memberEpoch: 1, assignedTasks: activeAt({ 0: 1, 1: 1 }) })
    const next = buildCurrentAssignment({
      member: m,
      targetEpoch: 2,
      target: target([0, 2]),
      owned: owned([0, 1]),
      ownership: NOBODY,
    })
    assert.deepEqual([next.state, next.memberEpoch], [MemberState.UNREVOKED_TASKS, 1])
    assert.deepEqual(actives(next), [[0, 1]])
    assert.deepEqual(revoking(next), [[1, 1]])

    // Once the member no longer reports the revoked task, it moves on and gets the new one.
    const after = buildCurrentAssignment({
      member: next,
      targetEpoch: 2,
      target: target([0, 2]),
      owned: owned([0]),
      ownership: NOBODY,
    })
    assert.deepEqual([after.state, after.memberEpoch], [MemberState.STABLE, 2])
    assert.deepEqual(actives(after), [
      [0, 1],
      [2, 2],
    ])
    assert.deepEqual(revoking(after), [])
  })

  it('a revocation the member has not confirmed keeps it where it is', () => {
    const m = member({
      memberEpoch: 1,
      state: MemberState.UNREVOKED_TASKS,
      assignedTasks: activeAt({ 0: 1 }),
      tasksPendingRevocation: activeAt({ 1: 1 }),
    })
    assert.equal(
      buildCurrentAssignment({
        member: m,
        targetEpoch: 2,
        target: target([0]),
        owned: owned([0, 1]),
        ownership: NOBODY,
      }),
      m,
    )
    // Null owned lists (not sent) never confirm a revocation.
    assert.equal(
      buildCurrentAssignment({
        member: m,
        targetEpoch: 2,
        target: target([0]),
        owned: null,
        ownership: NOBODY,
      }),
      m,
    )
  })

  it('a task another process still owns is held back: UNRELEASED_TASKS, granted once released', () => {
    const m = member({ memberEpoch: 1 })
    let owner: string | undefined = 'p2'
    const ownership: TaskOwnership = {
      ...NOBODY,
      activeTaskProcess: (_id, p) => (p === 1 ? owner : undefined),
    }
    const next = buildCurrentAssignment({
      member: m,
      targetEpoch: 2,
      target: target([0, 1]),
      owned: owned([]),
      ownership,
    })
    assert.deepEqual([next.state, next.memberEpoch], [MemberState.UNRELEASED_TASKS, 2])
    assert.deepEqual(actives(next), [[0, 2]])
    owner = undefined
    const later = buildCurrentAssignment({
      member: next,
      targetEpoch: 2,
      target: target([0, 1]),
      owned: owned([0]),
      ownership,
    })
    assert.deepEqual(
      [later.state, actives(later)],
      [
        MemberState.STABLE,
        [
          [0, 2],
          [1, 2],
        ],
      ],
    )
  })

  it('Topograph D4: a member behind the topology keeps what it owns and gets nothing new', () => {
    const m = member({ memberEpoch: 1, assignedTasks: activeAt({ 0: 1 }) })
    const next = buildCurrentAssignment({
      member: m,
      targetEpoch: 2,
      target: target([0, 1]),
      owned: owned([0]),
      ownership: NOBODY,
      withholdNewTasks: true,
    })
    assert.deepEqual([next.state, actives(next)], [MemberState.UNRELEASED_TASKS, [[0, 1]]])
  })

  it('an active task moving to standby on the same member is a role change, not a revocation', () => {
    const m = member({ memberEpoch: 1, assignedTasks: activeAt({ 0: 1, 1: 1 }) })
    const next = buildCurrentAssignment({
      member: m,
      targetEpoch: 2,
      target: target([0], [1]),
      owned: owned([0, 1]),
      ownership: NOBODY,
    })
    assert.equal(next.state, MemberState.UNREVOKED_TASKS)
    assert.deepEqual(revoking(next), [[1, 1]])
    assert.deepEqual([...(next.assignedTasks.standby.bySubtopology().get('0') ?? [])], [1])
  })

  it('an unknown state answers FENCED_MEMBER_EPOCH unless the member owns nothing', () => {
    const m = member({ memberEpoch: 1, state: 0 as never })
    assert.throws(
      () =>
        buildCurrentAssignment({
          member: m,
          targetEpoch: 2,
          target: target([0]),
          owned: owned([3]),
          ownership: NOBODY,
        }),
      (e: unknown) => e instanceof ApiError && e.errorCode === ErrorCode.FENCED_MEMBER_EPOCH,
    )
    const fresh = buildCurrentAssignment({
      member: m,
      targetEpoch: 2,
      target: target([0]),
      owned: owned([]),
      ownership: NOBODY,
    })
    assert.deepEqual([fresh.state, fresh.memberEpoch, actives(fresh)], [MemberState.STABLE, 2, [[0, 2]]])
  })
})
