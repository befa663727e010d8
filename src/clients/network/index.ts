export { ExponentialBackoff, RequestState } from './backoff.js'
export type { ExponentialBackoffOptions } from './backoff.js'
export { Connection } from './connection.js'
export type { ConnectionOptions, SecurityOptions, SendOptions, VersionRange } from './connection.js'
export {
  ClientClosedError,
  DisconnectError,
  IllegalStateError,
  isCoordinatorError,
  javaClassForError,
  KafkaError,
  kafkaErrorFromCode,
  TimeoutError,
  UnsupportedVersionError,
} from './errors.js'
export type { KafkaErrorOptions } from './errors.js'
export { decodeResponseFrame, encodeRequestFrame, FrameDecoder } from './framing.js'
export type { ApiKeyNumber, RequestOf, ResponseOf } from './framing.js'
export { apiName, CoordinatorType, NetworkClient, parseBootstrapServers, sleep } from './client.js'
export type { BrokerNode, NetworkClientOptions, RetryOptions } from './client.js'
export { silentLogger } from './logger.js'
export type { LogFn, Logger } from './logger.js'
