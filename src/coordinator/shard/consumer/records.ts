/** The consumer group records (Kafka's GroupCoordinatorRecordHelpers for consumer groups). */
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'
import type { ConsumerGroupMember } from './member.js'
import { type PartitionSet, partitionEpochsToRecord, partitionSetToList } from './partitions.js'

/** The consumer group records of the coordinator's record union. */
export type ConsumerCoordinatorRecord = Extract<
  CoordinatorRecord,
  {
    type:
      | 'ConsumerGroupMetadata'
      | 'ConsumerGroupPartitionMetadata'
      | 'ConsumerGroupMemberMetadata'
      | 'ConsumerGroupTargetAssignmentMetadata'
      | 'ConsumerGroupTargetAssignmentMember'
      | 'ConsumerGroupCurrentMemberAssignment'
      | 'ConsumerGroupRegularExpression'
  }
>

export const CONSUMER_RECORD_TYPES: ReadonlySet<string> = new Set([
  'ConsumerGroupMetadata',
  'ConsumerGroupPartitionMetadata',
  'ConsumerGroupMemberMetadata',
  'ConsumerGroupTargetAssignmentMetadata',
  'ConsumerGroupTargetAssignmentMember',
  'ConsumerGroupCurrentMemberAssignment',
  'ConsumerGroupRegularExpression',
])

export function isConsumerRecord(r: CoordinatorRecord): r is ConsumerCoordinatorRecord {
  return CONSUMER_RECORD_TYPES.has(r.type)
}

export function groupEpochRecord(
  groupId: string,
  epoch: number,
  metadataHash: bigint,
): ConsumerCoordinatorRecord {
  return { type: 'ConsumerGroupMetadata', key: { groupId }, value: { epoch, metadataHash } }
}

export function memberSubscriptionRecord(groupId: string, m: ConsumerGroupMember): ConsumerCoordinatorRecord {
  const classic = m.classicMemberMetadata
  return {
    type: 'ConsumerGroupMemberMetadata',
    key: { groupId, memberId: m.memberId },
    value: {
      instanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...m.subscribedTopicNames],
      subscribedTopicRegex: m.subscribedTopicRegex,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      serverAssignor: m.serverAssignorName,
      classicMemberMetadata:
        classic === null
          ? null
          : {
              sessionTimeoutMs: classic.sessionTimeoutMs,
              supportedProtocols: classic.supportedProtocols.map((p) => ({
                name: p.name,
                metadata: p.metadata,
              })),
            },
    },
  }
}

export function targetAssignmentRecord(
  groupId: string,
  memberId: string,
  partitions: PartitionSet,
): ConsumerCoordinatorRecord {
  return {
    type: 'ConsumerGroupTargetAssignmentMember',
    key: { groupId, memberId },
    value: { topicPartitions: partitionSetToList(partitions) },
  }
}

export function targetAssignmentMetadataRecord(
  groupId: string,
  assignmentEpoch: number,
  assignmentTimestamp: bigint,
): ConsumerCoordinatorRecord {
  return {
    type: 'ConsumerGroupTargetAssignmentMetadata',
    key: { groupId },
    value: { assignmentEpoch, assignmentTimestamp },
  }
}

export function currentAssignmentRecord(groupId: string, m: ConsumerGroupMember): ConsumerCoordinatorRecord {
  return {
    type: 'ConsumerGroupCurrentMemberAssignment',
    key: { groupId, memberId: m.memberId },
    value: {
      memberEpoch: m.memberEpoch,
      previousMemberEpoch: m.previousMemberEpoch,
      state: m.state,
      assignedPartitions: partitionEpochsToRecord(m.assignedPartitions),
      partitionsPendingRevocation: partitionEpochsToRecord(m.partitionsPendingRevocation),
    },
  }
}

export interface ResolvedRegularExpression {
  /** Sorted topic names. */
  readonly topics: readonly string[]
  readonly version: bigint
  readonly timestamp: bigint
}

export function regularExpressionRecord(
  groupId: string,
  regularExpression: string,
  resolved: ResolvedRegularExpression,
): ConsumerCoordinatorRecord {
  return {
    type: 'ConsumerGroupRegularExpression',
    key: { groupId, regularExpression },
    value: { topics: [...resolved.topics], version: resolved.version, timestamp: resolved.timestamp },
  }
}

export const regularExpressionTombstone = (
  groupId: string,
  regularExpression: string,
): ConsumerCoordinatorRecord => ({
  type: 'ConsumerGroupRegularExpression',
  key: { groupId, regularExpression },
  value: null,
})

const currentAssignmentTombstone = (groupId: string, memberId: string): ConsumerCoordinatorRecord => ({
  type: 'ConsumerGroupCurrentMemberAssignment',
  key: { groupId, memberId },
  value: null,
})
const targetAssignmentTombstone = (groupId: string, memberId: string): ConsumerCoordinatorRecord => ({
  type: 'ConsumerGroupTargetAssignmentMember',
  key: { groupId, memberId },
  value: null,
})
const memberSubscriptionTombstone = (groupId: string, memberId: string): ConsumerCoordinatorRecord => ({
  type: 'ConsumerGroupMemberMetadata',
  key: { groupId, memberId },
  value: null,
})
export const subscriptionMetadataTombstone = (groupId: string): ConsumerCoordinatorRecord => ({
  type: 'ConsumerGroupPartitionMetadata',
  key: { groupId },
  value: null,
})

/** Removing a member: its current assignment, its target, then its subscription (Kafka's order). */
export function memberTombstones(groupId: string, memberId: string): ConsumerCoordinatorRecord[] {
  return [
    currentAssignmentTombstone(groupId, memberId),
    targetAssignmentTombstone(groupId, memberId),
    memberSubscriptionTombstone(groupId, memberId),
  ]
}

/** Deleting a group, in Kafka's order. */
export function groupTombstones(
  groupId: string,
  memberIds: readonly string[],
  regexes: readonly string[],
): ConsumerCoordinatorRecord[] {
  return [
    ...memberIds.map((id) => currentAssignmentTombstone(groupId, id)),
    ...memberIds.map((id) => targetAssignmentTombstone(groupId, id)),
    { type: 'ConsumerGroupTargetAssignmentMetadata', key: { groupId }, value: null },
    ...memberIds.map((id) => memberSubscriptionTombstone(groupId, id)),
    ...regexes.map((r) => regularExpressionTombstone(groupId, r)),
    subscriptionMetadataTombstone(groupId),
    { type: 'ConsumerGroupMetadata', key: { groupId }, value: null },
  ]
}

/** How a static member's replacement is written (see modern/membership.ts replacementRecords). */
export const CONSUMER_REPLACEMENT_RECORDS = {
  memberTombstones,
  memberMetadata: memberSubscriptionRecord,
  targetAssignment: targetAssignmentRecord,
  currentAssignment: currentAssignmentRecord,
}
