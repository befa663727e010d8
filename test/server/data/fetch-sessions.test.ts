// The incremental fetch session cache and contexts (KIP-227) against Kafka's FetchManager,
// FetchSession, FetchSessionCacheShard and FetchContext: which context a (SessionId, SessionEpoch)
// gets, every session error, epochs and their wrap, the partitions a session covers (added,
// updated, forgotten), incremental answers carrying only what changed, the session order, and the
// cache's eviction by age and by size and privilege, with a clock and ids chosen by the test.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCode } from '../../../src/protocol/errors.js'
import {
  createFetchRequestFetchPartition,
  createFetchRequestFetchTopic,
  createFetchRequestForgottenTopic,
  type FetchRequestFetchTopic,
  type FetchRequestForgottenTopic,
} from '../../../src/protocol/generated/messages/FetchRequest.js'
import {
  type Answered,
  answerContext,
  CachedPartition,
  type FetchContext,
  FetchSessionCache,
  type FetchTarget,
  newFetchContext,
  nextEpoch,
  type PartitionAnswer,
  sessionTargets,
} from '../../../src/server/data/fetch-sessions.js'

const ID_A = 'AAAAAAAAAAAAAAAAAAAAAQ'
const ID_B = 'AAAAAAAAAAAAAAAAAAAAAg'
const ZERO = 'AAAAAAAAAAAAAAAAAAAAAA'
const names: Record<string, string> = { [ID_A]: 'a', [ID_B]: 'b' }
const nameOf = (id: string): string | null => names[id] ?? null

/** Topics by id (v13+): [topicId, [[partition, fetchOffset], …]]. */
function byId(...ts: [string, [number, number][]][]): FetchRequestFetchTopic[] {
  return ts.map(([topicId, ps]) =>
    createFetchRequestFetchTopic({
      topic: '',
      topicId,
      partitions: ps.map(([partition, offset]) =>
        createFetchRequestFetchPartition({ partition, fetchOffset: BigInt(offset) }),
      ),
    }),
  )
}

/** Topics by name (below v13). */
function byName(...ts: [string, [number, number][]][]): FetchRequestFetchTopic[] {
  return ts.map(([topic, ps]) =>
    createFetchRequestFetchTopic({
      topic,
      topicId: ZERO,
      partitions: ps.map(([partition, offset]) =>
        createFetchRequestFetchPartition({ partition, fetchOffset: BigInt(offset) }),
      ),
    }),
  )
}

/** Partitions fetched from offset 0. */
const atZero = (...partitions: number[]): [number, number][] => partitions.map((p) => [p, 0])

function forget(topicId: string, topic: string, partitions: number[]): FetchRequestForgottenTopic {
  return createFetchRequestForgottenTopic({ topicId, topic, partitions })
}

/** A deterministic id source: the ids in order (as random() values that map to them). */
function ids(...values: number[]): () => number {
  let i = 0
  return () => (values[i++ % values.length] - 1) / (0x7fffffff - 1)
}

function cache(maxSlots = 10, evictionMs = 1000, random = ids(101, 102, 103, 104, 105, 106, 107)) {
  return new FetchSessionCache({ maxSlots, evictionMs, random })
}

interface Meta {
  version?: number
  sessionId?: number
  sessionEpoch?: number
  isFollower?: boolean
}

function ctxOf(
  c: FetchSessionCache,
  m: Meta,
  topics: FetchRequestFetchTopic[] = [],
  forgotten: FetchRequestForgottenTopic[] = [],
  now = 0,
): FetchContext {
  return newFetchContext(
    c,
    {
      version: m.version ?? 13,
      sessionId: m.sessionId ?? 0,
      sessionEpoch: m.sessionEpoch ?? 0,
      isFollower: m.isFollower ?? false,
    },
    topics,
    forgotten,
    nameOf,
    now,
  )
}

/** The targets a context covers: the session's, or (for the others) the request's. */
function targets(context: FetchContext, topics: FetchRequestFetchTopic[], version = 13): FetchTarget[] {
  if (context.kind === 'incremental') return [...sessionTargets(context.session, nameOf)]
  return topics.flatMap((t) =>
    t.partitions.map((p) => ({ topicId: t.topicId, name: version >= 13 ? nameOf(t.topicId) : t.topic, p })),
  )
}

interface State {
  hw?: number
  lso?: number
  records?: number
  error?: number
}

