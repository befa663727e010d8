/** A streams group member (Kafka's StreamsGroupMember): an immutable value; updates make copies. */
import {
  EMPTY_TASKS_WITH_EPOCHS,
  taskSetToList,
  type TasksTuple,
  type TasksTupleWithEpochs,
} from './tasks.js'
import { kept } from './strings.js'
import type { DescribedAssignment, DescribedMember, Endpoint, TaskOffset } from './wire.js'

/** Member reconciliation states as stored in the current-assignment record (int8). */
export const MemberState = {
  /** Any value this version does not know (a record written by a newer coordinator). */
  UNKNOWN: 0,
  STABLE: 1,
  UNREVOKED_TASKS: 2,
  UNRELEASED_TASKS: 3,
} as const
export type MemberStateValue = (typeof MemberState)[keyof typeof MemberState]

export function memberStateFromRecord(v: number): MemberStateValue {
  return v === 1 || v === 2 || v === 3 ? v : MemberState.UNKNOWN
}

export interface StreamsGroupMember {
  readonly memberId: string
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
  readonly state: MemberStateValue
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly rebalanceTimeoutMs: number
  readonly topologyEpoch: number
  readonly processId: string
  readonly clientId: string
  readonly clientHost: string
  readonly userEndpoint: Endpoint | null
  /** Sorted by key. */
  readonly clientTags: ReadonlyMap<string, string>
  readonly assignedTasks: TasksTupleWithEpochs
  readonly tasksPendingRevocation: TasksTupleWithEpochs
}

/** The member a join starts from when the member id is new (§3.2). */
export function newMember(memberId: string): StreamsGroupMember {
  return {
    memberId,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: MemberState.STABLE,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    topologyEpoch: -1,
    processId: '',
    clientId: '',
    clientHost: '',
    userEndpoint: null,
    clientTags: NO_TAGS,
    assignedTasks: EMPTY_TASKS_WITH_EPOCHS,
    tasksPendingRevocation: EMPTY_TASKS_WITH_EPOCHS,
  }
}

/** The fields a current-assignment record sets. */
export interface MemberAssignment {
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
  readonly state: MemberStateValue
  readonly assignedTasks: TasksTupleWithEpochs
  readonly tasksPendingRevocation: TasksTupleWithEpochs
}

/**
 * The member with the fields of a current assignment replaced. Use this, never an object spread: a
 * member kept by a group (a StoredMember) has most of its fields behind getters, which a spread
 * does not copy.
 */
export function withAssignment(m: StreamsGroupMember, a: MemberAssignment): StreamsGroupMember {
  if (m instanceof StoredMember) return m.withAssignment(a)
  return {
    ...memberValue(m),
    memberEpoch: a.memberEpoch,
    previousMemberEpoch: a.previousMemberEpoch,
    state: a.state,
    assignedTasks: a.assignedTasks,
    tasksPendingRevocation: a.tasksPendingRevocation,
  }
}

/** A plain copy of every field of a member (of a StoredMember too). */
export function memberValue(m: StreamsGroupMember): StreamsGroupMember {
  return {
    memberId: m.memberId,
    memberEpoch: m.memberEpoch,
    previousMemberEpoch: m.previousMemberEpoch,
    state: m.state,
    instanceId: m.instanceId,
    rackId: m.rackId,
    rebalanceTimeoutMs: m.rebalanceTimeoutMs,
    topologyEpoch: m.topologyEpoch,
    processId: m.processId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    userEndpoint: m.userEndpoint,
    clientTags: m.clientTags,
    assignedTasks: m.assignedTasks,
    tasksPendingRevocation: m.tasksPendingRevocation,
  }
}

/**
 * The fields of a member's metadata record that the steady heartbeat does not read and that are
 * nearly always the same for many members: instance id, rack, rebalance timeout, topology epoch,
 * user endpoint, client tags. Members with equal profiles share one (see MemberProfiles). The
 * client id and host stay with the member (the steady heartbeat compares them with the request's,
 * one string comparison each), and so does the process id, as its place in the client id when the
 * client id contains it, as Kafka Streams' `<application.id>-<process id>-StreamThread-<n>-consumer`
 * does.
 */
class MemberProfile {
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly rebalanceTimeoutMs: number
  readonly topologyEpoch: number
  readonly userEndpoint: Endpoint | null
  readonly clientTags: ReadonlyMap<string, string>

  constructor(m: StreamsGroupMember) {
    this.instanceId = kept(m.instanceId)
    this.rackId = kept(m.rackId)
    this.rebalanceTimeoutMs = m.rebalanceTimeoutMs
    this.topologyEpoch = m.topologyEpoch
    this.userEndpoint =
      m.userEndpoint === null ? null : { host: kept(m.userEndpoint.host), port: m.userEndpoint.port }
    this.clientTags = m.clientTags
  }

