/**
 * A streams group (Kafka's StreamsGroup). Persisted fields change only through `replay*` methods,
 * driven by records; soft state (configured topology, refresh deadline, shutdown request, endpoint
 * epoch, task offsets) is kept in memory only and is lost when the group object is rebuilt.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import { createStreamsGroupDescribeResponseDescribedGroup } from '../../../protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { ApiError } from '../api-error.js'
import { assignmentConfigsMatch, type StreamsGroupConfig } from './config.js'
import { type ConfiguredTopology, isReady } from './configured-topology.js'
import {
  asDescribedMember,
  isReconciledTo,
  type MemberProfiles,
  StoredMember,
  type StoredMemberSlot,
  type StreamsGroupMember,
} from './member.js'
import { kept } from './strings.js'
import { EMPTY_TASKS, type TasksTuple, type TasksTupleWithEpochs, tasksTupleEquals } from './tasks.js'
import type { StreamsTopology } from './topology.js'
import { MemberTable } from '../modern/members.js'
import { unknownMember } from '../modern/membership.js'
import type { MemberSession as GenericMemberSession, MemberSlotOf } from '../modern/session.js'
import {
  initialRebalanceKey,
  MEMBER_TIMER_RETRY_BACKOFF_MS,
  type StreamsTimer,
  type StreamsTimerResult,
} from './timers.js'
import type {
  DescribedTopicInfo,
  DescribedTopology,
  StreamsGroupDescribeResponseDescribedGroup,
} from './wire.js'

export const StreamsGroupState = {
  EMPTY: 'Empty',
  NOT_READY: 'NotReady',
  ASSIGNING: 'Assigning',
  RECONCILING: 'Reconciling',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const
export type StreamsGroupStateValue = (typeof StreamsGroupState)[keyof typeof StreamsGroupState]

/** Lower-case names used by ListGroups state filters. */
export const STATE_FILTER_NAMES: Readonly<Record<StreamsGroupStateValue, string>> = {
  Empty: 'empty',
  NotReady: 'not_ready',
  Assigning: 'assigning',
  Reconciling: 'reconciling',
  Stable: 'stable',
  Dead: 'dead',
}

export interface MemberTaskOffsets {
  /** "subtopologyId\u0000partition" → offset, in the order the member last reported them */
  readonly taskOffsets: ReadonlyMap<string, bigint>
  readonly taskEndOffsets: ReadonlyMap<string, bigint>
}

export interface MetadataRefreshDeadline {
  readonly deadlineMs: number
  readonly epoch: number
}

type Owners = string | Set<string> | undefined

/**
 * The fields of a group that nearly every group leaves at their defaults: its topology description
 * epochs (only with a topology description plugin), targets of members not in the table, the task
 * offsets its members report, a member's shutdown request. Made when one is first set (each field of
 * the group itself costs 8 bytes a group, set or not).
 */
class RarelySet {
  storedDescriptionTopologyEpoch = -1
  failedDescriptionTopologyEpoch = -1
  /**
   * The targets of members not in the table (a target record replayed before the member's metadata,
   * or after its tombstone); made on first use.
   */
  otherTargets: Map<string, TasksTuple> | null = null
  /** Made when a member first reports task offsets (a Map costs a hash table even when empty). */
  taskOffsets: Map<string, MemberTaskOffsets> | null = null
  shutdownRequestMemberId: string | null = null
}

/**
 * subtopology id → partition → the processes owning the task: one process id as a plain string (a
 * task nearly always has one owner of a kind; a Set would cost about 150 bytes per task), a Set in
 * insertion order when several own it. A subtopology's owners are an array indexed by partition
 * (tasks are numbered from 0, so it is dense; a Map would cost a hash table of about 40 bytes a
 * task), without trailing empty slots, so an array is empty exactly when no task of it is owned.
 * The map itself is made on first use (most groups have no standby or warm-up tasks).
 */
class ProcessIndex {
  #bySubtopology: Map<string, Owners[]> | null = null

  get(subtopologyId: string, partition: number): Owners {
    return this.#bySubtopology?.get(subtopologyId)?.[partition]
  }