const answerData = (s: State = {}): PartitionAnswer => ({
  errorCode: s.error ?? 0,
  highWatermark: BigInt(s.error ? -1 : (s.hw ?? 10)),
  logStartOffset: BigInt(s.error ? -1 : (s.lso ?? 0)),
  records: new Uint8Array(s.records ?? 0),
})

/** Answers every target with the state given for `name:partition` (default: hw 10, no records). */
function answerAll(ts: FetchTarget[], states: Record<string, State> = {}): Answered[] {
  return ts.map((w) => ({ wanted: w, data: answerData(states[`${w.name ?? w.topicId}:${w.p.partition}`]) }))
}

const shown = (answers: readonly Answered[]) =>
  answers.map((a) => `${a.wanted.name ?? a.wanted.topicId}:${a.wanted.p.partition}`)

/** Creates a session over `topics` with a full fetch at `now`; returns its id. */
function create(
  c: FetchSessionCache,
  topics: FetchRequestFetchTopic[],
  now = 0,
  isFollower = false,
  version = 13,
): number {
  const context = ctxOf(c, { sessionEpoch: 0, isFollower, version }, topics, [], now)
  return answerContext(c, context, answerAll(targets(context, topics, version)), now).sessionId
}

describe('fetch session contexts', () => {
  it('nextEpoch: counts up, wraps from the largest int to 1, keeps -1', () => {
    assert.deepEqual(
      [nextEpoch(0), nextEpoch(1), nextEpoch(0x7fffffff), nextEpoch(-1), nextEpoch(-5)],
      [1, 2, 1, -1, -1],
    )
  })

  it('epoch 0 answers every partition and creates a session at epoch 1; -1 and v<7 create none', () => {
    const c = cache()
    const topics = byId([ID_A, atZero(0, 1)], ['AAAAAAAAAAAAAAAAAAAAAw', [[0, 0]]])
    const context = ctxOf(c, { sessionEpoch: 0 }, topics)
    assert.equal(context.kind, 'full')
    const all = answerAll(targets(context, topics))
    const out = answerContext(c, context, all, 0)
    assert.deepEqual([out.errorCode, out.sessionId, out.answers.length], [0, 101, 3])
    const s = c.get(101)!
    assert.deepEqual([s.epoch, s.size, s.usesTopicIds], [1, 3, true])
    // The unknown topic id is kept, unnamed.
    assert.deepEqual(
      [...s.partitions.values()].map((p) => p.name),
      ['a', 'a', null],
    )

    for (const m of [
      { sessionEpoch: -1 },
      { sessionEpoch: 0, version: 6 },
      { sessionEpoch: 5, version: 6 },
    ]) {
      const k = ctxOf(c, m, topics)
      assert.equal(k.kind, 'sessionless')
      const o = answerContext(c, k, answerAll(targets(k, topics)), 0)
      assert.deepEqual([o.sessionId, o.answers.length], [0, 3])
    }
    assert.equal(c.size, 1)
  })

  it('a full fetch closes the session it names, with epoch 0 (then a new one) or -1', () => {
    const c = cache()
    const topics = byId([ID_A, [[0, 0]]])
    const first = create(c, topics)
    const again = ctxOf(c, { sessionId: first, sessionEpoch: 0 }, topics)
    assert.equal(c.get(first), undefined)
    const second = answerContext(c, again, answerAll(targets(again, topics)), 0).sessionId
    assert.deepEqual([first, second, c.size], [101, 102, 1])
    assert.equal(ctxOf(c, { sessionId: second, sessionEpoch: -1 }, topics).kind, 'sessionless')
    assert.equal(c.size, 0)
  })

  it('session errors: unknown id, wrong epoch, topic ids vs names either way; no partitions', () => {
    const c = cache()
    const withIds = create(c, byId([ID_A, [[0, 0]]]))
    const withNames = create(c, byName(['a', [[0, 0]]]), 0, false, 12)
    const err = (m: Meta) => {
      const k = ctxOf(c, m, byId([ID_A, [[0, 5]]]))
      const o = answerContext(c, k, [], 0)
      return [k.kind, o.errorCode, o.sessionId, o.answers.length]
    }
    assert.deepEqual(err({ sessionId: 999, sessionEpoch: 1 }), [
      'error',
      ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
      0,
      0,
    ])
    assert.deepEqual(err({ sessionId: withIds, sessionEpoch: 2 }), [
      'error',
      ErrorCode.INVALID_FETCH_SESSION_EPOCH,
      0,
      0,
    ])
    assert.deepEqual(err({ sessionId: withIds, sessionEpoch: 1, version: 12 }), [
      'error',
      ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
      0,
      0,
    ])
    assert.deepEqual(err({ sessionId: withNames, sessionEpoch: 1, version: 13 }), [
      'error',
      ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
      0,
      0,
    ])
    // An error changes nothing: the right epoch still works.
    assert.equal(ctxOf(c, { sessionId: withIds, sessionEpoch: 1 }).kind, 'incremental')
    assert.equal(c.get(withIds)!.epoch, 2)
  })

  it('epochs advance per incremental fetch and wrap from the largest int to 1', () => {
    const c = cache()
    const id = create(c, byId([ID_A, [[0, 0]]]))
    const s = c.get(id)!
    for (let e = 1; e <= 3; e++) {
      const k = ctxOf(c, { sessionId: id, sessionEpoch: e })
      assert.equal(answerContext(c, k, answerAll(targets(k, [])), 0).sessionId, id)
    }
    assert.equal(s.epoch, 4)
    s.epoch = 0x7fffffff
    assert.equal(ctxOf(c, { sessionId: id, sessionEpoch: 0x7fffffff }).kind, 'incremental')
    assert.equal(s.epoch, 1)
    assert.equal(ctxOf(c, { sessionId: id, sessionEpoch: 1 }).kind, 'incremental')
  })

  it('an incremental answer carries only partitions that changed, and the session keeps what it sent', () => {
    const c = cache()
    const topics = byId([ID_A, atZero(0, 1, 2, 3)])
    const id = create(c, topics) // every partition sent with hw 10, log start 0
    let epoch = 1
    const step = (states: Record<string, State>) => {
      const k = ctxOf(c, { sessionId: id, sessionEpoch: epoch++ })
      const o = answerContext(c, k, answerAll(targets(k, []), states), 0)
      assert.deepEqual([o.errorCode, o.sessionId], [0, id])
      return shown(o.answers)
    }
    assert.deepEqual(step({}), [])
    assert.deepEqual(step({ 'a:0': { records: 5, hw: 10 }, 'a:1': { hw: 11 }, 'a:2': { lso: 3 } }), [
      'a:0',
      'a:1',
      'a:2',
    ])
    // The session kept hw 11 and log start 3: unchanged now, so not sent again.
    assert.deepEqual(step({ 'a:1': { hw: 11 }, 'a:2': { lso: 3 } }), [])
    // An error is always sent, and forgets the high watermark: hw 10 is a change afterwards.
    const kept = { 'a:1': { hw: 11 }, 'a:2': { lso: 3 } }
    const error = { error: ErrorCode.NOT_LEADER_OR_FOLLOWER }
    assert.deepEqual(step({ ...kept, 'a:3': error }), ['a:3'])
    assert.deepEqual(step({ ...kept, 'a:3': error }), ['a:3'])
    assert.deepEqual(step(kept), ['a:3'])
    assert.deepEqual(step(kept), [])
    // Going back to a value sent earlier is a change too.
    assert.deepEqual(step({}), ['a:1', 'a:2'])
  })

  it('a partition that returned records moves to the end of the session order', () => {
    const c = cache()
    const id = create(c, byId([ID_A, atZero(0, 1, 2)]))
    const order = () => [...c.get(id)!.partitions.values()].map((p) => p.p.partition)
    const k = ctxOf(c, { sessionId: id, sessionEpoch: 1 })
    assert.deepEqual(order(), [0, 1, 2])
    answerContext(c, k, answerAll(targets(k, []), { 'a:0': { records: 1 }, 'a:1': { hw: 99 } }), 0)
    assert.deepEqual(order(), [1, 2, 0])
    const k2 = ctxOf(c, { sessionId: id, sessionEpoch: 2 })
    assert.deepEqual(
      targets(k2, []).map((t) => t.p.partition),
      [1, 2, 0],
    )
  })

  it('incremental requests add and update partitions, forgotten ones leave; empty closes the session', () => {
    const c = cache()
    const id = create(c, byId([ID_A, atZero(0, 1)]))
    const s = c.get(id)!
    // Add b-0, move a-1 to offset 7, forget a-0 (it is also named: forgetting comes last).
    const k = ctxOf(
      c,
      { sessionId: id, sessionEpoch: 1 },
      byId(
        [ID_B, [[0, 4]]],
        [
          ID_A,
          [
            [1, 7],
            [0, 9],
          ],
        ],
      ),
      [forget(ID_A, '', [0])],
    )
    assert.deepEqual(
      targets(k, []).map((t) => [t.name, t.p.partition, Number(t.p.fetchOffset)]),
      [
        ['a', 1, 7],
        ['b', 0, 4],
      ],
    )
    // The new partition has sent nothing yet: it is answered even unchanged.
    const o = answerContext(c, k, answerAll(targets(k, [])), 0)
    assert.deepEqual(shown(o.answers), ['b:0'])
    // An incremental request naming nothing keeps the fetch offsets.
    const k2 = ctxOf(c, { sessionId: id, sessionEpoch: 2 })
    assert.deepEqual(
      targets(k2, []).map((t) => Number(t.p.fetchOffset)),
      [7, 4],
    )
    // Forgetting every partition closes the session: sessionless, SessionId 0.
    const k3 = ctxOf(
      c,
      { sessionId: id, sessionEpoch: 3 },
      [],
      [forget(ID_A, '', [1]), forget(ID_B, '', [0])],
    )
    assert.equal(k3.kind, 'sessionless')
    assert.equal(answerContext(c, k3, [], 0).sessionId, 0)
    assert.deepEqual([c.size, s.size], [0, 0])
  })

  it('sessions below v13 key partitions by name; forgotten topics by name', () => {
    const c = cache()
    const id = create(c, byName(['a', [[0, 0]]], ['b', [[0, 0]]]), 0, false, 12)
    const k = ctxOf(c, { sessionId: id, sessionEpoch: 1, version: 12 }, byName(['a', [[0, 3]]]), [
      forget(ZERO, 'b', [0]),
    ])
    assert.deepEqual(
      targets(k, [], 12).map((t) => [t.name, Number(t.p.fetchOffset)]),
      [['a', 3]],
    )
  })

  it('a session partition of an unknown topic id is named once a topic has the id', () => {
    const c = cache()
    const id = create(c, byId(['AAAAAAAAAAAAAAAAAAAABA', [[0, 0]]]))
    const k = ctxOf(c, { sessionId: id, sessionEpoch: 1 })
    assert.deepEqual(
      targets(k, []).map((t) => t.name),
      [null],
    )
    names.AAAAAAAAAAAAAAAAAAAABA = 'late'
    try {
      const k2 = ctxOf(c, { sessionId: id, sessionEpoch: 2 })
      assert.deepEqual(
        targets(k2, []).map((t) => t.name),
        ['late'],
      )
    } finally {
      delete names.AAAAAAAAAAAAAAAAAAAABA
    }
  })

  it('a duplicate request (the epoch moved on meanwhile) answers INVALID_FETCH_SESSION_EPOCH with the id', () => {
    const c = cache()
    const id = create(c, byId([ID_A, [[0, 0]]]))
    const k = ctxOf(c, { sessionId: id, sessionEpoch: 1 })
    const k2 = ctxOf(c, { sessionId: id, sessionEpoch: 2 })
    const late = answerContext(c, k, answerAll(targets(k, []), { 'a:0': { records: 3 } }), 0)
    assert.deepEqual(
      [late.errorCode, late.sessionId, late.answers.length],
      [ErrorCode.INVALID_FETCH_SESSION_EPOCH, id, 0],
    )
    assert.equal(answerContext(c, k2, [], 0).errorCode, 0)
  })

  it('CachedPartition.mustRespond without update only looks', () => {
    const cp = new CachedPartition('k', ID_A, 'a', createFetchRequestFetchPartition({}), 10n, 0n)
    assert.equal(cp.mustRespond(answerData({ hw: 12 }), false), true)
    assert.equal(cp.highWatermark, 10n)
    assert.equal(cp.mustRespond(answerData({ hw: 10 }), false), false)
  })
})

