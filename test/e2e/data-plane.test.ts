// The data plane over TCP against a real server: Produce and Fetch round trips with exact content
// (keys, values, headers, timestamps, offsets, the stored batch), every compression codec, acks
// 0/1/-1, the long poll woken by an append, the KIP-74 size limits, OFFSET_OUT_OF_RANGE,
// ListOffsets, DeleteRecords, OffsetForLeaderEpoch, the idempotent producer's retries, bad batches
// (the other partitions and the connection unaffected), topic ids, fetch sessions and versions.
import assert from 'node:assert/strict'
import { Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { crc32c } from '@node-rs/crc32'
import type { PartitionStore } from '../../src/log/storage.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import {
  batchHeaders,
  CODECS,
  type Codec,
  createTopics,
  fetch,
  fetchRequest,
  listOffset,
  makeBatch,
  produce,
  produceRequest,
  readRecords,
  type TestRecord,
} from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { decodeResponse, requestFrame, WireClient } from '../server/wire-client.js'

let ts: TestServer
let c: WireClient

before(async () => {
  ts = await startTestServer()
  c = await WireClient.connect(ts.port)
  assert.deepEqual(
    await createTopics(c, [
      { name: 'rt', partitions: 2 },
      { name: 'codecs', partitions: 5 },
      { name: 'acks' },
      { name: 'poll', partitions: 2 },
      { name: 'sizes', partitions: 2 },
      { name: 'offsets' },
      { name: 'del' },
      { name: 'idem' },
      { name: 'bad', partitions: 2 },
      { name: 'ids' },
      { name: 'compacted', configs: { 'cleanup.policy': 'compact' } },
      { name: 'small', configs: { 'max.message.bytes': '200' } },
      { name: 'lat', configs: { 'message.timestamp.type': 'LogAppendTime' } },
      { name: 'turn', partitions: 2 },
    ]),
    Array(14).fill(0),
  )
})

after(async () => {
  c?.close()
  await ts?.stop()
})

const T0 = 1_700_000_000_000
const recs = (n: number, prefix = 'r', ts0 = T0): TestRecord[] =>
  Array.from({ length: n }, (_, i) => ({
    key: `${prefix}k${i}`,
    value: `${prefix}v${i}`,
    timestamp: ts0 + i,
  }))

describe('produce and fetch round trips', () => {
  it('returns exactly what was produced: keys, null keys and values, headers, timestamps, offsets', async () => {
    const records: TestRecord[] = [
      {
        key: 'a',
        value: 'one',
        timestamp: T0,
        headers: [
          { key: 'h1', value: 'x' },
          { key: 'h2', value: null },
        ],
      },
      { key: null, value: 'two', timestamp: T0 + 5 },
      { key: 'c', value: null, timestamp: T0 - 3, headers: [{ key: 'only', value: '' }] },
    ]
    const sent = makeBatch(records)
    const [a] = await produce(c, [{ topic: 'rt', partition: 1, records: sent }])
    assert.deepEqual([a.errorCode, a.baseOffset, a.logAppendTimeMs, a.logStartOffset], [0, 0n, -1n, 0n])
    const [b] = await produce(c, [{ topic: 'rt', partition: 1, records: makeBatch(recs(2)) }])
    assert.equal(b.baseOffset, 3n)

    const f = await fetch(c, [{ topic: 'rt', partition: 1, offset: 0 }])
    assert.equal(f.errorCode, 0)
    const [part] = f.partitions
    assert.deepEqual(
      [part.errorCode, part.highWatermark, part.lastStableOffset, part.logStartOffset],
      [0, 5n, 5n, 0n],
    )
    assert.equal(part.abortedTransactions, null)
    assert.deepEqual(readRecords(part.records), [
      { offset: 0, ...records[0], headers: records[0].headers },
      { offset: 1, ...records[1], headers: [] },
      { offset: 2, ...records[2], headers: records[2].headers },
      ...recs(2).map((r, i) => ({ offset: 3 + i, ...r, headers: [] })),
    ])
    // The stored batch is the producer's bytes with only the base offset and leader epoch set.
    const first = part.records!.subarray(0, sent.byteLength)
    assert.deepEqual(Buffer.from(first.subarray(12, 16)), Buffer.from([0, 0, 0, 0]))
    assert.deepEqual(Buffer.from(first.subarray(16)), Buffer.from(sent.subarray(16)))
    assert.deepEqual(
      batchHeaders(part.records).map((h) => [h.baseOffset, h.partitionLeaderEpoch]),
      [
        [0, 0],
        [3, 0],
      ],
    )
    for (const h of batchHeaders(part.records)) assert.ok(h.recordsCount > 0)
    assert.equal(crc32c(first.subarray(21)), Buffer.from(first).readUInt32BE(17))

    // The other partition stayed empty; reading at the end is no error and no records.
    const g = await fetch(c, [
      { topic: 'rt', partition: 0, offset: 0 },
      { topic: 'rt', partition: 1, offset: 5 },
    ])
    assert.deepEqual(
      g.partitions.map((x) => [x.partitionIndex, x.errorCode, x.highWatermark, x.records!.byteLength]),
      [
        [0, 0, 0n, 0],
        [1, 0, 5n, 0],
      ],
    )
  })

  for (const codec of Object.keys(CODECS) as Codec[]) {
    it(`${codec}: a compressed batch round-trips`, async () => {
      const partition = CODECS[codec]
      const records = recs(20, codec).map((r) => ({ ...r, value: `${r.value}-${'x'.repeat(50)}` }))
      const [a] = await produce(c, [{ topic: 'codecs', partition, records: makeBatch(records, { codec }) }])
      assert.deepEqual([a.errorCode, a.baseOffset], [0, 0n])
      const f = await fetch(c, [{ topic: 'codecs', partition, offset: 0 }])
      assert.deepEqual(
        readRecords(f.partitions[0].records),
        records.map((r, i) => ({ offset: i, ...r, headers: [] })),
      )
      assert.deepEqual(
        batchHeaders(f.partitions[0].records).map((h) => h.attributes & 7),
        [partition],
      )
    })
  }

  it('a LogAppendTime topic stamps the batch and answers the append time', async () => {
    const before = Date.now()
    const [a] = await produce(c, [{ topic: 'lat', partition: 0, records: makeBatch(recs(2)) }])
    assert.equal(a.errorCode, 0)
    const at = Number(a.logAppendTimeMs)
    assert.ok(at >= before && at <= Date.now(), `${at}`)
    const f = await fetch(c, [{ topic: 'lat', partition: 0, offset: 0 }])
    assert.deepEqual(
      readRecords(f.partitions[0].records).map((r) => r.timestamp),
      [at, at],
    )
  })
})

