// The transaction APIs over TCP with the server's wire codecs: AddPartitionsToTxn v3 refusals
// (unknown partitions, the others not attempted) and adds, DescribeTransactions and
// ListTransactions of an open transaction, EndTxn, a transactional Produce to a partition outside
// the transaction (INVALID_TXN_STATE below v11), and the TRANSACTIONAL_ID authorization of
// FindCoordinator, InitProducerId, DescribeTransactions and ListTransactions.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import type { Authorizer } from '../../src/server/router.js'
import { createTopics, makeBatch, produce } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const authorizer: Authorizer = {
  authorize(_principal, _operation, resourceType, resourceName) {
    return !(resourceType === 'TRANSACTIONAL_ID' && resourceName.startsWith('secret'))
  },
}

let ts: TestServer
let c: WireClient
before(async () => {
  ts = await startTestServer({}, { authorizer })
  c = await WireClient.connect(ts.port)
  assert.deepEqual(await createTopics(c, [{ name: 'tx-a', partitions: 2 }]), [0])
})
after(async () => {
  c?.close()
  await ts?.stop()
})

async function init(transactionalId: string): Promise<{ producerId: bigint; producerEpoch: number }> {
  const r = await c.request<p.InitProducerIdResponse>(22, 4, {
    transactionalId,
    transactionTimeoutMs: 60000,
    producerId: -1n,
    producerEpoch: -1,
  })
  assert.equal(r.body.errorCode, ErrorCode.NONE)
  return { producerId: r.body.producerId, producerEpoch: r.body.producerEpoch }
}

async function stateOf(transactionalId: string): Promise<p.DescribeTransactionsResponse> {
  return (await c.request<p.DescribeTransactionsResponse>(65, 0, { transactionalIds: [transactionalId] }))
    .body
}