  /** Whether this is the profile of `m`. */
  matches(m: StreamsGroupMember): boolean {
    return (
      this.instanceId === m.instanceId &&
      this.rackId === m.rackId &&
      this.rebalanceTimeoutMs === m.rebalanceTimeoutMs &&
      this.topologyEpoch === m.topologyEpoch &&
      endpointEquals(this.userEndpoint, m.userEndpoint) &&
      tagsEqual(this.clientTags, m.clientTags)
    )
  }
}

/** A 32-bit FNV-1a step over a string (null distinct from every string), then its length. */
function hashString(h: number, s: string | null): number {
  if (s === null) return Math.imul(h ^ 0x5bd1e995, 0x01000193)
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return Math.imul(h ^ s.length, 0x01000193)
}
const hashNumber = (h: number, n: number): number => Math.imul(h ^ (n | 0), 0x01000193)

/** The hash MemberProfiles files a profile under (equal profiles, equal hashes). */
function profileHash(m: StreamsGroupMember): number {
  let h = 0x811c9dc5
  h = hashString(h, m.instanceId)
  h = hashString(h, m.rackId)
  h = hashNumber(h, m.rebalanceTimeoutMs)
  h = hashNumber(h, m.topologyEpoch)
  const e = m.userEndpoint
  h = e === null ? hashString(h, null) : hashNumber(hashString(h, e.host), e.port)
  for (const [k, v] of m.clientTags) h = hashString(hashString(h, k), v)
  return h | 0
}

/** A process id's place in the client id: offset × PLACE + length (both below PLACE). */
const PLACE = 0x8000

/**
 * A member as a group keeps it: the fields a steady heartbeat reads (id, epochs, state, task
 * tuples, client id and host) as fields of its own, its process id as its place in the client id
 * when the client id contains it (a number, no string of its own), and the other metadata fields
 * behind getters over a profile shared with the members that have the same (MemberProfile).
 * Immutable, like any member; `withAssignment` makes the copy a current-assignment record asks
 * for, sharing everything else.
 */
export class StoredMember implements StreamsGroupMember {
  readonly memberId: string
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
  readonly state: MemberStateValue
  readonly assignedTasks: TasksTupleWithEpochs
  readonly tasksPendingRevocation: TasksTupleWithEpochs
  readonly clientId: string
  readonly clientHost: string
  /** The process id, or its place in the client id (see PLACE). */
  readonly #processId: string | number
  readonly #profile: MemberProfile

  constructor(
    memberId: string,
    a: MemberAssignment,
    clientId: string,
    clientHost: string,
    processId: string | number,
    profile: MemberProfile,
  ) {
    this.memberId = memberId
    this.memberEpoch = a.memberEpoch
    this.previousMemberEpoch = a.previousMemberEpoch
    this.state = a.state
    this.assignedTasks = a.assignedTasks
    this.tasksPendingRevocation = a.tasksPendingRevocation
    this.clientId = clientId
    this.clientHost = clientHost
    this.#processId = processId
    this.#profile = profile
  }

  withAssignment(a: MemberAssignment): StoredMember {
    return new StoredMember(this.memberId, a, this.clientId, this.clientHost, this.#processId, this.#profile)
  }

  get instanceId(): string | null {
    return this.#profile.instanceId
  }
  get rackId(): string | null {
    return this.#profile.rackId
  }
  get rebalanceTimeoutMs(): number {
    return this.#profile.rebalanceTimeoutMs
  }
  get topologyEpoch(): number {
    return this.#profile.topologyEpoch
  }
  get processId(): string {
    const p = this.#processId
    if (typeof p === 'string') return p
    const at = Math.floor(p / PLACE)
    // A string of its own, not a slice keeping the client id's characters in a second place.
    return kept(this.clientId.slice(at, at + (p % PLACE)))
  }
  get userEndpoint(): Endpoint | null {
    return this.#profile.userEndpoint
  }
  get clientTags(): ReadonlyMap<string, string> {
    return this.#profile.clientTags
  }
}

/** Profiles kept for sharing before the pool starts over (see MemberProfiles). */
const MAX_PROFILES = 1024

/**
 * The shared member profiles of a shard's streams groups, filed by a hash of their fields (no key
 * string is kept). Bounded: when it holds MAX_PROFILES, it starts over (the members keep their
 * profiles; only sharing with later members is lost), so profiles that nobody uses any more do not
 * accumulate.
 */
export class MemberProfiles {
  /** By profileHash; a list when several profiles have one hash. */
  readonly #byHash = new Map<number, MemberProfile | MemberProfile[]>()
  #count = 0

