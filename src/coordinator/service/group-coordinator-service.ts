/**
 * The group coordinator service (Kafka's GroupCoordinatorService): the asynchronous layer around the
 * shards. It builds the CoordinatorRuntime over the record store, loads every shard at start,
 * routes each API to a write or read operation on the shard that owns the group
 * (`shardFor(groupId)`), runs the timers the shards ask for, creates the internal topics streams
 * groups need, runs the periodic expiry sweep, and turns failures into Kafka error codes in one
 * place (./errors.ts). Classic groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) are served by
 * {@link GroupCoordinatorService.classicGroups}, which runs its operations as writes on these shards.
 */
import { randomUUID } from 'node:crypto'
import { randomUuid } from '../../uuid.js'
import { channel } from 'node:diagnostics_channel'
import type { GuardedTopologyDescriptionPlugin } from '../../plugin/guard.js'
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import type { CoordinatorRecord } from '../../protocol/generated/coordinator-records.js'
import {
  type ConsumerGroupDescribeResponseDescribedGroup,
  createConsumerGroupDescribeResponse,
} from '../../protocol/generated/messages/ConsumerGroupDescribeResponse.js'
import {
  type ConsumerGroupHeartbeatResponse,
  createConsumerGroupHeartbeatResponse,
} from '../../protocol/generated/messages/ConsumerGroupHeartbeatResponse.js'
import type { DeleteGroupsResponseDeletableGroupResult } from '../../protocol/generated/messages/DeleteGroupsResponse.js'
import type { DescribeGroupsResponseDescribedGroup } from '../../protocol/generated/messages/DescribeGroupsResponse.js'
import type { ListGroupsResponseListedGroup } from '../../protocol/generated/messages/ListGroupsResponse.js'
import type { OffsetCommitResponseOffsetCommitResponseTopic } from '../../protocol/generated/messages/OffsetCommitResponse.js'
import type { OffsetFetchResponseOffsetFetchResponseGroup } from '../../protocol/generated/messages/OffsetFetchResponse.js'
import {
  createStreamsGroupDescribeResponseDescribedGroup,
  type StreamsGroupDescribeResponseDescribedGroup,
} from '../../protocol/generated/messages/StreamsGroupDescribeResponse.js'
import type { TxnOffsetCommitResponseTxnOffsetCommitResponseTopic } from '../../protocol/generated/messages/TxnOffsetCommitResponse.js'
import type { StreamsGroupHeartbeatRequest } from '../../protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import type { StreamsGroupTopologyDescriptionUpdateRequest } from '../../protocol/generated/messages/StreamsGroupTopologyDescriptionUpdateRequest.js'
import {
  createStreamsGroupHeartbeatResponse,
  type StreamsGroupHeartbeatResponse,
} from '../../protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { GROUP_METADATA_TOPIC_NAME } from '../../protocol/topics.js'
import { type RuntimeClock, systemClock, type TimerHandle } from '../runtime/clock.js'
import { shardFor } from '../runtime/hash.js'
import { CoordinatorRuntime } from '../runtime/runtime.js'
import type { ReadOperation, RuntimeLogger, WriteOperation } from '../runtime/types.js'
import type { ClassicCompletion } from '../shard/classic/types.js'
import {
  type CleanupResult,
  GroupCoordinatorShard,
  type ShardHeartbeatResult,
} from '../shard/group-coordinator-shard.js'
import type {
  OffsetCommitInput,
  OffsetDeleteInput,
  OffsetDeleteResult,
  OffsetFetchGroupInput,
  TransactionCompletion,
  TxnOffsetCommitInput,
} from '../shard/offsets/offset-metadata-manager.js'
import type { GroupCoordinatorResult } from '../shard/result.js'
import { TaskAssignorRegistry } from '../shard/streams/assignor/assignor-selection.js'
import type { StreamsGroupConfig } from '../shard/streams/config.js'
import { type TopicsImage, TopicStatusCode } from '../shard/streams/configured-topology.js'
import type { StreamsHeartbeatContext, TaskAssignorSelector } from '../shard/streams/manager.js'
import {
  type HeartbeatGateInputs,
  heartbeatGateInputs,
  storedDescriptionTopologyEpochs,
} from '../shard/topology-description.js'
import type { RecordStore } from '../storage/types.js'
import { ClassicGroupsService } from './classic-groups.js'
import {
  type BrokerConsumerGroupConfig,
  classicGroupConfigFrom,
  consumerGroupConfigFrom,
  consumerGroupConfigOf,
  type GroupCoordinatorConfig,
  streamsGroupConfigFrom,
} from './config.js'
import type { ConsumerGroupConfig } from '../shard/consumer/config.js'
import type { ConsumerGroupHeartbeatRequest } from '../../protocol/generated/messages/ConsumerGroupHeartbeatRequest.js'
import { toKafkaErrorCode } from './errors.js'
import { InternalTopicCreator } from './internal-topic-creator.js'
import { coordinatorRecordSerde } from './records.js'
import { CatalogTopicsImage, type CoordinatorTopics } from './topics-image.js'
import { GroupConfigManager } from './group-config-manager.js'
import type { BackoffSettings } from './topology-description-backoff.js'
import {
  TOPOLOGY_DESCRIPTION_METRICS_CHANNEL as GROUP_COORDINATOR_METRICS_CHANNEL,
  TopologyDescriptionManager,
  type TopologyDescriptionSensors,
  type TopologyDescriptionUpdateResult,
} from './topology-description-manager.js'

