/**
 * Wire and record shapes used by the streams-group logic. They are structurally identical to the
 * generated types of `src/protocol` (Kafka field names in camelCase, int64 as bigint, nested structs
 * named `<Message><Struct>`), so values flow between the two without conversion.
 */

export interface KeyValue {
  key: string
  value: string
}

export interface TaskIds {
  subtopologyId: string
  partitions: number[]
}

export interface Endpoint {
  host: string
  port: number
}

export interface TaskOffset {
  subtopologyId: string
  partition: number
  offset: bigint
}

export interface TopicInfo {
  name: string
  partitions: number
  replicationFactor: number
  topicConfigs: KeyValue[]
}

export interface CopartitionGroup {
  sourceTopics: number[]
  sourceTopicRegex: number[]
  repartitionSourceTopics: number[]
}

export interface RequestSubtopology {
  subtopologyId: string
  sourceTopics: string[]
  sourceTopicRegex: string[]
  stateChangelogTopics: TopicInfo[]
  repartitionSinkTopics: string[]
  repartitionSourceTopics: TopicInfo[]
  copartitionGroups: CopartitionGroup[]
}

export interface RequestTopology {
  epoch: number
  subtopologies: RequestSubtopology[]
}

/** StreamsGroupHeartbeatRequest v0–1. */
export interface StreamsGroupHeartbeatRequest {
  groupId: string
  memberId: string
  memberEpoch: number
  endpointInformationEpoch: number
  instanceId: string | null
  rackId: string | null
  rebalanceTimeoutMs: number
  topology: RequestTopology | null
  activeTasks: TaskIds[] | null
  standbyTasks: TaskIds[] | null
  warmupTasks: TaskIds[] | null
  processId: string | null
  userEndpoint: Endpoint | null
  clientTags: KeyValue[] | null
  taskOffsets: TaskOffset[] | null
  taskEndOffsets: TaskOffset[] | null
  shutdownApplication: boolean
}

export interface HeartbeatStatus {
  statusCode: number
  statusDetail: string
}

export interface TopicPartitions {
  topic: string
  partitions: number[]
}

export interface EndpointToPartitions {
  userEndpoint: Endpoint
  activePartitions: TopicPartitions[]
  standbyPartitions: TopicPartitions[]
}

/** StreamsGroupHeartbeatResponse v0–1. */
export interface StreamsGroupHeartbeatResponse {
  throttleTimeMs: number
  errorCode: number
  errorMessage: string | null
  memberId: string
  memberEpoch: number
  heartbeatIntervalMs: number
  acceptableRecoveryLagLegacy: number
  taskOffsetIntervalMs: number
  acceptableRecoveryLag: bigint
  status: HeartbeatStatus[] | null
  activeTasks: TaskIds[] | null
  standbyTasks: TaskIds[] | null
  warmupTasks: TaskIds[] | null
  topologyDescriptionRequired: boolean
  endpointInformationEpoch: number
  partitionsByUserEndpoint: EndpointToPartitions[] | null
}

/** Defaults of every StreamsGroupHeartbeatResponse field (an error response keeps all but the error). */
export function createStreamsGroupHeartbeatResponse(
  partial: Partial<StreamsGroupHeartbeatResponse> = {},
): StreamsGroupHeartbeatResponse {
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    errorMessage: null,
    memberId: '',
    memberEpoch: 0,
    heartbeatIntervalMs: 0,
    acceptableRecoveryLagLegacy: 0,
    taskOffsetIntervalMs: 0,
    acceptableRecoveryLag: -1n,
    status: [],
    activeTasks: null,
    standbyTasks: null,
    warmupTasks: null,
    topologyDescriptionRequired: false,
    endpointInformationEpoch: 0,
    partitionsByUserEndpoint: null,
    ...partial,
  }
}

// ---- StreamsGroupDescribe response rows ----

export interface DescribedTopicInfo {
  name: string
  partitions: number
  replicationFactor: number
  topicConfigs: KeyValue[]
}

export interface DescribedSubtopology {
  subtopologyId: string
  sourceTopics: string[]
  repartitionSinkTopics: string[]
  stateChangelogTopics: DescribedTopicInfo[]
  repartitionSourceTopics: DescribedTopicInfo[]
}

export interface DescribedTopology {
  epoch: number
  subtopologies: DescribedSubtopology[] | null
}

export interface DescribedAssignment {
  activeTasks: TaskIds[]
  standbyTasks: TaskIds[]
  warmupTasks: TaskIds[]
}

export interface DescribedMember {
  memberId: string
  memberEpoch: number
  instanceId: string | null
  rackId: string | null
  clientId: string
  clientHost: string
  topologyEpoch: number
  processId: string
  userEndpoint: Endpoint | null
  clientTags: KeyValue[]
  taskOffsets: TaskOffset[]
  taskEndOffsets: TaskOffset[]
  assignment: DescribedAssignment
  targetAssignment: DescribedAssignment
  isClassic: boolean
}