describe('transaction APIs', () => {
  it('AddPartitionsToTxn v3, Describe/ListTransactions, EndTxn', async () => {
    const pid = await init('t1')
    const add = (topics: { name: string; partitions: number[] }[]) =>
      c.request<p.AddPartitionsToTxnResponse>(24, 3, {
        v3AndBelowTransactionalId: 't1',
        v3AndBelowProducerId: pid.producerId,
        v3AndBelowProducerEpoch: pid.producerEpoch,
        v3AndBelowTopics: topics,
      })
    const refused = await add([
      { name: 'tx-a', partitions: [0] },
      { name: 'nope', partitions: [0] },
    ])
    assert.deepEqual(
      refused.body.resultsByTopicV3AndBelow.map((t) => [t.name, t.resultsByPartition[0].partitionErrorCode]),
      [
        ['tx-a', ErrorCode.OPERATION_NOT_ATTEMPTED],
        ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ],
    )
    const ok = await add([{ name: 'tx-a', partitions: [1, 0] }])
    assert.deepEqual(
      ok.body.resultsByTopicV3AndBelow[0].resultsByPartition.map((r) => r.partitionErrorCode),
      [0, 0],
    )
    const described = (await stateOf('t1')).transactionStates[0]
    assert.equal(described.transactionState, 'Ongoing')
    assert.deepEqual(
      described.topics.map((t) => [t.topic, [...t.partitions].sort()]),
      [['tx-a', [0, 1]]],
    )
    const listed = await c.request<p.ListTransactionsResponse>(66, 2, {
      stateFilters: ['Ongoing'],
      producerIdFilters: [],
      durationFilter: -1n,
      transactionalIdPattern: 't.*',
    })
    assert.deepEqual(
      listed.body.transactionStates.map((t) => [t.transactionalId, t.producerId, t.transactionState]),
      [['t1', pid.producerId, 'Ongoing']],
    )
    const end = await c.request<p.EndTxnResponse>(26, 3, { transactionalId: 't1', ...pid, committed: false })
    assert.equal(end.body.errorCode, ErrorCode.NONE)
    const deadline = Date.now() + 5000
    while ((await stateOf('t1')).transactionStates[0].transactionState !== 'CompleteAbort') {
      assert.ok(Date.now() < deadline, 'markers written')
      await new Promise((r) => setTimeout(r, 20))
    }
    // One ABORT marker in each partition.
    assert.deepEqual(
      [0, 1].map((i) => ts.server.context.data.partition('tx-a', i)!.logEndOffset),
      [1, 1],
    )
  })

  it('a transactional Produce below v11 to a partition outside the transaction: INVALID_TXN_STATE', async () => {
    const pid = await init('t2')
    const batch = makeBatch([{ key: 'k', value: 'v', timestamp: 1_700_000_000_000 }], {
      producerId: Number(pid.producerId),
      producerEpoch: pid.producerEpoch,
      baseSequence: 0,
      transactional: true,
    })
    const [answer] = await produce(c, [{ topic: 'tx-a', partition: 0, records: batch }], {
      version: 9,
      transactionalId: 't2',
    })
    assert.equal(answer.errorCode, ErrorCode.INVALID_TXN_STATE)
    assert.equal(ts.server.context.data.partition('tx-a', 0)!.logEndOffset, 1, 'nothing appended')
  })

  it('a partition with the producer transaction open skips the coordinator (verification guard)', async () => {
    assert.deepEqual(await createTopics(c, [{ name: 'tx-guard', partitions: 2 }]), [0])
    const pid = await init('t3')
    const batch = (baseSequence: number) =>
      makeBatch([{ key: 'k', value: 'v', timestamp: 1_700_000_000_000 }], {
        producerId: Number(pid.producerId),
        producerEpoch: pid.producerEpoch,
        baseSequence,
        transactional: true,
      })
    // v12 adds partition 0 to t3's transaction, and the batch opens the transaction there.
    const [first] = await produce(c, [{ topic: 'tx-guard', partition: 0, records: batch(0) }], {
      version: 12,
      transactionalId: 't3',
    })
    assert.equal(first.errorCode, ErrorCode.NONE)
    // The guard is the producer id and epoch alone, as in Kafka: a request naming a transactional id
    // the coordinator does not know appends where the transaction is open (no coordinator call)...
    const [guarded] = await produce(c, [{ topic: 'tx-guard', partition: 0, records: batch(1) }], {
      version: 12,
      transactionalId: 'unknown-to-the-coordinator',
    })
    assert.equal(guarded.errorCode, ErrorCode.NONE)
    // ...while a partition without it goes to the coordinator, which does not know that id.
    const [asked] = await produce(c, [{ topic: 'tx-guard', partition: 1, records: batch(0) }], {
      version: 12,
      transactionalId: 'unknown-to-the-coordinator',
    })
    assert.equal(asked.errorCode, ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    assert.deepEqual(
      [0, 1].map((i) => ts.server.context.data.partition('tx-guard', i)!.logEndOffset),
      [2, 0],
    )
  })

  it('TRANSACTIONAL_ID authorization', async () => {
    const fc = await c.request<p.FindCoordinatorResponse>(10, 4, {
      keyType: 1,
      coordinatorKeys: ['secret-1', 'open-1'],
    })
    assert.deepEqual(
      fc.body.coordinators.map((x) => [x.key, x.errorCode, x.nodeId]),
      [
        ['secret-1', ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1],
        ['open-1', ErrorCode.NONE, 1],
      ],
    )
    const ipi = await c.request<p.InitProducerIdResponse>(22, 4, {
      transactionalId: 'secret-1',
      transactionTimeoutMs: 60000,
      producerId: -1n,
      producerEpoch: -1,
    })
    assert.equal(ipi.body.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    const d = await c.request<p.DescribeTransactionsResponse>(65, 0, {
      transactionalIds: ['secret-1', 'nobody'],
    })
    assert.deepEqual(
      d.body.transactionStates.map((s) => [s.transactionalId, s.errorCode]),
      [
        ['secret-1', ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED],
        ['nobody', ErrorCode.TRANSACTIONAL_ID_NOT_FOUND],
      ],
    )
  })
})
