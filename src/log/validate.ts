/**
 * Append-time validation and rewriting of the batches of one Produce partition (data-plane.md §3),
 * in Kafka's order: framing (ProduceRequest.validateRecords), then per batch base offset, size,
 * CRC, codec (UnifiedLog.analyzeAndValidateRecords), then counts, control flag, sequence, records
 * (LogValidator), then recompression and the size checks after it. Producer-state checks (§5) come
 * later, at append time, because they need the offset the batch gets.
 *
 * Synchronous, no I/O, no clock (`now` is given). Uncompressed batches kept as they are get one
 * copy (none when the caller hands the bytes over) and a walk over their records that allocates nothing (every record must parse, timestamps
 * and keys are checked); compressed ones are decompressed to be checked and are rebuilt only when
 * the topic's codec differs or the inner offsets are not 0..n-1.
 */
import { ErrorCode } from '../protocol/errors.js'
import {
  type BatchHeader,
  BatchFormatError,
  batchBody,
  buildBatch,
  CODEC_NAMES,
  CompressionCodec,
  type Crc32c,
  codecOf,
  decodeRecords,
  encodeRecords,
  isControl,
  isCrcValid,
  isLogAppendTime,
  NO_TIMESTAMP,
  nextBatchEnd,
  RECORD_BATCH_OVERHEAD,
  readBatchHeader,
  setMaxTimestamp,
  TIMESTAMP_TYPE_MASK,
  VarReader,
} from './batch.js'
import { compress, DecompressionError, decompress } from './compression.js'
import type { LogConfig, RecordError } from './types.js'

export interface ValidationContext {
  readonly config: LogConfig
  readonly now: number
  /** "<topic>-<partition>", as Kafka names a partition in messages. */
  readonly topicPartition: string
  readonly produceVersion: number
  readonly origin: 'client' | 'coordinator'
  readonly crc32c: Crc32c
  /** Largest plaintext a compressed batch may inflate to. */
  readonly maxDecompressedBytes: number
  /** `records` may be rewritten in place (AppendOptions.recordsOwned); otherwise kept batches are copied. */
  readonly recordsOwned?: boolean
}

export interface ValidatedBatch {
  /**
   * The batch to store, base offset still 0 (set at append): a copy, or with `recordsOwned` a
   * batch kept as it is may be a view of `records` itself.
   */
  readonly bytes: Uint8Array
  readonly header: BatchHeader
}

export type ValidationResult =
  | { readonly ok: true; readonly batches: readonly ValidatedBatch[]; readonly logAppendTime: number }
  | {
      readonly ok: false
      readonly errorCode: number
      readonly errorMessage: string | null
      readonly recordErrors: readonly RecordError[]
      /** Kafka answers the log start offset for "generic" failures, -1 for the others (§3.1 notes). */
      readonly withLogStartOffset: boolean
    }

function fail(
  errorCode: number,
  withLogStartOffset: boolean,
  errorMessage: string | null = null,
  recordErrors: readonly RecordError[] = [],
): ValidationResult {
  return { ok: false, errorCode, errorMessage, recordErrors, withLogStartOffset }
}

const TARGET_CODEC: Readonly<Record<string, number>> = {
  uncompressed: CompressionCodec.none,
  gzip: CompressionCodec.gzip,
  snappy: CompressionCodec.snappy,
  lz4: CompressionCodec.lz4,
  zstd: CompressionCodec.zstd,
}

/** What one walk over a batch's records found. */
interface RecordScan {
  maxTimestamp: number
  consecutiveOffsets: boolean
  errors: { index: number; code: number; message: string }[]
}

function javaRecordString(offset: number, timestamp: number, keyLen: number, valueLen: number): string {
  return `DefaultRecord(offset=${offset}, timestamp=${timestamp}, key=${Math.max(keyLen, 0)} bytes, value=${Math.max(valueLen, 0)} bytes)`
}