describe('acks', () => {
  it('acks 1 and -1 answer after the append; acks 0 answers nothing', async () => {
    const [one] = await produce(c, [{ topic: 'acks', partition: 0, records: makeBatch(recs(1)) }], {
      acks: 1,
    })
    assert.deepEqual([one.errorCode, one.baseOffset], [0, 0n])
    const [all] = await produce(c, [{ topic: 'acks', partition: 0, records: makeBatch(recs(1)) }], {
      acks: -1,
    })
    assert.deepEqual([all.errorCode, all.baseOffset], [0, 1n])
    const own = await WireClient.connect(ts.port)
    try {
      own.write(
        requestFrame(
          0,
          9,
          77,
          produceRequest([{ topic: 'acks', partition: 0, records: makeBatch(recs(1)) }], 0),
        ),
      )
      // The next answer on the connection is the ListOffsets one: the Produce got none.
      const lo = await own.request<p.ListOffsetsResponse>(2, 11, {
        topics: [
          { name: 'acks', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] },
        ],
      })
      assert.equal(lo.body.topics[0].partitions[0].offset, 3n)
      // acks 0 with a failing partition closes the connection.
      own.write(
        requestFrame(
          0,
          9,
          78,
          produceRequest([{ topic: 'no-such-topic', partition: 0, records: makeBatch(recs(1)) }], 0),
        ),
      )
      assert.equal(await own.closedWithin(5000), true)
    } finally {
      own.close()
    }
  })

  it('requests sent in one write (one socket chunk): each batch appended whole at its own offset', async () => {
    // The log rewrites each batch in place in the request's frame; the frames lie side by side in
    // the chunk the server read, a bad one among them.
    const own = await WireClient.connect(ts.port)
    try {
      const start = (await listOffset(c, 'rt', 1, -1)).offset
      const batches = [makeBatch(recs(2, 'a')), makeBatch(recs(3, 'b')), makeBatch(recs(1, 'c'))]
      const bad = makeBatch(recs(1, 'x'))
      bad[bad.length - 1] ^= 1 // CRC
      const frames = [batches[0], bad, batches[1], batches[2]].map((b, i) =>
        requestFrame(0, 9, 100 + i, produceRequest([{ topic: 'rt', partition: 1, records: b }], 1)),
      )
      own.write(Buffer.concat(frames))
      const codes: number[] = []
      for (let i = 0; i < frames.length; i++) {
        const f = (await own.nextFrame())!
        // ProduceResponse v9: correlation id, header tags, topics, name "rt", partitions, index.
        codes.push(f.readInt16BE(4 + 1 + 1 + 1 + 2 + 1 + 4))
      }
      assert.deepEqual(codes, [0, ErrorCode.CORRUPT_MESSAGE, 0, 0])
      const [part] = (await fetch(c, [{ topic: 'rt', partition: 1, offset: Number(start) }])).partitions
      assert.deepEqual(
        readRecords(part.records).map((r) => [r.offset - Number(start), r.value]),
        [
          [0, 'av0'],
          [1, 'av1'],
          [2, 'bv0'],
          [3, 'bv1'],
          [4, 'bv2'],
          [5, 'cv0'],
        ],
      )
    } finally {
      own.close()
    }
  })

  it('Produce requests of one socket read are pipelined: one segment write, answered in order after it', async () => {
    const log = ts.server.context.data.logs.partition('turn', 0)!
    const store = (log as unknown as { store: PartitionStore }).store
    const writes: number[] = []
    const append = store.append.bind(store)
    const appendBatches = store.appendBatches.bind(store)
    store.append = (batch, info) => {
      writes.push(1)
      append(batch, info)
    }
    store.appendBatches = (chunks, spans) => {
      writes.push(spans.length)
      appendBatches(chunks, spans)
    }
    const own = await WireClient.connect(ts.port)
    try {
      // Warm: the first Produce of a partition takes longer than the rest.
      await produce(own, [{ topic: 'turn', partition: 0, records: makeBatch(recs(1, 'w')) }], { acks: 1 })
      writes.length = 0
      const bad = makeBatch(recs(1, 'x'))
      bad[bad.length - 1] ^= 1 // CRC
      const batches = [makeBatch(recs(2, 'a')), bad, makeBatch(recs(1, 'b')), makeBatch(recs(3, 'c'))]
      const frames = batches.map((b, i) =>
        requestFrame(0, 9, 200 + i, produceRequest([{ topic: 'turn', partition: 0, records: b }], 1)),
      )
      // A request that is not pipelined, behind them: answered after them, and it sees them.
      frames.push(
        requestFrame(2, 7, 300, {
          replicaId: -1,
          isolationLevel: 0,
          topics: [
            { name: 'turn', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] },
          ],
        }),
      )
      own.write(Buffer.concat(frames))
      const answers: [number, number, bigint][] = []
      for (let i = 0; i < 4; i++) {
        const f = (await own.nextFrame())!
        const r = decodeResponse<p.ProduceResponse>(0, 9, f)
        const part = r.body.responses[0].partitionResponses[0]
        answers.push([r.correlationId, part.errorCode, part.baseOffset])
      }
      assert.deepEqual(answers, [
        [200, 0, 1n],
        [201, ErrorCode.CORRUPT_MESSAGE, -1n],
        [202, 0, 3n],
        [203, 0, 4n],
      ])
      const lo = decodeResponse<p.ListOffsetsResponse>(2, 7, (await own.nextFrame())!)
      assert.equal(lo.correlationId, 300)
      assert.equal(lo.body.topics[0].partitions[0].offset, 7n)
      // One write for the three unless the connection's turn budget (1 ms) cut the run between
      // them, as it may on a loaded machine; without pipelining each write would hold one batch.
      assert.equal(
        writes.reduce((a, b) => a + b, 0),
        3,
      )
      assert.ok(Math.max(...writes) >= 2, `batches per segment write: ${writes}`)
    } finally {
      own.close()
      store.append = append
      store.appendBatches = appendBatches
    }
  })

  it('the Produce answers one segment write releases leave the connection in one socket write', async () => {
    // Every server-side socket write (its local port is the server's), with the correlation ids of
    // the answer frames it carries.
    const writes: number[][] = []
    const write = Socket.prototype.write
    Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
      if (this.localPort === ts.port && chunk instanceof Uint8Array) {
        const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        const ids: number[] = []
        for (let at = 0; at + 8 <= b.length; at += 4 + b.readInt32BE(at)) ids.push(b.readInt32BE(at + 4))
        writes.push(ids)
      }
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
    } as typeof write
    const own = await WireClient.connect(ts.port)
    try {
      await produce(own, [{ topic: 'turn', partition: 1, records: makeBatch(recs(1, 'w')) }], { acks: 1 })
      writes.length = 0
      const frames = [1, 2, 3, 4].map((n, i) =>
        requestFrame(
          0,
          9,
          400 + i,
          produceRequest([{ topic: 'turn', partition: 1, records: makeBatch(recs(n, 'a')) }], 1),
        ),
      )
      own.write(Buffer.concat(frames))
      const answers: [number, number, bigint][] = []
      for (let i = 0; i < 4; i++) {
        const r = decodeResponse<p.ProduceResponse>(0, 9, (await own.nextFrame())!)
        const part = r.body.responses[0].partitionResponses[0]
        answers.push([r.correlationId, part.errorCode, part.baseOffset])
      }
      assert.deepEqual(answers, [
        [400, 0, 1n],
        [401, 0, 2n],
        [402, 0, 4n],
        [403, 0, 7n],
      ])
      // One write of one buffer, unless the connection's turn budget (1 ms) cut the run between
      // them, as it may on a loaded machine: then each segment write's answers leave together.
      assert.ok(writes.length < 4, `answers a socket write: ${JSON.stringify(writes)}`)
      assert.deepEqual(writes.flat(), [400, 401, 402, 403])
    } finally {
      Socket.prototype.write = write
      own.close()
    }
  })

  it('acks outside -1, 0, 1: INVALID_REQUIRED_ACKS and nothing appended', async () => {
    const [a] = await produce(c, [{ topic: 'acks', partition: 0, records: makeBatch(recs(1)) }], { acks: 2 })
    assert.equal(a.errorCode, ErrorCode.INVALID_REQUIRED_ACKS)
    assert.equal((await listOffset(c, 'acks', 0, -1)).offset, 3)
  })
})

