/**
 * The consumer part of the group metadata manager (Kafka's GroupMetadataManager for KIP-848
 * consumer groups): the ConsumerGroupHeartbeat algorithm, its timers, describe, list, delete,
 * offset validation, and `replay` of the consumer records. Handlers never change persisted state:
 * they return records, which the runtime appends and then replays through `replay`.
 *
 * Differences from Kafka (docs/consumer-groups.md): subscription patterns are matched against the
 * catalog in the heartbeat itself (Kafka resolves them on a background thread and writes the result
 * later), so a new pattern's topics are assigned in the same heartbeat; the metadata hash is the
 * streams groups' FNV-1a hash; ties between preferred assignors go to the first name in sort order.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'
import {
  type ConsumerGroupDescribeResponseDescribedGroup,
  createConsumerGroupDescribeResponseDescribedGroup,
} from '../../../protocol/generated/messages/ConsumerGroupDescribeResponse.js'
import type { ConsumerGroupHeartbeatRequest } from '../../../protocol/generated/messages/ConsumerGroupHeartbeatRequest.js'
import {
  type ConsumerGroupHeartbeatResponse,
  createConsumerGroupHeartbeatResponse,
} from '../../../protocol/generated/messages/ConsumerGroupHeartbeatResponse.js'
import type { HeartbeatRequest } from '../../../protocol/generated/messages/HeartbeatRequest.js'
import {
  createHeartbeatResponse,
  type HeartbeatResponse,
} from '../../../protocol/generated/messages/HeartbeatResponse.js'
import type { JoinGroupRequest } from '../../../protocol/generated/messages/JoinGroupRequest.js'
import {
  createJoinGroupResponse,
  type JoinGroupResponse,
} from '../../../protocol/generated/messages/JoinGroupResponse.js'
import type { LeaveGroupRequest } from '../../../protocol/generated/messages/LeaveGroupRequest.js'
import {
  createLeaveGroupResponse,
  type LeaveGroupResponse,
  type LeaveGroupResponseMemberResponse,
} from '../../../protocol/generated/messages/LeaveGroupResponse.js'
import type { SyncGroupRequest } from '../../../protocol/generated/messages/SyncGroupRequest.js'
import {
  createSyncGroupResponse,
  type SyncGroupResponse,
} from '../../../protocol/generated/messages/SyncGroupResponse.js'
import { ApiError, invalidRequest } from '../api-error.js'
import {
  type ListedModernGroup,
  type MemberOffsetCommit,
  listModernGroups,
  membersAfterHeartbeat,
  runHeartbeat,
  type HeartbeatSteps,
} from '../modern/groups.js'
import { canComputeAssignment } from '../modern/epochs.js'
import { answeredHeartbeatIntervalMs } from '../modern/heartbeat-phase.js'
import * as membership from '../modern/membership.js'
import { extendSession, sessionFirePeriodMs, sessionStillAlive } from '../modern/session.js'
import {
  classicJoinTimeoutKey,
  classicSyncTimeoutKey,
  MEMBER_TIMER_RETRY_BACKOFF_MS,
  rebalanceTimeoutKey,
  sessionTimeoutKey,
} from '../modern/timers.js'
import type { ClassicCompletion } from '../classic/types.js'
import type { ClassicGroupManager } from '../classic/manager.js'
import type { ClassicProtocol } from '../classic/group.js'
import {
  CONSUMER_PROTOCOL_TYPE,
  ConsumerProtocolError,
  consumerProtocolVersion,
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  type TopicPartitions,
} from '../../../protocol/consumer-protocol.js'
import {
  type ArmedTimers,
  type CoordinatorResult,
  type GroupCoordinatorResult,
  NO_ARMED_TIMERS,
  NO_TIMERS,
  TimerCollector,
} from '../result.js'
import { computeMetadataHash, type TopicsImage } from '../streams/configured-topology.js'
import { kept } from '../streams/strings.js'
import {
  ConsumerAssignors,
  type GroupSpec,
  type MemberSubscriptionSpec,
  PartitionAssignorException,
} from './assignor/index.js'
import { CONSUMER_GROUP_CONFIG_DEFAULTS, type ConsumerGroupConfig } from './config.js'
import { buildConsumerAssignment } from './current-assignment-builder.js'
import {
  CONSUMER_STATE_FILTER_NAMES,
  ConsumerGroup,
  ConsumerGroupState,
  type ConsumerTimerResult,
} from './group.js'
import {
  assignmentDiffers,
  type ConsumerGroupMember,
  ConsumerMemberState,
  consumerMemberStateFromRecord,
  hasRegex,
  isReconciledTo,
  memberMetadataDiffers,
  namesEqual,
  newConsumerMember,
  sortedNames,
  CONSUMER_MEMBER_STATE_NAMES,
} from './member.js'
import {
  EMPTY_PARTITIONS,
  type PartitionSet,
  partitionEpochsEquals,
  partitionEpochsFromRecord,
  partitionEpochsKeys,
  partitionSetEquals,
  partitionSetFromList,
  partitionSetToList,
  partitionSetWithEpoch,
  withEpoch,
} from './partitions.js'
import {
  CONSUMER_REPLACEMENT_RECORDS,
  type ConsumerCoordinatorRecord,
  currentAssignmentRecord,
  groupEpochRecord,
  groupTombstones,
  memberSubscriptionRecord,
  memberTombstones,
  type ResolvedRegularExpression,
  regularExpressionRecord,
  regularExpressionTombstone,
  subscriptionMetadataTombstone,
  targetAssignmentMetadataRecord,
  targetAssignmentRecord,
} from './records.js'
import { resolveTopicRegex, throwIfRegularExpressionIsInvalid } from './regex.js'
import type { RuntimeLogger } from '../../runtime/types.js'
import { logLoadedGroup, logRebalanceTimeout, SILENT_LOGGER } from '../group-log.js'

/** The topic catalog as consumer groups read it: names for subscription patterns. */
export interface ConsumerTopicsImage extends TopicsImage {
  /** Every topic name (absent: patterns match nothing). */
  topicNames?(): Iterable<string>
}

export interface ConsumerHeartbeatContext {
  readonly nowMs: number
  readonly requestApiVersion: number
  readonly clientId: string
  /** The connection's address, e.g. "/127.0.0.1". */
  readonly clientHost: string
  /** The group's effective settings. */
  readonly config: ConsumerGroupConfig
  /** A fresh member id for a version-0 join without one (the service draws it). */
  readonly newMemberId: () => string
  /**
   * Of the topics the group's patterns match, those the heartbeat's principal may DESCRIBE (Kafka's
   * TopicRegexResolver filters every pattern of the group with the context of the heartbeat that
   * matches them). Absent: every topic. Synchronous and pure for one heartbeat; its answer is
   * written in the ConsumerGroupRegularExpression record, so replay does not call it.
   */
  readonly describableTopics?: (topics: readonly string[]) => readonly string[]
}

export interface ConsumerHeartbeatResult
  extends CoordinatorResult<CoordinatorRecord, ConsumerGroupHeartbeatResponse, ClassicCompletion> {
  readonly records: CoordinatorRecord[]
}

export interface ConsumerGroupManagerOptions {
  readonly topics: ConsumerTopicsImage
  /** Whether the id belongs to a group of another type (classic, streams, simple). */
  readonly isOtherGroupType?: (groupId: string) => boolean
  readonly timers?: ArmedTimers
  /** A group's effective settings, read when a timer fires and when the shard loads. */
  readonly config?: (groupId: string) => ConsumerGroupConfig
  /**
   * The classic groups of the shard, for online migration: a consumer join upgrades a non-empty
   * classic group (read through `group`), and a consumer group whose members all speak the classic
   * protocol is downgraded (`downgradedGroup`, within `config.maxSize`). Absent: no migration.
   */
  readonly classicGroups?: Pick<ClassicGroupManager, 'group' | 'config' | 'downgradedGroup'>
  /** Where group events are logged (see group-log.ts); default: nowhere. */
  readonly logger?: RuntimeLogger
}

export type ListedConsumerGroup = ListedModernGroup<'consumer'>

/** A classic request (SyncGroup, Heartbeat, LeaveGroup) answered by a consumer group. */
export interface ClassicMemberContext {
  readonly nowMs: number
  readonly apiVersion: number
  /** The parked request's handle (SyncGroup). */
  readonly token: number
}

/** A JoinGroup answered by a consumer group. */
export interface ClassicMemberJoinContext extends ClassicMemberContext {
  readonly clientId: string
  readonly clientHost: string
  /** The new member id of a member joining without one. */
  readonly newMemberUuid: string
  /** The group's effective settings. */
  readonly config: ConsumerGroupConfig
}

/** ConsumerGroupHeartbeat v1 requires the member id from the client (KIP-1082). */
const MEMBER_ID_REQUIRED_VERSION = 1
/** Kafka pushes the metadata refresh deadline out by Integer.MAX_VALUE ms on every bump. */
const METADATA_REFRESH_INTERVAL_MS = 2147483647
/** Kafka refreshes a group's patterns at most this often unless a member brings a new one. */
const REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000
/** Describe's MemberType of a member speaking the consumer protocol (v1+). */
const MEMBER_TYPE_CONSUMER = 1
const MEMBER_TYPE_CLASSIC = 0

