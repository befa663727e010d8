/**
 * The transaction coordinator's `TransactionMarkerWriter` over this server's partition logs: for a
 * data partition a COMMIT or ABORT control batch (transactions.md §8.2), built once per round of
 * writes and appended to each partition as the coordinator's (`PartitionLog.appendMarker`: checked
 * against the producer's state, ending the producer's open transaction there); for a
 * `__consumer_offsets` partition the group's pending transactional offsets are settled
 * (`offsetsMarker`).
 */
import { ErrorCode } from '../../protocol/errors.js'
import { GROUP_METADATA_TOPIC_NAME } from '../../protocol/topics.js'
import { crc32c, type TxnMarker, txnMarker } from '../../log/index.js'
import type { TransactionMarkerWriter } from '../../coordinator/service/transaction-coordinator-service.js'
import type { MarkerPartitionResult, TxnMarkerIntent } from '../../coordinator/txn/index.js'
import type { DataPlane } from './data-plane.js'

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
    const now = this.#now()
    // One control batch for every partition: only the offset and leader epoch (outside the CRC)
    // differ where each is stored.
    let control: TxnMarker | undefined
    // A data partition's marker is appended in this turn: its result is a value unless an fsync
    // must come first.
    const results: (MarkerPartitionResult | Promise<MarkerPartitionResult>)[] = []
    for (const t of topics) {
      for (const p of t.partitions) {
        let written: number | Promise<number>
        if (t.topic === GROUP_METADATA_TOPIC_NAME) written = this.#offsetsMarker(marker, p)
        else {
          control ??= txnMarker(
            {
              producerId: Number(marker.producerId),
              producerEpoch: marker.producerEpoch,
              committed: marker.committed,
              coordinatorEpoch: marker.coordinatorEpoch,
              timestamp: now,
            },
            crc32c,
          )
          written = this.#append(control, marker.transactionVersion, t.topic, p, now)
        }
        results.push(
          typeof written === 'number'
            ? { topic: t.topic, partition: p, errorCode: written }
            : written.then((errorCode) => ({ topic: t.topic, partition: p, errorCode })),
        )
      }
    }
    return Promise.all(results)
  }

  async #offsetsMarker(marker: TxnMarkerIntent, partition: number): Promise<number> {
    const topic = GROUP_METADATA_TOPIC_NAME
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

  #append(
    control: TxnMarker,
    transactionVersion: number,
    topic: string,
    partition: number,
    now: number,
  ): number | Promise<number> {
    const log = this.#data.partition(topic, partition)
    if (log === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    try {
      const r = log.appendMarker(control, { now, transactionVersion })
      return r instanceof Promise
        ? r.then(
            (a) => a.errorCode,
            () => ErrorCode.KAFKA_STORAGE_ERROR,
          )
        : r.errorCode
    } catch {
      return ErrorCode.KAFKA_STORAGE_ERROR
    }
  }
}
