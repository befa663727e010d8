// fetch.max.buffered.bytes over concurrent Fetch requests: many consumers catching up at once
// (each asking for every partition from the start, with large MaxBytes) and not reading their
// sockets. Each answer's reads take their room from the bound as they are planned, so the bytes
// held stay within the bound plus, per answer, the one batch every answer carries.
import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { after, before, test } from 'node:test'
import type { FileLogStorage } from '../../src/log/file.js'
import type { LogManagerImpl } from '../../src/log/manager.js'
import { MIN_POOLED_BYTES, type ReadBufferPool } from '../../src/log/read-buffers.js'
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

const PARTITIONS = 4
/** About 240 kB a batch, 20 a partition (about 4.8 MB) in 2 MiB segments. */
const BATCHES = 20
const RECORDS = 15
const VALUE_BYTES = 16_000
const SEGMENT_BYTES = 2 * 1024 * 1024
const BOUND = 4 * 1024 * 1024
const CONSUMERS = 12
/** The pooled buffer that holds one batch: what an answer past the bound may still hold. */
const ONE_BATCH = 256 * 1024

let ts: TestServer
let c: WireClient
let pool: ReadBufferPool

before(async () => {
  ts = await startTestServer({
    'fetch.max.buffered.bytes': String(BOUND),
    'log.segment.bytes': String(SEGMENT_BYTES),
  })
  c = await WireClient.connect(ts.port)
  pool = ((ts.server.context.data.logs as LogManagerImpl).storage as FileLogStorage).readBuffers
  assert.deepEqual(await createTopics(c, [{ name: 'wide', partitions: PARTITIONS }]), [0])
  await fillPartitions(c, ['wide'], {
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

test('concurrent Fetch answers held unsent stay within fetch.max.buffered.bytes', async () => {
  assert.ok(MIN_POOLED_BYTES < ONE_BATCH)
  const sockets: Socket[] = []
  try {
    for (let i = 0; i < CONSUMERS; i++) sockets.push(await openSocket(ts.port))
    const request = fetchRequest(
      everyPartition('wide', PARTITIONS).map((x) => ({ ...x, maxBytes: 16 * 1024 * 1024 })),
      { maxBytes: 52_428_800 },
    )
    for (const s of sockets) s.pause()
    for (const s of sockets) s.write(requestFrame(1, 12, 1, request))
    await until('every answer started to arrive', () => sockets.every((s) => s.readableLength > 0))
    const peak = pool.peakLentBytes
    assert.ok(
      peak <= BOUND + CONSUMERS * ONE_BATCH,
      `peak ${peak} bytes held for ${CONSUMERS} answers, bound ${BOUND}`,
    )
    // Every answer carries at least its first batch, and each starts at offset 0.
    const answers = sockets.map((s) => fetchAnswerOn(s, 1))
    for (const s of sockets) s.resume()
    for (const body of await Promise.all(answers)) {
      const records = body.responses[0].partitions.map((x) => readRecords(x.records))
      assert.ok(records[0].length >= RECORDS, `first partition: ${records[0].length} records`)
      for (const r of records) if (r.length > 0) assert.equal(r[0].offset, 0)
    }
    await until('every read given back', () => pool.outstandingBytes === 0)
  } finally {
    for (const s of sockets) s.destroy()
  }
})