const notConsumerGroup = (g: string) =>
  new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${g} is not a consumer group.`)
/** Kafka's request checks (GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid). */
export function validateConsumerHeartbeat(
  req: ConsumerGroupHeartbeatRequest,
  apiVersion: number,
  assignors: readonly string[],
): void {
  membership.validateCommonHeartbeat(
    req,
    apiVersion >= MEMBER_ID_REQUIRED_VERSION ||
      req.memberEpoch > 0 ||
      req.memberEpoch === membership.LEAVE_GROUP_MEMBER_EPOCH,
  )
  if (req.memberEpoch === 0) {
    if (req.topicPartitions === null || req.topicPartitions.length > 0)
      throw invalidRequest('TopicPartitions must be empty when (re-)joining.')
    if (req.subscribedTopicNames === null && req.subscribedTopicRegex === null)
      throw invalidRequest(
        'Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.',
      )
  } else if (req.memberEpoch === membership.LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
    if (req.instanceId === null) throw invalidRequest("InstanceId can't be null.")
  } else if (req.memberEpoch < membership.LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
    throw invalidRequest('MemberEpoch is invalid.')
  }
  if (req.serverAssignor !== null && !assignors.includes(req.serverAssignor)) {
    throw new ApiError(
      ErrorCode.UNSUPPORTED_ASSIGNOR,
      `ServerAssignor ${req.serverAssignor} is not supported. Supported assignors: ${assignors.join(', ')}.`,
    )
  }
}

function ownsSubset(
  owned: ConsumerGroupHeartbeatRequest['topicPartitions'],
  member: ConsumerGroupMember,
): boolean {
  if (owned === null) return false
  for (const t of owned) {
    const m = member.assignedPartitions.get(t.topicId)
    if (m === undefined) return false
    for (const p of t.partitions) if (!m.has(p)) return false
  }
  return true
}

/** A consumer member's own fields as a heartbeat that carries some of them leaves them. */
function ownFields(
  member: ConsumerGroupMember,
  req: ConsumerGroupHeartbeatRequest,
): Partial<ConsumerGroupMember> {
  return {
    serverAssignorName: req.serverAssignor ?? member.serverAssignorName,
    subscribedTopicNames:
      req.subscribedTopicNames !== null ? sortedNames(req.subscribedTopicNames) : member.subscribedTopicNames,
    subscribedTopicRegex: req.subscribedTopicRegex ?? member.subscribedTopicRegex,
    classicMemberMetadata: null,
  }
}

/** Whether the member owns the partitions the heartbeat says it owns (epoch checks). */
function ownsRequestedSubset(member: ConsumerGroupMember, req: ConsumerGroupHeartbeatRequest): boolean {
  return ownsSubset(req.topicPartitions, member)
}

/** A consumer-protocol member may replace a static member still speaking the classic protocol. */
function releasedOrClassic(owner: ConsumerGroupMember): boolean {
  return (
    owner.classicMemberMetadata !== null || owner.memberEpoch === membership.LEAVE_GROUP_STATIC_MEMBER_EPOCH
  )
}

export class ConsumerGroupManager {
  readonly #groups = new Map<string, ConsumerGroup>()
  readonly #armed: ArmedTimers
  #topics: ConsumerTopicsImage
  readonly #isOtherGroupType: (groupId: string) => boolean
  readonly #configFor: ((groupId: string) => ConsumerGroupConfig) | undefined
  readonly #classic: ConsumerGroupManagerOptions['classicGroups']
  /** Assignor registries by their configured name list (one for the broker's list, as a rule). */
  readonly #assignors = new Map<string, ConsumerAssignors>()
  /** Bumped on every catalog change; stored as the Version of resolved patterns. */
  #topicsVersion = 0n

  readonly #log: RuntimeLogger

  constructor(options: ConsumerGroupManagerOptions) {
    this.#log = options.logger ?? SILENT_LOGGER
    this.#topics = options.topics
    this.#isOtherGroupType = options.isOtherGroupType ?? (() => false)
    this.#armed = options.timers ?? NO_ARMED_TIMERS
    this.#configFor = options.config
    this.#classic = options.classicGroups
  }

  group(groupId: string): ConsumerGroup | undefined {
    return this.#groups.get(groupId)
  }

  groupIds(): string[] {
    return [...this.#groups.keys()]
  }

  isTimerScheduled(key: string): boolean {
    return this.#armed.isScheduled(key)
  }

  #config(groupId: string): ConsumerGroupConfig {
    return this.#configFor?.(groupId) ?? CONSUMER_GROUP_CONFIG_DEFAULTS
  }

  #assignorsOf(config: ConsumerGroupConfig): ConsumerAssignors {
    const key = config.assignors.join(',')
    let a = this.#assignors.get(key)
    if (a === undefined) this.#assignors.set(key, (a = new ConsumerAssignors(config.assignors)))
    return a
  }

  /**
   * A new topic catalog: groups whose topics changed recompute their metadata hash on the next
   * heartbeat, and groups with subscription patterns match them again (a topic may have appeared).
   */
  onNewTopicsImage(image: ConsumerTopicsImage, changedTopics?: Iterable<string>): void {
    this.#topics = image
    this.#topicsVersion++
    const changed = changedTopics === undefined ? null : new Set(changedTopics)
    for (const g of this.#groups.values()) {
      if (g.subscribedRegularExpressions.size > 0) g.regexRefreshNeeded = true
      if (changed === null || [...this.#subscribedTopicNames(g, null, null)].some((t) => changed.has(t))) {
        g.setMetadataRefreshDeadline(0, 0)
      }
    }
  }

  /** GROUP_ID_NOT_FOUND "Consumer group <g> not found." or "Group <g> is not a consumer group.". */
  consumerGroupOrThrow(groupId: string): ConsumerGroup {
    const g = this.#groups.get(groupId)
    if (g) return g
    if (this.#isOtherGroupType(groupId)) throw notConsumerGroup(groupId)
    throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${groupId} not found.`)
  }

  // ---- ConsumerGroupHeartbeat ----

  consumerGroupHeartbeat(
    ctx: ConsumerHeartbeatContext,
    request: ConsumerGroupHeartbeatRequest,
  ): ConsumerHeartbeatResult {
    return runHeartbeat(this.#steps, ctx, request)
  }

  readonly #steps: HeartbeatSteps<
    ConsumerHeartbeatContext,
    ConsumerGroupHeartbeatRequest,
    ConsumerHeartbeatResult
  > = {
    validate: (ctx, request) =>
      validateConsumerHeartbeat(request, ctx.requestApiVersion, ctx.config.assignors),
    leave: (ctx, request) => this.#leave(request, ctx.nowMs),
    heartbeat: (ctx, request) => this.#heartbeat(ctx, request),
    failed: (e) => ({
      records: [],
      response: createConsumerGroupHeartbeatResponse({
        errorCode: e.errorCode,
        errorMessage: e.errorMessage,
      }),
      timers: NO_TIMERS,
    }),
  }

  #heartbeat(ctx: ConsumerHeartbeatContext, req: ConsumerGroupHeartbeatRequest): ConsumerHeartbeatResult {
    const { nowMs, config } = ctx
    const groupId = req.groupId
    const records: CoordinatorRecord[] = []
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    const joining = req.memberEpoch === 0

    // 1. The group. A join on a missing group works on a fresh object that is not registered: the
    // real one is created when the records are replayed. A join on a non-empty classic group
    // upgrades it: the group is built from the classic group's records (written first).
    let group = this.#groups.get(groupId)
    const classic = !group && joining ? this.#classic?.group(groupId) : undefined
    if (classic !== undefined && classic.members.size > 0) {
      group = this.#upgradedGroup(classic, config, records, timers)
    } else if (!group) {
      if (this.#isOtherGroupType(groupId)) throw notConsumerGroup(groupId)
      if (!joining) throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${groupId} not found.`)
      group = new ConsumerGroup(kept(groupId), this.#sessionTimeoutOp)
    }
    if (group.staticMemberId(req.instanceId) === undefined) {
      if (group.size >= config.maxSize && (req.memberId === '' || group.member(req.memberId) === undefined)) {
        throw new ApiError(
          ErrorCode.GROUP_MAX_SIZE_REACHED,
          `The consumer group has reached its maximum capacity of ${config.maxSize} members.`,
        )
      }
    }
    const memberId = req.memberId === '' ? ctx.newMemberId() : req.memberId
    const slot = group.slot(memberId)

    // 2. The member (and a static member's replacement). A member still speaking the classic
    // protocol may be replaced by a consumer-protocol member with its instance id at any time.
    const { member, replaced } = membership.heartbeatMember(
      'consumer',
      group,
      req.memberId === memberId ? req : { ...req, memberId },
      slot?.member,
      newConsumerMember,
      ownsRequestedSubset,
      releasedOrClassic,
    )
    if (replaced !== null) {
      const target = group.targetAssignment(replaced.memberId)
      records.push(
        ...membership.replacementRecords(groupId, replaced, member, target, CONSUMER_REPLACEMENT_RECORDS),
      )
    }
    const isNewMember = slot === undefined && replaced === null

    // 3. Member metadata. A heartbeat that carries nothing new keeps the member object as it is;
    // a member that spoke the classic protocol stops doing so.
    const ownFieldsSent =
      req.serverAssignor !== null ||
      req.subscribedTopicNames !== null ||
      req.subscribedTopicRegex !== null ||
      member.classicMemberMetadata !== null
    const updated = membership.updatedMember(member, isNewMember, req, ctx, ownFieldsSent, ownFields)
    let namesChanged = false
    if (updated !== member && (isNewMember || memberMetadataDiffers(member, updated))) {
      records.push(memberSubscriptionRecord(groupId, updated))
      namesChanged = !namesEqual(member.subscribedTopicNames, updated.subscribedTopicNames)
    }

    // 4. Subscription patterns, matched against the catalog here.
    const regexes = this.#updateRegularExpressions(group, member, updated, ctx, records)
    const assignorChanged =
      (group.preferredServerAssignor(null, null) ?? config.assignors[0]) !==
      (group.preferredServerAssignor(slot?.member ?? replaced ?? null, updated) ?? config.assignors[0])
    const hasSubscriptionChanged = namesChanged || regexes.regexChanged
    // A member joining a group still at epoch 0 (none of its members subscribed to a topic name
    // or to a pattern that matched one) bumps it too, unlike Kafka: at epoch 0 the Java consumer
    // sends its next heartbeat without the join's fields and gets INVALID_REQUEST ("RebalanceTimeoutMs
    // must be provided in first request."), so a new group whose pattern matches no topic yet
    // could not start (docs/consumer-groups.md, Differences from Kafka).
    const bumpGroupEpoch =
      namesChanged || regexes.bump || assignorChanged || (joining && group.groupEpoch === 0)

    this.#logJoin(groupId, memberId, updated.instanceId, replaced, isNewMember, 'consumer')

    // 5–7. Metadata hash and group epoch, target assignment, reconciliation.
    const reconciled = this.#assignAndReconcile(group, {
      old: slot?.member ?? replaced,
      replaced,
      updated,
      resolved: regexes.resolved,
      bump: bumpGroupEpoch,
      hasSubscriptionChanged,
      owned: req.topicPartitions,
      config,
      nowMs,
      records,
      timers,
    })

    // 8. Session timeout.
    extendSession(timers, slot ?? group.session(memberId), nowMs, config.sessionTimeoutMs, records.length > 0)

    // 9. Response: the assignment goes with a join, a full request, or a change.
    const response = createConsumerGroupHeartbeatResponse({
      memberId,
      memberEpoch: reconciled.memberEpoch,
      heartbeatIntervalMs: answeredHeartbeatIntervalMs(config, memberId, nowMs),
    })
    const isFullRequest =
      req.rebalanceTimeoutMs !== -1 &&
      (req.subscribedTopicNames !== null || req.subscribedTopicRegex !== null) &&
      req.topicPartitions !== null
    if (
      joining ||
      isFullRequest ||
      !partitionEpochsEquals(member.assignedPartitions, reconciled.assignedPartitions)
    ) {
      response.assignment = { topicPartitions: partitionSetToList(reconciled.assignedPartitions) }
    }
    return { records, response, timers: timers.intents() }
  }

  /**
   * A heartbeat's (or a classic join's) steps 5–7: the group epoch (Kafka's
   * updateSubscriptionMetadata), the target assignment (maybeUpdateTargetAssignment), and the
   * member's reconciliation (maybeReconcile). A consumer-protocol member revoking partitions gets a
   * rebalance timeout (`timers`); a classic member has join and sync deadlines instead (`timers`
   * null). Returns the member as reconciled.
   */
  #assignAndReconcile(
    group: ConsumerGroup,
    p: {
      readonly old: ConsumerGroupMember | null
      readonly replaced: ConsumerGroupMember | null
      readonly updated: ConsumerGroupMember
      readonly resolved: ReadonlyMap<string, ResolvedRegularExpression>
      readonly bump: boolean
      readonly hasSubscriptionChanged: boolean
      readonly owned: ConsumerGroupHeartbeatRequest['topicPartitions']
      readonly config: ConsumerGroupConfig
      readonly nowMs: number
      readonly records: CoordinatorRecord[]
      readonly timers: TimerCollector<CoordinatorRecord, ClassicCompletion> | null
    },
  ): ConsumerGroupMember {
    const { updated, records } = p
    const groupId = group.groupId
    const memberId = updated.memberId
    const groupEpoch = this.#maybeBumpGroupEpoch(group, p.old, updated, p.resolved, p.bump, p.nowMs, records)
    const { targetEpoch, target } = this.#maybeUpdateTargetAssignment(
      group,
      groupEpoch,
      p.old,
      p.replaced,
      updated,
      p.resolved,
      p.config,
      p.nowMs,
      records,
    )
    if (!p.hasSubscriptionChanged && isReconciledTo(updated, targetEpoch)) return updated
    const reconciled = buildConsumerAssignment({
      member: updated,
      targetEpoch,
      target: target ?? this.#currentTarget(group, memberId, p.replaced),
      subscribedTopicIds: this.#subscribedTopicIds(updated, p.resolved),
      currentPartitionEpoch: (topicId, partition) => group.currentPartitionEpoch(topicId, partition),
      hasSubscriptionChanged: p.hasSubscriptionChanged,
      owned: p.owned,
    })
    if (reconciled === updated || !assignmentDiffers(reconciled, updated)) return updated
    records.push(currentAssignmentRecord(groupId, reconciled))
    const state = CONSUMER_MEMBER_STATE_NAMES[reconciled.state]
    this.#log.debug(
      {
        groupId,
        memberId,
        memberEpoch: reconciled.memberEpoch,
        previousMemberEpoch: reconciled.previousMemberEpoch,
        state,
      },
      `[GroupId ${groupId}] Member ${memberId} new assignment state: epoch=${reconciled.memberEpoch}, previousEpoch=${reconciled.previousMemberEpoch}, state=${state}.`,
    )
    const timers = p.timers
    if (timers !== null) {
      const key = rebalanceTimeoutKey(groupId, memberId)
      if (reconciled.state === ConsumerMemberState.UNREVOKED_PARTITIONS) {
        const epoch = reconciled.memberEpoch
        timers.schedule({
          key,
          delayMs: reconciled.rebalanceTimeoutMs,
          op: (now) => this.#onRebalanceTimeout(groupId, memberId, epoch, now),
          retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
        })
      } else timers.cancel(key)
    }
    return reconciled
  }

  /**
   * Kafka's updateSubscriptionMetadata: when the subscription changed or the metadata expired, the
   * hash of the subscribed topics is computed again; a change (or `bump`) bumps the group epoch.
   */
  #maybeBumpGroupEpoch(
    group: ConsumerGroup,
    old: ConsumerGroupMember | null,
    updated: ConsumerGroupMember,
    resolved: ReadonlyMap<string, ResolvedRegularExpression>,
    bump: boolean,
    nowMs: number,
    records: CoordinatorRecord[],
  ): number {
    let groupEpoch = group.groupEpoch
    if (bump || group.hasMetadataExpired(nowMs)) {
      const hash = computeMetadataHash(
        this.#subscribedTopicNames(group, { old, updated }, resolved),
        this.#topics,
      )
      if (hash !== group.metadataHash) bump = true
      if (bump) {
        groupEpoch += 1
        records.push(groupEpochRecord(group.groupId, groupEpoch, hash))
        this.#logEpochBump(group.groupId, groupEpoch, hash)
      }
      group.setMetadataRefreshDeadline(nowMs + METADATA_REFRESH_INTERVAL_MS, groupEpoch)
      if (group.hasSubscriptionMetadataRecord) records.push(subscriptionMetadataTombstone(group.groupId))
    }
    return groupEpoch
  }

  /** Kafka's maybeUpdateTargetAssignment: a new target when the epoch is ahead and the interval allows. */
  #maybeUpdateTargetAssignment(
    group: ConsumerGroup,
    groupEpoch: number,
    old: ConsumerGroupMember | null,
    replaced: ConsumerGroupMember | null,
    updated: ConsumerGroupMember,
    resolved: ReadonlyMap<string, ResolvedRegularExpression>,
    config: ConsumerGroupConfig,
    nowMs: number,
    records: CoordinatorRecord[],
  ): { targetEpoch: number; target: PartitionSet | null } {
    const groupId = group.groupId
    if (
      group.assignmentEpoch >= groupEpoch ||
      !canComputeAssignment(group.assignmentTimestamp, config.assignmentIntervalMs, nowMs)
    ) {
      return { targetEpoch: group.assignmentEpoch, target: null }
    }
    const { members, targets } = membersAfterHeartbeat(
      group.members,
      group.targetAssignments,
      replaced,
      updated,
    )
    const assignorName = group.preferredServerAssignor(old, updated)
    const assignor = this.#assignorsOf(config).select(assignorName)
    const result = this.#computeTargetAssignment(groupEpoch, members, targets, resolved, assignor)
    this.#log.info(
      { groupId, groupEpoch, assignor: assignor.name() },
      `[GroupId ${groupId}] Computed a new target assignment for epoch ${groupEpoch} with '${assignor.name()}' assignor.`,
    )
    for (const id of result.changed)
      records.push(targetAssignmentRecord(groupId, id, result.targets.get(id)!))
    records.push(targetAssignmentMetadataRecord(groupId, groupEpoch, BigInt(nowMs)))
    return { targetEpoch: groupEpoch, target: result.targets.get(updated.memberId) ?? EMPTY_PARTITIONS }
  }

  #currentTarget(group: ConsumerGroup, memberId: string, replaced: ConsumerGroupMember | null): PartitionSet {
    return (
      (replaced !== null ? group.targetAssignments.get(replaced.memberId) : undefined) ??
      group.targetAssignment(memberId)
    )
  }

  /**
   * Kafka's maybeUpdateRegularExpressions, with the matching done here: records for patterns no
   * member uses any more and for every pattern matched again, and whether the group epoch must be
   * bumped (a pattern's topics changed, or the member moved to or from an already-matched pattern).
   */
  #updateRegularExpressions(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    updated: ConsumerGroupMember,
    ctx: Pick<ConsumerHeartbeatContext, 'nowMs' | 'config' | 'describableTopics'>,
    records: CoordinatorRecord[],
  ): { regexChanged: boolean; bump: boolean; resolved: ReadonlyMap<string, ResolvedRegularExpression> } {
    const { nowMs, config, describableTopics } = ctx
    const oldRegex = hasRegex(member) ? member.subscribedTopicRegex! : null
    const newRegex = hasRegex(updated) ? updated.subscribedTopicRegex! : null
    let resolved: ReadonlyMap<string, ResolvedRegularExpression> = group.resolvedRegularExpressions
    const regexChanged = member.subscribedTopicRegex !== updated.subscribedTopicRegex
    let bump = false
    let requireRefresh = false
    const counts = new Map(group.subscribedRegularExpressions)
    if (regexChanged) {
      if (oldRegex !== null) {
        const n = (counts.get(oldRegex) ?? 0) - 1
        if (n <= 0) {
          counts.delete(oldRegex)
          if (resolved.has(oldRegex)) {
            records.push(regularExpressionTombstone(group.groupId, oldRegex))
            const copy = new Map(resolved)
            copy.delete(oldRegex)
            resolved = copy
          }
        } else counts.set(oldRegex, n)
      }
      if (newRegex !== null) {
        if ((counts.get(newRegex) ?? 0) === 0) {
          throwIfRegularExpressionIsInvalid(newRegex)
          requireRefresh = true
        } else if (resolved.has(newRegex)) bump = true
        counts.set(newRegex, (counts.get(newRegex) ?? 0) + 1)
      } else if (oldRegex !== null) bump = true
    }
    if (counts.size === 0) return { regexChanged, bump, resolved }
    const lastRefresh = Math.max(0, ...[...resolved.values()].map((r) => Number(r.timestamp)))
    if (!requireRefresh) {
      if (nowMs <= lastRefresh + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS) return { regexChanged, bump, resolved }
      const unresolved = [...counts.keys()].some((r) => !resolved.has(r))
      if (!unresolved && !group.regexRefreshNeeded && nowMs <= lastRefresh + config.regexRefreshIntervalMs) {
        return { regexChanged, bump, resolved }
      }
    }
    // Match every pattern the group uses against the catalog.
    const names = [...(this.#topics.topicNames?.() ?? [])]
    const next = new Map(resolved)
    for (const regex of [...counts.keys()].sort()) {
      const matched = resolveTopicRegex(regex, names)
      const topics =
        describableTopics === undefined || matched.length === 0 ? matched : [...describableTopics(matched)]
      const old = resolved.get(regex)
      if (old === undefined ? topics.length > 0 : !namesEqual(old.topics, topics)) bump = true
      const r: ResolvedRegularExpression = { topics, version: this.#topicsVersion, timestamp: BigInt(nowMs) }
      next.set(regex, r)
      records.push(regularExpressionRecord(group.groupId, regex, r))
    }
    group.regexRefreshNeeded = false
    return { regexChanged, bump, resolved: next }
  }

  /**
   * The names of the topics the group subscribes to (names and matched patterns), with `change.old`
   * replaced by `change.updated`, and `resolved` as the patterns' matches.
   */
  #subscribedTopicNames(
    group: ConsumerGroup,
    change: { old: ConsumerGroupMember | null; updated: ConsumerGroupMember } | null,
    resolved: ReadonlyMap<string, ResolvedRegularExpression> | null,
  ): Set<string> {
    const out = new Set<string>()
    const matches = resolved ?? group.resolvedRegularExpressions
    const add = (m: ConsumerGroupMember): void => {
      for (const n of m.subscribedTopicNames) out.add(n)
      if (hasRegex(m)) for (const n of matches.get(m.subscribedTopicRegex!)?.topics ?? []) out.add(n)
    }
    for (const m of group.members.values()) {
      if (change !== null && (m.memberId === change.old?.memberId || m.memberId === change.updated.memberId))
        continue
      add(m)
    }
    if (change !== null) add(change.updated)
    return out
  }

  /** Ids of the existing topics a member subscribes to. */
  #subscribedTopicIds(
    m: ConsumerGroupMember,
    resolved: ReadonlyMap<string, ResolvedRegularExpression>,
  ): Set<string> {
    const out = new Set<string>()
    const add = (name: string): void => {
      const t = this.#topics.topic(name)
      if (t !== undefined) out.add(t.topicId)
    }
    for (const n of m.subscribedTopicNames) add(n)
    if (hasRegex(m)) for (const n of resolved.get(m.subscribedTopicRegex!)?.topics ?? []) add(n)
    return out
  }

  /** Kafka's TargetAssignmentBuilder: the assignor's view of the group, its run, the changed members. */
  #computeTargetAssignment(
    groupEpoch: number,
    members: ReadonlyMap<string, ConsumerGroupMember>,
    currentTargets: ReadonlyMap<string, PartitionSet>,
    resolved: ReadonlyMap<string, ResolvedRegularExpression>,
    assignor: ReturnType<ConsumerAssignors['select']>,
  ): { targets: Map<string, PartitionSet>; changed: string[] } {
    const specs = new Map<string, MemberSubscriptionSpec>()
    const partitionCounts = new Map<string, number>()
    let first: ReadonlySet<string> | undefined
    let homogeneous = true
    for (const [id, m] of members) {
      const topicIds = this.#subscribedTopicIds(m, resolved)
      for (const n of [
        ...m.subscribedTopicNames,
        ...(hasRegex(m) ? (resolved.get(m.subscribedTopicRegex!)?.topics ?? []) : []),
      ]) {
        const t = this.#topics.topic(n)
        if (t !== undefined) partitionCounts.set(t.topicId, t.numPartitions)
      }
      if (first === undefined) first = topicIds
      else if (first.size !== topicIds.size || [...first].some((t) => !topicIds.has(t))) homogeneous = false
      specs.set(id, {
        instanceId: m.instanceId,
        rackId: m.rackId,
        subscribedTopicIds: topicIds,
        assignment: currentTargets.get(id) ?? EMPTY_PARTITIONS,
      })
    }
    const spec: GroupSpec = { members: specs, homogeneous }
    let assigned: Map<string, PartitionSet>
    try {
      assigned = assignor.assign(spec, { numPartitions: (topicId) => partitionCounts.get(topicId) ?? -1 })
    } catch (e) {
      if (e instanceof PartitionAssignorException) {
        throw new ApiError(
          ErrorCode.UNKNOWN_SERVER_ERROR,
          `Failed to compute a new target assignment for epoch ${groupEpoch}: ${e.message}`,
          { cause: e },
        )
      }
      throw e
    }
    const targets = new Map<string, PartitionSet>()
    const changed: string[] = []
    for (const id of members.keys()) {
      const t = assigned.get(id) ?? EMPTY_PARTITIONS
      targets.set(id, t)
      const old = currentTargets.get(id)
      if (old === undefined || !partitionSetEquals(old, t)) changed.push(id)
    }
    return { targets, changed }
  }

  // ---- leave, fencing, timers ----

  #leave(req: ConsumerGroupHeartbeatRequest, nowMs: number): ConsumerHeartbeatResult {
    const groupId = req.groupId
    const group = this.consumerGroupOrThrow(groupId)
    const response = createConsumerGroupHeartbeatResponse({
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
    })
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    const member = membership.leavingMember(group, req)
    const { memberId, instanceId } = member
    if (req.memberEpoch === membership.LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      this.#log.info(
        { groupId, memberId, instanceId, memberEpoch: req.memberEpoch },
        `[GroupId ${groupId}] Static member ${memberId} with instance id ${instanceId} temporarily left the consumer group.`,
      )
      // The member stays; its partitions restart at assignment epoch 0 when it comes back.
      const left: ConsumerGroupMember = {
        ...member,
        memberEpoch: membership.LEAVE_GROUP_STATIC_MEMBER_EPOCH,
        partitionsPendingRevocation: new Map(),
        assignedPartitions: withEpoch(member.assignedPartitions, 0),
      }
      return {
        records: [currentAssignmentRecord(groupId, left)],
        response: createConsumerGroupHeartbeatResponse({
          memberId: member.memberId,
          memberEpoch: membership.LEAVE_GROUP_STATIC_MEMBER_EPOCH,
        }),
        timers: NO_TIMERS,
      }
    }
    if (instanceId === null) {
      this.#log.info(
        { groupId, memberId, memberEpoch: req.memberEpoch },
        `[GroupId ${groupId}] Member ${memberId} left the consumer group.`,
      )
    } else {
      this.#log.info(
        { groupId, memberId, instanceId, memberEpoch: req.memberEpoch },
        `[GroupId ${groupId}] Static member ${memberId} with instance id ${instanceId} left the consumer group.`,
      )
    }
    const records = this.#fenceRecords(group, member, timers, nowMs)
    return { records, response, timers: timers.intents() }
  }

  /**
   * Records removing members (Kafka's consumerGroupFenceMembers). When every member left uses the
   * classic protocol and the policy and `group.max.size` allow it, the group becomes a classic group
   * instead (see #downgradeRecords). Otherwise: each member's tombstones, the tombstones of patterns
   * only they used, the group epoch bump (with the hash of what the others subscribe to), and when
   * no member is left the target epoch, so the empty group's next assignment is not held back by
   * the interval.
   */
  #fenceRecords(
    group: ConsumerGroup,
    fenced: ConsumerGroupMember | readonly ConsumerGroupMember[],
    timers: TimerCollector<CoordinatorRecord, ClassicCompletion>,
    nowMs: number,
  ): CoordinatorRecord[] {
    const members = Array.isArray(fenced)
      ? (fenced as readonly ConsumerGroupMember[])
      : [fenced as ConsumerGroupMember]
    if (members.length === 0) return []
    const groupId = group.groupId
    const downgrade = this.#downgradeRecords(group, members, timers, nowMs)
    if (downgrade !== null) return downgrade
    const leaving = new Set(members.map((m) => m.memberId))
    const records: CoordinatorRecord[] = []
    for (const m of members) records.push(...memberTombstones(groupId, m.memberId))
    let resolved = group.resolvedRegularExpressions
    const regexLeft = new Map<string, number>()
    for (const m of members) if (hasRegex(m)) count(regexLeft, m.subscribedTopicRegex!)
    for (const [regex, n] of regexLeft) {
      if (group.numSubscribedMembers(regex) === n && resolved.has(regex)) {
        records.push(regularExpressionTombstone(groupId, regex))
        const copy = new Map(resolved)
        copy.delete(regex)
        resolved = copy
      }
    }
    const remaining = new Set<string>()
    for (const m of group.members.values()) {
      if (leaving.has(m.memberId)) continue
      for (const n of m.subscribedTopicNames) remaining.add(n)
      if (hasRegex(m)) for (const n of resolved.get(m.subscribedTopicRegex!)?.topics ?? []) remaining.add(n)
    }
    const epoch = group.groupEpoch + 1
    const hash = computeMetadataHash(remaining, this.#topics)
    records.push(groupEpochRecord(groupId, epoch, hash))
    this.#logEpochBump(groupId, epoch, hash)
    if ([...group.members.keys()].every((id) => leaving.has(id))) {
      records.push(targetAssignmentMetadataRecord(groupId, epoch, 0n))
    }
    for (const m of members) cancelMemberTimers(timers, groupId, m.memberId)
    return records
  }

  /**
   * Kafka's validateOnlineDowngradeWithFencedMembers and convertToClassicGroup: when the members
   * left after `leaving` all use the classic protocol, there is at least one, the migration policy
   * allows downgrades and they fit in `group.max.size`, the records that turn the group into a
   * classic group: every consumer record of the group tombstoned, then the classic group's
   * GroupMetadata record (its members' assignments are their targets). The classic group's timers
   * (its members' sessions and an immediate rebalance, so that they all rejoin) are added. Null when
   * the group stays a consumer group.
   */
  #downgradeRecords(
    group: ConsumerGroup,
    leaving: readonly ConsumerGroupMember[],
    timers: TimerCollector<CoordinatorRecord, ClassicCompletion>,
    nowMs: number,
    replacement?: {
      readonly joining: ConsumerGroupMember
      readonly replacedId: string
      readonly rebalance: boolean
    },
  ): CoordinatorRecord[] | null {
    const classic = this.#classic
    if (classic === undefined) return null
    const leavingIds = new Set(leaving.map((m) => m.memberId))
    if (replacement !== undefined) leavingIds.add(replacement.replacedId)
    const staying = [...group.members.values()].filter((m) => !leavingIds.has(m.memberId))
    if (replacement !== undefined) staying.push(replacement.joining)
    if (!this.#downgradeAllowed(group.groupId, staying)) return null
    const groupId = group.groupId
    const names = this.#topicNamesById()
    // A joining static member takes the place, and the target, of the member it replaces.
    const swap = (memberId: string): string =>
      replacement === undefined
        ? memberId
        : memberId === replacement.replacedId
          ? replacement.joining.memberId
          : memberId
    const targetOf = (memberId: string): PartitionSet =>
      group.targetAssignment(
        replacement !== undefined && memberId === replacement.joining.memberId
          ? replacement.replacedId
          : memberId,
      )
    const created = classic.downgradedGroup({
      groupId,
      generationId: group.groupEpoch,
      nowMs,
      rebalance: replacement?.rebalance ?? true,
      members: staying.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.instanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        sessionTimeoutMs: m.classicMemberMetadata!.sessionTimeoutMs,
        supportedProtocols: m.classicMemberMetadata!.supportedProtocols,
      })),
      assignmentFor: (memberId, metadata) =>
        encodeAssignment(
          { assignedPartitions: toNamedPartitions(targetOf(memberId), names), userData: null },
          versionOf(metadata),
        ),
    })
    for (const m of group.members.values()) cancelMemberTimers(timers, groupId, m.memberId)
    if (replacement !== undefined) cancelMemberTimers(timers, groupId, replacement.joining.memberId)
    timers.add(created.timers)
    this.#log.info(
      { groupId, groupEpoch: group.groupEpoch, members: staying.length },
      `[GroupId ${groupId}] Converted the consumer group to a classic group.`,
    )
    return [
      ...groupTombstones(groupId, [...group.members.keys()].map(swap), [
        ...group.resolvedRegularExpressions.keys(),
      ]),
      created.record,
    ]
  }

  /**
   * Whether a group whose members would be `staying` may become a classic group: at least one, all
   * speaking the classic protocol, a policy allowing downgrades, and within `group.max.size`.
   */
  #downgradeAllowed(groupId: string, staying: readonly ConsumerGroupMember[]): boolean {
    if (this.#classic === undefined) return false
    if (staying.length === 0 || staying.some((m) => m.classicMemberMetadata === null)) return false
    const policy = this.#config(groupId).migrationPolicy
    if (policy !== 'downgrade' && policy !== 'bidirectional') return false
    return staying.length <= this.#classic.config.maxSize
  }

  /** Topic id → name, from the catalog. */
  #topicNamesById(): Map<string, string> {
    const names = new Map<string, string>()
    for (const n of this.#topics.topicNames?.() ?? []) {
      const t = this.#topics.topic(n)
      if (t !== undefined) names.set(t.topicId, n)
    }
    return names
  }

  /** Named partitions (embedded consumer protocol) as a set of topic ids; unknown topics dropped. */
  #partitionSetOfNames(list: readonly TopicPartitions[]): PartitionSet {
    const out = new Map<string, Set<number>>()
    for (const t of list) {
      const id = this.#topics.topic(t.topic)?.topicId
      if (id === undefined) continue
      let ps = out.get(id)
      if (ps === undefined) out.set(id, (ps = new Set()))
      for (const p of t.partitions) ps.add(p)
    }
    return out
  }

  readonly #sessionTimeoutOp = (groupId: string, memberId: string) => (nowMs: number) =>
    this.#onSessionTimeout(groupId, memberId, nowMs)

  #onSessionTimeout(groupId: string, memberId: string, nowMs: number): ConsumerTimerResult {
    const group = this.#groups.get(groupId)
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    const member = group?.member(memberId)
    if (!group || !member) return { records: [], response: undefined, timers: NO_TIMERS }
    const periodMs = sessionFirePeriodMs(this.#config(groupId))
    if (sessionStillAlive(timers, group.session(memberId), nowMs, member.memberId, periodMs)) {
      return { records: [], response: undefined, timers: timers.intents() }
    }
    this.#logFenced(groupId, member, 'the member session expired')
    return {
      records: this.#fenceRecords(group, member, timers, nowMs),
      response: undefined,
      timers: timers.intents(),
    }
  }

  #onRebalanceTimeout(
    groupId: string,
    memberId: string,
    memberEpoch: number,
    nowMs: number,
  ): ConsumerTimerResult {
    const group = this.#groups.get(groupId)
    const member = group?.member(memberId)
    if (!group || !member || member.memberEpoch !== memberEpoch) {
      logRebalanceTimeout(this.#log, groupId, memberId, memberEpoch, null)
      return { records: [], response: undefined, timers: NO_TIMERS }
    }
    logRebalanceTimeout(this.#log, groupId, memberId, memberEpoch, member.rebalanceTimeoutMs)
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    return {
      records: this.#fenceRecords(group, member, timers, nowMs),
      response: undefined,
      timers: timers.intents(),
    }
  }

  /** After loading: the session timer of every member, the rebalance timer of members revoking. */
  onLoaded(): TimerCollector<CoordinatorRecord, ClassicCompletion> {
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    for (const g of this.#groups.values()) {
      const config = this.#config(g.groupId)
      logLoadedGroup(this.#log, 'consumer', g.groupId, [...g.members.keys()])
      for (const m of g.members.values()) {
        const session = g.session(m.memberId)
        timers.schedule({
          key: session.key,
          delayMs: classicSessionTimeout(m, config),
          op: session.op,
          watch: session,
          retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
        })
        if (m.state === ConsumerMemberState.UNREVOKED_PARTITIONS && m.classicMemberMetadata === null) {
          const { groupId } = g
          const { memberId, memberEpoch } = m
          timers.schedule({
            key: rebalanceTimeoutKey(groupId, memberId),
            delayMs: m.rebalanceTimeoutMs,
            op: (now) => this.#onRebalanceTimeout(groupId, memberId, memberEpoch, now),
            retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
          })
        }
      }
    }
    return timers
  }

  // ---- online upgrade (KIP-848): a classic group becomes a consumer group ----

  /**
   * Kafka's validateOnlineUpgrade and ConsumerGroup.fromClassicGroup: the consumer group a
   * non-empty classic group becomes, built (unregistered) from the records that create it, which
   * are added to `records`. Every classic member becomes a member at the generation's epoch, Stable,
   * its last assignment as current and target, its subscription and classic metadata kept; the
   * session timers of the members are armed with their classic session timeouts.
   */
  #upgradedGroup(
    classic: NonNullable<ReturnType<ClassicGroupManager['group']>>,
    config: ConsumerGroupConfig,
    records: CoordinatorRecord[],
    timers: TimerCollector<CoordinatorRecord, ClassicCompletion>,
  ): ConsumerGroup {
    const groupId = classic.groupId
    const refuse = (why: string) =>
      new ApiError(
        ErrorCode.GROUP_ID_NOT_FOUND,
        `Cannot upgrade classic group ${groupId} to consumer group ${why}.`,
      )
    if (config.migrationPolicy !== 'upgrade' && config.migrationPolicy !== 'bidirectional') {
      throw refuse('because online upgrade is disabled')
    }
    if (classic.protocolType !== CONSUMER_PROTOCOL_TYPE) {
      throw refuse('because the group does not use the consumer embedded protocol')
    }
    if (classic.members.size > config.maxSize) {
      throw refuse('because the group size exceeds the consumer group maximum size')
    }
    const epoch = classic.generationId
    const members: ConsumerGroupMember[] = []
    const targets = new Map<string, PartitionSet>()
    for (const m of classic.members.values()) {
      let assigned: PartitionSet = EMPTY_PARTITIONS
      let topics: readonly string[]
      let rackId: string | null
      try {
        if (m.assignment.length > 0) {
          const a = decodeAssignment(m.assignment)
          if (a.userData !== null && a.userData.length > 0) {
            throw refuse(
              'because an unsupported custom assignor is in use. Please refer to the documentation or switch to a default assignor before re-attempting the upgrade',
            )
          }
          assigned = this.#partitionSetOfNames(a.assignedPartitions)
        }
        const metadata =
          classic.protocolName !== null
            ? m.metadata(classic.protocolName)
            : (m.supportedProtocols[0]?.metadata ?? new Uint8Array(0))
        const sub = decodeSubscription(metadata)
        topics = sub.topics
        rackId = sub.rackId
      } catch (e) {
        if (e instanceof ConsumerProtocolError)
          throw refuse('because the embedded consumer protocol is malformed')
        throw e
      }
      targets.set(m.memberId, assigned)
      members.push({
        ...newConsumerMember(m.memberId),
        memberEpoch: epoch,
        previousMemberEpoch: epoch,
        instanceId: m.groupInstanceId,
        rackId,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: sortedNames(topics),
        // Kafka's member default: no pattern, written as "".
        subscribedTopicRegex: '',
        classicMemberMetadata: {
          sessionTimeoutMs: m.sessionTimeoutMs,
          supportedProtocols: m.supportedProtocols.map((p) => ({ name: p.name, metadata: p.metadata })),
        },
        assignedPartitions: partitionSetWithEpoch(assigned, epoch),
      })
    }
    const names = new Set<string>()
    for (const m of members) for (const n of m.subscribedTopicNames) names.add(n)
    // Kafka's createConsumerGroupRecords, in its order.
    const created: ConsumerCoordinatorRecord[] = [
      ...members.map((m) => memberSubscriptionRecord(groupId, m)),
      groupEpochRecord(groupId, epoch, computeMetadataHash(names, this.#topics)),
      ...members.map((m) => targetAssignmentRecord(groupId, m.memberId, targets.get(m.memberId)!)),
      targetAssignmentMetadataRecord(groupId, epoch, 0n),
      ...members.map((m) => currentAssignmentRecord(groupId, m)),
    ]
    records.push(...created)
    const group = new ConsumerGroup(kept(groupId), this.#sessionTimeoutOp)
    for (const r of created) applyValue(group, r)
    for (const m of members) {
      timers.schedule({
        key: sessionTimeoutKey(groupId, m.memberId),
        delayMs: m.classicMemberMetadata!.sessionTimeoutMs,
        op: this.#sessionTimeoutOp(groupId, m.memberId),
        retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
      })
    }
    return group
  }

  // ---- classic-protocol members of a consumer group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) ----

  /**
   * Kafka's classicGroupJoinToConsumerGroup: a JoinGroup to a non-empty consumer group. The member
   * joins (or rejoins) as a member of the consumer group with its classic metadata, its
   * subscription read from the embedded consumer protocol; the group epoch, target assignment and
   * reconciliation run as for a heartbeat, the partitions it reports owning standing for the ones
   * it revoked. The answer (generation = member epoch, no leader, no member list) is a completion,
   * delivered once the records are stored.
   */
  classicGroupJoin(ctx: ClassicMemberJoinContext, request: JoinGroupRequest): ConsumerTimerResult {
    const req = ctx.apiVersion === 0 ? { ...request, rebalanceTimeoutMs: request.sessionTimeoutMs } : request
    const records: CoordinatorRecord[] = []
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    const isUnknownMember = req.memberId === ''
    const memberId = isUnknownMember ? ctx.newMemberUuid : req.memberId
    const answer = (response: JoinGroupResponse, withRecords: boolean): ConsumerTimerResult => ({
      records: withRecords ? records : [],
      response: undefined,
      timers: withRecords ? timers.intents() : NO_TIMERS,
      completions: [{ api: 'JoinGroup', token: ctx.token, response }],
    })
    try {
      const { nowMs, config } = ctx
      const groupId = req.groupId
      const group = this.consumerGroupOrThrow(groupId)
      if (config.migrationPolicy === 'disabled') {
        throw new ApiError(
          ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
          `Cannot join the consumer group ${groupId} with the classic protocol because the group migration is disabled.`,
        )
      }
      const instanceId = req.groupInstanceId
      if (
        group.staticMemberId(instanceId) === undefined &&
        group.size >= config.maxSize &&
        !group.member(memberId)
      ) {
        throw new ApiError(
          ErrorCode.GROUP_MAX_SIZE_REACHED,
          `The consumer group has reached its maximum capacity of ${config.maxSize} members.`,
        )
      }
      if (!supportsClassicProtocols(group, req.protocolType, req.protocols)) {
        throw new ApiError(
          ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
          `Member ${memberId}'s protocols are not supported.`,
        )
      }
      if (isUnknownMember && instanceId === null && ctx.apiVersion >= 4) {
        // KIP-394: a dynamic member must come back with the id it is given.
        this.#log.info(
          { groupId, memberId },
          `[GroupId ${groupId}] Dynamic member with unknown member id joins the consumer group. Created a new member id ${memberId} and requesting the member to rejoin with this id.`,
        )
        return answer(createJoinGroupResponse({ memberId, errorCode: ErrorCode.MEMBER_ID_REQUIRED }), false)
      }

      // 1. The member, and the static member it replaces.
      let member: ConsumerGroupMember
      let replaced: ConsumerGroupMember | null = null
      const ownerId = group.staticMemberId(instanceId)
      if (instanceId === null || (ownerId === undefined && isUnknownMember)) {
        member = group.member(memberId) ?? newConsumerMember(memberId)
      } else if (isUnknownMember) {
        replaced = group.member(ownerId!)!
        member = { ...replaced, memberId, memberEpoch: 0, previousMemberEpoch: 0 }
        records.push(
          ...membership.replacementRecords(
            groupId,
            replaced,
            member,
            group.targetAssignment(replaced.memberId),
            CONSUMER_REPLACEMENT_RECORDS,
          ),
        )
      } else {
        member = membership.staticOwner(group, memberId, instanceId)
      }
      let subscription: ReturnType<typeof decodeSubscription>
      try {
        subscription = decodeSubscription(req.protocols[0]!.metadata)
      } catch {
        throw new ApiError(
          ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
          'Malformed embedded consumer protocol in subscription deserialization.',
        )
      }
      const slot = group.slot(memberId)
      const isNewMember = slot === undefined && replaced === null
      this.#logJoin(groupId, memberId, instanceId, replaced, isNewMember, 'classic')
      const protocols: ClassicProtocol[] = req.protocols.map((p) => ({ name: p.name, metadata: p.metadata }))
      // The answer: the member epoch as generation; no leader, no member list (all are followers).
      const joined = (generationId: number): ConsumerTimerResult =>
        answer(
          createJoinGroupResponse({
            memberId,
            generationId,
            protocolType: CONSUMER_PROTOCOL_TYPE,
            protocolName: protocols[0]!.name,
          }),
          true,
        )
      const updated: ConsumerGroupMember = {
        ...member,
        instanceId: instanceId ?? member.instanceId,
        rackId: subscription.rackId ?? member.rackId,
        rebalanceTimeoutMs:
          req.rebalanceTimeoutMs !== -1 ? req.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
        subscribedTopicNames: sortedNames(subscription.topics),
        // Subscription patterns are not offered to classic members.
        subscribedTopicRegex: '',
        clientId: ctx.clientId,
        clientHost: ctx.clientHost,
        classicMemberMetadata: { sessionTimeoutMs: req.sessionTimeoutMs, supportedProtocols: protocols },
      }
      let namesChanged = false
      if (isNewMember || memberMetadataDiffers(member, updated)) {
        records.push(memberSubscriptionRecord(groupId, updated))
        namesChanged = !namesEqual(member.subscribedTopicNames, updated.subscribedTopicNames)
      }
      const regexes = this.#updateRegularExpressions(group, member, updated, { nowMs, config }, records)
      const bump = namesChanged || regexes.regexChanged

      // A classic static member replacing the last consumer-protocol member may downgrade the group
      // (Kafka's validateOnlineDowngradeWithReplacedMember): its assignment is reconciled first
      // unless the group must rebalance anyway, then the group becomes a classic group.
      if (
        replaced !== null &&
        this.#downgradeAllowed(groupId, [
          ...[...group.members.values()].filter((m) => m.memberId !== replaced!.memberId),
          updated,
        ])
      ) {
        const old = slot?.member ?? replaced
        const epoch = this.#maybeBumpGroupEpoch(group, old, updated, regexes.resolved, bump, nowMs, records)
        const rebalance = group.assignmentEpoch < epoch
        let joining = updated
        if (!rebalance && (bump || !isReconciledTo(updated, group.assignmentEpoch))) {
          const next = buildConsumerAssignment({
            member: updated,
            targetEpoch: group.assignmentEpoch,
            target: group.targetAssignment(replaced.memberId),
            subscribedTopicIds: this.#subscribedTopicIds(updated, regexes.resolved),
            currentPartitionEpoch: (topicId, p) => group.currentPartitionEpoch(topicId, p),
            hasSubscriptionChanged: bump,
            owned: partitionSetToList(this.#partitionSetOfNames(subscription.ownedPartitions)),
          })
          if (assignmentDiffers(next, updated)) {
            records.push(currentAssignmentRecord(groupId, next))
            joining = next
          }
        }
        const downgrade = this.#downgradeRecords(group, [], timers, nowMs, {
          joining,
          replacedId: replaced.memberId,
          rebalance,
        })
        records.push(...downgrade!)
        timers.cancel(classicJoinTimeoutKey(groupId, memberId))
        return joined(joining.memberEpoch)
      }

      // 2. Group epoch, target assignment, reconciliation (as a heartbeat's steps 5–7).
      const reconciled = this.#assignAndReconcile(group, {
        old: slot?.member ?? replaced,
        replaced,
        updated,
        resolved: regexes.resolved,
        bump,
        hasSubscriptionChanged: bump,
        owned: partitionSetToList(this.#partitionSetOfNames(subscription.ownedPartitions)),
        config,
        nowMs,
        records,
        timers: null,
      })

      // 3. Timers: the member's session (its classic session timeout) and its SyncGroup deadline.
      timers.cancel(classicJoinTimeoutKey(groupId, memberId))
      extendSession(timers, slot ?? group.session(memberId), nowMs, req.sessionTimeoutMs, true)
      timers.schedule({
        key: classicSyncTimeoutKey(groupId, memberId),
        delayMs: req.rebalanceTimeoutMs,
        op: (now) =>
          this.#onClassicTimeout(groupId, memberId, now, 'the member failed to sync within timeout'),
        retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
      })
      return joined(reconciled.memberEpoch)
    } catch (e) {
      if (e instanceof ApiError)
        return answer(createJoinGroupResponse({ memberId, errorCode: e.errorCode }), false)
      throw e
    }
  }

  /**
   * Kafka's classicGroupSyncToConsumerGroup: the member's current partitions, in the embedded
   * protocol version it joined with. REBALANCE_IN_PROGRESS when a newer target exists and the
   * member is not revoking (it must rejoin; a join deadline is armed).
   */
  classicGroupSync(ctx: ClassicMemberContext, request: SyncGroupRequest): ConsumerTimerResult {
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    const answer = (response: SyncGroupResponse): ConsumerTimerResult => ({
      records: [],
      response: undefined,
      timers: timers.intents(),
      completions: [{ api: 'SyncGroup', token: ctx.token, response }],
    })
    try {
      const { groupId, memberId } = request
      const group = this.consumerGroupOrThrow(groupId)
      const member = classicMemberOrThrow(group, memberId, request.groupInstanceId, request.generationId)
      const protocolName = member.classicMemberMetadata!.supportedProtocols[0]?.name ?? ''
      if (request.protocolType !== null && request.protocolType !== CONSUMER_PROTOCOL_TYPE) {
        throw new ApiError(
          ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
          `The protocol type ${request.protocolType} from member ${memberId} request is not equal to the group protocol type ${CONSUMER_PROTOCOL_TYPE}.`,
        )
      }
      if (request.protocolName !== null && request.protocolName !== protocolName) {
        throw new ApiError(
          ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
          `The protocol name ${request.protocolName} from member ${memberId} request is not equal to the protocol name ${protocolName} returned in the join response.`,
        )
      }
      if (
        group.assignmentEpoch > member.memberEpoch &&
        member.state !== ConsumerMemberState.UNREVOKED_PARTITIONS
      ) {
        this.#scheduleClassicJoinTimeout(timers, group, member)
        throw new ApiError(
          ErrorCode.REBALANCE_IN_PROGRESS,
          `A new rebalance is triggered in group ${groupId} and member ${memberId} should rejoin to catch up.`,
        )
      }
      timers.cancel(classicSyncTimeoutKey(groupId, member.memberId))
      const config = this.#config(groupId)
      extendSession(
        timers,
        group.session(member.memberId),
        ctx.nowMs,
        classicSessionTimeout(member, config),
        true,
      )
      const metadata = member.classicMemberMetadata!.supportedProtocols[0]?.metadata ?? new Uint8Array(0)
      return answer(
        createSyncGroupResponse({
          protocolType: request.protocolType,
          protocolName: request.protocolName,
          assignment: encodeAssignment(
            {
              assignedPartitions: toNamedPartitions(
                partitionEpochsKeys(member.assignedPartitions),
                this.#topicNamesById(),
              ),
              userData: null,
            },
            versionOf(metadata),
          ),
        }),
      )
    } catch (e) {
      if (e instanceof ApiError) return answer(createSyncGroupResponse({ errorCode: e.errorCode }))
      throw e
    }
  }

  /**
   * Kafka's classicGroupHeartbeatToConsumerGroup: the session goes on; REBALANCE_IN_PROGRESS asks
   * the member to rejoin when a newer target exists, when it must revoke partitions, or when the
   * partitions it waits for are free (a join deadline is armed then).
   */
  classicGroupHeartbeat(
    ctx: ClassicMemberContext,
    request: HeartbeatRequest,
  ): GroupCoordinatorResult<HeartbeatResponse> {
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    try {
      const group = this.consumerGroupOrThrow(request.groupId)
      const member = classicMemberOrThrow(
        group,
        request.memberId,
        request.groupInstanceId,
        request.generationId,
      )
      const config = this.#config(group.groupId)
      extendSession(
        timers,
        group.session(member.memberId),
        ctx.nowMs,
        classicSessionTimeout(member, config),
        false,
      )
      let errorCode: number = ErrorCode.NONE
      if (
        member.memberEpoch < group.assignmentEpoch ||
        member.state === ConsumerMemberState.UNREVOKED_PARTITIONS ||
        (member.state === ConsumerMemberState.UNRELEASED_PARTITIONS &&
          !waitingOnUnreleasedPartition(group, member))
      ) {
        errorCode = ErrorCode.REBALANCE_IN_PROGRESS
        this.#scheduleClassicJoinTimeout(timers, group, member)
      }
      return { records: [], response: createHeartbeatResponse({ errorCode }), timers: timers.intents() }
    } catch (e) {
      if (e instanceof ApiError) {
        return {
          records: [],
          response: createHeartbeatResponse({ errorCode: e.errorCode }),
          timers: NO_TIMERS,
        }
      }
      throw e
    }
  }

  /**
   * Kafka's classicGroupLeaveToConsumerGroup: every member named (by member id, or by instance id
   * for an administrative removal) that is found is fenced, together, which may downgrade the group.
   */
  classicGroupLeave(
    ctx: ClassicMemberContext,
    request: LeaveGroupRequest,
  ): GroupCoordinatorResult<LeaveGroupResponse> {
    const group = this.#groups.get(request.groupId)
    if (!group)
      return {
        records: [],
        response: createLeaveGroupResponse({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID }),
        timers: NO_TIMERS,
      }
    const identities =
      ctx.apiVersion <= 2
        ? [
            {
              memberId: request.memberId,
              groupInstanceId: null as string | null,
              reason: null as string | null,
            },
          ]
        : request.members.map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId,
            reason: m.reason,
          }))
    const leaving: ConsumerGroupMember[] = []
    const responses: LeaveGroupResponseMemberResponse[] = []
    for (const id of identities) {
      let errorCode: number = ErrorCode.NONE
      const m =
        id.groupInstanceId === null
          ? group.member(id.memberId)
          : group.member(group.staticMemberId(id.groupInstanceId) ?? '')
      if (m === undefined) errorCode = ErrorCode.UNKNOWN_MEMBER_ID
      else if (id.groupInstanceId !== null && id.memberId !== '' && id.memberId !== m.memberId) {
        errorCode = ErrorCode.FENCED_INSTANCE_ID
      } else if (!leaving.includes(m)) {
        leaving.push(m)
        this.#logClassicLeave(group.groupId, m, id.reason)
      }
      responses.push({ memberId: id.memberId, groupInstanceId: id.groupInstanceId, errorCode })
    }
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    const records = this.#fenceRecords(group, leaving, timers, ctx.nowMs)
    const response =
      ctx.apiVersion <= 2
        ? createLeaveGroupResponse({ errorCode: responses[0]!.errorCode })
        : createLeaveGroupResponse({ members: responses })
    return { records, response, timers: timers.intents() }
  }

  #scheduleClassicJoinTimeout(
    timers: TimerCollector<CoordinatorRecord, ClassicCompletion>,
    group: ConsumerGroup,
    member: ConsumerGroupMember,
  ): void {
    const key = classicJoinTimeoutKey(group.groupId, member.memberId)
    if (this.#armed.isScheduled(key)) return
    const { groupId } = group
    const { memberId } = member
    timers.schedule({
      key,
      delayMs: member.rebalanceTimeoutMs,
      op: (now) =>
        this.#onClassicTimeout(
          groupId,
          memberId,
          now,
          'the classic member failed to join within the rebalance timeout',
        ),
      retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
    })
  }

  /** A classic member that did not rejoin or sync in time is fenced (Kafka's join and sync timeouts). */
  #onClassicTimeout(groupId: string, memberId: string, nowMs: number, reason: string): ConsumerTimerResult {
    const group = this.#groups.get(groupId)
    const member = group?.member(memberId)
    if (!group || !member) return { records: [], response: undefined, timers: NO_TIMERS }
    this.#logFenced(groupId, member, reason)
    const timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
    return {
      records: this.#fenceRecords(group, member, timers, nowMs),
      response: undefined,
      timers: timers.intents(),
    }
  }

  // ---- the log ----

  #logJoin(
    groupId: string,
    memberId: string,
    instanceId: string | null,
    replaced: ConsumerGroupMember | null,
    isNewMember: boolean,
    protocol: 'consumer' | 'classic',
  ): void {
    if (replaced !== null) {
      this.#log.info(
        { groupId, memberId, instanceId, replacedMemberId: replaced.memberId, protocol },
        `[GroupId ${groupId}] Static member with instance id ${instanceId} re-joins the consumer group using the ${protocol} protocol. Created a new member ${memberId} to replace the existing member ${replaced.memberId}.`,
      )
    } else if (isNewMember && instanceId !== null) {
      this.#log.info(
        { groupId, memberId, instanceId, protocol },
        `[GroupId ${groupId}] Static member ${memberId} with instance id ${instanceId} joins the consumer group using the ${protocol} protocol.`,
      )
    } else if (isNewMember) {
      this.#log.info(
        { groupId, memberId, protocol },
        `[GroupId ${groupId}] Member ${memberId} joins the consumer group using the ${protocol} protocol.`,
      )
    }
  }

  /** A member speaking the classic protocol leaves with a LeaveGroup (Kafka's texts). */
  #logClassicLeave(groupId: string, member: ConsumerGroupMember, reason: string | null): void {
    const memberId = member.memberId
    const instanceId = member.instanceId
    const why = reason === null || reason === '' ? 'not provided' : reason
    if (instanceId === null) {
      this.#log.info(
        { groupId, memberId, reason: why },
        `[GroupId ${groupId}] Dynamic member ${memberId} has left group through explicit \`LeaveGroup\` request; client reason: ${why}`,
      )
    } else {
      this.#log.info(
        { groupId, memberId, instanceId, reason: why },
        `[GroupId ${groupId}] Static member ${memberId} with instance id ${instanceId} has left group through explicit \`LeaveGroup\` request; client reason: ${why}`,
      )
    }
  }

  #logEpochBump(groupId: string, groupEpoch: number, metadataHash: bigint): void {
    this.#log.info(
      { groupId, groupEpoch, metadataHash: String(metadataHash) },
      `[GroupId ${groupId}] Bumped group epoch to ${groupEpoch} with metadata hash ${metadataHash}.`,
    )
  }

  #logFenced(groupId: string, member: ConsumerGroupMember, reason: string): void {
    this.#log.info(
      { groupId, memberId: member.memberId, memberEpoch: member.memberEpoch, reason },
      `[GroupId ${groupId}] Member ${member.memberId} fenced from the group because ${reason}.`,
    )
  }

  // ---- describe, list, delete ----

  consumerGroupDescribe(
    groupIds: readonly string[],
    apiVersion = 1,
  ): ConsumerGroupDescribeResponseDescribedGroup[] {
    let names: Map<string, string> | undefined
    const topicName = (topicId: string): string | undefined => {
      if (names === undefined) {
        names = new Map()
        for (const n of this.#topics.topicNames?.() ?? []) {
          const t = this.#topics.topic(n)
          if (t !== undefined) names.set(t.topicId, n)
        }
      }
      return names.get(topicId)
    }
    const described = (set: PartitionSet) => ({
      topicPartitions: partitionSetToList(set).flatMap((t) => {
        const name = topicName(t.topicId)
        return name === undefined ? [] : [{ topicId: t.topicId, topicName: name, partitions: t.partitions }]
      }),
    })
    return groupIds.map((groupId) => {
      const row = createConsumerGroupDescribeResponseDescribedGroup({ groupId })
      if (groupId === '') return { ...row, errorCode: ErrorCode.INVALID_GROUP_ID }
      let group: ConsumerGroup
      try {
        group = this.consumerGroupOrThrow(groupId)
      } catch (e) {
        if (e instanceof ApiError) {
          // Describe words an unknown id as "Group <g> not found." (Kafka's describe path).
          const message = this.#isOtherGroupType(groupId) ? e.errorMessage : `Group ${groupId} not found.`
          return { ...row, errorCode: e.errorCode, errorMessage: message }
        }
        throw e
      }
      const config = this.#config(groupId)
      return {
        ...row,
        groupState: group.state(),
        groupEpoch: group.groupEpoch,
        assignmentEpoch: group.assignmentEpoch,
        assignorName: group.preferredServerAssignor(null, null) ?? this.#assignorsOf(config).default.name(),
        members: [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          instanceId: m.instanceId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          subscribedTopicRegex: m.subscribedTopicRegex,
          assignment: described(partitionEpochsKeys(m.assignedPartitions)),
          targetAssignment: described(group.targetAssignment(m.memberId)),
          memberType:
            apiVersion >= 1
              ? m.classicMemberMetadata === null
                ? MEMBER_TYPE_CONSUMER
                : MEMBER_TYPE_CLASSIC
              : -1,
        })),
      }
    })
  }

  listGroups(
    statesFilter: readonly string[] = [],
    typesFilter: readonly string[] = [],
  ): ListedConsumerGroup[] {
    return listModernGroups(
      'consumer',
      this.#groups.values(),
      (s) => CONSUMER_STATE_FILTER_NAMES[s],
      statesFilter,
      typesFilter,
    )
  }

  isEmpty(groupId: string): boolean {
    return this.#groups.get(groupId)?.state() === ConsumerGroupState.EMPTY
  }

  /** The tombstones deleting an empty group (DeleteGroups, expiry); NON_EMPTY_GROUP otherwise. */
  deleteGroupRecords(groupId: string): ConsumerCoordinatorRecord[] {
    const group = this.consumerGroupOrThrow(groupId)
    if (group.state() !== ConsumerGroupState.EMPTY) throw new ApiError(ErrorCode.NON_EMPTY_GROUP, null)
    return groupTombstones(groupId, [...group.members.keys()], [...group.resolvedRegularExpressions.keys()])
  }

  // ---- offsets ----

  /**
   * Kafka's ConsumerGroup.validateOffsetCommit: a commit without epoch into an empty group passes;
   * otherwise the member must exist, use OffsetCommit v9+ (consumer protocol, not transactional),
   * and commit with its epoch, or an older one no older than each partition's assignment epoch.
   */
  validateOffsetCommit(
    groupId: string,
    request: MemberOffsetCommit & { readonly groupInstanceId: string | null },
  ): void {
    const group = this.consumerGroupOrThrow(groupId)
    if (request.memberEpoch < 0 && group.size === 0) return
    if (
      request.isTransactional &&
      request.memberEpoch === -1 &&
      request.memberId === '' &&
      request.groupInstanceId === null
    )
      return
    const member = group.member(request.memberId)
    if (!member) throw membership.unknownMember(request.memberId, groupId)
    const classic = member.classicMemberMetadata !== null
    if (!request.isTransactional && !classic && request.apiVersion < 9) {
      throw new ApiError(
        ErrorCode.UNSUPPORTED_VERSION,
        'OffsetCommit version 9 or above must be used by members using the consumer group protocol',
      )
    }
    if (request.memberEpoch === member.memberEpoch) return
    const stale = (msg: string) =>
      new ApiError(classic ? ErrorCode.ILLEGAL_GENERATION : ErrorCode.STALE_MEMBER_EPOCH, msg)
    if (request.memberEpoch > member.memberEpoch) {
      throw stale(
        classic
          ? `Received generation id ${request.memberEpoch} is newer than current member epoch ${member.memberEpoch}.`
          : `Received member epoch ${request.memberEpoch} is newer than current member epoch ${member.memberEpoch}.`,
      )
    }
    for (const t of request.topics) {
      const topicId = this.#topics.topic(t.name)?.topicId
      for (const p of t.partitions) {
        const epoch =
          topicId === undefined
            ? undefined
            : (member.assignedPartitions.get(topicId)?.get(p) ??
              member.partitionsPendingRevocation.get(topicId)?.get(p))
        if (epoch === undefined)
          throw stale(`Partition ${t.name}-${p} is not assigned or pending revocation for member.`)
        if (request.memberEpoch < epoch) {
          throw stale(
            classic
              ? `Received generation id ${request.memberEpoch} is older than assignment epoch ${epoch} for partition ${t.name}-${p}.`
              : `Received member epoch ${request.memberEpoch} is older than assignment epoch ${epoch} for partition ${t.name}-${p}.`,
          )
        }
      }
    }
  }

  /** Kafka's ConsumerGroup.validateOffsetFetch: no member id and no epoch passes; else the exact epoch. */
  validateOffsetFetch(groupId: string, memberId: string | null, memberEpoch: number): void {
    const group = this.consumerGroupOrThrow(groupId)
    if (memberId === null && memberEpoch < 0) return
    const member = memberId === null ? undefined : group.member(memberId)
    if (!member) throw membership.unknownMember(memberId ?? '', groupId)
    if (memberEpoch !== member.memberEpoch) {
      if (member.classicMemberMetadata !== null) {
        throw new ApiError(
          ErrorCode.ILLEGAL_GENERATION,
          `The received generation id ${memberEpoch} does not match the expected member epoch ${member.memberEpoch}.`,
        )
      }
      throw new ApiError(
        ErrorCode.STALE_MEMBER_EPOCH,
        `The received member epoch ${memberEpoch} does not match the expected member epoch ${member.memberEpoch}.`,
      )
    }
  }

  /** OffsetDelete and offset expiry: whether a non-empty group subscribes to the topic. */
  isSubscribedToTopic(groupId: string, topic: string): boolean {
    const g = this.#groups.get(groupId)
    if (!g || g.size === 0) return false
    return this.#subscribedTopicNames(g, null, null).has(topic)
  }

  // ---- replay ----

  replay(record: ConsumerCoordinatorRecord): void {
    const groupId = record.key.groupId
    const existing = this.#groups.get(groupId)
    if (record.value !== null) {
      let g = existing
      if (!g) {
        g = new ConsumerGroup(kept(groupId), this.#sessionTimeoutOp)
        this.#groups.set(g.groupId, g)
      }
      applyValue(g, record)
      return
    }
    switch (record.type) {
      case 'ConsumerGroupMetadata':
        if (existing) {
          if (!existing.canBeRemoved()) {
            throw new Error(
              `Received a tombstone record to delete group ${groupId} but the group is not empty.`,
            )
          }
          this.#groups.delete(groupId)
        }
        return
      case 'ConsumerGroupPartitionMetadata':
        if (existing) existing.hasSubscriptionMetadataRecord = false
        return
      case 'ConsumerGroupMemberMetadata':
        membership.replayMemberTombstone(groupId, record.key.memberId, existing)
        return
      case 'ConsumerGroupTargetAssignmentMetadata':
        if (existing) {
          if (existing.targetAssignments.size > 0) {
            throw new Error(
              `Received a target assignment metadata tombstone for group ${groupId} with remaining targets.`,
            )
          }
          existing.replayTargetAssignmentMetadata(-1, 0n)
        }
        return
      case 'ConsumerGroupTargetAssignmentMember':
        existing?.replayTargetAssignmentMember(record.key.memberId, null)
        return
      case 'ConsumerGroupCurrentMemberAssignment': {
        const m = existing?.member(record.key.memberId)
        if (!existing || !m) return
        existing.updateMember({
          ...m,
          memberEpoch: membership.LEAVE_GROUP_MEMBER_EPOCH,
          previousMemberEpoch: membership.LEAVE_GROUP_MEMBER_EPOCH,
          assignedPartitions: new Map(),
          partitionsPendingRevocation: new Map(),
        })
        return
      }
      case 'ConsumerGroupRegularExpression':
        existing?.replayRegularExpression(record.key.regularExpression, null)
        return
    }
  }
}

