/**
 * Consumer groups (KIP-848) in the admin client: ConsumerGroupDescribe rows as descriptions (Kafka's
 * ConsumerGroupDescription and MemberDescription, with the epochs and target assignments the wire
 * carries).
 */
import type { ConsumerGroupDescribeResponseDescribedGroup } from '../../protocol/generated/messages/ConsumerGroupDescribeResponse.js'
import type { DescribeGroupsResponseDescribedGroup } from '../../protocol/generated/messages/DescribeGroupsResponse.js'
import {
  CONSUMER_PROTOCOL_TYPE,
  ConsumerProtocolError,
  decodeAssignment,
} from '../../protocol/consumer-protocol.js'
import type { BrokerNode } from '../network/client.js'
import type { TopicPartition } from './offsets.js'

export interface DescribeConsumerGroupsOptions {
  readonly timeoutMs?: number
  readonly includeAuthorizedOperations?: boolean
}

/** Kafka's member types: a KIP-848 member, or a classic member of a consumer group (v1+). */
export type ConsumerGroupMemberType = 'consumer' | 'classic' | 'unknown'

export interface ConsumerGroupMemberDescription {
  readonly memberId: string
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly memberEpoch: number
  readonly clientId: string
  readonly clientHost: string
  readonly subscribedTopicNames: readonly string[]
  readonly subscribedTopicRegex: string | null
  /** The partitions the member owns, sorted by topic and partition. */
  readonly assignment: readonly TopicPartition[]
  /** The partitions the coordinator means it to own (its target), sorted likewise. */
  readonly targetAssignment: readonly TopicPartition[]
  readonly memberType: ConsumerGroupMemberType
}

export interface ConsumerGroupDescription {
  readonly groupId: string
  /** `Empty`, `Assigning`, `Reconciling`, `Stable` */
  readonly groupState: string
  readonly groupEpoch: number
  readonly targetAssignmentEpoch: number
  readonly assignorName: string
  readonly members: readonly ConsumerGroupMemberDescription[]
  readonly coordinator: BrokerNode
  /** null unless includeAuthorizedOperations was set and the broker answered */
  readonly authorizedOperations: number | null
}

const MEMBER_TYPES: Readonly<Record<number, ConsumerGroupMemberType>> = { 0: 'classic', 1: 'consumer' }

function partitionsOf(a: {
  readonly topicPartitions: readonly { topicName: string; partitions: readonly number[] }[]
}): TopicPartition[] {
  return a.topicPartitions
    .flatMap((t) => t.partitions.map((partition) => ({ topic: t.topicName, partition })))
    .sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : x.partition - y.partition))
}

/** A described group (error code 0) as a description. */
export function consumerGroupFromWire(
  g: ConsumerGroupDescribeResponseDescribedGroup,
  coordinator: BrokerNode,
): ConsumerGroupDescription {
  return {
    groupId: g.groupId,
    groupState: g.groupState,
    groupEpoch: g.groupEpoch,
    targetAssignmentEpoch: g.assignmentEpoch,
    assignorName: g.assignorName,
    members: g.members.map((m) => ({
      memberId: m.memberId,
      instanceId: m.instanceId,
      rackId: m.rackId,
      memberEpoch: m.memberEpoch,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...m.subscribedTopicNames],
      subscribedTopicRegex: m.subscribedTopicRegex,
      assignment: partitionsOf(m.assignment),
      targetAssignment: partitionsOf(m.targetAssignment),
      memberType: MEMBER_TYPES[m.memberType] ?? 'unknown',
    })),
    coordinator,
    authorizedOperations: g.authorizedOperations === -2147483648 ? null : g.authorizedOperations,
  }
}

/** A member of a classic group, as DescribeGroups describes it. */
export interface ClassicGroupMemberDescription {
  readonly memberId: string
  readonly instanceId: string | null
  readonly clientId: string
  readonly clientHost: string
  /**
   * The partitions the member was assigned in its last SyncGroup, sorted by topic and partition:
   * read from the consumer protocol's assignment when the group's protocol type is `consumer`,
   * empty otherwise or when the bytes do not decode.
   */
  readonly assignment: readonly TopicPartition[]
}

/** A classic group (JoinGroup/SyncGroup), as Kafka's admin describes it with DescribeGroups. */
export interface ClassicGroupDescription {
  readonly groupId: string
  /** `Empty`, `PreparingRebalance`, `CompletingRebalance`, `Stable`, `Dead` (no such group) */
  readonly groupState: string
  /** `consumer` for Kafka's consumers, `connect`, …; empty for a group with offsets only */
  readonly protocolType: string
  /** the protocol the group chose (the assignor of a consumer group, `range`); empty when none */
  readonly protocol: string
  readonly members: readonly ClassicGroupMemberDescription[]
  readonly coordinator: BrokerNode
}

/**
 * Whether a classic group of this protocol type is a consumer group to Kafka's admin and
 * `kafka-consumer-groups`: `consumer`, or none (a group with committed offsets only). Others (Kafka
 * Connect's `connect`, …) are not listed as consumer groups, and their assignments are not read.
 */
export function isConsumerProtocolType(protocolType: string): boolean {
  return protocolType === CONSUMER_PROTOCOL_TYPE || protocolType === ''
}

function classicAssignment(protocolType: string, bytes: Uint8Array): TopicPartition[] {
  if (!isConsumerProtocolType(protocolType) || bytes.length === 0) return []
  try {
    return partitionsOf({
      topicPartitions: decodeAssignment(bytes).assignedPartitions.map((t) => ({
        topicName: t.topic,
        partitions: t.partitions,
      })),
    })
  } catch (e) {
    if (e instanceof ConsumerProtocolError) return []
    throw e
  }
}

export function classicGroupFromWire(
  g: DescribeGroupsResponseDescribedGroup,
  coordinator: BrokerNode,
): ClassicGroupDescription {
  return {
    groupId: g.groupId,
    groupState: g.groupState,
    protocolType: g.protocolType,
    protocol: g.protocolData,
    members: g.members.map((m) => ({
      memberId: m.memberId,
      instanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      assignment: classicAssignment(g.protocolType, m.memberAssignment),
    })),
    coordinator,
  }
}
