export { ExponentialBackoff, RequestState } from './backoff.js'
export type { ExponentialBackoffOptions } from './backoff.js'
export { Connection } from './connection.js'
export type { ConnectionOptions, SendOptions, VersionRange } from './connection.js'
export {
  ClientClosedError,
  DisconnectError,
  IllegalStateError,
  isCoordinatorError,
  javaClassForError,
  KafkaError,
  kafkaErrorFromCode,
  SaslAuthenticationError,
  SslAuthenticationError,
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
export { createSaslMechanism } from './sasl.js'
export type { SaslClientMechanism } from './sasl.js'
export {
  KAFKA_SECURITY_KEYS,
  parseJaasConfig,
  pickSecurityOptions,
  resolveSecurity,
  SASL_MECHANISMS,
  SECURITY_PROTOCOLS,
  securityConfigFromProperties,
} from './security.js'
export type {
  JaasCredentials,
  KafkaSecurityConfig,
  ResolvedSecurity,
  ResolvedTls,
  SaslMechanism,
  SaslOptions,
  SecurityOptions,
  SecurityProtocol,
  SslOptions,
} from './security.js'
