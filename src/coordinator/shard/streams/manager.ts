/**
 * The streams part of the group metadata manager (Kafka's GroupMetadataManager for streams groups):
 * the StreamsGroupHeartbeat algorithm, timers, describe, list, delete and offset validation, and
 * `replay` of the streams records. Handlers never mutate persisted state: they return records, which
 * the runtime appends and then replays through `replay`. Soft state (configured topology, shutdown
 * request, endpoint epoch, task offsets) is updated directly, as in Kafka.
 */
import type { TaskAssignor } from './assignor/index.js'
import { assignmentConfigs, STREAMS_GROUP_CONFIG_DEFAULTS, type StreamsGroupConfig } from './config.js'
import {
  type ConfiguredTopology,
  type CreatableTopic,
  computeMetadataHash,
  configureTopology,
  isReady,
  type TopicsImage,
  TopicStatusCode,
} from './configured-topology.js'
import { buildCurrentAssignment } from './current-assignment-builder.js'
import { buildEndpointToPartitions } from './endpoint-to-partitions.js'
import { ErrorCode } from '../../../protocol/errors.js'
import { createStreamsGroupDescribeResponseDescribedGroup } from '../../../protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { ApiError, invalidRequest } from '../api-error.js'
import {
  type MemberTaskOffsets,
  STATE_FILTER_NAMES,
  StreamsGroup,
  StreamsGroupState,
  type StreamsOffsetCommitInput,
} from './group.js'
import {
  epochRelevantConfigDiffers,
  MemberProfiles,
  MemberState,
  memberValue,
  memberMetadataDiffers,
  memberStateFromRecord,
  newMember,
  type StreamsGroupMember,
  sortedTags,
  userEndpointEquals,
  withAssignment,
} from './member.js'
import {
  currentAssignmentRecord,
  groupMetadataRecord,
  groupMetadataRecordFrom,
  groupTombstones,
  memberMetadataRecord,
  memberTombstones,
  targetAssignmentMemberRecord,
  targetAssignmentMetadataRecord,
  topologyRecord,
} from './records.js'
import { computeTargetAssignment } from './target-assignment-builder.js'
import {
  EMPTY_TASKS,
  EMPTY_TASKS_WITH_EPOCHS,
  taskEpochsFromRecord,
  taskSetFromList,
  taskSetToList,
  type TasksTuple,
  tasksTuple,
  tasksWithEpochs,
  tasksWithEpochsEquals,
} from './tasks.js'
import { TimerCollector as Collector } from '../result.js'
import type { RuntimeLogger } from '../../runtime/types.js'
import { logLoadedGroup, logRebalanceTimeout, SILENT_LOGGER } from '../group-log.js'
import {
  type ArmedTimers,
  initialRebalanceKey,
  MEMBER_TIMER_RETRY_BACKOFF_MS,
  NO_ARMED_TIMERS,
  NO_TIMERS,
  rebalanceTimeoutKey,
  type StreamsTimer,
  type StreamsTimerIntents,
  type StreamsTimerResult,
  sessionTimeoutKey,
} from './timers.js'
import { kept } from './strings.js'
import { StreamsTopology, topologyEquals, topologyRecordFromRequest } from './topology.js'
import { validateHeartbeatRequest } from './validation.js'
import {
  type ListedModernGroup,
  listModernGroups,
  membersAfterHeartbeat,
  runHeartbeat,
  type HeartbeatSteps,
} from '../modern/groups.js'
import { canComputeAssignment } from '../modern/epochs.js'
import { answeredHeartbeatIntervalMs } from '../modern/heartbeat-phase.js'
import {
  commonFieldsFromRecord,
  heartbeatMember,
  LEAVE_GROUP_MEMBER_EPOCH,
  LEAVE_GROUP_STATIC_MEMBER_EPOCH,
  leavingMember,
  replacementRecords,
  replayMemberTombstone,
  updatedMember,
} from '../modern/membership.js'
import { mustArmSession, sessionFirePeriodMs, sessionRearmDelayMs } from '../modern/session.js'
import {
  createStreamsGroupHeartbeatResponse,
  type HeartbeatStatus,
  type StreamsCoordinatorRecord,
  type StreamsGroupDescribeResponseDescribedGroup,
  type StreamsGroupHeartbeatRequest,
  type StreamsGroupHeartbeatResponse,
  type TaskIds,
  type TaskOffset,
} from './wire.js'

/**
 * A heartbeat's facts besides its request. Valid during the call only: the caller may fill the same
 * object for its next heartbeat, so what the shard keeps it copies (strings, the config).
 */
export interface StreamsHeartbeatContext {
  readonly nowMs: number
  readonly requestApiVersion: number
  /** From the request header. */
  readonly clientId: string
  /** The connection's address, e.g. "/127.0.0.1". */
  readonly clientHost: string
  /** Broker defaults with this group's overrides applied. */
  readonly config: StreamsGroupConfig
}

export interface StreamsHeartbeatResult {
  readonly records: StreamsCoordinatorRecord[]
  readonly response: StreamsGroupHeartbeatResponse
  readonly timers: StreamsTimerIntents
  /** Internal topics the service should create (MISSING_INTERNAL_TOPICS). */
  readonly internalTopicsToCreate: readonly CreatableTopic[]
}

/** Selects the assignor for a group (satisfied by the assignor folder's TaskAssignorRegistry). */
export interface TaskAssignorSelector {
  select(groupAssignorName: string | null | undefined): TaskAssignor
}

export interface StreamsGroupManagerOptions {
  readonly topics: TopicsImage
  readonly assignors: TaskAssignorSelector
  /** Whether the id belongs to a group of another type (classic, consumer, share). */
  readonly isOtherGroupType?: (groupId: string) => boolean
  /**
   * The runtime's armed timers for this shard (default: none). Pending timers are read from here,
   * never recorded when a handler asks for them: the runtime arms them only once the handler's
   * records are durable.
   */
  readonly timers?: ArmedTimers
  /**
   * A group's effective settings (group-level configs over the broker's), read when a timer fires
   * and when the shard loads, as Kafka reads its GroupConfigManager. Absent: the settings the
   * heartbeat or `onLoaded` was given.
   */
  readonly config?: (groupId: string) => StreamsGroupConfig
  /** Where group events are logged (see group-log.ts); default: nowhere. */
  readonly logger?: RuntimeLogger
}

export type ListedStreamsGroup = ListedModernGroup<'streams'>

const REPLACEMENT_RECORDS = {
  memberTombstones,
  memberMetadata: memberMetadataRecord,
  targetAssignment: targetAssignmentMemberRecord,
  currentAssignment: currentAssignmentRecord,
}

