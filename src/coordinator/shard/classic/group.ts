/**
 * The classic group and its members (Kafka's ClassicGroup / ClassicGroupMember). Like Kafka's, a
 * classic group lives in memory: the GroupMetadata record is a checkpoint of the generation, the
 * leader, the protocol and every member's subscription and assignment, written at the points Kafka
 * writes it. The rebalance bookkeeping (who is awaiting a JoinGroup or SyncGroup answer, pending
 * members, the state between checkpoints) is soft state that is never written.
 */

import {
  CONSUMER_PROTOCOL_TYPE,
  ConsumerProtocolError,
  decodeSubscribedTopics,
} from '../../../protocol/consumer-protocol.js'

/** Kafka's ClassicGroupState names, as ListGroups and DescribeGroups report them. */
export const ClassicGroupState = {
  EMPTY: 'Empty',
  PREPARING_REBALANCE: 'PreparingRebalance',
  COMPLETING_REBALANCE: 'CompletingRebalance',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const
export type ClassicGroupState = (typeof ClassicGroupState)[keyof typeof ClassicGroupState]

const VALID_PREVIOUS: Readonly<Record<ClassicGroupState, readonly ClassicGroupState[]>> = {
  Empty: ['PreparingRebalance'],
  PreparingRebalance: ['Stable', 'CompletingRebalance', 'Empty'],
  CompletingRebalance: ['PreparingRebalance'],
  Stable: ['CompletingRebalance'],
  Dead: ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'],
}

/**
 * Identifies one parked request. The service picks the token when it receives a JoinGroup or
 * SyncGroup request and keeps the request's promise under it; the manager only stores and returns it.
 */
export type RequestToken = number

export interface ClassicProtocol {
  readonly name: string
  readonly metadata: Uint8Array
}

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0)

export class ClassicGroupMember {
  readonly memberId: string
  readonly groupInstanceId: string | null
  readonly clientId: string
  readonly clientHost: string
  readonly protocolType: string
  rebalanceTimeoutMs: number
  sessionTimeoutMs: number
  /** In the member's order of preference. */
  supportedProtocols: readonly ClassicProtocol[]
  assignment: Uint8Array
  /** The parked JoinGroup request, or null. */
  awaitingJoin: RequestToken | null = null
  /** The parked SyncGroup request, or null. */
  awaitingSync: RequestToken | null = null
  /** Joined but not yet through a completed join phase: may expire while awaiting join. */
  isNew = false

  constructor(init: {
    memberId: string
    groupInstanceId: string | null
    clientId: string
    clientHost: string
    rebalanceTimeoutMs: number
    sessionTimeoutMs: number
    protocolType: string
    supportedProtocols: readonly ClassicProtocol[]
    assignment?: Uint8Array
  }) {
    this.memberId = init.memberId
    this.groupInstanceId = init.groupInstanceId
    this.clientId = init.clientId
    this.clientHost = init.clientHost
    this.rebalanceTimeoutMs = init.rebalanceTimeoutMs
    this.sessionTimeoutMs = init.sessionTimeoutMs
    this.protocolType = init.protocolType
    this.supportedProtocols = init.supportedProtocols
    this.assignment = init.assignment ?? EMPTY_BYTES
  }

  get isStatic(): boolean {
    return this.groupInstanceId !== null
  }

  /** The member's metadata for a protocol (empty when it does not support it). */
  metadata(protocolName: string | null): Uint8Array {
    if (protocolName === null) return EMPTY_BYTES
    return this.supportedProtocols.find((p) => p.name === protocolName)?.metadata ?? EMPTY_BYTES
  }

  /** Same protocol names with the same metadata bytes, in the same order. */
  matches(protocols: readonly ClassicProtocol[]): boolean {
    if (protocols.length !== this.supportedProtocols.length) return false
    return protocols.every((p, i) => {
      const mine = this.supportedProtocols[i]!
      return mine.name === p.name && bytesEqual(mine.metadata, p.metadata)
    })
  }

