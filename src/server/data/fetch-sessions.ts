// Incremental fetch sessions (KIP-227): the session cache and the fetch contexts the Fetch handler
// reads through, as Kafka's FetchManager, FetchSession, FetchSessionCacheShard and FetchContext
// serve them. No I/O: the clock is an argument and the session ids' randomness is injectable.
//
// A request's (SessionId, SessionEpoch) picks the context:
//   - epoch 0 (full fetch, wants a session) or -1 (full fetch without one, the client's close):
//     a nonzero SessionId is closed first. Epoch 0 answers every partition of the request and then
//     tries to cache a new session holding them (SessionId 0 in the answer when the cache is full
//     and nothing may be evicted); epoch -1 answers them with SessionId 0.
//   - any other epoch is incremental in an existing session: an unknown SessionId answers
//     FETCH_SESSION_ID_NOT_FOUND, an epoch other than the session's INVALID_FETCH_SESSION_EPOCH,
//     a v13+ request in a session made below v13 (or the reverse) FETCH_SESSION_TOPIC_ID_ERROR,
//     each at the top level with no partitions. Otherwise the request's partitions are added to
//     the session or update its cached fetch parameters, its forgotten partitions are removed, and
//     the fetch covers every partition of the session, in session order. A session left empty is
//     closed and the fetch is sessionless. The answer carries only the partitions that changed
//     (records, high watermark, log start offset or an error; Kafka's maybeUpdateResponseData),
//     the session keeps what it sent, and a partition that returned records moves to the end of
//     the session's order (so the next fetch reads the others first).
// The cache (one shard; Kafka splits max.incremental.fetch.session.cache.slots into 8): a new
// session takes a free slot, else evicts the least recently used session when it has not been
// used for longer than min.incremental.fetch.session.eviction.ms, else the first "evictable"
// session (one that was older than that when last used; a consumer's session is also evictable
// by a follower's) when it is worth less than the new one (a consumer's below a follower's, then
// by partition count; an equal one stays).
import type {
  FetchRequestFetchPartition,
  FetchRequestFetchTopic,
  FetchRequestForgottenTopic,
} from '../../protocol/generated/messages/FetchRequest.js'

export const INVALID_SESSION_ID = 0
export const INITIAL_EPOCH = 0
export const FINAL_EPOCH = -1

// Error codes (src/protocol/errors.ts) this module answers with.
const FETCH_SESSION_ID_NOT_FOUND = 70
const INVALID_FETCH_SESSION_EPOCH = 71
const FETCH_SESSION_TOPIC_ID_ERROR = 106

const INT32_MAX = 0x7fffffff

/** Kafka's FetchMetadata.nextEpoch: -1 stays -1, the largest int wraps to 1. */
export function nextEpoch(prev: number): number {
  if (prev < 0) return FINAL_EPOCH
  if (prev === INT32_MAX) return 1
  return prev + 1
}

/** One partition a fetch covers: its topic (by id from v13, by name below) and fetch parameters. */
export interface FetchTarget {
  readonly topicId: string
  /** The topic's name; null when a v13+ request named an id no topic has. */
  readonly name: string | null
  readonly p: FetchRequestFetchPartition
}

/** What an answered partition tells the session (a FetchResponsePartitionData's fields). */
export interface PartitionAnswer {
  readonly errorCode: number
  readonly highWatermark: bigint
  readonly logStartOffset: bigint
  readonly records: Uint8Array | null
}

/** An answered partition: the target it answers and its data. */
export interface Answered<T extends FetchTarget = FetchTarget> {
  readonly wanted: T
  readonly data: PartitionAnswer
}

/** A partition of a session: its latest fetch parameters and what the session last sent of it. */
export class CachedPartition implements FetchTarget {
  /** Its key in the session. */
  readonly key: string
  readonly topicId: string
  name: string | null
  p: FetchRequestFetchPartition
  highWatermark: bigint
  logStartOffset: bigint
  constructor(
    key: string,
    topicId: string,
    name: string | null,
    p: FetchRequestFetchPartition,
    hw = -1n,
    lso = -1n,
  ) {
    this.key = key
    this.topicId = topicId
    this.name = name
    this.p = p
    this.highWatermark = hw
    this.logStartOffset = lso
  }