  add(subtopologyId: string, partition: number, processId: string): void {
    this.#bySubtopology ??= new Map()
    let owners = this.#bySubtopology.get(subtopologyId)
    if (!owners) this.#bySubtopology.set(subtopologyId, (owners = []))
    const v = owners[partition]
    if (v === undefined) owners[partition] = processId
    else if (typeof v !== 'string') v.add(processId)
    else if (v !== processId) owners[partition] = new Set([v, processId])
  }

  remove(subtopologyId: string, partition: number, processId: string): void {
    const owners = this.#bySubtopology?.get(subtopologyId)
    if (owners === undefined) return
    const v = owners[partition]
    if (v === processId) owners[partition] = undefined
    else if (v !== undefined && typeof v !== 'string') {
      v.delete(processId)
      // Back to one owner: the string form (the set's order kept: it was the earlier one).
      if (v.size === 1) owners[partition] = v.values().next().value as string
      else if (v.size === 0) owners[partition] = undefined
    }
    while (owners.length > 0 && owners[owners.length - 1] === undefined) owners.pop()
    if (owners.length === 0) this.#bySubtopology!.delete(subtopologyId)
  }
}

/** A streams member's slot: the stored member itself, with its session and its target assignment. */
type StreamsMemberSlot = StoredMemberSlot

class StreamsMemberTable extends MemberTable<StreamsGroupMember, StreamsTimerResult, StreamsMemberSlot> {
  protected override newSlot(member: StreamsGroupMember): StreamsMemberSlot {
    if (!(member instanceof StoredMember))
      throw new Error('A slot takes a stored member (MemberProfiles.store).')
    return member.toSlot()
  }
}

/**
 * The targets of a group as a read-only map: those kept in the member slots (in table order), then
 * the others. Made when asked for (a Map of its own would cost a hash table entry and a key a member).
 */
class TargetsView implements ReadonlyMap<string, TasksTuple> {
  readonly #slots: ReadonlyMap<string, StreamsMemberSlot>
  readonly #inSlots: number
  readonly #others: ReadonlyMap<string, TasksTuple> | null

