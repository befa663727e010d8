// The admin client's transaction calls against a real server: describeTransactions of an open
// transaction (state, producer, partitions, start time) and of an unknown id
// (TRANSACTIONAL_ID_NOT_FOUND), listTransactions with state, producer id and pattern filters, and
// describeProducers of a partition holding the transaction's first batch.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Admin, KafkaError } from '../../../src/clients/admin/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import type * as p from '../../../src/protocol/index.js'
import { createTopics, makeBatch, produce } from '../../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../../server/harness.js'
import { WireClient } from '../../server/wire-client.js'

let ts: TestServer
let c: WireClient
let admin: Admin
let pid: { producerId: bigint; producerEpoch: number }
before(async () => {
  ts = await startTestServer()
  c = await WireClient.connect(ts.port)
  assert.deepEqual(await createTopics(c, [{ name: 'adm-tx', partitions: 2 }]), [0])
  admin = Admin.create({ bootstrapServers: `127.0.0.1:${ts.port}`, defaultApiTimeoutMs: 10_000 })
  const init = await c.request<p.InitProducerIdResponse>(22, 5, {
    transactionalId: 'adm-open',
    transactionTimeoutMs: 60000,
    producerId: -1n,
    producerEpoch: -1,
  })
  pid = { producerId: init.body.producerId, producerEpoch: init.body.producerEpoch }
  const batch = makeBatch([{ key: 'k', value: 'v', timestamp: 1_700_000_000_000 }], {
    producerId: Number(pid.producerId),
    producerEpoch: pid.producerEpoch,
    baseSequence: 0,
    transactional: true,
  })
  // Produce v12 adds the partition to the transaction.
  const [answer] = await produce(c, [{ topic: 'adm-tx', partition: 1, records: batch }], {
    version: 12,
    transactionalId: 'adm-open',
  })
  assert.equal(answer.errorCode, ErrorCode.NONE)
  const idle = await c.request<p.InitProducerIdResponse>(22, 5, {
    transactionalId: 'adm-idle',
    transactionTimeoutMs: 60000,
    producerId: -1n,
    producerEpoch: -1,
  })
  assert.equal(idle.body.errorCode, ErrorCode.NONE)
})
after(async () => {
  await admin?.close()
  c?.close()
  await ts?.stop()
})

describe('Admin transactions', () => {
  it('describeTransactions: an open transaction and an unknown id', async () => {
    const r = admin.describeTransactions(['adm-open', 'nobody'])
    const d = await r.get('adm-open')
    assert.equal(d.state, 'Ongoing')
    assert.equal(d.coordinatorId, 1)
    assert.equal(d.producerId, pid.producerId)
    assert.equal(d.producerEpoch, pid.producerEpoch)
    assert.equal(d.transactionTimeoutMs, 60000)
    assert.ok(d.transactionStartTimeMs !== null && d.transactionStartTimeMs <= Date.now())
    assert.deepEqual(d.topicPartitions, [{ topic: 'adm-tx', partition: 1 }])
    await assert.rejects(
      r.get('nobody'),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
    )
  })

  it('listTransactions with filters', async () => {
    const all = await admin.listTransactions()
    assert.deepEqual(
      all.map((t) => [t.transactionalId, t.state]),
      [
        ['adm-idle', 'Empty'],
        ['adm-open', 'Ongoing'],
      ],
    )
    assert.deepEqual(
      (await admin.listTransactions({ filterStates: ['Ongoing'] })).map((t) => t.transactionalId),
      ['adm-open'],
    )
    assert.deepEqual(
      (await admin.listTransactions({ filterProducerIds: [pid.producerId] })).map((t) => t.producerId),
      [pid.producerId],
    )
    assert.deepEqual(
      (await admin.listTransactions({ filterOnTransactionalIdPattern: 'adm-i.*' })).map(
        (t) => t.transactionalId,
      ),
      ['adm-idle'],
    )
  })

  it('describeProducers: the open transaction start offset', async () => {
    const r = admin.describeProducers([
      { topic: 'adm-tx', partition: 1 },
      { topic: 'adm-tx', partition: 0 },
      { topic: 'missing', partition: 0 },
    ])
    const [state] = await r.get('adm-tx-1')
    assert.equal(state.producerId, pid.producerId)
    assert.equal(state.producerEpoch, pid.producerEpoch)
    assert.equal(state.lastSequence, 0)
    assert.equal(state.currentTransactionStartOffset, 0)
    assert.equal(state.coordinatorEpoch, null)
    assert.deepEqual(await r.get('adm-tx-0'), [])
    await assert.rejects(r.get('missing-0'), (e: unknown) => e instanceof KafkaError && e.code === 3)
  })
})