describe('the long poll', () => {
  it('a parked fetch returns promptly when a record is appended, and uses no CPU while it waits', async () => {
    const consumer = await WireClient.connect(ts.port)
    try {
      const cpu0 = process.cpuUsage()
      const started = Date.now()
      const pending = fetch(consumer, [{ topic: 'poll', partition: 0, offset: 0 }], {
        maxWaitMs: 20_000,
        minBytes: 1,
      })
      await new Promise((r) => setTimeout(r, 1000))
      const idleCpu = process.cpuUsage(cpu0)
      const appendedAt = Date.now()
      await produce(c, [{ topic: 'poll', partition: 0, records: makeBatch(recs(1)) }])
      const f = await pending
      const answeredAt = Date.now()
      assert.equal(readRecords(f.partitions[0].records).length, 1)
      assert.ok(appendedAt - started >= 900, 'it waited')
      assert.ok(answeredAt - appendedAt < 1000, `answered ${answeredAt - appendedAt} ms after the append`)
      // A fetch that polled (a timer or setImmediate loop) would burn the whole second. Parked,
      // the process spends only what the runtime itself does meanwhile: garbage collection and the
      // JIT on their own threads, libuv's threadpool (fsyncs of the log), all counted by
      // process.cpuUsage. On a loaded CI machine that has reached 0.44 s in this second (which of
      // them was not traced); the bound leaves room for it and still fails a polling fetch.
      assert.ok(idleCpu.user + idleCpu.system < 700_000, `CPU while parked: ${JSON.stringify(idleCpu)}`)
    } finally {
      consumer.close()
    }
  })

  it('waits until MinBytes are there, or MaxWaitMs passes', async () => {
    const consumer = await WireClient.connect(ts.port)
    try {
      const t0 = Date.now()
      const none = await fetch(consumer, [{ topic: 'poll', partition: 1, offset: 0 }], {
        maxWaitMs: 300,
        minBytes: 1,
      })
      assert.ok(Date.now() - t0 >= 290, 'waited MaxWaitMs')
      assert.equal(none.partitions[0].records!.byteLength, 0)
      const pending = fetch(consumer, [{ topic: 'poll', partition: 1, offset: 0 }], {
        maxWaitMs: 10_000,
        minBytes: 300,
      })
      const batch = makeBatch(recs(1))
      assert.ok(batch.byteLength < 300)
      await produce(c, [{ topic: 'poll', partition: 1, records: batch }])
      let settled = false
      void pending.then(() => {
        settled = true
      })
      await new Promise((r) => setTimeout(r, 200))
      assert.equal(settled, false, 'fewer than MinBytes: still waiting')
      const big = makeBatch([{ key: 'k', value: 'v'.repeat(400), timestamp: T0 }])
      await produce(c, [{ topic: 'poll', partition: 1, records: big }])
      const f = await pending
      assert.equal(readRecords(f.partitions[0].records).length, 2)
    } finally {
      consumer.close()
    }
  })
})

