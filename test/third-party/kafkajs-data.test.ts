// KafkaJS producer and consumer against the server's data plane: every record comes back exactly
// (keys, values, headers, timestamps, partitions, offsets), with each compression codec KafkaJS
// ships (gzip; none), with the idempotent producer, and through a consumer group.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { CompressionTypes, Kafka, logLevel } from 'kafkajs'
import { startTestServer, type TestServer } from '../server/harness.js'

let ts: TestServer
let kafka: Kafka
before(async () => {
  ts = await startTestServer()
  kafka = new Kafka({
    clientId: 'kjs-data',
    brokers: [`127.0.0.1:${ts.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 50 },
  })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({
    topics: [
      { topic: 'kjs-data', numPartitions: 2 },
      { topic: 'kjs-idem', numPartitions: 1 },
    ],
  })
  await admin.disconnect()
})
after(async () => {
  await ts?.stop()
})

interface Seen {
  partition: number
  offset: string
  key: string | null
  value: string | null
  timestamp: string
  headers: Record<string, string>
}

async function consumeAll(topic: string, groupId: string, count: number): Promise<Seen[]> {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen: Seen[] = []
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${seen.length} of ${count} records`)), 20_000)
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          seen.push({
            partition,
            offset: message.offset,
            key: message.key?.toString() ?? null,
            value: message.value?.toString() ?? null,
            timestamp: message.timestamp,
            headers: Object.fromEntries(
              Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
            ),
          })
          if (seen.length >= count) {
            clearTimeout(timer)
            resolve()
          }
        },
      })
      .catch(reject)
  })
  await consumer.disconnect()
  return seen.sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset))
}

describe('KafkaJS produce and consume', { timeout: 60_000 }, () => {
  it('round-trips records exactly, uncompressed and gzip', async () => {
    const producer = kafka.producer()
    await producer.connect()
    const base = 1_700_000_000_000
    const r1 = await producer.send({
      topic: 'kjs-data',
      messages: [
        { partition: 0, key: 'k0', value: 'v0', timestamp: String(base), headers: { h: 'x' } },
        { partition: 0, key: null, value: 'v1', timestamp: String(base + 1) },
        { partition: 1, key: 'k2', value: null, timestamp: String(base + 2), headers: { a: '1', b: '2' } },
      ],
    })
    assert.deepEqual(r1.map((r) => [r.partition, r.errorCode, r.baseOffset]).sort(), [
      [0, 0, '0'],
      [1, 0, '0'],
    ])
    const r2 = await producer.send({
      topic: 'kjs-data',
      compression: CompressionTypes.GZIP,
      messages: [
        { partition: 0, key: 'k3', value: 'v3'.repeat(100), timestamp: String(base + 3) },
        { partition: 0, key: 'k4', value: 'v4', timestamp: String(base + 4) },
      ],
    })
    assert.deepEqual(
      r2.map((r) => [r.partition, r.errorCode, r.baseOffset]),
      [[0, 0, '2']],
    )
    await producer.disconnect()

    const seen = await consumeAll('kjs-data', 'kjs-data-g', 5)
    assert.deepEqual(seen, [
      { partition: 0, offset: '0', key: 'k0', value: 'v0', timestamp: String(base), headers: { h: 'x' } },
      { partition: 0, offset: '1', key: null, value: 'v1', timestamp: String(base + 1), headers: {} },
      {
        partition: 0,
        offset: '2',
        key: 'k3',
        value: 'v3'.repeat(100),
        timestamp: String(base + 3),
        headers: {},
      },
      { partition: 0, offset: '3', key: 'k4', value: 'v4', timestamp: String(base + 4), headers: {} },
      {
        partition: 1,
        offset: '0',
        key: 'k2',
        value: null,
        timestamp: String(base + 2),
        headers: { a: '1', b: '2' },
      },
    ])
  })

  it('the idempotent producer gets a producer id and its records arrive once', async () => {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    for (let i = 0; i < 5; i++) {
      await producer.send({ topic: 'kjs-idem', messages: [{ key: `k${i}`, value: `v${i}` }] })
    }
    await producer.disconnect()
    const seen = await consumeAll('kjs-idem', 'kjs-idem-g', 5)
    assert.deepEqual(
      seen.map((s) => [s.offset, s.key, s.value]),
      [0, 1, 2, 3, 4].map((i) => [String(i), `k${i}`, `v${i}`]),
    )
  })
})
