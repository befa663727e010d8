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
import type { ConsumerGroupHeartbeatRequest } from '../../protocol/generated/messages/ConsumerGroupHeartbeatRequest.js'
import type { ConsumerGroupHeartbeatResponse } from '../../protocol/generated/messages/ConsumerGroupHeartbeatResponse.js'
import type { DeleteGroupsResponseDeletableGroupResult } from '../../protocol/generated/messages/DeleteGroupsResponse.js'
import type { DescribeGroupsResponseDescribedGroup } from '../../protocol/generated/messages/DescribeGroupsResponse.js'
import type { ListGroupsResponseListedGroup } from '../../protocol/generated/messages/ListGroupsResponse.js'
import type { OffsetCommitResponseOffsetCommitResponseTopic } from '../../protocol/generated/messages/OffsetCommitResponse.js'
import type { OffsetFetchResponseOffsetFetchResponseGroup } from '../../protocol/generated/messages/OffsetFetchResponse.js'
import type { TxnOffsetCommitResponseTxnOffsetCommitResponseTopic } from '../../protocol/generated/messages/TxnOffsetCommitResponse.js'
import type { RuntimeLogger, ShardStateMachine } from '../runtime/types.js'
import { HoldingLogger, logCommittedOffsets, SILENT_LOGGER } from './group-log.js'
import type { HeartbeatRequest } from '../../protocol/generated/messages/HeartbeatRequest.js'
import type { HeartbeatResponse } from '../../protocol/generated/messages/HeartbeatResponse.js'
import type { JoinGroupRequest } from '../../protocol/generated/messages/JoinGroupRequest.js'
import type { LeaveGroupRequest } from '../../protocol/generated/messages/LeaveGroupRequest.js'
import type { LeaveGroupResponse } from '../../protocol/generated/messages/LeaveGroupResponse.js'
import type { SyncGroupRequest } from '../../protocol/generated/messages/SyncGroupRequest.js'
import { createSyncGroupResponse } from '../../protocol/generated/messages/SyncGroupResponse.js'
import { CONSUMER_GROUP_CONFIG_DEFAULTS, type ConsumerGroupConfig } from './consumer/config.js'
import {
  ConsumerGroupManager,
  type ConsumerHeartbeatContext,
  type ConsumerHeartbeatResult,
  type ConsumerTopicsImage,
} from './consumer/manager.js'
import { isConsumerRecord } from './consumer/records.js'
import {
  type ClassicGroupConfig,
  ClassicGroupManager,
  type ClassicJoinContext,
  type ClassicOpContext,
  type ClassicSyncContext,
} from './classic/manager.js'
import type { ClassicCompletion, ClassicJoinOutcome, ClassicResult } from './classic/types.js'
import {
  type DeletedTopic,
  type OffsetCommitContext,
  type OffsetCommitInput,
  type OffsetDeleteInput,
  type OffsetDeleteResult,
  type OffsetFetchGroupInput,
  type OffsetGroups,
  OffsetMetadataManager,
  type TransactionCompletion,
  type TxnOffsetCommitInput,
} from './offsets/offset-metadata-manager.js'
import { type GroupCoordinatorResult, NO_TIMERS, TimerCollector } from './result.js'
import { STREAMS_GROUP_CONFIG_DEFAULTS, type StreamsGroupConfig } from './streams/config.js'
import type { TopicsImage } from './streams/configured-topology.js'
import { ErrorCode } from '../../protocol/errors.js'
import { errorCodeOf } from './api-error.js'
import {
  type StreamsGroupManager as StreamsGroupManagerType,
  StreamsGroupManager,
  type StreamsHeartbeatContext,
  type StreamsHeartbeatResult,
  type TaskAssignorSelector,
} from './streams/manager.js'
import type { ArmedTimers } from './streams/timers.js'
import type {
  StreamsGroupDescribeResponseDescribedGroup,
  StreamsGroupHeartbeatRequest,
} from './streams/wire.js'

/** Kafka's `Integer.MIN_VALUE`: "authorized operations not requested". */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648

export interface GroupCoordinatorShardOptions {
  readonly topics: TopicsImage & ConsumerTopicsImage
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
  /** A group's effective consumer group settings (absent: Kafka's defaults). */
  readonly consumerConfig?: (groupId: string) => ConsumerGroupConfig
  /**
   * Where group events are logged at INFO, with Kafka's texts (members joining, leaving and fenced,
   * rebalances, deletions; see group-log.ts). Only handlers and timers log, never replay.
   * Default: nowhere.
   */
  readonly logger?: RuntimeLogger
}

