/**
 * Wire and record shapes used by the streams-group logic: the generated types of `src/protocol`
 * under the short names this folder uses. One struct type of a message stands for all structurally
 * identical ones (a `TaskIds` of the heartbeat request is also the `TaskIds` of the heartbeat
 * response, the describe response and the target-assignment record), so values flow between the
 * messages and the records without conversion.
 */
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'
import type {
  StreamsGroupDescribeResponseAssignment,
  StreamsGroupDescribeResponseMember,
  StreamsGroupDescribeResponseSubtopology,
  StreamsGroupDescribeResponseTopicInfo,
  StreamsGroupDescribeResponseTopology,
  StreamsGroupDescribeResponseTopologyDescription,
} from '../../../protocol/generated/messages/StreamsGroupDescribeResponse.js'
import type {
  StreamsGroupHeartbeatRequestCopartitionGroup,
  StreamsGroupHeartbeatRequestEndpoint,
  StreamsGroupHeartbeatRequestKeyValue,
  StreamsGroupHeartbeatRequestSubtopology,
  StreamsGroupHeartbeatRequestTaskIds,
  StreamsGroupHeartbeatRequestTaskOffset,
  StreamsGroupHeartbeatRequestTopicInfo,
  StreamsGroupHeartbeatRequestTopology,
} from '../../../protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import type {
  StreamsGroupHeartbeatResponseEndpointToPartitions,
  StreamsGroupHeartbeatResponseStatus,
  StreamsGroupHeartbeatResponseTopicPartition,
} from '../../../protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import type { StreamsGroupCurrentMemberAssignmentValueTaskIds } from '../../../protocol/generated/records/StreamsGroupCurrentMemberAssignmentValue.js'
import type {
  StreamsGroupTopologyValueSubtopology,
  StreamsGroupTopologyValueTopicInfo,
} from '../../../protocol/generated/records/StreamsGroupTopologyValue.js'

export type { StreamsGroupHeartbeatRequest } from '../../../protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
export {
  createStreamsGroupHeartbeatResponse,
  type StreamsGroupHeartbeatResponse,
} from '../../../protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
export type { StreamsGroupDescribeResponseDescribedGroup } from '../../../protocol/generated/messages/StreamsGroupDescribeResponse.js'
export type { StreamsGroupMetadataKey } from '../../../protocol/generated/records/StreamsGroupMetadataKey.js'
export type { StreamsGroupMetadataValue } from '../../../protocol/generated/records/StreamsGroupMetadataValue.js'
export type { StreamsGroupMemberMetadataValue } from '../../../protocol/generated/records/StreamsGroupMemberMetadataValue.js'
export type { StreamsGroupTargetAssignmentMetadataKey } from '../../../protocol/generated/records/StreamsGroupTargetAssignmentMetadataKey.js'
export type { StreamsGroupTargetAssignmentMetadataValue } from '../../../protocol/generated/records/StreamsGroupTargetAssignmentMetadataValue.js'
export type { StreamsGroupTargetAssignmentMemberValue } from '../../../protocol/generated/records/StreamsGroupTargetAssignmentMemberValue.js'
export type { StreamsGroupCurrentMemberAssignmentValue } from '../../../protocol/generated/records/StreamsGroupCurrentMemberAssignmentValue.js'
export type { StreamsGroupTopologyKey } from '../../../protocol/generated/records/StreamsGroupTopologyKey.js'
export type { StreamsGroupTopologyValue } from '../../../protocol/generated/records/StreamsGroupTopologyValue.js'

export type KeyValue = StreamsGroupHeartbeatRequestKeyValue
export type TaskIds = StreamsGroupHeartbeatRequestTaskIds
export type Endpoint = StreamsGroupHeartbeatRequestEndpoint
export type TaskOffset = StreamsGroupHeartbeatRequestTaskOffset
export type TopicInfo = StreamsGroupHeartbeatRequestTopicInfo
export type CopartitionGroup = StreamsGroupHeartbeatRequestCopartitionGroup
export type RequestSubtopology = StreamsGroupHeartbeatRequestSubtopology
export type RequestTopology = StreamsGroupHeartbeatRequestTopology

export type HeartbeatStatus = StreamsGroupHeartbeatResponseStatus
export type TopicPartitions = StreamsGroupHeartbeatResponseTopicPartition
export type EndpointToPartitions = StreamsGroupHeartbeatResponseEndpointToPartitions

export type DescribedTopicInfo = StreamsGroupDescribeResponseTopicInfo
export type DescribedSubtopology = StreamsGroupDescribeResponseSubtopology
export type DescribedTopology = StreamsGroupDescribeResponseTopology
export type DescribedAssignment = StreamsGroupDescribeResponseAssignment
export type DescribedMember = StreamsGroupDescribeResponseMember
/** The KIP-1331 description struct; this folder never fills it (no plugin here). */
export type DescribedTopologyDescription = StreamsGroupDescribeResponseTopologyDescription

/** The member key shared by records 19, 21 and 22 (GroupId, MemberId). */
export interface StreamsGroupMemberKey {
  groupId: string
  memberId: string
}
/** `TaskIds` of the current-assignment record: active entries carry per-partition assignment epochs. */
export type TaskIdsWithEpochs = StreamsGroupCurrentMemberAssignmentValueTaskIds
/** The record's TopicInfo: its config struct is `TopicConfig` with lower-case `key`/`value` in the schema. */
export type RecordTopicInfo = StreamsGroupTopologyValueTopicInfo
export type RecordSubtopology = StreamsGroupTopologyValueSubtopology

/** Every streams coordinator record (the streams members of the generated union); a null value is a tombstone. */
export type StreamsCoordinatorRecord = Extract<
  CoordinatorRecord,
  {
    type:
      | 'StreamsGroupMetadata'
      | 'StreamsGroupMemberMetadata'
      | 'StreamsGroupTargetAssignmentMetadata'
      | 'StreamsGroupTargetAssignmentMember'
      | 'StreamsGroupCurrentMemberAssignment'
      | 'StreamsGroupTopology'
  }
>
