/**
 * The shard's error helpers. A shard answers a request with a Kafka error by throwing the
 * protocol's ApiError (re-exported here, where the shard code has always found it).
 */
import { ApiError } from '../../protocol/api-error.js'
import { ErrorCode } from '../../protocol/errors.js'

export { ApiError, invalidRequest } from '../../protocol/api-error.js'

export const invalidTopology = (message: string): ApiError =>
  new ApiError(ErrorCode.STREAMS_INVALID_TOPOLOGY, message)

/** Runs a check; its ApiError's code, or NONE when it passes (anything else is rethrown). */
export function errorCodeOf(check: () => void): number {
  try {
    check()
    return ErrorCode.NONE
  } catch (e) {
    if (e instanceof ApiError) return e.errorCode
    throw e
  }
}
