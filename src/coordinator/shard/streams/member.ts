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

/** Whether the member's client id and host are these (the steady heartbeat's question). */
export function hasClient(
  m: StreamsGroupMember,
  client: { readonly clientId: string; readonly clientHost: string },
): boolean {
  if (m instanceof StoredMember) return m.hasClient(client.clientId, client.clientHost)
  return m.clientId === client.clientId && m.clientHost === client.clientHost
}

/**
 * The fields of a member's metadata record other than its process id and client host: what only a
 * join, a heartbeat that changes them, describe, the records and the assignor read. They are
 * nearly always the same for many members, so members with equal profiles share one (see
 * MemberProfiles). The client id is kept as the parts around the member's process id when it
 * contains it, as Kafka Streams' client ids do (`<application.id>-<process id>-StreamThread-<n>-consumer`):
 * those parts are the same for the members of one thread number of an application. The process id
 * and the client host stay with the member: they are the process's (Kafka Streams runs one member
 * per stream thread of a process, one thread by default), and each process runs on a host of its own.
 */
class MemberProfile {
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly rebalanceTimeoutMs: number
  readonly topologyEpoch: number
  /** The client id before the process id, or the whole client id when `clientIdPost` is null. */
  readonly clientIdPre: string
  /** The client id after the process id; null when the client id does not contain it. */
  readonly clientIdPost: string | null
  readonly userEndpoint: Endpoint | null
  readonly clientTags: ReadonlyMap<string, string>
  /** Whether the members' process ids are packed UUIDs (see packUuid). */
  readonly packedProcessId: boolean

  constructor(m: StreamsGroupMember, pre: string, post: string | null, packed: boolean) {
    this.instanceId = kept(m.instanceId)
    this.rackId = kept(m.rackId)
    this.rebalanceTimeoutMs = m.rebalanceTimeoutMs
    this.topologyEpoch = m.topologyEpoch
    this.clientIdPre = kept(pre)
    this.clientIdPost = kept(post)
    this.userEndpoint =
      m.userEndpoint === null ? null : { host: kept(m.userEndpoint.host), port: m.userEndpoint.port }
    this.clientTags = m.clientTags
    this.packedProcessId = packed
  }

