/**
 * A consumer group (Kafka's ConsumerGroup). Persisted fields change only through `replay*` methods,
 * driven by records; the refresh deadlines are soft state, lost when the group object is rebuilt.
 */
import { kept } from '../streams/strings.js'
import { MemberTable } from '../modern/members.js'
import type { MemberSession, MemberSlot } from '../modern/session.js'
import type { GroupCoordinatorResult } from '../result.js'
import { type ConsumerGroupMember, hasRegex, isReconciledTo } from './member.js'
import { EMPTY_PARTITIONS, type PartitionEpochs, type PartitionSet } from './partitions.js'
import type { ResolvedRegularExpression } from './records.js'

export const ConsumerGroupState = {
  EMPTY: 'Empty',
  ASSIGNING: 'Assigning',
  RECONCILING: 'Reconciling',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const
export type ConsumerGroupStateValue = (typeof ConsumerGroupState)[keyof typeof ConsumerGroupState]

/** Lower-case names used by ListGroups state filters. */
export const CONSUMER_STATE_FILTER_NAMES: Readonly<Record<ConsumerGroupStateValue, string>> = {
  Empty: 'empty',
  Assigning: 'assigning',
  Reconciling: 'reconciling',
  Stable: 'stable',
  Dead: 'dead',
}

/** A consumer timer's result. */
export type ConsumerTimerResult = GroupCoordinatorResult<void>
export type ConsumerSessionTimeoutOp = (
  groupId: string,
  memberId: string,
) => (nowMs: number) => ConsumerTimerResult

export class ConsumerGroup {
  readonly groupId: string
  // persisted
  #groupEpoch = 0
  #metadataHash = 0n
  #assignmentEpoch = 0
  #assignmentTimestamp = 0n
  readonly #table: MemberTable<ConsumerGroupMember, ConsumerTimerResult>
  readonly #targets = new Map<string, PartitionSet>()
  readonly #regexes = new Map<string, ResolvedRegularExpression>()
  /** A pre-4.1 subscription-metadata record was replayed: the next epoch bump tombstones it. */
  hasSubscriptionMetadataRecord = false
  // derived from members
  /** topic id → partition → epoch of the member owning it (assigned or pending revocation). */
  readonly #partitionEpochs = new Map<string, Map<number, number>>()
  readonly #regexCounts = new Map<string, number>()
  readonly #assignorCounts = new Map<string, number>()
  // soft state
  #refreshDeadlineMs = 0
  #refreshEpoch = 0
  /** Whether the subscription patterns must be matched against the catalog again. */
  regexRefreshNeeded = true

  constructor(groupId: string, sessionTimeoutOp: ConsumerSessionTimeoutOp) {
    this.groupId = groupId
    this.#table = new MemberTable(groupId, sessionTimeoutOp)
  }

  get groupEpoch(): number {
    return this.#groupEpoch
  }
  get metadataHash(): bigint {
    return this.#metadataHash
  }
  get assignmentEpoch(): number {
    return this.#assignmentEpoch
  }
  get assignmentTimestamp(): bigint {
    return this.#assignmentTimestamp
  }
  get members(): ReadonlyMap<string, ConsumerGroupMember> {
    return this.#table.members
  }
  get size(): number {
    return this.#table.size
  }
  get targetAssignments(): ReadonlyMap<string, PartitionSet> {
    return this.#targets
  }
  get resolvedRegularExpressions(): ReadonlyMap<string, ResolvedRegularExpression> {
    return this.#regexes
  }
  /** Subscription pattern → number of members subscribed with it. */
  get subscribedRegularExpressions(): ReadonlyMap<string, number> {
    return this.#regexCounts
  }

  member(memberId: string): ConsumerGroupMember | undefined {
    return this.#table.member(memberId)
  }
  slot(memberId: string): MemberSlot<ConsumerGroupMember, ConsumerTimerResult> | undefined {
    return this.#table.slot(memberId)
  }
  staticMemberId(instanceId: string | null): string | undefined {
    return this.#table.staticMemberId(instanceId)
  }
  targetAssignment(memberId: string): PartitionSet {
    return this.#targets.get(memberId) ?? EMPTY_PARTITIONS
  }
  hasTarget(memberId: string): boolean {
    return this.#targets.has(memberId)
  }

  /** The member's session timeout (see MemberTable.session). */
  session(memberId: string): MemberSession<ConsumerTimerResult> {
    return this.#table.session(memberId)
  }

  /** The epoch of the member owning the partition, or -1 when no member owns it. */
  currentPartitionEpoch(topicId: string, partition: number): number {
    return this.#partitionEpochs.get(topicId)?.get(partition) ?? -1
  }

  numSubscribedMembers(regex: string): number {
    return this.#regexCounts.get(regex) ?? 0
  }

  /** Kafka's ConsumerGroupState, evaluated in order. */
  state(): ConsumerGroupStateValue {
    if (this.#table.size === 0) return ConsumerGroupState.EMPTY
    if (this.#groupEpoch > this.#assignmentEpoch) return ConsumerGroupState.ASSIGNING
    for (const m of this.#table.members.values()) {
      if (!isReconciledTo(m, this.#assignmentEpoch)) return ConsumerGroupState.RECONCILING
    }
    return ConsumerGroupState.STABLE
  }

  /**
   * The server assignor most members ask for, with `oldMember` replaced by `newMember` (either may
   * be null); null when none asks. Ties go to the name first in sort order.
   */
  preferredServerAssignor(
    oldMember: ConsumerGroupMember | null,
    newMember: ConsumerGroupMember | null,
  ): string | null {
    const counts = new Map(this.#assignorCounts)
    const bump = (name: string | null, by: number): void => {
      if (name === null) return
      const n = (counts.get(name) ?? 0) + by
      if (n <= 0) counts.delete(name)
      else counts.set(name, n)
    }
    bump(oldMember?.serverAssignorName ?? null, -1)
    bump(newMember?.serverAssignorName ?? null, 1)
    let best: string | null = null
    let bestCount = 0
    for (const [name, n] of [...counts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      if (n > bestCount) {
        best = name
        bestCount = n
      }
    }
    return best
  }

  get metadataRefreshDeadlineMs(): number {
    return this.#refreshDeadlineMs
  }
  setMetadataRefreshDeadline(deadlineMs: number, epoch: number): void {
    this.#refreshDeadlineMs = deadlineMs
    this.#refreshEpoch = epoch
  }
  hasMetadataExpired(nowMs: number): boolean {
    return nowMs >= this.#refreshDeadlineMs || this.#groupEpoch < this.#refreshEpoch
  }

  // ---- replay ----

  replayEpoch(epoch: number, metadataHash: bigint): void {
    this.#groupEpoch = epoch
    this.#metadataHash = metadataHash
  }

  /** Whether a metadata tombstone may remove the group (nothing left of it). */
  canBeRemoved(): boolean {
    return this.#table.size === 0 && this.#targets.size === 0 && this.#assignmentEpoch === -1
  }

  replayTargetAssignmentMetadata(epoch: number, timestamp: bigint): void {
    this.#assignmentEpoch = epoch
    this.#assignmentTimestamp = timestamp
  }

  replayTargetAssignmentMember(memberId: string, partitions: PartitionSet | null): void {
    if (partitions === null) this.#targets.delete(memberId)
    else this.#targets.set(kept(memberId), partitions)
  }

  replayRegularExpression(regex: string, resolved: ResolvedRegularExpression | null): void {
    if (resolved === null) this.#regexes.delete(regex)
    else this.#regexes.set(kept(regex), resolved)
  }

  /** Adds or replaces a member (from a member-metadata or current-assignment record). */
  updateMember(member: ConsumerGroupMember): void {
    const old = this.#table.put(member)
    if (old) this.#unindex(old)
    this.#index(member)
  }

  removeMember(memberId: string): void {
    const old = this.#table.remove(memberId)
    if (old) this.#unindex(old)
  }

  #index(m: ConsumerGroupMember): void {
    this.#applyPartitions(m.assignedPartitions, m.memberEpoch)
    this.#applyPartitions(m.partitionsPendingRevocation, m.memberEpoch)
    if (hasRegex(m)) count(this.#regexCounts, m.subscribedTopicRegex!, 1)
    if (m.serverAssignorName !== null) count(this.#assignorCounts, m.serverAssignorName, 1)
  }

  #unindex(m: ConsumerGroupMember): void {
    this.#applyPartitions(m.assignedPartitions, null)
    this.#applyPartitions(m.partitionsPendingRevocation, null)
    if (hasRegex(m)) count(this.#regexCounts, m.subscribedTopicRegex!, -1)
    if (m.serverAssignorName !== null) count(this.#assignorCounts, m.serverAssignorName, -1)
  }

  #applyPartitions(partitions: PartitionEpochs, epoch: number | null): void {
    for (const [topicId, ps] of partitions) {
      let inner = this.#partitionEpochs.get(topicId)
      if (epoch === null) {
        if (!inner) continue
        for (const p of ps.keys()) inner.delete(p)
        if (inner.size === 0) this.#partitionEpochs.delete(topicId)
      } else {
        if (!inner) this.#partitionEpochs.set(topicId, (inner = new Map()))
        for (const p of ps.keys()) inner.set(p, epoch)
      }
    }
  }
}

function count(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by
  if (n <= 0) map.delete(key)
  else map.set(key, n)
}
