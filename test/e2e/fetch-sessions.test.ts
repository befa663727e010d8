// Incremental fetch sessions (KIP-227) over TCP against a real server: a full fetch with epoch 0
// creates a session, incremental fetches answer only the partitions that changed (new records,
// a moved high watermark) in session order, with the fetch offsets the session keeps, the long
// poll over the session's partitions, forgotten partitions, a deleted and remade topic, every
// session error, the close with epoch -1, and a full cache answering SessionId 0.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ErrorCode } from '../../src/protocol/errors.js'
import {
  createTopics,
  type FetchOptions,
  type FetchPartition,
  fetch,
  makeBatch,
  produce,
  readRecords,
} from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

let ts: TestServer
let c: WireClient
/** Produces while c waits in a long poll (a connection answers one request at a time). */
let producer: WireClient

before(async () => {
  ts = await startTestServer()
  c = await WireClient.connect(ts.port)
  producer = await WireClient.connect(ts.port)
  assert.deepEqual(await createTopics(c, [{ name: 'fs', partitions: 3 }, { name: 'gone' }]), [0, 0])
})

after(async () => {
  c?.close()
  producer?.close()
  await ts?.stop()
})

const T0 = 1_700_000_000_000
const put = async (topic: string, partition: number, n: number) => {
  const records = Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `v${i}`, timestamp: T0 + i }))
  const [r] = await produce(producer, [{ topic, partition, records: makeBatch(records) }])
  assert.equal(r.errorCode, 0)
}
const part = (partition: number, offset: number, topic = 'fs'): FetchPartition => ({
  topic,
  partition,
  offset,
})

/** [partition, error, high watermark, records] of each answered partition. */
async function step(parts: FetchPartition[], o: FetchOptions) {
  const r = await fetch(c, parts, { maxWaitMs: 0, ...o })
  return {
    errorCode: r.errorCode,
    sessionId: r.sessionId,
    got: r.partitions.map((x) => [
      x.partitionIndex,
      x.errorCode,
      Number(x.highWatermark),
      readRecords(x.records).length,
    ]),
  }
}

