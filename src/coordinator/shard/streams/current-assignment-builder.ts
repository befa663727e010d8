/**
 * Reconciliation of one member's current assignment towards its target (Kafka's
 * CurrentAssignmentBuilder): tasks are revoked before new ones are assigned, a task another member
 * still owns is held back ("unreleased"), and the member epoch advances only once nothing is left
 * to revoke.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import { ApiError } from '../api-error.js'
import { MemberState, type StreamsGroupMember } from './member.js'
import {
  EMPTY_TASKS_WITH_EPOCHS,
  isTaskSetEmpty,
  isTasksEmpty,
  type TaskEpochs,
  type TaskSet,
  type TasksTuple,
  type TasksTupleWithEpochs,
} from './tasks.js'

/** What the builder needs to know about the rest of the group. */
export interface TaskOwnership {
  /** The process currently owning the task as active (assigned or pending revocation), if any. */
  activeTaskProcess(subtopologyId: string, partition: number): string | undefined
  standbyTaskProcesses(subtopologyId: string, partition: number): ReadonlySet<string>
  warmupTaskProcesses(subtopologyId: string, partition: number): ReadonlySet<string>
}

export interface CurrentAssignmentInput {
  readonly member: StreamsGroupMember
  readonly targetEpoch: number
  readonly target: TasksTuple
  /** The tasks the member reported owning; null when any of the three lists was not sent. */
  readonly owned: TasksTuple | null
  readonly ownership: TaskOwnership
  /**
   * Topograph (D4): a member whose topology epoch is behind the group's keeps tasks it already
   * owns that are still in its target, but is granted nothing new.
   */
  readonly withholdNewTasks?: boolean
}

type MSet = Map<string, Set<number>>
type MEpochs = Map<string, Map<number, number>>

const has = (m: TaskSet | TaskEpochs, id: string, p: number): boolean => m.get(id)?.has(p) ?? false
function addTo(m: MSet, id: string, p: number): void {
  let s = m.get(id)
  if (!s) m.set(id, (s = new Set()))
  s.add(p)
}
function removeFrom(m: MSet | MEpochs, id: string, p: number): void {
  const s = m.get(id)
  if (!s) return
  s.delete(p)
  if (s.size === 0) m.delete(id)
}
function subtopologyIds(a: ReadonlyMap<string, unknown>, b: ReadonlyMap<string, unknown>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].sort()
}

export function buildCurrentAssignment(input: CurrentAssignmentInput): StreamsGroupMember {
  const { member, targetEpoch, owned } = input
  const notReleased = (pending: TasksTupleWithEpochs): boolean => {
    if (owned === null) return true
    for (const [id, m] of pending.active) for (const p of m.keys()) if (has(owned.active, id, p)) return true
    for (const [id, s] of pending.standby) for (const p of s) if (has(owned.standby, id, p)) return true
    for (const [id, s] of pending.warmup) for (const p of s) if (has(owned.warmup, id, p)) return true
    return false
  }
  switch (member.state) {
    case MemberState.STABLE:
      return member.memberEpoch !== targetEpoch ? computeNext(input, member.memberEpoch, notReleased) : member
    case MemberState.UNREVOKED_TASKS:
      if (notReleased(member.tasksPendingRevocation)) return member
      return computeNext(input, member.memberEpoch + 1, notReleased)
    case MemberState.UNRELEASED_TASKS:
      return computeNext(input, member.memberEpoch, notReleased)
    default:
      if (owned === null || !isTasksEmpty(owned)) {
        throw new ApiError(
          ErrorCode.FENCED_MEMBER_EPOCH,
          'The streams group member is in a unknown state. The member must abandon all its tasks and rejoin.',
        )
      }
      return computeNext(input, targetEpoch, notReleased)
  }
}

