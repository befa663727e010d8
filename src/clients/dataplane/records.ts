/**
 * Record batches as clients write and read them, on the log's sans-io v2 batch codec: one batch per
 * partition from a list of records (optionally compressed), and the records of the batches a Fetch
 * returned (control batches skipped, compressed bodies inflated, a truncated trailing batch ignored).
 */
import {
  buildBatch,
  batchBody,
  type CompressionCodecName,
  CompressionCodec,
  codecOf,
  decodeRecords,
  encodeRecords,
  isControl,
  readBatchHeader,
  recordTimestamp,
  splitBatches,
} from '../../log/batch.js'
import { compress, crc32c, decompress } from '../../log/compression.js'

export type { CompressionCodecName } from '../../log/batch.js'

export interface RecordHeader {
  readonly key: string
  readonly value: Uint8Array | null
}

/** A record to write. A missing timestamp means now. */
export interface OutgoingRecord {
  readonly key: Uint8Array | null
  readonly value: Uint8Array | null
  readonly headers?: readonly RecordHeader[]
  readonly timestamp?: number
}

/** A record read back, at its offset. */
export interface IncomingRecord {
  readonly offset: number
  readonly timestamp: number
  readonly key: Uint8Array | null
  readonly value: Uint8Array | null
  readonly headers: readonly RecordHeader[]
}

/** Largest plaintext a fetched batch may inflate to (Kafka's consumers hold a whole batch too). */
const MAX_BATCH_PLAINTEXT = 64 * 1024 * 1024

/** One v2 batch of `records` (no producer id: not idempotent), compressed with `codec`. */
export function encodeBatch(
  records: readonly OutgoingRecord[],
  codec: CompressionCodecName = 'none',
  now: number = Date.now(),
): Uint8Array {
  if (records.length === 0) throw new RangeError('a batch holds at least one record')
  const timestamps = records.map((r) => r.timestamp ?? now)
  const base = timestamps[0]!
  const body = encodeRecords(
    records.map((r, i) => ({
      timestampDelta: timestamps[i]! - base,
      offsetDelta: i,
      key: r.key,
      value: r.value,
      headers: r.headers,
    })),
  )
  const id = CompressionCodec[codec]
  return buildBatch(
    {
      attributes: id,
      lastOffsetDelta: records.length - 1,
      baseTimestamp: base,
      maxTimestamp: Math.max(...timestamps),
      recordsCount: records.length,
    },
    compress(id, body),
    crc32c,
  )
}

/**
 * The records at or after `fromOffset` in a Fetch answer's records bytes, and the offset to fetch
 * next (after the last whole batch; `fromOffset` when there was none).
 */
export function decodeFetchedRecords(
  bytes: Uint8Array | null,
  fromOffset: number,
): { readonly records: IncomingRecord[]; readonly nextOffset: number } {
  const records: IncomingRecord[] = []
  let nextOffset = fromOffset
  if (bytes === null || bytes.byteLength === 0) return { records, nextOffset }
  for (const pos of splitBatches(bytes).positions) {
    const h = readBatchHeader(bytes, pos)
    const last = h.baseOffset + h.lastOffsetDelta
    if (last + 1 > nextOffset) nextOffset = last + 1
    if (h.magic !== 2 || isControl(h.attributes) || last < fromOffset) continue
    const plain = decompress(codecOf(h.attributes), batchBody(bytes, pos), MAX_BATCH_PLAINTEXT)
    for (const r of decodeRecords(plain, h.recordsCount)) {
      const offset = h.baseOffset + r.offsetDelta
      if (offset < fromOffset) continue
      records.push({
        offset,
        timestamp: recordTimestamp(h, r),
        key: r.key,
        value: r.value,
        headers: r.headers,
      })
    }
  }
  return { records, nextOffset }
}
