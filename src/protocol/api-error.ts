/**
 * The one error thrown to answer a request with a Kafka error (Kafka's ApiException): a code of the
 * protocol's error table and the message the client sees (null when the answer carries none).
 * Shards, services and handlers throw it; whoever answers the request catches it once (a shard's
 * handler for per-group or per-partition rows, the service for a whole request, the router for a
 * request a handler cannot serve) and puts the code, and the message where the response has one,
 * on the wire.
 */
import { ErrorCode } from './errors.js'

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