/**
 * Walks `count` records of a plaintext body without allocating, checking each parses (Kafka's
 * DefaultRecord.readFrom), the compacted-topic key rule and the timestamp rules (LogValidator
 * validateRecord). Throws BatchFormatError('invalid') for a record that does not parse.
 */
function scanRecords(
  body: Uint8Array,
  h: BatchHeader,
  ctx: ValidationContext,
  compacted: boolean,
): RecordScan {
  const r = new VarReader(body)
  // One reader over each record in turn (its end the record's), so a record allocates nothing.
  const rec = new VarReader(body)
  const scan: RecordScan = {
    maxTimestamp: NO_TIMESTAMP,
    consecutiveOffsets: true,
    errors: [],
  }
  const createTime = ctx.config.messageTimestampType === 'CreateTime'
  const batchLogAppendTime = isLogAppendTime(h.attributes)
  const lo = ctx.now - ctx.config.messageTimestampBeforeMaxMs
  const hi = ctx.now + ctx.config.messageTimestampAfterMaxMs
  for (let i = 0; i < h.recordsCount; i++) {
    if (r.pos >= r.end)
      throw new BatchFormatError('invalid', 'Incorrect declared batch size, premature EOF reached')
    const length = r.readVarint()
    if (length < 0 || length > r.end - r.pos) {
      throw new BatchFormatError('invalid', `Invalid record size: expected ${length} bytes in record payload`)
    }
    const end = r.pos + length
    const body2 = rec
    body2.pos = r.pos
    body2.end = end
    body2.readInt8()
    const timestampDelta = body2.readVarlong()
    const offsetDelta = body2.readVarint()
    const keyLen = body2.readVarint()
    if (keyLen > 0) body2.advance(keyLen)
    const valueLen = body2.readVarint()
    if (valueLen > 0) body2.advance(valueLen)
    const headers = body2.readVarint()
    if (headers < 0 || headers > body2.end - body2.pos) {
      throw new BatchFormatError('invalid', `Found invalid number of record headers ${headers}`)
    }
    for (let j = 0; j < headers; j++) {
      const hk = body2.readVarint()
      if (hk < 0) throw new BatchFormatError('invalid', `Invalid negative header key size ${hk}`)
      body2.advance(hk)
      const hv = body2.readVarint()
      if (hv > 0) body2.advance(hv)
    }
    if (body2.pos !== end) {
      throw new BatchFormatError(
        'invalid',
        `Invalid record size: expected to read ${length} bytes in record payload, but instead read ${body2.pos - (end - length)}`,
      )
    }
    r.pos = end
    if (offsetDelta !== i) scan.consecutiveOffsets = false
    const timestamp = batchLogAppendTime ? h.maxTimestamp : h.baseTimestamp + timestampDelta
    const offset = h.baseOffset + offsetDelta
    if (compacted && keyLen < 0) {
      scan.errors.push({
        index: i,
        code: ErrorCode.INVALID_RECORD,
        message: `Compacted topic cannot accept message without key in topic partition ${ctx.topicPartition}.`,
      })
    } else if (createTime && timestamp !== NO_TIMESTAMP) {
      if (timestamp < lo || timestamp > hi) {
        scan.errors.push({
          index: i,
          code: ErrorCode.INVALID_TIMESTAMP,
          message: `Timestamp ${timestamp} of message with offset ${offset} is out of range. The timestamp should be within [${lo}, ${hi}]`,
        })
      }
    } else if (batchLogAppendTime) {
      scan.errors.push({
        index: i,
        code: ErrorCode.INVALID_TIMESTAMP,
        message: `Invalid timestamp type in message ${javaRecordString(offset, timestamp, keyLen, valueLen)}. Producer should not set timestamp type to LogAppendTime.`,
      })
    }
    if (timestamp > scan.maxTimestamp) scan.maxTimestamp = timestamp
  }
  if (r.pos !== r.end)
    throw new BatchFormatError('invalid', 'Incorrect declared batch size, records still remaining in file')
  return scan
}

