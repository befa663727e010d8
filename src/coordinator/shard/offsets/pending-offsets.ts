/**
 * Pending transactional offsets (Kafka's `OffsetMetadataManager.pendingTransactionalOffsets` and
 * `openTransactions`): offsets a TxnOffsetCommit wrote, kept per producer id apart from the committed
 * offsets until the transaction's marker reaches the group coordinator.
 *
 * Kafka writes them as OffsetCommit records in a transactional batch of `__consumer_offsets`; the
 * batch's producer id sends them here on replay, and the marker (a control batch) moves or drops
 * them. Topograph's record store has no batches, so a pending offset is a record of its own,
 * `TxnOffsetCommit` (Topograph-only type 0x7f10, key: producer id, group, topic, partition), and
 * the marker's outcome is written as ordinary records in one atomic append: the OffsetCommit
 * records it materialises (COMMIT) and tombstones of the pending records (COMMIT and ABORT). Replay
 * of those records reproduces pending, committed and dropped offsets exactly, and compaction by key
 * can never bring an aborted offset back or lose a committed one.
 */
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'

export type TxnOffsetCommitRecord = Extract<CoordinatorRecord, { type: 'TxnOffsetCommit' }>

/** One pending offset and the position of its record in the shard's replay order. */
export interface PendingOffset {
  readonly producerEpoch: number
  readonly committedOffset: bigint
  readonly leaderEpoch: number
  readonly metadata: string
  readonly commitTimestampMs: bigint
  readonly topicId: string
  /** Replay position: compared with a committed offset's to know which record came later. */
  readonly position: number
}

export interface PendingEntry {
  readonly group: string
  readonly topic: string
  readonly partition: number
  readonly offset: PendingOffset
}

type ByPartition<T> = Map<string, Map<string, Map<number, T>>>

function getOrCreate<K, V>(m: Map<K, V>, k: K, make: () => V): V {
  let v = m.get(k)
  if (v === undefined) {
    v = make()
    m.set(k, v)
  }
  return v
}

/** Removes `group/topic/partition` from a nested map, pruning empty levels. */
function removeNested<T>(m: ByPartition<T>, group: string, topic: string, partition: number): void {
  const topics = m.get(group)
  const partitions = topics?.get(topic)
  if (topics === undefined || partitions === undefined) return
  partitions.delete(partition)
  if (partitions.size === 0) topics.delete(topic)
  if (topics.size === 0) m.delete(group)
}

export function txnOffsetCommitTombstone(
  producerId: bigint,
  group: string,
  topic: string,
  partition: number,
): TxnOffsetCommitRecord {
  return { type: 'TxnOffsetCommit', key: { producerId, group, topic, partition }, value: null }
}

export class PendingTransactionalOffsets {
  /** producer id → group → topic → partition → pending offset. */
  readonly #byProducer = new Map<bigint, ByPartition<PendingOffset>>()
  /** group → topic → partition → producer ids with a pending offset there (Kafka's openTransactions). */
  readonly #open: ByPartition<Set<bigint>> = new Map()

  /** Whether any producer has a pending offset for the partition. */
  has(group: string, topic: string, partition: number): boolean {
    return this.#open.get(group)?.get(topic)?.has(partition) ?? false
  }

  /**
   * Whether any producer has a pending offset in the group. Asked for every committed offset
   * replayed: with no transaction open anywhere (the usual case) it looks nothing up.
   */
  hasGroup(group: string): boolean {
    return this.#open.size !== 0 && this.#open.has(group)
  }

  groupIds(): string[] {
    return [...this.#open.keys()]
  }

  /** Whether any producer has a pending offset for a partition of the topic in the group. */
  hasTopic(group: string, topic: string): boolean {
    return this.#open.get(group)?.has(topic) ?? false
  }

  /** Every pending offset of a producer, in group, topic, partition order of insertion. */
  entries(producerId: bigint): PendingEntry[] {
    const out: PendingEntry[] = []
    for (const [group, topics] of this.#byProducer.get(producerId) ?? []) {
      for (const [topic, partitions] of topics) {
        for (const [partition, offset] of partitions) out.push({ group, topic, partition, offset })
      }
    }
    return out
  }

  /** Tombstones for every pending offset of the partition (or of every partition of the topic). */
  tombstones(group: string, topic: string, partition?: number): TxnOffsetCommitRecord[] {
    const out: TxnOffsetCommitRecord[] = []
    const partitions = this.#open.get(group)?.get(topic)
    if (partitions === undefined) return out
    for (const [p, producers] of partitions) {
      if (partition !== undefined && p !== partition) continue
      for (const producerId of producers) out.push(txnOffsetCommitTombstone(producerId, group, topic, p))
    }
    return out
  }

  /** Tombstones for the pending offsets of the topic in the group whose topic id `matches`. */
  topicTombstones(
    group: string,
    topic: string,
    matches: (topicId: string) => boolean,
  ): TxnOffsetCommitRecord[] {
    const out: TxnOffsetCommitRecord[] = []
    for (const [p, producers] of this.#open.get(group)?.get(topic) ?? []) {
      for (const producerId of producers) {
        const o = this.#byProducer.get(producerId)?.get(group)?.get(topic)?.get(p)
        if (o !== undefined && matches(o.topicId))
          out.push(txnOffsetCommitTombstone(producerId, group, topic, p))
      }
    }
    return out
  }

  /** Tombstones for every pending offset of the group. */
  groupTombstones(group: string): TxnOffsetCommitRecord[] {
    const out: TxnOffsetCommitRecord[] = []
    for (const topic of this.#open.get(group)?.keys() ?? []) out.push(...this.tombstones(group, topic))
    return out
  }

  replay(record: TxnOffsetCommitRecord, position: number): void {
    const { producerId, group, topic, partition } = record.key
    const v = record.value
    if (v === null) {
      const byGroup = this.#byProducer.get(producerId)
      if (byGroup === undefined) return
      removeNested(byGroup, group, topic, partition)
      if (byGroup.size === 0) this.#byProducer.delete(producerId)
      const producers = this.#open.get(group)?.get(topic)?.get(partition)
      producers?.delete(producerId)
      if (producers !== undefined && producers.size === 0) removeNested(this.#open, group, topic, partition)
      return
    }
    const byGroup = getOrCreate(this.#byProducer, producerId, () => new Map())
    const topics = getOrCreate(byGroup, group, () => new Map<string, Map<number, PendingOffset>>())
    getOrCreate(topics, topic, () => new Map<number, PendingOffset>()).set(partition, {
      producerEpoch: v.producerEpoch,
      committedOffset: v.offset,
      leaderEpoch: v.leaderEpoch,
      metadata: v.metadata,
      commitTimestampMs: v.commitTimestamp,
      topicId: v.topicId,
      position,
    })
    const openTopics = getOrCreate(this.#open, group, () => new Map<string, Map<number, Set<bigint>>>())
    const openPartitions = getOrCreate(openTopics, topic, () => new Map<number, Set<bigint>>())
    getOrCreate(openPartitions, partition, () => new Set<bigint>()).add(producerId)
  }
}
