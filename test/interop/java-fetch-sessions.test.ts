// Kafka's Java consumer against a real Topograph process reads several partitions through an
// incremental fetch session (KIP-227): it gets every record, and the server's DEBUG log shows one
// full fetch that created the session followed by incremental fetches in it, so the consumer no
// longer sends its whole partition list on every fetch.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  closeInterop,
  InteropServer,
  JavaClients,
  kafkaJavaSkip,
  type ProduceRecord,
} from '../helpers/interop.js'

const TOPIC = 'java-fetch-sessions'
const PARTITIONS = 4
const PER_PARTITION = 12

describe('Kafka Java consumer and incremental fetch sessions', () => {
  let server: InteropServer
  let java: JavaClients
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start({ 'log.level': 'debug' })
    java = await JavaClients.start(server.bootstrap)
  })
  after(() => closeInterop(java, server))

  test('a consumer of four partitions gets its records through incremental fetches', {
    skip: kafkaJavaSkip,
    timeout: 240_000,
  }, async () => {
    await java.call({ op: 'createTopics', topics: [{ name: TOPIC, partitions: PARTITIONS }] })
    const sent: ProduceRecord[] = []
    for (let i = 0; i < PARTITIONS * PER_PARTITION; i++) {
      sent.push({
        topic: TOPIC,
        partition: i % PARTITIONS,
        key: `k${i}`,
        value: `value ${i} ${'x'.repeat(100)}`,
      })
    }
    // One record per batch, and fetches of about one batch per partition: several fetches.
    await java.produce(sent, { 'batch.size': 1, 'linger.ms': 0 })
    const { records } = await java.consume({
      config: { 'max.partition.fetch.bytes': 64, 'fetch.max.wait.ms': 100 },
      assign: Array.from({ length: PARTITIONS }, (_, p) => [TOPIC, p] as const),
      seek: 'beginning',
      maxRecords: sent.length,
      timeoutMs: 60_000,
    })
    assert.equal(records.length, sent.length)
    for (let p = 0; p < PARTITIONS; p++) {
      const mine = records.filter((r) => r.partition === p)
      assert.deepEqual(
        mine.map((r) => r.offset),
        Array.from({ length: PER_PARTITION }, (_, i) => i),
      )
      assert.deepEqual(
        mine.map((r) => r.value),
        sent.filter((_, i) => i % PARTITIONS === p).map((r) => r.value),
      )
    }
    const log = server.output()
    const created = [
      ...log.matchAll(/Full fetch context with session id ([1-9]\d*) returning (\d+) partition/g),
    ]
    const incremental = [
      ...log.matchAll(
        /Created a new incremental FetchContext for session id (\d+), epoch (\d+): (\d+) added or updated/g,
      ),
    ]
    const errors = [...log.matchAll(/Session error for/g)]
    // The consumer's full fetch of the four partitions created a session, and its later fetches
    // were incremental fetches in that session.
    assert.ok(
      created.some((m) => m[2] === String(PARTITIONS)),
      'a full fetch of the four partitions created a session',
    )
    const sessionIds = new Set(created.map((m) => m[1]))
    assert.ok(incremental.length >= 5, `incremental fetches: ${incremental.length}`)
    assert.ok(incremental.every((m) => sessionIds.has(m[1])))
    assert.equal(errors.length, 0)
    // An incremental fetch names only the partitions whose position moved: some name fewer than all.
    const named = incremental.map((m) => Number(m[3]))
    assert.ok(
      named.some((n) => n < PARTITIONS),
      `partitions named: ${named.join(' ')}`,
    )
    console.log(
      `interop: ${created.length} full fetch(es) created sessions, ${incremental.length} incremental fetches ` +
        `(partitions named: ${named.join(' ')}), ${errors.length} session errors`,
    )
  })
})
