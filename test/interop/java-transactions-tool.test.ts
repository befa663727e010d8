// kafka-transactions (Kafka's TransactionsCommand) against the server: `list` and `describe` of an
// open transaction, `describe-producers` of its partition, then `abort` of the hanging transaction
// (DescribeProducers, then WriteTxnMarkers to the partition leader): the ABORT marker lands, the
// last stable offset moves past the transaction and a read_committed read no longer waits on it.
// Needs Java 17+ and ../shared/kafka-java (skipped with a message otherwise).
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import { createTopics, makeBatch, produce } from '../helpers/data-plane.js'
import { kafkaJavaSkip, runKafkaTool } from '../helpers/interop.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

let ts: TestServer
let c: WireClient
let pid: { producerId: bigint; producerEpoch: number }
before(async () => {
  if (kafkaJavaSkip) return
  ts = await startTestServer()
  c = await WireClient.connect(ts.port)
  assert.deepEqual(await createTopics(c, [{ name: 'hang' }]), [0])
  // A transaction left open for a long time: one batch at offset 0, then a plain record.
  const init = await c.request<p.InitProducerIdResponse>(22, 5, {
    transactionalId: 'hanging-tx',
    transactionTimeoutMs: 900000,
    producerId: -1n,
    producerEpoch: -1,
  })
  pid = { producerId: init.body.producerId, producerEpoch: init.body.producerEpoch }
  const batch = makeBatch([{ key: 'k', value: 'open', timestamp: Date.now() }], {
    producerId: Number(pid.producerId),
    producerEpoch: pid.producerEpoch,
    baseSequence: 0,
    transactional: true,
  })
  const [a] = await produce(c, [{ topic: 'hang', partition: 0, records: batch }], {
    version: 12,
    transactionalId: 'hanging-tx',
  })
  assert.equal(a.errorCode, ErrorCode.NONE)
  const plain = makeBatch([{ key: 'k', value: 'after', timestamp: Date.now() }])
  await produce(c, [{ topic: 'hang', partition: 0, records: plain }], { version: 12 })
})
after(async () => {
  c?.close()
  await ts?.stop()
})

const tool = (args: string[]) =>
  runKafkaTool('kafka-transactions', ['--bootstrap-server', `127.0.0.1:${ts.port}`, ...args], {
    timeoutMs: 120_000,
  })

describe('kafka-transactions', { skip: kafkaJavaSkip }, () => {
  it('lists, describes and aborts a hanging transaction', { timeout: 300_000 }, async () => {
    const log = ts.server.context.data.partition('hang', 0)!
    assert.equal(log.lastStableOffset, 0, 'the open transaction holds the LSO')

    const listed = await tool(['list'])
    assert.equal(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, /hanging-tx\s+1\s+\d+\s+Ongoing/)

    const described = await tool(['describe', '--transactional-id', 'hanging-tx'])
    assert.equal(described.code, 0, described.stderr)
    assert.match(described.stdout, /Ongoing/)
    assert.match(described.stdout, /hang-0/)

    const producers = await tool(['describe-producers', '--topic', 'hang', '--partition', '0'])
    assert.equal(producers.code, 0, producers.stderr)
    assert.match(producers.stdout, new RegExp(`^${pid.producerId}\\s+${pid.producerEpoch}\\s`, 'm'))

    const aborted = await tool(['abort', '--topic', 'hang', '--partition', '0', '--start-offset', '0'])
    assert.equal(aborted.code, 0, `${aborted.stdout}${aborted.stderr}`)
    // The ABORT marker at offset 2 ended the transaction: the LSO is the high watermark.
    assert.equal(log.logEndOffset, 3)
    assert.equal(log.lastStableOffset, 3)
  })
})