export interface GroupCoordinatorServiceOptions {
  /** An opened store. */
  readonly store: RecordStore
  /** Whether `close()` closes the store (default false: the server owns it). */
  readonly closeStore?: boolean
  readonly config: GroupCoordinatorConfig
  readonly topics: CoordinatorTopics
  readonly logger?: RuntimeLogger
  readonly clock?: RuntimeClock
  /** Default: the assignors named by `group.streams.assignors`. */
  readonly assignors?: TaskAssignorSelector
  /** offset.metadata.max.bytes (Kafka's default 4096). */
  readonly offsetMetadataMaxBytes?: number
  /**
   * The loaded topology description plugin (KIP-1331), already configured and guarded; null or
   * absent: the feature is off. The service closes it at shutdown.
   */
  readonly topologyDescriptionPlugin?: GuardedTopologyDescriptionPlugin | null
  /** Where Kafka's topology-description sensors go (default: the metrics diagnostics channel). */
  readonly topologyDescriptionSensors?: TopologyDescriptionSensors
  /** Where Kafka's group and offset sensors go (default: the metrics diagnostics channel). */
  readonly groupSensors?: GroupCoordinatorSensors
  /** Draws for the back-off jitter (default Math.random). */
  readonly random?: () => number
  /** Back-off constants other than Kafka's (tests only). */
  readonly topologyDescriptionBackoff?: BackoffSettings
  /**
   * New member ids (consumer members without one, classic members). By default a consumer group
   * member's is a Kafka Uuid (`Uuid.randomUuid()`, 22 characters) and a classic member's
   * `<client id>-<crypto.randomUUID>`, as Kafka's. The deterministic simulation draws them from
   * its seed.
   */
  readonly newUuid?: () => string
  /** See CoordinatorRuntimeOptions.onShardReplayed (inspection only). */
  readonly onShardReplayed?: (shardId: number, shard: GroupCoordinatorShard) => void
  /**
   * See CoordinatorRuntimeOptions.appendLinger (default `microtask`; the server runs `turn`, the
   * deterministic simulation the default).
   */
  readonly appendLinger?: 'microtask' | 'turn'
}

export interface StreamsHeartbeatRequestContext {
  readonly apiVersion: number
  readonly clientId: string
  /** e.g. "/127.0.0.1" */
  readonly clientHost: string
  /**
   * Of the internal topics a heartbeat needs created, those the caller may not create (the server's
   * authorization: CREATE on the cluster or on each topic). When any is refused nothing is created and
   * the MISSING_INTERNAL_TOPICS detail names them. Absent: every creation is allowed.
   */
  readonly unauthorizedToCreate?: (topics: readonly string[]) => readonly string[]
  /**
   * ConsumerGroupHeartbeat: of the topics the group's subscription patterns match, those the caller
   * may DESCRIBE (the server's authorization). Absent: every topic.
   */
  readonly describableTopics?: (topics: readonly string[]) => readonly string[]
}

/**
 * Groups by type (`classic`, `consumer`, `streams`), and by type and state; the committed offsets
 * of every group.
 */
export interface GroupCounts {
  readonly byType: ReadonlyMap<string, number>
  readonly byTypeAndState: ReadonlyMap<string, ReadonlyMap<string, number>>
  readonly offsets: number
}

/**
 * Kafka's group coordinator sensors other than the topology-description ones, by metric base name
 * (each a Meter: `<base>-count` and `<base>-rate` in `group-coordinator-metrics`).
 */
export type GroupCoordinatorSensor =
  | 'consumer-group-rebalance'
  | 'streams-group-rebalance'
  | 'group-completed-rebalance'
  | 'offset-commit'
  | 'offset-expiration'
  | 'offset-deletion'

export interface GroupCoordinatorSensors {
  /** Adds `value` to the sensor (Kafka's Meter records a sum). */
  record(sensor: GroupCoordinatorSensor, value: number): void
}

const sensorChannel = channel(GROUP_COORDINATOR_METRICS_CHANNEL)

/** Publishes `{ sensor, value }` on the group coordinator's metrics channel (the server subscribes). */
const channelSensors: GroupCoordinatorSensors = {
  record(sensor, value) {
    if (sensorChannel.hasSubscribers) sensorChannel.publish({ sensor, value })
  },
}

/** The group epoch records (ConsumerGroupMetadata with a value) among an operation's records. */
function countGroupEpochBumps(
  records: readonly CoordinatorRecord[],
  type: 'ConsumerGroupMetadata' | 'StreamsGroupMetadata',
): number {
  let n = 0
  for (const r of records) if (r.type === type && r.value !== null) n++
  return n
}

/** The records that write an offset, committed or pending in a transaction. */
function countOffsetCommits(records: readonly CoordinatorRecord[]): number {
  let n = 0
  for (const r of records) {
    if ((r.type === 'OffsetCommit' || r.type === 'TxnOffsetCommit') && r.value !== null) n++
  }
  return n
}

/**
 * The committed offsets a write removes: its OffsetCommit tombstones (a pending transactional
 * offset's tombstone goes with its partition's and is not counted again).
 */
function countOffsetTombstones(records: readonly CoordinatorRecord[]): number {
  let n = 0
  for (const r of records) if (r.type === 'OffsetCommit' && r.value === null) n++
  return n
}

export interface ListGroupsResult {
  readonly errorCode: number
  readonly groups: ListGroupsResponseListedGroup[]
}

const HEARTBEAT = 'streams-group-heartbeat'
const CONSUMER_HEARTBEAT = 'consumer-group-heartbeat'
const NOTHING_CHANGED: readonly string[] = Object.freeze([])

const silentLogger: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} }

type Shard = GroupCoordinatorShard
type Runtime = CoordinatorRuntime<Shard, CoordinatorRecord, ClassicCompletion>
/** A write operation on a group coordinator shard. */
export type GroupWriteOperation<T> = WriteOperation<Shard, CoordinatorRecord, T, ClassicCompletion>

/**
 * Cleans up what an empty streams group holds outside the shard before a classic JoinGroup turns
 * its id into a classic group (KIP-1331: the group's stored topology description). A rejection
 * fails that JoinGroup with REBALANCE_IN_PROGRESS and the request's member id (or a
 * StreamsConversionError's own code); the client retries. It may resolve with a finalize step, run
 * after the join that follows has been written, whatever that join answered.
 */
export type StreamsToClassicConversionCleanup = (groupId: string) => Promise<void | (() => Promise<void>)>

