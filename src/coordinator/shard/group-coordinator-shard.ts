/**
 * The group coordinator shard: every group and committed offset of one `__consumer_offsets`
 * partition (Kafka's GroupCoordinatorShard). It holds the streams groups (StreamsGroupManager), the
 * offsets (OffsetMetadataManager), the classic groups (ClassicGroupManager) and the "simple" groups:
 * group ids that only have committed offsets, which Kafka keeps as empty classic groups with no
 * protocol.
 *
 * Every handler is synchronous and deterministic: it reads the state and the time it is given and
 * returns `{ records, response }`; state changes only in `replay`, which the runtime calls after
 * the records are durable, and when a shard loads.
 */
import type { CoordinatorRecord } from '../../protocol/generated/coordinator-records.js'
import type { ConsumerGroupDescribeResponseDescribedGroup } from '../../protocol/generated/messages/ConsumerGroupDescribeResponse.js'
import {
  type ConsumerGroupHeartbeatResponse,
  createConsumerGroupHeartbeatResponse,
} from '../../protocol/generated/messages/ConsumerGroupHeartbeatResponse.js'
import type { DeleteGroupsResponseDeletableGroupResult } from '../../protocol/generated/messages/DeleteGroupsResponse.js'
import type { DescribeGroupsResponseDescribedGroup } from '../../protocol/generated/messages/DescribeGroupsResponse.js'
import type { ListGroupsResponseListedGroup } from '../../protocol/generated/messages/ListGroupsResponse.js'
import type { OffsetCommitResponseOffsetCommitResponseTopic } from '../../protocol/generated/messages/OffsetCommitResponse.js'
import type { OffsetDeleteResponseOffsetDeleteResponseTopic } from '../../protocol/generated/messages/OffsetDeleteResponse.js'
import type {
  OffsetFetchResponseOffsetFetchResponseGroup,
  OffsetFetchResponseOffsetFetchResponseTopics,
} from '../../protocol/generated/messages/OffsetFetchResponse.js'
import type { ShardStateMachine } from '../runtime/types.js'
import { type ClassicGroupConfig, ClassicGroupError, ClassicGroupManager } from './classic/manager.js'
import type { ClassicTimerOpResult } from './classic/types.js'
import {
  NO_TOPIC_ID,
  type OffsetCommitRecord,
  OffsetMetadataManager,
  offsetCommitRecord,
  offsetCommitTombstone,
} from './offsets/offset-metadata-manager.js'
import type { StreamsGroupConfig } from './streams/config.js'
import type { TopicsImage } from './streams/configured-topology.js'
import { ErrorCode, StreamsGroupError } from './streams/errors.js'
import {
  type StreamsGroupManager as StreamsGroupManagerType,
  StreamsGroupManager,
  type StreamsHeartbeatContext,
  type StreamsHeartbeatResult,
  type TaskAssignorSelector,
} from './streams/manager.js'
import { type ArmedTimers, NO_TIMERS, type TimerIntents } from './streams/timers.js'
import type {
  StreamsGroupDescribeResponseDescribedGroup,
  StreamsGroupHeartbeatRequest,
} from './streams/wire.js'

/** Kafka error codes the shard answers with beyond the streams ones. */
export const ShardErrorCode = {
  ...ErrorCode,
  OFFSET_METADATA_TOO_LARGE: 12,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  GROUP_SUBSCRIBED_TO_TOPIC: 86,
} as const

/** Kafka's `Integer.MIN_VALUE`: "authorized operations not requested". */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648

export interface GroupCoordinatorShardOptions {
  readonly topics: TopicsImage
  readonly assignors: TaskAssignorSelector
  /** Classic group settings (default: Kafka's defaults). */
  readonly classic?: ClassicGroupConfig
  /** The runtime's timers of this shard; the streams manager reads its pending timers from them. */
  readonly timers?: ArmedTimers
  /**
   * Called when a replayed tombstone removes a streams group (delete, expiry, classic conversion,
   * or a tombstone read while loading). The service drops the group's topology-description back-off
   * entries (Topograph D3; Kafka 4.4 keeps them until the id is reused). It must not touch the shard.
   */
  readonly onStreamsGroupRemoved?: (groupId: string) => void
  /**
   * A group's effective streams settings (broker values with its group-level configs), read on
   * every timer and describe, as Kafka's shard reads its GroupConfigManager. Read-only and
   * synchronous; absent: the config each call is given applies to every group.
   */
  readonly streamsConfig?: (groupId: string) => StreamsGroupConfig
}

