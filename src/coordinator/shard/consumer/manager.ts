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
import {
  type ConsumerGroupDescribeResponseDescribedGroup,
  createConsumerGroupDescribeResponseDescribedGroup,
} from '../../../protocol/generated/messages/ConsumerGroupDescribeResponse.js'
import type { ConsumerGroupHeartbeatRequest } from '../../../protocol/generated/messages/ConsumerGroupHeartbeatRequest.js'
import {
  type ConsumerGroupHeartbeatResponse,
  createConsumerGroupHeartbeatResponse,
} from '../../../protocol/generated/messages/ConsumerGroupHeartbeatResponse.js'
import { ApiError, invalidRequest } from '../api-error.js'
import {
  type ListedModernGroup,
  type MemberOffsetCommit,
  listModernGroups,
  membersAfterHeartbeat,
  runHeartbeat,
} from '../modern/groups.js'
import { canComputeAssignment } from '../modern/epochs.js'
import * as membership from '../modern/membership.js'
import { extendSession, sessionStillAlive } from '../modern/session.js'
import { rebalanceTimeoutKey, sessionTimeoutKey } from '../modern/timers.js'
import {
  type ArmedTimers,
  type CoordinatorResult,
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
  extends CoordinatorResult<ConsumerCoordinatorRecord, ConsumerGroupHeartbeatResponse> {
  readonly records: ConsumerCoordinatorRecord[]
}

export interface ConsumerGroupManagerOptions {
  readonly topics: ConsumerTopicsImage
  /** Whether the id belongs to a group of another type (classic, streams, simple). */
  readonly isOtherGroupType?: (groupId: string) => boolean
  readonly timers?: ArmedTimers
  /** A group's effective settings, read when a timer fires and when the shard loads. */
  readonly config?: (groupId: string) => ConsumerGroupConfig
}

export type ListedConsumerGroup = ListedModernGroup<'consumer'>

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

export class ConsumerGroupManager {
  readonly #groups = new Map<string, ConsumerGroup>()
  readonly #armed: ArmedTimers
  #topics: ConsumerTopicsImage
  readonly #isOtherGroupType: (groupId: string) => boolean
  readonly #configFor: ((groupId: string) => ConsumerGroupConfig) | undefined
  /** Assignor registries by their configured name list (one for the broker's list, as a rule). */
  readonly #assignors = new Map<string, ConsumerAssignors>()
  /** Bumped on every catalog change; stored as the Version of resolved patterns. */
  #topicsVersion = 0n

  constructor(options: ConsumerGroupManagerOptions) {
    this.#topics = options.topics
    this.#isOtherGroupType = options.isOtherGroupType ?? (() => false)
    this.#armed = options.timers ?? NO_ARMED_TIMERS
    this.#configFor = options.config
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
    return runHeartbeat(
      request,
      () => validateConsumerHeartbeat(request, ctx.requestApiVersion, ctx.config.assignors),
      () => this.#leave(request),
      () => this.#heartbeat(ctx, request),
      (e) => ({
        records: [],
        response: createConsumerGroupHeartbeatResponse({
          errorCode: e.errorCode,
          errorMessage: e.errorMessage,
        }),
        timers: NO_TIMERS,
      }),
    )
  }

  #heartbeat(ctx: ConsumerHeartbeatContext, req: ConsumerGroupHeartbeatRequest): ConsumerHeartbeatResult {
    const { nowMs, config } = ctx
    const groupId = req.groupId
    const records: ConsumerCoordinatorRecord[] = []
    const timers = new TimerCollector<ConsumerCoordinatorRecord>()
    const joining = req.memberEpoch === 0

    // 1. The group. A join on a missing group works on a fresh object that is not registered: the
    // real one is created when the records are replayed.
    let group = this.#groups.get(groupId)
    if (!group) {
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
      { ...req, memberId },
      slot?.member,
      newConsumerMember,
      (m) => ownsSubset(req.topicPartitions, m),
      (owner) =>
        owner.classicMemberMetadata !== null ||
        owner.memberEpoch === membership.LEAVE_GROUP_STATIC_MEMBER_EPOCH,
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
    const updated = membership.updatedMember(member, isNewMember, req, ctx, ownFieldsSent, () => ({
      serverAssignorName: req.serverAssignor ?? member.serverAssignorName,
      subscribedTopicNames:
        req.subscribedTopicNames !== null
          ? sortedNames(req.subscribedTopicNames)
          : member.subscribedTopicNames,
      subscribedTopicRegex: req.subscribedTopicRegex ?? member.subscribedTopicRegex,
      classicMemberMetadata: null,
    }))
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
    let bumpGroupEpoch = namesChanged || regexes.bump || assignorChanged

    // 5. Metadata hash and group epoch.
    let groupEpoch = group.groupEpoch
    if (bumpGroupEpoch || group.hasMetadataExpired(nowMs)) {
      const hash = computeMetadataHash(
        this.#subscribedTopicNames(group, { old: slot?.member ?? replaced, updated }, regexes.resolved),
        this.#topics,
      )
      if (hash !== group.metadataHash) bumpGroupEpoch = true
      if (bumpGroupEpoch) {
        groupEpoch += 1
        records.push(groupEpochRecord(groupId, groupEpoch, hash))
      }
      group.setMetadataRefreshDeadline(nowMs + METADATA_REFRESH_INTERVAL_MS, groupEpoch)
      if (group.hasSubscriptionMetadataRecord) records.push(subscriptionMetadataTombstone(groupId))
    }

    // 6. Target assignment.
    let targetEpoch = group.assignmentEpoch
    let target: PartitionSet | null = null
    if (
      group.assignmentEpoch < groupEpoch &&
      canComputeAssignment(group.assignmentTimestamp, config.assignmentIntervalMs, nowMs)
    ) {
      const { members, targets } = membersAfterHeartbeat(
        group.members,
        group.targetAssignments,
        replaced,
        updated,
      )
      const assignorName = group.preferredServerAssignor(slot?.member ?? replaced ?? null, updated)
      const result = this.#computeTargetAssignment(
        groupEpoch,
        members,
        targets,
        regexes.resolved,
        this.#assignorsOf(config).select(assignorName),
      )
      for (const id of result.changed)
        records.push(targetAssignmentRecord(groupId, id, result.targets.get(id)!))
      records.push(targetAssignmentMetadataRecord(groupId, groupEpoch, BigInt(nowMs)))
      targetEpoch = groupEpoch
      target = result.targets.get(memberId) ?? EMPTY_PARTITIONS
    }

    // 7. Reconciliation.
    let reconciled = updated
    if (hasSubscriptionChanged || !isReconciledTo(updated, targetEpoch)) {
      reconciled = buildConsumerAssignment({
        member: updated,
        targetEpoch,
        target: target ?? this.#currentTarget(group, memberId, replaced),
        subscribedTopicIds: this.#subscribedTopicIds(updated, regexes.resolved),
        currentPartitionEpoch: (topicId, p) => group.currentPartitionEpoch(topicId, p),
        hasSubscriptionChanged,
        owned: req.topicPartitions,
      })
      if (reconciled !== updated && assignmentDiffers(reconciled, updated)) {
        records.push(currentAssignmentRecord(groupId, reconciled))
        const key = rebalanceTimeoutKey(groupId, memberId)
        if (reconciled.state === ConsumerMemberState.UNREVOKED_PARTITIONS) {
          const epoch = reconciled.memberEpoch
          timers.schedule({
            key,
            delayMs: reconciled.rebalanceTimeoutMs,
            op: () => this.#onRebalanceTimeout(groupId, memberId, epoch),
          })
        } else timers.cancel(key)
      } else reconciled = updated
    }

    // 8. Session timeout.
    extendSession(timers, slot ?? group.session(memberId), nowMs, config.sessionTimeoutMs, records.length > 0)

    // 9. Response: the assignment goes with a join, a full request, or a change.
    const response = createConsumerGroupHeartbeatResponse({
      memberId,
      memberEpoch: reconciled.memberEpoch,
      heartbeatIntervalMs: config.heartbeatIntervalMs,
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
    ctx: ConsumerHeartbeatContext,
    records: ConsumerCoordinatorRecord[],
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

  #leave(req: ConsumerGroupHeartbeatRequest): ConsumerHeartbeatResult {
    const groupId = req.groupId
    const group = this.consumerGroupOrThrow(groupId)
    const response = createConsumerGroupHeartbeatResponse({
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
    })
    const timers = new TimerCollector<ConsumerCoordinatorRecord>()
    const member = membership.leavingMember(group, req)
    if (req.memberEpoch === membership.LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
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
    const records = this.#fenceRecords(group, member, timers)
    return { records, response, timers: timers.intents() }
  }

  /**
   * Records removing a member: its tombstones, the tombstone of a pattern only it used, the group
   * epoch bump (with the hash of what the others subscribe to), and for the last member the target
   * epoch, so the empty group's next assignment is not held back by the interval.
   */
  #fenceRecords(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    timers: TimerCollector<ConsumerCoordinatorRecord>,
  ): ConsumerCoordinatorRecord[] {
    const groupId = group.groupId
    const records = memberTombstones(groupId, member.memberId)
    let resolved = group.resolvedRegularExpressions
    if (hasRegex(member) && group.numSubscribedMembers(member.subscribedTopicRegex!) === 1) {
      if (resolved.has(member.subscribedTopicRegex!)) {
        records.push(regularExpressionTombstone(groupId, member.subscribedTopicRegex!))
        const copy = new Map(resolved)
        copy.delete(member.subscribedTopicRegex!)
        resolved = copy
      }
    }
    const remaining = new Set<string>()
    for (const m of group.members.values()) {
      if (m.memberId === member.memberId) continue
      for (const n of m.subscribedTopicNames) remaining.add(n)
      if (hasRegex(m)) for (const n of resolved.get(m.subscribedTopicRegex!)?.topics ?? []) remaining.add(n)
    }
    const epoch = group.groupEpoch + 1
    records.push(groupEpochRecord(groupId, epoch, computeMetadataHash(remaining, this.#topics)))
    if (group.size === 1 && group.member(member.memberId) !== undefined) {
      records.push(targetAssignmentMetadataRecord(groupId, epoch, 0n))
    }
    timers.cancel(sessionTimeoutKey(groupId, member.memberId))
    timers.cancel(rebalanceTimeoutKey(groupId, member.memberId))
    return records
  }

  readonly #sessionTimeoutOp = (groupId: string, memberId: string) => (nowMs: number) =>
    this.#onSessionTimeout(groupId, memberId, nowMs)

  #onSessionTimeout(groupId: string, memberId: string, nowMs: number): ConsumerTimerResult {
    const group = this.#groups.get(groupId)
    const timers = new TimerCollector<ConsumerCoordinatorRecord>()
    const member = group?.member(memberId)
    if (!group || !member) return { records: [], response: undefined, timers: NO_TIMERS }
    if (sessionStillAlive(timers, group.session(memberId), nowMs)) {
      return { records: [], response: undefined, timers: timers.intents() }
    }
    return {
      records: this.#fenceRecords(group, member, timers),
      response: undefined,
      timers: timers.intents(),
    }
  }

  #onRebalanceTimeout(groupId: string, memberId: string, memberEpoch: number): ConsumerTimerResult {
    const group = this.#groups.get(groupId)
    const member = group?.member(memberId)
    if (!group || !member || member.memberEpoch !== memberEpoch)
      return { records: [], response: undefined, timers: NO_TIMERS }
    const timers = new TimerCollector<ConsumerCoordinatorRecord>()
    return {
      records: this.#fenceRecords(group, member, timers),
      response: undefined,
      timers: timers.intents(),
    }
  }

  /** After loading: the session timer of every member, the rebalance timer of members revoking. */
  onLoaded(): TimerCollector<ConsumerCoordinatorRecord> {
    const timers = new TimerCollector<ConsumerCoordinatorRecord>()
    for (const g of this.#groups.values()) {
      const config = this.#config(g.groupId)
      for (const m of g.members.values()) {
        const session = g.session(m.memberId)
        timers.schedule({
          key: session.key,
          delayMs: config.sessionTimeoutMs,
          op: session.op,
          watch: session,
        })
        if (m.state === ConsumerMemberState.UNREVOKED_PARTITIONS && m.classicMemberMetadata === null) {
          const { groupId } = g
          const { memberId, memberEpoch } = m
          timers.schedule({
            key: rebalanceTimeoutKey(groupId, memberId),
            delayMs: m.rebalanceTimeoutMs,
            op: () => this.#onRebalanceTimeout(groupId, memberId, memberEpoch),
          })
        }
      }
    }
    return timers
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
    const getOrCreate = (): ConsumerGroup => {
      let g = this.#groups.get(groupId)
      if (!g) {
        g = new ConsumerGroup(kept(groupId), this.#sessionTimeoutOp)
        this.#groups.set(g.groupId, g)
      }
      return g
    }
    const existing = this.#groups.get(groupId)
    switch (record.type) {
      case 'ConsumerGroupMetadata': {
        if (record.value) getOrCreate().replayEpoch(record.value.epoch, record.value.metadataHash)
        else if (existing) {
          if (!existing.canBeRemoved()) {
            throw new Error(
              `Received a tombstone record to delete group ${groupId} but the group is not empty.`,
            )
          }
          this.#groups.delete(groupId)
        }
        return
      }
      case 'ConsumerGroupPartitionMetadata': {
        if (record.value) getOrCreate().hasSubscriptionMetadataRecord = true
        else if (existing) existing.hasSubscriptionMetadataRecord = false
        return
      }
      case 'ConsumerGroupMemberMetadata': {
        const memberId = record.key.memberId
        if (record.value) {
          const v = record.value
          const g = getOrCreate()
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
                      name: p.name,
                      metadata: p.metadata.slice(),
                    })),
                  },
          })
        } else membership.replayMemberTombstone(groupId, memberId, existing)
        return
      }
      case 'ConsumerGroupTargetAssignmentMetadata': {
        if (record.value)
          getOrCreate().replayTargetAssignmentMetadata(
            record.value.assignmentEpoch,
            record.value.assignmentTimestamp,
          )
        else if (existing) {
          if (existing.targetAssignments.size > 0) {
            throw new Error(
              `Received a target assignment metadata tombstone for group ${groupId} with remaining targets.`,
            )
          }
          existing.replayTargetAssignmentMetadata(-1, 0n)
        }
        return
      }
      case 'ConsumerGroupTargetAssignmentMember': {
        if (record.value)
          getOrCreate().replayTargetAssignmentMember(
            record.key.memberId,
            partitionSetFromList(record.value.topicPartitions),
          )
        else existing?.replayTargetAssignmentMember(record.key.memberId, null)
        return
      }
      case 'ConsumerGroupCurrentMemberAssignment': {
        const memberId = record.key.memberId
        const v = record.value
        if (v) {
          const g = getOrCreate()
          const base = g.member(memberId) ?? newConsumerMember(kept(memberId))
          g.updateMember({
            ...base,
            memberEpoch: v.memberEpoch,
            previousMemberEpoch: v.previousMemberEpoch,
            state: consumerMemberStateFromRecord(v.state),
            assignedPartitions: partitionEpochsFromRecord(v.assignedPartitions, v.memberEpoch),
            partitionsPendingRevocation: partitionEpochsFromRecord(
              v.partitionsPendingRevocation,
              v.memberEpoch,
            ),
          })
        } else if (existing) {
          const m = existing.member(memberId)
          if (!m) return
          existing.updateMember({
            ...m,
            memberEpoch: membership.LEAVE_GROUP_MEMBER_EPOCH,
            previousMemberEpoch: membership.LEAVE_GROUP_MEMBER_EPOCH,
            assignedPartitions: new Map(),
            partitionsPendingRevocation: new Map(),
          })
        }
        return
      }
      case 'ConsumerGroupRegularExpression': {
        const regex = record.key.regularExpression
        if (record.value) {
          const v = record.value
          getOrCreate().replayRegularExpression(regex, {
            topics: sortedNames(v.topics.map((t) => kept(t))),
            version: v.version,
            timestamp: v.timestamp,
          })
        } else existing?.replayRegularExpression(regex, null)
        return
      }
    }
  }
}
