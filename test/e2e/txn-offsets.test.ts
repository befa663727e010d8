// Transactional offsets over TCP with the server's wire codecs: TxnOffsetCommit v5 adds the group's
// offsets partition to the transaction, the offsets stay pending (OffsetFetch RequireStable answers
// UNSTABLE_OFFSET_COMMIT, a plain fetch the last committed offset) until the COMMIT marker makes
// them committed or the ABORT marker drops them; below v5 the offsets partition must have been added
// by AddOffsetsToTxn (INVALID_TXN_STATE / TRANSACTION_ABORTABLE otherwise); fenced epochs, the
// authorizations, an unknown group with a generation; pending offsets survive a restart and are
// settled by the marker afterwards; WriteTxnMarkers settles them as the coordinator's markers do,
// and is refused without ALTER or CLUSTER_ACTION on the cluster.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import type { Authorizer } from '../../src/server/router.js'
import { createTopics } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const authorizer: Authorizer = {
  authorize(_principal, operation, resourceType, resourceName) {
    if (resourceType === 'TRANSACTIONAL_ID' && resourceName.startsWith('secret')) return false
    if (resourceType === 'GROUP' && resourceName.startsWith('secret')) return false
    if (resourceType === 'CLUSTER') return operation === 'CLUSTER_ACTION'
    return true
  },
}

let ts: TestServer
let c: WireClient
before(async () => {
  ts = await startTestServer({}, { authorizer })
  c = await WireClient.connect(ts.port)
  assert.deepEqual(await createTopics(c, [{ name: 'in', partitions: 2 }]), [0])
})
after(async () => {
  c?.close()
  await ts?.stop()
})

interface Pid {
  producerId: bigint
  producerEpoch: number
}

async function init(client: WireClient, transactionalId: string): Promise<Pid> {
  const r = await client.request<p.InitProducerIdResponse>(22, 5, {
    transactionalId,
    transactionTimeoutMs: 60000,
    producerId: -1n,
    producerEpoch: -1,
  })
  assert.equal(r.body.errorCode, ErrorCode.NONE)
  return { producerId: r.body.producerId, producerEpoch: r.body.producerEpoch }
}

function txnCommit(
  client: WireClient,
  version: number,
  transactionalId: string,
  groupId: string,
  pid: Pid,
  offsets: Record<number, bigint>,
  extra: Partial<p.TxnOffsetCommitRequest> = {},
) {
  return client.request<p.TxnOffsetCommitResponse>(28, version, {
    transactionalId,
    groupId,
    ...pid,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [
      {
        name: 'in',
        topicId: ts.server.context.topics.byName('in')!.topicId,
        partitions: Object.entries(offsets).map(([i, o]) => ({
          partitionIndex: Number(i),
          committedOffset: o,
          committedLeaderEpoch: -1,
          committedMetadata: 'm',
        })),
      },
    ],
    ...extra,
  })
}

const codes = (r: { body: p.TxnOffsetCommitResponse }) =>
  r.body.topics.flatMap((t) => t.partitions.map((x) => x.errorCode))

/** OffsetFetch v8 of partitions 0 and 1 of `in`: [errorCode, committedOffset] each. */
async function fetchOffsets(client: WireClient, groupId: string, requireStable: boolean) {
  const r = await client.request<p.OffsetFetchResponse>(9, 8, {
    groups: [{ groupId, topics: [{ name: 'in', partitionIndexes: [0, 1] }] }],
    requireStable,
  })
  return r.body.groups[0].topics[0].partitions.map((x) => [x.errorCode, x.committedOffset])
}

async function endTxn(
  client: WireClient,
  transactionalId: string,
  pid: Pid,
  committed: boolean,
): Promise<Pid> {
  const r = await client.request<p.EndTxnResponse>(26, 5, { transactionalId, ...pid, committed })
  assert.equal(r.body.errorCode, ErrorCode.NONE)
  return { producerId: r.body.producerId, producerEpoch: r.body.producerEpoch }
}