/** Applies a consumer record with a value to a group (replay, and a group built from a classic one). */
function applyValue(g: ConsumerGroup, record: ConsumerCoordinatorRecord): void {
  switch (record.type) {
    case 'ConsumerGroupMetadata':
      if (record.value) g.replayEpoch(record.value.epoch, record.value.metadataHash)
      return
    case 'ConsumerGroupPartitionMetadata':
      g.hasSubscriptionMetadataRecord = true
      return
    case 'ConsumerGroupMemberMetadata': {
      const v = record.value
      if (!v) return
      const memberId = record.key.memberId
      const base = g.member(memberId) ?? newConsumerMember(kept(memberId))
      g.updateMember({
        ...base,
        ...membership.commonFieldsFromRecord(v),
        subscribedTopicNames: sortedNames(v.subscribedTopicNames.map((n) => kept(n))),
        subscribedTopicRegex: kept(v.subscribedTopicRegex),
        serverAssignorName: kept(v.serverAssignor),
        classicMemberMetadata:
          v.classicMemberMetadata === null
            ? null
            : {
                sessionTimeoutMs: v.classicMemberMetadata.sessionTimeoutMs,
                supportedProtocols: v.classicMemberMetadata.supportedProtocols.map((p) => ({
                  name: kept(p.name),
                  metadata: p.metadata.slice(),
                })),
              },
      })
      return
    }
    case 'ConsumerGroupTargetAssignmentMetadata':
      if (record.value)
        g.replayTargetAssignmentMetadata(record.value.assignmentEpoch, record.value.assignmentTimestamp)
      return
    case 'ConsumerGroupTargetAssignmentMember':
      if (record.value)
        g.replayTargetAssignmentMember(
          record.key.memberId,
          partitionSetFromList(record.value.topicPartitions),
        )
      return
    case 'ConsumerGroupCurrentMemberAssignment': {
      const v = record.value
      if (!v) return
      const memberId = record.key.memberId
      const base = g.member(memberId) ?? newConsumerMember(kept(memberId))
      g.updateMember({
        ...base,
        memberEpoch: v.memberEpoch,
        previousMemberEpoch: v.previousMemberEpoch,
        state: consumerMemberStateFromRecord(v.state),
        assignedPartitions: partitionEpochsFromRecord(v.assignedPartitions, v.memberEpoch),
        partitionsPendingRevocation: partitionEpochsFromRecord(v.partitionsPendingRevocation, v.memberEpoch),
      })
      return
    }
    case 'ConsumerGroupRegularExpression': {
      const v = record.value
      if (!v) return
      g.replayRegularExpression(record.key.regularExpression, {
        topics: sortedNames(v.topics.map((t) => kept(t))),
        version: v.version,
        timestamp: v.timestamp,
      })
      return
    }
  }
}

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1)
}