describe('size limits (KIP-74)', () => {
  const big = (i: number) => makeBatch([{ key: `k${i}`, value: 'x'.repeat(1000), timestamp: T0 + i }])
  before(async () => {
    for (let i = 0; i < 3; i++) await produce(c, [{ topic: 'sizes', partition: 0, records: big(i) }])
    await produce(c, [{ topic: 'sizes', partition: 1, records: big(9) }])
  })

  it('the first batch comes whole even when larger than both limits', async () => {
    const f = await fetch(c, [{ topic: 'sizes', partition: 0, offset: 0, maxBytes: 10 }], { maxBytes: 10 })
    assert.deepEqual(
      readRecords(f.partitions[0].records).map((r) => r.offset),
      [0],
    )
  })

  it('PartitionMaxBytes and MaxBytes bound the rest; a later partition gets no partial first batch', async () => {
    const size = big(0).byteLength
    const f = await fetch(
      c,
      [
        { topic: 'sizes', partition: 0, offset: 0, maxBytes: 2 * size + 10 },
        { topic: 'sizes', partition: 1, offset: 0 },
      ],
      { maxBytes: 2 * size + 20 },
    )
    assert.deepEqual(
      f.partitions.map((x) => [x.partitionIndex, readRecords(x.records).map((r) => r.offset)]),
      [
        [0, [0, 1]],
        [1, []],
      ],
    )
    for (const x of f.partitions) assert.equal(x.records!.byteLength % size, 0, 'whole batches only')
  })

  it('fetching from the middle of a batch returns the batch that holds the offset', async () => {
    await produce(c, [{ topic: 'sizes', partition: 1, records: makeBatch(recs(3)) }])
    const f = await fetch(c, [{ topic: 'sizes', partition: 1, offset: 2 }])
    assert.deepEqual(
      batchHeaders(f.partitions[0].records).map((h) => h.baseOffset),
      [1],
    )
  })
})