export class GroupCoordinatorService {
  readonly #runtime: Runtime
  readonly #config: GroupCoordinatorConfig
  readonly #streamsConfig: StreamsGroupConfig
  readonly #consumerConfig: BrokerConsumerGroupConfig
  readonly #sensors: GroupCoordinatorSensors
  readonly #topics: CoordinatorTopics
  readonly #log: RuntimeLogger
  readonly #clock: RuntimeClock
  readonly #newUuid: () => string
  readonly #newConsumerMemberId: () => string
  readonly #numShards: number
  readonly #maxMetadataSize: number
  /** The topics image every shard reads; refreshed from the catalog before streams operations. */
  readonly #image: CatalogTopicsImage
  readonly #internalTopics: InternalTopicCreator
  readonly #background = new Set<Promise<unknown>>()
  #sweepTimer: TimerHandle | undefined
  #stopTopicListener: (() => void) | undefined
  /** Whether the catalog tells the service of its changes (see start). */
  #catalogNotifies = false
  /** `group.coordinator.rebalance.protocols` includes streams. */
  readonly #streamsEnabled: boolean
  #closed: Promise<void> | undefined
  #conversionCleanup: StreamsToClassicConversionCleanup | undefined
  /** See #shardHeartbeatContext. */
  #heartbeatContext:
    | { -readonly [K in keyof StreamsHeartbeatContext]: StreamsHeartbeatContext[K] }
    | undefined
  /** KIP-1331: solicitation, push, describe attachment, pre-delete and the cleanup cycle. */
  readonly topologyDescriptions: TopologyDescriptionManager
  /** JoinGroup, SyncGroup, Heartbeat and LeaveGroup (the handlers reach it here). */
  readonly classicGroups: ClassicGroupsService
  /**
   * The configs set on groups (DescribeConfigs / IncrementalAlterConfigs on GROUP resources); the
   * shards read each group's effective streams settings from it, as Kafka's shard reads its
   * GroupConfigManager.
   */
  readonly groupConfigs: GroupConfigManager

