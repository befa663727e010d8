// Kafka's Java Admin client against a real Topograph process: listOffsets (earliest, latest,
// max-timestamp, by time, read_committed), describeProducers after idempotent produces, deleteRecords
// (and what a consumer and listOffsets see after it), createPartitions, describeLogDirs, and the
// authorized operations of describeTopics and describeCluster; leader elections and partition
// reassignments on one broker.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  InteropServer,
  type JavaClientError,
  JavaClients,
  kafkaJavaSkip,
  closeInterop,
  type ProduceRecord,
} from '../helpers/interop.js'

const T0 = Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000
const TOPIC = 'admin-a'

interface OffsetInfo {
  topic: string
  partition: number
  offset: number
  timestamp: number
  leaderEpoch: number | null
}
interface ProducerInfo {
  producerId: number
  producerEpoch: number
  lastSequence: number
  lastTimestamp: number
  coordinatorEpoch: number | null
  currentTransactionStartOffset: number | null
}

describe('Kafka Java Admin: offsets, producers, deleted records', () => {
  let server: InteropServer
  let java: JavaClients
  // partition 0: ten records, the largest timestamp at offset 6; partition 1: three records
  const p0: ProduceRecord[] = Array.from({ length: 10 }, (_, i) => ({
    topic: TOPIC,
    partition: 0,
    key: `k${i}`,
    value: `v${i}`,
    timestamp: i === 6 ? T0 + 100_000 : T0 + i * 100,
  }))
  const p1: ProduceRecord[] = Array.from({ length: 3 }, (_, i) => ({
    topic: TOPIC,
    partition: 1,
    key: `k${i}`,
    value: `w${i}`,
    timestamp: T0 + 50 + i,
  }))

  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start()
    java = await JavaClients.start(server.bootstrap)
    await java.call({ op: 'createTopics', topics: [{ name: TOPIC, partitions: 3 }] })
    // One idempotent producer writes both partitions, each as one batch (flush before linger ends).
    await java.produce([...p0, ...p1], { 'enable.idempotence': true, acks: 'all', 'linger.ms': 30_000 })
  })
  after(() => closeInterop(java, server))

  const listOffsets = (spec: string, partitions: [string, number][], isolation?: string) =>
    java.call<OffsetInfo[]>({ op: 'listOffsets', spec, partitions, isolation })

  test('listOffsets: earliest, latest, max timestamp and by time', {
    skip: kafkaJavaSkip,
    timeout: 120_000,
  }, async () => {
    const all: [string, number][] = [
      [TOPIC, 0],
      [TOPIC, 1],
      [TOPIC, 2],
    ]
    const at = (partition: number, offset: number, timestamp = -1) => ({
      topic: TOPIC,
      partition,
      offset,
      timestamp,
      leaderEpoch: 0,
    })
    assert.deepEqual(await listOffsets('earliest', all), [at(0, 0), at(1, 0), at(2, 0)])
    assert.deepEqual(await listOffsets('latest', all), [at(0, 10), at(1, 3), at(2, 0)])
    assert.deepEqual(await listOffsets('latest', all, 'read_committed'), [at(0, 10), at(1, 3), at(2, 0)])
    // The record with the largest timestamp; an empty partition has none.
    assert.deepEqual(await listOffsets('maxTimestamp', all), [
      at(0, 6, T0 + 100_000),
      at(1, 2, T0 + 52),
      { topic: TOPIC, partition: 2, offset: -1, timestamp: -1, leaderEpoch: null },
    ])
    // The first record whose timestamp is at or after the target.
    assert.deepEqual(await listOffsets(String(T0 + 250), all), [
      at(0, 3, T0 + 300),
      { topic: TOPIC, partition: 1, offset: -1, timestamp: -1, leaderEpoch: null },
      { topic: TOPIC, partition: 2, offset: -1, timestamp: -1, leaderEpoch: null },
    ])
    assert.deepEqual(await listOffsets(String(T0 + 900), [[TOPIC, 0]]), [at(0, 6, T0 + 100_000)])
    assert.deepEqual(await listOffsets(String(T0), [[TOPIC, 0]]), [at(0, 0, T0)])
  })

  test('describeProducers: the idempotent producer on each partition it wrote', {
    skip: kafkaJavaSkip,
    timeout: 120_000,
  }, async () => {
    const described = await java.call<{ topic: string; partition: number; producers: ProducerInfo[] }[]>({
      op: 'describeProducers',
      partitions: [
        [TOPIC, 0],
        [TOPIC, 1],
        [TOPIC, 2],
      ],
    })
    const id = described[0]!.producers[0]?.producerId
    assert.ok(typeof id === 'number' && id >= 0, `a producer id: ${JSON.stringify(described)}`)
    const state = (lastSequence: number, lastTimestamp: number): ProducerInfo => ({
      producerId: id,
      producerEpoch: 0,
      lastSequence,
      lastTimestamp,
      coordinatorEpoch: null,
      currentTransactionStartOffset: null,
    })
    assert.deepEqual(described, [
      { topic: TOPIC, partition: 0, producers: [state(9, T0 + 100_000)] },
      { topic: TOPIC, partition: 1, producers: [state(2, T0 + 52)] },
      { topic: TOPIC, partition: 2, producers: [] },
    ])
  })

  test('deleteRecords moves the log start offset; consumers and listOffsets follow', {
    skip: kafkaJavaSkip,
    timeout: 180_000,
  }, async () => {
    assert.deepEqual(await java.call({ op: 'deleteRecords', partitions: [[TOPIC, 0, 4]] }), [[TOPIC, 0, 4]])
    // Below the current log start offset: nothing changes.
    assert.deepEqual(await java.call({ op: 'deleteRecords', partitions: [[TOPIC, 0, 2]] }), [[TOPIC, 0, 4]])
    await assert.rejects(
      java.call({ op: 'deleteRecords', partitions: [[TOPIC, 1, 100]] }),
      (e: JavaClientError) => e.className === 'org.apache.kafka.common.errors.OffsetOutOfRangeException',
    )
    assert.deepEqual(await listOffsets('earliest', [[TOPIC, 0]]), [
      { topic: TOPIC, partition: 0, offset: 4, timestamp: -1, leaderEpoch: 0 },
    ])
    assert.deepEqual(await listOffsets('latest', [[TOPIC, 0]]), [
      { topic: TOPIC, partition: 0, offset: 10, timestamp: -1, leaderEpoch: 0 },
    ])
    const { records } = await java.consume({
      assign: [[TOPIC, 0]],
      seek: 'beginning',
      maxRecords: 6,
      timeoutMs: 60_000,
    })
    assert.deepEqual(
      records.map((r) => [r.offset, r.key, r.value]),
      [4, 5, 6, 7, 8, 9].map((i) => [i, `k${i}`, `v${i}`]),
    )
    // -1 deletes up to the high watermark.
    assert.deepEqual(await java.call({ op: 'deleteRecords', partitions: [[TOPIC, 1, -1]] }), [[TOPIC, 1, 3]])
    assert.deepEqual(await listOffsets('earliest', [[TOPIC, 1]]), [
      { topic: TOPIC, partition: 1, offset: 3, timestamp: -1, leaderEpoch: 0 },
    ])
  })

  test('describeTopics and describeCluster with authorized operations', {
    skip: kafkaJavaSkip,
    timeout: 120_000,
  }, async () => {
    const names = ['ops-a', 'ops-b', 'ops-c']
    await java.call({ op: 'createTopics', topics: names.map((name) => ({ name, partitions: 2 })) })
    // No authorizer is configured, so every operation of each resource type is authorized, as
    // Kafka answers then. The calls are all started before any is awaited; the Admin client sends
    // them one at a time (one request in flight per connection), each answer read by Kafka's own
    // decoding of the operations bit field.
    const topicOps = [
      'ALTER',
      'ALTER_CONFIGS',
      'CREATE',
      'DELETE',
      'DESCRIBE',
      'DESCRIBE_CONFIGS',
      'READ',
      'WRITE',
    ]
    const clusterOps = [
      'ALTER',
      'ALTER_CONFIGS',
      'CLUSTER_ACTION',
      'CREATE',
      'DESCRIBE',
      'DESCRIBE_CONFIGS',
      'IDEMPOTENT_WRITE',
    ]
    const got = await java.call<{ topics: Record<string, string[]>; cluster: string[] }>({
      op: 'describeAuthorizedOperations',
      topics: [...names, TOPIC],
    })
    assert.deepEqual(got, {
      topics: Object.fromEntries([...names, TOPIC].map((n) => [n, topicOps])),
      cluster: clusterOps,
    })
  })

  test('describeLogDirs: a size for every partition, non-zero where data was written', {
    skip: kafkaJavaSkip,
    timeout: 120_000,
  }, async () => {
    const dirs = await java.call<{ topic: string; partition: number; size: number }[]>({
      op: 'describeLogDirs',
    })
    const mine = dirs.filter((d) => d.topic === TOPIC).sort((a, b) => a.partition - b.partition)
    assert.deepEqual(
      mine.map((d) => [d.partition, d.size > 0]),
      [
        [0, true],
        [1, true],
        [2, false],
      ],
    )
    assert.equal(mine[2]!.size, 0)
  })

  test('electLeaders, alterPartitionReassignments and listPartitionReassignments on one broker', {
    skip: kafkaJavaSkip,
    timeout: 120_000,
  }, async () => {
    const notNeeded = 'ElectionNotNeededException: Leader election not needed for topic partition.'
    assert.deepEqual(
      await java.call({
        op: 'electLeaders',
        type: 'preferred',
        partitions: [
          [TOPIC, 0],
          [TOPIC, 2],
          ['admin-none', 0],
        ],
      }),
      {
        [`${TOPIC}-0`]: notNeeded,
        [`${TOPIC}-2`]: notNeeded,
        'admin-none-0': 'UnknownTopicOrPartitionException: No such topic as admin-none',
      },
    )
    assert.deepEqual(await java.call({ op: 'electLeaders', type: 'unclean', partitions: [[TOPIC, 1]] }), {
      [`${TOPIC}-1`]: notNeeded,
    })
    // Every partition: the ones that need no election are left out, as Kafka's controller does.
    assert.deepEqual(await java.call({ op: 'electLeaders', type: 'preferred', partitions: null }), {})
    assert.deepEqual(
      await java.call({
        op: 'alterPartitionReassignments',
        moves: [
          [TOPIC, 0, [1]],
          [TOPIC, 1, [2]],
          [TOPIC, 2, null],
        ],
      }),
      {
        [`${TOPIC}-0`]: null,
        [`${TOPIC}-1`]:
          'InvalidReplicaAssignmentException: The manual partition assignment includes broker 2, but no such broker is registered.',
        [`${TOPIC}-2`]: 'NoReassignmentInProgressException: No partition reassignment is in progress.',
      },
    )
    assert.deepEqual(await java.call({ op: 'listPartitionReassignments' }), {})
  })
})
