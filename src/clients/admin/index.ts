export { Admin, KeyedResult } from './admin.js'
export type {
  AdminOptions,
  CallOptions,
  DescribeStreamsGroupsOptions,
  GroupListing,
  ListGroupsOptions,
  NewTopic,
  StreamsGroupDescription,
  StreamsGroupMemberAssignment,
  StreamsGroupMemberDescription,
  StreamsGroupSubtopologyDescription,
  StreamsGroupTopicInfo,
  TaskIds,
  TopicPartitionOffset,
} from './admin.js'
export type {
  ClassicGroupDescription,
  ClassicGroupMemberDescription,
  ConsumerGroupDescription,
  ConsumerGroupMemberDescription,
  ConsumerGroupMemberType,
  DescribeConsumerGroupsOptions,
} from './consumer-groups.js'
export { isConsumerProtocolType } from './consumer-groups.js'
export { Config, ConfigResourceResult, ConfigResourceTypes } from './configs.js'
export type {
  AlterConfigOp,
  AlterConfigOpType,
  AlterConfigsOptions,
  ConfigEntry,
  ConfigResource,
  ConfigResourceType,
  ConfigSource,
  ConfigSynonym,
  ConfigType,
  DescribeConfigsOptions,
} from './configs.js'
export {
  AlterOffsetsResult,
  DeleteOffsetsResult,
  ListOffsetsResult,
  OffsetSpec,
  topicPartitionString,
} from './offsets.js'
export type {
  ListOffsetsOptions,
  ListOffsetsQuery,
  ListOffsetsResultInfo,
  OffsetAndMetadata,
  TopicPartition,
} from './offsets.js'
export type { TopicDescription, TopicPartitionInfo } from './topics.js'
export type { LogDirDescription, RecordsToDelete, ReplicaInfo } from './log-dirs.js'
export type {
  ListTransactionsFilters,
  ProducerState,
  TransactionDescription,
  TransactionListing,
} from './transactions.js'
export {
  StreamsGroupTopologyDescriptionStatus,
  topologyDescriptionFromWire,
  topologyDescriptionStatusForId,
} from './topology-description.js'
export type {
  StreamsGroupTopologyDescription,
  TopologyGlobalStore,
  TopologyNode,
  TopologyProcessorNode,
  TopologySinkNode,
  TopologySourceNode,
  TopologySubtopology,
  WireTopologyDescription,
  WireTopologyNode,
} from './topology-description.js'
export {
  ClientClosedError,
  DisconnectError,
  IllegalStateError,
  KafkaError,
  SaslAuthenticationError,
  SslAuthenticationError,
  TimeoutError,
  UnsupportedVersionError,
} from '../network/errors.js'
export { securityConfigFromProperties } from '../network/security.js'
export type {
  KafkaSecurityConfig,
  SaslMechanism,
  SaslOptions,
  SecurityOptions,
  SecurityProtocol,
  SslOptions,
} from '../network/security.js'
export type { BrokerNode } from '../network/client.js'
export type { Logger } from '../network/logger.js'
