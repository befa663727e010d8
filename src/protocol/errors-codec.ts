/**
 * Typed errors raised by the codec. `DecodeError` is the only error a reader throws for bad input;
 * `UnsupportedVersionError` and `EncodeError` are the only errors a writer throws for bad values.
 */

export type DecodeErrorCode =
  | 'TRUNCATED'
  | 'BAD_VARINT'
  | 'NEGATIVE_LENGTH'
  | 'LENGTH_EXCEEDS_REMAINING'
  | 'UNEXPECTED_NULL'
  | 'BAD_TAGGED_FIELD'
  | 'TRAILING_BYTES'
  | 'INVALID_VALUE'

/** Bad input bytes: the `offset` is the byte position (relative to the reader's start) where decoding failed. */
export class DecodeError extends Error {
  override name = 'DecodeError'
  readonly code: DecodeErrorCode
  readonly offset: number
  constructor(code: DecodeErrorCode, offset: number, message: string) {
    super(`${message} (at byte ${offset})`)
    this.code = code
    this.offset = offset
  }
}

/** A non-default value in a non-ignorable field that the target version does not have (Kafka's UnsupportedVersionException). */
export class UnsupportedVersionError extends Error {
  override name = 'UnsupportedVersionError'
  readonly messageName: string
  readonly field: string
  readonly version: number
  constructor(messageName: string, field: string, version: number, message?: string) {
    super(message ?? `Attempted to write a non-default ${field} at version ${version} of ${messageName}`)
    this.messageName = messageName
    this.field = field
    this.version = version
  }
}

export type EncodeErrorCode = 'NULL_NOT_ALLOWED' | 'VALUE_OUT_OF_RANGE' | 'INVALID_UUID' | 'TOO_LONG'

/** A value that cannot be encoded (null where the version forbids it, a string too long for int16, …). */
export class EncodeError extends Error {
  override name = 'EncodeError'
  readonly code: EncodeErrorCode
  constructor(code: EncodeErrorCode, message: string) {
    super(message)
    this.code = code
  }
}
