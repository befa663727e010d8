// kcat (librdkafka) against a real Topograph process: an idempotent produce with every compression
// codec, then a consume from the beginning that must give back every key, value, header and
// partition/offset exactly.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createTopics, InteropServer, killAll, run, storedBatches } from '../helpers/interop.js'

const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const

interface KcatMessage {
  topic: string
  partition: number
  offset: number
  tstype: string
  ts: number
  headers: string[] | null
  key: string | null
  payload: string | null
}

describe('kcat produce and consume', () => {
  let server: InteropServer
  before(async () => {
    server = await InteropServer.start()
    await createTopics(
      server.bootstrap,
      CODECS.map((c) => ({ name: `kcat-${c}`, partitions: 1 })),
    )
  })
  after(async () => {
    try {
      await server?.close()
    } finally {
      await killAll()
    }
  })

  for (const codec of CODECS) {
    test(`compression ${codec}`, { timeout: 180_000 }, async () => {
      const topic = `kcat-${codec}`
      const lines = Array.from({ length: 50 }, (_, i) => `key-${i}|value ${i} ${codec} ${'abc'.repeat(i)}`)
      const before = Date.now()
      // Each line goes to partition 0 (-p 0) as key|value with the same two headers; one produce
      // call, so librdkafka batches (and compresses) the lines together.
      const produced = await run(
        'kcat',
        [
          '-P',
          '-b',
          server.bootstrap,
          '-t',
          topic,
          '-p',
          '0',
          '-K',
          '|',
          '-z',
          codec,
          '-H',
          'origin=kcat',
          '-H',
          `codec=${codec}`,
          '-X',
          'enable.idempotence=true',
          '-X',
          'topic.metadata.refresh.interval.ms=1000',
        ],
        { input: `${lines.join('\n')}\n`, timeoutMs: 120_000 },
      )
      assert.equal(produced.code, 0, produced.stderr)
      const afterProduce = Date.now()
      const consumed = await run(
        'kcat',
        ['-C', '-b', server.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-J', '-q'],
        { timeoutMs: 120_000 },
      )
      assert.equal(consumed.code, 0, consumed.stderr)
      const messages = consumed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as KcatMessage)
      assert.deepEqual(
        messages.map((m) => ({ ...m, ts: 0 })),
        lines.map((l, i) => ({
          topic,
          partition: 0,
          offset: i,
          tstype: 'create',
          ts: 0,
          broker: 1,
          headers: ['origin', 'kcat', 'codec', codec],
          key: l.slice(0, l.indexOf('|')),
          payload: l.slice(l.indexOf('|') + 1),
        })),
      )
      for (const m of messages) assert.ok(m.ts >= before - 1000 && m.ts <= afterProduce + 1000, `ts ${m.ts}`)
      // librdkafka's batches are stored with its codec and its idempotence fields.
      const batches = await storedBatches(server.bootstrap, topic, 0)
      assert.equal(
        batches.reduce((a, b) => a + b.recordsCount, 0),
        lines.length,
      )
      for (const b of batches) {
        assert.equal(b.codec, CODECS.indexOf(codec), `codec of ${JSON.stringify(b)}`)
        assert.ok(b.producerId >= 0, JSON.stringify(b))
        assert.deepEqual([b.producerEpoch, b.baseSequence], [0, b.baseOffset])
      }
    })
  }
})
