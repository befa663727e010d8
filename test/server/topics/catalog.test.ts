import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MemoryRecordStore } from '../../../src/coordinator/storage/memory.js'
import { type NewTopic, TOPIC_CATALOG_LOG_ID, TopicCatalog } from '../../../src/server/topics/catalog.js'

const topic = (name: string, extra: Partial<NewTopic> = {}): NewTopic => ({
  name,
  numPartitions: -1,
  replicationFactor: -1,
  assignments: [],
  configs: [],
  ...extra,
})

async function fresh() {
  const store = new MemoryRecordStore()
  await store.open()
  let n = 0
  const newTopicId = () => Buffer.alloc(16, ++n).toString('base64url')
  return { store, catalog: await TopicCatalog.load(store, { nodeId: 1, newTopicId }), newTopicId }
}

test('creates with defaults, replays from the store, deletes with a tombstone', async () => {
  const { store, catalog, newTopicId } = await fresh()
  const [a] = await catalog.createTopics(
    [topic('a', { configs: [{ name: 'cleanup.policy', value: 'compact' }] })],
    false,
  )
  assert.equal(a.error, 'NONE')
  assert.ok('topicId' in a)
  assert.deepEqual([a.numPartitions, a.replicationFactor, a.configs], [1, 1, { 'cleanup.policy': 'compact' }])
  await catalog.createTopics([topic('b', { numPartitions: 5 })], false)

  const reloaded = await TopicCatalog.load(store, { nodeId: 1, newTopicId })
  assert.deepEqual(reloaded.list(), catalog.list())
  assert.equal(reloaded.byId(a.topicId)?.name, 'a')

  assert.deepEqual(
    (await reloaded.deleteTopics(['a', 'missing'])).map((t) => t.name),
    ['a'],
  )
  const records = await store.load(TOPIC_CATALOG_LOG_ID)
  assert.equal(records.at(-1)?.value, null)
  const again = await TopicCatalog.load(store, { nodeId: 1, newTopicId })
  assert.deepEqual(
    again.list().map((t) => t.name),
    ['b'],
  )
})

test('validate-only writes nothing', async () => {
  const { store, catalog } = await fresh()
  const [o] = await catalog.createTopics([topic('v', { numPartitions: 2 })], true)
  assert.equal(o.error, 'NONE')
  assert.equal(catalog.size, 0)
  assert.deepEqual(await store.load(TOPIC_CATALOG_LOG_ID), [])
})

test('errors in Kafka order with Kafka messages', async () => {
  const { catalog } = await fresh()
  await catalog.createTopics([topic('exists'), topic('dot.ted')], false)
  const out = await catalog.createTopics(
    [
      topic('exists'),
      topic('dot_ted'),
      topic('__cluster_metadata'),
      topic('p0', { numPartitions: 0 }),
      topic('pneg', { numPartitions: -2 }),
      topic('rf2', { replicationFactor: 2 }),
      topic('cfg-null', { configs: [{ name: 'retention.ms', value: null }] }),
      topic('cfg-bad', { configs: [{ name: 'retention.ms', value: 'soon' }] }),
      topic('cfg-unknown', { configs: [{ name: 'nope', value: '1' }] }),
      topic('assign-rf', { replicationFactor: 1, assignments: [{ partitionIndex: 0, brokerIds: [1] }] }),
      topic('assign-broker', { assignments: [{ partitionIndex: 0, brokerIds: [2] }] }),
      topic('assign-gap', { assignments: [{ partitionIndex: 1, brokerIds: [1] }] }),
      topic('assign-ok', {
        assignments: [
          { partitionIndex: 1, brokerIds: [1] },
          { partitionIndex: 0, brokerIds: [1] },
        ],
      }),
    ],
    false,
  )
  const got = Object.fromEntries(out.map((o) => [o.name, [o.error, o.message]]))
  assert.deepEqual(got.exists, ['TOPIC_ALREADY_EXISTS', "Topic 'exists' already exists."])
  assert.deepEqual(got.dot_ted, [
    'INVALID_TOPIC_EXCEPTION',
    "Topic 'dot_ted' collides with existing topic: dot.ted",
  ])
  assert.deepEqual(got.__cluster_metadata, [
    'INVALID_REQUEST',
    'Creation of internal topic __cluster_metadata is prohibited.',
  ])
  assert.deepEqual(got.p0, [
    'INVALID_PARTITIONS',
    'Number of partitions was set to an invalid non-positive value.',
  ])
  assert.equal(got.pneg[0], 'INVALID_PARTITIONS')
  assert.equal(got.rf2[0], 'INVALID_REPLICATION_FACTOR')
  assert.match(
    got.rf2[1] as string,
    /^Unable to replicate the partition 2 time\(s\): The target replication factor of 2 cannot be reached because only 1 broker\(s\) are registered/,
  )
  assert.deepEqual(got['cfg-null'], [
    'INVALID_CONFIG',
    'Null value not supported for topic configs: retention.ms',
  ])
  assert.deepEqual(got['cfg-bad'], [
    'INVALID_CONFIG',
    'Invalid value soon for configuration retention.ms: Not a number of type LONG',
  ])
  assert.deepEqual(got['cfg-unknown'], ['INVALID_CONFIG', 'Unknown topic config name: nope'])
  assert.equal(got['assign-rf'][0], 'INVALID_REQUEST')
  assert.equal(got['assign-broker'][0], 'INVALID_REPLICA_ASSIGNMENT')
  assert.deepEqual(got['assign-gap'], [
    'INVALID_REPLICA_ASSIGNMENT',
    'partitions should be a consecutive 0-based integer sequence',
  ])
  assert.equal(got['assign-ok'][0], 'NONE')
  assert.equal(catalog.byName('assign-ok')?.numPartitions, 2)
})

