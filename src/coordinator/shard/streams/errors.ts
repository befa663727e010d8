/** Kafka error codes used by the streams-group logic, and the error the handlers throw. */

export const ErrorCode = {
  NONE: 0,
  UNKNOWN_SERVER_ERROR: -1,
  ILLEGAL_GENERATION: 22,
  INVALID_GROUP_ID: 24,
  UNKNOWN_MEMBER_ID: 25,
  UNSUPPORTED_VERSION: 35,
  INVALID_REQUEST: 42,
  NON_EMPTY_GROUP: 68,
  GROUP_ID_NOT_FOUND: 69,
  GROUP_MAX_SIZE_REACHED: 81,
  FENCED_INSTANCE_ID: 82,
  FENCED_MEMBER_EPOCH: 110,
  UNRELEASED_INSTANCE_ID: 111,
  STALE_MEMBER_EPOCH: 113,
  STREAMS_INVALID_TOPOLOGY: 130,
  STREAMS_INVALID_TOPOLOGY_EPOCH: 131,
  STREAMS_TOPOLOGY_FENCED: 132,
} as const

/**
 * A failure that becomes an error response: a Kafka error code and the message the client sees
 * (null for errors that carry none, such as UNKNOWN_SERVER_ERROR from a failing assignor).
 */
export class StreamsGroupError extends Error {
  override name = 'StreamsGroupError'
  readonly errorCode: number
  readonly errorMessage: string | null
  constructor(errorCode: number, errorMessage: string | null, options?: { cause?: unknown }) {
    super(errorMessage ?? `error code ${errorCode}`, options)
    this.errorCode = errorCode
    this.errorMessage = errorMessage
  }
}

export const invalidRequest = (message: string): StreamsGroupError =>
  new StreamsGroupError(ErrorCode.INVALID_REQUEST, message)
export const invalidTopology = (message: string): StreamsGroupError =>
  new StreamsGroupError(ErrorCode.STREAMS_INVALID_TOPOLOGY, message)
