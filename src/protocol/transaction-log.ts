/**
 * Transaction log record framing, as Kafka's `TransactionLog` does it for `__transaction_state`:
 *   key   = int16 record type id 0 + TransactionLogKey at version 0 (not flexible)
 *   value = int16 value version (0, or 1 from `transaction.version` 1) + TransactionLogValue at that
 *           version (v1 is flexible, with tagged fields); a null value is a tombstone.
 * The framing is the group coordinator's, but the type ids are a namespace of their own (type id 0
 * is LegacyOffsetCommitKey in `__consumer_offsets`), so these records have their own codec.
 */
import {
  readTransactionLogKey,
  type TransactionLogKey,
  writeTransactionLogKey,
} from './generated/records/TransactionLogKey.js'
import {
  readTransactionLogValue,
  type TransactionLogValue,
  TransactionLogValueMeta,
  writeTransactionLogValue,
} from './generated/records/TransactionLogValue.js'
import { Reader } from './reader.js'
import { type EncodedCoordinatorRecord, UnknownRecordTypeError } from './records.js'
import { Writer } from './writer.js'

/** The record type id of TransactionLogKey (Kafka's `CoordinatorRecordType.TRANSACTION_LOG`). */
export const TRANSACTION_LOG_RECORD_TYPE = 0

/** One record of the transaction log: a transactional id and its state, or a tombstone (null value). */
export interface TransactionLogRecord {
  readonly key: TransactionLogKey
  /** null for a tombstone (the transactional id expired) */
  readonly value: TransactionLogValue | null
  /** The value version; absent: the highest one (1). */
  readonly valueVersion?: number
}

/**
 * A value whose version this codec does not know. Kafka's loader logs it and skips the record ("It
 * could be a left over from an aborted upgrade"), as it does for an unknown key type id.
 */
export class UnknownRecordValueVersionError extends Error {
  override name = 'UnknownRecordValueVersionError'
  readonly version: number
  constructor(version: number) {
    super(`unknown transaction log value version ${version}`)
    this.version = version
  }
}

/** Encodes a record; the value is written at `rec.valueVersion`, or version 1. */
export function encodeTransactionLogRecord(rec: TransactionLogRecord): EncodedCoordinatorRecord {
  const kw = new Writer(32)
  kw.writeInt16(TRANSACTION_LOG_RECORD_TYPE)
  writeTransactionLogKey(kw, rec.key, 0)
  if (rec.value === null) return { key: kw.finish(), value: null }
  const version = rec.valueVersion ?? TransactionLogValueMeta.maxVersion
  if (version < TransactionLogValueMeta.minVersion || version > TransactionLogValueMeta.maxVersion)
    throw new RangeError(`TransactionLogValue version ${version} is outside 0-1`)
  const vw = new Writer(96)
  vw.writeInt16(version)
  writeTransactionLogValue(vw, rec.value, version)
  return { key: kw.finish(), value: vw.finish() }
}

/**
 * Decodes a record. Throws UnknownRecordTypeError for a key type id other than 0 and
 * UnknownRecordValueVersionError for a value version other than 0-1 (a loader skips both), and
 * the codec's DecodeError for malformed bytes.
 */
export function decodeTransactionLogRecord(key: Uint8Array, value: Uint8Array | null): TransactionLogRecord {
  const kr = new Reader(key)
  const typeId = kr.readInt16()
  if (typeId !== TRANSACTION_LOG_RECORD_TYPE) throw new UnknownRecordTypeError(typeId)
  const k = readTransactionLogKey(kr, 0)
  kr.expectEnd('TransactionLogKey')
  if (value === null) return { key: k, value: null }
  const vr = new Reader(value)
  const version = vr.readInt16()
  if (version < TransactionLogValueMeta.minVersion || version > TransactionLogValueMeta.maxVersion)
    throw new UnknownRecordValueVersionError(version)
  const v = readTransactionLogValue(vr, version)
  vr.expectEnd('TransactionLogValue')
  return { key: k, value: v, valueVersion: version }
}
