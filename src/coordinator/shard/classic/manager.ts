/**
 * The classic part of the group metadata manager (Kafka's GroupMetadataManager classicGroup*):
 * JoinGroup, SyncGroup, Heartbeat and LeaveGroup, their timers (session, join phase, initial
 * rebalance delay, pending sync), DescribeGroups / ListGroups rows, deletion, offset validation and
 * `replay` of GroupMetadata records.
 *
 * Everything is synchronous and deterministic: time comes in as `nowMs`, new member ids are built
 * from a uuid the service passes in, and parked requests are tokens (see types.ts for the
 * deferred-response contract). As in Kafka, the group itself is in-memory state that handlers update
 * and GroupMetadata records are checkpoints; `replay` rebuilds a group from its last checkpoint when
 * the shard loads, and applies a checkpoint this manager wrote to the live group (the assignment of
 * a SyncGroup takes effect only then, once it is stored).
 */
import { CONSUMER_PROTOCOL_TYPE } from '../../../protocol/consumer-protocol.js'
import { ErrorCode, errorName } from '../../../protocol/errors.js'
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'
import type { DescribeGroupsResponseDescribedGroup } from '../../../protocol/generated/messages/DescribeGroupsResponse.js'
import type { HeartbeatRequest } from '../../../protocol/generated/messages/HeartbeatRequest.js'
import {
  createHeartbeatResponse,
  type HeartbeatResponse,
} from '../../../protocol/generated/messages/HeartbeatResponse.js'
import type { JoinGroupRequest } from '../../../protocol/generated/messages/JoinGroupRequest.js'
import {
  createJoinGroupResponse,
  type JoinGroupResponse,
  type JoinGroupResponseJoinGroupResponseMember,
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
import { ApiError } from '../api-error.js'
import { FROM_COMMIT, type OffsetExpiry } from '../offsets/offset-metadata-manager.js'
import { TimerCollector } from '../result.js'
import {
  type ClassicProtocol,
  ClassicGroup,
  ClassicGroupMember,
  ClassicGroupState,
  EMPTY_BYTES,
  type RequestToken,
} from './group.js'
import {
  currentAssignment,
  emptyGroupMetadataRecord,
  type GroupMetadataRecord,
  groupMetadataRecord,
  groupMetadataTombstone,
} from './records.js'
import {
  type ClassicCompletion,
  type ClassicJoinOutcome,
  type ClassicResult,
  type ClassicTimer,
  type ClassicTimerIntents,
  heartbeatKey,
  joinKey,
  syncKey,
} from './types.js'
import type { RuntimeLogger } from '../../runtime/types.js'
import { logLoadedGroup, SILENT_LOGGER } from '../group-log.js'

/** A JoinGroup's reason as Kafka's logs give it (JoinGroupRequest.joinReason). */
const clientReason = (reason: string | null): string =>
  reason === null || reason === '' ? 'not provided' : reason

/** Broker settings for classic groups (group-level overrides already applied). */
export interface ClassicGroupConfig {
  /** group.min.session.timeout.ms */
  readonly minSessionTimeoutMs: number
  /** group.max.session.timeout.ms */
  readonly maxSessionTimeoutMs: number
  /** group.initial.rebalance.delay.ms */
  readonly initialRebalanceDelayMs: number
  /** group.max.size */
  readonly maxSize: number
  /** How long a new member's parked JoinGroup may wait (Kafka: 5 minutes, not configurable). */
  readonly newMemberJoinTimeoutMs: number
}

export const CLASSIC_GROUP_CONFIG_DEFAULTS: ClassicGroupConfig = Object.freeze({
  minSessionTimeoutMs: 6000,
  maxSessionTimeoutMs: 1800000,
  initialRebalanceDelayMs: 3000,
  maxSize: 2147483647,
  newMemberJoinTimeoutMs: 300000,
})

/**
 * Groups of other types that share the id space. The join consults it during its group lookup: a
 * non-empty group of another type answers INCONSISTENT_GROUP_PROTOCOL; an empty streams group is
 * converted (its tombstones come from `deleteEmptyGroupRecords` and are written with the join).
 */
export interface OtherGroupTypes {
  /** 'streams', 'consumer', 'share', … or undefined when no group of another type has this id. */
  typeOf(groupId: string): string | undefined
  isEmpty(groupId: string): boolean
  /**
   * Whether an empty group of another type may hold state outside the shard that the service must
   * clean up before the conversion (KIP-1331: a streams group whose stored description epoch is not
   * −1, so a real epoch or the −2 barrier). Absent: always.
   */
  needsCleanupBeforeConversion?(groupId: string): boolean
  /** The tombstones that delete an empty group of another type. */
  deleteEmptyGroupRecords(groupId: string): CoordinatorRecord[]
}

export interface ClassicGroupManagerOptions {
  readonly config?: ClassicGroupConfig
  readonly otherGroups?: OtherGroupTypes
  /** Where group events are logged (see group-log.ts); default: nowhere. */
  readonly logger?: RuntimeLogger
}

export interface ClassicJoinContext {
  readonly nowMs: number
  readonly apiVersion: number
  /** From the request header. */
  readonly clientId: string
  /** The connection's address, e.g. "/127.0.0.1". */
  readonly clientHost: string
  /** The service's handle for this request's answer. */
  readonly token: RequestToken
  /** A fresh uuid, used if the join creates a member id (`<clientId or instanceId>-<uuid>`). */
  readonly newMemberUuid: string
  /**
   * The member id if the join creates one in a consumer group (online migration): a Kafka Uuid, as
   * Kafka's; `newMemberUuid` when absent.
   */
  readonly newConsumerMemberId?: string
  /**
   * True when the service has cleaned up what an empty streams group with this id holds outside
   * the shard, or has nothing to clean up (no plugin), so the join may convert it at once (Kafka's
   * topologyCleanupHandled).
   */
  readonly conversionReady?: boolean
}

export interface ClassicSyncContext {
  readonly nowMs: number
  readonly apiVersion: number
  readonly token: RequestToken
}

export interface ClassicOpContext {
  readonly nowMs: number
  readonly apiVersion: number
}

export interface ListedClassicGroup {
  readonly groupId: string
  readonly protocolType: string
  readonly groupState: ClassicGroupState
  readonly groupType: 'classic'
}

const UNKNOWN_MEMBER_ID = ''

/** Collects what one operation produces. */
class Out {
  readonly records: CoordinatorRecord[] = []
  readonly completions: ClassicCompletion[] = []
  readonly timers = new TimerCollector<CoordinatorRecord, ClassicCompletion>()
  result<T>(response: T): ClassicResult<T> {
    return { records: this.records, response, timers: this.timers.intents(), completions: this.completions }
  }
  join(token: RequestToken, response: JoinGroupResponse): void {
    this.completions.push({ api: 'JoinGroup', token, response })
  }
  sync(token: RequestToken, response: SyncGroupResponse): void {
    this.completions.push({ api: 'SyncGroup', token, response })
  }
}

const NOT_CONVERTING: ClassicJoinOutcome = Object.freeze({ conversionRequired: null })
const CONVERSION_REQUIRED: ClassicJoinOutcome = Object.freeze({ conversionRequired: 'streams' })

const joinError = (memberId: string, errorCode: number): JoinGroupResponse =>
  createJoinGroupResponse({ memberId, errorCode })

function protocolsOf(request: JoinGroupRequest): ClassicProtocol[] {
  return request.protocols.map((p) => ({ name: p.name, metadata: p.metadata }))
}

export class ClassicGroupManager {
  readonly #groups = new Map<string, ClassicGroup>()
  readonly #config: ClassicGroupConfig
  readonly #otherGroups: OtherGroupTypes | undefined

  readonly #log: RuntimeLogger

  constructor(options: ClassicGroupManagerOptions = {}) {
    this.#log = options.logger ?? SILENT_LOGGER
    this.#config = options.config ?? CLASSIC_GROUP_CONFIG_DEFAULTS
    this.#otherGroups = options.otherGroups
  }

  // ---- lookups ----

  group(groupId: string): ClassicGroup | undefined {
    return this.#groups.get(groupId)
  }

  groupIds(): string[] {
    return [...this.#groups.keys()]
  }

  hasGroup(groupId: string): boolean {
    return this.#groups.has(groupId)
  }

  // ---- JoinGroup (v0–9) ----

  /**
   * Whether a JoinGroup fails the checks Kafka's service makes before it looks at any group (an
   * empty group id, a session timeout outside group.min/max.session.timeout.ms):
   * {@link classicGroupJoin} answers those itself, whatever group the id names.
   */
  failsRequestChecks(request: JoinGroupRequest): boolean {
    return (
      request.groupId === '' ||
      request.sessionTimeoutMs < this.#config.minSessionTimeoutMs ||
      request.sessionTimeoutMs > this.#config.maxSessionTimeoutMs
    )
  }

  classicGroupJoin(ctx: ClassicJoinContext, request: JoinGroupRequest): ClassicResult<ClassicJoinOutcome> {
    const out = new Out()
    const req: JoinGroupRequest =
      ctx.apiVersion === 0 ? { ...request, rebalanceTimeoutMs: request.sessionTimeoutMs } : request
    const { groupId, memberId } = req

    // 1. Request checks Kafka's service makes before the shard.
    if (groupId === '') {
      out.join(ctx.token, joinError(memberId, ErrorCode.INVALID_GROUP_ID))
      return out.result(NOT_CONVERTING)
    }
    if (
      req.sessionTimeoutMs < this.#config.minSessionTimeoutMs ||
      req.sessionTimeoutMs > this.#config.maxSessionTimeoutMs
    ) {
      out.join(ctx.token, joinError(memberId, ErrorCode.INVALID_SESSION_TIMEOUT))
      return out.result(NOT_CONVERTING)
    }

    // 2. Group lookup, including groups of other types.
    const otherType = this.#groups.has(groupId) ? undefined : this.#otherGroups?.typeOf(groupId)
    if (otherType !== undefined) {
      const other = this.#otherGroups!
      // An empty streams or consumer group gives way (Kafka's maybeDeleteEmpty…Group); an empty
      // consumer group never needs a cleanup first.
      if ((otherType === 'streams' || otherType === 'consumer') && other.isEmpty(groupId)) {
        // Kafka's topologyCleanupHandled: only a group that may hold a stored description defers.
        if (ctx.conversionReady !== true && (other.needsCleanupBeforeConversion?.(groupId) ?? true)) {
          return out.result(CONVERSION_REQUIRED)
        }
        out.records.push(...other.deleteEmptyGroupRecords(groupId))
        this.#log.info(
          { groupId },
          `[GroupId ${groupId}] Converted the empty ${otherType} group to a classic group.`,
        )
      } else {
        out.join(ctx.token, joinError(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
        return out.result(NOT_CONVERTING)
      }
    }
    const isUnknownMember = memberId === UNKNOWN_MEMBER_ID
    let group = this.#groups.get(groupId)
    const isNewGroup = group === undefined
    if (!group) {
      if (!isUnknownMember) {
        out.join(ctx.token, joinError(memberId, ErrorCode.UNKNOWN_MEMBER_ID))
        return out.result(NOT_CONVERTING)
      }
      group = new ClassicGroup({ groupId, state: ClassicGroupState.EMPTY, currentStateTimestamp: ctx.nowMs })
      group.stored = false
      this.#groups.set(groupId, group)
    }
    group.live = true

    // 3. Size limit, then new or existing member.
    if (!this.#acceptJoiningMember(group, memberId)) {
      group.remove(memberId)
      out.join(ctx.token, joinError(UNKNOWN_MEMBER_ID, ErrorCode.GROUP_MAX_SIZE_REACHED))
    } else if (isUnknownMember) {
      this.#joinNewMember(ctx, req, group, out)
    } else {
      this.#joinExistingMember(ctx, req, group, out)
    }

    // 4. A new group is made durable even when nothing else is written; so is a group whose first
    // record could not be stored, if it is still here (see classicGroupJoinWriteFailed).
    if ((isNewGroup || !group.stored) && !out.records.some((r) => r.type === 'GroupMetadata')) {
      out.records.push(emptyGroupMetadataRecord(group))
    }
    return out.result(NOT_CONVERTING)
  }

  #acceptJoiningMember(group: ClassicGroup, memberId: string): boolean {
    const max = this.#config.maxSize
    switch (group.state) {
      case ClassicGroupState.EMPTY:
      case ClassicGroupState.DEAD:
        return true
      case ClassicGroupState.PREPARING_REBALANCE:
        // Counting members awaiting join (not members) lets the last rejoining members be turned
        // away when the limit was lowered.
        return (group.member(memberId)?.awaitingJoin ?? null) !== null || group.numAwaitingJoin() < max
      default:
        return group.members.has(memberId) || group.members.size < max
    }
  }

  #joinNewMember(ctx: ClassicJoinContext, req: JoinGroupRequest, group: ClassicGroup, out: Out): void {
    const protocols = protocolsOf(req)
    if (group.is(ClassicGroupState.DEAD)) {
      out.join(ctx.token, joinError(UNKNOWN_MEMBER_ID, ErrorCode.COORDINATOR_NOT_AVAILABLE))
      return
    }
    if (!group.supportsProtocols(req.protocolType, protocols)) {
      out.join(ctx.token, joinError(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
      return
    }
    const instanceId = req.groupInstanceId
    const newMemberId = `${instanceId ?? ctx.clientId}-${ctx.newMemberUuid}`
    if (instanceId !== null) {
      const existing = group.staticMemberId(instanceId)
      if (existing !== undefined) {
        this.#log.info(
          { groupId: group.groupId, memberId: newMemberId, instanceId, replacedMemberId: existing },
          `Static member with groupInstanceId=${instanceId} and unknown member id joins group ${group.groupId} in ${group.state} state. Replacing previously mapped member ${existing} with this groupInstanceId.`,
        )
        this.#updateStaticMember(ctx, req, group, existing, newMemberId, out)
      } else {
        this.#log.info(
          { groupId: group.groupId, memberId: newMemberId, instanceId },
          `Static member with groupInstanceId=${instanceId} and unknown member id joins group ${group.groupId} in ${group.state} state. Created a new member id ${newMemberId} for this member and added to the group.`,
        )
        this.#addMemberThenRebalanceOrCompleteJoin(ctx, req, group, newMemberId, out)
      }
      return
    }
    if (ctx.apiVersion >= 4) {
      this.#log.info(
        { groupId: group.groupId, memberId: newMemberId },
        `Dynamic member with unknown member id joins group ${group.groupId} in ${group.state} state. Created a new member id ${newMemberId} and requesting the member to rejoin with this id.`,
      )
      // KIP-394: the member must come back with the id it is given; until then it is pending.
      group.pendingJoinMembers.add(newMemberId)
      this.#schedule(out, this.#heartbeatTimer(group.groupId, newMemberId, req.sessionTimeoutMs))
      out.join(ctx.token, joinError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED))
      return
    }
    this.#log.info(
      { groupId: group.groupId, memberId: newMemberId },
      `Dynamic member with unknown member id joins group ${group.groupId} in state ${group.state}. Created a new member id ${newMemberId} and added the member to the group.`,
    )
    this.#addMemberThenRebalanceOrCompleteJoin(ctx, req, group, newMemberId, out)
  }

  #joinExistingMember(ctx: ClassicJoinContext, req: JoinGroupRequest, group: ClassicGroup, out: Out): void {
    const { memberId } = req
    const protocols = protocolsOf(req)
    if (group.is(ClassicGroupState.DEAD)) {
      out.join(ctx.token, joinError(memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE))
      return
    }
    if (!group.supportsProtocols(req.protocolType, protocols)) {
      out.join(ctx.token, joinError(memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
      return
    }
    if (group.isPendingMember(memberId)) {
      if (req.groupInstanceId !== null) {
        // Pending members are dynamic by construction; a static id here means a confused client.
        out.join(ctx.token, joinError(memberId, ErrorCode.INVALID_REQUEST))
        return
      }
      this.#log.info(
        { groupId: group.groupId, memberId },
        `Pending dynamic member with id ${memberId} joins group ${group.groupId} in ${group.state} state. Adding to the group now.`,
      )
      this.#addMemberThenRebalanceOrCompleteJoin(ctx, req, group, memberId, out)
      return
    }
    const error = validateMember(group, memberId, req.groupInstanceId)
    if (error !== ErrorCode.NONE) {
      out.join(ctx.token, createJoinGroupResponse({ memberId, errorCode: error, protocolName: null }))
      return
    }
    const member = group.member(memberId)!
    const updating = `Updating metadata for member ${memberId} during ${group.state}; client reason: ${clientReason(req.reason)}`
    switch (group.state) {
      case ClassicGroupState.PREPARING_REBALANCE:
        this.#updateMemberThenRebalanceOrCompleteJoin(ctx, req, group, member, updating, out)
        return
      case ClassicGroupState.COMPLETING_REBALANCE:
        if (member.matches(protocols)) {
          // The member probably lost its JoinGroup answer: repeat it for the current generation.
          out.join(ctx.token, this.#joinResponseFor(group, memberId, group.isLeader(memberId), false))
        } else {
          this.#updateMemberThenRebalanceOrCompleteJoin(ctx, req, group, member, updating, out)
        }
        return
      case ClassicGroupState.STABLE:
        // A leader's JoinGroup always rebalances: that is how it reacts to changes that do not show
        // in member metadata (topic metadata for consumers).
        if (group.isLeader(memberId)) {
          const reason = `Leader ${memberId} re-joining group during ${group.state}; client reason: ${clientReason(req.reason)}`
          this.#updateMemberThenRebalanceOrCompleteJoin(ctx, req, group, member, reason, out)
        } else if (!member.matches(protocols)) {
          this.#updateMemberThenRebalanceOrCompleteJoin(ctx, req, group, member, updating, out)
        } else {
          out.join(ctx.token, this.#joinResponseFor(group, memberId, false, false))
        }
        return
      default:
        // Empty: the member must reset its generation and join again.
        out.join(ctx.token, joinError(memberId, ErrorCode.UNKNOWN_MEMBER_ID))
    }
  }

  #joinResponseFor(
    group: ClassicGroup,
    memberId: string,
    withMembers: boolean,
    skipAssignment: boolean,
  ): JoinGroupResponse {
    return createJoinGroupResponse({
      members: withMembers ? this.#currentMembers(group) : [],
      memberId,
      generationId: group.generationId,
      protocolName: group.protocolName,
      protocolType: group.protocolType,
      leader: group.leaderId ?? '',
      skipAssignment,
    })
  }

  #currentMembers(group: ClassicGroup): JoinGroupResponseJoinGroupResponseMember[] {
    return [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      metadata: m.metadata(group.protocolName),
    }))
  }

  #addMemberThenRebalanceOrCompleteJoin(
    ctx: ClassicJoinContext,
    req: JoinGroupRequest,
    group: ClassicGroup,
    memberId: string,
    out: Out,
  ): void {
    const member = new ClassicGroupMember({
      memberId,
      groupInstanceId: req.groupInstanceId,
      clientId: ctx.clientId,
      clientHost: ctx.clientHost,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      sessionTimeoutMs: req.sessionTimeoutMs,
      protocolType: req.protocolType,
      supportedProtocols: protocolsOf(req),
    })
    member.isNew = true
    if (group.is(ClassicGroupState.PREPARING_REBALANCE) && group.previousState === ClassicGroupState.EMPTY) {
      group.newMemberAdded = true
    }
    group.add(member)
    member.awaitingJoin = ctx.token
    // A parked new member cannot heartbeat, so its JoinGroup is bounded by the new-member timeout.
    this.#schedule(out, this.#heartbeatTimer(group.groupId, memberId, this.#config.newMemberJoinTimeoutMs))
    const reason = `Adding new member ${memberId} with group instance id ${req.groupInstanceId}; client reason: ${clientReason(req.reason)}`
    this.#maybePrepareRebalanceOrCompleteJoin(group, ctx.nowMs, out, reason)
  }

  #updateMemberThenRebalanceOrCompleteJoin(
    ctx: ClassicJoinContext,
    req: JoinGroupRequest,
    group: ClassicGroup,
    member: ClassicGroupMember,
    reason: string,
    out: Out,
  ): void {
    this.#updateMember(member, protocolsOf(req), req, ctx.token, out)
    this.#maybePrepareRebalanceOrCompleteJoin(group, ctx.nowMs, out, reason)
  }

  /** Kafka's updateMember: new protocols and timeouts, and the new parked JoinGroup. */
  #updateMember(
    member: ClassicGroupMember,
    protocols: readonly ClassicProtocol[],
    req: { readonly rebalanceTimeoutMs: number; readonly sessionTimeoutMs: number },
    token: RequestToken | null,
    out: Out,
  ): void {
    member.supportedProtocols = protocols
    member.rebalanceTimeoutMs = req.rebalanceTimeoutMs
    member.sessionTimeoutMs = req.sessionTimeoutMs
    // A member that joins again while a JoinGroup is parked replaces it; the older one is answered
    // with UNKNOWN_MEMBER_ID, as Kafka's replaced future is never answered at all.
    if (member.awaitingJoin !== null && token !== null && member.awaitingJoin !== token) {
      out.join(member.awaitingJoin, joinError(member.memberId, ErrorCode.UNKNOWN_MEMBER_ID))
    }
    member.awaitingJoin = token
  }

  #updateStaticMember(
    ctx: ClassicJoinContext,
    req: JoinGroupRequest,
    group: ClassicGroup,
    oldMemberId: string,
    newMemberId: string,
    out: Out,
  ): void {
    const instanceId = req.groupInstanceId!
    const staticReason = `Updating metadata for static member ${newMemberId} with instance id ${instanceId}; client reason: ${clientReason(req.reason)}`
    const currentLeader = group.leaderId
    const oldMember = group.member(oldMemberId)
    const newMember = this.#replaceStaticMember(group, instanceId, oldMemberId, newMemberId, out)
    this.#cancel(out, heartbeatKey(group.groupId, oldMemberId))
    this.#schedule(out, this.#heartbeatTimer(group.groupId, newMemberId, newMember.sessionTimeoutMs))
    this.#updateMember(newMember, protocolsOf(req), req, ctx.token, out)

    if (group.is(ClassicGroupState.STABLE)) {
      if ((group.protocolName ?? '') === group.selectProtocol()) {
        // The selected protocol stays: store the new member id, no rebalance. The answer goes out
        // with the record (and is replaced by the storage error if the write fails).
        out.records.push(groupMetadataRecord(group, currentAssignment(group)))
        // Undone by classicGroupJoinWriteFailed if the record cannot be stored (Kafka reverts it).
        group.unstoredReplacement = { old: oldMember!, newMemberId }
        newMember.awaitingJoin = null
        const isLeader = group.isLeader(newMemberId)
        const response =
          ctx.apiVersion >= 9
            ? this.#joinResponseFor(group, newMemberId, isLeader, isLeader)
            : createJoinGroupResponse({
                memberId: newMemberId,
                generationId: group.generationId,
                protocolName: group.protocolName,
                protocolType: group.protocolType,
                leader: currentLeader ?? '',
              })
        out.join(ctx.token, response)
        return
      }
      this.#maybePrepareRebalanceOrCompleteJoin(group, ctx.nowMs, out, staticReason)
      return
    }
    if (group.is(ClassicGroupState.COMPLETING_REBALANCE)) {
      // The leader may already be assigning to the old member id: rebalance.
      this.#prepareRebalance(group, ctx.nowMs, out, staticReason)
      return
    }
    this.#maybeCompleteJoinPhase(group, ctx.nowMs, out)
  }

  /** Kafka's replaceStaticMember: fences the old id's parked requests with FENCED_INSTANCE_ID. */
  #replaceStaticMember(
    group: ClassicGroup,
    instanceId: string,
    oldMemberId: string,
    newMemberId: string,
    out: Out,
  ): ClassicGroupMember {
    const old = group.member(oldMemberId)
    if (!old) throw new Error(`Cannot replace non-existing member id ${oldMemberId}`)
    if (old.awaitingJoin !== null) {
      out.join(
        old.awaitingJoin,
        createJoinGroupResponse({
          memberId: oldMemberId,
          protocolName: null,
          protocolType: null,
          leader: '',
          errorCode: ErrorCode.FENCED_INSTANCE_ID,
        }),
      )
    }
    if (old.awaitingSync !== null) {
      out.sync(old.awaitingSync, createSyncGroupResponse({ errorCode: ErrorCode.FENCED_INSTANCE_ID }))
    }
    const replacement = new ClassicGroupMember({
      memberId: newMemberId,
      groupInstanceId: old.groupInstanceId,
      clientId: old.clientId,
      clientHost: old.clientHost,
      rebalanceTimeoutMs: old.rebalanceTimeoutMs,
      sessionTimeoutMs: old.sessionTimeoutMs,
      protocolType: old.protocolType,
      supportedProtocols: old.supportedProtocols,
      assignment: old.assignment,
    })
    // Keep the member's place in the join order.
    const entries = [...group.members.entries()].map(([id, m]): [string, ClassicGroupMember] =>
      id === oldMemberId ? [newMemberId, replacement] : [id, m],
    )
    group.members.clear()
    for (const [id, m] of entries) group.members.set(id, m)
    if (group.isLeader(oldMemberId)) group.leaderId = newMemberId
    group.staticMembers.set(instanceId, newMemberId)
    if (group.pendingSyncMembers.delete(oldMemberId)) group.pendingSyncMembers.add(newMemberId)
    return replacement
  }

  #maybePrepareRebalanceOrCompleteJoin(group: ClassicGroup, nowMs: number, out: Out, reason: string): void {
    if (group.canRebalance()) this.#prepareRebalance(group, nowMs, out, reason)
    else this.#maybeCompleteJoinPhase(group, nowMs, out)
  }

  #prepareRebalance(group: ClassicGroup, nowMs: number, out: Out, reason: string): void {
    if (group.is(ClassicGroupState.COMPLETING_REBALANCE)) {
      this.#resetAndPropagateAssignmentWithError(group, ErrorCode.REBALANCE_IN_PROGRESS, out)
    }
    this.#removeSyncExpiration(group, out)
    const initial = group.is(ClassicGroupState.EMPTY)
    if (initial) {
      // A new group waits for more members before its first generation.
      const delayMs = this.#config.initialRebalanceDelayMs
      const remainingMs = Math.max(group.rebalanceTimeoutMs() - delayMs, 0)
      this.#schedule(out, this.#initialRebalanceTimer(group.groupId, delayMs, remainingMs))
    }
    group.transitionTo(ClassicGroupState.PREPARING_REBALANCE, nowMs)
    this.#log.info(
      { groupId: group.groupId, generationId: group.generationId, state: group.state, reason },
      `Preparing to rebalance group ${group.groupId} in state ${group.state} with old generation ${group.generationId} (reason: ${reason}).`,
    )
    if (!initial) this.#maybeCompleteJoinElseSchedule(group, nowMs, out)
  }

  #maybeCompleteJoinElseSchedule(group: ClassicGroup, nowMs: number, out: Out): void {
    if (group.hasAllMembersJoined()) {
      this.#completeJoin(group, nowMs, out)
    } else {
      this.#schedule(out, this.#joinTimer(group.groupId, group.rebalanceTimeoutMs()))
    }
  }

  #maybeCompleteJoinPhase(group: ClassicGroup, nowMs: number, out: Out): void {
    if (!group.is(ClassicGroupState.PREPARING_REBALANCE)) return
    // The initial rebalance ends with its delay timer, not when everyone has joined.
    if (group.previousState === ClassicGroupState.EMPTY) return
    if (!group.hasAllMembersJoined()) return
    this.#completeJoin(group, nowMs, out)
  }

  /**
   * Kafka's completeClassicGroupJoin: drops dynamic members that did not rejoin, elects a leader
   * among those that did, starts the next generation and answers every parked JoinGroup.
   */
  #completeJoin(group: ClassicGroup, nowMs: number, out: Out): void {
    this.#cancel(out, joinKey(group.groupId))
    for (const m of [...group.members.values()]) {
      if (m.awaitingJoin === null && !m.isStatic) {
        group.remove(m.memberId)
        this.#cancel(out, heartbeatKey(group.groupId, m.memberId))
      }
    }
    if (group.is(ClassicGroupState.DEAD)) return
    if (!group.maybeElectNewJoinedLeader() && group.members.size > 0) {
      // Nobody rejoined: try again after another rebalance timeout, until sessions expire.
      this.#schedule(out, this.#joinTimer(group.groupId, group.rebalanceTimeoutMs()))
      return
    }
    group.initNextGeneration(nowMs)
    if (group.is(ClassicGroupState.EMPTY)) {
      this.#log.info(
        { groupId: group.groupId, generationId: group.generationId },
        `Group ${group.groupId} with generation ${group.generationId} is now empty.`,
      )
      out.records.push(groupMetadataRecord(group, new Map()))
      return
    }
    this.#log.info(
      { groupId: group.groupId, generationId: group.generationId, members: group.members.size },
      `Stabilized group ${group.groupId} generation ${group.generationId} with ${group.members.size} members.`,
    )
    for (const m of group.members.values()) {
      const response = this.#joinResponseFor(group, m.memberId, group.isLeader(m.memberId), false)
      if (m.awaitingJoin !== null) {
        out.join(m.awaitingJoin, response)
        m.awaitingJoin = null
      }
      this.#schedule(out, this.#heartbeatTimer(group.groupId, m.memberId, m.sessionTimeoutMs))
      m.isNew = false
      group.pendingSyncMembers.add(m.memberId)
    }
    const generation = group.generationId
    const groupId = group.groupId
    this.#schedule(out, {
      key: syncKey(groupId),
      delayMs: group.rebalanceTimeoutMs(),
      op: (now) =>
        this.#timerOp((o) => {
          this.#expirePendingSync(groupId, generation, now, o)
        }),
    })
  }

  #resetAndPropagateAssignmentWithError(group: ClassicGroup, errorCode: number, out: Out): void {
    for (const m of group.members.values()) m.assignment = EMPTY_BYTES
    this.#propagateAssignment(group, errorCode, out)
  }

  #propagateAssignment(group: ClassicGroup, errorCode: number, out: Out): void {
    const ok = errorCode === ErrorCode.NONE
    for (const m of group.members.values()) {
      if (m.awaitingSync === null) continue
      out.sync(
        m.awaitingSync,
        createSyncGroupResponse({
          protocolName: ok ? group.protocolName : null,
          protocolType: ok ? group.protocolType : null,
          assignment: m.assignment,
          errorCode,
        }),
      )
      m.awaitingSync = null
      // Expirations that fired while the member was parked were ignored: start a new session.
      this.#schedule(out, this.#heartbeatTimer(group.groupId, m.memberId, m.sessionTimeoutMs))
    }
  }

  #removeSyncExpiration(group: ClassicGroup, out: Out): void {
    group.pendingSyncMembers.clear()
    this.#cancel(out, syncKey(group.groupId))
  }

  // ---- SyncGroup (v0–5) ----

  classicGroupSync(ctx: ClassicSyncContext, request: SyncGroupRequest): ClassicResult<void> {
    const out = new Out()
    const { groupId, memberId } = request
    const fail = (errorCode: number): ClassicResult<void> => {
      out.sync(ctx.token, createSyncGroupResponse({ errorCode }))
      return out.result(undefined)
    }
    // Starting with v5, protocol type and name are mandatory (Kafka checks this in KafkaApis).
    if (ctx.apiVersion >= 5 && (request.protocolType === null || request.protocolName === null)) {
      return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    }
    if (groupId === '') return fail(ErrorCode.INVALID_GROUP_ID)
    const group = this.#groups.get(groupId)
    if (!group || group.isEmpty()) return fail(ErrorCode.UNKNOWN_MEMBER_ID)
    group.live = true

    // 1. Validation.
    if (group.is(ClassicGroupState.DEAD)) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    const error = validateMember(group, memberId, request.groupInstanceId)
    if (error !== ErrorCode.NONE) return fail(error)
    if (request.generationId !== group.generationId) return fail(ErrorCode.ILLEGAL_GENERATION)
    if (
      isProtocolInconsistent(request.protocolType, group.protocolType) ||
      isProtocolInconsistent(request.protocolName, group.protocolName)
    ) {
      return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    }

    // 2. By state.
    if (group.is(ClassicGroupState.PREPARING_REBALANCE)) return fail(ErrorCode.REBALANCE_IN_PROGRESS)
    const member = group.member(memberId)!
    if (group.is(ClassicGroupState.COMPLETING_REBALANCE)) {
      member.awaitingSync = ctx.token
      this.#removePendingSyncMember(group, memberId, out)
      if (group.isLeader(memberId)) {
        // The leader's assignment is written; it takes effect (and everyone parked is answered)
        // once the record is stored: `replay` moves the group to Stable.
        const given = new Map(request.assignments.map((a) => [a.memberId, a.assignment]))
        const assignment = new Map<string, Uint8Array>()
        for (const m of group.members.values())
          assignment.set(m.memberId, given.get(m.memberId) ?? EMPTY_BYTES)
        out.records.push(groupMetadataRecord(group, assignment))
        for (const m of group.members.values()) {
          if (m.awaitingSync === null) continue
          out.sync(
            m.awaitingSync,
            createSyncGroupResponse({
              protocolName: group.protocolName,
              protocolType: group.protocolType,
              assignment: assignment.get(m.memberId)!,
            }),
          )
          m.awaitingSync = null
          this.#schedule(out, this.#heartbeatTimer(group.groupId, m.memberId, m.sessionTimeoutMs))
        }
      }
      return out.result(undefined)
    }
    // Stable: the assignment is already known.
    this.#removePendingSyncMember(group, memberId, out)
    out.sync(
      ctx.token,
      createSyncGroupResponse({
        protocolType: group.protocolType,
        protocolName: group.protocolName,
        assignment: member.assignment,
      }),
    )
    return out.result(undefined)
  }

  /**
   * The leader's assignment record of generation `generationId` could not be stored. While the
   * group is still completing that generation, as Kafka does when that append fails: every
   * SyncGroup still parked gets `errorCode`, the assignments are cleared, and a new rebalance starts
   * at once (members learn it from their next heartbeat or SyncGroup).
   */
  classicGroupSyncWriteFailed(
    groupId: string,
    generationId: number,
    errorCode: number,
    nowMs: number,
  ): ClassicResult<void> {
    const out = new Out()
    const group = this.#groups.get(groupId)
    if (group?.is(ClassicGroupState.COMPLETING_REBALANCE) && group.generationId === generationId) {
      this.#resetAndPropagateAssignmentWithError(group, errorCode, out)
      const reason = `Error ${errorName(errorCode)} when storing group assignment during SyncGroup.`
      this.#maybePrepareRebalanceOrCompleteJoin(group, nowMs, out, reason)
    }
    return out.result(undefined)
  }

  /**
   * A JoinGroup's records could not be stored, so none of the timers it asked for are armed; as
   * Kafka does, what it did is undone. A group that join created (or took over from an empty group
   * of another type) and that no stored record has made durable since goes again (Kafka's snapshot
   * revert removes it): requests parked in it are answered `errorCode` and its timers cancelled.
   * A static member's new id gives way to the old one (see #revertStaticReplacement).
   */
  classicGroupJoinWriteFailed(groupId: string, errorCode: number): ClassicResult<void> {
    const out = new Out()
    const group = this.#groups.get(groupId)
    if (group === undefined) return out.result(undefined)
    if (group.stored) {
      this.#revertStaticReplacement(group, out)
      return out.result(undefined)
    }
    for (const m of group.members.values()) {
      if (m.awaitingJoin !== null) out.join(m.awaitingJoin, joinError(m.memberId, errorCode))
      if (m.awaitingSync !== null) out.sync(m.awaitingSync, createSyncGroupResponse({ errorCode }))
      this.#cancel(out, heartbeatKey(groupId, m.memberId))
    }
    for (const id of group.pendingJoinMembers) this.#cancel(out, heartbeatKey(groupId, id))
    this.#cancel(out, joinKey(groupId))
    this.#cancel(out, syncKey(groupId))
    this.#groups.delete(groupId)
    return out.result(undefined)
  }

  /**
   * A static member's new id that could not be stored (a rejoin in Stable that keeps the protocol)
   * gives way to the old one again, as in Kafka: the old member with its protocols and timeouts,
   * under a new session timeout. Nothing is done if the instance has another member id by now.
   */
  #revertStaticReplacement(group: ClassicGroup, out: Out): void {
    const replacement = group.unstoredReplacement
    group.unstoredReplacement = null
    if (replacement === null) return
    const { old, newMemberId } = replacement
    const instanceId = old.groupInstanceId!
    if (group.staticMemberId(instanceId) !== newMemberId) return
    const entries = [...group.members.entries()].map(([id, m]): [string, ClassicGroupMember] =>
      id === newMemberId ? [old.memberId, old] : [id, m],
    )
    group.members.clear()
    for (const [id, m] of entries) group.members.set(id, m)
    if (group.isLeader(newMemberId)) group.leaderId = old.memberId
    group.staticMembers.set(instanceId, old.memberId)
    if (group.pendingSyncMembers.delete(newMemberId)) group.pendingSyncMembers.add(old.memberId)
    // Its parked requests were answered FENCED_INSTANCE_ID by the join (or its storage error).
    old.awaitingJoin = null
    old.awaitingSync = null
    this.#cancel(out, heartbeatKey(group.groupId, newMemberId))
    this.#schedule(out, this.#heartbeatTimer(group.groupId, old.memberId, old.sessionTimeoutMs))
  }

  #removePendingSyncMember(group: ClassicGroup, memberId: string, out: Out): void {
    group.pendingSyncMembers.delete(memberId)
    if (
      !(group.is(ClassicGroupState.COMPLETING_REBALANCE) || group.is(ClassicGroupState.STABLE)) ||
      group.pendingSyncMembers.size === 0
    ) {
      this.#cancel(out, syncKey(group.groupId))
    }
  }

  #expirePendingSync(groupId: string, generationId: number, nowMs: number, out: Out): void {
    const group = this.#groups.get(groupId)
    if (!group || generationId !== group.generationId) return
    if (!(group.is(ClassicGroupState.COMPLETING_REBALANCE) || group.is(ClassicGroupState.STABLE))) return
    if (group.pendingSyncMembers.size === 0) return
    const pending = [...group.pendingSyncMembers]
    for (const id of pending) {
      group.remove(id)
      this.#cancel(out, heartbeatKey(groupId, id))
    }
    this.#prepareRebalance(
      group,
      nowMs,
      out,
      `Removing [${pending.join(', ')}] on pending sync request expiration`,
    )
  }

  // ---- Heartbeat (v0–4) ----

  classicGroupHeartbeat(_ctx: ClassicOpContext, request: HeartbeatRequest): ClassicResult<HeartbeatResponse> {
    const out = new Out()
    const respond = (errorCode: number): ClassicResult<HeartbeatResponse> =>
      out.result(createHeartbeatResponse({ errorCode }))
    if (request.groupId === '') return respond(ErrorCode.INVALID_GROUP_ID)
    const group = this.#groups.get(request.groupId)
    if (!group) return respond(ErrorCode.UNKNOWN_MEMBER_ID)
    group.live = true
    if (group.is(ClassicGroupState.DEAD)) return respond(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    const error = validateMember(group, request.memberId, request.groupInstanceId)
    if (error !== ErrorCode.NONE) return respond(error)
    if (request.generationId !== group.generationId) return respond(ErrorCode.ILLEGAL_GENERATION)
    if (group.is(ClassicGroupState.EMPTY)) return respond(ErrorCode.UNKNOWN_MEMBER_ID)
    const member = group.member(request.memberId)!
    this.#schedule(out, this.#heartbeatTimer(group.groupId, member.memberId, member.sessionTimeoutMs))
    return respond(
      group.is(ClassicGroupState.PREPARING_REBALANCE) ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE,
    )
  }

  // ---- LeaveGroup (v0–5) ----

  /**
   * v0–2 carry one member id at the top level; it is treated as a one-member batch and its error
   * becomes the top-level error (as Kafka's LeaveGroupResponse does for those versions).
   */
  classicGroupLeave(ctx: ClassicOpContext, request: LeaveGroupRequest): ClassicResult<LeaveGroupResponse> {
    const out = new Out()
    const identities =
      ctx.apiVersion <= 2
        ? [{ memberId: request.memberId, groupInstanceId: null, reason: null }]
        : request.members.map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId,
            reason: m.reason,
          }))
    const whole = (errorCode: number): ClassicResult<LeaveGroupResponse> =>
      out.result(createLeaveGroupResponse({ errorCode }))
    if (request.groupId === '') return whole(ErrorCode.INVALID_GROUP_ID)
    const group = this.#groups.get(request.groupId)
    if (!group) return whole(ErrorCode.UNKNOWN_MEMBER_ID)
    group.live = true
    if (group.is(ClassicGroupState.DEAD)) return whole(ErrorCode.COORDINATOR_NOT_AVAILABLE)

    const responses: LeaveGroupResponseMemberResponse[] = []
    for (const id of identities) {
      const row = (errorCode: number): LeaveGroupResponseMemberResponse => ({
        memberId: id.memberId,
        groupInstanceId: id.groupInstanceId,
        errorCode,
      })
      if (id.memberId === UNKNOWN_MEMBER_ID) {
        // Administrative removal by group.instance.id.
        const staticId = id.groupInstanceId === null ? undefined : group.staticMemberId(id.groupInstanceId)
        if (staticId !== undefined) {
          this.#logLeave(group.groupId, staticId, id.reason)
          this.#removeCurrentMember(group, staticId, out)
          responses.push(row(ErrorCode.NONE))
        } else {
          responses.push(row(ErrorCode.UNKNOWN_MEMBER_ID))
        }
      } else if (group.isPendingMember(id.memberId)) {
        this.#log.info(
          { groupId: group.groupId, memberId: id.memberId, reason: clientReason(id.reason) },
          `[Group ${group.groupId}] Pending member ${id.memberId} has left group through explicit \`LeaveGroup\` request; client reason: ${clientReason(id.reason)}`,
        )
        group.remove(id.memberId)
        this.#cancel(out, heartbeatKey(group.groupId, id.memberId))
        responses.push(row(ErrorCode.NONE))
      } else {
        const error = validateMember(group, id.memberId, id.groupInstanceId)
        if (error === ErrorCode.NONE) {
          this.#logLeave(group.groupId, id.memberId, id.reason)
          this.#removeCurrentMember(group, id.memberId, out)
        }
        responses.push(row(error))
      }
    }
    if (responses.some((r) => r.errorCode === ErrorCode.NONE)) {
      if (group.is(ClassicGroupState.STABLE) || group.is(ClassicGroupState.COMPLETING_REBALANCE)) {
        const left = responses.filter((r) => r.errorCode === ErrorCode.NONE).map((r) => r.memberId)
        const reason = `explicit \`LeaveGroup\` request for (${left.join(', ')}) members.`
        this.#maybePrepareRebalanceOrCompleteJoin(group, ctx.nowMs, out, reason)
      } else if (group.is(ClassicGroupState.PREPARING_REBALANCE)) {
        this.#maybeCompleteJoinPhase(group, ctx.nowMs, out)
      }
    }
    const response =
      ctx.apiVersion <= 2
        ? createLeaveGroupResponse({ errorCode: responses[0]!.errorCode })
        : createLeaveGroupResponse({ members: responses })
    return out.result(response)
  }

  #logLeave(groupId: string, memberId: string, reason: string | null): void {
    this.#log.info(
      { groupId, memberId, reason: clientReason(reason) },
      `[Group ${groupId}] Member ${memberId} has left group through explicit \`LeaveGroup\` request; client reason: ${clientReason(reason)}`,
    )
  }

  #removeCurrentMember(group: ClassicGroup, memberId: string, out: Out): void {
    const member = group.member(memberId)!
    this.#cancel(out, heartbeatKey(group.groupId, memberId))
    // A parked JoinGroup of a leaving member is answered so the client can retry if still alive.
    if (member.awaitingJoin !== null) {
      out.join(member.awaitingJoin, joinError(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
      member.awaitingJoin = null
    }
    group.remove(memberId)
  }

  // ---- timers ----

  #timerOp(body: (out: Out) => void): ClassicResult<void> {
    const out = new Out()
    body(out)
    return out.result(undefined)
  }

  #heartbeatTimer(groupId: string, memberId: string, delayMs: number): ClassicTimer {
    return {
      key: heartbeatKey(groupId, memberId),
      delayMs,
      op: (nowMs) =>
        this.#timerOp((out) => {
          this.#expireMemberHeartbeat(groupId, memberId, nowMs, out)
        }),
    }
  }

  #joinTimer(groupId: string, delayMs: number): ClassicTimer {
    return {
      key: joinKey(groupId),
      delayMs,
      op: (nowMs) =>
        this.#timerOp((out) => {
          const group = this.#groups.get(groupId)
          if (group) this.#completeJoin(group, nowMs, out)
        }),
    }
  }

  #initialRebalanceTimer(groupId: string, delayMs: number, remainingMs: number): ClassicTimer {
    return {
      key: joinKey(groupId),
      delayMs,
      op: (nowMs) =>
        this.#timerOp((out) => {
          const group = this.#groups.get(groupId)
          if (!group) return
          if (group.newMemberAdded && remainingMs !== 0) {
            // Someone joined during the delay: wait again, within the rebalance timeout.
            group.newMemberAdded = false
            const next = Math.min(this.#config.initialRebalanceDelayMs, remainingMs)
            this.#schedule(
              out,
              this.#initialRebalanceTimer(groupId, next, Math.max(remainingMs - delayMs, 0)),
            )
          } else {
            this.#completeJoin(group, nowMs, out)
          }
        }),
    }
  }

  #expireMemberHeartbeat(groupId: string, memberId: string, nowMs: number, out: Out): void {
    const group = this.#groups.get(groupId)
    if (!group || group.is(ClassicGroupState.DEAD)) return
    if (group.isPendingMember(memberId)) {
      this.#log.info(
        { groupId, memberId, reason: 'session timeout' },
        `Pending member ${memberId} in group ${groupId} has been removed after session timeout expiration.`,
      )
      group.remove(memberId)
      if (group.is(ClassicGroupState.PREPARING_REBALANCE) && group.hasAllMembersJoined()) {
        this.#completeJoin(group, nowMs, out)
      }
      return
    }
    const member = group.member(memberId)
    if (!member || member.hasSatisfiedHeartbeat()) return
    this.#log.info(
      { groupId, memberId, reason: 'session timeout' },
      `Member ${memberId} in group ${groupId} has failed, removing it from the group.`,
    )
    if (member.awaitingJoin !== null) {
      out.join(member.awaitingJoin, joinError(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
      member.awaitingJoin = null
    }
    group.remove(memberId)
    if (group.is(ClassicGroupState.STABLE) || group.is(ClassicGroupState.COMPLETING_REBALANCE)) {
      this.#maybePrepareRebalanceOrCompleteJoin(
        group,
        nowMs,
        out,
        `removing member ${memberId} on heartbeat expiration.`,
      )
    } else if (group.is(ClassicGroupState.PREPARING_REBALANCE) && group.hasAllMembersJoined()) {
      this.#completeJoin(group, nowMs, out)
    }
  }

  #schedule(out: Out, timer: ClassicTimer): void {
    out.timers.schedule(timer)
  }

  #cancel(out: Out, key: string): void {
    out.timers.cancel(key)
  }

  /**
   * Timers to start after the shard loaded: a session timeout for every member (Kafka's onLoaded),
   * and a rebalance for groups above `group.max.size`.
   */
  onLoaded(nowMs: number): ClassicResult<void> {
    const out = new Out()
    for (const g of this.#groups.values()) {
      g.live = true
      logLoadedGroup(this.#log, 'classic', g.groupId, [...g.members.keys()])
      for (const m of g.members.values()) {
        this.#schedule(out, this.#heartbeatTimer(g.groupId, m.memberId, m.sessionTimeoutMs))
      }
      if (g.members.size > this.#config.maxSize)
        this.#prepareRebalance(
          g,
          nowMs,
          out,
          `Freshly-loaded group ${g.groupId} (size ${g.members.size}) is over capacity ${this.#config.maxSize}. Rebalancing in order to give a chance for consumers to commit offsets`,
        )
    }
    return out.result(undefined)
  }

  // ---- online migration (KIP-848) ----

  /** The broker settings of classic groups (`group.max.size` bounds a downgrade). */
  get config(): ClassicGroupConfig {
    return this.#config
  }

  /**
   * A non-empty classic group becomes a consumer group (Kafka's convertToConsumerGroup): requests
   * parked in its join or sync phase are answered REBALANCE_IN_PROGRESS so the members rejoin the
   * consumer group, and its timers are cancelled. The group itself goes when its tombstone replays.
   */
  upgradeToConsumerGroup(groupId: string): { completions: ClassicCompletion[]; cancel: string[] } {
    const group = this.#groups.get(groupId)
    const completions: ClassicCompletion[] = []
    const cancel = [joinKey(groupId), syncKey(groupId)]
    if (!group) return { completions, cancel }
    for (const m of group.members.values()) {
      cancel.push(heartbeatKey(groupId, m.memberId))
      if (m.awaitingJoin !== null) {
        completions.push({
          api: 'JoinGroup',
          token: m.awaitingJoin,
          response: joinError(m.memberId, ErrorCode.REBALANCE_IN_PROGRESS),
        })
      }
      if (m.awaitingSync !== null) {
        completions.push({
          api: 'SyncGroup',
          token: m.awaitingSync,
          response: createSyncGroupResponse({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS }),
        })
      }
    }
    for (const id of group.pendingJoinMembers) cancel.push(heartbeatKey(groupId, id))
    return { completions, cancel }
  }

  /**
   * The classic group a consumer group becomes (Kafka's ClassicGroup.fromConsumerGroup and
   * convertToClassicGroup): Stable at the consumer group's epoch, the protocol the members vote
   * for, each member's assignment from `assignmentFor` (given its metadata for that protocol). The
   * GroupMetadata record creates it when it replays; the timers are its members' session timers and
   * an immediate rebalance, so that every member rejoins.
   */
  downgradedGroup(init: {
    readonly groupId: string
    readonly generationId: number
    readonly nowMs: number
    /** Whether the group rebalances at once (default true). */
    readonly rebalance?: boolean
    readonly members: readonly {
      readonly memberId: string
      readonly groupInstanceId: string | null
      readonly clientId: string
      readonly clientHost: string
      readonly rebalanceTimeoutMs: number
      readonly sessionTimeoutMs: number
      readonly supportedProtocols: readonly ClassicProtocol[]
    }[]
    readonly assignmentFor: (memberId: string, metadata: Uint8Array) => Uint8Array
  }): { record: GroupMetadataRecord; timers: ClassicTimerIntents } {
    const { groupId } = init
    const group = new ClassicGroup({
      groupId,
      state: ClassicGroupState.STABLE,
      generationId: init.generationId,
      protocolType: CONSUMER_PROTOCOL_TYPE,
      currentStateTimestamp: init.nowMs,
    })
    for (const m of init.members) {
      group.add(new ClassicGroupMember({ ...m, protocolType: CONSUMER_PROTOCOL_TYPE }))
    }
    group.protocolName = group.selectProtocol()
    const assignment = new Map<string, Uint8Array>()
    for (const m of group.members.values()) {
      assignment.set(m.memberId, init.assignmentFor(m.memberId, m.metadata(group.protocolName)))
    }
    const out = new Out()
    for (const m of group.members.values()) {
      this.#schedule(out, this.#heartbeatTimer(groupId, m.memberId, m.sessionTimeoutMs))
    }
    if (init.rebalance !== false)
      this.#schedule(out, {
        key: joinKey(groupId),
        delayMs: 0,
        op: (nowMs) =>
          this.#timerOp((o) => {
            const g = this.#groups.get(groupId)
            if (g === undefined || !g.is(ClassicGroupState.STABLE)) return
            g.live = true
            this.#prepareRebalance(g, nowMs, o, 'the group was converted from a consumer group')
          }),
      })
    return { record: groupMetadataRecord(group, assignment), timers: out.timers.intents() }
  }

  // ---- DescribeGroups, ListGroups, deletion, expiry ----

  /** DescribeGroups (v0–6) rows for groups this manager holds; see `describeMissing` for the others. */
  describeGroup(groupId: string): DescribeGroupsResponseDescribedGroup | undefined {
    const g = this.#groups.get(groupId)
    if (!g) return undefined
    const stable = g.is(ClassicGroupState.STABLE)
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      groupId,
      groupState: g.state,
      protocolType: g.protocolType ?? '',
      protocolData: stable ? (g.protocolName ?? '') : '',
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: stable ? m.metadata(g.protocolName) : EMPTY_BYTES,
        memberAssignment: m.assignment,
      })),
      authorizedOperations: -2147483648,
    }
  }

  /**
   * The row for an id with no classic group: state Dead, and from v6 GROUP_ID_NOT_FOUND with
   * Kafka's message.
   */
  static describeMissing(
    groupId: string,
    apiVersion: number,
    otherType?: string,
  ): DescribeGroupsResponseDescribedGroup {
    const row: DescribeGroupsResponseDescribedGroup = {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      groupId,
      groupState: ClassicGroupState.DEAD,
      protocolType: '',
      protocolData: '',
      members: [],
      authorizedOperations: -2147483648,
    }
    if (apiVersion < 6) return row
    const errorMessage =
      otherType === undefined ? `Group ${groupId} not found.` : `Group ${groupId} is not a classic group.`
    return { ...row, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage }
  }

  /** ListGroups rows; `statesFilter` in Kafka's case-insensitive form, `typesFilter` likewise. */
  listGroups(
    statesFilter: readonly string[] = [],
    typesFilter: readonly string[] = [],
  ): ListedClassicGroup[] {
    const states = new Set(statesFilter.map((s) => s.trim().toLowerCase()))
    const types = typesFilter.map((t) => t.trim().toLowerCase())
    if (types.length > 0 && !types.includes('classic')) return []
    const out: ListedClassicGroup[] = []
    for (const g of this.#groups.values()) {
      if (states.size > 0 && !states.has(g.state.toLowerCase())) continue
      out.push({
        groupId: g.groupId,
        protocolType: g.protocolType ?? '',
        groupState: g.state,
        groupType: 'classic',
      })
    }
    return out
  }

  isEmpty(groupId: string): boolean {
    return this.#groups.get(groupId)?.isEmpty() ?? false
  }

  /**
   * Whether the cleanup cycle may delete the group: it is Empty (its offsets are handled by the
   * offsets manager, which asks this before writing the tombstone).
   */
  shouldExpire(groupId: string): boolean {
    return this.isEmpty(groupId)
  }

  /**
   * DeleteGroups / expiry: the tombstone and the timers to cancel. GROUP_ID_NOT_FOUND when there is
   * no classic group, NON_EMPTY_GROUP when it has members.
   */
  deleteGroupRecords(groupId: string): { records: CoordinatorRecord[]; timers: ClassicTimerIntents } {
    const g = this.#groups.get(groupId)
    if (!g) throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`)
    if (g.is(ClassicGroupState.DEAD)) {
      throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is in dead state.`)
    }
    if (!g.isEmpty()) throw new ApiError(ErrorCode.NON_EMPTY_GROUP, null)
    const out = new Out()
    this.#cancel(out, joinKey(groupId))
    this.#cancel(out, syncKey(groupId))
    return { records: [groupMetadataTombstone(groupId)], timers: out.timers.intents() }
  }

  // ---- offsets ----

  /**
   * OffsetCommit / TxnOffsetCommit checks for a classic group (Kafka's
   * ClassicGroup.validateOffsetCommit). Throws ApiError with the error of the whole request.
   * A missing group is the caller's business (commits may create a "simple" group).
   */
  validateOffsetCommit(
    groupId: string,
    request: {
      readonly memberId: string
      readonly groupInstanceId: string | null
      readonly generationIdOrMemberEpoch: number
      readonly isTransactional: boolean
    },
  ): void {
    const g = this.#groups.get(groupId)
    if (!g) return
    const { memberId, groupInstanceId, isTransactional } = request
    const generationId = request.generationIdOrMemberEpoch
    if (g.is(ClassicGroupState.DEAD)) throw new ApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE, null)
    if (generationId < 0 && g.isEmpty()) return
    if (generationId >= 0 || memberId !== '' || groupInstanceId !== null) {
      const error = validateMember(g, memberId, groupInstanceId)
      if (error !== ErrorCode.NONE) throw new ApiError(error, null)
      if (generationId !== g.generationId) throw new ApiError(ErrorCode.ILLEGAL_GENERATION, null)
    } else if (!isTransactional && !g.isEmpty()) {
      // Commits without member and generation (v0) are only accepted while the group is empty.
      throw new ApiError(ErrorCode.UNKNOWN_MEMBER_ID, null)
    }
    if (!isTransactional && g.is(ClassicGroupState.COMPLETING_REBALANCE)) {
      throw new ApiError(ErrorCode.REBALANCE_IN_PROGRESS, null)
    }
  }

  /** OffsetFetch: only a Dead group refuses (GROUP_ID_NOT_FOUND). */
  validateOffsetFetch(groupId: string): void {
    const g = this.#groups.get(groupId)
    if (g?.is(ClassicGroupState.DEAD)) {
      throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is in dead state.`)
    }
  }

  /** OffsetDelete: refused (NON_EMPTY_GROUP) while the group has members. */
  validateOffsetDelete(groupId: string): void {
    const g = this.#groups.get(groupId)
    if (!g) return
    if (g.is(ClassicGroupState.DEAD)) {
      throw new ApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is in dead state.`)
    }
    // A `consumer` group's offsets of the topics it subscribes to are refused per partition instead
    // (GROUP_SUBSCRIBED_TO_TOPIC); those of any other topic may go while it has members.
    if (!g.isEmpty() && !g.usesConsumerProtocol()) throw new ApiError(ErrorCode.NON_EMPTY_GROUP, null)
  }

  /** Whether the group's protocol type is `consumer` (offsets of such groups follow its lifecycle). */
  usesConsumerProtocol(groupId: string): boolean {
    return this.#groups.get(groupId)?.usesConsumerProtocol() ?? false
  }

  /** Kafka's ClassicGroup.isSubscribedToTopic; false for a group this manager does not hold. */
  isSubscribedToTopic(groupId: string, topic: string): boolean {
    return this.#groups.get(groupId)?.isSubscribedToTopic(topic) ?? false
  }

  /**
   * What the group's offsets expire from (Kafka's ClassicGroup.offsetExpirationCondition): an
   * empty group's from the time it became empty (its commit time when that is not known), a
   * group without a protocol type's and a Stable `consumer` group's that knows its subscriptions
   * from their commit time, and any other group's not at all (null) while it is so.
   */
  offsetExpiry(groupId: string): OffsetExpiry | null {
    const g = this.#groups.get(groupId)
    if (g === undefined || g.protocolType === null) return FROM_COMMIT
    if (g.isEmpty())
      return g.currentStateTimestamp === null ? FROM_COMMIT : { fromMs: BigInt(g.currentStateTimestamp) }
    if (g.usesConsumerProtocol() && g.subscribedTopics !== null && g.is(ClassicGroupState.STABLE))
      return FROM_COMMIT
    return null
  }

  // ---- replay ----

  /**
   * Applies a GroupMetadata record. A tombstone removes the group. A value for a group that is not
   * live (loading) rebuilds it as Kafka does: Empty without members, Stable with them. A value for a
   * live group is a checkpoint this manager wrote from that group: it changes nothing, except that
   * the leader's SyncGroup assignment takes effect here (CompletingRebalance → Stable).
   */
  replay(record: CoordinatorRecord): void {
    if (record.type !== 'GroupMetadata') return
    const groupId = record.key.group
    const v = record.value
    if (v === null) {
      this.#groups.delete(groupId)
      return
    }
    const live = this.#groups.get(groupId)
    if (live?.live) {
      live.stored = true
      live.unstoredReplacement = null
      this.#applyCheckpoint(live, record)
      return
    }
    const group = groupFromRecord(groupId, v)
    group.subscribedTopics = group.computeSubscribedTopics()
    this.#groups.set(groupId, group)
  }

  #applyCheckpoint(group: ClassicGroup, record: GroupMetadataRecord): void {
    const v = record.value!
    if (
      !group.is(ClassicGroupState.COMPLETING_REBALANCE) ||
      v.generation !== group.generationId ||
      v.members.length !== group.members.size ||
      !v.members.every((m) => group.members.has(m.memberId))
    ) {
      return
    }
    for (const m of v.members) group.member(m.memberId)!.assignment = m.assignment
    // Kafka stamps the time the write completed; the record's timestamp (when the generation
    // started) is used instead, so that a group loaded from this record is the same group.
    group.transitionTo(ClassicGroupState.STABLE, Number(v.currentStateTimestamp))
  }
}

