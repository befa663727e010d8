/**
 * What the coordinator does with the results of writing a transaction's markers (Kafka's
 * `TransactionMarkerRequestCompletionHandler` and `TransactionMarkerChannelManager`; specification
 * §8.4). Pure bookkeeping: the service writes the markers, feeds the results in, waits and retries
 * as told, and writes the Complete record (`completeTransaction`) once nothing remains.
 */
import { ErrorCode } from '../../protocol/errors.js'
import type { TxnMarkerIntent } from './shard.js'

/** What one partition's marker result means for the transaction. */
export type MarkerResultAction =
  /** written (or the partition can never take it): no longer waited for */
  | 'remove'
  /** a passing failure: write this partition's marker again */
  | 'retry'
  /** the producer or coordinator epoch moved on: stop writing this transaction's markers */
  | 'abandon'
  /** an error the coordinator never expects (Kafka throws IllegalStateException) */
  | 'fatal'

/** Kafka's table for one partition's WriteTxnMarkers error. */
export function markerResultAction(errorCode: number): MarkerResultAction {
  switch (errorCode) {
    case ErrorCode.NONE:
    // The producer could not have written to such a partition: nothing to wait for.
    case ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT:
    case ErrorCode.UNSUPPORTED_VERSION:
      return 'remove'
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return 'retry'
    case ErrorCode.INVALID_PRODUCER_EPOCH:
    case ErrorCode.TRANSACTION_COORDINATOR_FENCED:
      return 'abandon'
    default:
      return 'fatal'
  }
}

/** One partition's result of a marker write. */
export interface MarkerPartitionResult {
  readonly topic: string
  readonly partition: number
  readonly errorCode: number
}

/** Where a transaction's markers stand after a round of results. */
export type MarkerProgress =
  | { readonly kind: 'complete' }
  | { readonly kind: 'retry'; readonly topics: { topic: string; partitions: number[] }[] }
  | { readonly kind: 'abandoned'; readonly errorCode: number }
  | { readonly kind: 'fatal'; readonly errorCode: number; readonly topic: string; readonly partition: number }

/**
 * The partitions of one transaction whose markers are not written yet.
 */
export class TxnMarkerTracker {
  readonly intent: TxnMarkerIntent
  readonly #remaining = new Map<string, Set<number>>()

  constructor(intent: TxnMarkerIntent) {
    this.intent = intent
    for (const t of intent.topics) {
      let set = this.#remaining.get(t.topic)
      if (set === undefined) this.#remaining.set(t.topic, (set = new Set()))
      for (const p of t.partitions) set.add(p)
    }
  }

  /** The partitions still waited for, by topic. */
  remaining(): { topic: string; partitions: number[] }[] {
    const out: { topic: string; partitions: number[] }[] = []
    for (const [topic, ps] of this.#remaining) if (ps.size > 0) out.push({ topic, partitions: [...ps] })
    return out
  }

  get done(): boolean {
    for (const ps of this.#remaining.values()) if (ps.size > 0) return false
    return true
  }

  /**
   * Drops the partitions that no longer exist (their topic was deleted), as Kafka drops partitions
   * with no leader before sending markers. Call it before each round of writes.
   */
  dropMissing(exists: (topic: string, partition: number) => boolean): void {
    for (const [topic, ps] of this.#remaining) for (const p of ps) if (!exists(topic, p)) ps.delete(p)
  }

  /**
   * Applies a round of results. Results for partitions not waited for are ignored. An abandoning or
   * fatal result ends the round at once, as Kafka's handler does.
   */
  onResults(results: readonly MarkerPartitionResult[]): MarkerProgress {
    for (const r of results) {
      const set = this.#remaining.get(r.topic)
      if (set === undefined || !set.has(r.partition)) continue
      const action = markerResultAction(r.errorCode)
      if (action === 'remove') set.delete(r.partition)
      else if (action === 'abandon') return { kind: 'abandoned', errorCode: r.errorCode }
      else if (action === 'fatal') {
        return { kind: 'fatal', errorCode: r.errorCode, topic: r.topic, partition: r.partition }
      }
    }
    return this.progress()
  }

  /** Complete when nothing remains, else the partitions to write again. */
  progress(): MarkerProgress {
    return this.done ? { kind: 'complete' } : { kind: 'retry', topics: this.remaining() }
  }
}
