/**
 * Reconciliation of a consumer group member's partitions towards its target (Kafka's
 * CurrentAssignmentBuilder for consumer groups): partitions are revoked before new ones are given, a
 * partition another member still owns is held back ("unreleased"), and the member epoch advances
 * only once nothing is left to revoke. So a partition is never owned by two members.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import { ApiError } from '../api-error.js'
import { type ConsumerGroupMember, ConsumerMemberState } from './member.js'
import type { PartitionEpochs, PartitionSet } from './partitions.js'

export interface ConsumerAssignmentInput {
  readonly member: ConsumerGroupMember
  readonly targetEpoch: number
  readonly target: PartitionSet
  /** Ids of the topics the member subscribes to (names and resolved pattern), as they exist now. */
  readonly subscribedTopicIds: ReadonlySet<string>
  /** The epoch of the member owning a partition now, or -1 (the group's index). */
  readonly currentPartitionEpoch: (topicId: string, partition: number) => number
  /** The member changed its subscription in this heartbeat: drop partitions of topics it left. */
  readonly hasSubscriptionChanged: boolean
  /** The partitions the member reported owning; null when not sent. */
  readonly owned: readonly { readonly topicId: string; readonly partitions: readonly number[] }[] | null
}

type MEpochs = Map<string, Map<number, number>>

export function buildConsumerAssignment(input: ConsumerAssignmentInput): ConsumerGroupMember {
  const { member, targetEpoch } = input
  switch (member.state) {
    case ConsumerMemberState.STABLE:
      if (member.memberEpoch !== targetEpoch) return computeNext(input, member.memberEpoch)
      if (input.hasSubscriptionChanged) return updateCurrent(input, member.memberEpoch)
      return member
    case ConsumerMemberState.UNREVOKED_PARTITIONS:
      if (ownsRevoked(input, member.partitionsPendingRevocation)) {
        return input.hasSubscriptionChanged ? updateCurrent(input, member.memberEpoch) : member
      }
      return computeNext(input, member.memberEpoch)
    case ConsumerMemberState.UNRELEASED_PARTITIONS:
      return computeNext(input, member.memberEpoch)
    default:
      if (input.owned === null || input.owned.length > 0) {
        throw new ApiError(
          ErrorCode.FENCED_MEMBER_EPOCH,
          'The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin.',
        )
      }
      return computeNext(input, targetEpoch)
  }
}

/** Whether the member still reports owning any of `pending` (always, when it reported nothing). */
function ownsRevoked(input: ConsumerAssignmentInput, pending: PartitionEpochs): boolean {
  if (input.owned === null) return true
  for (const t of input.owned) {
    const m = pending.get(t.topicId)
    if (m === undefined) continue
    for (const p of t.partitions) if (m.has(p)) return true
  }
  return false
}

const withEpoch = (member: ConsumerGroupMember, epoch: number) => ({
  previousMemberEpoch: member.memberEpoch,
  memberEpoch: epoch,
})

/** Drops the partitions of topics the member no longer subscribes to (subscription change only). */
function updateCurrent(input: ConsumerAssignmentInput, memberEpoch: number): ConsumerGroupMember {
  const { member, subscribedTopicIds } = input
  const assigned: MEpochs = new Map()
  const pending: MEpochs = new Map()
  for (const [id, m] of member.partitionsPendingRevocation) pending.set(id, new Map(m))
  let removed = false
  for (const [id, m] of member.assignedPartitions) {
    if (subscribedTopicIds.has(id)) assigned.set(id, new Map(m))
    else {
      removed = true
      const into = pending.get(id) ?? new Map<number, number>()
      for (const [p, e] of m) into.set(p, e)
      pending.set(id, into)
    }
  }
  if (!removed) return member
  if (pending.size > 0 && ownsRevoked(input, pending)) {
    return {
      ...member,
      ...withEpoch(member, memberEpoch),
      state: ConsumerMemberState.UNREVOKED_PARTITIONS,
      assignedPartitions: assigned,
      partitionsPendingRevocation: pending,
    }
  }
  // Already revoked by the member: keep its state and shrink its partitions.
  return { ...member, ...withEpoch(member, memberEpoch), assignedPartitions: assigned }
}

function computeNext(input: ConsumerAssignmentInput, memberEpoch: number): ConsumerGroupMember {
  const { member, target, targetEpoch, subscribedTopicIds } = input
  let unreleased = false
  const assigned: MEpochs = new Map()
  const revoke: MEpochs = new Map()
  const add = new Map<string, number[]>()
  const topicIds = [...new Set([...target.keys(), ...member.assignedPartitions.keys()])].sort()
  for (const id of topicIds) {
    const tgt = subscribedTopicIds.has(id) ? (target.get(id) ?? EMPTY) : EMPTY
    const cur = member.assignedPartitions.get(id) ?? EMPTY_EPOCHS
    const kept = new Map<number, number>()
    const revoked = new Map<number, number>()
    for (const [p, e] of cur) (tgt.has(p) ? kept : revoked).set(p, e)
    const pendingOfMember = member.partitionsPendingRevocation.get(id)
    const toAdd: number[] = []
    for (const p of tgt) {
      if (kept.has(p)) continue
      // A partition this member itself is revoking is free to take back.
      if (input.currentPartitionEpoch(id, p) !== -1 && !pendingOfMember?.has(p)) unreleased = true
      else toAdd.push(p)
    }
    if (kept.size > 0) assigned.set(id, kept)
    if (revoked.size > 0) revoke.set(id, revoked)
    if (toAdd.length > 0) add.set(id, toAdd)
  }
  if (revoke.size > 0 && ownsRevoked(input, revoke)) {
    return {
      ...member,
      ...withEpoch(member, memberEpoch),
      state: ConsumerMemberState.UNREVOKED_PARTITIONS,
      assignedPartitions: assigned,
      partitionsPendingRevocation: revoke,
    }
  }
  for (const [id, ps] of add) {
    let m = assigned.get(id)
    if (!m) assigned.set(id, (m = new Map()))
    for (const p of ps) m.set(p, targetEpoch)
  }
  return {
    ...member,
    ...withEpoch(member, targetEpoch),
    state: unreleased ? ConsumerMemberState.UNRELEASED_PARTITIONS : ConsumerMemberState.STABLE,
    assignedPartitions: assigned,
    partitionsPendingRevocation: EMPTY_EPOCHS_MAP,
  }
}

const EMPTY: ReadonlySet<number> = new Set()
const EMPTY_EPOCHS: ReadonlyMap<number, number> = new Map()
const EMPTY_EPOCHS_MAP: PartitionEpochs = new Map()