function groupFromRecord(groupId: string, v: NonNullable<GroupMetadataRecord['value']>): ClassicGroup {
  const group = new ClassicGroup({
    groupId,
    state: v.members.length === 0 ? ClassicGroupState.EMPTY : ClassicGroupState.STABLE,
    generationId: v.generation,
    protocolType: v.protocolType === '' ? null : v.protocolType,
    protocolName: v.protocol,
    leaderId: v.leader,
    currentStateTimestamp: v.currentStateTimestamp === -1n ? null : Number(v.currentStateTimestamp),
  })
  for (const m of v.members) {
    group.add(
      new ClassicGroupMember({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        // Records from before rebalance timeouts existed carry -1: use the session timeout.
        rebalanceTimeoutMs: m.rebalanceTimeout === -1 ? m.sessionTimeout : m.rebalanceTimeout,
        sessionTimeoutMs: m.sessionTimeout,
        protocolType: v.protocolType,
        supportedProtocols: [{ name: v.protocol ?? '', metadata: m.subscription }],
        assignment: m.assignment,
      }),
    )
  }
  // add() makes the first member leader when none is set; the record's leader wins.
  group.leaderId = v.leader
  return group
}

/** Kafka's ClassicGroup.validateMember: NONE, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID. */
function validateMember(group: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
  if (groupInstanceId !== null) {
    const existing = group.staticMemberId(groupInstanceId)
    if (existing === undefined) return ErrorCode.UNKNOWN_MEMBER_ID
    if (existing !== memberId) return ErrorCode.FENCED_INSTANCE_ID
  }
  return group.members.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID
}

/** A protocol field the request left out (null) is consistent with anything. */
function isProtocolInconsistent(fromRequest: string | null, fromGroup: string | null): boolean {
  return fromRequest !== null && fromGroup !== null && fromRequest !== fromGroup
}