  /**
   * Kafka's maybeUpdateResponseData: whether the answer must carry this partition (records, a
   * different high watermark or log start offset, an error); with `update`, keeps what is sent.
   */
  mustRespond(a: PartitionAnswer, update: boolean): boolean {
    let must = a.records !== null && a.records.byteLength > 0
    if (this.highWatermark !== a.highWatermark) {
      must = true
      if (update) this.highWatermark = a.highWatermark
    }
    if (this.logStartOffset !== a.logStartOffset) {
      must = true
      if (update) this.logStartOffset = a.logStartOffset
    }
    if (a.errorCode !== 0) {
      must = true
      if (update) this.highWatermark = -1n
    }
    return must
  }
}

/** The key of a partition in a session: by topic id when the session uses ids, else by name. */
function keyOf(usesTopicIds: boolean, topicId: string, name: string | null, partition: number): string {
  return `${usesTopicIds ? topicId : name}\u0000${partition}`
}

export class FetchSession {
  readonly id: number
  readonly privileged: boolean
  readonly usesTopicIds: boolean
  readonly creationMs: number
  lastUsedMs: number
  epoch: number
  /** The partitions in session order (a Map keeps insertion order; re-setting moves to the end). */
  readonly partitions: Map<string, CachedPartition>
  constructor(
    id: number,
    privileged: boolean,
    usesTopicIds: boolean,
    partitions: Map<string, CachedPartition>,
    now: number,
  ) {
    this.id = id
    this.privileged = privileged
    this.usesTopicIds = usesTopicIds
    this.partitions = partitions
    this.creationMs = now
    this.lastUsedMs = now
    this.epoch = nextEpoch(INITIAL_EPOCH)
  }

  get size(): number {
    return this.partitions.size
  }

  /**
   * Kafka's FetchSession.update: the request's partitions are added or update their fetch
   * parameters, then the forgotten ones are removed.
   */
  update(
    topics: readonly FetchRequestFetchTopic[],
    forgotten: readonly FetchRequestForgottenTopic[],
    nameOf: (topicId: string) => string | null,
  ): void {
    const byId = this.usesTopicIds
    for (const t of topics) {
      const name = byId ? nameOf(t.topicId) : t.topic
      for (const p of t.partitions) {
        const key = keyOf(byId, t.topicId, name, p.partition)
        const cached = this.partitions.get(key)
        if (cached === undefined) this.partitions.set(key, new CachedPartition(key, t.topicId, name, p))
        else cached.p = p
      }
    }
    for (const t of forgotten) {
      for (const partition of t.partitions) {
        this.partitions.delete(keyOf(byId, t.topicId, t.topic, partition))
      }
    }
  }
}

/** Settings of the cache: Kafka's max.incremental.fetch.session.cache.slots and eviction age. */
export interface FetchSessionCacheOptions {
  readonly maxSlots: number
  readonly evictionMs: number
  /** Uniform in [0, 1), as Math.random (the default); injectable for tests. */
  readonly random?: () => number
}

/** Kafka's EvictableKey order: a consumer's session before a follower's, then smaller, then id. */
function compareEvictable(aPrivileged: boolean, aSize: number, aId: number, b: FetchSession): number {
  if (aPrivileged !== b.privileged) return aPrivileged ? 1 : -1
  if (aSize !== b.size) return aSize - b.size
  return aId - b.id
}

/** The incremental fetch session cache (Kafka's FetchSessionCacheShard, one shard). */
export class FetchSessionCache {
  readonly #maxSlots: number
  readonly #evictionMs: number
  readonly #random: () => number
  /** By id. */
  readonly #sessions = new Map<number, FetchSession>()
  #evictions = 0

  constructor(options: FetchSessionCacheOptions) {
    this.#maxSlots = options.maxSlots
    this.#evictionMs = options.evictionMs
    this.#random = options.random ?? Math.random
  }

  get size(): number {
    return this.#sessions.size
  }

  /** Sessions evicted to make room for new ones since start-up. */
  get evictions(): number {
    return this.#evictions
  }

