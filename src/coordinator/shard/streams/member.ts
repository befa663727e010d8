/** A streams group member (Kafka's StreamsGroupMember): an immutable value; updates make copies. */
import {
  EMPTY_TASKS_WITH_EPOCHS,
  taskSetToList,
  type TasksTuple,
  type TasksTupleWithEpochs,
} from './tasks.js'
import type { MemberSlotOf } from '../modern/session.js'
import { FNV1A_32_SEED, hashNumber, hashString } from '../modern/string-hash.js'
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
 * user endpoint, client tags, and the parts of the client id around the process id when the
 * process id is a lower-case UUID inside it, as in Kafka Streams'
 * `<application.id>-<process id>-StreamThread-<n>-consumer` (the same for the members of one thread
 * number of an application). Members with equal profiles share one (see MemberProfiles). The client
 * host stays with the member (it is the process's), and so does the process id (see StoredMember).
 */
export class MemberProfile {
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly rebalanceTimeoutMs: number
  readonly topologyEpoch: number
  readonly userEndpoint: Endpoint | null
  readonly clientTags: ReadonlyMap<string, string>
  /** The client id before the process id; null when the members keep their client ids whole. */
  readonly clientIdPrefix: string | null
  /** The client id after the process id; null when the members keep their client ids whole. */
  readonly clientIdSuffix: string | null

  constructor(m: StreamsGroupMember, prefix: string | null, suffix: string | null) {
    this.instanceId = kept(m.instanceId)
    this.rackId = kept(m.rackId)
    this.rebalanceTimeoutMs = m.rebalanceTimeoutMs
    this.topologyEpoch = m.topologyEpoch
    this.userEndpoint =
      m.userEndpoint === null ? null : { host: kept(m.userEndpoint.host), port: m.userEndpoint.port }
    this.clientTags = m.clientTags
    this.clientIdPrefix = kept(prefix)
    this.clientIdSuffix = kept(suffix)
  }

  /** Whether this is the profile of `m` (its client id split into `prefix` and `suffix`). */
  matches(m: StreamsGroupMember, prefix: string | null, suffix: string | null): boolean {
    return (
      this.instanceId === m.instanceId &&
      this.rackId === m.rackId &&
      this.rebalanceTimeoutMs === m.rebalanceTimeoutMs &&
      this.topologyEpoch === m.topologyEpoch &&
      this.clientIdPrefix === prefix &&
      this.clientIdSuffix === suffix &&
      endpointEquals(this.userEndpoint, m.userEndpoint) &&
      tagsEqual(this.clientTags, m.clientTags)
    )
  }
}

/** The hash MemberProfiles files a profile under (equal profiles, equal hashes). */
function profileHash(m: StreamsGroupMember, prefix: string | null, suffix: string | null): number {
  let h = FNV1A_32_SEED
  h = hashString(h, m.instanceId)
  h = hashString(h, m.rackId)
  h = hashNumber(h, m.rebalanceTimeoutMs)
  h = hashNumber(h, m.topologyEpoch)
  h = hashString(h, prefix)
  h = hashString(h, suffix)
  const e = m.userEndpoint
  h = e === null ? hashString(h, null) : hashNumber(hashString(h, e.host), e.port)
  for (const [k, v] of m.clientTags) h = hashString(hashString(h, k), v)
  return h | 0
}

/** A process id's place in the client id: offset × PLACE + length (both below PLACE). */
const PLACE = 0x8000

/** The length of a UUID's text (8-4-4-4-12 lower-case hexadecimal digits). */
const UUID_LENGTH = 36

/** A code unit's value as a hexadecimal digit (lower case only, as a UUID's text is), else 16. */
const HEX_VALUE = new Uint8Array(128).fill(16)
for (let d = 0; d < 16; d++) HEX_VALUE['0123456789abcdef'.charCodeAt(d)] = d
const HEX_DIGITS = '0123456789abcdef'

/**
 * The 32-bit word of `count` hexadecimal digits of `s` from `at` then `count2` more from `at2`,
 * as a signed integer (one V8 keeps in a field without an object of its own); NaN when one of them
 * is not a lower-case hexadecimal digit (NaN equals no word).
 */
function hexWord(s: string, at: number, count: number, at2: number, count2: number): number {
  let w = 0
  let bad = 0
  for (let i = at; i < at + count; i++) {
    const c = s.charCodeAt(i)
    const d = c < 128 ? HEX_VALUE[c]! : 16
    bad |= d
    w = (w << 4) | (d & 15)
  }
  for (let i = at2; i < at2 + count2; i++) {
    const c = s.charCodeAt(i)
    const d = c < 128 ? HEX_VALUE[c]! : 16
    bad |= d
    w = (w << 4) | (d & 15)
  }
  return (bad & 16) === 0 ? w | 0 : Number.NaN
}

// A UUID's text as four words: digits 0-7 (text 0-7), 8-15 (text 9-12, 14-17), 16-23 (text
// 19-22, 24-27) and 24-31 (text 28-35); dashes at 8, 13, 18 and 23.
const word0 = (s: string, at: number): number => hexWord(s, at, 8, 0, 0)
const word1 = (s: string, at: number): number => hexWord(s, at + 9, 4, at + 14, 4)
const word2 = (s: string, at: number): number => hexWord(s, at + 19, 4, at + 24, 4)
const word3 = (s: string, at: number): number => hexWord(s, at + 28, 8, 0, 0)
const dashesAt = (s: string, at: number): boolean =>
  s.charCodeAt(at + 8) === 45 &&
  s.charCodeAt(at + 13) === 45 &&
  s.charCodeAt(at + 18) === 45 &&
  s.charCodeAt(at + 23) === 45

/** Whether `s` is a UUID's text in lower case. */
function isUuid(s: string): boolean {
  return (
    s.length === UUID_LENGTH &&
    dashesAt(s, 0) &&
    !Number.isNaN(word0(s, 0)) &&
    !Number.isNaN(word1(s, 0)) &&
    !Number.isNaN(word2(s, 0)) &&
    !Number.isNaN(word3(s, 0))
  )
}

/** The text of the UUID whose words these are (a flat string). */
function uuidText(w0: number, w1: number, w2: number, w3: number): string {
  const codes: number[] = []
  const words = [w0, w1, w2, w3]
  for (let k = 0; k < 32; k++) {
    if (k === 8 || k === 12 || k === 16 || k === 20) codes.push(45)
    codes.push(HEX_DIGITS.charCodeAt((words[k >> 3]! >>> (28 - 4 * (k & 7))) & 15))
  }
  return String.fromCharCode(...codes)
}

/**
 * A member's tasks when they are not just its assigned tuple: tasks pending revocation, or (in a
 * slot) a target other than its assigned tuple (see StoredMember's #tasks). A member keeps one
 * only while it reconciles.
 */
class MemberTasks {
  readonly assigned: TasksTupleWithEpochs
  readonly pending: TasksTupleWithEpochs
  readonly target: TasksTuple | undefined

  constructor(assigned: TasksTupleWithEpochs, pending: TasksTupleWithEpochs, target: TasksTuple | undefined) {
    this.assigned = assigned
    this.pending = pending
    this.target = target
  }
}

/**
 * A member's tasks in one field: the assigned tuple itself when nothing is pending revocation and
 * the target is that tuple (every stable member: see StreamsGroup, which shares a held target's
 * tuple), else a MemberTasks.
 */
function packTasks(
  assigned: TasksTupleWithEpochs,
  pending: TasksTupleWithEpochs,
  target: TasksTuple | undefined,
): TasksTupleWithEpochs | MemberTasks {
  return pending === EMPTY_TASKS_WITH_EPOCHS && target === assigned
    ? assigned
    : new MemberTasks(assigned, pending, target)
}

/** The `armed` bit of StoredMember's #flags, above the member's state (two bits). */
const ARMED = 4

/**
 * A member as a group keeps it: the fields a steady heartbeat reads (id, epochs, state, task
 * tuples, client host) as fields of its own, the other metadata fields behind getters over a
 * profile shared with the members that have the same (MemberProfile), and its client id and
 * process id in four small fields:
 * - when the process id is a lower-case UUID inside the client id (Kafka Streams' ids), the UUID's
 *   128 bits as four 32-bit words (integers V8 keeps in the fields themselves); the client id is
 *   the profile's prefix, the UUID's text and the profile's suffix, compared with a request's
 *   without being built (hasClientId);
 * - else the client id as it came, and the process id as its place in the client id (a number)
 *   when the client id contains it, or as it came.
 * Its tasks (assigned, pending revocation, and a slot's target) are one field, its state and a
 * slot's `armed` another (each field costs 8 bytes a member).
 * Immutable, like any member, except a group's StoredMemberSlot, whose fields its group's table
 * replaces (`setFrom`); `withAssignment` makes the copy a current-assignment record asks for,
 * sharing everything else.
 */
export class StoredMember implements StreamsGroupMember {
  // Not readonly for a StoredMemberSlot's `setFrom` only: read through StreamsGroupMember (readonly).
  memberId: string
  memberEpoch: number
  previousMemberEpoch: number
  clientHost: string
  /** The state (two bits) and, in a slot, ARMED. */
  #flags: number
  /** See packTasks: an immutable member's target is taken to be its assigned tuple. */
  #tasks: TasksTupleWithEpochs | MemberTasks
  #profile: MemberProfile
  /** The UUID's word 0; or the client id (when kept whole). */
  #c0: number | string
  /** The UUID's word 1; or the process id, or its place in the client id (see PLACE). */
  #c1: number | string
  /** The UUID's words 2 and 3 (0 when the client id is kept whole). */
  #c2: number
  #c3: number

  constructor(
    memberId: string,
    a: MemberAssignment,
    clientHost: string,
    profile: MemberProfile,
    c0: number | string,
    c1: number | string,
    c2: number,
    c3: number,
    /** A slot's target (undefined: none); an immutable member's assigned tuple. */
    target: TasksTuple | undefined,
  ) {
    this.memberId = memberId
    this.memberEpoch = a.memberEpoch
    this.previousMemberEpoch = a.previousMemberEpoch
    this.clientHost = clientHost
    this.#flags = a.state
    this.#tasks = packTasks(a.assignedTasks, a.tasksPendingRevocation, target)
    this.#profile = profile
    this.#c0 = c0
    this.#c1 = c1
    this.#c2 = c2
    this.#c3 = c3
  }

  get state(): MemberStateValue {
    return (this.#flags & 3) as MemberStateValue
  }
  get assignedTasks(): TasksTupleWithEpochs {
    const t = this.#tasks
    return t instanceof MemberTasks ? t.assigned : t
  }
  get tasksPendingRevocation(): TasksTupleWithEpochs {
    const t = this.#tasks
    return t instanceof MemberTasks ? t.pending : EMPTY_TASKS_WITH_EPOCHS
  }

  withAssignment(a: MemberAssignment): StoredMember {
    return new StoredMember(
      this.memberId,
      a,
      this.clientHost,
      this.#profile,
      this.#c0,
      this.#c1,
      this.#c2,
      this.#c3,
      a.assignedTasks,
    )
  }

  /** The member as it is now, as an immutable value (a slot's before its fields are replaced). */
  snapshot(): StoredMember {
    return this.withAssignment(this)
  }

  /** This member as the slot of a group's table, without a target. */
  toSlot(): StoredMemberSlot {
    return new StoredMemberSlot(
      this.memberId,
      this,
      this.clientHost,
      this.#profile,
      this.#c0,
      this.#c1,
      this.#c2,
      this.#c3,
    )
  }

  /** Makes every member field this member's `m`'s (a StoredMemberSlot's update; its target stays). */
  protected setFrom(m: StoredMember): void {
    this.memberId = m.memberId
    this.memberEpoch = m.memberEpoch
    this.previousMemberEpoch = m.previousMemberEpoch
    this.clientHost = m.clientHost
    this.#flags = (m.#flags & 3) | (this.#flags & ARMED)
    this.#tasks = packTasks(m.assignedTasks, m.tasksPendingRevocation, this.heldTarget)
    this.#profile = m.#profile
    this.#c0 = m.#c0
    this.#c1 = m.#c1
    this.#c2 = m.#c2
    this.#c3 = m.#c3
  }

  /** A slot's target (see StoredMemberSlot.target). */
  protected get heldTarget(): TasksTuple | undefined {
    const t = this.#tasks
    return t instanceof MemberTasks ? t.target : t
  }
  protected set heldTarget(target: TasksTuple | undefined) {
    const t = this.#tasks
    this.#tasks =
      t instanceof MemberTasks
        ? packTasks(t.assigned, t.pending, target)
        : packTasks(t, EMPTY_TASKS_WITH_EPOCHS, target)
  }

  /** A slot's `armed` (see MemberSession). */
  protected get armedFlag(): boolean {
    return (this.#flags & ARMED) !== 0
  }
  protected set armedFlag(armed: boolean) {
    this.#flags = armed ? this.#flags | ARMED : this.#flags & ~ARMED
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
  get clientId(): string {
    const c0 = this.#c0
    if (typeof c0 === 'string') return c0
    const p = this.#profile
    return p.clientIdPrefix! + this.processId + p.clientIdSuffix!
  }
  get processId(): string {
    const c0 = this.#c0
    const c1 = this.#c1
    if (typeof c0 === 'number') return uuidText(c0, c1 as number, this.#c2, this.#c3)
    if (typeof c1 === 'string') return c1
    const at = Math.floor(c1 / PLACE)
    // A string of its own, not a slice keeping the client id's characters in a second place.
    return kept(c0.slice(at, at + (c1 % PLACE)))
  }
  get userEndpoint(): Endpoint | null {
    return this.#profile.userEndpoint
  }
  get clientTags(): ReadonlyMap<string, string> {
    return this.#profile.clientTags
  }

  /** Whether `clientId` is the member's client id (the steady heartbeat's question; nothing built). */
  hasClientId(clientId: string): boolean {
    const c0 = this.#c0
    if (typeof c0 === 'string') return c0 === clientId
    const p = this.#profile
    const prefix = p.clientIdPrefix!
    const suffix = p.clientIdSuffix!
    const at = prefix.length
    return (
      clientId.length === at + UUID_LENGTH + suffix.length &&
      word0(clientId, at) === c0 &&
      word1(clientId, at) === this.#c1 &&
      word2(clientId, at) === this.#c2 &&
      word3(clientId, at) === this.#c3 &&
      dashesAt(clientId, at) &&
      clientId.startsWith(prefix) &&
      clientId.endsWith(suffix)
    )
  }
}

/**
 * A stored member that is also its slot in its group's member table (MemberSlotOf): its session
 * bookkeeping (the runtime's watch of its session timer), its target assignment, and the member's
 * own fields, one object a member instead of two. A slot must stay the same object while its timer
 * is armed, so a record's update replaces the member's fields in it (`replace`, which returns the
 * fields it had as an immutable StoredMember); `member` is the slot itself. Code that keeps a member
 * across a replay keeps a `snapshot()`. Its session timer's key and operation are made by its group
 * when the timer is armed (StreamsGroup.sessionTimer): a reference to its table would cost 8 bytes a
 * member.
 */
export class StoredMemberSlot extends StoredMember implements MemberSlotOf<StreamsGroupMember> {
  /** See SessionWatch. */
  deadlineMs = 0
  dueMs = 0

  constructor(
    memberId: string,
    a: MemberAssignment,
    clientHost: string,
    profile: MemberProfile,
    c0: number | string,
    c1: number | string,
    c2: number,
    c3: number,
  ) {
    super(memberId, a, clientHost, profile, c0, c1, c2, c3, undefined)
  }

  /** See SessionWatch (kept with the member's state, in one field). */
  get armed(): boolean {
    return this.armedFlag
  }
  set armed(armed: boolean) {
    this.armedFlag = armed
  }

  /**
   * The member's target assignment (undefined: none recorded). Kept with its tasks (see
   * packTasks): a stable member's is its assigned tuple, and costs nothing more.
   */
  get target(): TasksTuple | undefined {
    return this.heldTarget
  }
  set target(target: TasksTuple | undefined) {
    this.heldTarget = target
  }

  get member(): StreamsGroupMember {
    return this
  }

  replace(member: StreamsGroupMember): StreamsGroupMember {
    if (!(member instanceof StoredMember))
      throw new Error('A slot takes a stored member (MemberProfiles.store).')
    const old = this.snapshot()
    if (member !== this) this.setFrom(member)
    return old
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
    const clientId = m.clientId
    const at = pid === '' ? -1 : clientId.indexOf(pid)
    const host = kept(m.clientHost)
    if (at >= 0 && isUuid(pid)) {
      const profile = this.#profile(m, clientId.slice(0, at), clientId.slice(at + UUID_LENGTH))
      return new StoredMember(
        m.memberId,
        m,
        host,
        profile,
        word0(pid, 0),
        word1(pid, 0),
        word2(pid, 0),
        word3(pid, 0),
        m.assignedTasks,
      )
    }
    const place = at >= 0 && at < PLACE && pid.length < PLACE ? at * PLACE + pid.length : pid
    // The member id, client id and process id are the shard's own strings already (see strings.ts).
    return new StoredMember(
      m.memberId,
      m,
      host,
      this.#profile(m, null, null),
      clientId,
      place,
      0,
      0,
      m.assignedTasks,
    )
  }

  #profile(m: StreamsGroupMember, prefix: string | null, suffix: string | null): MemberProfile {
    const h = profileHash(m, prefix, suffix)
    const filed = this.#byHash.get(h)
    if (filed instanceof MemberProfile) {
      if (filed.matches(m, prefix, suffix)) return filed
    } else if (filed !== undefined) {
      for (const p of filed) if (p.matches(m, prefix, suffix)) return p
    }
    if (this.#count >= MAX_PROFILES) {
      this.#byHash.clear()
      this.#count = 0
    }
    const profile = new MemberProfile(m, prefix, suffix)
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
