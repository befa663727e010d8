/**
 * Reconciliation of one member's current assignment towards its target (Kafka's
 * CurrentAssignmentBuilder): tasks are revoked before new ones are assigned, a task another member
 * still owns is held back ("unreleased"), and the member epoch advances only once nothing is left
 * to revoke.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import { ApiError } from '../api-error.js'
import { MemberState, type StreamsGroupMember, withAssignment } from './member.js'
import {
  EMPTY_TASKS_WITH_EPOCHS,
  isTasksEmpty,
  type TaskList,
  TaskListBuilder,
  type TasksTuple,
  type TasksTupleWithEpochs,
  tasksWithEpochs,
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

// The builder works on mutable maps (subtopology id → partitions, → partition → epoch), made from
// the member's and the target's task lists, and packs its answer into task lists again.
type MSet = Map<string, Set<number>>
type MEpochs = Map<string, Map<number, number>>
type RSet = ReadonlyMap<string, ReadonlySet<number>>
type REpochs = ReadonlyMap<string, ReadonlyMap<number, number>>
interface MTuple {
  readonly active: REpochs
  readonly standby: RSet
  readonly warmup: RSet
}

function epochMap(l: TaskList): MEpochs {
  const m: MEpochs = new Map()
  l.forEach((id, p, e) => {
    let inner = m.get(id)
    if (!inner) m.set(id, (inner = new Map()))
    inner.set(p, e)
  })
  return m
}
function setMap(l: TaskList): MSet {
  const m: MSet = new Map()
  l.forEach((id, p) => {
    addTo(m, id, p)
  })
  return m
}
function mapTuple(t: TasksTupleWithEpochs | TasksTuple): MTuple {
  return { active: epochMap(t.active), standby: setMap(t.standby), warmup: setMap(t.warmup) }
}
function packEpochs(m: REpochs): TaskList {
  const b = new TaskListBuilder()
  for (const [id, inner] of m) for (const [p, e] of inner) b.set(id, p, e)
  return b.build()
}
function packSet(m: RSet): TaskList {
  const b = new TaskListBuilder()
  for (const [id, s] of m) for (const p of s) b.add(id, p)
  return b.build()
}
function packTuple(t: MTuple): TasksTupleWithEpochs {
  return tasksWithEpochs(packEpochs(t.active), packSet(t.standby), packSet(t.warmup))
}
function isMapEmpty(m: RSet | REpochs): boolean {
  for (const v of m.values()) if (v.size > 0) return false
  return true
}
function isMTupleEmpty(t: MTuple): boolean {
  return isMapEmpty(t.active) && isMapEmpty(t.standby) && isMapEmpty(t.warmup)
}

const has = (m: RSet | REpochs, id: string, p: number): boolean => m.get(id)?.has(p) ?? false
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
  const notReleased = (pending: MTuple): boolean => {
    if (owned === null) return true
    for (const [id, m] of pending.active) for (const p of m.keys()) if (owned.active.has(id, p)) return true
    for (const [id, s] of pending.standby) for (const p of s) if (owned.standby.has(id, p)) return true
    for (const [id, s] of pending.warmup) for (const p of s) if (owned.warmup.has(id, p)) return true
    return false
  }
  switch (member.state) {
    case MemberState.STABLE:
      return member.memberEpoch !== targetEpoch ? computeNext(input, member.memberEpoch, notReleased) : member
    case MemberState.UNREVOKED_TASKS:
      if (notReleased(mapTuple(member.tasksPendingRevocation))) return member
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
  notReleased: (pending: MTuple) => boolean,
): StreamsGroupMember {
  const { member, targetEpoch, ownership } = input
  const current = mapTuple(member.assignedTasks)
  const target = {
    active: setMap(input.target.active),
    standby: setMap(input.target.standby),
    warmup: setMap(input.target.warmup),
  }
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
  const diff = (cur: RSet, tgt: RSet, isUnreleased: (id: string, p: number) => boolean) => {
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
  const convert = (outgoing: RSet, outgoingRevoke: MSet, incomingAdd: MSet, incomingAssigned: MSet): void => {
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
  const pending: MTuple = {
    active: activeRevoke,
    standby: standby.revoke,
    warmup: warmup.revoke,
  }
  const hasToRevoke = !isMTupleEmpty(pending) && notReleased(pending)
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
    for (const m of [activeAdd, standby.add, warmup.add]) if (!isMapEmpty(m)) unreleased = true
    activeAdd.clear()
    standby.add.clear()
    warmup.add.clear()
  }

  const withEpoch = (epoch: number) => ({ previousMemberEpoch: member.memberEpoch, memberEpoch: epoch })
  if (hasToRevoke) {
    return withAssignment(member, {
      ...withEpoch(memberEpoch),
      state: MemberState.UNREVOKED_TASKS,
      assignedTasks: packTuple({
        active: activeAssigned,
        standby: standby.assigned,
        warmup: warmup.assigned,
      }),
      tasksPendingRevocation: packTuple(pending),
    })
  }
  const emptyPending: TasksTupleWithEpochs = EMPTY_TASKS_WITH_EPOCHS
  const anyAdd = !isMapEmpty(activeAdd) || !isMapEmpty(standby.add) || !isMapEmpty(warmup.add)
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
  return withAssignment(member, {
    ...withEpoch(targetEpoch),
    state: unreleased ? MemberState.UNRELEASED_TASKS : MemberState.STABLE,
    assignedTasks: packTuple({ active: activeAssigned, standby: standby.assigned, warmup: warmup.assigned }),
    tasksPendingRevocation: emptyPending,
  })
}
