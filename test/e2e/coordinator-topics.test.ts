// The coordinators' topics appear as in Kafka (KafkaApis.getCoordinator): the first FindCoordinator
// for a group creates `__consumer_offsets`, the first for a transactional id `__transaction_state`,
// with their own partition counts and configs; requests at the same time create a topic once; a
// refused key creates nothing. The coordinators here do not wait for the topic, so the answer names
// this node at once.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type { FindCoordinatorResponse } from '../../src/protocol/generated/messages/FindCoordinatorResponse.js'
import type { MetadataResponse } from '../../src/protocol/generated/messages/MetadataResponse.js'
import { createLogger } from '../../src/server/logger.js'
import type { Authorizer } from '../../src/server/router.js'
import { OpenClients, startTestServer, type TestServer } from '../server/harness.js'
import type { WireClient } from '../server/wire-client.js'

const logLines: { level: string; msg: string }[] = []
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line !== '') logLines.push(JSON.parse(line))
    done()
  },
})

/** Groups and transactional ids named "secret…" may not be described. */
const authorizer: Authorizer = {
  authorize: (_principal, _operation, resourceType, name) =>
    !(resourceType === 'GROUP' || resourceType === 'TRANSACTIONAL_ID') || !name.startsWith('secret'),
}

let ts: TestServer
const clients = new OpenClients()
const connect = () => clients.connect(ts.port)

before(async () => {
  ts = await startTestServer(
    { 'offsets.topic.num.partitions': '4', 'transaction.state.log.num.partitions': '3' },
    { authorizer, logger: createLogger({ level: 'info', destination: sink }) },
  )
})
after(async () => {
  clients.closeAll()
  await ts?.stop()
})

const topics = async (c: WireClient) =>
  (await c.request<MetadataResponse>(3, 12, { topics: null, allowAutoTopicCreation: false })).body.topics
    .map((t) => `${t.name}:${t.partitions.length}:${t.isInternal}`)
    .sort()

describe('FindCoordinator and the coordinators’ topics', () => {
  it('a refused key creates nothing', async () => {
    const c = await connect()
    const { body } = await c.request<FindCoordinatorResponse>(10, 3, { key: 'secret-g', keyType: 0 })
    assert.equal(body.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    const batch = await c.request<FindCoordinatorResponse>(10, 6, {
      keyType: 1,
      coordinatorKeys: ['secret-t'],
    })
    assert.equal(batch.body.coordinators[0]?.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    assert.deepEqual(await topics(c), [])
  })

  it('the first group key creates __consumer_offsets once, however many ask at the same time', async () => {
    const cs = await Promise.all([connect(), connect(), connect()])
    const answers = await Promise.all([
      cs[0]!.request<FindCoordinatorResponse>(10, 3, { key: 'g1', keyType: 0 }),
      cs[1]!.request<FindCoordinatorResponse>(10, 4, { keyType: 0, coordinatorKeys: ['g2', 'secret-g'] }),
      cs[2]!.request<FindCoordinatorResponse>(10, 2, { key: 'g3', keyType: 0 }),
    ])
    assert.deepEqual(
      [answers[0].body.errorCode, answers[2].body.errorCode],
      [0, 0],
      'the answers name this node at once',
    )
    assert.deepEqual(
      answers[1].body.coordinators.map((x) => [x.key, x.errorCode]),
      [
        ['g2', 0],
        ['secret-g', ErrorCode.GROUP_AUTHORIZATION_FAILED],
      ],
    )
    assert.deepEqual(await topics(cs[0]!), ['__consumer_offsets:4:true'])
    assert.deepEqual(ts.server.context.topics.byName('__consumer_offsets')?.configs, {
      'cleanup.policy': 'compact',
      'compression.type': 'producer',
      'segment.bytes': '104857600',
    })
    const created = logLines.filter((l) => l.msg.startsWith('Auto'))
    assert.deepEqual(
      created.map((l) => [l.level, l.msg]),
      [['info', 'Auto-created topic __consumer_offsets']],
    )
  })

  it('the first transactional id creates __transaction_state; later keys find both topics there', async () => {
    const c = await connect()
    const { body } = await c.request<FindCoordinatorResponse>(10, 6, { keyType: 1, coordinatorKeys: ['t1'] })
    assert.equal(body.coordinators[0]?.errorCode, 0)
    assert.deepEqual(await topics(c), ['__consumer_offsets:4:true', '__transaction_state:3:true'])
    assert.equal(
      ts.server.context.topics.byName('__transaction_state')?.configs['compression.type'],
      'uncompressed',
    )
    for (const keyType of [0, 1]) {
      const again = await c.request<FindCoordinatorResponse>(10, 3, { key: 'later', keyType })
      assert.equal(again.body.errorCode, 0)
    }
    assert.equal(
      logLines.filter((l) => l.msg.startsWith('Auto')).length,
      2,
      'each created once, nothing failed',
    )
  })
})
