/**
 * The transaction coordinator's records: one `TransactionLog` record per transition (Kafka's
 * `TransactionLog.valueToBytes`), a tombstone when an id expires, and replay back into metadata
 * (Kafka's `TransactionLog.read`).
 */
import { LocalError } from '../../errors.js'
import {
  decodeTransactionLogRecord,
  encodeTransactionLogRecord,
  type TransactionLogRecord,
  UnknownRecordValueVersionError,
} from '../../protocol/transaction-log.js'
import { UnknownRecordTypeError } from '../../protocol/records.js'
import type { TransactionLogValue } from '../../protocol/generated/records/TransactionLogValue.js'
import type { RecordSerde } from '../runtime/types.js'
import {
  NO_PARTITIONS,
  NO_PRODUCER_EPOCH,
  type TopicPartitions,
  TransactionState,
  type TransactionMetadata,
  TRANSACTION_STATE_NAMES,
  topicPartitionList,
} from './state.js'

/**
 * A record as the shard produces and replays it: Kafka's key and value, plus the one fact of a
 * transition Kafka keeps in memory only, `lastProducerEpoch`. The serde writes Kafka's bytes alone,
 * so a record read back from storage has no `lastProducerEpoch` and replays to -1, exactly as
 * Kafka's metadata after loading; replaying the records an operation returned gives the same state
 * as the live transition.
 */
export type TxnRecord = TransactionLogRecord & { readonly lastProducerEpoch?: number }

/** The value version `transaction.version` writes: 1 from level 1, else 0 (Kafka's `transactionLogValueVersion`). */
export function transactionLogValueVersion(transactionVersionLevel: number): number {
  return transactionVersionLevel >= 1 ? 1 : 0
}

/**
 * The record of a transition. Partitions are null in Empty and otherwise grouped by topic. Value
 * version 0 has no PreviousProducerId, NextProducerId or ClientTransactionVersion: they are left at
 * their defaults (Kafka sets the first two only from version 1; a TV2 client with the feature below 1
 * cannot happen in Kafka, whose ApiVersions then caps the TV2 request versions).
 */
export function transactionRecord(md: TransactionMetadata, valueVersion: number): TxnRecord {
  if (md.state === TransactionState.DEAD || md.state === TransactionState.PREPARE_EPOCH_FENCE) {
    throw new Error(
      `${TRANSACTION_STATE_NAMES[md.state]} is never written (transactional id ${md.transactionalId})`,
    )
  }
  const partitions =
    md.state === TransactionState.EMPTY
      ? null
      : topicPartitionList(md.topicPartitions).map((t) => ({ topic: t.topic, partitionIds: t.partitions }))
  const v1 = valueVersion >= 1
  const value: TransactionLogValue = {
    producerId: md.producerId,
    previousProducerId: v1 ? md.prevProducerId : -1n,
    nextProducerId: v1 ? md.nextProducerId : -1n,
    producerEpoch: md.producerEpoch,
    nextProducerEpoch: -1,
    transactionTimeoutMs: md.txnTimeoutMs,
    transactionStatus: md.state,
    transactionPartitions: partitions,
    transactionLastUpdateTimestampMs: BigInt(md.txnLastUpdateTimestamp),
    transactionStartTimestampMs: BigInt(md.txnStartTimestamp),
    clientTransactionVersion: v1 ? md.clientTransactionVersion : 0,
  }
  return {
    key: { transactionalId: md.transactionalId },
    value,
    valueVersion,
    lastProducerEpoch: md.lastProducerEpoch,
  }
}

/** The tombstone of an expired transactional id. */
export function transactionTombstone(transactionalId: string): TxnRecord {
  return { key: { transactionalId }, value: null }
}

/** The metadata a record's value describes (Kafka's `TransactionLog.read`). */
export function metadataFromRecord(transactionalId: string, rec: TxnRecord): TransactionMetadata {
  const v = rec.value!
  const status = v.transactionStatus
  if (!(status >= 0 && status <= 7)) {
    throw new LocalError(
      'TXN_UNKNOWN_STATUS',
      `Unknown transaction state id ${status} from the transaction status message (transactional id ${transactionalId})`,
    )
  }
  const state = status as TransactionState
  let topicPartitions: TopicPartitions = NO_PARTITIONS
  if (
    state !== TransactionState.EMPTY &&
    v.transactionPartitions !== null &&
    v.transactionPartitions.length > 0
  ) {
    const m = new Map<string, Set<number>>()
    for (const t of v.transactionPartitions) {
      if (t.partitionIds.length === 0) continue
      let set = m.get(t.topic)
      if (set === undefined) m.set(t.topic, (set = new Set()))
      for (const p of t.partitionIds) set.add(p)
    }
    topicPartitions = m
  }
  return {
    transactionalId,
    producerId: v.producerId,
    prevProducerId: v.previousProducerId,
    nextProducerId: v.nextProducerId,
    producerEpoch: v.producerEpoch,
    lastProducerEpoch: rec.lastProducerEpoch ?? NO_PRODUCER_EPOCH,
    txnTimeoutMs: v.transactionTimeoutMs,
    state,
    topicPartitions,
    txnStartTimestamp: Number(v.transactionStartTimestampMs),
    txnLastUpdateTimestamp: Number(v.transactionLastUpdateTimestampMs),
    clientTransactionVersion: v.clientTransactionVersion,
  }
}

/**
 * Transaction log records in the record store: Kafka's key/value bytes. A key type or value version
 * this codec does not know is skipped when loading, as Kafka's loader skips it ("It could be a left
 * over from an aborted upgrade").
 */
export const transactionRecordSerde: RecordSerde<TxnRecord> = {
  serialize: (record) => encodeTransactionLogRecord(record),
  deserialize: (stored) => {
    try {
      return decodeTransactionLogRecord(stored.key, stored.value)
    } catch (e) {
      if (e instanceof UnknownRecordTypeError || e instanceof UnknownRecordValueVersionError) return undefined
      throw e
    }
  },
}
