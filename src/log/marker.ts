/**
 * Transaction markers (transactions.md §8.2): the control batch a transaction coordinator writes to
 * each partition of a transaction it ends. The coordinator builds one marker per transaction and
 * hands it to every partition (`PartitionLog.appendMarker`); the bytes are the same for all of
 * them, since the base offset and the leader epoch each partition sets are outside the CRC.
 */
import { buildBatch, type Crc32c } from './batch.js'

/** Attributes of a marker: transactional and control, no compression, CreateTime. */
export const TXN_MARKER_ATTRIBUTES = 0x30

/** Control record types of the marker's key (ControlRecordType). */
export const ControlRecordType = Object.freeze({ ABORT: 0, COMMIT: 1 } as const)

/** One transaction's marker, built once and appended to each of its partitions. */
export interface TxnMarker {
  readonly producerId: number
  readonly producerEpoch: number
  readonly committed: boolean
  readonly coordinatorEpoch: number
  /** Base and max timestamp of the batch: the coordinator's clock when it built the marker. */
  readonly timestamp: number
  /** The control batch (base offset 0, no leader epoch); never changed: a partition stores a copy. */
  readonly bytes: Uint8Array
}

/**
 * Builds a marker: one control record, key {version 0, type}, value {version 0, coordinator
 * epoch}, base sequence -1.
 */
export function txnMarker(
  fields: {
    readonly producerId: number
    readonly producerEpoch: number
    readonly committed: boolean
    readonly coordinatorEpoch: number
    readonly timestamp: number
  },
  crc32c: Crc32c,
): TxnMarker {
  // The one record, written out: length 16 (varint 0x20), attributes 0, timestamp and offset
  // deltas 0, key length 4 (0x08), key {int16 0, int16 type}, value length 6 (0x0c), value
  // {int16 0, int32 coordinator epoch}, no headers.
  const record = Uint8Array.of(0x20, 0, 0, 0, 0x08, 0, 0, 0, 0, 0x0c, 0, 0, 0, 0, 0, 0, 0)
  record[8] = fields.committed ? ControlRecordType.COMMIT : ControlRecordType.ABORT
  new DataView(record.buffer).setInt32(12, fields.coordinatorEpoch)
  const bytes = buildBatch(
    {
      attributes: TXN_MARKER_ATTRIBUTES,
      lastOffsetDelta: 0,
      baseTimestamp: fields.timestamp,
      maxTimestamp: fields.timestamp,
      producerId: fields.producerId,
      producerEpoch: fields.producerEpoch,
      baseSequence: -1,
      recordsCount: 1,
    },
    record,
    crc32c,
  )
  return {
    producerId: fields.producerId,
    producerEpoch: fields.producerEpoch,
    committed: fields.committed,
    coordinatorEpoch: fields.coordinatorEpoch,
    timestamp: fields.timestamp,
    bytes,
  }
}
