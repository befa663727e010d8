/**
 * Committed offsets of the groups of one shard (Kafka's OffsetMetadataManager, without
 * transactions): the OffsetCommit record builders, `replay` of OffsetCommit records, lookups for
 * OffsetFetch, tombstones for OffsetDelete / DeleteGroups, and the expiry of old offsets.
 *
 * Group checks (member epochs, generations) are not made here: the shard asks the group first and
 * only then calls into this manager. Like every shard component it never changes state outside
 * `replay`.
 */
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'

/** The zero uuid: no topic id known (records written before OffsetCommit v10). */
export const NO_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAA'

export interface OffsetAndMetadata {
  readonly committedOffset: bigint
  /** -1 when the client sent none. */
  readonly leaderEpoch: number
  readonly metadata: string
  readonly commitTimestampMs: bigint
  /** -1n unless an OffsetCommit v2–v4 set a retention time. */
  readonly expireTimestampMs: bigint
  readonly topicId: string
}

export type OffsetCommitRecord = Extract<CoordinatorRecord, { type: 'OffsetCommit' }>

/**
 * The OffsetCommit record for one partition. Kafka writes value version 1 when an expire timestamp
 * is set (the only version that carries it) and version 3 otherwise; version 4 adds the tagged topic
 * id, so it is used when the topic id is known.
 */
export function offsetCommitRecord(
  groupId: string,
  topic: string,
  partition: number,
  o: OffsetAndMetadata,
): OffsetCommitRecord {
  const valueVersion = o.expireTimestampMs >= 0n ? 1 : o.topicId !== NO_TOPIC_ID ? 4 : 3
  return {
    type: 'OffsetCommit',
    key: { group: groupId, topic, partition },
    value: {
      offset: o.committedOffset,
      leaderEpoch: o.leaderEpoch,
      metadata: o.metadata,
      commitTimestamp: o.commitTimestampMs,
      expireTimestamp: o.expireTimestampMs,
      topicId: o.topicId,
    },
    valueVersion,
  }
}

export function offsetCommitTombstone(groupId: string, topic: string, partition: number): OffsetCommitRecord {
  return { type: 'OffsetCommit', key: { group: groupId, topic, partition }, value: null }
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export class OffsetMetadataManager {
  /** groupId → topic → partition → offset. */
  readonly #offsets = new Map<string, Map<string, Map<number, OffsetAndMetadata>>>()

  /** The committed offset of one partition, if any. */
  offset(groupId: string, topic: string, partition: number): OffsetAndMetadata | undefined {
    return this.#offsets.get(groupId)?.get(topic)?.get(partition)
  }

  hasOffsets(groupId: string): boolean {
    return this.#offsets.has(groupId)
  }

  /** Group ids that have at least one committed offset. */
  groupIds(): string[] {
    return [...this.#offsets.keys()]
  }

  /** Every committed offset of a group, topics sorted by name and partitions by index. */
  allOffsets(groupId: string): { topic: string; partitions: [number, OffsetAndMetadata][] }[] {
    const topics = this.#offsets.get(groupId)
    if (!topics) return []
    return [...topics.keys()].sort(byString).map((topic) => ({
      topic,
      partitions: [...topics.get(topic)!].sort((a, b) => a[0] - b[0]),
    }))
  }

  /** Tombstones for every offset of a group (DeleteGroups), in topic/partition order. */
  deleteAllOffsetsRecords(groupId: string): OffsetCommitRecord[] {
    const out: OffsetCommitRecord[] = []
    for (const { topic, partitions } of this.allOffsets(groupId)) {
      for (const [p] of partitions) out.push(offsetCommitTombstone(groupId, topic, p))
    }
    return out
  }

  /**
   * Tombstones for the expired offsets of a group and whether no offset would remain afterwards
   * (Kafka's `cleanupExpiredOffsets`). An offset expires when its own expire timestamp has passed
   * or, without one, when `retentionMs` have passed since it was committed. Offsets of topics the
   * group is subscribed to never expire.
   */
  expiredOffsetsRecords(
    groupId: string,
    nowMs: number,
    retentionMs: number,
    isSubscribedToTopic: (topic: string) => boolean,
  ): { records: OffsetCommitRecord[]; allOffsetsExpired: boolean } {
    const records: OffsetCommitRecord[] = []
    let remaining = 0
    const now = BigInt(nowMs)
    const retention = BigInt(retentionMs)
    for (const { topic, partitions } of this.allOffsets(groupId)) {
      const subscribed = isSubscribedToTopic(topic)
      for (const [p, o] of partitions) {
        const expired =
          !subscribed &&
          (o.expireTimestampMs >= 0n ? now >= o.expireTimestampMs : now - o.commitTimestampMs >= retention)
        if (expired) records.push(offsetCommitTombstone(groupId, topic, p))
        else remaining++
      }
    }
    return { records, allOffsetsExpired: remaining === 0 }
  }

  replay(record: OffsetCommitRecord): void {
    const { group, topic, partition } = record.key
    const v = record.value
    if (v === null) {
      const topics = this.#offsets.get(group)
      const partitions = topics?.get(topic)
      if (!topics || !partitions) return
      partitions.delete(partition)
      if (partitions.size === 0) topics.delete(topic)
      if (topics.size === 0) this.#offsets.delete(group)
      return
    }
    let topics = this.#offsets.get(group)
    if (!topics) {
      topics = new Map()
      this.#offsets.set(group, topics)
    }
    let partitions = topics.get(topic)
    if (!partitions) {
      partitions = new Map()
      topics.set(topic, partitions)
    }
    partitions.set(partition, {
      committedOffset: v.offset,
      leaderEpoch: v.leaderEpoch,
      metadata: v.metadata,
      commitTimestampMs: v.commitTimestamp,
      expireTimestampMs: v.expireTimestamp,
      topicId: v.topicId,
    })
  }
}
