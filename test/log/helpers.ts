// Builders of v2 batches as producers send them, for the log's tests.
import {
  buildBatch,
  CompressionCodec,
  encodeRecords,
  type RecordHeader,
  TRANSACTIONAL_FLAG_MASK,
} from '../../src/log/batch.js'
import { compress, crc32c } from '../../src/log/compression.js'

export const enc = new TextEncoder()
export const dec = new TextDecoder()

export interface TestRecord {
  readonly key?: string | null
  readonly value?: string | null
  readonly timestamp?: number
  readonly headers?: readonly RecordHeader[]
}

export interface TestBatchOptions {
  readonly producerId?: number
  readonly producerEpoch?: number
  readonly baseSequence?: number
  readonly codec?: number
  readonly transactional?: boolean
  readonly timestamp?: number
  readonly attributes?: number
}

/** A batch as a producer sends it (baseOffset 0, leader epoch -1). */
export function batchOf(records: readonly TestRecord[], o: TestBatchOptions = {}): Uint8Array {
  const base = records[0]?.timestamp ?? o.timestamp ?? 1700000000000
  const timestamps = records.map((r) => r.timestamp ?? o.timestamp ?? 1700000000000)
  const body = encodeRecords(
    records.map((r, i) => ({
      timestampDelta: timestamps[i] - base,
      offsetDelta: i,
      key:
        r.key === undefined || r.key === null
          ? r.key === null
            ? null
            : enc.encode(`k${i}`)
          : enc.encode(r.key),
      value: r.value === null ? null : enc.encode(r.value ?? `v${i}`),
      headers: r.headers ?? [],
    })),
  )
  const codec = o.codec ?? CompressionCodec.none
  const attributes = (o.attributes ?? 0) | codec | (o.transactional ? TRANSACTIONAL_FLAG_MASK : 0)
  return buildBatch(
    {
      attributes,
      lastOffsetDelta: records.length - 1,
      baseTimestamp: base,
      maxTimestamp: Math.max(...timestamps),
      producerId: o.producerId ?? -1,
      producerEpoch: o.producerEpoch ?? -1,
      baseSequence: o.baseSequence ?? -1,
      recordsCount: records.length,
    },
    compress(codec, body),
    crc32c,
  )
}

/** `n` records with keys k0.. and values v0.. */
export function records(n: number, prefix = ''): TestRecord[] {
  return Array.from({ length: n }, (_, i) => ({ key: `${prefix}k${i}`, value: `${prefix}v${i}` }))
}

export function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')
}

export function fromHex(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s.replace(/[^0-9a-f]/gi, ''), 'hex'))
}

/** A transaction marker as the transaction coordinator writes it (transactions.md §8.2). */
export function markerOf(
  producerId: number,
  producerEpoch: number,
  commit: boolean,
  coordinatorEpoch: number,
  timestamp = 1700000000000,
): Uint8Array {
  const key = Uint8Array.of(0, 0, 0, commit ? 1 : 0)
  const value = new Uint8Array(6)
  new DataView(value.buffer).setInt32(2, coordinatorEpoch)
  return buildBatch(
    {
      attributes: 0x30,
      lastOffsetDelta: 0,
      baseTimestamp: timestamp,
      maxTimestamp: timestamp,
      producerId,
      producerEpoch,
      baseSequence: -1,
      recordsCount: 1,
    },
    encodeRecords([{ timestampDelta: 0, offsetDelta: 0, key, value }]),
    crc32c,
  )
}
