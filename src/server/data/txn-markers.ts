/**
 * The transaction coordinator's `TransactionMarkerWriter` over this server's partition logs: for a
 * data partition a COMMIT or ABORT control batch (transactions.md §8.2) appended with origin
 * `coordinator`, which the log checks against the producer's state and which ends the producer's
 * open transaction there; for a `__consumer_offsets` partition the group's pending transactional
 * offsets are settled (`offsetsMarker`).
 */
import { ErrorCode } from '../../protocol/errors.js'
import { batch, crc32c } from '../../log/index.js'
import type { TransactionMarkerWriter } from '../../coordinator/service/transaction-coordinator-service.js'
import {
  GROUP_METADATA_TOPIC_NAME,
  type MarkerPartitionResult,
  type TxnMarkerIntent,
} from '../../coordinator/txn/index.js'
import type { DataPlane } from './data-plane.js'

/** The control batch of a transaction marker: attributes 0x30, base sequence -1, one record. */
export function encodeTxnMarker(
  producerId: bigint,
  producerEpoch: number,
  committed: boolean,
  coordinatorEpoch: number,
  timestamp: number,
): Uint8Array {
  // Key: version 0, type (ABORT 0, COMMIT 1). Value: version 0, coordinator epoch.
  const key = Uint8Array.of(0, 0, 0, committed ? 1 : 0)
  const value = new Uint8Array(6)
  new DataView(value.buffer).setInt32(2, coordinatorEpoch)
  return batch.buildBatch(
    {
      attributes: 0x30,
      lastOffsetDelta: 0,
      baseTimestamp: timestamp,
      maxTimestamp: timestamp,
      producerId: Number(producerId),
      producerEpoch,
      baseSequence: -1,
      recordsCount: 1,
    },
    batch.encodeRecords([{ timestampDelta: 0, offsetDelta: 0, key, value }]),
    crc32c,
  )
}

/**
 * Settles a transaction's offsets in one `__consumer_offsets` partition (the group coordinator's
 * end of transaction, `GroupCoordinatorService.completeTransaction`); returns the partition's marker
 * result. The coordinator's own errors (loading, not available, not the coordinator) are answered
 * as NOT_LEADER_OR_FOLLOWER, which the transaction coordinator retries (Kafka's KafkaApis does
 * the same translation).
 */
export type OffsetsMarkerHandler = (marker: TxnMarkerIntent, partition: number) => Promise<number>

export class PartitionMarkerWriter implements TransactionMarkerWriter {
  readonly #data: DataPlane
  readonly #offsetsPartitions: number
  readonly #offsets: OffsetsMarkerHandler
  readonly #now: () => number

  constructor(
    data: DataPlane,
    options: { offsetsTopicNumPartitions: number; offsets: OffsetsMarkerHandler; now?: () => number },
  ) {
    this.#data = data
    this.#offsetsPartitions = options.offsetsTopicNumPartitions
    this.#offsets = options.offsets
    this.#now = options.now ?? Date.now
  }

  partitionExists(topic: string, partition: number): boolean {
    if (topic === GROUP_METADATA_TOPIC_NAME) return partition >= 0 && partition < this.#offsetsPartitions
    return this.#data.partition(topic, partition) !== undefined
  }

  async writeTxnMarkers(
    marker: TxnMarkerIntent,
    topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[],
  ): Promise<readonly MarkerPartitionResult[]> {
    const results: Promise<MarkerPartitionResult>[] = []
    for (const t of topics) {
      for (const p of t.partitions) {
        results.push(
          this.#write(marker, t.topic, p).then((errorCode) => ({ topic: t.topic, partition: p, errorCode })),
        )
      }
    }
    return Promise.all(results)
  }

  async #write(marker: TxnMarkerIntent, topic: string, partition: number): Promise<number> {
    if (topic === GROUP_METADATA_TOPIC_NAME) {
      if (!this.partitionExists(topic, partition)) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
      let errorCode: number
      try {
        errorCode = await this.#offsets(marker, partition)
      } catch {
        errorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE
      }
      switch (errorCode) {
        case ErrorCode.COORDINATOR_NOT_AVAILABLE:
        case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        case ErrorCode.NOT_COORDINATOR:
          return ErrorCode.NOT_LEADER_OR_FOLLOWER
        default:
          return errorCode
      }
    }
    const log = this.#data.partition(topic, partition)
    if (log === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    const now = this.#now()
    const bytes = encodeTxnMarker(
      marker.producerId,
      marker.producerEpoch,
      marker.committed,
      marker.coordinatorEpoch,
      now,
    )
    try {
      const r = await log.append(bytes, {
        now,
        origin: 'coordinator',
        transactionVersion: marker.transactionVersion,
      })
      return r.errorCode
    } catch {
      return ErrorCode.KAFKA_STORAGE_ERROR
    }
  }
}
