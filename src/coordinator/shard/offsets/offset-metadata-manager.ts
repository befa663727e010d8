/**
 * Committed offsets of the groups of one shard (Kafka's OffsetMetadataManager): OffsetCommit,
 * TxnOffsetCommit, OffsetFetch and OffsetDelete, the OffsetCommit record builders, `replay` of
 * OffsetCommit and TxnOffsetCommit records, the end of a transaction (its marker), tombstones for
 * DeleteGroups, and the expiry of old offsets. Pending transactional offsets are kept apart
 * (`pending-offsets.ts`) until their transaction ends.
 *
 * Group checks (member epochs, generations, subscriptions) belong to the groups: this manager asks
 * them through {@link OffsetGroups} (the shard), as Kafka's asks its GroupMetadataManager. Like every
 * shard component it never changes state outside `replay`.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'
import type { OffsetCommitValue } from '../../../protocol/generated/records/OffsetCommitValue.js'
import type { OffsetCommitResponseOffsetCommitResponseTopic } from '../../../protocol/generated/messages/OffsetCommitResponse.js'
import type { OffsetDeleteResponseOffsetDeleteResponseTopic } from '../../../protocol/generated/messages/OffsetDeleteResponse.js'
import type {
  OffsetFetchResponseOffsetFetchResponseGroup,
  OffsetFetchResponseOffsetFetchResponseTopics,
} from '../../../protocol/generated/messages/OffsetFetchResponse.js'
import type { TxnOffsetCommitResponseTxnOffsetCommitResponseTopic } from '../../../protocol/generated/messages/TxnOffsetCommitResponse.js'
import { type CoordinatorResult, NO_TIMERS } from '../result.js'
import {
  PendingTransactionalOffsets,
  type TxnOffsetCommitRecord,
  txnOffsetCommitTombstone,
} from './pending-offsets.js'

/** The zero uuid: no topic id known (records written before OffsetCommit v10). */
export const NO_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAA'

/**
 * What a group's offsets expire from (Kafka's OffsetExpirationCondition): each offset's commit time
 * (`fromMs` null), or one time for all of them (a classic group's, since it became empty). An
 * offset with an expire timestamp of its own expires then, whatever this says.
 */
export interface OffsetExpiry {
  readonly fromMs: bigint | null
}

/** Offsets expire `offsets.retention.minutes` after their commit. */
export const FROM_COMMIT: OffsetExpiry = Object.freeze({ fromMs: null })

/** A deleted topic: its name and the id it had (Kafka's DeletedTopic). */
export interface DeletedTopic {
  readonly name: string
  readonly topicId: string
}

export type OffsetCommitRecord = Extract<CoordinatorRecord, { type: 'OffsetCommit' }>

/**
 * A committed offset: the value of the OffsetCommit record that wrote it, kept as replayed (the
 * record's own object, never changed afterwards). `leaderEpoch` is -1 when the client sent none;
 * `expireTimestamp` is -1n unless an OffsetCommit v2–v4 set a retention time.
 */
export type OffsetAndMetadata = Readonly<OffsetCommitValue>

/** The records the offsets manager writes: committed offsets and pending transactional ones. */
export type OffsetRecord = OffsetCommitRecord | TxnOffsetCommitRecord

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
  const valueVersion = offsetCommitValueVersion(o.expireTimestamp, o.topicId)
  return {
    type: 'OffsetCommit',
    key: { group: groupId, topic, partition },
    value: {
      offset: o.offset,
      leaderEpoch: o.leaderEpoch,
      metadata: o.metadata,
      commitTimestamp: o.commitTimestamp,
      expireTimestamp: o.expireTimestamp,
      topicId: o.topicId,
    },
    valueVersion,
  }
}