const _EPOCH_LEAVE = LEAVE_GROUP_MEMBER_EPOCH
const EPOCH_STATIC_LEAVE = LEAVE_GROUP_STATIC_MEMBER_EPOCH
/** Kafka pushes the metadata refresh deadline out by Integer.MAX_VALUE ms on every bump. */
const METADATA_REFRESH_INTERVAL_MS = 2147483647

const notStreamsGroup = (g: string) =>
  new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${g} is not a streams group.`)
const groupNotFound = (g: string) => new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${g} not found.`)

const offsetKey = (subtopologyId: string, partition: number): string => `${subtopologyId}\u0000${partition}`

function ownedTuple(req: StreamsGroupHeartbeatRequest): TasksTuple | null {
  if (req.activeTasks === null || req.standbyTasks === null || req.warmupTasks === null) return null
  return {
    active: taskSetFromList(req.activeTasks),
    standby: taskSetFromList(req.standbyTasks),
    warmup: taskSetFromList(req.warmupTasks),
  }
}

/** Kafka's names of the member states, as its logs print them. */
const MEMBER_STATE_NAMES: Readonly<Record<number, string>> = {
  0: 'unknown',
  1: 'stable',
  2: 'unrevoked_tasks',
  3: 'unreleased_tasks',
}

/** The timers one handler asks for (most heartbeats ask for none). */
class TimerCollector extends Collector<StreamsCoordinatorRecord> {}

export class StreamsGroupManager {
  readonly #groups = new Map<string, StreamsGroup>()
  /** What the runtime armed: timers that were committed and have neither fired nor been cancelled. */
  readonly #armed: ArmedTimers
  #topics: TopicsImage
  readonly #assignors: TaskAssignorSelector
  readonly #isOtherGroupType: (groupId: string) => boolean
  readonly #configFor: ((groupId: string) => StreamsGroupConfig) | undefined
  /**
   * Groups whose heartbeat asked for the initial-rebalance timer; the timer may be armed only for
   * these. An entry goes when a heartbeat finds the timer no longer armed (fired, cancelled, or its
   * heartbeat's append failed).
   */
  readonly #initialRebalanceAsked = new Set<string>()
  /** The member profiles the groups' members share (see MemberProfiles). */
  readonly #profiles = new MemberProfiles()
  readonly #log: RuntimeLogger

  constructor(options: StreamsGroupManagerOptions) {
    this.#log = options.logger ?? SILENT_LOGGER
    this.#configFor = options.config
    this.#topics = options.topics
    this.#assignors = options.assignors
    this.#isOtherGroupType = options.isOtherGroupType ?? (() => false)
    this.#armed = options.timers ?? NO_ARMED_TIMERS
  }

  // ---- lookups ----

  group(groupId: string): StreamsGroup | undefined {
    return this.#groups.get(groupId)
  }