describe('offsets', () => {
  before(async () => {
    await produce(c, [{ topic: 'offsets', partition: 0, records: makeBatch(recs(3, 'a', T0)) }])
    await produce(c, [
      {
        topic: 'offsets',
        partition: 0,
        records: makeBatch([{ key: 'm', value: 'max', timestamp: T0 + 1000 }]),
      },
    ])
    await produce(c, [{ topic: 'offsets', partition: 0, records: makeBatch(recs(2, 'b', T0 + 500)) }])
  })

  it('a fetch offset beyond the log end, or below its start: OFFSET_OUT_OF_RANGE with -1 offsets', async () => {
    const f = await fetch(c, [{ topic: 'offsets', partition: 0, offset: 7 }])
    const [x] = f.partitions
    assert.deepEqual(
      [x.errorCode, x.highWatermark, x.lastStableOffset, x.logStartOffset, x.records!.byteLength],
      [ErrorCode.OFFSET_OUT_OF_RANGE, -1n, -1n, -1n, 0],
    )
    const atEnd = await fetch(c, [{ topic: 'offsets', partition: 0, offset: 6 }])
    assert.equal(atEnd.partitions[0].errorCode, 0)
  })

  it('ListOffsets: earliest, latest, max timestamp, by timestamp, earliest local, tiered codes', async () => {
    assert.deepEqual(await listOffset(c, 'offsets', 0, -2), {
      errorCode: 0,
      offset: 0,
      timestamp: -1,
      leaderEpoch: 0,
    })
    assert.deepEqual(await listOffset(c, 'offsets', 0, -1), {
      errorCode: 0,
      offset: 6,
      timestamp: -1,
      leaderEpoch: 0,
    })
    assert.deepEqual(await listOffset(c, 'offsets', 0, -1, 1), {
      errorCode: 0,
      offset: 6,
      timestamp: -1,
      leaderEpoch: 0,
    })
    assert.deepEqual(await listOffset(c, 'offsets', 0, -3), {
      errorCode: 0,
      offset: 3,
      timestamp: T0 + 1000,
      leaderEpoch: 0,
    })
    assert.deepEqual(await listOffset(c, 'offsets', 0, -4), {
      errorCode: 0,
      offset: 0,
      timestamp: -1,
      leaderEpoch: 0,
    })
    assert.deepEqual(await listOffset(c, 'offsets', 0, -5), {
      errorCode: 0,
      offset: -1,
      timestamp: -1,
      leaderEpoch: -1,
    })
    assert.deepEqual(await listOffset(c, 'offsets', 0, T0 + 1), {
      errorCode: 0,
      offset: 1,
      timestamp: T0 + 1,
      leaderEpoch: 0,
    })
    assert.deepEqual(await listOffset(c, 'offsets', 0, T0 + 501), {
      errorCode: 0,
      offset: 3,
      timestamp: T0 + 1000,
      leaderEpoch: 0,
    })
    assert.deepEqual(await listOffset(c, 'offsets', 0, T0 + 5000), {
      errorCode: 0,
      offset: -1,
      timestamp: -1,
      leaderEpoch: -1,
    })
    // v6 knows no max timestamp; v3 carries no leader epoch.
    assert.equal((await listOffset(c, 'offsets', 0, -3, 0, 6)).errorCode, ErrorCode.UNSUPPORTED_VERSION)
    assert.deepEqual(await listOffset(c, 'offsets', 0, -1, 0, 3), {
      errorCode: 0,
      offset: 6,
      timestamp: -1,
      leaderEpoch: -1,
    })
  })

  it('DeleteRecords moves the log start; reads below it are out of range; earliest follows', async () => {
    await produce(c, [{ topic: 'del', partition: 0, records: makeBatch(recs(5)) }])
    const del = async (offset: bigint) =>
      (
        await c.request<p.DeleteRecordsResponse>(21, 2, {
          topics: [{ name: 'del', partitions: [{ partitionIndex: 0, offset }] }],
          timeoutMs: 1000,
        })
      ).body.topics[0].partitions[0]
    assert.deepEqual(await del(3n), { partitionIndex: 0, lowWatermark: 3n, errorCode: 0 })
    assert.deepEqual(await del(1n), { partitionIndex: 0, lowWatermark: 3n, errorCode: 0 })
    assert.deepEqual(await del(9n), {
      partitionIndex: 0,
      lowWatermark: -1n,
      errorCode: ErrorCode.OFFSET_OUT_OF_RANGE,
    })
    assert.equal((await listOffset(c, 'del', 0, -2)).offset, 3)
    assert.equal(
      (await fetch(c, [{ topic: 'del', partition: 0, offset: 2 }])).partitions[0].errorCode,
      ErrorCode.OFFSET_OUT_OF_RANGE,
    )
    const f = await fetch(c, [{ topic: 'del', partition: 0, offset: 3 }])
    assert.equal(f.partitions[0].logStartOffset, 3n)
    assert.deepEqual(await del(-1n), { partitionIndex: 0, lowWatermark: 5n, errorCode: 0 })
  })

  it('OffsetForLeaderEpoch: epoch 0 ends at the log end; fencing by the current epoch', async () => {
    const ask = async (currentLeaderEpoch: number, leaderEpoch: number) =>
      (
        await c.request<p.OffsetForLeaderEpochResponse>(23, 4, {
          replicaId: -1,
          topics: [{ topic: 'offsets', partitions: [{ partition: 0, currentLeaderEpoch, leaderEpoch }] }],
        })
      ).body.topics[0].partitions[0]
    assert.deepEqual(await ask(0, 0), { errorCode: 0, partition: 0, leaderEpoch: 0, endOffset: 6n })
    assert.deepEqual(await ask(-1, 3), { errorCode: 0, partition: 0, leaderEpoch: -1, endOffset: -1n })
    assert.equal((await ask(1, 0)).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH)
  })
})

