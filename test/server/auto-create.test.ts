// Topic auto-creation shared by Metadata and FindCoordinator (src/server/topics/auto-create.ts):
// requests asking for the same topic while it is being created wait for the one creation, as
// Kafka's AutoTopicCreationManager keeps a topic in flight once.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { MemoryRecordStore } from '../../src/coordinator/storage/memory.js'
import { parseConfig } from '../../src/server/config.js'
import { createLogger } from '../../src/server/logger.js'
import type { ServerContext } from '../../src/server/router.js'
import { autoCreateTopics } from '../../src/server/topics/auto-create.js'
import { TopicCatalog } from '../../src/server/topics/catalog.js'

async function fixture() {
  const store = new MemoryRecordStore()
  await store.open()
  let n = 0
  const catalog = await TopicCatalog.load(store, {
    nodeId: 1,
    newTopicId: () => Buffer.alloc(16, ++n).toString('base64url'),
    defaultNumPartitions: 2,
  })
  const lines: { level: string; msg: string }[] = []
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    },
  })
  const server = {
    config: parseConfig({ 'offsets.topic.num.partitions': '3' }),
    logger: createLogger({ level: 'info', destination: sink }),
    topics: catalog,
  } as unknown as ServerContext
  return { server, catalog, lines }
}

test('auto-creation: askers at the same time wait for one creation of each topic', async () => {
  const { server, catalog, lines } = await fixture()
  const asks = [
    autoCreateTopics(server, ['__consumer_offsets']),
    autoCreateTopics(server, ['plain', '__consumer_offsets']),
    autoCreateTopics(server, ['plain']),
  ]
  // Nothing is created before the askers' turn ends.
  assert.equal(catalog.byName('__consumer_offsets'), undefined)
  await Promise.all(asks)
  assert.equal(catalog.byName('__consumer_offsets')?.numPartitions, 3)
  assert.equal(catalog.byName('plain')?.numPartitions, 2)
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg]),
    [
      ['info', 'Auto-created topic __consumer_offsets'],
      ['info', 'Auto-created topic plain'],
    ],
  )
})

test('auto-creation: a creation the store refuses is logged, and every asker goes on', async () => {
  // The catalog's write fails (its record store is down): FindCoordinator and Metadata must still
  // answer, not fail with UNKNOWN_SERVER_ERROR, which a Java client takes as fatal.
  const { server, catalog, lines } = await fixture()
  const original = catalog.createTopics.bind(catalog)
  catalog.createTopics = async () => {
    throw new Error('cannot take the lock of the coordinator storage: connect ECONNREFUSED')
  }
  await Promise.all([
    autoCreateTopics(server, ['__consumer_offsets']),
    autoCreateTopics(server, ['__consumer_offsets']),
  ])
  assert.equal(catalog.byName('__consumer_offsets'), undefined)
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg]),
    [
      [
        'warn',
        'Auto topic creation failed for __consumer_offsets: cannot take the lock of the coordinator storage: connect ECONNREFUSED.',
      ],
    ],
  )
  // Once the store is back, the next asker creates it.
  catalog.createTopics = original
  await autoCreateTopics(server, ['__consumer_offsets'])
  assert.equal(catalog.byName('__consumer_offsets')?.numPartitions, 3)
})