  groupIds(): string[] {
    return [...this.#groups.keys()]
  }

  /** Whether the runtime has a timer with this key armed. */
  isTimerScheduled(key: string): boolean {
    return this.#armed.isScheduled(key)
  }

  /**
   * A new topic catalog. Groups depending on any of `changedTopics` (all groups when omitted) will
   * reconfigure their topology on the next heartbeat.
   */
  onNewTopicsImage(image: TopicsImage, changedTopics?: Iterable<string>): void {
    this.#topics = image
    const changed = changedTopics === undefined ? null : new Set(changedTopics)
    for (const g of this.#groups.values()) {
      const required = g.topology?.requiredTopics()
      if (changed === null || (required && [...required].some((t) => changed.has(t)))) {
        g.metadataRefreshDeadline = { deadlineMs: 0, epoch: 0 }
      }
    }
  }

  /**
   * The group for another API: GROUP_ID_NOT_FOUND "Group <g> not found." when absent, or
   * "Group <g> is not a streams group." when the id belongs to another group type.
   */
  streamsGroupOrThrow(groupId: string): StreamsGroup {
    const g = this.#groups.get(groupId)
    if (g) return g
    if (this.#isOtherGroupType(groupId)) throw notStreamsGroup(groupId)
    throw groupNotFound(groupId)
  }

  // ---- StreamsGroupHeartbeat ----

  streamsGroupHeartbeat(
    ctx: StreamsHeartbeatContext,
    request: StreamsGroupHeartbeatRequest,
  ): StreamsHeartbeatResult {
    return runHeartbeat(this.#steps, ctx, request)
  }

  readonly #heartbeatTimers = new TimerCollector()

  readonly #steps: HeartbeatSteps<
    StreamsHeartbeatContext,
    StreamsGroupHeartbeatRequest,
    StreamsHeartbeatResult
  > = {
    validate: (_ctx, request) => validateHeartbeatRequest(request),
    leave: (_ctx, request) => this.#leave(request),
    heartbeat: (ctx, request) => this.#heartbeat(ctx, request),
    failed: (e) => ({
      records: [],
      response: createStreamsGroupHeartbeatResponse({
        errorCode: e.errorCode,
        errorMessage: e.errorMessage,
      }),
      timers: NO_TIMERS,
      internalTopicsToCreate: [],
    }),
  }

  #heartbeat(ctx: StreamsHeartbeatContext, req: StreamsGroupHeartbeatRequest): StreamsHeartbeatResult {
    const { nowMs, config } = ctx
    const groupId = req.groupId
    const memberId = req.memberId
    const records: StreamsCoordinatorRecord[] = []
    // One collector for every heartbeat: a heartbeat runs to its end before the next starts.
    const timers = this.#heartbeatTimers.clear()
    const joining = req.memberEpoch === 0

    // 1. Group lookup. A join on a missing group works on a fresh object that is not registered:
    // the real one is created when the records are replayed, and soft state set here is dropped.
    let group = this.#groups.get(groupId)
    const groupExisted = group !== undefined
    if (!group) {
      if (this.#isOtherGroupType(groupId)) throw notStreamsGroup(groupId)
      if (!joining) throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Streams group ${groupId} not found.`)
      group = new StreamsGroup(kept(groupId), this.#sessionTimeoutOp)
    }
    if (joining) {
      const knownStatic = req.instanceId !== null && group.staticMemberId(req.instanceId) !== undefined
      if (!knownStatic && group.members.size >= config.maxSize && !group.members.has(memberId)) {
        throw new ApiError(
          ErrorCode.GROUP_MAX_SIZE_REACHED,
          `The streams group has reached its maximum capacity of ${config.maxSize} members.`,
        )
      }
    }
    // The member with the request's id, if stored (one lookup serves the whole heartbeat).
    const slot = group.slot(memberId)
    // group.state() is EMPTY exactly when there are no members.
    const wasEmpty = slot === undefined && group.size === 0
    // 2. Member lookup (and static replacement).
    const { member, replaced } = heartbeatMember(
      'streams',
      group,
      req,
      slot?.member,
      newMember,
      ownsRequestedSubset,
      undefined,
      renamedMember,
    )
    if (replaced !== null) {
      const target = group.targetAssignment(replaced.memberId)
      records.push(...replacementRecords(groupId, replaced, member, target, REPLACEMENT_RECORDS))
    }
    const isNewMember = slot === undefined && replaced === null

    // 3. Member metadata. A heartbeat that carries no metadata (every field null or -1, the same
    // client) keeps the member object as it is: nothing can differ.
    const ownFieldsSent =
      req.topology !== null || req.processId !== null || req.clientTags !== null || req.userEndpoint !== null
    // The copy sets every field the member's getters hold (a stored member's, see StoredMember:
    // an object spread copies only its own data fields).
    const updated: StreamsGroupMember = updatedMember(member, isNewMember, req, ctx, ownFieldsSent, ownFields)
    let bumpGroupEpoch = false
    if (updated !== member && (isNewMember || memberMetadataDiffers(member, updated))) {
      records.push(memberMetadataRecord(groupId, updated))
      bumpGroupEpoch =
        updated.instanceId === null ? true : isNewMember || epochRelevantConfigDiffers(member, updated)
    }

    // 4. Topology (Topograph D4: epoch upgrades instead of "Topology updates are not supported yet.").
    let topology = group.topology
    let topologyChanged = false
    if (req.topology !== null) {
      const requested = topologyRecordFromRequest(req.topology)
      if (topology === null) {
        topology = new StreamsTopology(requested)
        topologyChanged = true
      } else if (requested.epoch < topology.epoch) {
        throw new ApiError(
          ErrorCode.STREAMS_TOPOLOGY_FENCED,
          `The topology epoch ${requested.epoch} is lower than the group's topology epoch ${topology.epoch}.`,
        )
      } else if (requested.epoch === topology.epoch + 1) {
        topology = new StreamsTopology(requested)
        topologyChanged = true
      } else if (requested.epoch > topology.epoch + 1) {
        throw new ApiError(
          ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH,
          `The topology epoch ${requested.epoch} is more than one above the group's topology epoch ${topology.epoch}.`,
        )
      } else if (!topologyEquals(requested, topology.value)) {
        throw new ApiError(
          ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH,
          `The topology differs from the group's topology at the same epoch ${topology.epoch}; a changed topology needs epoch ${topology.epoch + 1}.`,
        )
      }
      if (topologyChanged) records.push(topologyRecord(groupId, requested))
    }
    if (topology === null) throw new Error(`Streams group ${groupId} has no topology.`)

    // 5. Topology configuration and metadata hash.
    let configured = topologyChanged ? null : group.configuredTopology
    let metadataHash = group.metadataHash
    // The status of the configuration this heartbeat replaces (null: ready; undefined: unknown, or
    // nothing was configured again), for the log.
    let replacedStatus: string | null | undefined
    let reconfigured = false
    if (configured === null || topologyChanged || group.hasMetadataExpired(nowMs)) {
      metadataHash = computeMetadataHash(topology.requiredTopics(), this.#topics)
      replacedStatus =
        configured !== null
          ? (configured.status?.statusDetail ?? null)
          : groupExisted && !topologyChanged && group.validatedTopologyEpoch === topology.epoch
            ? null
            : undefined
      reconfigured = true
      configured = configureTopology(topology, this.#topics)
      group.configuredTopology = configured
      if (metadataHash !== group.metadataHash) bumpGroupEpoch = true
      // Fresh now, bump or not (as Kafka's consumer-group heartbeat sets it). The deadline is soft
      // state: a group replayed after a restart (or created by its first join's records) starts
      // expired, and if only an epoch bump moved it, every heartbeat of a group whose metadata had
      // not changed would hash and configure again until its epoch next moved. A bump below sets
      // it again with the new epoch.
      group.metadataRefreshDeadline = {
        deadlineMs: nowMs + METADATA_REFRESH_INTERVAL_MS,
        epoch: group.groupEpoch,
      }
    }

    // 6. Validated topology epoch, owned-task checks, task offsets.
    let validatedTopologyEpoch = -1
    if (isReady(configured)) {
      validatedTopologyEpoch = topology.epoch
      validateOwnedTasks(req.activeTasks, configured)
      validateOwnedTasks(req.standbyTasks, configured)
      validateOwnedTasks(req.warmupTasks, configured)
    }
    if (validatedTopologyEpoch !== group.validatedTopologyEpoch) bumpGroupEpoch = true
    // Validated here (duplicates are refused) when the request carries offsets; otherwise only built
    // when an assignment is computed.
    const offsetsInRequest = req.taskOffsets !== null || req.taskEndOffsets !== null
    const taskOffsets = offsetsInRequest
      ? updatedTaskOffsets(group.taskOffsets.get(member.memberId), req)
      : null

    // 7. Assignment configs.
    if (!bumpGroupEpoch && !group.assignmentConfigsMatch(config)) bumpGroupEpoch = true

    // 8. Group epoch bump.
    let groupEpoch = group.groupEpoch
    if (bumpGroupEpoch) {
      groupEpoch += 1
      records.push(
        groupMetadataRecord(groupId, {
          epoch: groupEpoch,
          metadataHash,
          validatedTopologyEpoch,
          lastAssignmentConfigs: assignmentConfigs(config),
          storedDescriptionTopologyEpoch: group.storedDescriptionTopologyEpoch,
          failedDescriptionTopologyEpoch: group.failedDescriptionTopologyEpoch,
        }),
      )
      group.metadataRefreshDeadline = { deadlineMs: nowMs + METADATA_REFRESH_INTERVAL_MS, epoch: groupEpoch }
    }

    // 9. Initial rebalance delay. The response is built from here on; its status list starts empty.
    const response = createStreamsGroupHeartbeatResponse()
    const status: HeartbeatStatus[] = response.status!
    const staleTopology = updated.topologyEpoch < topology.epoch
    if (staleTopology) {
      status.push({
        statusCode: TopicStatusCode.STALE_TOPOLOGY,
        statusDetail: `The member's topology epoch ${updated.topologyEpoch} is behind the group's topology epoch ${topology.epoch}.`,
      })
    }
    // Armed by the runtime, or asked for by this heartbeat (armed once its records are durable).
    let initialDelayPending = this.#initialRebalancePending(groupId)
    if (wasEmpty && config.initialRebalanceDelayMs > 0 && !initialDelayPending) {
      initialDelayPending = true
      this.#initialRebalanceAsked.add(groupId)
      this.#schedule(timers, {
        key: group.initialRebalanceKey,
        delayMs: config.initialRebalanceDelayMs,
        op: (firedAtMs) => this.#computeDelayedTargetAssignment(groupId, config, firedAtMs),
      })
    }

    // 10. Target assignment. The member's current target: a static member replacing another takes
    // over the replaced member's target.
    let targetEpoch = group.assignmentEpoch
    // null: the current target, looked up only if the member has to reconcile.
    let target: TasksTuple | null = null
    // The assignor that computed a new target assignment, for the log.
    let assignorName: string | null = null
    if (initialDelayPending) {
      status.push({
        statusCode: TopicStatusCode.ASSIGNMENT_DELAYED,
        statusDetail: 'Assignment delayed due to the configured initial rebalance delay.',
      })
      target = EMPTY_TASKS
    } else if (group.assignmentEpoch >= groupEpoch) {
      // The current target.
    } else if (!canComputeAssignment(group.assignmentTimestamp, config.assignmentIntervalMs, nowMs)) {
      status.push({
        statusCode: TopicStatusCode.ASSIGNMENT_DELAYED,
        statusDetail: 'Assignment delayed due to the configured assignment interval.',
      })
    } else {
      // The group's members and targets as they will be once this heartbeat's records are replayed.
      const { members, targets } = membersAfterHeartbeat(
        group.members,
        group.targetAssignments,
        replaced,
        updated,
      )
      const offsets = new Map(group.taskOffsets)
      offsets.set(memberId, taskOffsets ?? updatedTaskOffsets(group.taskOffsets.get(memberId), req))
      const assignor = this.#assignors.select(config.assignorName)
      const result = computeTargetAssignment({
        members,
        currentTargets: targets,
        taskOffsets: offsets,
        configuredTopology: configured,
        assignmentConfigs: assignmentConfigs(config),
        assignor,
      })
      assignorName = assignor.name()
      for (const id of result.changed)
        records.push(targetAssignmentMemberRecord(groupId, id, result.targets.get(id)!))
      records.push(targetAssignmentMetadataRecord(groupId, groupEpoch, BigInt(nowMs)))
      targetEpoch = groupEpoch
      target = result.targets.get(memberId) ?? EMPTY_TASKS
    }
    if (configured.status !== null) status.push({ ...configured.status })

    // 11. Reconciliation.
    let reconciled = updated
    if (!(updated.state === MemberState.STABLE && updated.memberEpoch === targetEpoch)) {
      reconciled = buildCurrentAssignment({
        member: updated,
        targetEpoch,
        target: target ?? currentTarget(group, memberId, replaced),
        // The tasks the member says it owns: built only when it reconciles (never when steady).
        owned: ownedTuple(req),
        ownership: group,
        withholdNewTasks: staleTopology,
      })
    }
    const assignmentChanged =
      reconciled !== updated &&
      (reconciled.memberEpoch !== updated.memberEpoch ||
        reconciled.previousMemberEpoch !== updated.previousMemberEpoch ||
        reconciled.state !== updated.state ||
        !tasksWithEpochsEquals(reconciled.assignedTasks, updated.assignedTasks) ||
        !tasksWithEpochsEquals(reconciled.tasksPendingRevocation, updated.tasksPendingRevocation))
    if (assignmentChanged || (isNewMember && reconciled === updated)) {
      records.push(currentAssignmentRecord(groupId, reconciled))
    }
    if (assignmentChanged) {
      const rebalanceKey = rebalanceTimeoutKey(groupId, memberId)
      if (reconciled.state === MemberState.UNREVOKED_TASKS) {
        const epochAtSchedule = reconciled.memberEpoch
        this.#schedule(timers, {
          key: rebalanceKey,
          delayMs: reconciled.rebalanceTimeoutMs,
          op: () => this.#onRebalanceTimeout(groupId, memberId, epochAtSchedule),
          retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
        })
      } else {
        this.#cancel(timers, rebalanceKey)
      }
    }