describe('the idempotent producer', () => {
  it('InitProducerId gives a fresh id at epoch 0; a retried batch is not appended twice', async () => {
    const init = async () =>
      (
        await c.request<p.InitProducerIdResponse>(22, 4, {
          transactionalId: null,
          transactionTimeoutMs: 60000,
          producerId: -1n,
          producerEpoch: -1,
        })
      ).body
    const a = await init()
    const b = await init()
    assert.equal(a.errorCode, 0)
    assert.equal(a.producerEpoch, 0)
    assert.notEqual(a.producerId, b.producerId)
    const pid = Number(a.producerId)
    const batch = (seq: number, n: number) =>
      makeBatch(recs(n, `s${seq}`), { producerId: pid, producerEpoch: 0, baseSequence: seq })
    const [first] = await produce(c, [{ topic: 'idem', partition: 0, records: batch(0, 2) }])
    const [retry] = await produce(c, [{ topic: 'idem', partition: 0, records: batch(0, 2) }])
    assert.deepEqual([first.errorCode, first.baseOffset, retry.errorCode, retry.baseOffset], [0, 0n, 0, 0n])
    const [next] = await produce(c, [{ topic: 'idem', partition: 0, records: batch(2, 1) }])
    assert.equal(next.baseOffset, 2n)
    const [gap] = await produce(c, [{ topic: 'idem', partition: 0, records: batch(5, 1) }])
    assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    assert.equal((await listOffset(c, 'idem', 0, -1)).offset, 3)
    const described = await c.request<p.DescribeProducersResponse>(61, 0, {
      topics: [{ name: 'idem', partitionIndexes: [0] }],
    })
    const [state] = described.body.topics[0].partitions[0].activeProducers
    assert.deepEqual([state.producerId, state.producerEpoch, state.lastSequence], [BigInt(pid), 0, 2])
  })

  it('InitProducerId with a transactional id: the transaction coordinator answers', async () => {
    const idem = await c.request<p.InitProducerIdResponse>(22, 4, {
      transactionalId: null,
      transactionTimeoutMs: 60000,
      producerId: -1n,
      producerEpoch: -1,
    })
    const r = await c.request<p.InitProducerIdResponse>(22, 4, {
      transactionalId: 'tx',
      transactionTimeoutMs: 60000,
      producerId: -1n,
      producerEpoch: -1,
    })
    assert.deepEqual([r.body.errorCode, r.body.producerEpoch], [ErrorCode.NONE, 0])
    // Ids come from the same source as the idempotent producers' ones: never the same.
    assert.ok(r.body.producerId >= 0n && r.body.producerId !== idem.body.producerId)
  })
})