describe('fetch session cache', () => {
  it('ids are random, positive, unique: a drawn id in use is drawn again', () => {
    const c = cache(10, 1000, ids(7, 7, 7, 9))
    assert.deepEqual([create(c, byId([ID_A, [[0, 0]]])), create(c, byId([ID_A, [[0, 0]]]))], [7, 9])
    const real = new FetchSessionCache({ maxSlots: 100, evictionMs: 1000 })
    const seen = new Set<number>()
    for (let i = 0; i < 50; i++) {
      const id = real.newSessionId()
      assert.ok(Number.isInteger(id) && id > 0 && id < 0x7fffffff)
      seen.add(id)
    }
    assert.ok(seen.size > 40)
  })

  it('full with nothing evictable: SessionId 0 (a sessionless answer)', () => {
    const c = cache(2, 1000)
    create(c, byId([ID_A, atZero(0, 1)]), 0)
    create(c, byId([ID_A, atZero(0, 1)]), 0)
    // Smaller than both and none stale: nothing may go.
    assert.equal(create(c, byId([ID_A, [[0, 0]]]), 500), 0)
    assert.equal(c.size, 2)
    // No slots at all: never a session.
    assert.equal(create(cache(0), byId([ID_A, [[0, 0]]])), 0)
  })

  it('evicts the least recently used session once unused for longer than the eviction age', () => {
    const c = cache(2, 1000)
    const s1 = create(c, byId([ID_A, atZero(0, 1, 2)]), 0)
    const s2 = create(c, byId([ID_A, atZero(0, 1, 2)]), 0)
    ctxOf(c, { sessionId: s1, sessionEpoch: 1 }, [], [], 500) // s1 used at 500
    assert.equal(create(c, byId([ID_A, [[0, 0]]]), 1000), 0) // s2 unused for exactly 1000: kept
    const s3 = create(c, byId([ID_A, [[0, 0]]]), 1001)
    assert.ok(s3 !== 0)
    assert.deepEqual([c.get(s1) !== undefined, c.get(s2) === undefined, c.evictions], [true, true, 1])
    assert.equal(c.partitionsCached, 4, "s1's three partitions and s3's one")
  })

  it('evicts an old session (older than the eviction age when last used) for a larger one', () => {
    const c = cache(2, 1000)
    const big = create(c, byId([ID_A, atZero(0, 1, 2)]), 0)
    const small = create(c, byId([ID_A, atZero(0, 1)]), 0)
    // Both used at 1500: older than the age when used, but not stale.
    ctxOf(c, { sessionId: big, sessionEpoch: 1 }, [], [], 1500)
    ctxOf(c, { sessionId: small, sessionEpoch: 1 }, [], [], 1500)
    // One or two partitions are not more than the smallest (2): refused (Kafka's key with id 0).
    assert.equal(create(c, byId([ID_A, [[0, 0]]]), 2000), 0)
    assert.equal(create(c, byId([ID_B, atZero(0, 1)]), 2000), 0)
    // Three partitions: the smallest (2 partitions) goes.
    const three = create(c, byId([ID_B, atZero(0, 1, 2)]), 2000)
    assert.ok(three !== 0)
    assert.deepEqual([c.get(small), c.get(big) !== undefined], [undefined, true])
  })

  it('a session used only within the eviction age of its creation is not evictable by size', () => {
    const c = cache(1, 1000)
    const s = create(c, byId([ID_A, [[0, 0]]]), 0)
    ctxOf(c, { sessionId: s, sessionEpoch: 1 }, [], [], 900) // used at 900: age 900 then
    // At 1500 it is 1500 old, but was 900 old when last used: Kafka has not filed it as evictable.
    assert.equal(create(c, byId([ID_A, atZero(0, 1, 2)]), 1500), 0)
  })

  it("a follower's new session may evict a consumer's of any size; a consumer's not a follower's", () => {
    const c = cache(1, 1000)
    const consumer = create(c, byId([ID_A, atZero(0, 1)]), 0)
    // A consumer's new session cannot evict a young consumer session.
    assert.equal(create(c, byId([ID_A, atZero(0, 1, 2)]), 10), 0)
    // A follower's can, even a smaller one (privileged ranks above any consumer session).
    const follower = create(c, byId([ID_A, [[0, 0]]]), 10, true)
    assert.ok(follower !== 0)
    assert.equal(c.get(consumer), undefined)
    assert.equal(c.get(follower)!.privileged, true)
    // A consumer never evicts a follower's young session, nor another follower by size.
    assert.equal(create(c, byId([ID_A, atZero(0, 1, 2)]), 20), 0)
    assert.equal(create(c, byId([ID_A, atZero(0, 1, 2)]), 20, true), 0)
  })
})