    // 12. Session timeout, shutdown request, task offsets (soft state).
    // A heartbeat that writes nothing while the member's session timer is armed moves the deadline
    // in soft state (see MemberSession); otherwise the timer is scheduled, its key and operation
    // made then (see StreamsGroup.sessionTimer). A member not stored yet has no timer armed.
    if (slot === undefined || mustArmSession(slot, nowMs, config.sessionTimeoutMs, records.length > 0))
      this.#schedule(timers, group.sessionTimer(memberId, config.sessionTimeoutMs))
    if (req.shutdownApplication && group.shutdownRequestMemberId === null) {
      group.shutdownRequestMemberId = memberId
      this.#logShutdownRequest(groupId, memberId)
    }
    if (taskOffsets !== null) group.setTaskOffsets(memberId, taskOffsets)

    // 13. Response.
    const tasksChanged = !tasksWithEpochsEquals(reconciled.assignedTasks, member.assignedTasks)
    const endpointChanged = !userEndpointEquals(member.userEndpoint, updated.userEndpoint)
    if (endpointChanged || (tasksChanged && reconciled.userEndpoint !== null)) group.endpointEpoch += 1
    if (group.shutdownRequestMemberId !== null) {
      status.push({
        statusCode: TopicStatusCode.SHUTDOWN_APPLICATION,
        statusDetail: `Streams group member ${group.shutdownRequestMemberId} encountered a fatal error and requested a shutdown for the entire application.`,
      })
    }
    if (ctx.requestApiVersion >= 1 && config.rackAwareAssignmentTags.length > 0) {
      const missing = config.rackAwareAssignmentTags.filter((t) => !reconciled.clientTags.has(t))
      if (missing.length > 0) {
        status.push({
          statusCode: TopicStatusCode.MISSING_CLIENT_TAGS,
          statusDetail: `Missing required client tags for rack-aware standby assignment: [${missing.join(', ')}]. Configure them via 'client.tag.<tagKey>' in your Streams config.`,
        })
      }
    }
    response.memberId = memberId
    response.memberEpoch = reconciled.memberEpoch
    response.heartbeatIntervalMs = answeredHeartbeatIntervalMs(config, memberId, nowMs)
    response.taskOffsetIntervalMs = config.taskOffsetIntervalMs
    response.acceptableRecoveryLag = config.acceptableRecoveryLag
    response.endpointInformationEpoch = groupExisted ? group.endpointEpoch : 0
    if (joining || tasksChanged) {
      response.activeTasks = taskSetToList(reconciled.assignedTasks.active)
      response.standbyTasks = taskSetToList(reconciled.assignedTasks.standby)
      response.warmupTasks = taskSetToList(reconciled.assignedTasks.warmup)
    }
    if (req.endpointInformationEpoch !== group.endpointEpoch) {
      const others: StreamsGroupMember[] = []
      for (const m of group.members.values()) {
        if (m.memberId !== memberId && m.memberId !== replaced?.memberId) others.push(m)
      }
      response.partitionsByUserEndpoint = buildEndpointToPartitions([...others, reconciled], configured)
    }

