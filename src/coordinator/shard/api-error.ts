/**
 * The one error a shard throws to answer a request with a Kafka error (Kafka's ApiException): a
 * code of the protocol's error table and the message the client sees (null when the answer carries
 * none). Whoever answers the request catches it once (the shard's handler for per-group or
 * per-partition rows, the service for a whole request) and puts both on the wire.
 */
import { ErrorCode } from '../../protocol/errors.js'

export class ApiError extends Error {
  override name = 'ApiError'
  /** A code of the protocol's ErrorCode table. */
  readonly errorCode: number
  /** What the response's ErrorMessage carries (null: none). */
  readonly errorMessage: string | null

  constructor(errorCode: number, errorMessage: string | null, options?: { cause?: unknown }) {
    super(errorMessage ?? `error code ${errorCode}`, options)
    this.errorCode = errorCode
    this.errorMessage = errorMessage
  }
}

export const invalidRequest = (message: string): ApiError => new ApiError(ErrorCode.INVALID_REQUEST, message)
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
