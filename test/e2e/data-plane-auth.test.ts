// Authorization on the data plane, over TCP with an injected authorizer that refuses everything on
// topics named secret-* (and IDEMPOTENT_WRITE / transactional ids when told to), and records what
// it was asked: WRITE for Produce, READ for Fetch and DescribeProducers, DESCRIBE for ListOffsets
// and OffsetForLeaderEpoch, DELETE for DeleteRecords, ALTER for CreatePartitions, ALTER_CONFIGS
// for topic config changes, DESCRIBE on the cluster for DescribeLogDirs, CREATE for auto-creation,
// IDEMPOTENT_WRITE (or WRITE on a topic) for InitProducerId, WRITE on the transactional id for
// transactional batches.
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import type { Authorizer } from '../../src/server/router.js'
import { createTopics, fetch, listOffset, makeBatch, produce } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const asked: string[] = []
let refuseCluster = false
const authorizer: Authorizer = {
  authorize(_principal, operation, resourceType, resourceName) {
    asked.push(`${operation} ${resourceType} ${resourceName}`)
    if (resourceType === 'CLUSTER') return !refuseCluster
    if (resourceType === 'TRANSACTIONAL_ID') return resourceName === 'allowed-tx'
    return !resourceName.startsWith('secret')
  },
}

let ts: TestServer
let c: WireClient
const rec = [{ key: 'k', value: 'v', timestamp: 1_700_000_000_000 }]

before(async () => {
  ts = await startTestServer({}, { authorizer })
  c = await WireClient.connect(ts.port)
  assert.deepEqual(await createTopics(c, [{ name: 'open' }, { name: 'secret-t' }]), [0, 0])
})
after(async () => {
  c?.close()
  await ts?.stop()
})
beforeEach(() => {
  asked.length = 0
  refuseCluster = false
})

describe('data-plane authorization', () => {
  it('Produce needs WRITE; Fetch needs READ', async () => {
    const answers = await produce(c, [
      { topic: 'open', partition: 0, records: makeBatch(rec) },
      { topic: 'secret-t', partition: 0, records: makeBatch(rec) },
    ])
    assert.deepEqual(
      answers.map((a) => a.errorCode),
      [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED],
    )
    assert.ok(asked.includes('WRITE TOPIC secret-t'))
    const f = await fetch(c, [
      { topic: 'open', partition: 0, offset: 0 },
      { topic: 'secret-t', partition: 0, offset: 0 },
    ])
    assert.deepEqual(
      f.partitions.map((x) => [x.topic, x.errorCode]),
      [
        ['open', 0],
        ['secret-t', ErrorCode.TOPIC_AUTHORIZATION_FAILED],
      ],
    )
    assert.ok(asked.includes('READ TOPIC secret-t'))
  })

  it('ListOffsets and OffsetForLeaderEpoch need DESCRIBE; DeleteRecords DELETE', async () => {
    assert.equal((await listOffset(c, 'secret-t', 0, -1)).errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    assert.ok(asked.includes('DESCRIBE TOPIC secret-t'))
    refuseCluster = true
    const oe = await c.request<p.OffsetForLeaderEpochResponse>(23, 4, {
      replicaId: -1,
      topics: [{ topic: 'secret-t', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }],
    })
    assert.equal(oe.body.topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    const del = await c.request<p.DeleteRecordsResponse>(21, 2, {
      topics: [{ name: 'secret-t', partitions: [{ partitionIndex: 0, offset: 0n }] }],
      timeoutMs: 1000,
    })
    assert.deepEqual(del.body.topics[0].partitions[0], {
      partitionIndex: 0,
      lowWatermark: -1n,
      errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    })
    assert.ok(asked.includes('DELETE TOPIC secret-t'))
  })

  it('DescribeProducers needs READ; DescribeLogDirs DESCRIBE on the cluster; CreatePartitions ALTER', async () => {
    const dp = await c.request<p.DescribeProducersResponse>(61, 0, {
      topics: [{ name: 'secret-t', partitionIndexes: [0] }],
    })
    assert.equal(dp.body.topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    refuseCluster = true
    const dl = await c.request<p.DescribeLogDirsResponse>(35, 4, { topics: null })
    assert.deepEqual([dl.body.errorCode, dl.body.results], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, []])
    const cp = await c.request<p.CreatePartitionsResponse>(37, 3, {
      topics: [{ name: 'secret-t', count: 2, assignments: null }],
      timeoutMs: 1000,
      validateOnly: false,
    })
    assert.equal(cp.body.results[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    assert.ok(asked.includes('ALTER TOPIC secret-t'))
  })

  it('topic config changes need ALTER_CONFIGS', async () => {
    const inc = await c.request<p.IncrementalAlterConfigsResponse>(44, 1, {
      resources: [
        {
          resourceType: 2,
          resourceName: 'secret-t',
          configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }],
        },
      ],
      validateOnly: false,
    })
    assert.equal(inc.body.responses[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    const legacy = await c.request<p.AlterConfigsResponse>(33, 2, {
      resources: [
        { resourceType: 2, resourceName: 'secret-t', configs: [{ name: 'retention.ms', value: '1000' }] },
      ],
      validateOnly: false,
    })
    assert.deepEqual(
      [legacy.body.responses[0].errorCode, legacy.body.responses[0].errorMessage],
      [ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.'],
    )
    assert.ok(asked.includes('ALTER_CONFIGS TOPIC secret-t'))
  })

  it('InitProducerId needs IDEMPOTENT_WRITE on the cluster or WRITE on a topic', async () => {
    const init = async () =>
      (
        await c.request<p.InitProducerIdResponse>(22, 4, {
          transactionalId: null,
          transactionTimeoutMs: 1000,
          producerId: -1n,
          producerEpoch: -1,
        })
      ).body.errorCode
    refuseCluster = true
    assert.equal(await init(), 0, 'WRITE on topic open suffices')
    assert.ok(asked.includes('IDEMPOTENT_WRITE CLUSTER kafka-cluster'))
    assert.ok(asked.includes('WRITE TOPIC open'))
  })

  it('a transactional batch needs WRITE on the transactional id', async () => {
    const txBatch = makeBatch(rec, { producerId: 5, producerEpoch: 0, baseSequence: 0, transactional: true })
    const refused = await produce(c, [{ topic: 'open', partition: 0, records: txBatch }], {
      transactionalId: 'tx',
    })
    assert.deepEqual(
      refused.map((a) => a.errorCode),
      [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED],
    )
    const noId = await produce(c, [{ topic: 'open', partition: 0, records: txBatch }])
    assert.deepEqual(
      noId.map((a) => a.errorCode),
      [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED],
    )
    assert.ok(asked.includes('WRITE TRANSACTIONAL_ID tx'))
  })

  it('auto-creation needs CREATE on the cluster or on the topic', async () => {
    refuseCluster = true
    const md = await c.request<p.MetadataResponse>(3, 12, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'secret-auto' }],
      allowAutoTopicCreation: true,
    })
    // DESCRIBE refused first: nothing about the topic is disclosed, nothing created.
    assert.equal(md.body.topics[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    assert.equal(ts.server.context.topics.byName('secret-auto'), undefined)
    const ok = await c.request<p.MetadataResponse>(3, 12, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'made-by-metadata' }],
      allowAutoTopicCreation: true,
    })
    assert.equal(ok.body.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    assert.ok(asked.includes('CREATE CLUSTER kafka-cluster'))
    assert.ok(asked.includes('CREATE TOPIC made-by-metadata'))
    assert.notEqual(ts.server.context.topics.byName('made-by-metadata'), undefined)
  })
})
