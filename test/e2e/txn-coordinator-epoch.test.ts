// The transaction coordinator epoch over restarts: every start writes its markers with an epoch
// one above the last start's (kept in the log directory), so a partition that saw a newer
// coordinator's marker refuses a marker with an older epoch (TRANSACTION_COORDINATOR_FENCED), as
// Kafka's partitions do with the `__transaction_state` leader epoch.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import { COORDINATOR_EPOCH_FILE } from '../../src/server/data/coordinator-epoch.js'
import { createTopics, makeBatch, produce } from '../helpers/data-plane.js'
import { startTestServer, type TestServer, tempDataDir } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const TOPIC = 'epoch-t'

/** InitProducerId, one transactional batch (Produce v12), EndTxn v5 commit; waits for the marker. */
async function commitOne(
  ts: TestServer,
  c: WireClient,
): Promise<{ producerId: bigint; producerEpoch: number }> {
  const init = await c.request<p.InitProducerIdResponse>(22, 5, {
    transactionalId: 'epoch-tx',
    transactionTimeoutMs: 60000,
    producerId: -1n,
    producerEpoch: -1,
  })
  assert.equal(init.body.errorCode, ErrorCode.NONE)
  const { producerId, producerEpoch } = init.body
  const end0 = ts.server.context.data.partition(TOPIC, 0)!.logEndOffset
  const batch = makeBatch([{ key: 'k', value: 'v', timestamp: 1_700_000_000_000 }], {
    producerId: Number(producerId),
    producerEpoch,
    baseSequence: 0,
    transactional: true,
  })
  const [answer] = await produce(c, [{ topic: TOPIC, partition: 0, records: batch }], {
    version: 12,
    transactionalId: 'epoch-tx',
  })
  assert.equal(answer.errorCode, ErrorCode.NONE)
  const end = await c.request<p.EndTxnResponse>(26, 5, {
    transactionalId: 'epoch-tx',
    producerId,
    producerEpoch,
    committed: true,
  })
  assert.equal(end.body.errorCode, ErrorCode.NONE)
  // The record and the COMMIT marker.
  const deadline = Date.now() + 5000
  while (ts.server.context.data.partition(TOPIC, 0)!.logEndOffset < end0 + 2) {
    assert.ok(Date.now() < deadline, 'marker written')
    await new Promise((r) => setTimeout(r, 10))
  }
  return { producerId: end.body.producerId, producerEpoch: end.body.producerEpoch }
}

/** The partition's producer state as DescribeProducers shows it. */
async function producerState(
  c: WireClient,
): Promise<p.DescribeProducersResponse['topics'][0]['partitions'][0]['activeProducers'][0]> {
  const r = await c.request<p.DescribeProducersResponse>(61, 0, {
    topics: [{ name: TOPIC, partitionIndexes: [0] }],
  })
  const partition = r.body.topics[0]!.partitions[0]!
  assert.equal(partition.errorCode, ErrorCode.NONE)
  assert.equal(partition.activeProducers.length, 1)
  return partition.activeProducers[0]!
}

function writeMarker(c: WireClient, producerId: bigint, producerEpoch: number, coordinatorEpoch: number) {
  return c.request<p.WriteTxnMarkersResponse>(27, 1, {
    markers: [
      {
        producerId,
        producerEpoch,
        transactionResult: false,
        topics: [{ name: TOPIC, partitionIndexes: [0] }],
        coordinatorEpoch,
      },
    ],
  })
}

test('the coordinator epoch grows at every start; an older epoch is fenced', {
  timeout: 60_000,
}, async () => {
  const dataDir = tempDataDir()
  let ts = await startTestServer({}, {}, dataDir)
  let c = await WireClient.connect(ts.port)
  try {
    assert.deepEqual(await createTopics(c, [{ name: TOPIC, partitions: 1 }]), [0])
    await commitOne(ts, c)
    const first = await producerState(c)
    c.close()
    await ts.stop(true)

    ts = await startTestServer({}, {}, dataDir)
    c = await WireClient.connect(ts.port)
    const next = await commitOne(ts, c)
    const second = await producerState(c)
    assert.ok(second.coordinatorEpoch > first.coordinatorEpoch, 'a restart raised the coordinator epoch')
    assert.equal(
      readFileSync(join(ts.server.context.data.metadataDir!, COORDINATOR_EPOCH_FILE), 'utf8'),
      `version: 0\ncoordinator.epoch: ${second.coordinatorEpoch}\n`,
    )
    // A marker of the earlier start's coordinator (a stale write) is refused...
    const stale = await writeMarker(c, next.producerId, second.producerEpoch, first.coordinatorEpoch)
    assert.equal(
      stale.body.markers[0]!.topics[0]!.partitions[0]!.errorCode,
      ErrorCode.TRANSACTION_COORDINATOR_FENCED,
    )
    // ...one with the current epoch is written.
    const current = await writeMarker(c, next.producerId, second.producerEpoch, second.coordinatorEpoch)
    assert.equal(current.body.markers[0]!.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE)
  } finally {
    c.close()
    await ts.stop()
  }
})
