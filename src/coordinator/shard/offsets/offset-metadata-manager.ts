/**
 * Committed offsets of the groups of one shard (Kafka's OffsetMetadataManager, without
 * transactions): OffsetCommit, OffsetFetch and OffsetDelete, the OffsetCommit record builders,
 * `replay` of OffsetCommit records, tombstones for DeleteGroups, and the expiry of old offsets.
 *
 * Group checks (member epochs, generations, subscriptions) belong to the groups: this manager asks
 * them through {@link OffsetGroups} (the shard), as Kafka's asks its GroupMetadataManager. Like every
 * shard component it never changes state outside `replay`.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'
import type { OffsetCommitResponseOffsetCommitResponseTopic } from '../../../protocol/generated/messages/OffsetCommitResponse.js'
import type { OffsetDeleteResponseOffsetDeleteResponseTopic } from '../../../protocol/generated/messages/OffsetDeleteResponse.js'
import type {
  OffsetFetchResponseOffsetFetchResponseGroup,
  OffsetFetchResponseOffsetFetchResponseTopics,
} from '../../../protocol/generated/messages/OffsetFetchResponse.js'
import { type CoordinatorResult, NO_TIMERS } from '../result.js'

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

/** One partition of an OffsetCommit, its topic name already resolved (v10 sends topic ids). */
export interface OffsetCommitPartitionInput {
  readonly partitionIndex: number
  readonly committedOffset: bigint
  readonly committedLeaderEpoch: number
  readonly committedMetadata: string | null
}

export interface OffsetCommitInput {
  readonly groupId: string
  readonly generationIdOrMemberEpoch: number
  readonly memberId: string
  readonly groupInstanceId: string | null
  /** -1n: the broker's retention applies (v2–v4 may set a retention time). */
  readonly retentionTimeMs: bigint
  readonly topics: readonly {
    readonly name: string
    readonly topicId: string
    readonly partitions: readonly OffsetCommitPartitionInput[]
  }[]
}

export interface OffsetCommitContext {
  readonly apiVersion: number
  readonly nowMs: number
  /** offset.metadata.max.bytes */
  readonly maxMetadataSize: number
}

export interface OffsetFetchGroupInput {
  readonly groupId: string
  /** null for admin fetches (and every request below v9). */
  readonly memberId: string | null
  readonly memberEpoch: number
  /** null: every committed offset of the group. */
  readonly topics: readonly { readonly name: string; readonly partitionIndexes: readonly number[] }[] | null
}

export interface OffsetDeleteInput {
  readonly groupId: string
  readonly topics: readonly { readonly name: string; readonly partitions: readonly number[] }[]
}

export interface OffsetDeleteResult {
  readonly errorCode: number
  readonly topics: OffsetDeleteResponseOffsetDeleteResponseTopic[]
}

/** What the offsets manager asks the groups (the shard answers for streams, classic and simple groups). */
export interface OffsetGroups {
  /** The error of a whole commit, or NONE (Kafka's `validateOffsetCommit` of the group). */
  validateOffsetCommit(request: OffsetCommitInput, apiVersion: number): number
  /** The error of a fetch (member and epoch checks), or NONE; an unknown group is no error. */
  validateOffsetFetch(request: OffsetFetchGroupInput): number
  /** The error of an OffsetDelete on the group (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP …), or NONE. */
  validateOffsetDelete(groupId: string): number
  /** Whether the group reads the topic (its offsets can be neither deleted nor expired). */
  isSubscribedToTopic(groupId: string, topic: string): boolean
}

/** No groups at all: commits without a generation pass, everything else finds no group. */
const NO_GROUPS: OffsetGroups = {
  validateOffsetCommit: (request, apiVersion) =>
    request.generationIdOrMemberEpoch < 0
      ? ErrorCode.NONE
      : apiVersion >= 9
        ? ErrorCode.GROUP_ID_NOT_FOUND
        : ErrorCode.ILLEGAL_GENERATION,
  validateOffsetFetch: () => ErrorCode.NONE,
  validateOffsetDelete: () => ErrorCode.GROUP_ID_NOT_FOUND,
  isSubscribedToTopic: () => false,
}

const INVALID_OFFSET = -1n

const isGroupIdEmpty = (groupId: string | null): boolean => groupId === null || groupId === ''