  /** The member as a group keeps it (a StoredMember as it is). */
  store(m: StreamsGroupMember): StoredMember {
    if (m instanceof StoredMember) return m
    const pid = m.processId
    const at = pid === '' ? -1 : m.clientId.indexOf(pid)
    const place = at >= 0 && at < PLACE && pid.length < PLACE ? at * PLACE + pid.length : pid
    // The member id, client id and process id are the shard's own strings already (see strings.ts).
    return new StoredMember(m.memberId, m, m.clientId, kept(m.clientHost), place, this.#profile(m))
  }

  #profile(m: StreamsGroupMember): MemberProfile {
    const h = profileHash(m)
    const filed = this.#byHash.get(h)
    if (filed instanceof MemberProfile) {
      if (filed.matches(m)) return filed
    } else if (filed !== undefined) {
      for (const p of filed) if (p.matches(m)) return p
    }
    if (this.#count >= MAX_PROFILES) {
      this.#byHash.clear()
      this.#count = 0
    }
    const profile = new MemberProfile(m)
    const again = this.#byHash.get(h)
    if (again === undefined) this.#byHash.set(h, profile)
    else if (again instanceof MemberProfile) this.#byHash.set(h, [again, profile])
    else again.push(profile)
    this.#count++
    return profile
  }
}

/** The client tags of a member without any: one shared empty map (most members have none). */
export const NO_TAGS: ReadonlyMap<string, string> = new Map()

export function sortedTags(tags: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
  if (tags.size === 0) return NO_TAGS
  return new Map([...tags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)))
}

function endpointEquals(a: Endpoint | null, b: Endpoint | null): boolean {
  if (a === null || b === null) return a === b
  return a.host === b.host && a.port === b.port
}

function tagsEqual(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false
  for (const [k, v] of a) if (b.get(k) !== v) return false
  return true
}

/** Whether the fields persisted by the member-metadata record differ. */
export function memberMetadataDiffers(a: StreamsGroupMember, b: StreamsGroupMember): boolean {
  return (
    a.instanceId !== b.instanceId ||
    a.rackId !== b.rackId ||
    a.clientId !== b.clientId ||
    a.clientHost !== b.clientHost ||
    a.rebalanceTimeoutMs !== b.rebalanceTimeoutMs ||
    a.topologyEpoch !== b.topologyEpoch ||
    a.processId !== b.processId ||
    !endpointEquals(a.userEndpoint, b.userEndpoint) ||
    !tagsEqual(a.clientTags, b.clientTags)
  )
}

/** The subset of metadata whose change bumps the group epoch for a static member (§3.3). */
export function epochRelevantConfigDiffers(a: StreamsGroupMember, b: StreamsGroupMember): boolean {
  return (
    a.topologyEpoch !== b.topologyEpoch ||
    a.rackId !== b.rackId ||
    a.processId !== b.processId ||
    !tagsEqual(a.clientTags, b.clientTags)
  )
}

export function userEndpointEquals(a: Endpoint | null, b: Endpoint | null): boolean {
  return endpointEquals(a, b)
}

export function isReconciledTo(member: StreamsGroupMember, assignmentEpoch: number): boolean {
  return member.state === MemberState.STABLE && member.memberEpoch === assignmentEpoch
}

/**
 * The member's StreamsGroupDescribe row (Kafka's StreamsGroupMember.asStreamsGroupDescribeMember):
 * its target assignment and the task offsets it last reported are kept by the group.
 */
export function asDescribedMember(
  m: StreamsGroupMember,
  targetAssignment: TasksTuple,
  offsets:
    | {
        readonly taskOffsets: ReadonlyMap<string, bigint>
        readonly taskEndOffsets: ReadonlyMap<string, bigint>
      }
    | undefined,
): DescribedMember {
  return {
    memberId: m.memberId,
    memberEpoch: m.memberEpoch,
    instanceId: m.instanceId,
    rackId: m.rackId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    topologyEpoch: m.topologyEpoch,
    processId: m.processId,
    userEndpoint: m.userEndpoint === null ? null : { ...m.userEndpoint },
    clientTags: [...m.clientTags].map(([key, value]) => ({ key, value })),
    taskOffsets: offsetsList(offsets?.taskOffsets),
    taskEndOffsets: offsetsList(offsets?.taskEndOffsets),
    assignment: describedAssignment(m.assignedTasks),
    targetAssignment: describedAssignment(targetAssignment),
    isClassic: false,
  }
}

function describedAssignment(t: TasksTuple): DescribedAssignment {
  return {
    activeTasks: taskSetToList(t.active),
    standbyTasks: taskSetToList(t.standby),
    warmupTasks: taskSetToList(t.warmup),
  }
}

/** "subtopologyId\u0000partition" → offset, as a list sorted by subtopology and partition. */
function offsetsList(m: ReadonlyMap<string, bigint> | undefined): TaskOffset[] {
  if (!m) return []
  return [...m]
    .map(([k, offset]) => {
      const i = k.lastIndexOf('\u0000')
      return { subtopologyId: k.slice(0, i), partition: Number(k.slice(i + 1)), offset }
    })
    .sort(
      (a, b) =>
        (a.subtopologyId < b.subtopologyId ? -1 : a.subtopologyId > b.subtopologyId ? 1 : 0) ||
        a.partition - b.partition,
    )
}
