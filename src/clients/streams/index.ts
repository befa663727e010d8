export { Topology, TopologyDescription, TopologyError } from './topology.js'
export type {
  DescribedGlobalStore,
  DescribedNode,
  DescribedSubtopology,
  StateStoreOptions,
  TopicNameExtractor,
} from './topology.js'
export { heartbeatTopology, internalTopicDecorator, topologyDescriptionToWire } from './wire.js'
export type { HeartbeatTopologyOptions, WireDescription } from './wire.js'
export { TopologyPushManager } from './push-manager.js'
export type { PushManagerOptions, PushRequest } from './push-manager.js'
export type { Logger } from '../network/logger.js'
export { StreamsGroupStatusCode, StreamsMember } from './member.js'
export type {
  StreamsGroupStatus,
  StreamsMemberOptions,
  StreamsMemberState,
  StreamsTasks,
  TaskIds,
} from './member.js'
export type {
  KafkaSecurityConfig,
  SaslMechanism,
  SaslOptions,
  SecurityOptions,
  SecurityProtocol,
  SslOptions,
} from '../network/security.js'
