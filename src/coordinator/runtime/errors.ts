/**
 * Errors of the coordinator runtime. Each carries the Kafka error the server answers with, by name
 * (the runtime imports nothing from the protocol folder); the one translation function in the
 * service/server maps `kafkaError` to the wire code.
 */
import { LocalError, type LocalErrorCode } from '../../errors.js'

/** The runtime's codes in the catalogue of local error codes (src/errors.ts). */
export type CoordinatorRuntimeErrorCode = Extract<LocalErrorCode, `COORDINATOR_${string}`>

/** Kafka error names the runtime's failures map to. */
export type CoordinatorKafkaError =
  | 'NOT_COORDINATOR'
  | 'COORDINATOR_NOT_AVAILABLE'
  | 'COORDINATOR_LOAD_IN_PROGRESS'

/** A local error that also names the Kafka error a request is answered with. */
export class CoordinatorRuntimeError extends LocalError {
  declare readonly code: CoordinatorRuntimeErrorCode
  /** The Kafka error to answer with. */
  readonly kafkaError: CoordinatorKafkaError
  /** The shard the operation was for, when known. */
  readonly shardId: number | undefined

  constructor(
    code: CoordinatorRuntimeErrorCode,
    kafkaError: CoordinatorKafkaError,
    message: string,
    options?: { readonly cause?: unknown; readonly shardId?: number },
  ) {
    super(code, message, options)
    this.name = 'CoordinatorRuntimeError'
    this.kafkaError = kafkaError
    this.shardId = options?.shardId
  }
}

/**
 * A write operation whose records could not be made durable. Nothing was replayed: the shard is as
 * it was before the operation. Kafka answers a failed coordinator write (KAFKA_STORAGE_ERROR,
 * NOT_LEADER_OR_FOLLOWER) with NOT_COORDINATOR, so clients look the coordinator up again and retry.
 */
export class CoordinatorWriteError extends CoordinatorRuntimeError {
  constructor(operation: string, shardId: number, cause: unknown) {
    super(
      'COORDINATOR_WRITE_FAILED',
      'NOT_COORDINATOR',
      `write operation ${operation} on shard ${shardId} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause, shardId },
    )
    this.name = 'CoordinatorWriteError'
  }
}

/**
 * A write operation that did not complete within its write timeout (`offsets.commit.timeout.ms` for
 * a group coordinator). Kafka maps the REQUEST_TIMED_OUT of a coordinator write to
 * COORDINATOR_NOT_AVAILABLE. The operation may still complete later.
 */
export class CoordinatorTimeoutError extends CoordinatorRuntimeError {
  readonly operation: string
  constructor(operation: string, timeoutMs: number) {
    super(
      'COORDINATOR_WRITE_TIMEOUT',
      'COORDINATOR_NOT_AVAILABLE',
      `operation ${operation} did not complete within ${timeoutMs} ms`,
    )
    this.name = 'CoordinatorTimeoutError'
    this.operation = operation
  }
}

export function isCoordinatorRuntimeError(e: unknown): e is CoordinatorRuntimeError {
  return e instanceof CoordinatorRuntimeError
}