async function settled(server: TestServer, transactionalId: string): Promise<string> {
  const deadline = Date.now() + 5000
  for (;;) {
    const [d] = await server.server.context.transactions.describeTransactions([transactionalId])
    if (d.transactionState.startsWith('Complete')) return d.transactionState
    assert.ok(Date.now() < deadline, `transaction ${transactionalId} completes`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('transactional offsets', () => {
  it('v5: pending until COMMIT, UNSTABLE_OFFSET_COMMIT for RequireStable meanwhile', async () => {
    let pid = await init(c, 'to-1')
    assert.deepEqual(codes(await txnCommit(c, 5, 'to-1', 'g1', pid, { 0: 5n, 1: 7n })), [0, 0])
    const [d] = await ts.server.context.transactions.describeTransactions(['to-1'])
    assert.equal(d.transactionState, 'Ongoing')
    assert.deepEqual(
      d.topics.map((t) => t.topic),
      ['__consumer_offsets'],
    )
    assert.deepEqual(await fetchOffsets(c, 'g1', true), [
      [ErrorCode.UNSTABLE_OFFSET_COMMIT, -1n],
      [ErrorCode.UNSTABLE_OFFSET_COMMIT, -1n],
    ])
    assert.deepEqual(await fetchOffsets(c, 'g1', false), [
      [0, -1n],
      [0, -1n],
    ])
    pid = await endTxn(c, 'to-1', pid, true)
    assert.equal(await settled(ts, 'to-1'), 'CompleteCommit')
    assert.deepEqual(await fetchOffsets(c, 'g1', true), [
      [0, 5n],
      [0, 7n],
    ])

    // A second transaction that aborts leaves the committed offsets as they were.
    assert.deepEqual(codes(await txnCommit(c, 5, 'to-1', 'g1', pid, { 0: 50n })), [0])
    assert.deepEqual((await fetchOffsets(c, 'g1', true))[0], [ErrorCode.UNSTABLE_OFFSET_COMMIT, -1n])
    pid = await endTxn(c, 'to-1', pid, false)
    assert.equal(await settled(ts, 'to-1'), 'CompleteAbort')
    assert.deepEqual(await fetchOffsets(c, 'g1', true), [
      [0, 5n],
      [0, 7n],
    ])
  })

  it('a non-transactional commit after the pending offset wins over it', async () => {
    let pid = await init(c, 'to-2')
    assert.deepEqual(codes(await txnCommit(c, 5, 'to-2', 'g2', pid, { 0: 10n, 1: 11n })), [0, 0])
    const oc = await c.request<p.OffsetCommitResponse>(8, 9, {
      groupId: 'g2',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [
        {
          name: 'in',
          partitions: [
            { partitionIndex: 0, committedOffset: 99n, committedLeaderEpoch: -1, committedMetadata: '' },
          ],
        },
      ],
    })
    assert.equal(oc.body.topics[0].partitions[0].errorCode, 0)
    pid = await endTxn(c, 'to-2', pid, true)
    await settled(ts, 'to-2')
    assert.deepEqual(await fetchOffsets(c, 'g2', true), [
      [0, 99n],
      [0, 11n],
    ])
  })

  it('below v5 the offsets partition must be added with AddOffsetsToTxn', async () => {
    const pid = await init(c, 'to-3')
    assert.deepEqual(codes(await txnCommit(c, 3, 'to-3', 'g3', pid, { 0: 1n })), [
      ErrorCode.INVALID_TXN_STATE,
    ])
    assert.deepEqual(codes(await txnCommit(c, 4, 'to-3', 'g3', pid, { 0: 1n })), [
      ErrorCode.TRANSACTION_ABORTABLE,
    ])
    const add = await c.request<p.AddOffsetsToTxnResponse>(25, 3, {
      transactionalId: 'to-3',
      ...pid,
      groupId: 'g3',
    })
    assert.equal(add.body.errorCode, ErrorCode.NONE)
    assert.deepEqual(codes(await txnCommit(c, 3, 'to-3', 'g3', pid, { 0: 1n })), [0])
    const end = await c.request<p.EndTxnResponse>(26, 3, { transactionalId: 'to-3', ...pid, committed: true })
    assert.equal(end.body.errorCode, ErrorCode.NONE)
    await settled(ts, 'to-3')
    assert.deepEqual((await fetchOffsets(c, 'g3', true))[0], [0, 1n])
  })

  it('fenced epochs, authorization, unknown topics, unknown groups with a generation', async () => {
    const pid = await init(c, 'to-4')
    const stale = { producerId: pid.producerId, producerEpoch: pid.producerEpoch - 1 }
    assert.deepEqual(codes(await txnCommit(c, 5, 'to-4', 'g4', stale, { 0: 1n })), [
      ErrorCode.INVALID_PRODUCER_EPOCH,
    ])
    assert.deepEqual(codes(await txnCommit(c, 5, 'secret-1', 'g4', pid, { 0: 1n })), [
      ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ])
    assert.deepEqual(codes(await txnCommit(c, 5, 'to-4', 'secret-g', pid, { 0: 1n })), [
      ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ])
    const unknown = await txnCommit(c, 5, 'to-4', 'g4', pid, { 0: 1n, 7: 1n })
    assert.deepEqual(codes(unknown), [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION])
    const withGeneration = { generationIdOrMemberEpoch: 3, memberId: 'm' }
    assert.deepEqual(codes(await txnCommit(c, 5, 'to-4', 'nobody', pid, { 0: 1n }, withGeneration)), [
      ErrorCode.ILLEGAL_GENERATION,
    ])
    assert.deepEqual(codes(await txnCommit(c, 6, 'to-4', 'nobody', pid, { 0: 1n }, withGeneration)), [
      ErrorCode.GROUP_ID_NOT_FOUND,
    ])
    // g4 exists now (a simple group with a pending offset): a member id is unknown to it.
    assert.deepEqual(codes(await txnCommit(c, 5, 'to-4', 'g4', pid, { 0: 1n }, withGeneration)), [
      ErrorCode.UNKNOWN_MEMBER_ID,
    ])
    await endTxn(c, 'to-4', pid, false)
    await settled(ts, 'to-4')
    assert.deepEqual(await fetchOffsets(c, 'g4', true), [
      [0, -1n],
      [0, -1n],
    ])
  })

  it('WriteTxnMarkers settles pending offsets through the same writer (CLUSTER_ACTION)', async () => {
    const pid = await init(c, 'to-5')
    assert.deepEqual(codes(await txnCommit(c, 5, 'to-5', 'g5', pid, { 1: 42n })), [0])
    const shard = ts.server.context.coordinator.shardFor('g5')
    const r = await c.request<p.WriteTxnMarkersResponse>(27, 2, {
      markers: [
        {
          ...pid,
          transactionResult: true,
          topics: [
            { name: '__consumer_offsets', partitionIndexes: [shard] },
            { name: 'missing', partitionIndexes: [0] },
          ],
          coordinatorEpoch: 0,
          transactionVersion: 2,
        },
      ],
    })
    assert.deepEqual(
      r.body.markers.map((m) => [m.producerId, m.topics.map((t) => [t.name, t.partitions[0].errorCode])]),
      [
        [
          pid.producerId,
          [
            ['__consumer_offsets', ErrorCode.NONE],
            ['missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
          ],
        ],
      ],
    )
    assert.deepEqual((await fetchOffsets(c, 'g5', true))[1], [0, 42n])
    // The coordinator's own marker later finds nothing pending: nothing changes.
    await endTxn(c, 'to-5', pid, false)
    await settled(ts, 'to-5')
    assert.deepEqual((await fetchOffsets(c, 'g5', true))[1], [0, 42n])
  })

  it('WriteTxnMarkers without ALTER or CLUSTER_ACTION on the cluster: CLUSTER_AUTHORIZATION_FAILED', async () => {
    const denying = await startTestServer(
      {},
      { authorizer: { authorize: (_p, _o, type) => type !== 'CLUSTER' } },
    )
    const client = await WireClient.connect(denying.port)
    try {
      const r = await client.request<p.WriteTxnMarkersResponse>(27, 1, {
        markers: [
          {
            producerId: 5n,
            producerEpoch: 0,
            transactionResult: false,
            topics: [{ name: 'x', partitionIndexes: [0, 1] }],
            coordinatorEpoch: 0,
            transactionVersion: 0,
          },
        ],
      })
      assert.deepEqual(
        r.body.markers[0].topics[0].partitions.map((x) => x.errorCode),
        [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED],
      )
    } finally {
      client.close()
      await denying.stop()
    }
  })

  it('pending offsets survive a restart and are settled by the marker afterwards', async () => {
    const own = await startTestServer()
    let client = await WireClient.connect(own.port)
    await createTopics(client, [{ name: 'in', partitions: 2 }])
    let pid = await init(client, 'to-6')
    assert.deepEqual(codes(await txnCommit(client, 5, 'to-6', 'g6', pid, { 0: 3n })), [0])
    client.close()
    await own.stop(true)
    const again = await startTestServer({}, {}, own.dataDir)
    try {
      client = await WireClient.connect(again.port)
      assert.deepEqual((await fetchOffsets(client, 'g6', true))[0], [ErrorCode.UNSTABLE_OFFSET_COMMIT, -1n])
      pid = await endTxn(client, 'to-6', pid, true)
      await settled(again, 'to-6')
      assert.deepEqual((await fetchOffsets(client, 'g6', true))[0], [0, 3n])
      client.close()
    } finally {
      await again.stop()
    }
  })
})
