// Topics and the data plane over TCP: configs set at creation and changed later (both config APIs)
// shape the log at once; the data survives a restart of the server; deleting a topic removes its
// data; Kafka's broker topic metrics and log sizes are counted.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { register } from 'prom-client'
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import { createTopics, fetch, listOffset, makeBatch, produce, readRecords } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

let ts: TestServer
let c: WireClient
const T0 = 1_700_000_000_000
const big = (n: number) => makeBatch([{ key: 'k', value: 'x'.repeat(n), timestamp: T0 }])

before(async () => {
  ts = await startTestServer()
  c = await WireClient.connect(ts.port)
})
after(async () => {
  c?.close()
  await ts?.stop()
})

const alterIncremental = async (topic: string, name: string, value: string | null, op = 0) =>
  (
    await c.request<p.IncrementalAlterConfigsResponse>(44, 1, {
      resources: [{ resourceType: 2, resourceName: topic, configs: [{ name, configOperation: op, value }] }],
      validateOnly: false,
    })
  ).body.responses[0]

describe('topic configs shape the log', () => {
  it('max.message.bytes set at creation, then raised with IncrementalAlterConfigs', async () => {
    assert.deepEqual(await createTopics(c, [{ name: 'cfg', configs: { 'max.message.bytes': '500' } }]), [0])
    assert.equal(
      (await produce(c, [{ topic: 'cfg', partition: 0, records: big(600) }]))[0].errorCode,
      ErrorCode.MESSAGE_TOO_LARGE,
    )
    assert.deepEqual(await alterIncremental('cfg', 'max.message.bytes', '5000'), {
      errorCode: 0,
      errorMessage: null,
      resourceType: 2,
      resourceName: 'cfg',
    })
    assert.equal((await produce(c, [{ topic: 'cfg', partition: 0, records: big(600) }]))[0].errorCode, 0)
    // Kafka's range check and message.
    assert.deepEqual(await alterIncremental('cfg', 'segment.bytes', '1000'), {
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576',
      resourceType: 2,
      resourceName: 'cfg',
    })
  })

  it('AlterConfigs replaces the whole set: keys not given return to their defaults', async () => {
    const legacy = async (configs: { name: string; value: string }[]) =>
      (
        await c.request<p.AlterConfigsResponse>(33, 2, {
          resources: [{ resourceType: 2, resourceName: 'cfg', configs }],
          validateOnly: false,
        })
      ).body.responses
    const ok = { errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'cfg' }
    assert.deepEqual(await legacy([{ name: 'max.message.bytes', value: '500' }]), [ok])
    const [tooLarge] = await produce(c, [{ topic: 'cfg', partition: 0, records: big(600) }])
    assert.equal(tooLarge.errorCode, ErrorCode.MESSAGE_TOO_LARGE)
    assert.deepEqual(await legacy([{ name: 'message.timestamp.type', value: 'LogAppendTime' }]), [ok])
    assert.deepEqual(ts.server.context.topics.byName('cfg')!.configs, {
      'message.timestamp.type': 'LogAppendTime',
    })
    // max.message.bytes is back to its default, and the topic now stamps the append time.
    const [a] = await produce(c, [{ topic: 'cfg', partition: 0, records: big(600) }])
    assert.deepEqual([a.errorCode, a.logAppendTimeMs > 0n], [0, true])
  })

  it('cleanup.policy=compact refuses null keys; back to delete accepts them', async () => {
    assert.equal((await alterIncremental('cfg', 'cleanup.policy', 'compact')).errorCode, 0)
    const nullKey = makeBatch([{ key: null, value: 'v', timestamp: Date.now() }])
    assert.equal(
      (await produce(c, [{ topic: 'cfg', partition: 0, records: nullKey }]))[0].errorCode,
      ErrorCode.INVALID_RECORD,
    )
    assert.equal((await alterIncremental('cfg', 'cleanup.policy', null, 1)).errorCode, 0)
    assert.equal((await produce(c, [{ topic: 'cfg', partition: 0, records: nullKey }]))[0].errorCode, 0)
  })
})