  private constructor(options: GroupCoordinatorServiceOptions) {
    this.#config = options.config
    this.#streamsConfig = streamsGroupConfigFrom(options.config)
    this.#consumerConfig = consumerGroupConfigFrom(options.config)
    this.#sensors = options.groupSensors ?? channelSensors
    this.#streamsEnabled = options.config.groupCoordinatorRebalanceProtocols.includes('streams')
    this.#topics = options.topics
    this.#log = options.logger ?? silentLogger
    this.#clock = options.clock ?? systemClock
    this.#newUuid = options.newUuid ?? (() => randomUUID())
    this.#newConsumerMemberId = options.newUuid ?? randomUuid
    this.#numShards = options.config.offsetsTopicNumPartitions
    this.#maxMetadataSize = options.offsetMetadataMaxBytes ?? options.config.offsetMetadataMaxBytes ?? 4096
    const assignors =
      options.assignors ?? TaskAssignorRegistry.fromConfig(options.config.groupStreamsAssignors)
    this.#image = new CatalogTopicsImage(options.topics)
    const image: TopicsImage = this.#image
    this.#internalTopics = new InternalTopicCreator({
      catalog: options.topics,
      image: this.#image,
      logger: this.#log,
      onCreated: () => this.#refreshTopics(),
    })
    const classic = classicGroupConfigFrom(options.config)
    this.groupConfigs = new GroupConfigManager({
      store: options.store,
      context: {
        broker: options.config,
        assignorNames:
          assignors instanceof TaskAssignorRegistry
            ? assignors.names()
            : options.config.groupStreamsAssignors,
      },
      baseStreamsConfig: this.#streamsConfig,
      logger: this.#log,
    })
    const groupConfigs = this.groupConfigs
    this.#image.refresh()
    this.#runtime = new CoordinatorRuntime<Shard, CoordinatorRecord, ClassicCompletion>({
      store: options.store,
      numShards: this.#numShards,
      newShard: (_shardId, timer) =>
        new GroupCoordinatorShard({
          topics: image,
          assignors,
          classic,
          timers: timer,
          streamsConfig: (groupId) => groupConfigs.streamsConfig(groupId),
          consumerConfig: (groupId) => this.consumerGroupConfig(groupId),
          // Topograph D3: back-off entries leave with their group.
          onStreamsGroupRemoved: (groupId) => this.topologyDescriptions.onGroupRemoved(groupId),
          // Group events (joins, leaves, rebalances, deletions) at INFO, with Kafka's texts.
          logger: this.#log,
        }),
      serde: coordinatorRecordSerde,
      clock: this.#clock,
      logger: this.#log,
      logTopic: GROUP_METADATA_TOPIC_NAME,
      closeStore: options.closeStore ?? false,
      // Kafka's write timeout of every group coordinator write.
      writeTimeoutMs: options.config.offsetsCommitTimeoutMs,
      // Reads wait behind the writes of their shard: they get the same bound.
      readTimeoutMs: options.config.offsetsCommitTimeoutMs,
      // Parked classic JoinGroup / SyncGroup requests are answered once their answer is stored.
      complete: (_shardId, completion, failure) => this.classicGroups.complete(completion, failure),
      onReload: (shardId) =>
        this.classicGroups.shardReloaded((groupId) => this.shardFor(groupId) === shardId),
      onShardReplayed: options.onShardReplayed,
      appendLinger: options.appendLinger,
    })
    this.topologyDescriptions = new TopologyDescriptionManager({
      plugin: options.topologyDescriptionPlugin ?? null,
      host: {
        numShards: this.#numShards,
        shardFor: (groupId) => this.shardFor(groupId),
        write: (name, shardId, op) => this.#write(name, shardId, (shard) => op(shard)),
        read: (name, shardId, op) => this.#runtime.scheduleReadOperation(name, shardId, (shard) => op(shard)),
        errorCode: (err, operation) => this.errorCode(err, operation),
        isActive: () => this.#closed === undefined,
      },
      clock: this.#clock,
      logger: this.#log,
      random: options.random ?? Math.random,
      sensors: options.topologyDescriptionSensors,
      cleanupIntervalMs: options.config.offsetsRetentionCheckIntervalMs,
      backoff: options.topologyDescriptionBackoff,
    })
    // KIP-1331 §7: with a plugin, a classic join defers the conversion of an empty streams group that
    // may hold a stored description until the manager deleted it (barrier, plugin delete, finalize).
    if (this.topologyDescriptions.pluginConfigured) {
      this.#conversionCleanup = (groupId) =>
        this.topologyDescriptions.cleanupTopologyBeforeConversion(groupId)
    }
    this.classicGroups = new ClassicGroupsService(
      {
        write: (name, groupId, op) =>
          // The shard routes a request for a consumer group to that group (online migration).
          this.scheduleWriteOperation(name, groupId, (shard, nowMs) => op(shard, nowMs)),
        errorCode: (err, operation) => this.errorCode(err, operation),
        prepareStreamsConversion: (groupId) => this.#prepareStreamsConversion(groupId),
        streamsConversionCleanupConfigured: () => this.#conversionCleanup !== undefined,
        rebalanceCompleted: () => this.#sensors.record('group-completed-rebalance', 1),
      },
      this.#newUuid,
      this.#newConsumerMemberId,
    )
  }

  /**
   * The hook run before an empty streams group becomes a classic group (see
   * {@link StreamsToClassicConversionCleanup}). Without one, the conversion needs no cleanup.
   */
  setStreamsToClassicConversionCleanup(cleanup: StreamsToClassicConversionCleanup | undefined): void {
    this.#conversionCleanup = cleanup
  }

  async #prepareStreamsConversion(groupId: string): Promise<void | (() => Promise<void>)> {
    return await this.#conversionCleanup?.(groupId)
  }

  /**
   * Builds the runtime, loads (replays) every shard (whose on-loaded operation arms the loaded
   * groups' timers), then starts the sweep.
   */
  static async start(options: GroupCoordinatorServiceOptions): Promise<GroupCoordinatorService> {
    const service = new GroupCoordinatorService(options)
    await service.groupConfigs.load()
    await service.#runtime.load()
    service.#armSweep()
    service.topologyDescriptions.startCleanupCycle()
    service.#stopTopicListener = options.topics.onChange?.(() => {
      if (service.#closed === undefined) service.#track(service.#refreshTopics())
    })
    if (service.#stopTopicListener !== undefined) {
      // From now on every catalog change reaches the image at once (the catalog tells its listeners
      // in the same turn as it changes), so a heartbeat need not list the catalog; this picks up
      // anything that changed since the image was first built.
      service.#catalogNotifies = true
      service.#track(service.#refreshTopics())
    }
    return service
  }

  get numShards(): number {
    return this.#numShards
  }

  get streamsGroupConfig(): StreamsGroupConfig {
    return this.#streamsConfig
  }

  /** Whether `group.coordinator.rebalance.protocols` enables streams groups. */
  get isStreamsEnabled(): boolean {
    return this.#streamsEnabled
  }

  get isConsumerEnabled(): boolean {
    return this.#config.groupCoordinatorRebalanceProtocols.includes('consumer')
  }

  shardFor(groupId: string): number {
    return shardFor(groupId, this.#numShards)
  }

  // ---- generic operations (for layers built on top, e.g. topology descriptions) ----

  /**
   * Runs a named write operation on the shard of `groupId`. The operation returns records, a
   * response and timer intents; the timers are applied once the records are durable.
   */
  async scheduleWriteOperation<T>(name: string, groupId: string, op: GroupWriteOperation<T>): Promise<T> {
    return this.#write(name, this.shardFor(groupId), op)
  }

  scheduleReadOperation<T>(name: string, groupId: string, op: ReadOperation<Shard, T>): Promise<T> {
    return this.#runtime.scheduleReadOperation(name, this.shardFor(groupId), op)
  }

  /** A shard's replayed state, outside its queue: for inspection only (see CoordinatorRuntime.peekShard). */
  peekShard(shardId: number): Shard | undefined {
    return this.#runtime.peekShard(shardId)
  }

  /** Whether a shard's replayed state is ahead of its log (CoordinatorRuntime.hasUnwrittenRecords). */
  hasUnwrittenRecords(shardId: number): boolean {
    return this.#runtime.hasUnwrittenRecords(shardId)
  }

  /** The Kafka error code for a failed operation (the one translation point). */
  errorCode(err: unknown, operation: string): number {
    return toKafkaErrorCode(err, operation, this.#log)
  }

  // ---- StreamsGroupHeartbeat (88) ----

  /**
   * A heartbeat that writes nothing (the steady case) and finds its shard's queue idle is answered
   * in the caller's turn, without a promise (see CoordinatorRuntime.writeOperationNowOrLater);
   * otherwise the answer is a promise.
   */
  streamsGroupHeartbeat(
    ctx: StreamsHeartbeatRequestContext,
    request: StreamsGroupHeartbeatRequest,
  ): StreamsGroupHeartbeatResponse | Promise<StreamsGroupHeartbeatResponse> {
    if (!this.isStreamsEnabled) {
      return createStreamsGroupHeartbeatResponse({
        errorCode: ErrorCode.UNSUPPORTED_VERSION,
        // Kafka's getErrorResponse: the code, no message.
        errorMessage: null,
      })
    }
    // Catalog changes reach every shard (in its queue) before the heartbeat runs.
    const changed = this.#catalogNotifies ? NOTHING_CHANGED : this.#image.refresh()
    if (changed.length > 0) {
      return this.#notifyShards(changed).then(() => this.#streamsGroupHeartbeat(ctx, request))
    }
    return this.#streamsGroupHeartbeat(ctx, request)
  }

  #streamsGroupHeartbeat(
    ctx: StreamsHeartbeatRequestContext,
    request: StreamsGroupHeartbeatRequest,
  ): StreamsGroupHeartbeatResponse | Promise<StreamsGroupHeartbeatResponse> {
    let gate: HeartbeatGateInputs | undefined
    let produced: ShardHeartbeatResult | undefined
    const outcome = this.#runtime.writeOperationNowOrLater(
      HEARTBEAT,
      this.shardFor(request.groupId),
      (shard, nowMs): GroupCoordinatorResult<StreamsGroupHeartbeatResponse> => {
        const r = shard.streamsGroupHeartbeat(
          this.#shardHeartbeatContext(ctx, request.groupId, nowMs),
          request,
        )
        if (this.topologyDescriptions.pluginConfigured) {
          gate = heartbeatGateInputs(shard, request.groupId, r.records)
        }
        // The shard's result is the operation's result; the answer reads the rest of it.
        produced = r
        return r
      },
    )
    if (outcome instanceof Promise) {
      return outcome.then(
        () => {
          // Kafka's StreamsGroupRebalances sensor: each group epoch bump of a join or an update,
          // once the records are durable (a leave is not a rebalance in Kafka's count).
          const records = produced!.records
          if (records.length > 0 && request.memberEpoch >= 0) {
            const bumps = countGroupEpochBumps(records, 'StreamsGroupMetadata')
            if (bumps > 0) this.#sensors.record('streams-group-rebalance', bumps)
          }
          return this.#heartbeatAnswer(ctx, request, produced!, gate)
        },
        (e: unknown) => {
          const errorCode = this.errorCode(e, HEARTBEAT)
          return createStreamsGroupHeartbeatResponse({
            errorCode,
            errorMessage: errorInfo(errorCode).message,
          })
        },
      )
    }
    return this.#heartbeatAnswer(ctx, request, produced!, gate)
  }

  /**
   * The shard's context for a heartbeat it runs now. The shard reads it only during that call and
   * keeps none of it (what it keeps, it copies), so one object, filled anew for each heartbeat,
   * serves them all.
   */
  #shardHeartbeatContext(
    ctx: StreamsHeartbeatRequestContext,
    groupId: string,
    nowMs: number,
  ): StreamsHeartbeatContext {
    const config = this.groupConfigs.streamsConfig(groupId)
    const c = this.#heartbeatContext
    if (c === undefined) {
      this.#heartbeatContext = {
        nowMs,
        requestApiVersion: ctx.apiVersion,
        clientId: ctx.clientId,
        clientHost: ctx.clientHost,
        config,
      }
      return this.#heartbeatContext
    }
    c.nowMs = nowMs
    c.requestApiVersion = ctx.apiVersion
    c.clientId = ctx.clientId
    c.clientHost = ctx.clientHost
    c.config = config
    return c
  }

  /** The committed heartbeat's answer: internal topics to create, KIP-1331 solicitation. */
  #heartbeatAnswer(
    ctx: StreamsHeartbeatRequestContext,
    request: StreamsGroupHeartbeatRequest,
    committed: ShardHeartbeatResult,
    gate: HeartbeatGateInputs | undefined,
  ): StreamsGroupHeartbeatResponse {
    let result = committed
    if (result.internalTopicsToCreate.length > 0) {
      const refused = ctx.unauthorizedToCreate?.(result.internalTopicsToCreate.map((t) => t.name)) ?? []
      if (refused.length === 0 && this.#closed === undefined) {
        const creating = this.#internalTopics.create(result.internalTopicsToCreate)
        if (creating !== undefined) this.#track(creating)
      } else result = { ...result, response: withCreateRefusal(result.response, refused) }
    }
    // KIP-1331 solicitation, on the committed result only (never on a failed heartbeat).
    if (gate !== undefined) {
      try {
        this.topologyDescriptions.maybeSetTopologyDescriptionRequired(
          request.groupId,
          ctx.apiVersion,
          request.memberEpoch,
          result.response,
          gate,
        )
      } catch (err) {
        this.#log.warn(
          { groupId: request.groupId, err },
          `Failed to apply topology-description post-processing on the streams group heartbeat response for group ${request.groupId}; returning the response unmodified.`,
        )
      }
    }
    return result.response
  }

  // ---- StreamsGroupTopologyDescriptionUpdate (93) ----

  /** The KIP-1331 push (kip1331-broker.md §3.2). */
  async streamsGroupTopologyDescriptionUpdate(
    request: StreamsGroupTopologyDescriptionUpdateRequest,
  ): Promise<TopologyDescriptionUpdateResult> {
    if (this.#closed !== undefined)
      return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null }
    return this.topologyDescriptions.topologyDescriptionUpdate(request)
  }

  // ---- StreamsGroupDescribe (89) ----

  async streamsGroupDescribe(
    groupIds: readonly string[],
    includeTopologyDescription: boolean,
  ): Promise<StreamsGroupDescribeResponseDescribedGroup[]> {
    if (!this.isStreamsEnabled) {
      // Kafka's getErrorResponse: the code on every group, no message.
      return groupIds.map((groupId) => describeErrorRow(groupId, ErrorCode.UNSUPPORTED_VERSION))
    }
    // The stored description epochs are read with the rows, in the same shard operation.
    const stored = new Map<string, number>()
    const rows = await this.#perShard(
      'streams-group-describe',
      groupIds,
      (shard, ids) => {
        if (includeTopologyDescription) {
          for (const [g, e] of storedDescriptionTopologyEpochs(shard, ids)) stored.set(g, e)
        }
        return shard.streamsGroupDescribe(ids, includeTopologyDescription)
      },
      (groupId, errorCode) => describeErrorRow(groupId, errorCode),
    )
    if (includeTopologyDescription) await this.topologyDescriptions.attachTopologyDescriptions(rows, stored)
    return rows
  }

  // ---- ConsumerGroupHeartbeat (68) / ConsumerGroupDescribe (69) ----

  /**
   * KIP-848 ConsumerGroupHeartbeat: one write on the group's shard. A heartbeat that writes nothing
   * (the steady case) and finds its shard's queue idle is answered in the caller's turn, without a
   * promise, as the streams heartbeat is (CoordinatorRuntime.writeOperationNowOrLater).
   */
  consumerGroupHeartbeat(
    ctx: StreamsHeartbeatRequestContext,
    request: ConsumerGroupHeartbeatRequest,
  ): ConsumerGroupHeartbeatResponse | Promise<ConsumerGroupHeartbeatResponse> {
    if (!this.isConsumerEnabled) {
      return createConsumerGroupHeartbeatResponse({
        errorCode: ErrorCode.UNSUPPORTED_VERSION,
        // Kafka's getErrorResponse: the code, no message.
        errorMessage: null,
        memberId: null,
      })
    }
    // Catalog changes reach every shard (in its queue) before the heartbeat runs.
    const changed = this.#catalogNotifies ? NOTHING_CHANGED : this.#image.refresh()
    if (changed.length > 0) {
      return this.#notifyShards(changed).then(() => this.#consumerGroupHeartbeat(ctx, request))
    }
    return this.#consumerGroupHeartbeat(ctx, request)
  }

  #consumerGroupHeartbeat(
    ctx: StreamsHeartbeatRequestContext,
    request: ConsumerGroupHeartbeatRequest,
  ): ConsumerGroupHeartbeatResponse | Promise<ConsumerGroupHeartbeatResponse> {
    let epochBumps = 0
    const failed = (e: unknown): ConsumerGroupHeartbeatResponse => {
      const errorCode = this.errorCode(e, CONSUMER_HEARTBEAT)
      return createConsumerGroupHeartbeatResponse({
        errorCode,
        errorMessage: errorInfo(errorCode).message,
        memberId: null,
      })
    }
    const outcome = this.#runtime.writeOperationNowOrLater(
      CONSUMER_HEARTBEAT,
      this.shardFor(request.groupId),
      (shard, nowMs) => {
        const result = shard.consumerGroupHeartbeat(
          {
            nowMs,
            requestApiVersion: ctx.apiVersion,
            clientId: ctx.clientId,
            clientHost: ctx.clientHost,
            config: this.consumerGroupConfig(request.groupId),
            newMemberId: this.#newConsumerMemberId,
            describableTopics: ctx.describableTopics,
          },
          request,
        )
        epochBumps =
          result.records.length === 0 ? 0 : countGroupEpochBumps(result.records, 'ConsumerGroupMetadata')
        return result
      },
    )
    if (outcome instanceof Promise) {
      return outcome.then((response) => {
        // Kafka's ConsumerGroupRebalances sensor: each group epoch bump of a heartbeat, once the
        // records are durable; a leave's bump (epoch -1 / -2) is not a rebalance in Kafka's count.
        if (epochBumps > 0 && request.memberEpoch >= 0) {
          this.#sensors.record('consumer-group-rebalance', epochBumps)
        }
        return response
      }, failed)
    }
    // Answered at once: nothing was written, so there is no rebalance to count.
    return outcome
  }

  /** A group's consumer settings: the broker's, with the group's own configs where it sets them. */
  consumerGroupConfig(groupId: string): ConsumerGroupConfig {
    return consumerGroupConfigOf(this.#consumerConfig, this.groupConfigs.overrides(groupId))
  }

  async consumerGroupDescribe(
    groupIds: readonly string[],
    apiVersion = 1,
  ): Promise<ConsumerGroupDescribeResponseDescribedGroup[]> {
    const errorRow = (groupId: string, errorCode: number): ConsumerGroupDescribeResponseDescribedGroup => ({
      ...createConsumerGroupDescribeResponse().groups[0],
      ...blankConsumerRow(groupId),
      errorCode,
    })
    if (!this.isConsumerEnabled) {
      // Kafka's getErrorResponse: the code on every group, no message.
      return groupIds.map((g) => errorRow(g, ErrorCode.UNSUPPORTED_VERSION))
    }
    return this.#perShard(
      'consumer-group-describe',
      groupIds,
      (shard, ids) => shard.consumerGroupDescribe(ids, apiVersion),
      errorRow,
    )
  }

  // ---- ListGroups (16), DescribeGroups (15), DeleteGroups (42) ----

  /**
   * How many groups each shard holds, by type and by state (Kafka's `group-count` and
   * `<type>-group-count` gauges), and how many committed offsets (`offset-count`): reads on every
   * shard; a shard that cannot answer counts nothing.
   */
  async groupCounts(): Promise<GroupCounts> {
    const byType = new Map<string, number>()
    const byTypeAndState = new Map<string, Map<string, number>>()
    const [{ groups }, offsets] = await Promise.all([
      this.listGroups([], []),
      Promise.allSettled(
        Array.from({ length: this.#numShards }, (_, shardId) =>
          this.#runtime.scheduleReadOperation('offset-count', shardId, (shard) => shard.offsets.offsetCount),
        ),
      ),
    ])
    for (const g of groups) {
      byType.set(g.groupType, (byType.get(g.groupType) ?? 0) + 1)
      let states = byTypeAndState.get(g.groupType)
      if (states === undefined) byTypeAndState.set(g.groupType, (states = new Map()))
      states.set(g.groupState, (states.get(g.groupState) ?? 0) + 1)
    }
    let offsetCount = 0
    for (const r of offsets) if (r.status === 'fulfilled') offsetCount += r.value
    return { byType, byTypeAndState, offsets: offsetCount }
  }

  /** Every shard's groups; a shard that cannot answer sets the response error (the others still list). */
  async listGroups(
    statesFilter: readonly string[],
    typesFilter: readonly string[],
  ): Promise<ListGroupsResult> {
    let errorCode: number = ErrorCode.NONE
    const groups: ListGroupsResponseListedGroup[] = []
    const results = await Promise.allSettled(
      Array.from({ length: this.#numShards }, (_, shardId) =>
        this.#runtime.scheduleReadOperation('list-groups', shardId, (shard) =>
          shard.listGroups(statesFilter, typesFilter),
        ),
      ),
    )
    for (const r of results) {
      if (r.status === 'fulfilled') groups.push(...r.value)
      else if (errorCode === ErrorCode.NONE) errorCode = this.errorCode(r.reason, 'list-groups')
    }
    return { errorCode, groups }
  }

  describeGroups(
    groupIds: readonly string[],
    apiVersion: number,
  ): Promise<DescribeGroupsResponseDescribedGroup[]> {
    return this.#perShard(
      'describe-groups',
      groupIds,
      (shard, ids) => shard.describeGroups(ids, apiVersion),
      (groupId, errorCode) => ({
        errorCode,
        errorMessage: null,
        groupId,
        groupState: '',
        protocolType: '',
        protocolData: '',
        members: [],
        authorizedOperations: -2147483648,
      }),
    )
  }

  async deleteGroups(groupIds: readonly string[]): Promise<DeleteGroupsResponseDeletableGroupResult[]> {
    const byShard = this.#groupByShard(groupIds)
    const out = new Map<number, DeleteGroupsResponseDeletableGroupResult>()
    await Promise.all(
      [...byShard].map(async ([shardId, all]) => {
        // KIP-1331 pre-delete: groups whose plugin data could not be removed are not tombstoned.
        const failures = await this.topologyDescriptions.preDelete(
          shardId,
          all.map((e) => e.groupId),
        )
        for (const { index, groupId } of all) {
          const f = failures.get(groupId)
          if (f !== undefined)
            out.set(index, { groupId, errorCode: f.errorCode, errorMessage: f.errorMessage })
        }
        const entries = all.filter((e) => !failures.has(e.groupId))
        if (entries.length === 0) return
        const ids = entries.map((e) => e.groupId)
        try {
          const results = await this.#write('delete-groups', shardId, (shard) => shard.deleteGroups(ids))
          for (const [i, r] of results.entries()) out.set(entries[i].index, r)
        } catch (e) {
          const errorCode = this.errorCode(e, 'delete-groups')
          for (const { index, groupId } of entries) out.set(index, { groupId, errorCode, errorMessage: null })
        }
      }),
    )
    return groupIds.map((_, i) => out.get(i)!)
  }

  // ---- OffsetCommit (8), OffsetFetch (9), OffsetDelete (47) ----

  /** The commit's per-topic results; on a failed write every partition carries the error. */
  commitOffsets(
    apiVersion: number,
    request: OffsetCommitInput,
  ): Promise<OffsetCommitResponseOffsetCommitResponseTopic[]> {
    // Not an async function: its frame and the promise of its await were about a tenth of what a
    // one-group commit allocated. A failure to schedule, or of the write, answers every partition.
    const failed = (e: unknown): OffsetCommitResponseOffsetCommitResponseTopic[] => {
      const errorCode = this.errorCode(e, 'commit-offset')
      return request.topics.map((t) => ({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
      }))
    }
    let committed = 0
    try {
      return this.#write('commit-offset', this.shardFor(request.groupId), (shard, nowMs) => {
        const r = shard.commitOffsets({ apiVersion, nowMs, maxMetadataSize: this.#maxMetadataSize }, request)
        committed = r.records.length === 0 ? 0 : countOffsetCommits(r.records)
        return r
      }).then((topics) => {
        // Kafka's OffsetCommits sensor: the offsets a commit wrote.
        if (committed > 0) this.#sensors.record('offset-commit', committed)
        return topics
      }, failed)
    } catch (e) {
      return Promise.resolve(failed(e))
    }
  }

  async fetchOffsets(request: OffsetFetchGroupInput): Promise<OffsetFetchResponseOffsetFetchResponseGroup> {
    try {
      return await this.#runtime.scheduleReadOperation(
        'fetch-offsets',
        this.shardFor(request.groupId),
        (shard) => shard.fetchOffsets(request),
      )
    } catch (e) {
      return { groupId: request.groupId, topics: [], errorCode: this.errorCode(e, 'fetch-offsets') }
    }
  }

  async deleteOffsets(request: OffsetDeleteInput): Promise<OffsetDeleteResult> {
    let deleted = 0
    try {
      const result = await this.#write('delete-offsets', this.shardFor(request.groupId), (shard) => {
        const r = shard.offsetDelete(request)
        deleted = countOffsetTombstones(r.records)
        return r
      })
      // Kafka's OffsetDeletions sensor: the offsets OffsetDelete removed.
      if (deleted > 0) this.#sensors.record('offset-deletion', deleted)
      return result
    } catch (e) {
      return { errorCode: this.errorCode(e, 'delete-offsets'), topics: [] }
    }
  }

  // ---- TxnOffsetCommit (28) and transaction markers ----

  /**
   * A transactional commit (`txn-commit-offset`), its transaction already checked with the
   * transaction coordinator: the offsets are written as pending; on a failed write every partition
   * carries the error.
   */
  async commitTransactionalOffsets(
    apiVersion: number,
    request: TxnOffsetCommitInput,
  ): Promise<TxnOffsetCommitResponseTxnOffsetCommitResponseTopic[]> {
    let committed = 0
    try {
      const result = await this.#write(
        'txn-commit-offset',
        this.shardFor(request.groupId),
        (shard, nowMs) => {
          const r = shard.commitTransactionalOffsets(
            { apiVersion, nowMs, maxMetadataSize: this.#maxMetadataSize },
            request,
          )
          committed = countOffsetCommits(r.records)
          return r
        },
      )
      // Kafka's OffsetCommits sensor counts transactional commits too.
      if (committed > 0) this.#sensors.record('offset-commit', committed)
      return result
    } catch (e) {
      const errorCode = this.errorCode(e, 'txn-commit-offset')
      return request.topics.map((t) => ({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
      }))
    }
  }

  /**
   * Drops the pending offsets a TxnOffsetCommit wrote when its transaction ended before the write
   * (`txn-drop-pending-offsets`); resolves to the number dropped.
   */
  dropPendingOffsets(groupId: string, producerId: bigint, producerEpoch: number): Promise<number> {
    return this.#write('txn-drop-pending-offsets', this.shardFor(groupId), (shard) =>
      shard.dropPendingOffsets(groupId, producerId, producerEpoch),
    )
  }

  /**
   * A transaction marker for `__consumer_offsets` partition `shardId` (Kafka's `completeTransaction`,
   * `replayEndTransactionMarker`): the producer's pending offsets there are made committed or dropped
   * in one append. Resolves to the marker's result for the partition (a failed write is the
   * runtime's error translated, which the marker writer retries).
   */
  async completeTransaction(
    shardId: number,
    marker: { readonly producerId: bigint; readonly producerEpoch: number; readonly committed: boolean },
  ): Promise<number> {
    if (!Number.isInteger(shardId) || shardId < 0 || shardId >= this.#numShards) {
      return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    }
    try {
      const result: TransactionCompletion = await this.#write('write-txn-markers', shardId, (shard) =>
        shard.completeTransaction(marker.producerId, marker.producerEpoch, marker.committed),
      )
      return result.errorCode
    } catch (e) {
      return this.errorCode(e, 'write-txn-markers')
    }
  }

  // ---- expiry ----

  /**
   * Runs the expiry sweep on every shard now (it also runs every
   * `offsets.retention.check.interval.ms`). A shard whose sweep fails is logged and skipped.
   */
  async cleanupGroupMetadata(): Promise<CleanupResult[]> {
    const retentionMs = this.#config.offsetsRetentionMinutes * 60_000
    const pluginConfigured = this.topologyDescriptions.pluginConfigured
    const results = await Promise.allSettled(
      Array.from({ length: this.#numShards }, async (_, shardId) => {
        const started = this.#clock.now()
        let tombstones = 0
        let expired = 0
        const result = await this.#write('cleanup-group-metadata', shardId, (shard, nowMs) => {
          const r = shard.cleanupGroupMetadata(nowMs, { retentionMs, pluginConfigured })
          tombstones = r.records.length
          expired = countOffsetTombstones(r.records)
          return r
        })
        // Kafka's OffsetExpired sensor: the offsets the sweep removed.
        if (expired > 0) this.#sensors.record('offset-expiration', expired)
        if (tombstones > 0) {
          this.#log.info(
            { shard: shardId, groups: result.deletedGroups, expiredOffsets: result.expiredOffsets },
            `Generated ${tombstones} tombstone records while cleaning up group metadata in ${this.#clock.now() - started} milliseconds.`,
          )
        }
        return result
      }),
    )
    const out: CleanupResult[] = []
    for (const r of results) {
      if (r.status === 'fulfilled') out.push(r.value)
      else this.#log.warn({ err: r.reason }, 'Group metadata cleanup failed on a shard')
    }
    return out
  }

  /** The server accepts connections now: see {@link CoordinatorRuntime.servingStarted}. */
  servingStarted(): void {
    this.#runtime.servingStarted()
  }

  /**
   * The server is shutting down and waits for its connections' answers: requests that wait for
   * other members (classic JoinGroup and SyncGroup) are answered NOT_COORDINATOR now, as Kafka
   * answers them on unload, instead of at the end of a rebalance the shutdown would never reach.
   */
  beginShutdown(): void {
    this.classicGroups.close()
  }

  /** Stops the sweep and timers, waits for every operation in flight, then closes the runtime. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stopTopicListener?.()
      this.classicGroups.close()
      if (this.#sweepTimer !== undefined) this.#clock.clearTimer(this.#sweepTimer)
      this.#sweepTimer = undefined
      // Stops the cleanup cycle and closes the topology description plugin, before the runtime.
      await this.topologyDescriptions.close()
      await Promise.allSettled([...this.#background])
      await this.#runtime.close()
    })()
    return this.#closed
  }

  // ---- internals ----

  /**
   * A write on one shard, under the runtime's write timeout. Its timers are armed and its
   * completions delivered by the runtime once the records are durable and replayed.
   */
  #write<T>(name: string, shardId: number, op: GroupWriteOperation<T>): Promise<T> {
    return this.#runtime.scheduleWriteOperation(name, shardId, op)
  }

  #armSweep(): void {
    const interval = this.#config.offsetsRetentionCheckIntervalMs
    this.#sweepTimer = this.#clock.setTimer(() => {
      if (this.#closed !== undefined) return
      this.#track(this.cleanupGroupMetadata().finally(() => this.#closed === undefined && this.#armSweep()))
    }, interval)
  }

  #track(p: Promise<unknown>): void {
    const tracked = p.catch(() => undefined)
    this.#background.add(tracked)
    void tracked.finally(() => this.#background.delete(tracked))
  }

  /** Group ids by shard, keeping each id's position in the request. */
  #groupByShard(groupIds: readonly string[]): Map<number, { index: number; groupId: string }[]> {
    const byShard = new Map<number, { index: number; groupId: string }[]>()
    groupIds.forEach((groupId, index) => {
      const shardId = this.shardFor(groupId)
      let list = byShard.get(shardId)
      if (!list) {
        list = []
        byShard.set(shardId, list)
      }
      list.push({ index, groupId })
    })
    return byShard
  }

  /** Runs a per-group read on each involved shard and puts the rows back in request order. */
  async #perShard<Row>(
    name: string,
    groupIds: readonly string[],
    read: (shard: Shard, ids: string[]) => Row[],
    errorRow: (groupId: string, errorCode: number) => Row,
  ): Promise<Row[]> {
    const out = new Map<number, Row>()
    await Promise.all(
      [...this.#groupByShard(groupIds)].map(async ([shardId, entries]) => {
        const ids = entries.map((e) => e.groupId)
        try {
          const rows = await this.#runtime.scheduleReadOperation(name, shardId, (shard) => read(shard, ids))
          for (const [i, row] of rows.entries()) out.set(entries[i].index, row)
        } catch (e) {
          const errorCode = this.errorCode(e, name)
          for (const { index, groupId } of entries) out.set(index, errorRow(groupId, errorCode))
        }
      }),
    )
    return groupIds.map((_, i) => out.get(i)!)
  }

  /**
   * Picks up catalog changes (CreateTopics, DeleteTopics, internal topics) and tells every shard, in
   * its queue, so groups depending on a changed topic reconfigure on their next heartbeat.
   */
  async #refreshTopics(): Promise<void> {
    const changed = this.#image.refresh()
    if (changed.length === 0) return
    await this.#notifyShards(changed)
  }

  /**
   * Tells every shard, in its queue, which topics of the image changed, and has it delete the
   * committed offsets of the deleted ones in every group (Kafka's `onTopicsDeleted`, with the
   * metadata update that deleted them).
   */
  async #notifyShards(changed: readonly string[]): Promise<void> {
    const image: TopicsImage = this.#image
    const deleted = this.#image.takeDeleted()
    const results = await Promise.allSettled(
      Array.from({ length: this.#numShards }, (_, shardId) =>
        this.#runtime.scheduleWriteOperation('on-new-topics-image', shardId, (shard) => {
          shard.onNewTopicsImage(image, changed)
          return { records: deleted.length === 0 ? [] : shard.onTopicsDeleted(deleted), response: undefined }
        }),
      ),
    )
    if (deleted.length === 0) return
    for (const r of results) {
      if (r.status === 'rejected') {
        this.#log.error(
          { err: r.reason, topics: deleted.map((t) => t.name) },
          'could not delete the offsets of deleted topics',
        )
      }
    }
  }
}

