// Kafka's own Java producer and consumer (kafka-java) against a real Topograph process: the
// idempotent producer with every compression codec, a classic consumer group that commits, manual
// assignment, and seeking by timestamp (offsetsForTimes). Every record is compared field by field.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  InteropServer,
  JavaClients,
  type JavaRecord,
  kafkaJavaSkip,
  closeInterop,
  type ProduceRecord,
  storedBatches,
} from '../helpers/interop.js'

const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const
/** A base timestamp some minutes in the past (CreateTime topics accept any past timestamp). */
const T0 = Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000

/** The records the consumer must read back for `sent`, at the offsets the producer was given. */
function expected(
  sent: readonly ProduceRecord[],
  acks: readonly { partition: number; offset: number; timestamp: number }[],
): JavaRecord[] {
  return sent.map((r, i) => ({
    topic: r.topic,
    partition: acks[i]!.partition,
    offset: acks[i]!.offset,
    timestamp: r.timestamp!,
    timestampType: 'CreateTime',
    key: r.key ?? null,
    value: r.value,
    headers: (r.headers ?? []).map(([k, v]) => [k, v]),
    leaderEpoch: 0,
  }))
}

const byPosition = (a: JavaRecord, b: JavaRecord): number =>
  a.topic.localeCompare(b.topic) || a.partition - b.partition || a.offset - b.offset