/** The streams heartbeat result with the records widened to every coordinator record. */
export type ShardHeartbeatResult = Omit<StreamsHeartbeatResult, 'records'> & {
  readonly records: CoordinatorRecord[]
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

const isGroupIdEmpty = (groupId: string | null): boolean => groupId === null || groupId === ''

function groupMetadataTombstone(groupId: string): CoordinatorRecord {
  return { type: 'GroupMetadata', key: { group: groupId }, value: null }
}

/** A heartbeat's result with the tombstone of the group its join replaces before its own records. */
function withTombstoneFirst<T extends { readonly records: readonly CoordinatorRecord[] }>(
  groupId: string,
  result: T,
): T {
  // The result's records are the heartbeat's own array: handed on as they are unless a tombstone
  // goes first.
  if (result.records.length === 0) return result
  return { ...result, records: [groupMetadataTombstone(groupId), ...result.records] }
}

export class GroupCoordinatorShard
  implements ShardStateMachine<CoordinatorRecord, ClassicCompletion>, OffsetGroups
{
  readonly #streams: StreamsGroupManagerType
  /** The KIP-848 consumer groups. */
  readonly consumer: ConsumerGroupManager
  /** The classic groups (JoinGroup/SyncGroup/Heartbeat/LeaveGroup); driven by the service. */
  readonly classic: ClassicGroupManager
  readonly #offsets: OffsetMetadataManager
  /** Simple groups: ids with offsets but no group protocol (Kafka: empty classic groups, protocol ""). */
  readonly #simpleGroups = new Set<string>()
  /**
   * An id found in `#simpleGroups` by the last replay of an offset (the string the record carried),
   * or undefined; cleared whenever an id leaves the set. The records of one commit share their
   * group's string, so each after the first is known a simple group without a lookup (a lookup
   * compares the id character by character with the set's equal, but not the same, string).
   */
  #lastSimpleGroup: string | undefined = undefined
  /** Set while a join runs, so a simple group with that id may be replaced by the streams group. */
  #joiningGroupId: string | null = null
  readonly #onStreamsGroupRemoved: ((groupId: string) => void) | undefined
  readonly #streamsConfig: ((groupId: string) => StreamsGroupConfig) | undefined
  readonly #consumerConfig: ((groupId: string) => ConsumerGroupConfig) | undefined
  /** The managers' logger too: a join that converts a group holds their lines (see #convertingJoin). */
  readonly #log: HoldingLogger

  constructor(options: GroupCoordinatorShardOptions) {
    this.#log = new HoldingLogger(options.logger ?? SILENT_LOGGER)
    this.#onStreamsGroupRemoved = options.onStreamsGroupRemoved
    this.#streamsConfig = options.streamsConfig
    this.#consumerConfig = options.consumerConfig
    this.#offsets = new OffsetMetadataManager(this)
    this.#streams = new StreamsGroupManager({
      topics: options.topics,
      assignors: options.assignors,
      timers: options.timers,
      config: options.streamsConfig,
      logger: this.#log,
      isOtherGroupType: (groupId) => this.#isOtherGroup(groupId, 'streams'),
    })
    this.consumer = new ConsumerGroupManager({
      topics: options.topics,
      timers: options.timers,
      config: options.consumerConfig,
      logger: this.#log,
      isOtherGroupType: (groupId) => this.#isOtherGroup(groupId, 'consumer'),
      // The classic manager is built next; these run only once both exist.
      classicGroups: {
        group: (groupId) => this.classic.group(groupId),
        get config() {
          return classic().config
        },
        downgradedGroup: (init) => this.classic.downgradedGroup(init),
      },
    })
    const classic = () => this.classic
    const streams = this.#streams
    const consumer = this.consumer
    this.classic = new ClassicGroupManager({
      config: options.classic,
      logger: this.#log,
      otherGroups: {
        typeOf: (groupId) =>
          streams.group(groupId) !== undefined
            ? 'streams'
            : consumer.group(groupId) !== undefined
              ? 'consumer'
              : undefined,
        isEmpty: (groupId) => streams.isEmpty(groupId) || consumer.isEmpty(groupId),
        // A real stored epoch or the −2 barrier: the plugin may hold a description (KIP-1331 §7).
        // (−1 is NONE, the one value that says the plugin holds nothing.)
        needsCleanupBeforeConversion: (groupId) =>
          (streams.group(groupId)?.storedDescriptionTopologyEpoch ?? -1) !== -1,
        // The other group's timers need no cancelling: each checks the group when it fires.
        deleteEmptyGroupRecords: (groupId) =>
          streams.group(groupId) !== undefined
            ? streams.deleteGroupRecords(groupId).records
            : consumer.deleteGroupRecords(groupId),
      },
    })
  }

  /**
   * Whether the id holds a group of another type than `type` (simple, classic, consumer or
   * streams); never while a join of that id is replacing its simple or empty classic group.
   */
  #isOtherGroup(groupId: string, type: 'streams' | 'consumer'): boolean {
    if (groupId === this.#joiningGroupId) return false
    return (
      this.#simpleGroups.has(groupId) ||
      this.classic.hasGroup(groupId) ||
      (type !== 'consumer' && this.consumer.group(groupId) !== undefined) ||
      (type !== 'streams' && this.#streams.group(groupId) !== undefined)
    )
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
      this.consumer.group(groupId) !== undefined ||
      this.classic.hasGroup(groupId) ||
      this.#simpleGroups.has(groupId)
    )
  }

  isSimpleGroup(groupId: string): boolean {
    return this.#simpleGroups.has(groupId)
  }

  // ---- replay ----

  /** The id is no simple group from now on. */
  #forgetSimpleGroup(groupId: string): void {
    this.#simpleGroups.delete(groupId)
    this.#lastSimpleGroup = undefined
  }

  replay(record: CoordinatorRecord): void {
    switch (record.type) {
      case 'OffsetCommit':
      case 'TxnOffsetCommit':
        this.#offsets.replay(record)
        // Offsets (committed or pending transactional ones) of an id with no group create the
        // simple group, as Kafka's replay does (already one: nothing to look up).
        if (record.value !== null) {
          const group = record.key.group
          // Taken on even when equal: the next records of this commit share this string, which
          // compares at once, where an equal one decoded from another request is compared
          // character by character, for every record.
          if (group === this.#lastSimpleGroup || this.#simpleGroups.has(group)) this.#lastSimpleGroup = group
          else if (
            this.#streams.group(group) === undefined &&
            this.consumer.group(group) === undefined &&
            !this.classic.hasGroup(group)
          ) {
            this.#simpleGroups.add(group)
            this.#lastSimpleGroup = group
          }
        }
        return
      case 'GroupMetadata':
        // A tombstone deletes the classic or simple group; a value is a classic group's checkpoint,
        // which also turns a simple group with that id into the classic group.
        this.#forgetSimpleGroup(record.key.group)
        this.classic.replay(record)
        return
      case 'StreamsGroupMetadata':
      case 'StreamsGroupMemberMetadata':
      case 'StreamsGroupTargetAssignmentMetadata':
      case 'StreamsGroupTargetAssignmentMember':
      case 'StreamsGroupCurrentMemberAssignment':
      case 'StreamsGroupTopology':
        if (record.value !== null) this.#forgetSimpleGroup(record.key.groupId)
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
        if (isConsumerRecord(record)) {
          if (record.value !== null) this.#forgetSimpleGroup(record.key.groupId)
          this.consumer.replay(record)
          return
        }
        // LegacyOffsetCommit, ShareGroupMetadata: never written by this coordinator; a log holding
        // them is replayed without them.
        return
    }
  }

  /**
   * The runtime's first operation on the loaded shard (Kafka's onLoaded): the session timer of every
   * streams and classic member, the rebalance timeout of streams members revoking tasks, and a
   * rebalance of classic groups above `group.max.size`.
   */
  onLoaded(nowMs: number): GroupCoordinatorResult<void> {
    const streamsTimers = this.#streams.onLoaded(STREAMS_GROUP_CONFIG_DEFAULTS)
    const classic = this.classic.onLoaded(nowMs)
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    timers.add(streamsTimers)
    timers.add(this.consumer.onLoaded().intents())
    timers.add(classic.timers)
    return {
      records: classic.records,
      response: undefined,
      timers: timers.intents(),
      completions: classic.completions,
    }
  }

  onNewTopicsImage(image: TopicsImage, changedTopics?: Iterable<string>): void {
    this.#streams.onNewTopicsImage(image, changedTopics)
    this.consumer.onNewTopicsImage(image, changedTopics)
  }

  /** Tombstones for every group's offsets of the deleted topics (Kafka's `onTopicsDeleted`). */
  onTopicsDeleted(deleted: readonly DeletedTopic[]): CoordinatorRecord[] {
    return this.#offsets.onTopicsDeleted(deleted)
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
    const groupId = request.groupId
    const replacing = this.#replacing(groupId, request.memberEpoch === 0, this.#streams.group(groupId))
    const converting = replacing && this.classic.hasGroup(groupId)
    let result: ShardHeartbeatResult | undefined
    if (converting) this.#log.hold()
    try {
      result = this.#streams.streamsGroupHeartbeat(ctx, request)
    } finally {
      this.#joiningGroupId = null
      if (converting) {
        const converted = result !== undefined && result.records.length > 0
        this.#convertingJoinDone(groupId, converted ? 'the empty classic group to a streams group' : null)
      }
    }
    return replacing ? withTombstoneFirst(groupId, result) : result
  }

  /**
   * The end of a join that may have converted a group (its managers' lines were held): the
   * conversion line, when it did (`what` not null), goes before them, as Kafka logs it.
   */
  #convertingJoinDone(groupId: string, what: string | null): void {
    this.#log.release(
      what === null ? undefined : (log) => log.info({ groupId }, `[GroupId ${groupId}] Converted ${what}.`),
    )
  }

  /**
   * Before a modern group's heartbeat: whether it is a join on an id that holds a simple group or an
   * empty classic group (and no group of the heartbeat's type), which it then replaces. That group's
   * tombstone goes first (see {@link withTombstoneFirst}), and while the heartbeat runs the id does
   * not count as another group type (the caller resets `#joiningGroupId` once it has run).
   */
  #replacing(groupId: string, joining: boolean, own: unknown): boolean {
    const replacing =
      joining &&
      own === undefined &&
      (this.#simpleGroups.has(groupId) || (this.classic.hasGroup(groupId) && this.classic.isEmpty(groupId)))
    this.#joiningGroupId = replacing ? groupId : null
    return replacing
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
   * The KIP-848 heartbeat. A join on an id that holds a simple group or an empty classic group
   * replaces it, as a streams join does (that group is tombstoned first; its offsets stay).
   */
  consumerGroupHeartbeat(
    ctx: ConsumerHeartbeatContext,
    request: ConsumerGroupHeartbeatRequest,
  ): GroupCoordinatorResult<ConsumerGroupHeartbeatResponse> {
    const groupId = request.groupId
    const upgrading =
      request.memberEpoch === 0 &&
      this.consumer.group(groupId) === undefined &&
      this.classic.hasGroup(groupId) &&
      !this.classic.isEmpty(groupId)
    const replacing = this.#replacing(groupId, request.memberEpoch === 0, this.consumer.group(groupId))
    const converting = upgrading || (replacing && this.classic.hasGroup(groupId))
    let joined: ConsumerHeartbeatResult | undefined
    if (converting) this.#log.hold()
    try {
      joined = this.consumer.consumerGroupHeartbeat(ctx, request)
    } finally {
      this.#joiningGroupId = null
      if (converting) {
        const converted =
          joined !== undefined && joined.response.errorCode === ErrorCode.NONE && joined.records.length > 0
        this.#convertingJoinDone(
          groupId,
          !converted
            ? null
            : upgrading
              ? 'the classic group to a consumer group'
              : 'the empty classic group to a consumer group',
        )
      }
    }
    const result = replacing ? withTombstoneFirst(groupId, joined) : joined
    if (!upgrading || result.response.errorCode !== ErrorCode.NONE || result.records.length === 0)
      return result
    // Online upgrade: the classic group's tombstone goes first; its parked requests are answered
    // REBALANCE_IN_PROGRESS and its timers cancelled (Kafka's convertToConsumerGroup).
    const upgraded = this.classic.upgradeToConsumerGroup(groupId)
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    for (const key of upgraded.cancel) timers.cancel(key)
    timers.add(result.timers)
    return {
      ...result,
      records: [groupMetadataTombstone(groupId), ...result.records],
      timers: timers.intents(),
      completions: upgraded.completions,
    }
  }

  // ---- JoinGroup (11), SyncGroup (14), Heartbeat (12), LeaveGroup (13) ----

  /**
   * A JoinGroup: a non-empty consumer group answers it for its classic-protocol members (Kafka's
   * classicGroupJoinToConsumerGroup); anything else is the classic manager's (which converts an
   * empty consumer or streams group). A request that fails Kafka's service checks (group id,
   * session timeout) is the classic manager's too, which answers it before any group lookup.
   */
  classicGroupJoin(ctx: ClassicJoinContext, request: JoinGroupRequest): ClassicResult<ClassicJoinOutcome> {
    const group = this.classic.failsRequestChecks(request) ? undefined : this.consumer.group(request.groupId)
    if (group === undefined || group.size === 0) return this.classic.classicGroupJoin(ctx, request)
    const r = this.consumer.classicGroupJoin(
      {
        ...ctx,
        newMemberUuid: ctx.newConsumerMemberId ?? ctx.newMemberUuid,
        config: this.#consumerConfig?.(request.groupId) ?? CONSUMER_GROUP_CONFIG_DEFAULTS,
      },
      request,
    )
    return { ...r, response: { conversionRequired: null } }
  }

  classicGroupSync(ctx: ClassicSyncContext, request: SyncGroupRequest): ClassicResult<void> {
    const group = request.groupId === '' ? undefined : this.consumer.group(request.groupId)
    if (group === undefined) return this.classic.classicGroupSync(ctx, request)
    if (
      group.size === 0 ||
      (ctx.apiVersion >= 5 && (request.protocolType === null || request.protocolName === null))
    ) {
      const errorCode = group.size === 0 ? ErrorCode.UNKNOWN_MEMBER_ID : ErrorCode.INCONSISTENT_GROUP_PROTOCOL
      return {
        records: [],
        response: undefined,
        timers: NO_TIMERS,
        completions: [
          { api: 'SyncGroup', token: ctx.token, response: createSyncGroupResponse({ errorCode }) },
        ],
      }
    }
    return this.consumer.classicGroupSync(ctx, request)
  }

  classicGroupSyncWriteFailed(
    groupId: string,
    generationId: number,
    errorCode: number,
    nowMs: number,
  ): ClassicResult<void> {
    return this.classic.classicGroupSyncWriteFailed(groupId, generationId, errorCode, nowMs)
  }

  classicGroupJoinWriteFailed(groupId: string, errorCode: number): ClassicResult<void> {
    return this.classic.classicGroupJoinWriteFailed(groupId, errorCode)
  }

  classicGroupHeartbeat(ctx: ClassicOpContext, request: HeartbeatRequest): ClassicResult<HeartbeatResponse> {
    if (request.groupId === '' || this.consumer.group(request.groupId) === undefined)
      return this.classic.classicGroupHeartbeat(ctx, request)
    return this.consumer.classicGroupHeartbeat({ ...ctx, token: 0 }, request)
  }

  classicGroupLeave(ctx: ClassicOpContext, request: LeaveGroupRequest): ClassicResult<LeaveGroupResponse> {
    if (request.groupId === '' || this.consumer.group(request.groupId) === undefined)
      return this.classic.classicGroupLeave(ctx, request)
    return this.consumer.classicGroupLeave({ ...ctx, token: 0 }, request)
  }

  consumerGroupDescribe(
    groupIds: readonly string[],
    apiVersion?: number,
  ): ConsumerGroupDescribeResponseDescribedGroup[] {
    return this.consumer.consumerGroupDescribe(groupIds, apiVersion)
  }

  // ---- ListGroups (16) ----

  listGroups(
    statesFilter: readonly string[],
    typesFilter: readonly string[],
  ): ListGroupsResponseListedGroup[] {
    const out: ListGroupsResponseListedGroup[] = [
      ...this.#streams.listGroups(statesFilter, typesFilter).map((g) => ({ ...g })),
      ...this.classic.listGroups(statesFilter, typesFilter).map((g) => ({ ...g })),
      ...this.consumer.listGroups(statesFilter, typesFilter).map((g) => ({ ...g })),
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
        this.#streams.group(groupId) !== undefined || this.consumer.group(groupId) !== undefined
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
  deleteGroups(
    groupIds: readonly string[],
  ): GroupCoordinatorResult<DeleteGroupsResponseDeletableGroupResult[]> {
    const records: CoordinatorRecord[] = []
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    const results: DeleteGroupsResponseDeletableGroupResult[] = []
    const seen = new Set<string>()
    const deleted: string[] = []
    let deletedOffsets = 0
    for (const groupId of groupIds) {
      const result = (errorCode: number): void => {
        results.push({ groupId, errorCode, errorMessage: null })
      }
      const offsetTombstones = (): CoordinatorRecord[] => {
        const tombstones = this.#offsets.deleteAllOffsetsRecords(groupId)
        deleted.push(groupId)
        deletedOffsets += tombstones.length
        return tombstones
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
        let groupRecords!: ReturnType<StreamsGroupManagerType['deleteGroupRecords']>
        const error = errorCodeOf(() => {
          groupRecords = this.#streams.deleteGroupRecords(groupId)
        })
        if (error !== ErrorCode.NONE) {
          result(error)
          continue
        }
        records.push(...offsetTombstones(), ...groupRecords.records)
        timers.add(groupRecords.timers)
        result(ErrorCode.NONE)
      } else if (this.consumer.group(groupId) !== undefined) {
        let groupRecords!: CoordinatorRecord[]
        const error = errorCodeOf(() => {
          groupRecords = this.consumer.deleteGroupRecords(groupId)
        })
        if (error !== ErrorCode.NONE) {
          result(error)
          continue
        }
        records.push(...offsetTombstones(), ...groupRecords)
        result(ErrorCode.NONE)
      } else if (this.classic.hasGroup(groupId)) {
        let groupRecords!: ReturnType<ClassicGroupManager['deleteGroupRecords']>
        const error = errorCodeOf(() => {
          groupRecords = this.classic.deleteGroupRecords(groupId)
        })
        if (error !== ErrorCode.NONE) {
          result(error)
          continue
        }
        records.push(...offsetTombstones(), ...groupRecords.records)
        timers.add(groupRecords.timers)
        result(ErrorCode.NONE)
      } else if (this.#simpleGroups.has(groupId)) {
        records.push(...offsetTombstones(), groupMetadataTombstone(groupId))
        result(ErrorCode.NONE)
      } else {
        result(ErrorCode.GROUP_ID_NOT_FOUND)
      }
    }
    if (deleted.length > 0) {
      this.#log.info(
        { groupIds: deleted, offsets: deletedOffsets },
        `The following groups were deleted: ${deleted.join(', ')}. A total of ${deletedOffsets} offsets were removed.`,
      )
    }
    return { records, response: results, timers: timers.intents() }
  }

  // ---- OffsetCommit (8), OffsetFetch (9), OffsetDelete (47): the offsets manager ----

  commitOffsets(
    ctx: OffsetCommitContext,
    request: OffsetCommitInput,
  ): GroupCoordinatorResult<OffsetCommitResponseOffsetCommitResponseTopic[]> {
    const result = this.#offsets.commitOffset(ctx, request)
    if (result.records.length > 0 && request.generationIdOrMemberEpoch < 0)
      this.#logAdminCommit(request, result.records.length)
    logCommittedOffsets(this.#log, request.groupId, request.memberId, false, result.records)
    return result
  }

  /**
   * A commit without a generation: one that creates a simple group (Kafka's line), or one into a
   * consumer, classic or streams group, which the group accepts only while it is empty: an offset
   * reset. Commits into an existing simple group (a client that assigns partitions itself commits
   * so all the time) are not logged.
   */
  #logAdminCommit(request: OffsetCommitInput, offsets: number): void {
    const groupId = request.groupId
    if (this.#simpleGroups.has(groupId)) return
    if (!this.hasGroup(groupId)) {
      this.#log.info(
        { groupId },
        `[GroupId ${groupId}] Creating a simple consumer group via manual offset commit.`,
      )
      return
    }
    this.#log.info(
      { groupId, offsets },
      `[GroupId ${groupId}] Committed ${offsets} offsets without a generation (offset reset).`,
    )
  }

  fetchOffsets(request: OffsetFetchGroupInput): OffsetFetchResponseOffsetFetchResponseGroup {
    return this.#offsets.fetchOffsets(request)
  }

  offsetDelete(request: OffsetDeleteInput): GroupCoordinatorResult<OffsetDeleteResult> {
    const result = this.#offsets.deleteOffsets(request)
    const offsets = result.records.filter((r) => r.type === 'OffsetCommit').length
    if (offsets > 0) {
      const groupId = request.groupId
      this.#log.info(
        { groupId, offsets, topics: request.topics.map((t) => t.name) },
        `[GroupId ${groupId}] Deleted ${offsets} offsets.`,
      )
    }
    return result
  }

  // ---- TxnOffsetCommit (28) and transaction markers on `__consumer_offsets` ----

  commitTransactionalOffsets(
    ctx: OffsetCommitContext,
    request: TxnOffsetCommitInput,
  ): GroupCoordinatorResult<TxnOffsetCommitResponseTxnOffsetCommitResponseTopic[]> {
    const result = this.#offsets.commitTransactionalOffset(ctx, request)
    logCommittedOffsets(this.#log, request.groupId, request.memberId, true, result.records)
    return result
  }

  /** Drops a producer's pending offsets of one epoch in a group (a TxnOffsetCommit that lost a race). */
  dropPendingOffsets(
    groupId: string,
    producerId: bigint,
    producerEpoch: number,
  ): GroupCoordinatorResult<number> {
    return this.#offsets.dropPendingOffsets(groupId, producerId, producerEpoch)
  }

  /** A transaction marker for this shard's `__consumer_offsets` partition. */
  completeTransaction(
    producerId: bigint,
    producerEpoch: number,
    committed: boolean,
  ): GroupCoordinatorResult<TransactionCompletion> {
    return this.#offsets.completeTransaction(producerId, producerEpoch, committed)
  }

  /**
   * The group checks of a TxnOffsetCommit (Kafka's `validateTransactionalOffsetCommit`): the
   * group's own checks with the transactional flag; an unknown group accepts a commit without a
   * generation (the simple group is created) and answers GROUP_ID_NOT_FOUND (v6+) or
   * ILLEGAL_GENERATION otherwise; STALE_MEMBER_EPOCH is ILLEGAL_GENERATION below v6.
   */
  validateTransactionalOffsetCommit(request: TxnOffsetCommitInput, apiVersion: number): number {
    const error =
      this.#validateGroupCommit(request, apiVersion, true) ??
      (request.generationIdOrMemberEpoch < 0
        ? ErrorCode.NONE
        : apiVersion >= 6
          ? ErrorCode.GROUP_ID_NOT_FOUND
          : ErrorCode.ILLEGAL_GENERATION)
    return error === ErrorCode.STALE_MEMBER_EPOCH && apiVersion < 6 ? ErrorCode.ILLEGAL_GENERATION : error
  }

  // ---- the groups, as the offsets manager asks about them (OffsetGroups) ----

  /** The error of the whole commit, or NONE (Kafka's `validateOffsetCommit` of the group). */
  validateOffsetCommit(request: OffsetCommitInput, apiVersion: number): number {
    const error = this.#validateGroupCommit(request, apiVersion, false)
    if (error !== null) return error
    // No group: a commit without generation creates the simple group (when its records replay).
    if (request.generationIdOrMemberEpoch < 0) return ErrorCode.NONE
    return apiVersion >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION
  }

  /**
   * A commit's error from the group it names (streams, consumer, classic or simple), for
   * OffsetCommit and TxnOffsetCommit alike; null when no group has that id.
   */
  #validateGroupCommit(
    request: OffsetCommitInput | TxnOffsetCommitInput,
    apiVersion: number,
    isTransactional: boolean,
  ): number | null {
    const groupId = request.groupId
    const topics = () =>
      request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) }))
    if (this.#streams.group(groupId) !== undefined) {
      return errorCodeOf(() =>
        this.#streams.validateOffsetCommit(groupId, {
          memberId: request.memberId,
          memberEpoch: request.generationIdOrMemberEpoch,
          apiVersion,
          isTransactional,
          topics: topics(),
        }),
      )
    }
    if (this.consumer.group(groupId) !== undefined) {
      return errorCodeOf(() =>
        this.consumer.validateOffsetCommit(groupId, {
          memberId: request.memberId,
          groupInstanceId: request.groupInstanceId,
          memberEpoch: request.generationIdOrMemberEpoch,
          apiVersion,
          isTransactional,
          topics: topics(),
        }),
      )
    }
    if (this.classic.hasGroup(groupId)) {
      return errorCodeOf(() =>
        this.classic.validateOffsetCommit(groupId, {
          memberId: request.memberId,
          groupInstanceId: request.groupInstanceId,
          generationIdOrMemberEpoch: request.generationIdOrMemberEpoch,
          isTransactional,
        }),
      )
    }
    if (this.#simpleGroups.has(groupId)) {
      // An empty classic group without members accepts commits without a generation; any member id
      // is unknown to it (Kafka's ClassicGroup.validateOffsetCommit).
      return request.generationIdOrMemberEpoch < 0 ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID
    }
    return null
  }

  /** Member and epoch checks of a fetch (streams: member and exact epoch); none for other groups. */
  validateOffsetFetch(request: OffsetFetchGroupInput): number {
    const groupId = request.groupId
    if (this.#streams.group(groupId) !== undefined)
      return errorCodeOf(() =>
        this.#streams.validateOffsetFetch(groupId, request.memberId, request.memberEpoch),
      )
    if (this.consumer.group(groupId) !== undefined)
      return errorCodeOf(() =>
        this.consumer.validateOffsetFetch(groupId, request.memberId, request.memberEpoch),
      )
    if (this.classic.hasGroup(groupId)) return errorCodeOf(() => this.classic.validateOffsetFetch(groupId))
    return ErrorCode.NONE
  }

  validateOffsetDelete(groupId: string): number {
    if (!this.hasGroup(groupId)) return ErrorCode.GROUP_ID_NOT_FOUND
    if (this.classic.hasGroup(groupId)) return errorCodeOf(() => this.classic.validateOffsetDelete(groupId))
    return ErrorCode.NONE
  }

  isSubscribedToTopic(groupId: string, topic: string): boolean {
    return (
      this.#streams.isSubscribedToTopic(groupId, topic) ||
      this.consumer.isSubscribedToTopic(groupId, topic) ||
      this.classic.isSubscribedToTopic(groupId, topic)
    )
  }

  // ---- expiry (Kafka's cleanupGroupMetadata) ----

  /**
   * The expiry sweep: per group, expired offsets are tombstoned; a group whose offsets are then all
   * gone is deleted when it is empty (a simple group always is) and, for a streams or classic group,
   * when `shouldExpire` allows it.
   */
  cleanupGroupMetadata(nowMs: number, options: CleanupOptions): GroupCoordinatorResult<CleanupResult> {
    const records: CoordinatorRecord[] = []
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    const deletedGroups: string[] = []
    let expiredOffsets = 0
    const groupIds = new Set([
      ...this.#streams.groupIds(),
      ...this.consumer.groupIds(),
      ...this.classic.groupIds(),
      ...this.#simpleGroups,
      ...this.#offsets.groupIds(),
    ])
    for (const groupId of groupIds) {
      const expired = this.#offsets.expiredOffsetsRecords(
        groupId,
        nowMs,
        options.retentionMs,
        (topic) => this.isSubscribedToTopic(groupId, topic),
        this.classic.hasGroup(groupId) ? this.classic.offsetExpiry(groupId) : undefined,
      )
      records.push(...expired.records)
      expiredOffsets += expired.records.length
      if (expired.records.length > 0) {
        this.#log.debug(
          { groupId, offsets: expired.records.length },
          `[GroupId ${groupId}] Expired ${expired.records.length} offsets.`,
        )
      }
      if (!expired.allOffsetsExpired) continue
      if (this.#streams.group(groupId) !== undefined) {
        if (!this.#streams.isEmpty(groupId) || !this.#streams.shouldExpire(groupId, options.pluginConfigured))
          continue
        const deleted = this.#streams.deleteGroupRecords(groupId)
        records.push(...deleted.records)
        timers.add(deleted.timers)
        deletedGroups.push(groupId)
      } else if (this.consumer.group(groupId) !== undefined) {
        if (!this.consumer.isEmpty(groupId)) continue
        records.push(...this.consumer.deleteGroupRecords(groupId))
        deletedGroups.push(groupId)
      } else if (this.classic.hasGroup(groupId)) {
        if (!this.classic.shouldExpire(groupId)) continue
        const deleted = this.classic.deleteGroupRecords(groupId)
        records.push(...deleted.records)
        timers.add(deleted.timers)
        deletedGroups.push(groupId)
      } else if (this.#simpleGroups.has(groupId)) {
        records.push(groupMetadataTombstone(groupId))
        deletedGroups.push(groupId)
      }
    }
    return { records, response: { expiredOffsets, deletedGroups }, timers: timers.intents() }
  }
}