  /** A member whose session timer fires is kept only while it is in a rebalance it has rejoined. */
  hasSatisfiedHeartbeat(): boolean {
    if (this.isNew) return false
    return this.awaitingJoin !== null || this.awaitingSync !== null
  }
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

export class ClassicGroup {
  readonly groupId: string
  state: ClassicGroupState
  previousState: ClassicGroupState | null = null
  generationId: number
  /** null until the first member joins (Kafka's Optional.empty()). */
  protocolType: string | null
  protocolName: string | null
  leaderId: string | null
  currentStateTimestamp: number | null
  /**
   * The topics the members of a `consumer` protocol group subscribe to, from their subscriptions
   * as of the last generation or load (Kafka's `subscribedTopics`); null when the group is not of
   * that protocol or a subscription could not be read.
   */
  subscribedTopics: ReadonlySet<string> | null = null
  /**
   * In join order. Kafka keeps members in a HashMap; a defined order keeps leader hand-over and the
   * leader's member list deterministic.
   */
  readonly members = new Map<string, ClassicGroupMember>()
  readonly staticMembers = new Map<string, string>()
  /** Dynamic members that got MEMBER_ID_REQUIRED and have not rejoined yet. */
  readonly pendingJoinMembers = new Set<string>()
  /** Members that got their JoinGroup answer for this generation and have not sent SyncGroup. */
  readonly pendingSyncMembers = new Set<string>()
  newMemberAdded = false
  /**
   * Set once a handler has touched the group. Records replayed into a live group are checkpoints
   * this manager wrote from it; records replayed while the group is not live come from the log.
   */
  live = false
  /**
   * False for a group a JoinGroup created until a GroupMetadata record of it is stored and
   * replayed: while false, the group exists only in memory (Kafka's groups map is timeline state,
   * so a failed append of the creating join removes the group there).
   */
  stored = true
  /**
   * A static member's replacement whose GroupMetadata record is not stored yet: the member it
   * replaced (`old`) and the new member id. Cleared when a record of the group replays.
   */
  unstoredReplacement: { readonly old: ClassicGroupMember; readonly newMemberId: string } | null = null

  constructor(init: {
    groupId: string
    state: ClassicGroupState
    generationId?: number
    protocolType?: string | null
    protocolName?: string | null
    leaderId?: string | null
    currentStateTimestamp: number | null
  }) {
    this.groupId = init.groupId
    this.state = init.state
    this.generationId = init.generationId ?? 0
    this.protocolType = init.protocolType ?? null
    this.protocolName = init.protocolName ?? null
    this.leaderId = init.leaderId ?? null
    this.currentStateTimestamp = init.currentStateTimestamp
  }

  is(state: ClassicGroupState): boolean {
    return this.state === state
  }

  transitionTo(target: ClassicGroupState, nowMs: number): void {
    if (!VALID_PREVIOUS[target].includes(this.state)) {
      throw new Error(
        `Group ${this.groupId} should be in one of the states ${VALID_PREVIOUS[target].join(', ')} before moving to ${target}, but it is ${this.state}.`,
      )
    }
    this.previousState = this.state
    this.state = target
    this.currentStateTimestamp = nowMs
  }

  member(memberId: string): ClassicGroupMember | undefined {
    return this.members.get(memberId)
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId
  }

  isPendingMember(memberId: string): boolean {
    return this.pendingJoinMembers.has(memberId)
  }

  staticMemberId(groupInstanceId: string): string | undefined {
    return this.staticMembers.get(groupInstanceId)
  }

  numAwaitingJoin(): number {
    let n = 0
    for (const m of this.members.values()) if (m.awaitingJoin !== null) n++
    return n
  }

  hasAllMembersJoined(): boolean {
    return this.members.size === this.numAwaitingJoin() && this.pendingJoinMembers.size === 0
  }

  /** The longest rebalance timeout of the members (0 when there are none). */
  rebalanceTimeoutMs(): number {
    let max = 0
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs)
    return max
  }

  canRebalance(): boolean {
    return VALID_PREVIOUS.PreparingRebalance.includes(this.state)
  }

  add(member: ClassicGroupMember): void {
    if (member.groupInstanceId !== null) {
      if (this.staticMembers.has(member.groupInstanceId)) {
        throw new Error(
          `Static member with groupInstanceId=${member.groupInstanceId} cannot be added to group ${this.groupId} since it is already a member.`,
        )
      }
      this.staticMembers.set(member.groupInstanceId, member.memberId)
    }
    if (this.members.size === 0) this.protocolType = member.protocolType
    if (this.leaderId === null) this.leaderId = member.memberId
    this.members.set(member.memberId, member)
    this.pendingJoinMembers.delete(member.memberId)
  }