    // 14. Log: once every check has passed (a heartbeat that throws logs nothing). A heartbeat that
    // changes nothing logs nothing.
    if (records.length > 0 || reconfigured) {
      const log = this.#log
      if (replaced !== null) {
        log.info(
          { groupId, memberId, instanceId: updated.instanceId, replacedMemberId: replaced.memberId },
          `[GroupId ${groupId}][MemberId ${memberId}] Static member with instance id ${updated.instanceId} re-joins the streams group using the streams protocol. Created a new member ${memberId} to replace the existing member ${replaced.memberId}.`,
        )
      } else if (isNewMember && updated.instanceId !== null) {
        log.info(
          { groupId, memberId, instanceId: updated.instanceId },
          `[GroupId ${groupId}][MemberId ${memberId}] Static member ${memberId} with instance id ${updated.instanceId} joins the streams group.`,
        )
      } else if (isNewMember) {
        log.info(
          { groupId, memberId },
          `[GroupId ${groupId}][MemberId ${memberId}] Member joins the streams group.`,
        )
      }
      if (reconfigured) this.#logTopicConfiguration(groupId, memberId, configured, replacedStatus)
      if (bumpGroupEpoch) {
        log.info(
          { groupId, memberId, groupEpoch, metadataHash: String(metadataHash), validatedTopologyEpoch },
          `[GroupId ${groupId}][MemberId ${memberId}] Bumped streams group epoch to ${groupEpoch} with metadata hash ${metadataHash} and validated topic epoch ${validatedTopologyEpoch}.`,
        )
      }
      if (assignorName !== null) this.#logTargetAssignment(groupId, groupEpoch, assignorName)
      if (assignmentChanged) {
        log.debug(
          {
            groupId,
            memberId,
            memberEpoch: reconciled.memberEpoch,
            previousMemberEpoch: reconciled.previousMemberEpoch,
            state: MEMBER_STATE_NAMES[reconciled.state],
          },
          `[GroupId ${groupId}][MemberId ${memberId}] Member's new assignment state: epoch=${reconciled.memberEpoch}, previousEpoch=${reconciled.previousMemberEpoch}, state=${MEMBER_STATE_NAMES[reconciled.state]}.`,
        )
      }
    }
    return {
      records,
      response,
      timers: timers.intents(),
      internalTopicsToCreate: configured.internalTopicsToBeCreated,
    }
  }

  // ---- leave and fencing ----

  #leave(req: StreamsGroupHeartbeatRequest): StreamsHeartbeatResult {
    const groupId = req.groupId
    const group = this.streamsGroupOrThrow(groupId)
    if (req.shutdownApplication && group.shutdownRequestMemberId === null)
      group.shutdownRequestMemberId = req.memberId
    const response = createStreamsGroupHeartbeatResponse({
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
    })
    const timers = new TimerCollector()
    const member = leavingMember(group, req)
    const memberId = member.memberId
    const instanceId = member.instanceId
    if (req.memberEpoch === EPOCH_STATIC_LEAVE) {
      this.#log.info(
        { groupId, memberId, instanceId, memberEpoch: req.memberEpoch },
        `[GroupId ${groupId}][MemberId ${memberId}] Static member ${memberId} with instance id ${instanceId} temporarily left the streams group.`,
      )
      // The member stays; its active tasks restart at assignment epoch 0 when it comes back.
      const active = member.assignedTasks.active.withEpoch(0)
      const left = withAssignment(member, {
        memberEpoch: EPOCH_STATIC_LEAVE,
        previousMemberEpoch: member.previousMemberEpoch,
        state: member.state,
        assignedTasks: tasksWithEpochs(active, member.assignedTasks.standby, member.assignedTasks.warmup),
        tasksPendingRevocation: EMPTY_TASKS_WITH_EPOCHS,
      })
      return {
        records: [currentAssignmentRecord(groupId, left)],
        response,
        timers: timers.intents(),
        internalTopicsToCreate: [],
      }
    }
    if (instanceId === null) {
      this.#log.info(
        { groupId, memberId, memberEpoch: req.memberEpoch },
        `[GroupId ${groupId}][MemberId ${memberId}] Member ${memberId} left the streams group.`,
      )
    } else {
      this.#log.info(
        { groupId, memberId, instanceId, memberEpoch: req.memberEpoch },
        `[GroupId ${groupId}][MemberId ${memberId}] Static member ${memberId} with instance id ${instanceId} left the streams group.`,
      )
    }
    const records = this.#fenceRecords(group, memberId, timers)
    return { records, response, timers: timers.intents(), internalTopicsToCreate: [] }
  }

  /** Records that remove a member: its tombstones, the group-epoch bump, and, for the last member, the target epoch. */
  #fenceRecords(group: StreamsGroup, memberId: string, timers: TimerCollector): StreamsCoordinatorRecord[] {
    const epoch = group.groupEpoch + 1
    const records = [...memberTombstones(group.groupId, memberId), groupMetadataRecordFrom(group, epoch)]
    this.#log.info(
      { groupId: group.groupId, memberId, groupEpoch: epoch, metadataHash: String(group.metadataHash) },
      `[GroupId ${group.groupId}] Bumped group epoch to ${epoch} with metadata hash ${group.metadataHash}.`,
    )
    if (group.members.size === 1 && group.members.has(memberId)) {
      // The empty group then has equal epochs and the next assignment is not held back by the interval.
      records.push(targetAssignmentMetadataRecord(group.groupId, epoch, 0n))
    }
    this.#cancel(timers, sessionTimeoutKey(group.groupId, memberId))
    this.#cancel(timers, rebalanceTimeoutKey(group.groupId, memberId))
    return records
  }

  /**
   * Whether the group's initial-rebalance timer is armed. Only a heartbeat of this manager asks for
   * that timer, so the runtime is asked only about groups whose heartbeat did (usually none).
   */
  #initialRebalancePending(groupId: string): boolean {
    const asked = this.#initialRebalanceAsked
    if (asked.size === 0 || !asked.has(groupId)) return false
    const group = this.#groups.get(groupId)
    if (group !== undefined && this.#armed.isScheduled(group.initialRebalanceKey)) return true
    if (group === undefined && this.#armed.isScheduled(initialRebalanceKey(groupId))) return true
    asked.delete(groupId)
    return false
  }

  /** Builds a member's session-timeout operation (kept by the group, see StreamsGroup.session). */
  readonly #sessionTimeoutOp = (groupId: string, memberId: string) => (nowMs: number) =>
    this.#onSessionTimeout(groupId, memberId, nowMs)

  #onSessionTimeout(groupId: string, memberId: string, nowMs: number): StreamsTimerResult {
    const group = this.#groups.get(groupId)
    const timers = new TimerCollector()
    const member = group?.member(memberId)
    if (!group || !member) return { records: [], response: undefined, timers: timers.intents() }
    // A heartbeat that wrote nothing moved the deadline past this timer's: re-arm, on the member's
    // phase (see sessionRearmDelayMs).
    const periodMs = sessionFirePeriodMs(this.#configFor?.(groupId) ?? STREAMS_GROUP_CONFIG_DEFAULTS)
    const delayMs = sessionRearmDelayMs(group.slot(memberId)!, nowMs, memberId, periodMs)
    if (delayMs > 0) {
      this.#schedule(timers, group.sessionTimer(memberId, delayMs))
      return { records: [], response: undefined, timers: timers.intents() }
    }
    this.#log.info(
      { groupId, memberId, memberEpoch: member.memberEpoch, reason: 'the member session expired' },
      `[GroupId ${groupId}] Streams member ${memberId} fenced from the group because the member session expired.`,
    )
    return {
      records: this.#fenceRecords(group, memberId, timers),
      response: undefined,
      timers: timers.intents(),
    }
  }

  #onRebalanceTimeout(groupId: string, memberId: string, memberEpoch: number): StreamsTimerResult {
    const group = this.#groups.get(groupId)
    const timers = new TimerCollector()
    const member = group?.member(memberId)
    if (!group || !member || member.memberEpoch !== memberEpoch) {
      logRebalanceTimeout(this.#log, groupId, memberId, memberEpoch, null)
      return { records: [], response: undefined, timers: timers.intents() }
    }
    logRebalanceTimeout(this.#log, groupId, memberId, memberEpoch, member.rebalanceTimeoutMs)
    return {
      records: this.#fenceRecords(group, memberId, timers),
      response: undefined,
      timers: timers.intents(),
    }
  }

  #computeDelayedTargetAssignment(
    groupId: string,
    config: StreamsGroupConfig,
    nowMs: number,
  ): StreamsTimerResult {
    const none: StreamsTimerResult = { records: [], response: undefined, timers: NO_TIMERS }
    const group = this.#groups.get(groupId)
    if (!group || group.members.size === 0 || group.groupEpoch <= group.assignmentEpoch || !group.topology)
      return none
    // The first heartbeat configured the topology on an object that was not kept (§3.1), so the
    // configuration may have to be recomputed here.
    if (group.configuredTopology === null)
      group.configuredTopology = configureTopology(group.topology, this.#topics)
    // The group's assignor as configured now, not when the timer was armed.
    const assignor = this.#assignors.select((this.#configFor?.(groupId) ?? config).assignorName)
    const result = computeTargetAssignment({
      members: group.members,
      currentTargets: group.targetAssignments,
      taskOffsets: group.taskOffsets,
      configuredTopology: group.configuredTopology,
      assignmentConfigs: group.lastAssignmentConfigs,
      assignor,
    })
    this.#logTargetAssignment(groupId, group.groupEpoch, assignor.name())
    const records = result.changed.map((id) =>
      targetAssignmentMemberRecord(groupId, id, result.targets.get(id)!),
    )
    records.push(targetAssignmentMetadataRecord(groupId, group.groupEpoch, BigInt(nowMs)))
    return { records, response: undefined, timers: NO_TIMERS }
  }

  // ---- the log ----

  #logTargetAssignment(groupId: string, groupEpoch: number, assignor: string): void {
    this.#log.info(
      { groupId, groupEpoch, assignor },
      `[GroupId ${groupId}] Computed a new target assignment for epoch ${groupEpoch} with '${assignor}' assignor.`,
    )
  }

  #logShutdownRequest(groupId: string, memberId: string): void {
    this.#log.info(
      { groupId, memberId },
      `[GroupId ${groupId}][MemberId ${memberId}] Shutdown requested for the streams application.`,
    )
  }

  /**
   * A topology configured again: at INFO (WARN when it failed, as Kafka logs it) when its status
   * differs from the one it replaces (`replaced` undefined: not known), at DEBUG otherwise. A failed
   * configuration leaves the group NOT_READY.
   */
  #logTopicConfiguration(
    groupId: string,
    memberId: string,
    configured: ConfiguredTopology,
    replaced: string | null | undefined,
  ): void {
    const status = configured.status
    const changed = replaced === undefined || replaced !== (status?.statusDetail ?? null)
    const epoch = configured.topologyEpoch
    const prefix = `[GroupId ${groupId}][MemberId ${memberId}]`
    if (status === null) {
      const msg = `${prefix} Valid topic configuration found, topology epoch ${epoch} is now initialized.`
      if (changed) this.#log.info({ groupId, memberId, topologyEpoch: epoch }, msg)
      else this.#log.debug({ groupId, memberId, topologyEpoch: epoch }, msg)
      return
    }
    const fields = {
      groupId,
      memberId,
      topologyEpoch: epoch,
      state: StreamsGroupState.NOT_READY,
      statusCode: status.statusCode,
      reason: status.statusDetail,
    }
    const missingInternal = status.statusCode === TopicStatusCode.MISSING_INTERNAL_TOPICS
    const msg = missingInternal
      ? `${prefix} Valid topic configuration found, but internal topics are missing for topology epoch ${epoch}: ${status.statusDetail.replace(/^Internal topics are missing: /, '')}`
      : `${prefix} Topic configuration failed for topology epoch ${epoch}: ${status.statusDetail}`
    if (!changed) this.#log.debug(fields, msg)
    else if (missingInternal) this.#log.info(fields, msg)
    else this.#log.warn(fields, msg)
  }

  #schedule(timers: TimerCollector, timer: StreamsTimer): void {
    timers.schedule(timer)
  }

  #cancel(timers: TimerCollector, key: string): void {
    timers.cancel(key)
  }

  /**
   * Timers to start after loading the shard: a session timeout for every member and a rebalance
   * timeout for members in UNREVOKED_TASKS (Kafka's onLoaded).
   */
  onLoaded(config: StreamsGroupConfig): StreamsTimerIntents {
    const timers = new TimerCollector()
    for (const g of this.#groups.values()) {
      logLoadedGroup(this.#log, 'streams', g.groupId, [...g.members.keys()])
      for (const m of g.members.values()) {
        const groupId = g.groupId
        const memberId = m.memberId
        this.#schedule(
          timers,
          g.sessionTimer(memberId, (this.#configFor?.(groupId) ?? config).sessionTimeoutMs),
        )
        if (m.state === MemberState.UNREVOKED_TASKS) {
          const epoch = m.memberEpoch
          this.#schedule(timers, {
            key: rebalanceTimeoutKey(groupId, memberId),
            delayMs: m.rebalanceTimeoutMs,
            op: () => this.#onRebalanceTimeout(groupId, memberId, epoch),
            retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
          })
        }
      }
    }
    return timers.intents()
  }

  // ---- describe, list, delete, expiry ----

  streamsGroupDescribe(
    groupIds: readonly string[],
    options: {
      readonly includeTopologyDescription: boolean
      readonly assignorName?: (groupId: string) => string | null
    },
  ): StreamsGroupDescribeResponseDescribedGroup[] {
    return groupIds.map((groupId) => {
      const row = createStreamsGroupDescribeResponseDescribedGroup({ groupId })
      if (groupId.trim() === '') return { ...row, groupId: '', errorCode: ErrorCode.INVALID_GROUP_ID }
      let group: StreamsGroup
      try {
        group = this.streamsGroupOrThrow(groupId)
      } catch (e) {
        if (e instanceof ApiError) return { ...row, errorCode: e.errorCode, errorMessage: e.errorMessage }
        throw e
      }
      return group.asDescribedGroup(
        options.includeTopologyDescription,
        this.#assignors.select(options.assignorName?.(groupId) ?? null).name(),
      )
    })
  }

  listGroups(
    statesFilter: readonly string[] = [],
    typesFilter: readonly string[] = [],
  ): ListedStreamsGroup[] {
    return listModernGroups(
      'streams',
      this.#groups.values(),
      (s) => STATE_FILTER_NAMES[s],
      statesFilter,
      typesFilter,
    )
  }

  isEmpty(groupId: string): boolean {
    return this.#groups.get(groupId)?.state() === StreamsGroupState.EMPTY
  }

  /**
   * Whether an empty group may be expired by the cleanup cycle: always, unless a topology
   * description plugin is configured and the group's stored description epoch is not -1.
   */
  shouldExpire(groupId: string, pluginConfigured: boolean): boolean {
    const g = this.#groups.get(groupId)
    if (!g) return false
    return !(pluginConfigured && g.storedDescriptionTopologyEpoch !== -1)
  }

  /**
   * The tombstones deleting a group (DeleteGroups / expiry), in Kafka's order, and the timers to
   * cancel. NON_EMPTY_GROUP when the group still has members.
   */
  deleteGroupRecords(groupId: string): { records: StreamsCoordinatorRecord[]; timers: StreamsTimerIntents } {
    const group = this.streamsGroupOrThrow(groupId)
    if (group.state() !== StreamsGroupState.EMPTY) {
      throw new ApiError(ErrorCode.NON_EMPTY_GROUP, null)
    }
    const timers = new TimerCollector()
    this.#cancel(timers, initialRebalanceKey(groupId))
    return { records: groupTombstones(group), timers: timers.intents() }
  }

  // ---- offsets (§5.6) ----

  /**
   * Validates an OffsetCommit / TxnOffsetCommit against a streams group. Throws ApiError
   * with the error of the whole request.
   */
  validateOffsetCommit(groupId: string, request: StreamsOffsetCommitInput): void {
    this.streamsGroupOrThrow(groupId).validateOffsetCommit(request)
  }

  validateOffsetFetch(groupId: string, memberId: string | null, memberEpoch: number): void {
    this.streamsGroupOrThrow(groupId).validateOffsetFetch(memberId, memberEpoch)
  }

  /** OffsetDelete: whether the group is "subscribed" to a topic (non-empty and a source topic of its topology). */
  isSubscribedToTopic(groupId: string, topic: string): boolean {
    return this.#groups.get(groupId)?.isSubscribedToTopic(topic) ?? false
  }

  // ---- replay ----

  /**
   * The assignment configs of a metadata record as a map: the one last read when it holds the same
   * entries (nearly every group records the broker's settings, so the groups share one map).
   */
  #sharedConfigs(list: readonly { key: string; value: string }[]): ReadonlyMap<string, string> {
    const last = this.#lastConfigs
    if (last.size === list.length && list.every((c) => last.get(c.key) === c.value)) return last
    this.#lastConfigs = new Map(list.map((c) => [c.key, c.value]))
    return this.#lastConfigs
  }
  #lastConfigs: ReadonlyMap<string, string> = new Map()

  replay(record: StreamsCoordinatorRecord): void {
    const groupId = record.key.groupId
    const getOrCreate = (): StreamsGroup => {
      let g = this.#groups.get(groupId)
      if (!g) {
        g = new StreamsGroup(kept(groupId), this.#sessionTimeoutOp)
        this.#groups.set(g.groupId, g)
      }
      return g
    }
    const existing = (): StreamsGroup | undefined => this.#groups.get(groupId)
    switch (record.type) {
      case 'StreamsGroupMetadata': {
        if (record.value) {
          const v = record.value
          getOrCreate().replayMetadata({
            epoch: v.epoch,
            metadataHash: v.metadataHash,
            validatedTopologyEpoch: v.validatedTopologyEpoch,
            lastAssignmentConfigs: this.#sharedConfigs(v.lastAssignmentConfigs ?? []),
            storedDescriptionTopologyEpoch: v.storedDescriptionTopologyEpoch,
            failedDescriptionTopologyEpoch: v.failedDescriptionTopologyEpoch,
          })
        } else {
          const g = existing()
          if (!g) return
          if (!g.canBeRemoved()) {
            throw new Error(
              `Received a metadata tombstone for streams group ${groupId} that still has members or targets.`,
            )
          }
          this.#groups.delete(groupId)
        }
        return
      }
      case 'StreamsGroupMemberMetadata': {
        const memberId = record.key.memberId
        if (record.value) {
          const v = record.value
          const g = getOrCreate()
          const base = g.member(memberId) ?? newMember(kept(memberId))
          g.updateMember(
            {
              // The fields of the current assignment (a stored member's, which a spread would not
              // copy completely: see withAssignment), then the record's.
              memberId: base.memberId,
              memberEpoch: base.memberEpoch,
              previousMemberEpoch: base.previousMemberEpoch,
              state: base.state,
              assignedTasks: base.assignedTasks,
              tasksPendingRevocation: base.tasksPendingRevocation,
              ...commonFieldsFromRecord(v),
              topologyEpoch: v.topologyEpoch,
              processId: kept(v.processId),
              userEndpoint: v.userEndpoint ? { host: v.userEndpoint.host, port: v.userEndpoint.port } : null,
              clientTags: sortedTags(new Map(v.clientTags.map((t) => [t.key, t.value]))),
            },
            this.#profiles,
          )
        } else replayMemberTombstone(groupId, memberId, existing())
        return
      }
      case 'StreamsGroupTargetAssignmentMetadata': {
        if (record.value)
          getOrCreate().replayTargetAssignmentMetadata(
            record.value.assignmentEpoch,
            record.value.assignmentTimestamp,
          )
        else existing()?.replayTargetAssignmentMetadataTombstone()
        return
      }
      case 'StreamsGroupTargetAssignmentMember': {
        const v = record.value
        if (v) {
          const g = getOrCreate()
          const intern = (id: string) => g.internSubtopologyId(id)
          g.replayTargetAssignmentMember(
            record.key.memberId,
            tasksTuple(
              taskSetFromList(v.activeTasks, intern),
              taskSetFromList(v.standbyTasks, intern),
              taskSetFromList(v.warmupTasks, intern),
            ),
          )
        } else existing()?.replayTargetAssignmentMember(record.key.memberId, null)
        return
      }
      case 'StreamsGroupCurrentMemberAssignment': {
        const memberId = record.key.memberId
        const v = record.value
        if (v) {
          const g = getOrCreate()
          const base = g.member(memberId) ?? newMember(kept(memberId))
          const intern = (id: string) => g.internSubtopologyId(id)
          g.updateMember(
            withAssignment(base, {
              memberEpoch: v.memberEpoch,
              previousMemberEpoch: v.previousMemberEpoch,
              state: memberStateFromRecord(v.state),
              assignedTasks: tasksWithEpochs(
                taskEpochsFromRecord(v.activeTasks, v.memberEpoch, intern),
                taskSetFromList(v.standbyTasks, intern),
                taskSetFromList(v.warmupTasks, intern),
              ),
              tasksPendingRevocation: tasksWithEpochs(
                taskEpochsFromRecord(v.activeTasksPendingRevocation, v.memberEpoch, intern),
                taskSetFromList(v.standbyTasksPendingRevocation, intern),
                taskSetFromList(v.warmupTasksPendingRevocation, intern),
              ),
            }),
            this.#profiles,
          )
        } else {
          const g = existing()
          const m = g?.member(memberId)
          if (!g || !m) return
          g.updateMember(
            withAssignment(m, {
              memberEpoch: -1,
              previousMemberEpoch: -1,
              state: m.state,
              assignedTasks: EMPTY_TASKS_WITH_EPOCHS,
              tasksPendingRevocation: EMPTY_TASKS_WITH_EPOCHS,
            }),
            this.#profiles,
          )
        }
        return
      }
      case 'StreamsGroupTopology': {
        if (record.value) getOrCreate().replayTopology(new StreamsTopology(record.value))
        else existing()?.replayTopology(null)
        return
      }
    }
  }
}