  constructor(
    slots: ReadonlyMap<string, StreamsMemberSlot>,
    inSlots: number,
    others: ReadonlyMap<string, TasksTuple> | null,
  ) {
    this.#slots = slots
    this.#inSlots = inSlots
    this.#others = others
  }
  get size(): number {
    return this.#inSlots + (this.#others?.size ?? 0)
  }
  get(memberId: string): TasksTuple | undefined {
    return this.#slots.get(memberId)?.target ?? this.#others?.get(memberId)
  }
  has(memberId: string): boolean {
    return this.get(memberId) !== undefined
  }
  forEach(
    fn: (target: TasksTuple, memberId: string, map: ReadonlyMap<string, TasksTuple>) => void,
    thisArg?: unknown,
  ): void {
    for (const [id, t] of this) fn.call(thisArg, t, id, this)
  }
  *entries(): MapIterator<[string, TasksTuple]> {
    for (const [id, s] of this.#slots) if (s.target !== undefined) yield [id, s.target]
    if (this.#others !== null) yield* this.#others
  }
  *keys(): MapIterator<string> {
    for (const [id] of this) yield id
  }
  *values(): MapIterator<TasksTuple> {
    for (const [, t] of this) yield t
  }
  [Symbol.iterator](): MapIterator<[string, TasksTuple]> {
    return this.entries()
  }
}

/** The task → owning processes indexes of a group (active, standby, warm-up). */
class Ownership {
  readonly active = new ProcessIndex()
  readonly standby = new ProcessIndex()
  readonly warmup = new ProcessIndex()

  /** Adds (or removes) the tasks a member owns: assigned and pending revocation. */
  apply(m: StreamsGroupMember, add: boolean): void {
    for (const t of [m.assignedTasks, m.tasksPendingRevocation]) this.#apply(t, m.processId, add)
  }

  #apply(t: TasksTupleWithEpochs, processId: string, add: boolean): void {
    const touch = (index: ProcessIndex, id: string, p: number): void => {
      if (add) index.add(id, p, processId)
      else index.remove(id, p, processId)
    }
    t.active.forEach((id, p) => {
      touch(this.active, id, p)
    })
    t.standby.forEach((id, p) => {
      touch(this.standby, id, p)
    })
    t.warmup.forEach((id, p) => {
      touch(this.warmup, id, p)
    })
  }
}

/** The owners of one task in a ProcessIndex, as a set. */
function processesOf(v: string | Set<string> | undefined): ReadonlySet<string> {
  return v === undefined ? EMPTY_STRINGS : typeof v === 'string' ? new Set([v]) : v
}

/** What an OffsetCommit or TxnOffsetCommit asks of a streams group (see validateOffsetCommit). */
export interface StreamsOffsetCommitInput {
  readonly memberId: string
  readonly memberEpoch: number
  readonly apiVersion: number
  readonly isTransactional: boolean
  readonly topics: readonly { readonly name: string; readonly partitions: readonly number[] }[]
}

/** A streams member's session timeout (see the shared {@link GenericMemberSession}). */
export type MemberSession = GenericMemberSession<StreamsTimerResult>

/** Builds a member's session-timeout operation from the group id and the stored member id. */
export type SessionTimeoutOp = (groupId: string, memberId: string) => (nowMs: number) => StreamsTimerResult

/**
 * A current member as the heartbeat needs it: the member (as its records built it) and its session
 * bookkeeping, in one object found with one lookup.
 */
export type MemberSlot = MemberSlotOf<StreamsGroupMember>

export class StreamsGroup {
  readonly groupId: string
  // persisted
  #groupEpoch = 1
  #metadataHash = 0n
  #validatedTopologyEpoch = -1
  #lastAssignmentConfigs: ReadonlyMap<string, string> = new Map()
  #assignmentEpoch = 1
  /**
   * A number while it is a safe integer (every timestamp in milliseconds is): a bigint is an object
   * of its own (24 bytes a group), a number one only when it is not a small integer (16).
   */
  #assignmentTimestamp: number | bigint = 0
  #topology: StreamsTopology | null = null
  /**
   * The members by id, each with its session bookkeeping (soft state) and its target assignment,
   * and the static ones.
   */
  readonly #table: StreamsMemberTable
  /** The number of slots with a target. */
  #slotTargets = 0
  /** The fields nearly every group leaves at their defaults (see RarelySet); made on first use. */
  #rare: RarelySet | null = null
  /**
   * Derived from the members: task → owning process ids (active, standby, warm-up). Only a member
   * that reconciles asks who owns a task, so the index is built on the first question and dropped
   * once every member is reconciled to the assignment epoch (a stable group keeps none; see
   * #unreconciled). Kept up to date while it exists.
   */
  #owners: Ownership | null = null
  /** The number of members not reconciled to the assignment epoch (see isReconciledTo). */
  #unreconciled = 0
  // soft state
  configuredTopology: ConfiguredTopology | null = null
  // The metadata refresh deadline, kept as two numbers (read by every heartbeat).
  #refreshDeadlineMs = 0
  #refreshEpoch = 0
  endpointEpoch = 0
  /** The assignment configs last found equal to `lastAssignmentConfigs` (see assignmentConfigsMatch). */
  #matchedAssignmentConfigs: StreamsGroupConfig | undefined

  /** `sessionTimeoutOp` builds each member's session-timeout operation (see {@link session}). */
  constructor(groupId: string, sessionTimeoutOp: SessionTimeoutOp) {
    this.groupId = groupId
    this.#table = new StreamsMemberTable(groupId, sessionTimeoutOp)
  }

  // The private methods of this class are static: an instance method or accessor that is private
  // gives every instance a field of its own (the class's brand, 8 bytes a group).