describe('bad batches', () => {
  it('a corrupt CRC fails its partition only; the connection serves on', async () => {
    const corrupt = makeBatch(recs(2))
    corrupt[corrupt.length - 1] ^= 0xff
    const answers = await produce(c, [
      { topic: 'bad', partition: 0, records: corrupt },
      { topic: 'bad', partition: 1, records: makeBatch(recs(1)) },
    ])
    assert.deepEqual(
      answers.map((a) => [a.index, a.errorCode]),
      [
        [0, ErrorCode.CORRUPT_MESSAGE],
        [1, 0],
      ],
    )
    assert.equal((await listOffset(c, 'bad', 0, -1)).offset, 0)
  })

  it('an old-format message set (magic 0 or 1) fails its partition with INVALID_RECORD, not a transaction error', async () => {
    // offset, size, crc, magic, attributes, [timestamp,] key -1, value "v". Where a v2 batch keeps
    // its attributes (byte 22) a magic-1 message has its timestamp: this one's has the
    // transactional bit there, which must not make it a transactional batch.
    const legacy = (magic: 0 | 1) => {
      const body = magic === 1 ? 1 + 1 + 8 + 4 + 4 + 1 : 1 + 1 + 4 + 4 + 1
      const b = new Uint8Array(12 + 4 + body)
      const v = new DataView(b.buffer)
      v.setInt32(8, 4 + body)
      b[16] = magic
      let at = 18
      if (magic === 1) {
        v.setBigInt64(at, 0x0000_0000_1000_0000n)
        at += 8
      }
      v.setInt32(at, -1)
      v.setInt32(at + 4, 1)
      b[at + 8] = 0x76
      return b
    }
    assert.equal(legacy(1)[22] & 0x10, 0x10)
    const answers = await produce(c, [
      { topic: 'bad', partition: 0, records: legacy(1) },
      { topic: 'bad', partition: 1, records: legacy(0) },
    ])
    assert.deepEqual(
      answers.map((a) => [a.index, a.errorCode]),
      [
        [0, ErrorCode.INVALID_RECORD],
        [1, ErrorCode.INVALID_RECORD],
      ],
    )
    assert.equal((await listOffset(c, 'bad', 0, -1)).offset, 0)
  })

  it('empty records, a non-zero base offset, a too-large batch, a null key on a compacted topic', async () => {
    const [empty] = await produce(c, [{ topic: 'bad', partition: 0, records: new Uint8Array(0) }])
    assert.equal(empty.errorCode, ErrorCode.INVALID_RECORD)
    const shifted = makeBatch(recs(1))
    new DataView(shifted.buffer, shifted.byteOffset).setBigInt64(0, 5n)
    const [base] = await produce(c, [{ topic: 'bad', partition: 0, records: shifted }])
    assert.equal(base.errorCode, ErrorCode.INVALID_RECORD)
    const [large] = await produce(c, [
      {
        topic: 'small',
        partition: 0,
        records: makeBatch([{ key: 'k', value: 'x'.repeat(300), timestamp: T0 }]),
      },
    ])
    assert.equal(large.errorCode, ErrorCode.MESSAGE_TOO_LARGE)
    const [nullKey] = await produce(c, [
      { topic: 'compacted', partition: 0, records: makeBatch([{ key: null, value: 'v', timestamp: T0 }]) },
    ])
    assert.equal(nullKey.errorCode, ErrorCode.INVALID_RECORD)
    assert.deepEqual(
      nullKey.recordErrors.map((e) => e.batchIndex),
      [0],
    )
    // Still serving.
    assert.equal((await listOffset(c, 'bad', 0, -1)).errorCode, 0)
  })

  it('unknown topic or partition; Produce never creates a topic', async () => {
    const answers = await produce(c, [
      { topic: 'nope', partition: 0, records: makeBatch(recs(1)) },
      { topic: 'bad', partition: 7, records: makeBatch(recs(1)) },
    ])
    assert.deepEqual(
      answers.map((a) => a.errorCode),
      [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    )
    assert.equal(ts.server.context.topics.byName('nope'), undefined)
  })
})

describe('topic ids, sessions and versions', () => {
  it('Produce v13 and Fetch v13 name topics by id; an unknown id is UNKNOWN_TOPIC_ID', async () => {
    const topicId = ts.server.context.topics.byName('ids')!.topicId
    const unknown = Buffer.alloc(16, 7).toString('base64url')
    const answers = await produce(
      c,
      [
        { topic: '', topicId, partition: 0, records: makeBatch(recs(2)) },
        { topic: '', topicId: unknown, partition: 0, records: makeBatch(recs(1)) },
      ],
      { version: 13 },
    )
    assert.deepEqual(
      answers.map((a) => [a.topic, a.errorCode]),
      [
        [topicId, 0],
        [unknown, ErrorCode.UNKNOWN_TOPIC_ID],
      ],
    )
    const f = await fetch(
      c,
      [
        { topic: '', topicId, partition: 0, offset: 0 },
        { topic: '', topicId: unknown, partition: 0, offset: 0 },
      ],
      { version: 17 },
    )
    assert.deepEqual(
      f.partitions.map((x) => [x.topic, x.errorCode, readRecords(x.records).length]),
      [
        [topicId, 0, 2],
        [unknown, ErrorCode.UNKNOWN_TOPIC_ID, 0],
      ],
    )
  })

  it('fetch sessions: a sessionless fetch gets SessionId 0; an unknown one FETCH_SESSION_ID_NOT_FOUND', async () => {
    const full = await fetch(c, [{ topic: 'rt', partition: 1, offset: 0 }], {
      sessionId: 0,
      sessionEpoch: -1,
    })
    assert.deepEqual([full.errorCode, full.sessionId, full.partitions.length], [0, 0, 1])
    const inc = await fetch(c, [{ topic: 'rt', partition: 1, offset: 0 }], { sessionId: 12, sessionEpoch: 1 })
    assert.deepEqual(
      [inc.errorCode, inc.sessionId, inc.partitions.length],
      [ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, 0],
    )
  })

  it('ApiVersions advertises Produce 0-13 and Fetch 4-18; a Produce v2 request closes the connection', async () => {
    const av = await c.request<p.ApiVersionsResponse>(18, 3, {
      clientSoftwareName: 't',
      clientSoftwareVersion: '1',
    })
    const range = (k: number) => {
      const a = av.body.apiKeys.find((x) => x.apiKey === k)
      return a === undefined ? null : [a.minVersion, a.maxVersion]
    }
    assert.deepEqual([0, 1, 2, 21, 22, 23, 33, 35, 37, 61].map(range), [
      [0, 13],
      [4, 18],
      [1, 11],
      [0, 2],
      [0, 5],
      [2, 4],
      [0, 2],
      [1, 5],
      [0, 3],
      [0, 0],
    ])
    const own = await WireClient.connect(ts.port)
    own.write(requestFrame(0, 2, 1, {}))
    assert.equal(await own.closedWithin(5000), true)
  })

  it('Metadata shows every partition led by this node at leader epoch 0 and creates a topic it is asked for', async () => {
    const ask = () =>
      c.request<p.MetadataResponse>(3, 12, {
        topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'auto-made' }],
        allowAutoTopicCreation: true,
      })
    const first = await ask()
    assert.equal(first.body.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    const second = await ask()
    assert.equal(second.body.topics[0].errorCode, 0)
    assert.deepEqual(
      second.body.topics[0].partitions.map((x) => [x.partitionIndex, x.leaderId, x.leaderEpoch]),
      [[0, 1, 0]],
    )
    const [a] = await produce(c, [{ topic: 'auto-made', partition: 0, records: makeBatch(recs(1)) }])
    assert.equal(a.errorCode, 0)
    const off = await c.request<p.MetadataResponse>(3, 12, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'not-made' }],
      allowAutoTopicCreation: false,
    })
    assert.equal(off.body.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    assert.equal(ts.server.context.topics.byName('not-made'), undefined)
  })

  it('CreatePartitions adds empty partitions that take records at once', async () => {
    const grow = async (count: number, validateOnly = false) =>
      (
        await c.request<p.CreatePartitionsResponse>(37, 3, {
          topics: [{ name: 'ids', count, assignments: null }],
          timeoutMs: 1000,
          validateOnly,
        })
      ).body.results[0]
    assert.deepEqual(await grow(3, true), { name: 'ids', errorCode: 0, errorMessage: null })
    assert.equal(ts.server.context.topics.byName('ids')!.numPartitions, 1)
    assert.deepEqual(await grow(3), { name: 'ids', errorCode: 0, errorMessage: null })
    assert.deepEqual(await grow(3), {
      name: 'ids',
      errorCode: ErrorCode.INVALID_PARTITIONS,
      errorMessage: 'Topic already has 3 partition(s).',
    })
    assert.deepEqual(await grow(2), {
      name: 'ids',
      errorCode: ErrorCode.INVALID_PARTITIONS,
      errorMessage: 'The topic ids currently has 3 partition(s); 2 would not be an increase.',
    })
    const [a] = await produce(c, [{ topic: 'ids', partition: 2, records: makeBatch(recs(1)) }])
    assert.deepEqual([a.errorCode, a.baseOffset], [0, 0n])
  })

  it('DescribeLogDirs lists the partitions with their sizes', async () => {
    const r = await c.request<p.DescribeLogDirsResponse>(35, 4, {
      topics: [{ topic: 'rt', partitions: [0, 1] }],
    })
    assert.equal(r.body.errorCode, 0)
    const sizes = r.body.results.flatMap((d) =>
      d.topics.flatMap((t) => t.partitions.map((x) => [t.name, x.partitionIndex, x.partitionSize > 0n])),
    )
    assert.deepEqual(sizes.sort(), [
      ['rt', 0, false],
      ['rt', 1, true],
    ])
  })
})