/** The timers a consumer group keeps for a member (session, rebalance, classic join and sync). */
function cancelMemberTimers(
  timers: TimerCollector<CoordinatorRecord, ClassicCompletion>,
  groupId: string,
  memberId: string,
): void {
  timers.cancel(sessionTimeoutKey(groupId, memberId))
  timers.cancel(rebalanceTimeoutKey(groupId, memberId))
  timers.cancel(classicJoinTimeoutKey(groupId, memberId))
  timers.cancel(classicSyncTimeoutKey(groupId, memberId))
}

/** A set of topic-id partitions as named partitions (embedded consumer protocol), sorted. */
function toNamedPartitions(set: PartitionSet, names: ReadonlyMap<string, string>): TopicPartitions[] {
  const out: TopicPartitions[] = []
  for (const t of partitionSetToList(set)) {
    const topic = names.get(t.topicId)
    if (topic !== undefined) out.push({ topic, partitions: t.partitions })
  }
  return out.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0))
}

/** The embedded protocol version of a member's metadata (0 when it cannot be read). */
function versionOf(metadata: Uint8Array): number {
  try {
    return consumerProtocolVersion(metadata)
  } catch {
    return 0
  }
}

/** A classic member's session timeout (the group's for a member that never joined classically). */
function classicSessionTimeout(member: ConsumerGroupMember, config: ConsumerGroupConfig): number {
  return member.classicMemberMetadata?.sessionTimeoutMs ?? config.sessionTimeoutMs
}

