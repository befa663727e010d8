/** A consumer group member (Kafka's ConsumerGroupMember): an immutable value; updates make copies. */
import { bytesEqual } from '../classic/group.js'
import {
  EMPTY_PARTITION_EPOCHS,
  type PartitionEpochs,
  partitionEpochsEquals,
  partitionEpochsKeys,
  type PartitionSet,
} from './partitions.js'

/** Member reconciliation states as stored in the current-assignment record (int8). */
export const ConsumerMemberState = {
  /** Any value this version does not know (a record written by a newer coordinator). */
  UNKNOWN: 0,
  STABLE: 1,
  UNREVOKED_PARTITIONS: 2,
  UNRELEASED_PARTITIONS: 3,
} as const
export type ConsumerMemberStateValue = (typeof ConsumerMemberState)[keyof typeof ConsumerMemberState]

export function consumerMemberStateFromRecord(v: number): ConsumerMemberStateValue {
  return v === 1 || v === 2 || v === 3 ? v : ConsumerMemberState.UNKNOWN
}

/** Kafka's names of the states (ConsumerGroupDescribe does not carry them; logs and docs do). */
export const CONSUMER_MEMBER_STATE_NAMES: Readonly<Record<ConsumerMemberStateValue, string>> = {
  0: 'unknown',
  1: 'stable',
  2: 'unrevoked_partitions',
  3: 'unreleased_partitions',
}

/** What a member speaking the classic protocol inside a consumer group offered. */
export interface ClassicMemberMetadata {
  readonly sessionTimeoutMs: number
  readonly supportedProtocols: readonly { readonly name: string; readonly metadata: Uint8Array }[]
}

export interface ConsumerGroupMember {
  readonly memberId: string
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
  readonly state: ConsumerMemberStateValue
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly rebalanceTimeoutMs: number
  readonly clientId: string
  readonly clientHost: string
  /** Sorted, without duplicates. */
  readonly subscribedTopicNames: readonly string[]
  /** null or "" when the member subscribes by names only. */
  readonly subscribedTopicRegex: string | null
  readonly serverAssignorName: string | null
  readonly classicMemberMetadata: ClassicMemberMetadata | null
  readonly assignedPartitions: PartitionEpochs
  readonly partitionsPendingRevocation: PartitionEpochs
}

export function newConsumerMember(memberId: string): ConsumerGroupMember {
  return {
    memberId,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: ConsumerMemberState.STABLE,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    clientId: '',
    clientHost: '',
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    serverAssignorName: null,
    classicMemberMetadata: null,
    assignedPartitions: EMPTY_PARTITION_EPOCHS,
    partitionsPendingRevocation: EMPTY_PARTITION_EPOCHS,
  }
}

export const hasRegex = (m: ConsumerGroupMember): boolean =>
  m.subscribedTopicRegex !== null && m.subscribedTopicRegex !== ''

export function sortedNames(names: readonly string[]): string[] {
  return [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

export function namesEqual(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i])
}

/** Whether the fields persisted by the member-metadata record differ. */
export function memberMetadataDiffers(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return (
    a.instanceId !== b.instanceId ||
    a.rackId !== b.rackId ||
    a.clientId !== b.clientId ||
    a.clientHost !== b.clientHost ||
    a.rebalanceTimeoutMs !== b.rebalanceTimeoutMs ||
    a.subscribedTopicRegex !== b.subscribedTopicRegex ||
    a.serverAssignorName !== b.serverAssignorName ||
    !classicMetadataEquals(a.classicMemberMetadata, b.classicMemberMetadata) ||
    !namesEqual(a.subscribedTopicNames, b.subscribedTopicNames)
  )
}

/** Whether the fields persisted by the current-assignment record differ. */
export function assignmentDiffers(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return (
    a.memberEpoch !== b.memberEpoch ||
    a.previousMemberEpoch !== b.previousMemberEpoch ||
    a.state !== b.state ||
    !partitionEpochsEquals(a.assignedPartitions, b.assignedPartitions) ||
    !partitionEpochsEquals(a.partitionsPendingRevocation, b.partitionsPendingRevocation)
  )
}

export function isReconciledTo(member: ConsumerGroupMember, assignmentEpoch: number): boolean {
  return member.state === ConsumerMemberState.STABLE && member.memberEpoch === assignmentEpoch
}

export function assignedPartitionSet(member: ConsumerGroupMember): PartitionSet {
  return partitionEpochsKeys(member.assignedPartitions)
}

/** Same session timeout and the same protocols (names and metadata bytes) in the same order. */
export function classicMetadataEquals(
  a: ClassicMemberMetadata | null,
  b: ClassicMemberMetadata | null,
): boolean {
  if (a === b) return true
  if (a === null || b === null) return false
  if (a.sessionTimeoutMs !== b.sessionTimeoutMs) return false
  if (a.supportedProtocols.length !== b.supportedProtocols.length) return false
  return a.supportedProtocols.every((p, i) => {
    const q = b.supportedProtocols[i]!
    return p.name === q.name && bytesEqual(p.metadata, q.metadata)
  })
}
