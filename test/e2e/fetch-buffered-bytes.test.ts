// fetch.max.buffered.bytes: a consumer that sends a Fetch and never reads its socket holds the
// answer's record bytes in the server; past the bound, other Fetch answers carry at most one batch
// until answers drain, so clients that do not read cannot grow the server's memory without limit.
import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { after, before, test } from 'node:test'
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
import { openSocket, requestFrame, WireClient } from '../server/wire-client.js'

/** About 1 MB a partition: a whole answer (about 15 MB) outgrows the socket buffers. */
const PARTITIONS = 16
const BATCHES = 2
const RECORDS = 30
const VALUE_BYTES = 16_000
/** Most of a whole answer: what the kernel's socket buffers take of it is far less. */
const BOUND = 12 * 1024 * 1024

let ts: TestServer
let c: WireClient

before(async () => {
  ts = await startTestServer({ 'fetch.max.buffered.bytes': String(BOUND) })
  c = await WireClient.connect(ts.port)
  assert.deepEqual(
    await createTopics(c, [
      { name: 'stuck', partitions: PARTITIONS },
      { name: 'other', partitions: PARTITIONS },
    ]),
    [0, 0],
  )
  await fillPartitions(c, ['stuck', 'other'], {
    partitions: PARTITIONS,
    batches: BATCHES,
    records: RECORDS,
    value: (topic, partition, batch, i) => `${topic}/${partition}/${batch}/${i}/`.padEnd(VALUE_BYTES, 'x'),
  })
})

after(async () => {
  c?.close()
  await ts?.stop()
})

function sendFetch(socket: Socket, topic: string, correlationId: number): void {
  socket.write(requestFrame(1, 12, correlationId, fetchRequest(everyPartition(topic, PARTITIONS))))
}

/** The next answer on a socket that carries nothing else: records per partition. */
async function answerOf(socket: Socket, correlationId: number): Promise<number[]> {
  const body = await fetchAnswerOn(socket, correlationId)
  return body.responses[0].partitions.map((x) => readRecords(x.records).length)
}

/** An answer as large as the bound lets one be: whole partitions (about 1 MB each), then none. */
function assertUpToBound(records: number[]): void {
  const full = records.filter((n) => n === RECORDS * BATCHES).length
  assert.ok(full >= 12 && full < PARTITIONS, `${full} whole partitions`)
  assert.deepEqual(records, [...Array(full).fill(RECORDS * BATCHES), ...Array(PARTITIONS - full).fill(0)])
}

test('past fetch.max.buffered.bytes a Fetch carries one batch until the held answers drain', async () => {
  const logs = ts.server.context.data.logs
  const a = await openSocket(ts.port)
  const b = await openSocket(ts.port)
  try {
    // A reads nothing: its answer, as large as the bound lets it be, stays held (its read buffers
    // go back once all of it has been written to the socket).
    a.pause()
    sendFetch(a, 'stuck', 1)
    await until('the first answer started to arrive', () => a.readableLength > 0)
    const held = logs.lentReadBytes()
    // Counted by the pool buffers that hold it (a power of two each), so a little over the bound.
    assert.ok(held > BOUND - 1024 * 1024 && held < BOUND + 2 * 1024 * 1024, `held ${held} bytes`)
    // B's Fetch meanwhile: its first batch only.
    const limited = answerOf(b, 2)
    sendFetch(b, 'other', 2)
    assert.deepEqual(await limited, [RECORDS, ...Array(PARTITIONS - 1).fill(0)])
    // A reads its answer: the bytes it held are given back, and B gets everything again.
    const first = answerOf(a, 1)
    a.resume()
    assertUpToBound(await first)
    await until('every read given back', () => logs.lentReadBytes() === 0)
    const whole = answerOf(b, 3)
    sendFetch(b, 'other', 3)
    assertUpToBound(await whole)
  } finally {
    a.destroy()
    b.destroy()
  }
})
