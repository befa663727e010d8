// kill -9 during topic changes: a real `topograph start` process creates, grows and deletes topics
// of hundreds of partitions (answering once each change is durable, topic.change.log.wait.ms=0, so
// the kill lands while the partitions' files are being made or removed), is killed at seeded
// moments, and restarts on the same data.dir. After the restart every acknowledged change holds,
// an unacknowledged one is wholly there or not at all, every partition Metadata lists serves
// Produce and Fetch, data written before is intact, and the log directory holds exactly the
// partitions of the catalog's topics (nothing left of a deleted topic).
import assert from 'node:assert/strict'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import { createTopics, fetch, makeBatch, produce, readRecords } from '../helpers/data-plane.js'
import { startTopographProcess, type TopographProcess } from '../helpers/topograph-process.js'
import { OpenClients, tempDataDir } from '../server/harness.js'
import { FrameConnection, type WireClient } from '../server/wire-client.js'

/** Milliseconds after the three changes were sent at which the process is killed. */
const KILL_POINTS = [3, 120, 600]

const batch = (value: string) => makeBatch([{ key: null, value, timestamp: Date.now() }])

async function metadata(c: WireClient): Promise<Map<string, number>> {
  const md = await c.request<p.MetadataResponse>(3, 12, {
    topics: null,
    allowAutoTopicCreation: false,
    includeTopicAuthorizedOperations: false,
  })
  return new Map(md.body.topics.map((t) => [t.name ?? '', t.partitions.length]))
}

for (const killAfterMs of KILL_POINTS) {
  test(`kill -9 ${killAfterMs} ms into three topic changes: the restart is consistent`, {
    timeout: 300_000,
  }, async () => {
    const previousTimeout = FrameConnection.defaultResponseTimeoutMs
    FrameConnection.defaultResponseTimeoutMs = 60_000
    const dataDir = tempDataDir()
    const procs: TopographProcess[] = []
    const clients = new OpenClients()
    const connect = (port: number) => clients.connect(port)
    try {
      // 1. Before: `keep` (50 partitions, a record on each of the first five) and `gone` (300).
      const first = await startTopographProcess({ 'data.dir': dataDir, 'topic.change.log.wait.ms': '0' })
      procs.push(first)
      const c = await connect(first.port)
      assert.deepEqual(
        await createTopics(c, [
          { name: 'keep', partitions: 50 },
          { name: 'gone', partitions: 300 },
        ]),
        [0, 0],
      )
      for (let i = 0; i < 5; i++) {
        for (;;) {
          const [a] = await produce(c, [{ topic: 'keep', partition: i, records: batch(`before-${i}`) }])
          if (a.errorCode === ErrorCode.NONE) break
          assert.equal(a.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER)
          await new Promise((r) => setTimeout(r, 50))
        }
      }

      // 2. Three changes at once on three connections, then the kill.
      const [a, b, g] = [await connect(first.port), await connect(first.port), await connect(first.port)]
      const acked = { created: false, deleted: false, grown: false }
      const lost = (e: unknown) => {
        if (!/closed|no response/.test(String(e))) throw e
      }
      const changes = [
        createTopics(a, [{ name: 'fresh', partitions: 400 }]).then(([e]) => {
          assert.equal(e, 0)
          acked.created = true
        }, lost),
        b
          .request<p.DeleteTopicsResponse>(20, 6, {
            topics: [{ name: 'gone', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }],
            timeoutMs: 60_000,
          })
          .then((r) => {
            assert.equal(r.body.responses[0].errorCode, 0)
            acked.deleted = true
          }, lost),
        g
          .request<p.CreatePartitionsResponse>(37, 3, {
            topics: [{ name: 'keep', count: 400, assignments: null }],
            timeoutMs: 60_000,
            validateOnly: false,
          })
          .then((r) => {
            assert.equal(r.body.results[0].errorCode, 0)
            acked.grown = true
          }, lost),
      ]
      await new Promise((r) => setTimeout(r, killAfterMs))
      await first.kill()
      await Promise.all(changes)
      clients.closeAll()

      // 3. After the restart.
      const second = await startTopographProcess({ 'data.dir': dataDir })
      procs.push(second)
      const c2 = await connect(second.port)
      const topics = await metadata(c2)
      if (acked.created) assert.equal(topics.get('fresh'), 400)
      else assert.ok([undefined, 400].includes(topics.get('fresh')), `fresh has ${topics.get('fresh')}`)
      if (acked.deleted) assert.equal(topics.has('gone'), false)
      else assert.ok([undefined, 300].includes(topics.get('gone')), `gone has ${topics.get('gone')}`)
      if (acked.grown) assert.equal(topics.get('keep'), 400)
      else assert.ok([50, 400].includes(topics.get('keep') ?? -1), `keep has ${topics.get('keep')}`)

      // Every listed partition serves at once (a restart opens every log before listening).
      for (const [name, count] of topics) {
        if (name.startsWith('__')) continue
        const answers = await produce(
          c2,
          Array.from({ length: count }, (_, i) => ({
            topic: name,
            partition: i,
            records: batch(`after-${i}`),
          })),
        )
        assert.deepEqual(
          answers
            .filter((x) => x.errorCode !== ErrorCode.NONE)
            .map((x) => `${name}-${x.index}: ${x.errorCode}`),
          [],
        )
      }
      for (let i = 0; i < 5; i++) {
        const [f] = (await fetch(c2, [{ topic: 'keep', partition: i, offset: 0 }])).partitions
        assert.equal(f.errorCode, ErrorCode.NONE)
        assert.deepEqual(
          readRecords(f.records).map((r) => r.value),
          [`before-${i}`, `after-${i}`],
        )
      }

      // The log directory holds exactly the catalog's partitions.
      const expected = [...topics]
        .filter(([name]) => !name.startsWith('__'))
        .flatMap(([name, count]) => Array.from({ length: count }, (_, i) => `${name}-${i}`))
        .sort()
      const onDisk = readdirSync(join(dataDir, 'logs'))
        .filter((n) => /-\d+$/.test(n))
        .sort()
      assert.deepEqual(onDisk, expected)
      await second.stop()
    } finally {
      clients.closeAll()
      for (const proc of procs) await proc.kill()
      rmSync(dataDir, { recursive: true, force: true })
      FrameConnection.defaultResponseTimeoutMs = previousTimeout
    }
  })
}