  remove(memberId: string): void {
    const removed = this.members.get(memberId)
    if (removed) {
      this.members.delete(memberId)
      if (removed.groupInstanceId !== null) this.staticMembers.delete(removed.groupInstanceId)
    }
    if (this.isLeader(memberId)) {
      const next = this.members.keys().next()
      this.leaderId = next.done ? null : next.value
    }
    this.pendingJoinMembers.delete(memberId)
    this.pendingSyncMembers.delete(memberId)
  }

  /** Protocols every member supports. */
  candidateProtocols(): Set<string> {
    const counts = new Map<string, number>()
    for (const m of this.members.values())
      for (const p of m.supportedProtocols) counts.set(p.name, (counts.get(p.name) ?? 0) + 1)
    const out = new Set<string>()
    for (const [name, n] of counts) if (n === this.members.size) out.add(name)
    return out
  }

  /**
   * Each member votes for its most preferred candidate; the most votes win. Kafka breaks ties in
   * hash order; here the tie goes to the protocol that received its first vote earliest (in member
   * order), which keeps the choice deterministic.
   */
  selectProtocol(): string {
    if (this.members.size === 0) throw new Error('Cannot select protocol for empty group')
    const candidates = this.candidateProtocols()
    const votes = new Map<string, number>()
    for (const m of this.members.values()) {
      const vote = m.supportedProtocols.find((p) => candidates.has(p.name))?.name
      if (vote === undefined) continue
      votes.set(vote, (votes.get(vote) ?? 0) + 1)
    }
    let best: string | null = null
    let bestVotes = -1
    for (const [name, n] of votes) {
      if (n > bestVotes) {
        best = name
        bestVotes = n
      }
    }
    if (best === null) throw new Error(`No protocol is supported by every member of group ${this.groupId}`)
    return best
  }

  supportsProtocols(memberProtocolType: string, memberProtocols: readonly ClassicProtocol[]): boolean {
    if (this.is(ClassicGroupState.EMPTY)) return memberProtocolType !== '' && memberProtocols.length > 0
    if (this.protocolType !== memberProtocolType) return false
    const candidates = this.candidateProtocols()
    return memberProtocols.some((p) => candidates.has(p.name))
  }

  /**
   * Keeps the current leader when it rejoined; otherwise the first member that rejoined leads.
   * False when no member rejoined.
   */
  maybeElectNewJoinedLeader(): boolean {
    if (this.leaderId === null) return false
    const leader = this.members.get(this.leaderId)
    if (leader && leader.awaitingJoin !== null) return true
    for (const m of this.members.values()) {
      if (m.awaitingJoin !== null) {
        this.leaderId = m.memberId
        return true
      }
    }
    return false
  }

  initNextGeneration(nowMs: number): void {
    this.generationId++
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol()
      this.subscribedTopics = this.computeSubscribedTopics()
      this.transitionTo(ClassicGroupState.COMPLETING_REBALANCE, nowMs)
    } else {
      this.protocolName = null
      this.subscribedTopics = this.computeSubscribedTopics()
      this.transitionTo(ClassicGroupState.EMPTY, nowMs)
    }
    this.pendingSyncMembers.clear()
  }

  /** Whether the group's protocol type is `consumer` (Kafka's usesConsumerGroupProtocol). */
  usesConsumerProtocol(): boolean {
    return this.protocolType === CONSUMER_PROTOCOL_TYPE
  }

  /**
   * The topics the members subscribe to (Kafka's `computeSubscribedTopics`): none for an empty
   * `consumer` group, null for another protocol or when a member's subscription cannot be read.
   */
  computeSubscribedTopics(): ReadonlySet<string> | null {
    if (!this.usesConsumerProtocol()) return null
    if (this.members.size === 0) return new Set()
    if (this.protocolName === null) return null
    const topics = new Set<string>()
    try {
      for (const m of this.members.values()) {
        for (const t of decodeSubscribedTopics(m.metadata(this.protocolName))) topics.add(t)
      }
    } catch (e) {
      if (e instanceof ConsumerProtocolError) return null
      throw e
    }
    return topics
  }

  /**
   * Whether the group is subscribed to the topic (Kafka's `isSubscribedToTopic`): a `consumer`
   * group whose subscriptions could not be read counts as subscribed to every topic.
   */
  isSubscribedToTopic(topic: string): boolean {
    return this.subscribedTopics === null ? this.usesConsumerProtocol() : this.subscribedTopics.has(topic)
  }

  isEmpty(): boolean {
    return this.is(ClassicGroupState.EMPTY)
  }
}