/** The result of a write handler: records to append, then the response. */
export interface ShardWriteResult<T> {
  readonly records: CoordinatorRecord[]
  readonly response: T
  /** Timer intents to apply once the records are durable. */
  readonly timers: TimerIntents
}

/** The streams heartbeat result with the records widened to every coordinator record. */
export type ShardHeartbeatResult = Omit<StreamsHeartbeatResult, 'records'> & {
  readonly records: CoordinatorRecord[]
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

export interface CleanupResult {
  /** Offsets tombstoned. */
  readonly expiredOffsets: number
  /** Groups tombstoned. */
  readonly deletedGroups: string[]
}

export interface CleanupOptions {
  /** offsets.retention.minutes in milliseconds. */
  readonly retentionMs: number
  /** Whether a topology description plugin is configured (streams `shouldExpire`). */
  readonly pluginConfigured: boolean
}

const INVALID_OFFSET = -1n

const isGroupIdEmpty = (groupId: string | null): boolean => groupId === null || groupId === ''

function groupMetadataTombstone(groupId: string): CoordinatorRecord {
  return { type: 'GroupMetadata', key: { group: groupId }, value: null }
}

/** UTF-8 length without allocating (offset metadata is compared against a byte limit). */
function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8')
}

export class GroupCoordinatorShard implements ShardStateMachine<CoordinatorRecord> {
  readonly #streams: StreamsGroupManagerType
  /** The classic groups (JoinGroup/SyncGroup/Heartbeat/LeaveGroup); driven by the service. */
  readonly classic: ClassicGroupManager
  readonly #offsets = new OffsetMetadataManager()
  /** Simple groups: ids with offsets but no group protocol (Kafka: empty classic groups, protocol ""). */
  readonly #simpleGroups = new Set<string>()
  /** Set while a join runs, so a simple group with that id may be replaced by the streams group. */
  #joiningGroupId: string | null = null
  readonly #onStreamsGroupRemoved: ((groupId: string) => void) | undefined
  readonly #streamsConfig: ((groupId: string) => StreamsGroupConfig) | undefined