  /** Whether this is the profile of `m` (its client id split into `pre` and `post`). */
  matches(m: StreamsGroupMember, pre: string, post: string | null, packed: boolean): boolean {
    return (
      this.instanceId === m.instanceId &&
      this.rackId === m.rackId &&
      this.rebalanceTimeoutMs === m.rebalanceTimeoutMs &&
      this.topologyEpoch === m.topologyEpoch &&
      this.clientIdPre === pre &&
      this.clientIdPost === post &&
      this.packedProcessId === packed &&
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
function profileHash(m: StreamsGroupMember, pre: string, post: string | null, packed: boolean): number {
  let h = 0x811c9dc5
  h = hashString(h, m.instanceId)
  h = hashString(h, m.rackId)
  h = hashNumber(h, m.rebalanceTimeoutMs)
  h = hashNumber(h, m.topologyEpoch)
  h = hashString(h, pre)
  h = hashString(h, post)
  h = hashNumber(h, packed ? 1 : 0)
  const e = m.userEndpoint
  h = e === null ? hashString(h, null) : hashNumber(hashString(h, e.host), e.port)
  for (const [k, v] of m.clientTags) h = hashString(hashString(h, k), v)
  return h | 0
}

/**
 * A member as a group keeps it: the fields a steady heartbeat reads (id, epochs, state, tasks) and
 * its process's (process id, client host) as fields of its own, the others behind getters over a
 * profile shared with the members that have the same (MemberProfile). The process id is packed
 * into 16 one-byte code units when it is a UUID. Immutable, like any member; `withAssignment` makes
 * the copy a current-assignment record asks for, sharing the process id and profile.
 */
export class StoredMember implements StreamsGroupMember {
  readonly memberId: string
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
  readonly state: MemberStateValue
  readonly assignedTasks: TasksTupleWithEpochs
  readonly tasksPendingRevocation: TasksTupleWithEpochs
  readonly clientHost: string
  /** The process id, packed when the profile says so. */
  readonly #processId: string
  readonly #profile: MemberProfile

  constructor(
    memberId: string,
    a: MemberAssignment,
    processId: string,
    clientHost: string,
    profile: MemberProfile,
  ) {
    this.memberId = memberId
    this.memberEpoch = a.memberEpoch
    this.previousMemberEpoch = a.previousMemberEpoch
    this.state = a.state
    this.assignedTasks = a.assignedTasks
    this.tasksPendingRevocation = a.tasksPendingRevocation
    this.clientHost = clientHost
    this.#processId = processId
    this.#profile = profile
  }

  withAssignment(a: MemberAssignment): StoredMember {
    return new StoredMember(this.memberId, a, this.#processId, this.clientHost, this.#profile)
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
    return this.#profile.packedProcessId ? unpackUuid(this.#processId) : this.#processId
  }
  get clientId(): string {
    const p = this.#profile
    return p.clientIdPost === null ? p.clientIdPre : p.clientIdPre + this.processId + p.clientIdPost
  }
  get userEndpoint(): Endpoint | null {
    return this.#profile.userEndpoint
  }
  get clientTags(): ReadonlyMap<string, string> {
    return this.#profile.clientTags
  }

  /** Whether the client id and host are the member's, without building its client id. */
  hasClient(clientId: string, clientHost: string): boolean {
    if (clientHost !== this.clientHost) return false
    const p = this.#profile
    const post = p.clientIdPost
    if (post === null) return clientId === p.clientIdPre
    const pre = p.clientIdPre
    const at = pre.length
    const pid = this.#processId
    const pidLength = p.packedProcessId ? UUID_LENGTH : pid.length
    if (clientId.length !== at + pidLength + post.length) return false
    if (!clientId.startsWith(pre) || !clientId.endsWith(post)) return false
    return p.packedProcessId ? uuidAt(pid, clientId, at) : clientId.startsWith(pid, at)
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
    const packed = packUuid(pid)
    const i = pid === '' ? -1 : m.clientId.indexOf(pid)
    const pre = i < 0 ? m.clientId : m.clientId.slice(0, i)
    const post = i < 0 ? null : m.clientId.slice(i + pid.length)
    const profile = this.#profile(m, pre, post, packed !== null)
    // The member id and process id are the shard's own strings already (see strings.ts).
    return new StoredMember(m.memberId, m, packed ?? pid, kept(m.clientHost), profile)
  }

  #profile(m: StreamsGroupMember, pre: string, post: string | null, packed: boolean): MemberProfile {
    const h = profileHash(m, pre, post, packed)
    const filed = this.#byHash.get(h)
    if (filed instanceof MemberProfile) {
      if (filed.matches(m, pre, post, packed)) return filed
    } else if (filed !== undefined) {
      for (const p of filed) if (p.matches(m, pre, post, packed)) return p
    }
    if (this.#count >= MAX_PROFILES) {
      this.#byHash.clear()
      this.#count = 0
    }
    const profile = new MemberProfile(m, pre, post, packed)
    const again = this.#byHash.get(h)
    if (again === undefined) this.#byHash.set(h, profile)
    else if (again instanceof MemberProfile) this.#byHash.set(h, [again, profile])
    else again.push(profile)
    this.#count++
    return profile
  }
}

/** The length of a UUID's text (8-4-4-4-12 hexadecimal digits). */
const UUID_LENGTH = 36
const HEX = '0123456789abcdef'

function hexValue(c: number): number {
  return c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1
}

/** Whether byte `k` of a UUID is preceded by a dash in its text. */
const dashBefore = (k: number): boolean => k === 4 || k === 6 || k === 8 || k === 10

/**
 * A UUID in lower-case text (as Kafka Streams writes its process ids) as its 16 bytes, one code
 * unit each (a 32-byte string instead of a 56-byte one); null for any other string, which is kept
 * as it is. unpackUuid gives the same text back.
 */
function packUuid(s: string): string | null {
  if (s.length !== UUID_LENGTH) return null
  const bytes: number[] = []
  let i = 0
  for (let k = 0; k < 16; k++) {
    if (dashBefore(k) && s.charCodeAt(i++) !== 45) return null
    const hi = hexValue(s.charCodeAt(i))
    const lo = hexValue(s.charCodeAt(i + 1))
    if (hi < 0 || lo < 0) return null
    bytes.push((hi << 4) | lo)
    i += 2
  }
  return String.fromCharCode(...bytes)
}

function unpackUuid(packed: string): string {
  const codes: number[] = []
  for (let k = 0; k < 16; k++) {
    if (dashBefore(k)) codes.push(45)
    const b = packed.charCodeAt(k)
    codes.push(HEX.charCodeAt(b >> 4), HEX.charCodeAt(b & 15))
  }
  // One flat string (not a tree of concatenations).
  return String.fromCharCode(...codes)
}

/** Whether `s` holds the packed UUID's text at `at`. */
function uuidAt(packed: string, s: string, at: number): boolean {
  let i = at
  for (let k = 0; k < 16; k++) {
    if (dashBefore(k) && s.charCodeAt(i++) !== 45) return false
    const b = packed.charCodeAt(k)
    if (s.charCodeAt(i) !== HEX.charCodeAt(b >> 4) || s.charCodeAt(i + 1) !== HEX.charCodeAt(b & 15))
      return false
    i += 2
  }
  return true
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