describe('incremental fetch sessions', () => {
  let id = 0
  let epoch = 1

  it('a full fetch with epoch 0 creates a session and answers every partition', async () => {
    await put('fs', 0, 2)
    await put('fs', 1, 2)
    const r = await step([part(0, 0), part(1, 0), part(2, 0)], { sessionId: 0, sessionEpoch: 0 })
    assert.equal(r.errorCode, 0)
    assert.ok(r.sessionId > 0)
    id = r.sessionId
    assert.deepEqual(r.got, [
      [0, 0, 2, 2],
      [1, 0, 2, 2],
      [2, 0, 0, 0],
    ])
  })

  it('incremental fetches answer only what changed, keeping the fetch offsets they update', async () => {
    // The consumer moves its offsets on; nothing new: an empty answer in the session.
    let r = await step([part(0, 2), part(1, 2)], { sessionId: id, sessionEpoch: epoch++ })
    assert.deepEqual([r.errorCode, r.sessionId, r.got], [0, id, []])
    // Records in p2 (still at offset 0 in the session): only p2, though the request names nothing.
    await put('fs', 2, 1)
    r = await step([], { sessionId: id, sessionEpoch: epoch++ })
    assert.deepEqual(r.got, [[2, 0, 1, 1]])
    r = await step([part(2, 1)], { sessionId: id, sessionEpoch: epoch++ })
    assert.deepEqual(r.got, [])
  })

  it('the long poll covers the session partitions and wakes for an append to one', async () => {
    const pending = step([], { sessionId: id, sessionEpoch: epoch++, maxWaitMs: 5000 })
    await sleep(100)
    await put('fs', 1, 3)
    const r = await pending
    assert.deepEqual(r.got, [[1, 0, 5, 3]])
    await step([part(1, 5)], { sessionId: id, sessionEpoch: epoch++ })
  })

  it('answers in session order: a partition that returned records moves behind the others', async () => {
    // Session order now p0, p2, p1 (p2 and then p1 returned records).
    await put('fs', 1, 1)
    await put('fs', 2, 1)
    await put('fs', 0, 1)
    const r = await step([], { sessionId: id, sessionEpoch: epoch++ })
    assert.deepEqual(r.got, [
      [0, 0, 3, 1],
      [2, 0, 2, 1],
      [1, 0, 6, 1],
    ])
    await step([part(0, 3), part(1, 6), part(2, 2)], { sessionId: id, sessionEpoch: epoch++ })
  })

  it('a forgotten partition is no longer fetched', async () => {
    let r = await step([], {
      sessionId: id,
      sessionEpoch: epoch++,
      forgotten: [{ topic: 'fs', partitions: [0] }],
    })
    assert.deepEqual(r.got, [])
    await put('fs', 0, 1)
    r = await step([], { sessionId: id, sessionEpoch: epoch++ })
    assert.deepEqual(r.got, [])
    // Added again: answered with its records.
    r = await step([part(0, 3)], { sessionId: id, sessionEpoch: epoch++ })
    assert.deepEqual(r.got, [[0, 0, 4, 1]])
    // Until the consumer moves the offset on, the session reads the same records again.
    r = await step([], { sessionId: id, sessionEpoch: epoch++ })
    assert.deepEqual(r.got, [[0, 0, 4, 1]])
    r = await step([part(0, 4)], { sessionId: id, sessionEpoch: epoch++ })
    assert.deepEqual(r.got, [])
  })

  it('session errors at the top with no partitions: wrong epoch, unknown id, topic ids vs names', async () => {
    const expect = async (o: FetchOptions, errorCode: number) => {
      const r = await step([part(0, 0)], o)
      assert.deepEqual([r.errorCode, r.sessionId, r.got], [errorCode, 0, []])
    }
    await expect({ sessionId: id, sessionEpoch: epoch + 5 }, ErrorCode.INVALID_FETCH_SESSION_EPOCH)
    await expect({ sessionId: id, sessionEpoch: epoch - 1 }, ErrorCode.INVALID_FETCH_SESSION_EPOCH)
    await expect({ sessionId: id === 1 ? 2 : 1, sessionEpoch: 1 }, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    // A session made by v12 (topic names) asked with v13 (topic ids).
    const topicId = ts.server.context.topics.byName('fs')!.topicId
    const r = await fetch(c, [{ topic: '', topicId, partition: 0, offset: 0 }], {
      version: 13,
      sessionId: id,
      sessionEpoch: epoch,
    })
    assert.deepEqual(
      [r.errorCode, r.sessionId, r.partitions.length],
      [ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR, 0, 0],
    )
    // The errors left the session as it was.
    assert.deepEqual((await step([], { sessionId: id, sessionEpoch: epoch++ })).got, [])
  })

  it('epoch -1 closes the session: SessionId 0, then the id is unknown', async () => {
    const r = await step([part(0, 0)], { sessionId: id, sessionEpoch: -1 })
    assert.deepEqual([r.errorCode, r.sessionId, r.got.length], [0, 0, 1])
    const after = await step([], { sessionId: id, sessionEpoch: epoch })
    assert.equal(after.errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
  })

  it('a v13 session: a deleted topic answers UNKNOWN_TOPIC_OR_PARTITION, remade INCONSISTENT_TOPIC_ID', async () => {
    const topicId = ts.server.context.topics.byName('gone')!.topicId
    const v13 = (o: FetchOptions) =>
      fetch(c, o.sessionEpoch === 0 ? [{ topic: '', topicId, partition: 0, offset: 0 }] : [], {
        version: 13,
        maxWaitMs: 0,
        ...o,
      })
    const full = await v13({ sessionId: 0, sessionEpoch: 0 })
    assert.ok(full.sessionId > 0)
    const sid = full.sessionId
    assert.deepEqual((await v13({ sessionId: sid, sessionEpoch: 1 })).partitions, [])
    await c.request(20, 6, { topics: [{ name: 'gone', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], timeoutMs: 5000 })
    const deleted = await v13({ sessionId: sid, sessionEpoch: 2 })
    assert.deepEqual(
      deleted.partitions.map((x) => [x.topic, x.errorCode]),
      [[topicId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]],
    )
    assert.deepEqual(await createTopics(c, [{ name: 'gone' }]), [0])
    const remade = await v13({ sessionId: sid, sessionEpoch: 3 })
    assert.deepEqual(
      remade.partitions.map((x) => [x.topic, x.errorCode]),
      [[topicId, ErrorCode.INCONSISTENT_TOPIC_ID]],
    )
  })
})

describe('a full session cache', () => {
  it('answers a full fetch in full with SessionId 0 when no session may be evicted', async () => {
    const small = await startTestServer({ 'max.incremental.fetch.session.cache.slots': '1' })
    const k = await WireClient.connect(small.port)
    try {
      assert.deepEqual(await createTopics(k, [{ name: 'one', partitions: 2 }]), [0])
      const parts = [part(0, 0, 'one'), part(1, 0, 'one')]
      const first = await fetch(k, parts, { maxWaitMs: 0, sessionId: 0, sessionEpoch: 0 })
      assert.ok(first.sessionId > 0)
      const second = await fetch(k, parts, { maxWaitMs: 0, sessionId: 0, sessionEpoch: 0 })
      assert.deepEqual([second.errorCode, second.sessionId, second.partitions.length], [0, 0, 2])
      // The first session still works.
      const inc = await fetch(k, [], { maxWaitMs: 0, sessionId: first.sessionId, sessionEpoch: 1 })
      assert.deepEqual([inc.errorCode, inc.sessionId], [0, first.sessionId])
    } finally {
      k.close()
      await small.stop()
    }
  })
})