  constructor(options: GroupCoordinatorShardOptions) {
    this.#onStreamsGroupRemoved = options.onStreamsGroupRemoved
    this.#streamsConfig = options.streamsConfig
    this.#streams = new StreamsGroupManager({
      topics: options.topics,
      assignors: options.assignors,
      timers: options.timers,
      config: options.streamsConfig,
      isOtherGroupType: (groupId) =>
        (this.#simpleGroups.has(groupId) || this.classic.hasGroup(groupId)) &&
        groupId !== this.#joiningGroupId,
    })
    const streams = this.#streams
    this.classic = new ClassicGroupManager({
      config: options.classic,
      otherGroups: {
        typeOf: (groupId) => (streams.group(groupId) !== undefined ? 'streams' : undefined),
        isEmpty: (groupId) => streams.isEmpty(groupId),
        // A real stored epoch or the −2 barrier: the plugin may hold a description (KIP-1331 §7).
        // (−1 is NONE, the one value that says the plugin holds nothing.)
        needsCleanupBeforeConversion: (groupId) =>
          (streams.group(groupId)?.storedDescriptionTopologyEpoch ?? -1) !== -1,
        // The streams group's timers need no cancelling: each checks the group when it fires.
        deleteEmptyGroupRecords: (groupId) => streams.deleteGroupRecords(groupId).records,
      },
    })
  }

  /** The streams part (describe rows, timers, lookups). */
  get streams(): StreamsGroupManagerType {
    return this.#streams
  }

  get offsets(): OffsetMetadataManager {
    return this.#offsets
  }

  /** Whether a group with this id exists here (streams, classic or simple). */
  hasGroup(groupId: string): boolean {
    return (
      this.#streams.group(groupId) !== undefined ||
      this.classic.hasGroup(groupId) ||
      this.#simpleGroups.has(groupId)
    )
  }

  isSimpleGroup(groupId: string): boolean {
    return this.#simpleGroups.has(groupId)
  }

  // ---- replay ----

  replay(record: CoordinatorRecord): void {
    switch (record.type) {
      case 'OffsetCommit':
        this.#offsets.replay(record)
        // Offsets of an id with no group create the simple group, as Kafka's replay does.
        if (
          record.value !== null &&
          this.#streams.group(record.key.group) === undefined &&
          !this.classic.hasGroup(record.key.group)
        ) {
          this.#simpleGroups.add(record.key.group)
        }
        return
      case 'GroupMetadata':
        // A tombstone deletes the classic or simple group; a value is a classic group's checkpoint,
        // which also turns a simple group with that id into the classic group.
        this.#simpleGroups.delete(record.key.group)
        this.classic.replay(record)
        return
      case 'StreamsGroupMetadata':
      case 'StreamsGroupMemberMetadata':
      case 'StreamsGroupTargetAssignmentMetadata':
      case 'StreamsGroupTargetAssignmentMember':
      case 'StreamsGroupCurrentMemberAssignment':
      case 'StreamsGroupTopology':
        if (record.value !== null) this.#simpleGroups.delete(record.key.groupId)
        this.#streams.replay(record)
        if (
          record.type === 'StreamsGroupMetadata' &&
          record.value === null &&
          this.#streams.group(record.key.groupId) === undefined
        ) {
          this.#onStreamsGroupRemoved?.(record.key.groupId)
        }
        return
      default:
        // LegacyOffsetCommit, ConsumerGroupMetadata, ShareGroupMetadata: never written by this
        // coordinator; a log holding them is replayed without them.
        return
    }
  }

  /** Timers to start after the shard loaded (session and rebalance timeouts of every member). */
  loadedTimers(config: StreamsGroupConfig): TimerIntents {
    return this.#streams.onLoaded(config)
  }

  /** Classic groups after the shard loaded: a session timer per member (ClassicGroupManager.onLoaded). */
  loadedClassic(nowMs: number): ClassicTimerOpResult {
    return this.classic.onLoaded(nowMs)
  }

  onNewTopicsImage(image: TopicsImage, changedTopics?: Iterable<string>): void {
    this.#streams.onNewTopicsImage(image, changedTopics)
  }

  // ---- StreamsGroupHeartbeat (88) ----

  /**
   * The streams heartbeat. A join on an id that holds a simple group or an empty classic group
   * replaces it: that group is tombstoned first (its offsets stay and now belong to the streams group).
   */
  streamsGroupHeartbeat(
    ctx: StreamsHeartbeatContext,
    request: StreamsGroupHeartbeatRequest,
  ): ShardHeartbeatResult {
    const replacing =
      request.memberEpoch === 0 &&
      (this.#simpleGroups.has(request.groupId) ||
        (this.classic.hasGroup(request.groupId) && this.classic.isEmpty(request.groupId))) &&
      this.#streams.group(request.groupId) === undefined
    this.#joiningGroupId = replacing ? request.groupId : null
    let result: StreamsHeartbeatResult
    try {
      result = this.#streams.streamsGroupHeartbeat(ctx, request)
    } finally {
      this.#joiningGroupId = null
    }
    // The result's records are this heartbeat's own array: handed on as they are unless a tombstone
    // goes first.
    if (!replacing || result.records.length === 0) return result
    const records: CoordinatorRecord[] = [groupMetadataTombstone(request.groupId), ...result.records]
    return { ...result, records }
  }

  // ---- StreamsGroupDescribe (89) ----

  streamsGroupDescribe(
    groupIds: readonly string[],
    includeTopologyDescription: boolean,
  ): StreamsGroupDescribeResponseDescribedGroup[] {
    const config = this.#streamsConfig
    return this.#streams.streamsGroupDescribe(groupIds, {
      includeTopologyDescription,
      assignorName: config === undefined ? undefined : (groupId) => config(groupId).assignorName,
    })
  }

  // ---- ConsumerGroupHeartbeat (68) / ConsumerGroupDescribe (69) ----

  /**
   * Consumer groups are not served. A heartbeat aimed at a streams group answers as Kafka does
   * (GROUP_ID_NOT_FOUND "Group <g> is not a consumer group."); any other id is answered
   * UNSUPPORTED_VERSION, which is what Kafka answers when the consumer protocol is not enabled.
   */
  consumerGroupHeartbeat(groupId: string): ConsumerGroupHeartbeatResponse {
    if (this.#streams.group(groupId) !== undefined) {
      return createConsumerGroupHeartbeatResponse({
        errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
        errorMessage: `Group ${groupId} is not a consumer group.`,
        memberId: null,
      })
    }
    return createConsumerGroupHeartbeatResponse({
      errorCode: ErrorCode.UNSUPPORTED_VERSION,
      errorMessage: 'The version of API is not supported.',
      memberId: null,
    })
  }

  consumerGroupDescribe(groupIds: readonly string[]): ConsumerGroupDescribeResponseDescribedGroup[] {
    return groupIds.map((groupId) => {
      const row: ConsumerGroupDescribeResponseDescribedGroup = {
        errorCode: 0,
        errorMessage: null,
        groupId,
        groupState: '',
        groupEpoch: 0,
        assignmentEpoch: 0,
        assignorName: '',
        members: [],
        authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      }
      if (isGroupIdEmpty(groupId)) return { ...row, errorCode: ErrorCode.INVALID_GROUP_ID }
      const message = this.hasGroup(groupId)
        ? `Group ${groupId} is not a consumer group.`
        : `Group ${groupId} not found.`
      return { ...row, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: message }
    })
  }

  // ---- ListGroups (16) ----

  listGroups(
    statesFilter: readonly string[],
    typesFilter: readonly string[],
  ): ListGroupsResponseListedGroup[] {
    const out: ListGroupsResponseListedGroup[] = [
      ...this.#streams.listGroups(statesFilter, typesFilter).map((g) => ({ ...g })),
      ...this.classic.listGroups(statesFilter, typesFilter).map((g) => ({ ...g })),
    ]
    const states = statesFilter.map((s) => s.trim().toLowerCase())
    const types = typesFilter.map((t) => t.trim().toLowerCase())
    if (
      (states.length === 0 || states.includes('empty')) &&
      (types.length === 0 || types.includes('classic'))
    ) {
      for (const groupId of this.#simpleGroups) {
        out.push({ groupId, protocolType: '', groupState: 'Empty', groupType: 'classic' })
      }
    }
    return out
  }

  // ---- DescribeGroups (15) ----

  /** The classic describe: classic and simple groups; a streams group reads as Dead (spec §5.4). */
  describeGroups(groupIds: readonly string[], apiVersion: number): DescribeGroupsResponseDescribedGroup[] {
    return groupIds.map((groupId) => {
      const row: DescribeGroupsResponseDescribedGroup = {
        errorCode: 0,
        errorMessage: null,
        groupId,
        groupState: '',
        protocolType: '',
        protocolData: '',
        members: [],
        authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      }
      if (isGroupIdEmpty(groupId)) return { ...row, errorCode: ErrorCode.INVALID_GROUP_ID }
      const classic = this.classic.describeGroup(groupId)
      if (classic !== undefined) return classic
      if (this.#simpleGroups.has(groupId)) return { ...row, groupState: 'Empty' }
      const message =
        this.#streams.group(groupId) !== undefined
          ? `Group ${groupId} is not a classic group.`
          : `Group ${groupId} not found.`
      if (apiVersion >= 6) {
        return { ...row, groupState: 'Dead', errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: message }
      }
      return { ...row, groupState: 'Dead' }
    })
  }

  // ---- DeleteGroups (42) ----

  /**
   * Deletes empty groups: per group, its offsets are tombstoned, then the group itself (Kafka's
   * order). A group with members gets NON_EMPTY_GROUP, an unknown id GROUP_ID_NOT_FOUND.
   */
  deleteGroups(groupIds: readonly string[]): ShardWriteResult<DeleteGroupsResponseDeletableGroupResult[]> {
    const records: CoordinatorRecord[] = []
    const schedule: TimerIntents['schedule'] = []
    const cancel: string[] = []
    const results: DeleteGroupsResponseDeletableGroupResult[] = []
    const seen = new Set<string>()
    for (const groupId of groupIds) {
      const result = (errorCode: number): void => {
        results.push({ groupId, errorCode, errorMessage: null })
      }
      if (isGroupIdEmpty(groupId)) {
        result(ErrorCode.INVALID_GROUP_ID)
        continue
      }
      if (seen.has(groupId)) {
        // A repeated id was deleted by its first occurrence in this same request.
        result(ErrorCode.GROUP_ID_NOT_FOUND)
        continue
      }
      seen.add(groupId)
      if (this.#streams.group(groupId) !== undefined) {
        let groupRecords: ReturnType<StreamsGroupManagerType['deleteGroupRecords']>
        try {
          groupRecords = this.#streams.deleteGroupRecords(groupId)
        } catch (e) {
          if (e instanceof StreamsGroupError) {
            result(e.errorCode)
            continue
          }
          throw e
        }
        records.push(...this.#offsets.deleteAllOffsetsRecords(groupId), ...groupRecords.records)
        schedule.push(...groupRecords.timers.schedule)
        cancel.push(...groupRecords.timers.cancel)
        result(ErrorCode.NONE)
      } else if (this.classic.hasGroup(groupId)) {
        let groupRecords: CoordinatorRecord[]
        try {
          // The classic timers it cancels need not be: each checks the group when it fires.
          groupRecords = this.classic.deleteGroupRecords(groupId).records
        } catch (e) {
          if (e instanceof ClassicGroupError) {
            result(e.errorCode)
            continue
          }
          throw e
        }
        records.push(...this.#offsets.deleteAllOffsetsRecords(groupId), ...groupRecords)
        result(ErrorCode.NONE)
      } else if (this.#simpleGroups.has(groupId)) {
        records.push(...this.#offsets.deleteAllOffsetsRecords(groupId), groupMetadataTombstone(groupId))
        result(ErrorCode.NONE)
      } else {
        result(ErrorCode.GROUP_ID_NOT_FOUND)
      }
    }
    return { records, response: results, timers: { schedule, cancel } }
  }

  // ---- OffsetCommit (8) ----

  /** The error of the whole commit, or NONE (Kafka's `validateOffsetCommit`). */
  #validateOffsetCommit(request: OffsetCommitInput, apiVersion: number): number {
    const groupId = request.groupId
    if (this.#streams.group(groupId) !== undefined) {
      try {
        this.#streams.validateOffsetCommit(groupId, {
          memberId: request.memberId,
          memberEpoch: request.generationIdOrMemberEpoch,
          apiVersion,
          isTransactional: false,
          topics: request.topics.map((t) => ({
            name: t.name,
            partitions: t.partitions.map((p) => p.partitionIndex),
          })),
        })
        return ErrorCode.NONE
      } catch (e) {
        if (e instanceof StreamsGroupError) return e.errorCode
        throw e
      }
    }
    if (this.classic.hasGroup(groupId)) {
      try {
        this.classic.validateOffsetCommit(groupId, {
          memberId: request.memberId,
          groupInstanceId: request.groupInstanceId,
          generationIdOrMemberEpoch: request.generationIdOrMemberEpoch,
          isTransactional: false,
        })
        return ErrorCode.NONE
      } catch (e) {
        if (e instanceof ClassicGroupError) return e.errorCode
        throw e
      }
    }
    if (this.#simpleGroups.has(groupId)) {
      // An empty classic group accepts commits without a generation; any member id is unknown to it.
      if (request.generationIdOrMemberEpoch < 0) return ErrorCode.NONE
      return ErrorCode.UNKNOWN_MEMBER_ID
    }
    // No group: a commit without generation creates the simple group (when its records replay).
    if (request.generationIdOrMemberEpoch < 0) return ErrorCode.NONE
    return apiVersion >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION
  }

  commitOffsets(
    ctx: OffsetCommitContext,
    request: OffsetCommitInput,
  ): ShardWriteResult<OffsetCommitResponseOffsetCommitResponseTopic[]> {
    const error = isGroupIdEmpty(request.groupId)
      ? ErrorCode.INVALID_GROUP_ID
      : this.#validateOffsetCommit(request, ctx.apiVersion)
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
          return { partitionIndex: p.partitionIndex, errorCode: ShardErrorCode.OFFSET_METADATA_TOO_LARGE }
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
    if (this.#streams.group(groupId) !== undefined) {
      try {
        this.#streams.validateOffsetFetch(groupId, request.memberId, request.memberEpoch)
      } catch (e) {
        if (e instanceof StreamsGroupError) return fail(e.errorCode)
        throw e
      }
    } else if (this.classic.hasGroup(groupId)) {
      try {
        this.classic.validateOffsetFetch(groupId)
      } catch (e) {
        if (e instanceof ClassicGroupError) return fail(e.errorCode)
        throw e
      }
    }
    let topics: OffsetFetchResponseOffsetFetchResponseTopics[]
    if (request.topics === null) {
      topics = this.#offsets.allOffsets(groupId).map(({ topic, partitions }) => ({
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
          const o = this.#offsets.offset(groupId, t.name, p)
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

  offsetDelete(request: OffsetDeleteInput): ShardWriteResult<OffsetDeleteResult> {
    const groupId = request.groupId
    const fail = (errorCode: number): ShardWriteResult<OffsetDeleteResult> => ({
      records: [],
      response: { errorCode, topics: [] },
      timers: NO_TIMERS,
    })
    if (isGroupIdEmpty(groupId)) return fail(ErrorCode.INVALID_GROUP_ID)
    if (!this.hasGroup(groupId)) return fail(ErrorCode.GROUP_ID_NOT_FOUND)
    if (this.classic.hasGroup(groupId)) {
      try {
        this.classic.validateOffsetDelete(groupId)
      } catch (e) {
        if (e instanceof ClassicGroupError) return fail(e.errorCode)
        throw e
      }
    }
    const records: OffsetCommitRecord[] = []
    const topics = request.topics.map((t) => {
      const subscribed = this.#streams.isSubscribedToTopic(groupId, t.name)
      return {
        name: t.name,
        partitions: t.partitions.map((p) => {
          if (subscribed) return { partitionIndex: p, errorCode: ShardErrorCode.GROUP_SUBSCRIBED_TO_TOPIC }
          if (this.#offsets.offset(groupId, t.name, p) !== undefined) {
            records.push(offsetCommitTombstone(groupId, t.name, p))
          }
          return { partitionIndex: p, errorCode: ErrorCode.NONE }
        }),
      }
    })
    return { records, response: { errorCode: ErrorCode.NONE, topics }, timers: NO_TIMERS }
  }

  // ---- expiry (Kafka's cleanupGroupMetadata) ----

  /**
   * The expiry sweep: per group, expired offsets are tombstoned; a group whose offsets are then all
   * gone is deleted when it is empty (a simple group always is) and, for a streams or classic group,
   * when `shouldExpire` allows it.
   */
  cleanupGroupMetadata(nowMs: number, options: CleanupOptions): ShardWriteResult<CleanupResult> {
    const records: CoordinatorRecord[] = []
    const cancel: string[] = []
    const schedule: TimerIntents['schedule'] = []
    const deletedGroups: string[] = []
    let expiredOffsets = 0
    const groupIds = new Set([
      ...this.#streams.groupIds(),
      ...this.classic.groupIds(),
      ...this.#simpleGroups,
      ...this.#offsets.groupIds(),
    ])
    for (const groupId of groupIds) {
      const expired = this.#offsets.expiredOffsetsRecords(groupId, nowMs, options.retentionMs, (topic) =>
        this.#streams.isSubscribedToTopic(groupId, topic),
      )
      records.push(...expired.records)
      expiredOffsets += expired.records.length
      if (!expired.allOffsetsExpired) continue
      if (this.#streams.group(groupId) !== undefined) {
        if (!this.#streams.isEmpty(groupId) || !this.#streams.shouldExpire(groupId, options.pluginConfigured))
          continue
        const deleted = this.#streams.deleteGroupRecords(groupId)
        records.push(...deleted.records)
        schedule.push(...deleted.timers.schedule)
        cancel.push(...deleted.timers.cancel)
        deletedGroups.push(groupId)
      } else if (this.classic.hasGroup(groupId)) {
        if (!this.classic.shouldExpire(groupId)) continue
        records.push(...this.classic.deleteGroupRecords(groupId).records)
        deletedGroups.push(groupId)
      } else if (this.#simpleGroups.has(groupId)) {
        records.push(groupMetadataTombstone(groupId))
        deletedGroups.push(groupId)
      }
    }
    return { records, response: { expiredOffsets, deletedGroups }, timers: { schedule, cancel } }
  }
}

const INT64_MAX = 2n ** 63n - 1n

function minBigInt(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}