/** The member's current target: a static member replacing another takes over the replaced member's target. */
function currentTarget(
  group: StreamsGroup,
  memberId: string,
  replaced: StreamsGroupMember | null,
): TasksTuple {
  return (
    (replaced !== null ? group.targetAssignments.get(replaced.memberId) : undefined) ??
    group.targetAssignments.get(memberId) ??
    EMPTY_TASKS
  )
}

/** A streams member's own fields as a heartbeat that carries some of them leaves them. */
function ownFields(
  member: StreamsGroupMember,
  req: StreamsGroupHeartbeatRequest,
): Partial<StreamsGroupMember> {
  return {
    // Held by getters on a stored member (see StoredMember), so the spread does not copy them.
    state: member.state,
    assignedTasks: member.assignedTasks,
    tasksPendingRevocation: member.tasksPendingRevocation,
    topologyEpoch: req.topology !== null ? req.topology.epoch : member.topologyEpoch,
    processId: req.processId ?? member.processId,
    clientTags:
      req.clientTags !== null
        ? sortedTags(new Map(req.clientTags.map((t) => [t.key, t.value])))
        : member.clientTags,
    userEndpoint: req.memberEpoch === 0 || req.userEndpoint !== null ? req.userEndpoint : member.userEndpoint,
  }
}

