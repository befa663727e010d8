// Fetch answers reference the log's read buffers, lent by a pool, instead of copying them: a buffer
// may be lent again only once the answer's socket write has completed. A consumer that does not
// read its socket leaves its answer in the kernel's and Node's write queues; another consumer's
// Fetch meanwhile must not get those buffers, or the first answer's bytes would change before
// they leave. And a consumer that goes away with its answer unsent gives the buffers back.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { FileLogStorage } from '../../src/log/file.js'
import type { LogManagerImpl } from '../../src/log/manager.js'
import type { ReadBufferPool } from '../../src/log/read-buffers.js'
import type * as p from '../../src/protocol/index.js'
import {
  createTopics,
  everyPartition,
  fetchAnswerOn,
  fetchRequest,
  fillPartitions,
  until,
  readRecords,
} from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import type { Socket } from 'node:net'
import { openSocket, requestFrame, WireClient } from '../server/wire-client.js'

/** Partitions per topic: about 1 MB each, so a whole answer (about 15 MB) outgrows the socket buffers. */
const PARTITIONS = 16
const RECORDS = 30
const VALUE_BYTES = 16_000

let ts: TestServer
let c: WireClient
let pool: ReadBufferPool

const value = (topic: string, partition: number, batch: number, i: number) =>
  `${topic}/${partition}/${batch}/${i}/`.padEnd(VALUE_BYTES, topic === 'stuck' ? 'a' : 'b')

before(async () => {
  ts = await startTestServer()
  c = await WireClient.connect(ts.port)
  pool = ((ts.server.context.data.logs as LogManagerImpl).storage as FileLogStorage).readBuffers
  assert.deepEqual(
    await createTopics(c, [
      { name: 'stuck', partitions: PARTITIONS },
      { name: 'other', partitions: PARTITIONS },
    ]),
    [0, 0],
  )
  await fillPartitions(c, ['stuck', 'other'], { partitions: PARTITIONS, batches: 2, records: RECORDS, value })
})

after(async () => {
  c?.close()
  await ts?.stop()
})

const allOf = (topic: string) => everyPartition(topic, PARTITIONS)

/** Each partition's records are exactly what was produced to it. */
function assertExact(
  topic: string,
  partitions: readonly { partitionIndex: number; records: Uint8Array | null }[],
) {
  assert.equal(partitions.length, PARTITIONS)
  for (const x of partitions) {
    const got = readRecords(x.records).map((r) => r.value)
    const expected = [0, 1].flatMap((batch) =>
      Array.from({ length: RECORDS }, (_, i) => value(topic, x.partitionIndex, batch, i)),
    )
    assert.equal(got.length, expected.length, `${topic}-${x.partitionIndex}`)
    for (let i = 0; i < got.length; i++)
      if (got[i] !== expected[i]) assert.fail(`${topic}-${x.partitionIndex} record ${i} changed`)
  }
}

/** Sends a Fetch of every partition of `topic` from offset 0 (the socket's only request). */
function sendFetch(socket: Socket, topic: string, correlationId: number): void {
  socket.write(requestFrame(1, 12, correlationId, fetchRequest(allOf(topic))))
}

/** The next answer on a socket that carries nothing else, its partitions decoded. */
async function answerOf(socket: Socket, correlationId: number): Promise<p.FetchResponsePartitionData[]> {
  const body = await fetchAnswerOn(socket, correlationId)
  assert.equal(body.responses.length, 1)
  return body.responses[0].partitions
}

test('an answer waiting in its socket keeps its read buffers: another Fetch meanwhile leaves its bytes intact', async () => {
  const a = await openSocket(ts.port)
  const b = await openSocket(ts.port)
  try {
    // A reads nothing: its answer fills the socket buffers, the rest waits in the server's queue.
    a.pause()
    sendFetch(a, 'stuck', 7)
    await until('the first answer started to arrive', () => a.readableLength > 0)
    // B's reads borrow from the same pool while A's answer is still on its way.
    const second = answerOf(b, 8)
    sendFetch(b, 'other', 8)
    assertExact('other', await second)
    const first = answerOf(a, 7)
    a.resume()
    assertExact('stuck', await first)
    await until('every buffer given back', () => pool.lentBytes === 0)
  } finally {
    a.destroy()
    b.destroy()
  }
})

test('a consumer that goes away with its answer unsent gives the read buffers back', async () => {
  const a = await openSocket(ts.port)
  a.pause()
  sendFetch(a, 'stuck', 9)
  await until('the answer started to arrive', () => a.readableLength > 0)
  assert.ok(pool.lentBytes > 0)
  a.destroy()
  await until('every buffer given back', () => pool.lentBytes === 0)
  // The pool lends them again: the next answer is whole and exact.
  const c2 = await openSocket(ts.port)
  try {
    const next = answerOf(c2, 10)
    sendFetch(c2, 'stuck', 10)
    assertExact('stuck', await next)
  } finally {
    c2.destroy()
  }
})