/**
 * Kafka's answer when the caller may not create a heartbeat's internal topics: "; Unauthorized to
 * CREATE on topics a, b." appended to the MISSING_INTERNAL_TOPICS detail (a new status without the
 * leading "; " when the response had none).
 */
function withCreateRefusal(
  response: StreamsGroupHeartbeatResponse,
  refused: readonly string[],
): StreamsGroupHeartbeatResponse {
  const text = `Unauthorized to CREATE on topics ${refused.join(', ')}.`
  const status = [...(response.status ?? [])]
  const i = status.findIndex((s) => s.statusCode === TopicStatusCode.MISSING_INTERNAL_TOPICS)
  if (i >= 0) status[i] = { ...status[i], statusDetail: `${status[i].statusDetail}; ${text}` }
  else status.push({ statusCode: TopicStatusCode.MISSING_INTERNAL_TOPICS, statusDetail: text })
  return { ...response, status }
}

function describeErrorRow(groupId: string, errorCode: number): StreamsGroupDescribeResponseDescribedGroup {
  return createStreamsGroupDescribeResponseDescribedGroup({ groupId, errorCode })
}

function blankConsumerRow(groupId: string): ConsumerGroupDescribeResponseDescribedGroup {
  return {
    errorCode: 0,
    errorMessage: null,
    groupId,
    groupState: '',
    groupEpoch: 0,
    assignmentEpoch: 0,
    assignorName: '',
    members: [],
    authorizedOperations: -2147483648,
  }
}
