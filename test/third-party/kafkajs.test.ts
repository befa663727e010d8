// KafkaJS admin: createTopics, listTopics, fetchTopicMetadata, deleteTopics.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Kafka, logLevel } from 'kafkajs'
import { startTestServer, type TestServer } from '../server/harness.js'

let ts: TestServer
before(async () => {
  ts = await startTestServer()
})
after(async () => {
  await ts.stop()
})

test('KafkaJS admin creates, lists, describes and deletes topics', { timeout: 30_000 }, async () => {
  const kafka = new Kafka({
    clientId: 'kjs',
    brokers: [`127.0.0.1:${ts.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 1 },
  })
  const admin = kafka.admin()
  await admin.connect()
  try {
    assert.equal(await admin.createTopics({ topics: [{ topic: 'kjs-a', numPartitions: 3 }] }), true)
    assert.equal(await admin.createTopics({ topics: [{ topic: 'kjs-a', numPartitions: 3 }] }), false)
    assert.deepEqual((await admin.listTopics()).sort(), ['kjs-a'])
    const meta = await admin.fetchTopicMetadata({ topics: ['kjs-a'] })
    assert.equal(meta.topics[0].name, 'kjs-a')
    assert.deepEqual(
      meta.topics[0].partitions.map((p) => [p.partitionId, p.leader, p.replicas, p.isr]).sort(),
      [
        [0, 1, [1], [1]],
        [1, 1, [1], [1]],
        [2, 1, [1], [1]],
      ],
    )
    await assert.rejects(
      admin.createTopics({ topics: [{ topic: 'kjs-b', replicationFactor: 3 }] }),
      (err: Error) =>
        /replication factor|INVALID_REPLICATION_FACTOR/i.test(`${err.message} ${JSON.stringify(err)}`),
    )
    const cluster = await admin.describeCluster()
    assert.equal(cluster.clusterId, ts.server.clusterId)
    assert.deepEqual(cluster.brokers, [{ nodeId: 1, host: '127.0.0.1', port: ts.port }])
    await admin.deleteTopics({ topics: ['kjs-a'] })
    assert.deepEqual(await admin.listTopics(), [])
  } finally {
    await admin.disconnect()
  }
})