test('concurrent creates of one name: exactly one wins', async () => {
  const { catalog } = await fresh()
  const results = await Promise.all(
    Array.from({ length: 5 }, () => catalog.createTopics([topic('race')], false)),
  )
  const errors = results.map((r) => r[0].error).sort()
  assert.deepEqual(errors, [
    'NONE',
    'TOPIC_ALREADY_EXISTS',
    'TOPIC_ALREADY_EXISTS',
    'TOPIC_ALREADY_EXISTS',
    'TOPIC_ALREADY_EXISTS',
  ])
})

test('a failed append leaves the catalog unchanged', async () => {
  const { store, catalog } = await fresh()
  store.failNextAppend(new Error('disk full'))
  await assert.rejects(catalog.createTopics([topic('lost')], false), /disk full/)
  assert.equal(catalog.byName('lost'), undefined)
  const [o] = await catalog.createTopics([topic('lost')], false)
  assert.equal(o.error, 'NONE')
})

test('a change waits for its own logs at most logWaitMs, never for another change’s', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const catalog = await TopicCatalog.load(store, { nodeId: 1, logWaitMs: 200 })
  // Logs that are never ready (a disk slower than the bound), and ones that are at once.
  const calls: string[] = []
  catalog.attachData({
    partitionsCreated: (t, from) => {
      calls.push(`create ${t.name} ${from}..${t.numPartitions}`)
      return t.name === 'slow' ? new Promise<void>(() => {}) : Promise.resolve()
    },
    configsChanged: () => {},
    topicsDeleted: (ts) => {
      calls.push(`delete ${ts.map((t) => t.name).join(',')}`)
      return new Promise<void>(() => {})
    },
  })
  const t0 = performance.now()
  const slow = catalog.createTopics([topic('slow', { numPartitions: 3 })], false)
  const fast = catalog.createTopics([topic('fast', { numPartitions: 2 })], false)
  const [fastOutcome] = await fast
  const fastMs = performance.now() - t0
  const [slowOutcome] = await slow
  const slowMs = performance.now() - t0
  assert.equal(fastOutcome.error, 'NONE')
  assert.equal(slowOutcome.error, 'NONE')
  // The slow topic's logs are not ready: its answer came at the bound, the other's did not wait
  // for it (the catalog's queue holds only the checks and the durable record).
  assert.ok(slowMs >= 190, `the slow creation was answered after ${slowMs} ms`)
  assert.ok(fastMs < slowMs, `the fast creation (${fastMs} ms) waited for the slow one (${slowMs} ms)`)
  assert.deepEqual(await catalog.increasePartitions('slow', 5), {
    ...catalog.byName('slow')!,
    numPartitions: 5,
  })
  assert.deepEqual((await catalog.deleteTopics(['slow', 'fast'])).map((t) => t.name).sort(), ['fast', 'slow'])
  // The hooks were called in the order of the changes.
  assert.deepEqual(calls, ['create slow 0..3', 'create fast 0..2', 'create slow 3..5', 'delete slow,fast'])
})

test('logWaitMs 0 answers once the change is durable; a hook that rejects goes unnoticed', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const catalog = await TopicCatalog.load(store, { nodeId: 1, logWaitMs: 0 })
  catalog.attachData({
    partitionsCreated: () => new Promise<void>(() => {}),
    configsChanged: () => {},
    topicsDeleted: () => Promise.reject(new Error('disk gone')),
  })
  const [created] = await catalog.createTopics([topic('t', { numPartitions: 4 })], false)
  assert.equal(created.error, 'NONE')
  assert.deepEqual(
    (await catalog.deleteTopics(['t'])).map((t) => t.name),
    ['t'],
  )
  assert.equal(catalog.byName('t'), undefined)
})
