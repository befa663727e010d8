/**
 * The one place where failures of coordinator operations become Kafka error codes (Kafka's
 * CoordinatorOperationExceptionHelper):
 *
 * - a shard's ApiError is the answer itself: its code (the caller puts its message on the wire);
 * - a write whose records could not be made durable, a shard that stopped or is not hosted: the
 *   runtime error names the Kafka error (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS);
 * - a write that did not complete within `offsets.commit.timeout.ms`: COORDINATOR_NOT_AVAILABLE,
 *   as Kafka maps REQUEST_TIMED_OUT;
 * - anything else is a bug: logged once (an error seen twice is not logged again) and answered
 *   UNKNOWN_SERVER_ERROR.
 */
import { ErrorCode } from '../../protocol/errors.js'
import { CoordinatorRuntimeError } from '../runtime/errors.js'
import type { RuntimeLogger } from '../runtime/types.js'
import { ApiError } from '../../protocol/api-error.js'

const logged = new WeakSet<object>()

export function toKafkaErrorCode(err: unknown, operation: string, log: RuntimeLogger): number {
  if (err instanceof ApiError) return err.errorCode
  if (err instanceof CoordinatorRuntimeError) {
    if (err.code === 'COORDINATOR_INVALID_ARGUMENT') return unexpected(err, operation, log)
    return ErrorCode[err.kafkaError]
  }
  return unexpected(err, operation, log)
}

function unexpected(err: unknown, operation: string, log: RuntimeLogger): number {
  const key = err !== null && typeof err === 'object' ? err : undefined
  if (key === undefined || !logged.has(key)) {
    if (key !== undefined) logged.add(key)
    log.error({ err, operation }, `Operation ${operation} hit an unexpected exception`)
  }
  return ErrorCode.UNKNOWN_SERVER_ERROR
}