/** The KIP-1331 description struct; this folder never fills it (no plugin here). */
export interface DescribedTopologyDescription {
  subtopologies: unknown[]
  globalStores: unknown[]
}

/** StreamsGroupDescribeResponse `DescribedGroup` (v0–1). */
export interface StreamsGroupDescribeResponseDescribedGroup {
  errorCode: number
  errorMessage: string | null
  groupId: string
  groupState: string
  groupEpoch: number
  assignmentEpoch: number
  topology: DescribedTopology | null
  members: DescribedMember[]
  authorizedOperations: number
  topologyDescription: DescribedTopologyDescription | null
  topologyDescriptionStatus: number
  assignorName: string | null
}

// ---- Coordinator records (schema version 0) ----

export interface StreamsGroupMetadataKey {
  groupId: string
}
export interface StreamsGroupMetadataValue {
  epoch: number
  metadataHash: bigint
  validatedTopologyEpoch: number
  lastAssignmentConfigs: KeyValue[] | null
  storedDescriptionTopologyEpoch: number
  failedDescriptionTopologyEpoch: number
}
export interface StreamsGroupMemberKey {
  groupId: string
  memberId: string
}
export interface StreamsGroupMemberMetadataValue {
  instanceId: string | null
  rackId: string | null
  clientId: string
  clientHost: string
  rebalanceTimeoutMs: number
  topologyEpoch: number
  processId: string
  userEndpoint: Endpoint | null
  clientTags: KeyValue[]
}
export interface StreamsGroupTargetAssignmentMetadataKey {
  groupId: string
}
export interface StreamsGroupTargetAssignmentMetadataValue {
  assignmentEpoch: number
  assignmentTimestamp: bigint
}
export interface StreamsGroupTargetAssignmentMemberValue {
  activeTasks: TaskIds[]
  standbyTasks: TaskIds[]
  warmupTasks: TaskIds[]
}
/** `TaskIds` of the current-assignment record: active entries carry per-partition assignment epochs. */
export interface TaskIdsWithEpochs {
  subtopologyId: string
  partitions: number[]
  assignmentEpochs: number[] | null
}
export interface StreamsGroupCurrentMemberAssignmentValue {
  memberEpoch: number
  previousMemberEpoch: number
  state: number
  activeTasks: TaskIdsWithEpochs[]
  standbyTasks: TaskIdsWithEpochs[]
  warmupTasks: TaskIdsWithEpochs[]
  activeTasksPendingRevocation: TaskIdsWithEpochs[]
  standbyTasksPendingRevocation: TaskIdsWithEpochs[]
  warmupTasksPendingRevocation: TaskIdsWithEpochs[]
}
export interface StreamsGroupTopologyKey {
  groupId: string
}
/** The record's TopicInfo: its config struct is `TopicConfig` with lower-case `key`/`value` in the schema. */
export interface RecordTopicInfo {
  name: string
  partitions: number
  replicationFactor: number
  topicConfigs: KeyValue[]
}
export interface RecordSubtopology {
  subtopologyId: string
  sourceTopics: string[]
  sourceTopicRegex: string[]
  stateChangelogTopics: RecordTopicInfo[]
  repartitionSinkTopics: string[]
  repartitionSourceTopics: RecordTopicInfo[]
  copartitionGroups: CopartitionGroup[]
}
export interface StreamsGroupTopologyValue {
  epoch: number
  subtopologies: RecordSubtopology[]
}

/** Every streams coordinator record; a null value is a tombstone. */
export type StreamsCoordinatorRecord =
  | { type: 'StreamsGroupMetadata'; key: StreamsGroupMetadataKey; value: StreamsGroupMetadataValue | null }
  | {
      type: 'StreamsGroupMemberMetadata'
      key: StreamsGroupMemberKey
      value: StreamsGroupMemberMetadataValue | null
    }
  | {
      type: 'StreamsGroupTargetAssignmentMetadata'
      key: StreamsGroupTargetAssignmentMetadataKey
      value: StreamsGroupTargetAssignmentMetadataValue | null
    }
  | {
      type: 'StreamsGroupTargetAssignmentMember'
      key: StreamsGroupMemberKey
      value: StreamsGroupTargetAssignmentMemberValue | null
    }
  | {
      type: 'StreamsGroupCurrentMemberAssignment'
      key: StreamsGroupMemberKey
      value: StreamsGroupCurrentMemberAssignmentValue | null
    }
  | { type: 'StreamsGroupTopology'; key: StreamsGroupTopologyKey; value: StreamsGroupTopologyValue | null }