describe('durability and deletion', () => {
  it('records and the log start offset survive a restart; a deleted topic takes its data with it', async () => {
    assert.deepEqual(await createTopics(c, [{ name: 'keep', partitions: 2 }, { name: 'drop' }]), [0, 0])
    await produce(c, [
      {
        topic: 'keep',
        partition: 1,
        records: makeBatch([
          { key: 'a', value: '1', timestamp: T0 },
          { key: 'b', value: '2', timestamp: T0 + 1 },
        ]),
      },
      { topic: 'drop', partition: 0, records: makeBatch([{ key: 'x', value: 'y', timestamp: T0 }]) },
    ])
    await c.request(21, 2, {
      topics: [{ name: 'keep', partitions: [{ partitionIndex: 1, offset: 1n }] }],
      timeoutMs: 1000,
    })
    await c.request(20, 6, { topics: [{ name: 'drop', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], timeoutMs: 1000 })
    c.close()
    const dataDir = ts.dataDir
    await ts.stop(true)
    ts = await startTestServer({}, {}, dataDir)
    c = await WireClient.connect(ts.port)
    assert.equal((await listOffset(c, 'keep', 1, -2)).offset, 1)
    assert.equal((await listOffset(c, 'keep', 1, -1)).offset, 2)
    const f = await fetch(c, [{ topic: 'keep', partition: 1, offset: 1 }])
    assert.deepEqual(
      readRecords(f.partitions[0].records).map((r) => [r.offset, r.key, r.value]),
      [
        [0, 'a', '1'],
        [1, 'b', '2'],
      ],
    )
    // A new topic of the deleted one's name starts empty.
    assert.deepEqual(await createTopics(c, [{ name: 'drop' }]), [0])
    assert.equal((await listOffset(c, 'drop', 0, -1)).offset, 0)
  })
})

describe('metrics', () => {
  it('counts messages and bytes in and out, failures, and reports log sizes', async () => {
    assert.deepEqual(await createTopics(c, [{ name: 'metered' }]), [0])
    const value = async (name: string, labels: Record<string, string> = {}) => {
      const m = (await register.getSingleMetric(name)?.get())?.values ?? []
      const hit = m.find(
        (v) =>
          Object.keys(labels).every((k) => v.labels[k] === labels[k]) &&
          Object.keys(v.labels).length === Object.keys(labels).length,
      )
      return hit?.value ?? 0
    }
    const topic = { topic: 'metered' }
    const batch = makeBatch([
      { key: 'a', value: 'b', timestamp: T0 },
      { key: 'c', value: 'd', timestamp: T0 },
    ])
    const totalBefore = await value('kafka_server_brokertopicmetrics_messagesinpersec_count')
    await produce(c, [{ topic: 'metered', partition: 0, records: batch }])
    const corrupt = makeBatch([{ key: 'a', value: 'b', timestamp: T0 }])
    corrupt[corrupt.length - 1] ^= 1
    await produce(c, [{ topic: 'metered', partition: 0, records: corrupt }])
    await fetch(c, [{ topic: 'metered', partition: 0, offset: 0 }])
    await fetch(c, [{ topic: 'metered', partition: 0, offset: 99 }])
    assert.equal(await value('kafka_server_brokertopicmetrics_messagesinpersec_count', topic), 2)
    assert.equal(await value('kafka_server_brokertopicmetrics_messagesinpersec_count'), totalBefore + 2)
    assert.equal(await value('kafka_server_brokertopicmetrics_bytesinpersec_count', topic), batch.byteLength)
    assert.equal(await value('kafka_server_brokertopicmetrics_bytesoutpersec_count', topic), batch.byteLength)
    // A corrupt batch and a Fetch out of range are known errors: Kafka counts no failed request.
    assert.equal(await value('kafka_server_brokertopicmetrics_failedproducerequestspersec_count', topic), 0)
    assert.equal(await value('kafka_server_brokertopicmetrics_failedfetchrequestspersec_count', topic), 0)
    assert.equal(await value('kafka_server_brokertopicmetrics_totalproducerequestspersec_count', topic), 2)
    assert.equal(await value('kafka_server_brokertopicmetrics_totalfetchrequestspersec_count', topic), 2)
    assert.equal(await value('kafka_log_log_size', { topic: 'metered', partition: '0' }), batch.byteLength)
    assert.match(await register.metrics(), /kafka_log_log_size\{topic="metered",partition="0"\} \d+/)
  })
})

describe('broker defaults of the topic configs', () => {
  it('log.* keys set on the broker shape new topics and are described as STATIC_BROKER_CONFIG', async () => {
    const own = await startTestServer({ 'log.retention.hours': '2', 'message.max.bytes': '300' })
    const oc = await WireClient.connect(own.port)
    try {
      assert.deepEqual(await createTopics(oc, [{ name: 'dflt' }]), [0])
      const [tooLarge] = await produce(oc, [{ topic: 'dflt', partition: 0, records: big(400) }])
      assert.equal(tooLarge.errorCode, ErrorCode.MESSAGE_TOO_LARGE)
      const described = await oc.request<p.DescribeConfigsResponse>(32, 4, {
        resources: [
          { resourceType: 2, resourceName: 'dflt', configurationKeys: ['retention.ms', 'max.message.bytes'] },
        ],
        includeSynonyms: true,
        includeDocumentation: false,
      })
      assert.deepEqual(
        described.body.results[0].configs.map((x) => [
          x.name,
          x.value,
          x.configSource,
          x.synonyms.map((y) => [y.name, y.value, y.source]),
        ]),
        [
          [
            'max.message.bytes',
            '300',
            4,
            [
              ['message.max.bytes', '300', 4],
              ['message.max.bytes', '1048588', 5],
            ],
          ],
          [
            'retention.ms',
            '7200000',
            4,
            [
              ['log.retention.hours', '2', 4],
              ['log.retention.hours', '168', 5],
            ],
          ],
        ],
      )
    } finally {
      oc.close()
      await own.stop()
    }
  })
})