/** UTF-8 length (offset metadata is compared against a byte limit). */
function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8')
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export class OffsetMetadataManager {
  readonly #groups: OffsetGroups

  constructor(groups: OffsetGroups = NO_GROUPS) {
    this.#groups = groups
  }

  // ---- OffsetCommit (8) ----

  commitOffset(
    ctx: OffsetCommitContext,
    request: OffsetCommitInput,
  ): CoordinatorResult<OffsetCommitRecord, OffsetCommitResponseOffsetCommitResponseTopic[]> {
    const error = isGroupIdEmpty(request.groupId)
      ? ErrorCode.INVALID_GROUP_ID
      : this.#groups.validateOffsetCommit(request, ctx.apiVersion)
    const records: OffsetCommitRecord[] = []
    // now + retention saturates at the int64 maximum (Kafka's long addition wraps to a past
    // timestamp, and the offset expires at the next sweep).
    const expireTimestampMs =
      ctx.apiVersion <= 4 && request.retentionTimeMs !== -1n
        ? minBigInt(BigInt(ctx.nowMs) + request.retentionTimeMs, INT64_MAX)
        : -1n
    const topics = request.topics.map((t) => ({
      name: t.name,
      topicId: t.topicId,
      partitions: t.partitions.map((p) => {
        if (error !== ErrorCode.NONE) return { partitionIndex: p.partitionIndex, errorCode: error }
        const metadata = p.committedMetadata ?? ''
        if (utf8Length(metadata) > ctx.maxMetadataSize) {
          return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE }
        }
        records.push(
          offsetCommitRecord(request.groupId, t.name, p.partitionIndex, {
            committedOffset: p.committedOffset,
            leaderEpoch: p.committedLeaderEpoch,
            metadata,
            commitTimestampMs: BigInt(ctx.nowMs),
            expireTimestampMs,
            topicId: t.topicId === '' ? NO_TOPIC_ID : t.topicId,
          }),
        )
        return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE }
      }),
    }))
    return { records, response: topics, timers: NO_TIMERS }
  }

  // ---- OffsetFetch (9) ----

  /**
   * The committed offsets of one group. An unknown group is not an error: every requested partition
   * comes back without an offset (-1), as Kafka answers. Member checks are the group's (streams:
   * member and exact epoch).
   */
  fetchOffsets(request: OffsetFetchGroupInput): OffsetFetchResponseOffsetFetchResponseGroup {
    const groupId = request.groupId
    const fail = (errorCode: number): OffsetFetchResponseOffsetFetchResponseGroup => ({
      groupId,
      topics: [],
      errorCode,
    })
    if (isGroupIdEmpty(groupId)) return fail(ErrorCode.INVALID_GROUP_ID)
    const error = this.#groups.validateOffsetFetch(request)
    if (error !== ErrorCode.NONE) return fail(error)
    let topics: OffsetFetchResponseOffsetFetchResponseTopics[]
    if (request.topics === null) {
      topics = this.allOffsets(groupId).map(({ topic, partitions }) => ({
        name: topic,
        topicId: partitions[0]?.[1].topicId ?? NO_TOPIC_ID,
        partitions: partitions.map(([p, o]) => ({
          partitionIndex: p,
          committedOffset: o.committedOffset,
          committedLeaderEpoch: o.leaderEpoch,
          metadata: o.metadata,
          errorCode: ErrorCode.NONE,
        })),
      }))
    } else {
      topics = request.topics.map((t) => ({
        name: t.name,
        topicId: NO_TOPIC_ID,
        partitions: t.partitionIndexes.map((p) => {
          const o = this.offset(groupId, t.name, p)
          return {
            partitionIndex: p,
            committedOffset: o?.committedOffset ?? INVALID_OFFSET,
            committedLeaderEpoch: o?.leaderEpoch ?? -1,
            metadata: o?.metadata ?? '',
            errorCode: ErrorCode.NONE,
          }
        }),
      }))
    }
    return { groupId, topics, errorCode: ErrorCode.NONE }
  }

  // ---- OffsetDelete (47) ----

  deleteOffsets(request: OffsetDeleteInput): CoordinatorResult<OffsetCommitRecord, OffsetDeleteResult> {
    const groupId = request.groupId
    const fail = (errorCode: number): CoordinatorResult<OffsetCommitRecord, OffsetDeleteResult> => ({
      records: [],
      response: { errorCode, topics: [] },
      timers: NO_TIMERS,
    })
    if (isGroupIdEmpty(groupId)) return fail(ErrorCode.INVALID_GROUP_ID)
    const error = this.#groups.validateOffsetDelete(groupId)
    if (error !== ErrorCode.NONE) return fail(error)
    const records: OffsetCommitRecord[] = []
    const topics = request.topics.map((t) => {
      const subscribed = this.#groups.isSubscribedToTopic(groupId, t.name)
      return {
        name: t.name,
        partitions: t.partitions.map((p) => {
          if (subscribed) return { partitionIndex: p, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC }
          if (this.offset(groupId, t.name, p) !== undefined) {
            records.push(offsetCommitTombstone(groupId, t.name, p))
          }
          return { partitionIndex: p, errorCode: ErrorCode.NONE }
        }),
      }
    })
    return { records, response: { errorCode: ErrorCode.NONE, topics }, timers: NO_TIMERS }
  }

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

const INT64_MAX = 2n ** 63n - 1n

function minBigInt(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}