function offsetCommitValueVersion(expireTimestampMs: bigint, topicId: string): number {
  return expireTimestampMs >= 0n ? 1 : topicId !== NO_TOPIC_ID ? 4 : 3
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

/** A TxnOffsetCommit, its topic names resolved (v6 sends topic ids). */
export interface TxnOffsetCommitInput {
  readonly transactionalId: string
  readonly groupId: string
  readonly producerId: bigint
  readonly producerEpoch: number
  /** -1 (v0–v2, or a producer outside group management): no member checks. */
  readonly generationIdOrMemberEpoch: number
  readonly memberId: string
  readonly groupInstanceId: string | null
  readonly topics: readonly {
    readonly name: string
    readonly topicId: string
    readonly partitions: readonly OffsetCommitPartitionInput[]
  }[]
}

/** What the marker of a transaction did to the offsets of one shard. */
export interface TransactionCompletion {
  /** NONE, or INVALID_PRODUCER_EPOCH for a marker older than the pending offsets. */
  readonly errorCode: number
  /** Offsets made committed (COMMIT) … */
  readonly committed: number
  /** … and pending offsets dropped (ABORT, or superseded by a later non-transactional commit). */
  readonly dropped: number
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
  /**
   * OffsetFetch v7+ `RequireStable`: a partition with a pending transactional offset answers
   * UNSTABLE_OFFSET_COMMIT instead of its committed offset.
   */
  readonly requireStable?: boolean
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
  /**
   * The error of a whole TxnOffsetCommit, or NONE (Kafka's `validateTransactionalOffsetCommit`):
   * an unknown group with a generation is GROUP_ID_NOT_FOUND from v6, ILLEGAL_GENERATION below;
   * STALE_MEMBER_EPOCH only from v6, ILLEGAL_GENERATION below.
   */
  validateTransactionalOffsetCommit(request: TxnOffsetCommitInput, apiVersion: number): number
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
  validateTransactionalOffsetCommit: (request, apiVersion) =>
    request.generationIdOrMemberEpoch < 0
      ? ErrorCode.NONE
      : apiVersion >= 6
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
  /** Pending transactional offsets, by producer id. */
  readonly #pending = new PendingTransactionalOffsets()
  /** Replay position of the last OffsetCommit or TxnOffsetCommit value replayed. */
  #position = 0
  /** Replay position of each committed offset (a later non-transactional commit beats a pending one). */
  readonly #positions = new WeakMap<OffsetAndMetadata, number>()

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
    // A record per partition unless the whole commit is refused (fewer when metadata is too large).
    let most = 0
    if (error === ErrorCode.NONE) for (const t of request.topics) most += t.partitions.length
    const records: OffsetCommitRecord[] = new Array(most)
    let written = 0
    // now + retention saturates at the int64 maximum (Kafka's long addition wraps to a past
    // timestamp, and the offset expires at the next sweep).
    const expireTimestampMs =
      ctx.apiVersion <= 4 && request.retentionTimeMs !== -1n
        ? minBigInt(BigInt(ctx.nowMs) + request.retentionTimeMs, INT64_MAX)
        : -1n
    const commitTimestamp = BigInt(ctx.nowMs)
    const groupId = request.groupId
    // One loop, no closure per partition: a Kafka Streams commit carries a partition per task.
    const topics: OffsetCommitResponseOffsetCommitResponseTopic[] = new Array(request.topics.length)
    for (let ti = 0; ti < request.topics.length; ti++) {
      const t = request.topics[ti]
      const topicId = t.topicId === '' ? NO_TOPIC_ID : t.topicId
      const valueVersion = offsetCommitValueVersion(expireTimestampMs, topicId)
      const partitions: { partitionIndex: number; errorCode: number }[] = new Array(t.partitions.length)
      for (let pi = 0; pi < t.partitions.length; pi++) {
        const p = t.partitions[pi]
        const errorCode = error !== ErrorCode.NONE ? error : checkMetadata(p, ctx.maxMetadataSize)
        if (errorCode !== ErrorCode.NONE) {
          partitions[pi] = { partitionIndex: p.partitionIndex, errorCode }
          continue
        }
        partitions[pi] = committedPartition(p.partitionIndex)
        records[written++] = {
          type: 'OffsetCommit',
          key: { group: groupId, topic: t.name, partition: p.partitionIndex },
          value: {
            offset: p.committedOffset,
            leaderEpoch: p.committedLeaderEpoch,
            metadata: p.committedMetadata ?? '',
            commitTimestamp,
            expireTimestamp: expireTimestampMs,
            topicId,
          },
          valueVersion,
        }
      }
      topics[ti] = { name: t.name, topicId: t.topicId, partitions }
    }
    if (written < most) records.length = written
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
        partitions: partitions.map(([p, o]) =>
          request.requireStable === true && this.#pending.has(groupId, topic, p)
            ? unstable(p)
            : {
                partitionIndex: p,
                committedOffset: o.offset,
                committedLeaderEpoch: o.leaderEpoch,
                metadata: o.metadata,
                errorCode: ErrorCode.NONE,
              },
        ),
      }))
    } else {
      topics = request.topics.map((t) => ({
        name: t.name,
        topicId: NO_TOPIC_ID,
        partitions: t.partitionIndexes.map((p) => {
          if (request.requireStable === true && this.#pending.has(groupId, t.name, p)) return unstable(p)
          const o = this.offset(groupId, t.name, p)
          return {
            partitionIndex: p,
            committedOffset: o?.offset ?? INVALID_OFFSET,
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

  deleteOffsets(request: OffsetDeleteInput): CoordinatorResult<OffsetRecord, OffsetDeleteResult> {
    const groupId = request.groupId
    const fail = (errorCode: number): CoordinatorResult<OffsetRecord, OffsetDeleteResult> => ({
      records: [],
      response: { errorCode, topics: [] },
      timers: NO_TIMERS,
    })
    if (isGroupIdEmpty(groupId)) return fail(ErrorCode.INVALID_GROUP_ID)
    const error = this.#groups.validateOffsetDelete(groupId)
    if (error !== ErrorCode.NONE) return fail(error)
    const records: OffsetRecord[] = []
    const topics = request.topics.map((t) => {
      const subscribed = this.#groups.isSubscribedToTopic(groupId, t.name)
      return {
        name: t.name,
        partitions: t.partitions.map((p) => {
          if (subscribed) return { partitionIndex: p, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC }
          if (this.offset(groupId, t.name, p) !== undefined) {
            records.push(offsetCommitTombstone(groupId, t.name, p))
          }
          // A deleted offset takes the pending transactional ones of the partition with it.
          records.push(...this.#pending.tombstones(groupId, t.name, p))
          return { partitionIndex: p, errorCode: ErrorCode.NONE }
        }),
      }
    })
    return { records, response: { errorCode: ErrorCode.NONE, topics }, timers: NO_TIMERS }
  }

  // ---- deleted topics ----

  /**
   * Tombstones for the offsets of deleted topics in every group (Kafka's `onTopicsDeleted`): each
   * committed offset of a deleted topic's name whose topic id is the deleted topic's, or none (a
   * commit by name), and the pending transactional offsets of such a topic likewise. An offset
   * committed by id for a topic created again under the name stays.
   */
  onTopicsDeleted(deleted: readonly DeletedTopic[]): OffsetRecord[] {
    const records: OffsetRecord[] = []
    const ofTopic = (topicId: string, t: DeletedTopic) => topicId === NO_TOPIC_ID || topicId === t.topicId
    for (const [groupId, topics] of this.#offsets) {
      for (const t of deleted) {
        for (const [p, o] of topics.get(t.name) ?? []) {
          if (ofTopic(o.topicId, t)) records.push(offsetCommitTombstone(groupId, t.name, p))
        }
      }
    }
    for (const groupId of this.#pending.groupIds()) {
      for (const t of deleted)
        records.push(...this.#pending.topicTombstones(groupId, t.name, (id) => ofTopic(id, t)))
    }
    return records
  }

  /** groupId → topic → partition → offset. */
  readonly #offsets = new Map<string, Map<string, Map<number, OffsetAndMetadata>>>()
  /**
   * The partitions of the group and topic the last committed offset was replayed for, while no
   * tombstone has been replayed since: the records of one commit share them, and a commit of 20
   * partitions then looks its group and topic up once, not 20 times.
   */
  #lastGroup: string | undefined
  #lastTopic: string | undefined
  #lastPartitions: Map<number, OffsetAndMetadata> | undefined

  /** How many committed offsets there are (Kafka's `offset-count` gauge). */
  #count = 0

  /** How many committed offsets there are, over every group (Kafka's `offset-count`). */
  get offsetCount(): number {
    return this.#count
  }

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

  /**
   * Tombstones for every offset of a group (DeleteGroups), in topic/partition order, then for its
   * pending transactional offsets.
   */
  deleteAllOffsetsRecords(groupId: string): OffsetRecord[] {
    const out: OffsetRecord[] = []
    for (const { topic, partitions } of this.allOffsets(groupId)) {
      for (const [p] of partitions) out.push(offsetCommitTombstone(groupId, topic, p))
    }
    out.push(...this.#pending.groupTombstones(groupId))
    return out
  }

  /**
   * Tombstones for the expired offsets of a group and whether no offset would remain afterwards
   * (Kafka's `cleanupExpiredOffsets`). An offset expires when its own expire timestamp has passed
   * or, without one, when `retentionMs` have passed since it was committed. Offsets of topics the
   * group is subscribed to never expire, nor do offsets with a pending transactional offset, and a
   * group with pending transactional offsets is never left without offsets. `expiry` null: the
   * group's offsets do not expire now (a classic group in a rebalance, say).
   */
  expiredOffsetsRecords(
    groupId: string,
    nowMs: number,
    retentionMs: number,
    isSubscribedToTopic: (topic: string) => boolean,
    expiry: OffsetExpiry | null = FROM_COMMIT,
  ): { records: OffsetCommitRecord[]; allOffsetsExpired: boolean } {
    const records: OffsetCommitRecord[] = []
    const offsets = this.allOffsets(groupId)
    if (expiry === null && offsets.length > 0) return { records, allOffsetsExpired: false }
    let remaining = this.#pending.hasGroup(groupId) ? 1 : 0
    const now = BigInt(nowMs)
    const retention = BigInt(retentionMs)
    const fromMs = expiry?.fromMs ?? null
    for (const { topic, partitions } of offsets) {
      const subscribed = isSubscribedToTopic(topic)
      for (const [p, o] of partitions) {
        const expired =
          !subscribed &&
          !this.#pending.has(groupId, topic, p) &&
          (o.expireTimestamp >= 0n
            ? now >= o.expireTimestamp
            : now - (fromMs ?? o.commitTimestamp) >= retention)
        if (expired) records.push(offsetCommitTombstone(groupId, topic, p))
        else remaining++
      }
    }
    return { records, allOffsetsExpired: remaining === 0 }
  }

  replay(record: OffsetRecord): void {
    if (record.type === 'TxnOffsetCommit') {
      this.#pending.replay(record, record.value === null ? this.#position : ++this.#position)
      return
    }
    const { group, topic, partition } = record.key
    const v = record.value
    if (v === null) {
      // A tombstone may drop the cached partitions from the tree.
      this.#lastPartitions = undefined
      const topics = this.#offsets.get(group)
      const partitions = topics?.get(topic)
      if (!topics || !partitions) return
      if (partitions.delete(partition)) this.#count--
      if (partitions.size === 0) topics.delete(topic)
      if (topics.size === 0) this.#offsets.delete(group)
      return
    }
    let partitions = this.#lastPartitions
    if (partitions === undefined || group !== this.#lastGroup || topic !== this.#lastTopic) {
      let topics = this.#offsets.get(group)
      if (!topics) {
        topics = new Map()
        this.#offsets.set(group, topics)
      }
      partitions = topics.get(topic)
      if (!partitions) {
        partitions = new Map()
        topics.set(topic, partitions)
      }
      this.#lastPartitions = partitions
    }
    // This record's strings from now on: the next records of its commit share them, and the same
    // string compares at once where an equal one is compared character by character.
    this.#lastGroup = group
    this.#lastTopic = topic
    // The record's value is the committed offset: no copy of it per record.
    const offset: OffsetAndMetadata = v
    const before = partitions.size
    partitions.set(partition, offset)
    this.#count += partitions.size - before
    // Only a commit replayed while the group has pending transactional offsets can be later than
    // one of them: a commit without a position counts as earlier than every pending offset, which
    // any commit replayed before the group's first pending offset is. (A WeakMap entry for every
    // commit made each replay several times dearer and gave the GC an ephemeron per offset.)
    const position = ++this.#position
    if (this.#pending.hasGroup(group)) this.#positions.set(offset, position)
  }

  // ---- TxnOffsetCommit (28) and the end of a transaction ----

  /**
   * A transactional commit (Kafka's `commitTransactionalOffset`): the group checks of
   * {@link OffsetGroups.validateTransactionalOffsetCommit} for the whole request, then per
   * partition the metadata size; every accepted partition is written as a pending
   * `TxnOffsetCommit` record of the producer. The caller has checked the transaction itself (the
   * coordinator verified or added the group's offsets partition).
   */
  commitTransactionalOffset(
    ctx: OffsetCommitContext,
    request: TxnOffsetCommitInput,
  ): CoordinatorResult<OffsetRecord, TxnOffsetCommitResponseTxnOffsetCommitResponseTopic[]> {
    const error = isGroupIdEmpty(request.groupId)
      ? ErrorCode.INVALID_GROUP_ID
      : this.#groups.validateTransactionalOffsetCommit(request, ctx.apiVersion)
    const records: TxnOffsetCommitRecord[] = []
    const topics = commitEachPartition(request.topics, error, ctx.maxMetadataSize, (t, p, metadata) => {
      records.push({
        type: 'TxnOffsetCommit',
        key: {
          producerId: request.producerId,
          group: request.groupId,
          topic: t.name,
          partition: p.partitionIndex,
        },
        value: {
          producerEpoch: request.producerEpoch,
          offset: p.committedOffset,
          leaderEpoch: p.committedLeaderEpoch,
          metadata,
          commitTimestamp: BigInt(ctx.nowMs),
          topicId: t.topicId === '' ? NO_TOPIC_ID : t.topicId,
        },
      })
    })
    return { records, response: topics, timers: NO_TIMERS }
  }

  /**
   * The transaction marker of a producer reaching this shard (Kafka's `replayEndTransactionMarker`),
   * as records: COMMIT writes an OffsetCommit record for each pending offset, unless a
   * non-transactional commit of the partition was written after it (the later record wins), and
   * both outcomes tombstone the pending records. A marker for a producer with nothing pending
   * writes nothing (markers are re-sent after a restart). A marker whose epoch is below the
   * pending offsets' epoch is refused with INVALID_PRODUCER_EPOCH and changes nothing, as the
   * `__consumer_offsets` log refuses it in Kafka.
   */
  completeTransaction(
    producerId: bigint,
    producerEpoch: number,
    committed: boolean,
  ): CoordinatorResult<OffsetRecord, TransactionCompletion> {
    const entries = this.#pending.entries(producerId)
    const records: OffsetRecord[] = []
    if (entries.some((e) => producerEpoch < e.offset.producerEpoch)) {
      return {
        records,
        response: { errorCode: ErrorCode.INVALID_PRODUCER_EPOCH, committed: 0, dropped: 0 },
        timers: NO_TIMERS,
      }
    }
    let materialised = 0
    for (const { group, topic, partition, offset } of entries) {
      const current = this.offset(group, topic, partition)
      const laterCommit = current !== undefined && (this.#positions.get(current) ?? 0) > offset.position
      if (committed && !laterCommit) {
        records.push(
          offsetCommitRecord(group, topic, partition, {
            offset: offset.committedOffset,
            leaderEpoch: offset.leaderEpoch,
            metadata: offset.metadata,
            commitTimestamp: offset.commitTimestampMs,
            expireTimestamp: -1n,
            topicId: offset.topicId,
          }),
        )
        materialised++
      }
    }
    for (const { group, topic, partition } of entries) {
      records.push({ type: 'TxnOffsetCommit', key: { producerId, group, topic, partition }, value: null })
    }
    return {
      records,
      response: {
        errorCode: ErrorCode.NONE,
        committed: materialised,
        dropped: entries.length - materialised,
      },
      timers: NO_TIMERS,
    }
  }

  /**
   * Tombstones for the pending offsets a producer wrote into a group at one epoch, for a
   * TxnOffsetCommit whose transaction ended between its check and its write (the marker found
   * nothing to settle, so nothing else would). Other epochs of the producer are left alone.
   */
  dropPendingOffsets(
    groupId: string,
    producerId: bigint,
    producerEpoch: number,
  ): CoordinatorResult<OffsetRecord, number> {
    const records: OffsetRecord[] = this.#pending
      .entries(producerId)
      .filter((e) => e.group === groupId && e.offset.producerEpoch === producerEpoch)
      .map((e) => txnOffsetCommitTombstone(producerId, e.group, e.topic, e.partition))
    return { records, response: records.length, timers: NO_TIMERS }
  }

  /** Whether any producer has a pending offset for the partition. */
  hasPendingOffset(groupId: string, topic: string, partition: number): boolean {
    return this.#pending.has(groupId, topic, partition)
  }

  /** Whether the group has pending transactional offsets (it is then kept by the expiry sweep). */
  hasPendingOffsets(groupId: string): boolean {
    return this.#pending.hasGroup(groupId)
  }
}

const INT64_MAX = 2n ** 63n - 1n

/** Partition indexes below this answer a successful commit with a shared object. */
const SHARED_ANSWERS = 1024
const committedAnswers: Readonly<{ partitionIndex: number; errorCode: number }>[] = []

/**
 * The answer of a partition whose offset was committed: one frozen object per partition index, shared
 * by every answer (a Kafka Streams commit answers a partition per task, nearly always without an
 * error, and nothing changes an answer once built).
 */
function committedPartition(partitionIndex: number): { partitionIndex: number; errorCode: number } {
  if (partitionIndex < 0 || partitionIndex >= SHARED_ANSWERS)
    return { partitionIndex, errorCode: ErrorCode.NONE }
  while (committedAnswers.length <= partitionIndex)
    committedAnswers.push(
      Object.freeze({ partitionIndex: committedAnswers.length, errorCode: ErrorCode.NONE }),
    )
  return committedAnswers[partitionIndex] as { partitionIndex: number; errorCode: number }
}

/**
 * The per-partition answers of a commit: the whole request's error if any, else
 * OFFSET_METADATA_TOO_LARGE for metadata above the limit, else NONE after `accept` wrote the record.
 */
function commitEachPartition(
  topics: OffsetCommitInput['topics'],
  error: number,
  maxMetadataSize: number,
  accept: (
    topic: { readonly name: string; readonly topicId: string },
    p: OffsetCommitPartitionInput,
    metadata: string,
  ) => void,
): { name: string; topicId: string; partitions: { partitionIndex: number; errorCode: number }[] }[] {
  return topics.map((t) => ({
    name: t.name,
    topicId: t.topicId,
    partitions: t.partitions.map((p) => {
      if (error !== ErrorCode.NONE) return { partitionIndex: p.partitionIndex, errorCode: error }
      const metadata = p.committedMetadata ?? ''
      if (utf8Length(metadata) > maxMetadataSize) {
        return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE }
      }
      accept(t, p, metadata)
      return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE }
    }),
  }))
}

/**
 * NONE, or OFFSET_METADATA_TOO_LARGE for metadata of more than `maxMetadataSize` UTF-8 bytes. A
 * string of n UTF-16 units has between n and 3n UTF-8 bytes, so most metadata is decided by its
 * length alone.
 */
function checkMetadata(p: OffsetCommitPartitionInput, maxMetadataSize: number): number {
  const metadata = p.committedMetadata
  if (metadata === null || metadata.length * 3 <= maxMetadataSize) return ErrorCode.NONE
  return metadata.length > maxMetadataSize || utf8Length(metadata) > maxMetadataSize
    ? ErrorCode.OFFSET_METADATA_TOO_LARGE
    : ErrorCode.NONE
}

/** A partition answered UNSTABLE_OFFSET_COMMIT (OffsetFetch with RequireStable). */
function unstable(partitionIndex: number) {
  return {
    partitionIndex,
    committedOffset: INVALID_OFFSET,
    committedLeaderEpoch: -1,
    metadata: '',
    errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT,
  }
}

function minBigInt(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}