  /** The partitions cached over every session (Kafka's totalPartitions), counted when asked. */
  get partitionsCached(): number {
    let n = 0
    for (const s of this.#sessions.values()) n += s.size
    return n
  }

  get(id: number): FetchSession | undefined {
    return this.#sessions.get(id)
  }

  remove(id: number): FetchSession | undefined {
    const s = this.#sessions.get(id)
    if (s !== undefined) this.#sessions.delete(id)
    return s
  }

  /** Marks a session used now. */
  touch(session: FetchSession, now: number): void {
    session.lastUsedMs = now
  }

  /** A random unused id in [1, 2^31 - 1), as Kafka draws it. */
  newSessionId(): number {
    for (;;) {
      const id = 1 + Math.floor(this.#random() * (INT32_MAX - 1))
      if (id >= 1 && id < INT32_MAX && !this.#sessions.has(id)) return id
    }
  }

  /**
   * Kafka's maybeCreateSession: a session when there is a free slot or one may be evicted; else
   * INVALID_SESSION_ID. `partitions` is called only when the session is made.
   */
  maybeCreate(
    now: number,
    privileged: boolean,
    size: number,
    usesTopicIds: boolean,
    partitions: () => Map<string, CachedPartition>,
  ): number {
    if (this.#sessions.size >= this.#maxSlots && !this.#tryEvict(privileged, size, now)) {
      return INVALID_SESSION_ID
    }
    const session = new FetchSession(this.newSessionId(), privileged, usesTopicIds, partitions(), now)
    this.#sessions.set(session.id, session)
    return session.id
  }

  /** Kafka's tryEvict: the stalest session if unused for longer than the eviction age, else a lesser one. */
  #tryEvict(privileged: boolean, size: number, now: number): boolean {
    // Kafka's lastUsed order: by last use, then id.
    let oldest: FetchSession | undefined
    for (const s of this.#sessions.values()) {
      if (
        oldest === undefined ||
        s.lastUsedMs < oldest.lastUsedMs ||
        (s.lastUsedMs === oldest.lastUsedMs && s.id < oldest.id)
      )
        oldest = s
    }
    if (oldest === undefined) return false
    if (now - oldest.lastUsedMs > this.#evictionMs) {
      this.#sessions.delete(oldest.id)
      this.#evictions++
      return true
    }
    // The first session evictable by this one: one older than the eviction age when last used
    // (Kafka files a session as evictable when touched), or (for a follower's new session) any
    // consumer's session; the least valuable first.
    let first: FetchSession | undefined
    for (const s of this.#sessions.values()) {
      const old = s.lastUsedMs - s.creationMs > this.#evictionMs
      if (!(old || (privileged && !s.privileged))) continue
      if (first === undefined || compareEvictable(s.privileged, s.size, s.id, first) < 0) first = s
    }
    if (first === undefined || compareEvictable(privileged, size, 0, first) < 0) return false
    this.#sessions.delete(first.id)
    this.#evictions++
    return true
  }
}

/** The partitions a fetch covers and how its answer is made (Kafka's FetchContext). */
export type FetchContext =
  | { readonly kind: 'error'; readonly errorCode: number }
  /** The request's partitions; SessionId 0. */
  | { readonly kind: 'sessionless' }
  /** The request's partitions; the answer tries to create a session. */
  | { readonly kind: 'full'; readonly usesTopicIds: boolean; readonly privileged: boolean }
  /** The session's partitions; the answer carries those that changed. */
  | { readonly kind: 'incremental'; readonly session: FetchSession; readonly requestEpoch: number }

export interface FetchMetadata {
  readonly version: number
  readonly sessionId: number
  readonly sessionEpoch: number
  /** A follower's fetch (ReplicaId ≥ 0): its session is privileged in eviction. */
  readonly isFollower: boolean
}

const SESSIONLESS: FetchContext = { kind: 'sessionless' }

/**
 * Kafka's FetchManager.newContext. `nameOf` resolves a topic id to its topic's name (null when no
 * topic has it).
 */
export function newFetchContext(
  cache: FetchSessionCache,
  meta: FetchMetadata,
  topics: readonly FetchRequestFetchTopic[],
  forgotten: readonly FetchRequestForgottenTopic[],
  nameOf: (topicId: string) => string | null,
  now: number,
): FetchContext {
  if (meta.version < 7) return SESSIONLESS
  if (meta.sessionEpoch === INITIAL_EPOCH || meta.sessionEpoch === FINAL_EPOCH) {
    if (meta.sessionId !== INVALID_SESSION_ID) cache.remove(meta.sessionId)
    if (meta.sessionEpoch === FINAL_EPOCH) return SESSIONLESS
    return { kind: 'full', usesTopicIds: meta.version >= 13, privileged: meta.isFollower }
  }
  const session = cache.get(meta.sessionId)
  if (session === undefined) return { kind: 'error', errorCode: FETCH_SESSION_ID_NOT_FOUND }
  if (session.epoch !== meta.sessionEpoch) return { kind: 'error', errorCode: INVALID_FETCH_SESSION_EPOCH }
  if (session.usesTopicIds !== meta.version >= 13) {
    return { kind: 'error', errorCode: FETCH_SESSION_TOPIC_ID_ERROR }
  }
  session.update(topics, forgotten, nameOf)
  if (session.size === 0) {
    cache.remove(session.id)
    return SESSIONLESS
  }
  cache.touch(session, now)
  session.epoch = nextEpoch(session.epoch)
  return { kind: 'incremental', session, requestEpoch: meta.sessionEpoch }
}

/**
 * The partitions an incremental context covers, in session order; a partition whose topic id was
 * unknown is named when a topic has that id now (Kafka's maybeResolveUnknownName).
 */
export function sessionTargets(session: FetchSession, nameOf: (topicId: string) => string | null) {
  if (session.usesTopicIds) {
    for (const cp of session.partitions.values()) if (cp.name === null) cp.name = nameOf(cp.topicId)
  }
  return session.partitions.values()
}

/** The top level of an answer: its error, SessionId and partitions. */
export interface ContextAnswer<A> {
  readonly errorCode: number
  readonly sessionId: number
  readonly answers: readonly A[]
}

/**
 * Kafka's updateAndGenerateResponseData: the answer to send for the answered partitions (in the
 * order given), creating the session of a full context and updating that of an incremental one.
 */
export function answerContext<A extends Answered>(
  cache: FetchSessionCache,
  context: FetchContext,
  answers: readonly A[],
  now: number,
): ContextAnswer<A> {
  switch (context.kind) {
    case 'error':
      return { errorCode: context.errorCode, sessionId: INVALID_SESSION_ID, answers: [] }
    case 'sessionless':
      return { errorCode: 0, sessionId: INVALID_SESSION_ID, answers }
    case 'full': {
      const sessionId = cache.maybeCreate(
        now,
        context.privileged,
        answers.length,
        context.usesTopicIds,
        () => {
          const partitions = new Map<string, CachedPartition>()
          for (const a of answers) {
            const w = a.wanted
            const key = keyOf(context.usesTopicIds, w.topicId, w.name, w.p.partition)
            if (partitions.has(key)) continue
            partitions.set(
              key,
              new CachedPartition(key, w.topicId, w.name, w.p, a.data.highWatermark, a.data.logStartOffset),
            )
          }
          return partitions
        },
      )
      return { errorCode: 0, sessionId, answers }
    }
    case 'incremental': {
      const session = context.session
      // A concurrent request in the session (a duplicate) moved its epoch on: Kafka's check.
      if (session.epoch !== nextEpoch(context.requestEpoch)) {
        return { errorCode: INVALID_FETCH_SESSION_EPOCH, sessionId: session.id, answers: [] }
      }
      const sent: A[] = []
      for (const a of answers) {
        const cp = a.wanted as FetchTarget as CachedPartition
        if (!(cp instanceof CachedPartition) || !cp.mustRespond(a.data, true)) continue
        sent.push(a)
        if (a.data.records !== null && a.data.records.byteLength > 0) {
          if (session.partitions.get(cp.key) === cp) {
            session.partitions.delete(cp.key)
            session.partitions.set(cp.key, cp)
          }
        }
      }
      return { errorCode: 0, sessionId: session.id, answers: sent }
    }
  }
}
