/** `topograph/protocol`: the sans-io Kafka wire codec. */
export { Reader, type TaggedField } from './reader.js'
export { Writer, uvarintSize } from './writer.js'
export {
  DecodeError,
  type DecodeErrorCode,
  EncodeError,
  type EncodeErrorCode,
  UnsupportedVersionError,
} from './errors-codec.js'
export {
  ERRORS,
  ErrorCode,
  type ErrorInfo,
  type ErrorName,
  errorInfo,
  errorName,
  isKnownErrorCode,
} from './errors.js'
export * from './frames.js'
export * from './records.js'
export * from './transaction-log.js'
export { deepEqual } from './internal.js'
export * from './generated/index.js'
