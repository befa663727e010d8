// KafkaJS against a real Topograph process: an idempotent producer (uncompressed and gzip, the codec
// KafkaJS carries itself) and a consumer group that commits, reading back every key, value, header
// and timestamp; a second consumer of the same group resumes at the committed offsets.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { CompressionTypes, Kafka, type KafkaMessage, logLevel } from 'kafkajs'
import { InteropServer, killAll } from '../helpers/interop.js'

const T0 = Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000

interface Seen {
  partition: number
  offset: string
  key: string | null
  value: string | null
  timestamp: string
  headers: Record<string, string>
}

const seen = (partition: number, m: KafkaMessage): Seen => ({
  partition,
  offset: m.offset,
  key: m.key === null ? null : m.key.toString(),
  value: m.value === null ? null : m.value.toString(),
  timestamp: m.timestamp,
  headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)])),
})

describe('KafkaJS producer and consumer', () => {
  let server: InteropServer
  let kafka: Kafka
  before(async () => {
    server = await InteropServer.start()
    kafka = new Kafka({
      clientId: 'interop-kafkajs',
      brokers: [server.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 8 },
    })
    const admin = kafka.admin()
    await admin.connect()
    try {
      await admin.createTopics({ topics: [{ topic: 'kjs-data', numPartitions: 2 }] })
    } finally {
      await admin.disconnect()
    }
  })
  after(async () => {
    try {
      await server?.close()
    } finally {
      await killAll()
    }
  })

  test('idempotent produce (none, gzip), group consume with commits, resume', {
    timeout: 180_000,
  }, async () => {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    const expected: Seen[] = []
    try {
      for (const [batch, compression] of [CompressionTypes.None, CompressionTypes.GZIP].entries()) {
        const messages = Array.from({ length: 10 }, (_, n) => {
          const i = batch * 10 + n
          return {
            partition: i % 2,
            key: `k${i}`,
            value: `value ${i} ${'z'.repeat(i * 3)}`,
            timestamp: String(T0 + i * 10),
            headers: { trace: `t${i}`, batch: String(batch) },
          }
        })
        const meta = await producer.send({ topic: 'kjs-data', acks: -1, compression, messages })
        // one base offset per partition: 0 for the first send, 5 for the second
        assert.deepEqual(meta.map((m) => [m.partition, m.errorCode, m.baseOffset]).sort(), [
          [0, 0, String(batch * 5)],
          [1, 0, String(batch * 5)],
        ])
        for (const m of messages) {
          const offset = String(expected.filter((e) => e.partition === m.partition).length)
          expected.push({
            partition: m.partition,
            offset,
            key: m.key,
            value: m.value,
            timestamp: m.timestamp,
            headers: m.headers,
          })
        }
      }
    } finally {
      await producer.disconnect()
    }
    const order = (a: Seen, b: Seen): number =>
      a.partition - b.partition || Number(a.offset) - Number(b.offset)
    expected.sort(order)

    // The first member reads 6 records of each partition and commits each one it read.
    const first = kafka.consumer({ groupId: 'kjs-group', maxWaitTimeInMs: 200 })
    const got: Seen[] = []
    await first.connect()
    try {
      await first.subscribe({ topic: 'kjs-data', fromBeginning: true })
      await new Promise<void>((resolve, reject) => {
        first
          .run({
            autoCommit: false,
            eachMessage: async ({ partition, message }) => {
              if (got.filter((g) => g.partition === partition).length >= 6) return
              got.push(seen(partition, message))
              await first.commitOffsets([
                { topic: 'kjs-data', partition, offset: String(Number(message.offset) + 1) },
              ])
              if (got.length === 12) resolve()
            },
          })
          .catch(reject)
      })
    } finally {
      await first.disconnect()
    }
    assert.deepEqual(
      [...got].sort(order),
      expected.filter((e) => Number(e.offset) < 6),
    )

    const admin = kafka.admin()
    await admin.connect()
    try {
      const offsets = await admin.fetchOffsets({ groupId: 'kjs-group', topics: ['kjs-data'] })
      assert.deepEqual(offsets[0]!.partitions.map((p) => [p.partition, p.offset]).sort(), [
        [0, '6'],
        [1, '6'],
      ])
    } finally {
      await admin.disconnect()
    }

    // A second member of the group starts at the committed offsets.
    const second = kafka.consumer({ groupId: 'kjs-group', maxWaitTimeInMs: 200 })
    const rest: Seen[] = []
    await second.connect()
    try {
      await second.subscribe({ topic: 'kjs-data', fromBeginning: true })
      await new Promise<void>((resolve, reject) => {
        second
          .run({
            eachMessage: async ({ partition, message }) => {
              rest.push(seen(partition, message))
              if (rest.length === 8) resolve()
            },
          })
          .catch(reject)
      })
    } finally {
      await second.disconnect()
    }
    assert.deepEqual(
      [...rest].sort(order),
      expected.filter((e) => Number(e.offset) >= 6),
    )
  })
})
