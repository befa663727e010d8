/** A transaction coordinator shard driven as the runtime drives it, with a log of its records. */
import assert from 'node:assert/strict'
import {
  type TransactionCoordinatorShardOptions,
  type TransactionMetadata,
  TransactionCoordinatorShard,
  topicPartitionList,
  transactionRecordSerde,
  type TxnRecord,
  type TxnResult,
} from '../../../src/coordinator/txn/index.js'

/** Producer ids 1000, 1001, …; `exhausted` makes the next calls return null. */
export class TestProducerIds {
  next = 1000n
  exhausted = false
  generateProducerId(): bigint | null {
    if (this.exhausted) return null
    return this.next++
  }
}

export class TxnHarness {
  readonly ids = new TestProducerIds()
  readonly log: TxnRecord[] = []
  level = 2
  shard: TransactionCoordinatorShard
  readonly #options: Omit<TransactionCoordinatorShardOptions, 'producerIds' | 'transactionVersionLevel'>

  constructor(
    options: Omit<TransactionCoordinatorShardOptions, 'producerIds' | 'transactionVersionLevel'> = {},
  ) {
    this.#options = options
    this.shard = this.newShard()
  }

  newShard(): TransactionCoordinatorShard {
    return new TransactionCoordinatorShard({
      ...this.#options,
      producerIds: this.ids,
      transactionVersionLevel: () => this.level,
    })
  }

  /** Appends the records (to the log) and replays them, as the runtime does after a durable append. */
  apply<T>(r: TxnResult<T>): T {
    for (const rec of r.records) {
      this.log.push(rec)
      this.shard.replay(rec)
    }
    return r.response
  }

  /**
   * Replaces the shard with one loaded from the log's stored bytes (what a restart reads); the log
   * keeps the records as read back.
   */
  reload(): TransactionCoordinatorShard {
    const shard = this.newShard()
    for (let i = 0; i < this.log.length; i++) {
      const stored = transactionRecordSerde.serialize(this.log[i]!)
      const back = transactionRecordSerde.deserialize(stored)
      assert.ok(back !== undefined)
      this.log[i] = back
      shard.replay(back)
    }
    this.shard = shard
    return shard
  }

  /** A fresh shard that replayed the log's records as they are in memory. */
  replayed(): TransactionCoordinatorShard {
    const shard = this.newShard()
    for (const rec of this.log) shard.replay(rec)
    return shard
  }

  /** Writes a record directly (to set up a state no short request sequence reaches). */
  seed(md: TransactionMetadata): void {
    const rec: TxnRecord = {
      key: { transactionalId: md.transactionalId },
      value: {
        producerId: md.producerId,
        previousProducerId: md.prevProducerId,
        nextProducerId: md.nextProducerId,
        producerEpoch: md.producerEpoch,
        nextProducerEpoch: -1,
        transactionTimeoutMs: md.txnTimeoutMs,
        transactionStatus: md.state,
        transactionPartitions:
          md.state === 0
            ? null
            : topicPartitionList(md.topicPartitions).map((t) => ({
                topic: t.topic,
                partitionIds: t.partitions,
              })),
        transactionLastUpdateTimestampMs: BigInt(md.txnLastUpdateTimestamp),
        transactionStartTimestampMs: BigInt(md.txnStartTimestamp),
        clientTransactionVersion: md.clientTransactionVersion,
      },
      valueVersion: 1,
      lastProducerEpoch: md.lastProducerEpoch,
    }
    this.apply({ records: [rec], response: undefined })
  }

  md(id: string): TransactionMetadata {
    const md = this.shard.transaction(id)
    assert.ok(md !== undefined, `no metadata for ${id}`)
    return md
  }
}

/** The shard's whole state as plain data (partition order included), for equality checks. */
export function snapshot(shard: TransactionCoordinatorShard, dropSoft = false): unknown[] {
  const out: unknown[] = []
  for (const id of shard.transactionalIds()) {
    const md = shard.transaction(id)!
    out.push({
      ...md,
      lastProducerEpoch: dropSoft ? -1 : md.lastProducerEpoch,
      topicPartitions: topicPartitionList(md.topicPartitions),
    })
  }
  return out
}

/** Metadata with defaults, for seeding. */
export function metadata(p: Partial<TransactionMetadata> & { transactionalId: string }): TransactionMetadata {
  return {
    producerId: 1000n,
    prevProducerId: 1000n,
    nextProducerId: -1n,
    producerEpoch: 0,
    lastProducerEpoch: -1,
    txnTimeoutMs: 10000,
    state: 0,
    topicPartitions: new Map(),
    txnStartTimestamp: -1,
    txnLastUpdateTimestamp: 0,
    clientTransactionVersion: 0,
    ...p,
  }
}