function recordErrorsResult(errors: RecordScan['errors']): ValidationResult {
  const recordErrors = errors.map((e) => ({ batchIndex: e.index, message: e.message }))
  if (errors.some((e) => e.code === ErrorCode.INVALID_TIMESTAMP)) {
    return fail(
      ErrorCode.INVALID_TIMESTAMP,
      true,
      'One or more records have been rejected due to invalid timestamp',
      recordErrors,
    )
  }
  const shown = recordErrors
    .slice(0, 3)
    .map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`)
    .join(', ')
  return fail(
    ErrorCode.INVALID_RECORD,
    true,
    `One or more records have been rejected due to ${errors.length} record errors in total, and only showing the first three errors at most: [${shown}]`,
    recordErrors,
  )
}

/**
 * Validates the records of one Produce partition and returns the batches to append, or the error
 * Kafka answers. `records` is not modified unless `ctx.recordsOwned` (then a batch kept as it is
 * may get its max timestamp rewritten in place, and is returned as a view of `records`).
 */
export function validateRecords(records: Uint8Array, ctx: ValidationContext): ValidationResult {
  // 1. Framing (§3.1 rows 5-7, 6a).
  const positions: number[] = []
  let pos = 0
  try {
    for (;;) {
      const next = nextBatchEnd(records, pos)
      if (next === 'partial') break
      positions.push(pos)
      pos = next
      if (ctx.origin === 'client' && positions.length > 1) break
    }
  } catch (e) {
    if (e instanceof BatchFormatError) return fail(ErrorCode.CORRUPT_MESSAGE, false)
    throw e
  }
  if (positions.length === 0) {
    return fail(ErrorCode.INVALID_RECORD, false, null)
  }
  if (records[positions[0] + 16] !== 2) return fail(ErrorCode.INVALID_RECORD, false)
  if (ctx.origin === 'client' && positions.length > 1) return fail(ErrorCode.INVALID_RECORD, false)

  const out: ValidatedBatch[] = []
  const compacted = ctx.config.cleanupPolicy.includes('compact')
  const logAppendTimeTopic = ctx.config.messageTimestampType === 'LogAppendTime'
  const target = ctx.config.compressionType
  let total = 0
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i]
    const end = i + 1 < positions.length ? positions[i + 1] : pos
    if (records[p + 16] !== 2 || end - p < RECORD_BATCH_OVERHEAD)
      return fail(ErrorCode.CORRUPT_MESSAGE, false)
    const h0 = readBatchHeader(records, p)
    const size = end - p
    // 2. UnifiedLog.analyzeAndValidateRecords: base offset, size, CRC, codec.
    if (ctx.origin === 'client' && h0.baseOffset !== 0) return fail(ErrorCode.INVALID_RECORD, true)
    if (size > ctx.config.maxMessageBytes) return fail(ErrorCode.MESSAGE_TOO_LARGE, false)
    if (!isCrcValid(records, p, ctx.crc32c)) return fail(ErrorCode.CORRUPT_MESSAGE, false)
    const sourceCodec = codecOf(h0.attributes)
    if (sourceCodec > CompressionCodec.zstd) return fail(ErrorCode.UNKNOWN_SERVER_ERROR, false)
    // 3. LogValidator.validateBatch (client batches only).
    if (ctx.origin === 'client') {
      if (h0.lastOffsetDelta + 1 <= 0 || h0.recordsCount <= 0 || h0.lastOffsetDelta + 1 !== h0.recordsCount) {
        return fail(ErrorCode.INVALID_RECORD, true)
      }
      if (isControl(h0.attributes)) return fail(ErrorCode.INVALID_RECORD, true)
      if (h0.producerId >= 0 && h0.baseSequence < 0) return fail(ErrorCode.INVALID_RECORD, true)
    }
    // 4. Records: decompress when needed, walk them, collect record errors.
    const stored = records.subarray(p, end)
    let plain: Uint8Array
    try {
      plain =
        sourceCodec === CompressionCodec.none
          ? batchBody(stored)
          : decompress(sourceCodec, batchBody(stored), ctx.maxDecompressedBytes)
    } catch (e) {
      if (e instanceof DecompressionError) {
        return fail(e.truncated ? ErrorCode.INVALID_RECORD : ErrorCode.UNKNOWN_SERVER_ERROR, e.truncated)
      }
      throw e
    }
    let scan: RecordScan
    try {
      scan = scanRecords(plain, h0, ctx, compacted && !isControl(h0.attributes))
    } catch (e) {
      if (e instanceof BatchFormatError) return fail(ErrorCode.INVALID_RECORD, true)
      throw e
    }
    if (scan.errors.length > 0) return recordErrorsResult(scan.errors)

    const targetCodec = target === 'producer' || isControl(h0.attributes) ? sourceCodec : TARGET_CODEC[target]
    const inPlace =
      targetCodec === sourceCodec && (sourceCodec === CompressionCodec.none || scan.consecutiveOffsets)
    let bytes: Uint8Array
    let header: BatchHeader
    if (inPlace) {
      bytes = ctx.recordsOwned === true ? stored : stored.slice()
      header = h0
      if (logAppendTimeTopic) {
        setMaxTimestamp(bytes, 0, ctx.now, true, ctx.crc32c)
        header = readBatchHeader(bytes, 0)
      } else if (scan.maxTimestamp !== h0.maxTimestamp || isLogAppendTime(h0.attributes)) {
        setMaxTimestamp(bytes, 0, scan.maxTimestamp, false, ctx.crc32c)
        header = readBatchHeader(bytes, 0)
      }
    } else {
      // 5. Rebuild with the target codec: same producer fields, offsets 0..n-1, timestamps kept.
      const recs = decodeRecords(plain, h0.recordsCount)
      const timestamps = recs.map((r) => h0.baseTimestamp + r.timestampDelta)
      const baseTimestamp = timestamps.length > 0 ? timestamps[0] : NO_TIMESTAMP
      const body = encodeRecords(
        recs.map((r, i) => ({
          timestampDelta: timestamps[i] - baseTimestamp,
          offsetDelta: i,
          key: r.key,
          value: r.value,
          headers: r.headers,
        })),
      )
      let maxTs = NO_TIMESTAMP
      for (const t of timestamps) if (t > maxTs) maxTs = t
      const compressed = compress(targetCodec, body, {
        gzip: ctx.config.compressionGzipLevel,
        zstd: ctx.config.compressionZstdLevel,
      })
      const attributes =
        (h0.attributes & ~0x07 & ~TIMESTAMP_TYPE_MASK) |
        targetCodec |
        (logAppendTimeTopic ? TIMESTAMP_TYPE_MASK : 0)
      bytes = buildBatch(
        {
          attributes,
          lastOffsetDelta: recs.length - 1,
          baseTimestamp,
          maxTimestamp: logAppendTimeTopic ? ctx.now : maxTs,
          producerId: h0.producerId,
          producerEpoch: h0.producerEpoch,
          baseSequence: h0.baseSequence,
          recordsCount: recs.length,
        },
        compressed,
        ctx.crc32c,
      )
      header = readBatchHeader(bytes, 0)
      if (bytes.byteLength > ctx.config.maxMessageBytes) return fail(ErrorCode.MESSAGE_TOO_LARGE, false)
    }
    total += bytes.byteLength
    out.push({ bytes, header })
  }
  if (total > ctx.config.segmentBytes) return fail(ErrorCode.RECORD_LIST_TOO_LARGE, false)
  return { ok: true, batches: out, logAppendTime: logAppendTimeTopic ? ctx.now : -1 }
}

/** The codec name of a batch's attributes (for logs and docs). */
export function codecName(attributes: number): string {
  return CODEC_NAMES[codecOf(attributes)] ?? `unknown(${codecOf(attributes)})`
}
