/**
 * Client-side errors. A broker error code becomes a `KafkaError` carrying Kafka's name, the
 * retriable flag from the protocol's error table and the Java exception class name Kafka's own
 * tools print (`org.apache.kafka.common.errors.GroupIdNotFoundException: …`).
 */
import { errorInfo } from '../../protocol/errors.js'

const JAVA_ERRORS = 'org.apache.kafka.common.errors.'

// Error names whose Java exception class does not follow NAME → NameException.
const CLASS_OVERRIDES: Readonly<Record<string, string>> = {
  UNKNOWN_SERVER_ERROR: 'UnknownServerException',
  GROUP_AUTHORIZATION_FAILED: 'GroupAuthorizationException',
  TOPIC_AUTHORIZATION_FAILED: 'TopicAuthorizationException',
  CLUSTER_AUTHORIZATION_FAILED: 'ClusterAuthorizationException',
  NON_EMPTY_GROUP: 'GroupNotEmptyException',
  REQUEST_TIMED_OUT: 'TimeoutException',
  CORRUPT_MESSAGE: 'CorruptRecordException',
  NETWORK_EXCEPTION: 'NetworkException',
  INVALID_TOPIC_EXCEPTION: 'InvalidTopicException',
}

/** The Java exception class Kafka raises for an error name. */
export function javaClassForError(name: string): string {
  const override = CLASS_OVERRIDES[name]
  if (override !== undefined) return JAVA_ERRORS + override
  const camel = name
    .toLowerCase()
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('')
  return `${JAVA_ERRORS}${camel}Exception`
}

export interface KafkaErrorOptions {
  readonly code?: number | null
  readonly errorName?: string
  readonly retriable?: boolean
  readonly javaClassName?: string
  readonly brokerMessage?: string | null
  readonly cause?: unknown
}

/** Any failure the clients report. `toString()` has the shape Kafka's tools print. */
export class KafkaError extends Error {
  override name = 'KafkaError'
  /** the wire error code, or null for a local failure */
  readonly code: number | null
  /** Kafka's name for the error (`GROUP_ID_NOT_FOUND`), or a local name (`REQUEST_TIMEOUT`) */
  readonly errorName: string
  readonly retriable: boolean
  readonly javaClassName: string
  /** the ErrorMessage the broker sent, when it sent one */
  readonly brokerMessage: string | null

  constructor(message: string, opts: KafkaErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.code = opts.code ?? null
    this.errorName = opts.errorName ?? 'UNKNOWN'
    this.retriable = opts.retriable ?? false
    this.javaClassName = opts.javaClassName ?? javaClassForError(this.errorName)
    this.brokerMessage = opts.brokerMessage ?? null
  }

  override toString(): string {
    return `${this.javaClassName}: ${this.message}`
  }
}

/** A broker error code as an error; the message is the broker's, else Kafka's default text. */
export function kafkaErrorFromCode(code: number, brokerMessage?: string | null): KafkaError {
  const info = errorInfo(code)
  if (info.code === 35)
    return new UnsupportedVersionError(brokerMessage ?? info.message ?? '', brokerMessage ?? null)
  return new KafkaError(brokerMessage ?? info.message ?? info.name, {
    code: info.code,
    errorName: info.name,
    retriable: info.retriable,
    brokerMessage: brokerMessage ?? null,
  })
}

/** Kafka's UnsupportedVersionException: a version mismatch found locally or answered by the broker. */
export class UnsupportedVersionError extends KafkaError {
  override name = 'UnsupportedVersionError'
  constructor(message: string, brokerMessage: string | null = null, cause?: unknown) {
    super(message, { code: 35, errorName: 'UNSUPPORTED_VERSION', retriable: false, brokerMessage, cause })
  }
}

/** No response within request.timeout.ms, or an operation ran past its deadline (retriable). */
export class TimeoutError extends KafkaError {
  override name = 'TimeoutError'
  constructor(message: string, cause?: unknown) {
    super(message, {
      errorName: 'REQUEST_TIMED_OUT',
      retriable: true,
      javaClassName: `${JAVA_ERRORS}TimeoutException`,
      cause,
    })
  }
}

/** The connection closed or could not be opened (retriable; Kafka's DisconnectException). */
export class DisconnectError extends KafkaError {
  override name = 'DisconnectError'
  constructor(message: string, cause?: unknown) {
    super(message, {
      errorName: 'DISCONNECTED',
      retriable: true,
      javaClassName: `${JAVA_ERRORS}DisconnectException`,
      cause,
    })
  }
}

/** A response that breaks an invariant (Kafka's IllegalStateException). */
export class IllegalStateError extends KafkaError {
  override name = 'IllegalStateError'
  constructor(message: string, cause?: unknown) {
    super(message, { errorName: 'ILLEGAL_STATE', javaClassName: 'java.lang.IllegalStateException', cause })
  }
}

/** The client was closed while the call was pending. */
export class ClientClosedError extends KafkaError {
  override name = 'ClientClosedError'
  constructor(message = 'The client has been closed.') {
    super(message, { errorName: 'CLIENT_CLOSED', javaClassName: `${JAVA_ERRORS}InterruptException` })
  }
}

/** True for the two errors after which the coordinator must be looked up again. */
export function isCoordinatorError(e: unknown): boolean {
  return e instanceof KafkaError && (e.code === 15 || e.code === 16)
}

/**
 * SASL authentication failed (Kafka's SaslAuthenticationException): wrong credentials, a mechanism
 * the broker refused, or a server that failed SCRAM verification. Not retriable.
 */
export class SaslAuthenticationError extends KafkaError {
  override name = 'SaslAuthenticationError'
  constructor(message: string, brokerMessage: string | null = null, cause?: unknown) {
    super(message, {
      code: 58,
      errorName: 'SASL_AUTHENTICATION_FAILED',
      retriable: false,
      javaClassName: `${JAVA_ERRORS}SaslAuthenticationException`,
      brokerMessage,
      cause,
    })
  }
}

/** The TLS handshake failed (Kafka's SslAuthenticationException): an untrusted or misnamed certificate. */
export class SslAuthenticationError extends KafkaError {
  override name = 'SslAuthenticationError'
  constructor(message: string, cause?: unknown) {
    super(message, {
      errorName: 'SSL_AUTHENTICATION_FAILED',
      retriable: false,
      javaClassName: `${JAVA_ERRORS}SslAuthenticationException`,
      cause,
    })
  }
}