  /** The targets of members not in the table (see RarelySet), or null. */
  static #otherTargets(g: StreamsGroup): Map<string, TasksTuple> | null {
    return g.#rare?.otherTargets ?? null
  }
  /** The targets of members not in the table, made when there are none. */
  static #otherTargetsToAdd(g: StreamsGroup): Map<string, TasksTuple> {
    const rare = (g.#rare ??= new RarelySet())
    return (rare.otherTargets ??= new Map())
  }
  /** Forgets the targets of members not in the table once there are none. */
  static #dropOtherTargetsIfEmpty(g: StreamsGroup): void {
    const rare = g.#rare
    if (rare !== null && rare.otherTargets?.size === 0) rare.otherTargets = null
  }

  /** The task offsets each member last reported (soft state), by member id. */
  get taskOffsets(): ReadonlyMap<string, MemberTaskOffsets> {
    return this.#rare?.taskOffsets ?? NO_TASK_OFFSETS
  }

  setTaskOffsets(memberId: string, offsets: MemberTaskOffsets): void {
    const rare = (this.#rare ??= new RarelySet())
    rare.taskOffsets ??= new Map()
    rare.taskOffsets.set(memberId, offsets)
  }

  /** The member whose heartbeat asked the application to shut down (soft state), if any. */
  get shutdownRequestMemberId(): string | null {
    return this.#rare?.shutdownRequestMemberId ?? null
  }
  set shutdownRequestMemberId(memberId: string | null) {
    if (memberId !== null || this.#rare !== null)
      (this.#rare ??= new RarelySet()).shutdownRequestMemberId = memberId
  }

  /** The member with this id and its session bookkeeping, if it is in the group. */
  slot(memberId: string): MemberSlot | undefined {
    return this.#table.slot(memberId)
  }

  /**
   * The member's session timeout (see MemberTable.session: for a stored member, a SlotSession over
   * its slot, made for the call; the shard's own timers use sessionTimer).
   */
  session(memberId: string): MemberSession {
    return this.#table.session(memberId)
  }

  /**
   * The member's session timer, due in `delayMs`: its key and operation made from the group id and
   * the stored member id, its slot the watch; for a member not stored yet, a detached session's.
   */
  sessionTimer(memberId: string, delayMs: number): StreamsTimer {
    const table = this.#table
    const slot = table.slot(memberId)
    if (slot === undefined) {
      const s = table.session(memberId)
      return { key: s.key, delayMs, op: s.op, watch: s, retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS }
    }
    const id = slot.memberId
    return {
      key: table.sessionKey(id),
      delayMs,
      op: table.sessionOp(id),
      watch: slot,
      retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
    }
  }

  /** The number of members. */
  get size(): number {
    return this.#table.size
  }

  /** Whether `config`'s assignment configs equal the ones recorded with the group epoch (§3.7). */
  assignmentConfigsMatch(config: StreamsGroupConfig): boolean {
    // The same settings object as last time: nothing to compare (the recorded ones change only by
    // replay, which forgets the match).
    if (config === this.#matchedAssignmentConfigs) return true
    if (!assignmentConfigsMatch(config, this.#lastAssignmentConfigs)) return false
    this.#matchedAssignmentConfigs = config
    return true
  }

  /**
   * `initialRebalanceKey(groupId)`, made when asked for (only while the group's initial-rebalance
   * timer may be armed; a string kept by every group would cost more than making it then).
   */
  get initialRebalanceKey(): string {
    return initialRebalanceKey(this.groupId)
  }

  get groupEpoch(): number {
    return this.#groupEpoch
  }
  get metadataHash(): bigint {
    return this.#metadataHash
  }
  get validatedTopologyEpoch(): number {
    return this.#validatedTopologyEpoch
  }
  get lastAssignmentConfigs(): ReadonlyMap<string, string> {
    return this.#lastAssignmentConfigs
  }
  get storedDescriptionTopologyEpoch(): number {
    return this.#rare?.storedDescriptionTopologyEpoch ?? -1
  }
  get failedDescriptionTopologyEpoch(): number {
    return this.#rare?.failedDescriptionTopologyEpoch ?? -1
  }
  get assignmentEpoch(): number {
    return this.#assignmentEpoch
  }
  get assignmentTimestamp(): bigint {
    const t = this.#assignmentTimestamp
    return typeof t === 'bigint' ? t : BigInt(t)
  }
  get topology(): StreamsTopology | null {
    return this.#topology
  }
  get members(): ReadonlyMap<string, StreamsGroupMember> {
    return this.#table.members
  }
  /** The target of every member that has one: the table's members first, in table order. */
  get targetAssignments(): ReadonlyMap<string, TasksTuple> {
    return new TargetsView(this.#table.slots, this.#slotTargets, StreamsGroup.#otherTargets(this))
  }
  member(memberId: string): StreamsGroupMember | undefined {
    return this.#table.member(memberId)
  }
  staticMemberId(instanceId: string): string | undefined {
    return this.#table.staticMemberId(instanceId)
  }
  targetAssignment(memberId: string): TasksTuple {
    return StreamsGroup.#target(this, memberId) ?? EMPTY_TASKS
  }
  hasTarget(memberId: string): boolean {
    return StreamsGroup.#target(this, memberId) !== undefined
  }
  static #target(g: StreamsGroup, memberId: string): TasksTuple | undefined {
    return g.#table.slot(memberId)?.target ?? StreamsGroup.#otherTargets(g)?.get(memberId)
  }

  /** §5.1, evaluated in order. */
  state(): StreamsGroupStateValue {
    if (this.#table.size === 0) return StreamsGroupState.EMPTY
    if (this.#topology === null || this.#topology.epoch !== this.#validatedTopologyEpoch)
      return StreamsGroupState.NOT_READY
    if (this.#groupEpoch > this.#assignmentEpoch) return StreamsGroupState.ASSIGNING
    for (const m of this.#table.members.values()) {
      if (!isReconciledTo(m, this.#assignmentEpoch)) return StreamsGroupState.RECONCILING
    }
    return StreamsGroupState.STABLE
  }

  isConfiguredTopologyReady(): boolean {
    return this.configuredTopology !== null && isReady(this.configuredTopology)
  }

  get metadataRefreshDeadline(): MetadataRefreshDeadline {
    return { deadlineMs: this.#refreshDeadlineMs, epoch: this.#refreshEpoch }
  }
  set metadataRefreshDeadline(deadline: MetadataRefreshDeadline) {
    this.#refreshDeadlineMs = deadline.deadlineMs
    this.#refreshEpoch = deadline.epoch
  }

  hasMetadataExpired(nowMs: number): boolean {
    return nowMs >= this.#refreshDeadlineMs || this.#groupEpoch < this.#refreshEpoch
  }

  /** The process currently owning `task` as active, if any. */
  activeTaskProcess(subtopologyId: string, partition: number): string | undefined {
    const s = StreamsGroup.#ownership(this).active.get(subtopologyId, partition)
    return s === undefined || typeof s === 'string' ? s : [...s][0]
  }
  standbyTaskProcesses(subtopologyId: string, partition: number): ReadonlySet<string> {
    return processesOf(StreamsGroup.#ownership(this).standby.get(subtopologyId, partition))
  }
  warmupTaskProcesses(subtopologyId: string, partition: number): ReadonlySet<string> {
    return processesOf(StreamsGroup.#ownership(this).warmup.get(subtopologyId, partition))
  }

  /** The task → process index, built from the members (in table order) when there is none. */
  static #ownership(g: StreamsGroup): Ownership {
    if (g.#owners === null) {
      g.#owners = new Ownership()
      for (const m of g.#table.members.values()) g.#owners.apply(m, true)
    }
    return g.#owners
  }

  /** Whether the task → process index is built (for tests: a stable group keeps none). */
  get hasOwnershipIndex(): boolean {
    return this.#owners !== null
  }

  // ---- describe (Kafka's StreamsGroup.asDescribedGroup) ----

  /**
   * The group's StreamsGroupDescribe row. There is no topology-description plugin in the shard: a
   * requested description is NOT_STORED (1); the service fills it in when it has one.
   */
  asDescribedGroup(
    includeTopologyDescription: boolean,
    assignorName: string,
  ): StreamsGroupDescribeResponseDescribedGroup {
    return {
      ...createStreamsGroupDescribeResponseDescribedGroup({ groupId: this.groupId }),
      groupState: this.state(),
      groupEpoch: this.#groupEpoch,
      assignmentEpoch: this.#assignmentEpoch,
      topology: StreamsGroup.#describedTopology(this),
      members: [...this.#table.members.values()].map((m) =>
        asDescribedMember(m, this.targetAssignment(m.memberId), this.taskOffsets.get(m.memberId)),
      ),
      topologyDescriptionStatus: includeTopologyDescription ? 1 : 0,
      assignorName,
    }
  }

  /** The configured topology when it is ready, else the topology as the records hold it. */
  static #describedTopology(g: StreamsGroup): DescribedTopology {
    const topology = g.#topology
    if (!topology) throw new Error('There should always be a topology for a streams group.')
    const configured = g.configuredTopology
    if (configured !== null && isReady(configured) && configured.subtopologies !== null) {
      return {
        epoch: topology.epoch,
        subtopologies: [...configured.subtopologies].map(([id, s]) => ({
          subtopologyId: id,
          sourceTopics: [...s.sourceTopics],
          repartitionSinkTopics: [...s.repartitionSinkTopics],
          stateChangelogTopics: describedTopicInfos(s.stateChangelogTopics.values()),
          repartitionSourceTopics: describedTopicInfos(s.repartitionSourceTopics.values()),
        })),
      }
    }
    return {
      epoch: topology.epoch,
      subtopologies: [...topology.subtopologies]
        .sort((a, b) => byString(a.subtopologyId, b.subtopologyId))
        .map((s) => ({
          subtopologyId: s.subtopologyId,
          sourceTopics: [...s.sourceTopics],
          repartitionSinkTopics: [...s.repartitionSinkTopics],
          stateChangelogTopics: s.stateChangelogTopics.map((t) => ({
            ...t,
            topicConfigs: [...t.topicConfigs],
          })),
          repartitionSourceTopics: s.repartitionSourceTopics.map((t) => ({
            ...t,
            topicConfigs: [...t.topicConfigs],
          })),
        })),
    }
  }

  // ---- offsets (Kafka's StreamsGroup.validateOffsetCommit / validateOffsetFetch) ----

  /**
   * Validates an OffsetCommit / TxnOffsetCommit against this group. Throws ApiError with the error
   * of the whole request.
   */
  validateOffsetCommit(request: StreamsOffsetCommitInput): void {
    if (request.isTransactional && request.memberEpoch < 0 && request.memberId === '') return
    if (request.memberEpoch < 0 && this.#table.size === 0) return
    const member = this.member(request.memberId)
    if (!member) throw unknownMember(request.memberId, this.groupId)
    if (!request.isTransactional && request.apiVersion < 9) {
      throw new ApiError(
        ErrorCode.UNSUPPORTED_VERSION,
        'OffsetCommit version 9 or above must be used by members using the streams group protocol',
      )
    }
    if (request.memberEpoch === member.memberEpoch) return
    const stale = (msg: string) => new ApiError(ErrorCode.STALE_MEMBER_EPOCH, msg)
    if (request.memberEpoch > member.memberEpoch) {
      throw stale(
        `Received member epoch ${request.memberEpoch} is newer than current member epoch ${member.memberEpoch}.`,
      )
    }
    const topology = this.#topology
    if (!topology) throw stale('Topology is not available for offset commit validation.')
    for (const t of request.topics) {
      const subtopologies = topology.subtopologies.filter(
        (s) => s.sourceTopics.includes(t.name) || s.repartitionSourceTopics.some((r) => r.name === t.name),
      )
      if (subtopologies.length === 0) throw stale(`Topic ${t.name} is not in the topology.`)
      for (const p of t.partitions) {
        let epoch: number | undefined
        let taskName = `${subtopologies[0]!.subtopologyId}-${p}`
        for (const s of subtopologies) {
          const e =
            member.assignedTasks.active.epoch(s.subtopologyId, p) ??
            member.tasksPendingRevocation.active.epoch(s.subtopologyId, p)
          if (e !== undefined) {
            epoch = e
            taskName = `${s.subtopologyId}-${p}`
            break
          }
        }
        if (epoch === undefined)
          throw stale(`Task ${taskName} is not assigned or pending revocation for member.`)
        if (request.memberEpoch < epoch) {
          throw stale(
            `Received member epoch ${request.memberEpoch} is older than assignment epoch ${epoch} for task ${taskName}.`,
          )
        }
      }
    }
  }

  /** Validates an OffsetFetch against this group. Throws ApiError with the error of the group. */
  validateOffsetFetch(memberId: string | null, memberEpoch: number): void {
    if (memberId === null && memberEpoch < 0) return
    const member = memberId === null ? undefined : this.member(memberId)
    if (!member) throw unknownMember(memberId ?? '', this.groupId)
    if (member.memberEpoch !== memberEpoch) {
      throw new ApiError(
        ErrorCode.STALE_MEMBER_EPOCH,
        `The received member epoch ${memberEpoch} does not match the expected member epoch ${member.memberEpoch}.`,
      )
    }
  }

  /** OffsetDelete: whether the group is "subscribed" to a topic (non-empty and a source topic of its topology). */
  isSubscribedToTopic(topic: string): boolean {
    if (this.#table.size === 0 || !this.#topology) return false
    return this.#topology.subtopologies.some(
      (s) => s.sourceTopics.includes(topic) || s.repartitionSourceTopics.some((r) => r.name === topic),
    )
  }

  // ---- replay ----

  replayMetadata(v: {
    epoch: number
    metadataHash: bigint
    validatedTopologyEpoch: number
    lastAssignmentConfigs: ReadonlyMap<string, string>
    storedDescriptionTopologyEpoch: number
    failedDescriptionTopologyEpoch: number
  }): void {
    this.#groupEpoch = v.epoch
    this.#metadataHash = v.metadataHash
    this.#validatedTopologyEpoch = v.validatedTopologyEpoch
    this.#lastAssignmentConfigs = v.lastAssignmentConfigs
    this.#matchedAssignmentConfigs = undefined
    if (
      v.storedDescriptionTopologyEpoch !== -1 ||
      v.failedDescriptionTopologyEpoch !== -1 ||
      this.#rare !== null
    ) {
      const rare = (this.#rare ??= new RarelySet())
      rare.storedDescriptionTopologyEpoch = v.storedDescriptionTopologyEpoch
      rare.failedDescriptionTopologyEpoch = v.failedDescriptionTopologyEpoch
    }
  }

  /** Whether a metadata tombstone may remove the group (§6.1). */
  canBeRemoved(): boolean {
    return this.#table.size === 0 && this.#assignmentEpoch === -1
  }

  replayTargetAssignmentMetadata(epoch: number, timestamp: bigint): void {
    const changed = epoch !== this.#assignmentEpoch
    this.#assignmentEpoch = epoch
    this.#assignmentTimestamp = timestamp >= MIN_SAFE && timestamp <= MAX_SAFE ? Number(timestamp) : timestamp
    if (changed) StreamsGroup.#recountUnreconciled(this)
  }

  static #recountUnreconciled(g: StreamsGroup): void {
    let n = 0
    for (const m of g.#table.members.values()) if (!isReconciledTo(m, g.#assignmentEpoch)) n++
    g.#unreconciled = n
    if (n === 0) g.#owners = null
  }

  replayTargetAssignmentMetadataTombstone(): void {
    if (this.#slotTargets > 0 || StreamsGroup.#otherTargets(this) !== null) {
      throw new Error(
        `Received target assignment metadata tombstone for group ${this.groupId} with remaining targets.`,
      )
    }
    this.#assignmentEpoch = -1
    this.#assignmentTimestamp = 0
    StreamsGroup.#recountUnreconciled(this)
  }

  replayTargetAssignmentMember(memberId: string, tasks: TasksTuple | null): void {
    const slot = this.#table.slot(memberId)
    if (slot === undefined) {
      if (tasks !== null) StreamsGroup.#otherTargetsToAdd(this).set(kept(memberId), tasks)
      else if (StreamsGroup.#otherTargets(this)?.delete(memberId)) StreamsGroup.#dropOtherTargetsIfEmpty(this)
      return
    }
    if (slot.target === undefined && tasks !== null) this.#slotTargets++
    else if (slot.target !== undefined && tasks === null) this.#slotTargets--
    // A member that holds its target (every stable member) shares its tuple with it.
    const current = slot.member.assignedTasks
    slot.target = tasks !== null && tasksTupleEquals(current, tasks) ? current : (tasks ?? undefined)
  }

  /**
   * The string to keep for a subtopology id read from a record: the topology's own when it has that
   * subtopology (so the group's task lists share one string per subtopology), else a copy of its own.
   */
  internSubtopologyId(id: string): string {
    return this.#topology?.subtopology(id)?.subtopologyId ?? kept(id)
  }

  replayTopology(topology: StreamsTopology | null): void {
    this.#topology = topology
    // A new topology invalidates the configuration computed for the previous one.
    this.configuredTopology = null
  }

  /** Adds or replaces a member (from a member-metadata or current-assignment record). */
  updateMember(value: StreamsGroupMember, profiles: MemberProfiles): void {
    const member = profiles.store(value)
    const old = this.#table.put(member)
    const slot = this.#table.slot(member.memberId)!
    const others = old === undefined ? StreamsGroup.#otherTargets(this) : null
    if (others !== null) {
      // A target recorded before the member: now kept in its slot.
      const target = others.get(member.memberId)
      if (target !== undefined) {
        others.delete(member.memberId)
        StreamsGroup.#dropOtherTargetsIfEmpty(this)
        slot.target = target
        this.#slotTargets++
      }
    }
    const epoch = this.#assignmentEpoch
    if (old !== undefined && !isReconciledTo(old, epoch)) this.#unreconciled--
    if (!isReconciledTo(member, epoch)) this.#unreconciled++
    if (this.#unreconciled === 0) this.#owners = null
    else if (this.#owners !== null) {
      if (old) this.#owners.apply(old, false)
      this.#owners.apply(member, true)
    }
    // The member now holds its target (it reconciled): the target shares its tuple.
    const target = slot.target
    const current = member.assignedTasks
    if (target !== undefined && target !== current && tasksTupleEquals(target, current)) slot.target = current
    StreamsGroup.#afterChange(this)
  }

  removeMember(memberId: string): void {
    const target = this.#table.slot(memberId)?.target
    const old = this.#table.remove(memberId)
    if (!old) return
    if (target !== undefined) {
      // The target outlives the member until its own tombstone.
      this.#slotTargets--
      StreamsGroup.#otherTargetsToAdd(this).set(old.memberId, target)
    }
    if (!isReconciledTo(old, this.#assignmentEpoch)) this.#unreconciled--
    if (this.#unreconciled === 0) this.#owners = null
    else this.#owners?.apply(old, false)
    this.#rare?.taskOffsets?.delete(memberId)
    StreamsGroup.#afterChange(this)
  }

  static #afterChange(g: StreamsGroup): void {
    if (g.#table.size === 0) g.shutdownRequestMemberId = null
  }
}

const EMPTY_STRINGS: ReadonlySet<string> = new Set()
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER)
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)
const NO_TASK_OFFSETS: ReadonlyMap<string, MemberTaskOffsets> = new Map()

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Topic infos of a configured subtopology as the describe response lists them: sorted by name. */
function describedTopicInfos(
  topics: Iterable<{
    readonly name: string
    readonly numberOfPartitions: number
    readonly replicationFactor: number | null
    readonly topicConfigs: ReadonlyMap<string, string>
  }>,
): DescribedTopicInfo[] {
  return [...topics]
    .sort((a, b) => byString(a.name, b.name))
    .map((t) => ({
      name: t.name,
      partitions: t.numberOfPartitions,
      replicationFactor: t.replicationFactor ?? 0,
      topicConfigs: [...t.topicConfigs].map(([key, value]) => ({ key, value })),
    }))
}