/** Kafka's ConsumerGroup.supportsClassicProtocols: a protocol every classic member supports. */
function supportsClassicProtocols(
  group: ConsumerGroup,
  protocolType: string,
  protocols: readonly { readonly name: string }[],
): boolean {
  if (protocolType !== CONSUMER_PROTOCOL_TYPE) return false
  if (group.size === 0) return protocols.length > 0
  const classic = [...group.members.values()].filter((m) => m.classicMemberMetadata !== null)
  return protocols.some((p) =>
    classic.every((m) => m.classicMemberMetadata!.supportedProtocols.some((s) => s.name === p.name)),
  )
}

/**
 * Kafka's validateConsumerGroupMember, throwIfMemberDoesNotUseClassicProtocol and
 * throwIfGenerationIdUnmatched: the classic member a SyncGroup or Heartbeat is from.
 */
function classicMemberOrThrow(
  group: ConsumerGroup,
  memberId: string,
  instanceId: string | null,
  generationId: number,
): ConsumerGroupMember {
  let member: ConsumerGroupMember | undefined
  if (instanceId === null) {
    member = group.member(memberId)
    if (member === undefined) throw membership.unknownMember(memberId, group.groupId)
  } else {
    const ownerId = group.staticMemberId(instanceId)
    if (ownerId === undefined) {
      throw new ApiError(
        ErrorCode.UNKNOWN_MEMBER_ID,
        `Member with instance id ${instanceId} is not a member of group ${group.groupId}.`,
      )
    }
    member = membership.staticOwner(group, memberId, instanceId)
  }
  if (member.classicMemberMetadata === null) {
    throw new ApiError(
      ErrorCode.UNKNOWN_MEMBER_ID,
      `Member ${member.memberId} does not use the classic protocol.`,
    )
  }
  if (member.memberEpoch !== generationId) {
    throw new ApiError(
      ErrorCode.ILLEGAL_GENERATION,
      `The request generation id ${generationId} is not equal to the member epoch ${member.memberEpoch} of member ${member.memberId}.`,
    )
  }
  return member
}

/**
 * Kafka's ConsumerGroup.waitingOnUnreleasedPartition: whether a partition of the member's target
 * it does not have yet is still owned by another member.
 */
function waitingOnUnreleasedPartition(group: ConsumerGroup, member: ConsumerGroupMember): boolean {
  if (member.state !== ConsumerMemberState.UNRELEASED_PARTITIONS) return false
  for (const [topicId, partitions] of group.targetAssignment(member.memberId)) {
    const assigned = member.assignedPartitions.get(topicId)
    for (const p of partitions) {
      if (!assigned?.has(p) && group.currentPartitionEpoch(topicId, p) !== -1) return true
    }
  }
  return false
}