/** {@link ownsSubset} of the tasks the heartbeat says the member owns (the member's epoch checks). */
function ownsRequestedSubset(member: StreamsGroupMember, req: StreamsGroupHeartbeatRequest): boolean {
  return ownsSubset(member, ownedTuple(req))
}

/** A static member joining under a new id: a copy of the holder of its instance id at epoch 0. */
function renamedMember(owner: StreamsGroupMember, memberId: string): StreamsGroupMember {
  return { ...memberValue(owner), memberId, memberEpoch: 0, previousMemberEpoch: 0 }
}

/** Whether the member reported owning no more than it was given (a lost epoch bump may be retried). */
function ownsSubset(member: StreamsGroupMember, owned: TasksTuple | null): boolean {
  if (owned === null) return false
  return (
    owned.active.isSubsetOf(member.assignedTasks.active) &&
    owned.standby.isSubsetOf(member.assignedTasks.standby) &&
    owned.warmup.isSubsetOf(member.assignedTasks.warmup)
  )
}

function validateOwnedTasks(list: readonly TaskIds[] | null, configured: ConfiguredTopology): void {
  if (list === null || configured.subtopologies === null) return
  for (const t of list) {
    const s = configured.subtopologies.get(t.subtopologyId)
    if (!s) throw invalidRequest(`Subtopology ${t.subtopologyId} does not exist in the topology.`)
    for (const p of t.partitions) {
      if (p < 0 || p >= s.numberOfTasks) {
        throw invalidRequest(
          `Task ${p} for subtopology ${t.subtopologyId} is invalid. Number of tasks for this subtopology: ${s.numberOfTasks}`,
        )
      }
    }
  }
}

function updatedTaskOffsets(
  previous: MemberTaskOffsets | undefined,
  req: StreamsGroupHeartbeatRequest,
): MemberTaskOffsets {
  const toMap = (list: readonly TaskOffset[]): Map<string, bigint> => {
    const m = new Map<string, bigint>()
    for (const o of list) {
      const k = offsetKey(o.subtopologyId, o.partition)
      if (m.has(k)) {
        throw invalidRequest(
          `Task offsets contain a duplicate entry for subtopology ${o.subtopologyId} and partition ${o.partition}.`,
        )
      }
      m.set(k, o.offset)
    }
    return m
  }
  return {
    taskOffsets: req.taskOffsets !== null ? toMap(req.taskOffsets) : (previous?.taskOffsets ?? new Map()),
    taskEndOffsets:
      req.taskEndOffsets !== null ? toMap(req.taskEndOffsets) : (previous?.taskEndOffsets ?? new Map()),
  }
}