function computeNext(
  input: CurrentAssignmentInput,
  memberEpoch: number,
  notReleased: (pending: TasksTupleWithEpochs) => boolean,
): StreamsGroupMember {
  const { member, target, targetEpoch, ownership } = input
  const current = member.assignedTasks
  const pid = member.processId

  const isUnreleasedActive = (id: string, p: number): boolean =>
    ownership.activeTaskProcess(id, p) !== undefined ||
    (ownership.standbyTaskProcesses(id, p).has(pid) && !has(current.standby, id, p)) ||
    (ownership.warmupTaskProcesses(id, p).has(pid) && !has(current.warmup, id, p))
  const isUnreleasedStandby = (id: string, p: number): boolean =>
    (ownership.activeTaskProcess(id, p) === pid && !has(current.active, id, p)) ||
    ownership.standbyTaskProcesses(id, p).has(pid) ||
    (ownership.warmupTaskProcesses(id, p).has(pid) && !has(current.warmup, id, p))
  const isUnreleasedWarmup = (id: string, p: number): boolean =>
    ownership.activeTaskProcess(id, p) === pid ||
    (ownership.standbyTaskProcesses(id, p).has(pid) && !has(current.standby, id, p)) ||
    ownership.warmupTaskProcesses(id, p).has(pid)

  let unreleased = false
  // Active tasks carry the epoch at which they were assigned.
  const activeAssigned: MEpochs = new Map()
  const activeRevoke: MEpochs = new Map()
  const activeAdd: MEpochs = new Map()
  for (const id of subtopologyIds(current.active, target.active)) {
    const cur = current.active.get(id) ?? new Map<number, number>()
    const tgt = target.active.get(id) ?? new Set<number>()
    const kept = new Map<number, number>()
    const revoke = new Map<number, number>()
    for (const [p, e] of cur) (tgt.has(p) ? kept : revoke).set(p, e)
    const add = new Map<number, number>()
    for (const p of tgt) {
      if (kept.has(p)) continue
      if (isUnreleasedActive(id, p)) unreleased = true
      else add.set(p, targetEpoch)
    }
    if (kept.size > 0) activeAssigned.set(id, kept)
    if (revoke.size > 0) activeRevoke.set(id, revoke)
    if (add.size > 0) activeAdd.set(id, add)
  }
  const diff = (cur: TaskSet, tgt: TaskSet, isUnreleased: (id: string, p: number) => boolean) => {
    const assigned: MSet = new Map()
    const revoke: MSet = new Map()
    const add: MSet = new Map()
    for (const id of subtopologyIds(cur, tgt)) {
      const c = cur.get(id) ?? new Set<number>()
      const t = tgt.get(id) ?? new Set<number>()
      for (const p of c) t.has(p) ? addTo(assigned, id, p) : addTo(revoke, id, p)
      for (const p of t) {
        if (c.has(p)) continue
        if (isUnreleased(id, p)) unreleased = true
        else addTo(add, id, p)
      }
    }
    return { assigned, revoke, add }
  }
  const standby = diff(current.standby, target.standby, isUnreleasedStandby)
  const warmup = diff(current.warmup, target.warmup, isUnreleasedWarmup)

  // In-place role changes.
  for (const [id, m] of current.active) {
    for (const p of m.keys()) {
      if (has(standby.add, id, p)) {
        removeFrom(standby.add, id, p)
        addTo(standby.assigned, id, p)
      }
    }
  }
  const convert = (
    outgoing: TaskSet,
    outgoingRevoke: MSet,
    incomingAdd: MSet,
    incomingAssigned: MSet,
  ): void => {
    for (const [id, s] of outgoing) {
      for (const p of s) {
        if (has(incomingAdd, id, p)) {
          removeFrom(incomingAdd, id, p)
          addTo(incomingAssigned, id, p)
          removeFrom(outgoingRevoke, id, p)
        }
      }
    }
  }
  convert(current.standby, standby.revoke, warmup.add, warmup.assigned)
  convert(current.warmup, warmup.revoke, standby.add, standby.assigned)
  for (const [src, revoke] of [
    [current.standby, standby.revoke],
    [current.warmup, warmup.revoke],
  ] as const) {
    for (const [id, s] of src) for (const p of s) if (has(target.active, id, p)) removeFrom(revoke, id, p)
  }
  const pending: TasksTupleWithEpochs = {
    active: activeRevoke,
    standby: standby.revoke,
    warmup: warmup.revoke,
  }
  const hasToRevoke = !isTasksEmpty(pending) && notReleased(pending)
  for (const [src, assigned] of [
    [current.standby, standby.assigned],
    [current.warmup, warmup.assigned],
  ] as const) {
    for (const [id, s] of src) {
      for (const p of s) {
        const promotedNow = !hasToRevoke && has(activeAdd, id, p)
        if (has(target.active, id, p) && !promotedNow) addTo(assigned, id, p)
      }
    }
  }

  if (input.withholdNewTasks) {
    for (const m of [activeAdd, standby.add, warmup.add]) if (!isTaskSetEmpty(m)) unreleased = true
    activeAdd.clear()
    standby.add.clear()
    warmup.add.clear()
  }

  const withEpoch = (epoch: number) => ({ previousMemberEpoch: member.memberEpoch, memberEpoch: epoch })
  if (hasToRevoke) {
    return {
      ...member,
      ...withEpoch(memberEpoch),
      state: MemberState.UNREVOKED_TASKS,
      assignedTasks: { active: activeAssigned, standby: standby.assigned, warmup: warmup.assigned },
      tasksPendingRevocation: pending,
    }
  }
  const emptyPending: TasksTupleWithEpochs = EMPTY_TASKS_WITH_EPOCHS
  const anyAdd = !isTaskSetEmpty(activeAdd) || !isTaskSetEmpty(standby.add) || !isTaskSetEmpty(warmup.add)
  if (anyAdd) {
    for (const [id, m] of activeAdd) {
      let inner = activeAssigned.get(id)
      if (!inner) activeAssigned.set(id, (inner = new Map()))
      for (const [p, e] of m) inner.set(p, e)
    }
    for (const [add, assigned] of [
      [standby.add, standby.assigned],
      [warmup.add, warmup.assigned],
    ] as const) {
      for (const [id, s] of add) for (const p of s) addTo(assigned, id, p)
    }
  }
  return {
    ...member,
    ...withEpoch(targetEpoch),
    state: unreleased ? MemberState.UNRELEASED_TASKS : MemberState.STABLE,
    assignedTasks: { active: activeAssigned, standby: standby.assigned, warmup: warmup.assigned },
    tasksPendingRevocation: emptyPending,
  }
}