describe('large reads', () => {
  // About 3.3 MB per partition: reads this large run on the threadpool, not on the event loop.
  const BATCHES = 200
  const value = (p: number, i: number, k: number) => `${p}:${i}:${k}:`.padEnd(1024, 'v')
  const bulk = (p: number, i: number) =>
    makeBatch(Array.from({ length: 16 }, (_, k) => ({ key: `k${k}`, value: value(p, i, k), timestamp: T0 })))
  before(async () => {
    assert.deepEqual(await createTopics(c, [{ name: 'bulk', partitions: 2 }]), [0])
    // Sent back to back, answered one after the other.
    for (let i = 0; i < BATCHES; i++) {
      const req = produceRequest(
        [
          { topic: 'bulk', partition: 0, records: bulk(0, i) },
          { topic: 'bulk', partition: 1, records: bulk(1, i) },
        ],
        1,
      )
      c.write(requestFrame(0, 9, 8000 + i, req))
    }
    for (let i = 0; i < BATCHES; i++) {
      const r = decodeResponse<p.ProduceResponse>(0, 9, (await c.nextFrame(30_000))!)
      assert.equal(r.correlationId, 8000 + i)
      for (const x of r.body.responses[0].partitionResponses) assert.equal(x.errorCode, 0)
    }
  })

  it('a Fetch of many MB is answered whole and exact, in order with the requests after it', async () => {
    const big = fetchRequest(
      [
        { topic: 'bulk', partition: 0, offset: 0, maxBytes: 8 << 20 },
        { topic: 'bulk', partition: 1, offset: 16, maxBytes: 8 << 20 },
      ],
      { maxBytes: 16 << 20 },
    )
    const small = fetchRequest([{ topic: 'bulk', partition: 1, offset: 16 * BATCHES }], { maxWaitMs: 0 })
    // Sent back to back on one connection: the large Fetch, a Produce, a Fetch of what it appended.
    const more = produceRequest([{ topic: 'bulk', partition: 1, records: bulk(1, BATCHES) }], 1)
    c.write(
      Buffer.concat([
        requestFrame(1, 12, 9001, big),
        requestFrame(0, 9, 9002, more),
        requestFrame(1, 12, 9003, small),
      ]),
    )
    const answers = []
    for (let i = 0; i < 3; i++) answers.push((await c.nextFrame(30_000))!)
    const f = decodeResponse<p.FetchResponse>(1, 12, answers[0])
    const pr = decodeResponse<p.ProduceResponse>(0, 9, answers[1])
    const f2 = decodeResponse<p.FetchResponse>(1, 12, answers[2])
    assert.deepEqual([f.correlationId, pr.correlationId, f2.correlationId], [9001, 9002, 9003])
    const parts = f.body.responses[0].partitions
    assert.deepEqual(
      parts.map((x) => [x.partitionIndex, x.errorCode]),
      [
        [0, 0],
        [1, 0],
      ],
    )
    for (const [p, from] of [
      [0, 0],
      [1, 16],
    ]) {
      const got = readRecords(parts[p].records)
      assert.equal(got.length, 16 * BATCHES - from)
      got.forEach((r, j) => {
        const offset = from + j
        assert.equal(r.offset, offset)
        assert.equal(r.value, value(p, Math.floor(offset / 16), offset % 16))
      })
    }
    assert.equal(pr.body.responses[0].partitionResponses[0].baseOffset, BigInt(16 * BATCHES))
    assert.deepEqual(
      readRecords(f2.body.responses[0].partitions[0].records).map((r) => r.value),
      Array.from({ length: 16 }, (_, k) => value(1, BATCHES, k)),
    )
  })
})