describe('Kafka Java producer and consumer', () => {
  let server: InteropServer
  let java: JavaClients
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start()
    java = await JavaClients.start(server.bootstrap)
  })
  after(() => closeInterop(java, server))

  for (const codec of CODECS) {
    test(`idempotent producer, compression ${codec}: the consumer reads every field back`, {
      skip: kafkaJavaSkip,
      timeout: 240_000,
    }, async () => {
      const topic = `java-codec-${codec}`
      await java.call({ op: 'createTopics', topics: [{ name: topic, partitions: 2 }] })
      const sent: ProduceRecord[] = []
      for (let i = 0; i < 40; i++) {
        sent.push({
          topic,
          partition: i % 2,
          // a null key, an empty key and an empty value are kept apart from ordinary ones
          key: i === 3 ? null : i === 5 ? '' : `key-${i}`,
          value: i === 7 ? '' : `value ${i} ${codec} ${'x'.repeat(i * 7)}`,
          headers:
            i % 4 === 0
              ? []
              : [
                  ['trace', `t-${i}`],
                  ['empty', null],
                  ['trace', `second-${i}`],
                ],
          timestamp: T0 + i * 1000 + (i % 3),
        })
      }
      const acks = await java.produce(sent, {
        'enable.idempotence': true,
        acks: 'all',
        'compression.type': codec,
        'linger.ms': 100,
      })
      // Offsets are dense and in send order per partition; CreateTime keeps the producer's timestamps.
      const next = [0, 0]
      for (const [i, a] of acks.entries()) {
        assert.equal(a.partition, i % 2)
        assert.equal(a.offset, next[a.partition]!++, `offset of record ${i}`)
        assert.equal(a.timestamp, sent[i]!.timestamp)
      }
      const { records } = await java.consume({
        assign: [
          [topic, 0],
          [topic, 1],
        ],
        seek: 'beginning',
        maxRecords: sent.length,
        timeoutMs: 60_000,
      })
      assert.deepEqual(records.sort(byPosition), expected(sent, acks).sort(byPosition))
      // The log keeps the producer's codec and idempotence fields: one producer id, epoch 0, and
      // sequences that start at 0 on each partition (so equal to the offsets here).
      const ids = new Set<number>()
      for (const p of [0, 1]) {
        const batches = await storedBatches(server.bootstrap, topic, p)
        assert.equal(
          batches.reduce((a, b) => a + b.recordsCount, 0),
          20,
        )
        for (const b of batches) {
          assert.equal(b.codec, CODECS.indexOf(codec), `codec of ${JSON.stringify(b)}`)
          assert.deepEqual([b.producerEpoch, b.baseSequence, b.partitionLeaderEpoch], [0, b.baseOffset, 0])
          ids.add(b.producerId)
        }
      }
      assert.equal(ids.size, 1)
      assert.ok([...ids][0]! >= 0)
    })
  }

  test('classic group: commits, and a second member resumes exactly where the first stopped', {
    skip: kafkaJavaSkip,
    timeout: 300_000,
  }, async () => {
    const topic = 'java-group'
    await java.call({ op: 'createTopics', topics: [{ name: topic, partitions: 3 }] })
    const sent: ProduceRecord[] = Array.from({ length: 30 }, (_, i) => ({
      topic,
      partition: i % 3,
      key: `k${i}`,
      value: `v${i}`,
      headers: [['n', String(i)]],
      timestamp: T0 + i,
    }))
    const acks = await java.produce(sent)
    const all = expected(sent, acks).sort(byPosition)
    const group = {
      'group.id': 'java-classic-group',
      'group.protocol': 'classic',
      'max.poll.records': 4,
    }
    const first = await java.consume({
      config: group,
      subscribe: [topic],
      maxRecords: 12,
      commit: true,
      timeoutMs: 60_000,
    })
    assert.equal(first.records.length, 12)
    // Per partition the first member read a prefix of the partition and committed its end.
    const committedAfterFirst = new Map<number, number>()
    for (const p of [0, 1, 2]) {
      const mine = first.records.filter((r) => r.partition === p).sort(byPosition)
      assert.deepEqual(mine, all.filter((r) => r.partition === p).slice(0, mine.length))
      if (mine.length > 0) committedAfterFirst.set(p, mine.length)
    }
    assert.deepEqual(
      first.committed,
      [...committedAfterFirst].sort((a, b) => a[0] - b[0]).map(([p, o]) => [topic, p, o]),
    )
    const second = await java.consume({
      config: group,
      subscribe: [topic],
      maxRecords: 18,
      commit: true,
      timeoutMs: 60_000,
    })
    // Together they read every record once.
    assert.deepEqual([...first.records, ...second.records].sort(byPosition), all)
    assert.deepEqual(second.committed, [
      [topic, 0, 10],
      [topic, 1, 10],
      [topic, 2, 10],
    ])
  })

  test('manual assignment: seek to an offset, and seek by timestamp with offsetsForTimes', {
    skip: kafkaJavaSkip,
    timeout: 240_000,
  }, async () => {
    const topic = 'java-times'
    await java.call({ op: 'createTopics', topics: [{ name: topic, partitions: 1 }] })
    const sent: ProduceRecord[] = Array.from({ length: 10 }, (_, i) => ({
      topic,
      partition: 0,
      key: `k${i}`,
      value: `at ${i}`,
      timestamp: T0 + i * 1000,
    }))
    // one record per request, so that the timestamps fall in different batches
    const acks = []
    for (const r of sent) acks.push(...(await java.produce([r], { 'linger.ms': 0 })))
    const all = expected(sent, acks)

    const fromSeven = await java.consume({
      assign: [[topic, 0]],
      seek: { offsets: [[topic, 0, 7]] },
      maxRecords: 3,
      timeoutMs: 60_000,
    })
    assert.deepEqual(fromSeven.records, all.slice(7))

    // The first record at or after T0 + 3500 is offset 4 (T0 + 4000).
    const byTime = await java.consume({
      assign: [[topic, 0]],
      seek: { timestamps: [[topic, 0, T0 + 3500]] },
      maxRecords: 6,
      timeoutMs: 60_000,
    })
    assert.deepEqual(byTime.offsetsForTimes, [{ topic, partition: 0, offset: 4, timestamp: T0 + 4000 }])
    assert.deepEqual(byTime.records, all.slice(4))

    // An exact hit, the first record, and a time after the last record (no offset).
    for (const [ts, offset] of [
      [T0 + 6000, 6],
      [T0 - 1, 0],
    ] as const) {
      const r = await java.consume({
        assign: [[topic, 0]],
        seek: { timestamps: [[topic, 0, ts]] },
        maxRecords: 1,
        timeoutMs: 60_000,
      })
      assert.deepEqual(r.offsetsForTimes, [{ topic, partition: 0, offset, timestamp: T0 + offset * 1000 }])
      assert.deepEqual(r.records, [all[offset]])
    }
    const none = await java.consume({
      assign: [[topic, 0]],
      seek: { timestamps: [[topic, 0, T0 + 9001]] },
      maxRecords: 0,
      timeoutMs: 1,
    })
    assert.deepEqual(none.offsetsForTimes, [{ topic, partition: 0, offset: null, timestamp: null }])
  })
  test('acks 0 and 1 without idempotence; read_committed; fetch limits of one byte', {
    skip: kafkaJavaSkip,
    timeout: 240_000,
  }, async () => {
    const topic = 'java-acks'
    await java.call({ op: 'createTopics', topics: [{ name: topic, partitions: 1 }] })
    const batch = (from: number): ProduceRecord[] =>
      Array.from({ length: 10 }, (_, n) => ({
        topic,
        partition: 0,
        key: `k${from + n}`,
        value: `v${from + n} ${'y'.repeat(200)}`,
        timestamp: T0 + from + n,
      }))
    // acks=1: offsets as usual; acks=0: the producer learns no offset (-1), the records still land.
    const one = await java.produce(batch(0), { acks: '1', 'enable.idempotence': false })
    assert.deepEqual(
      one.map((a) => a.offset),
      Array.from({ length: 10 }, (_, i) => i),
    )
    const zero = await java.produce(batch(10), { acks: '0', 'enable.idempotence': false })
    assert.deepEqual(
      zero.map((a) => a.offset),
      Array.from({ length: 10 }, () => -1),
    )
    const all = [...batch(0), ...batch(10)]
    const want = all.map((r, i) => [i, r.key, r.value])
    // read_committed: without transactions the last stable offset is the high watermark.
    const committed = await java.consume({
      config: { 'isolation.level': 'read_committed' },
      assign: [[topic, 0]],
      seek: 'beginning',
      maxRecords: 20,
      timeoutMs: 60_000,
    })
    assert.deepEqual(
      committed.records.map((r) => [r.offset, r.key, r.value]),
      want,
    )
    // Fetch limits below one batch: the broker still returns the first batch whole (KIP-74), so
    // the consumer makes progress through every batch.
    const tiny = await java.consume({
      config: { 'fetch.max.bytes': 1, 'max.partition.fetch.bytes': 1 },
      assign: [[topic, 0]],
      seek: 'beginning',
      maxRecords: 20,
      timeoutMs: 60_000,
    })
    assert.deepEqual(
      tiny.records.map((r) => [r.offset, r.key, r.value]),
      want,
    )
  })
})
