// KafkaJS's transactional producer against the server (transaction version 1 requests:
// FindCoordinator key type 1, InitProducerId with a transactional id, AddPartitionsToTxn v1,
// Produce with transactional batches, EndTxn v1): a commit and an abort each end with a marker in
// every partition of the transaction and the transactional id in CompleteCommit/CompleteAbort; a
// second producer with the same id fences the first; a read_committed consumer sees committed
// records only, and an open transaction's records once it commits; sendOffsets (AddOffsetsToTxn,
// TxnOffsetCommit v0–2) commits offsets with the transaction and an abort drops them.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Kafka, logLevel } from 'kafkajs'
import { startTestServer, type TestServer } from '../server/harness.js'

let ts: TestServer
let kafka: Kafka
before(async () => {
  ts = await startTestServer()
  kafka = new Kafka({
    clientId: 'kjs-txn',
    brokers: [`127.0.0.1:${ts.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 50 },
  })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({
    topics: [
      { topic: 'kjs-txn', numPartitions: 2 },
      { topic: 'kjs-rc', numPartitions: 1 },
    ],
  })
  await admin.disconnect()
})
after(async () => {
  await ts?.stop()
})

function endOffsets(topic: string): number[] {
  return [0, 1].map((p) => ts.server.context.data.partition(topic, p)!.logEndOffset)
}

async function stateOf(transactionalId: string, want: string): Promise<string> {
  const deadline = Date.now() + 5000
  for (;;) {
    const [d] = await ts.server.context.transactions.describeTransactions([transactionalId])
    if (d.transactionState === want || Date.now() > deadline) return d.transactionState
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('KafkaJS transactions', () => {
  it('commits and aborts, writing one marker per partition', async () => {
    const producer = kafka.producer({ transactionalId: 'kjs-tx-1', idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    const before = endOffsets('kjs-txn')

    const tx = await producer.transaction()
    await tx.send({
      topic: 'kjs-txn',
      messages: [
        { partition: 0, value: 'a' },
        { partition: 1, value: 'b' },
        { partition: 1, value: 'c' },
      ],
    })
    await tx.commit()
    assert.equal(await stateOf('kjs-tx-1', 'CompleteCommit'), 'CompleteCommit')
    // The records and one COMMIT marker per partition.
    assert.deepEqual(endOffsets('kjs-txn'), [before[0] + 2, before[1] + 3])

    const tx2 = await producer.transaction()
    await tx2.send({ topic: 'kjs-txn', messages: [{ partition: 0, value: 'x' }] })
    await tx2.abort()
    assert.equal(await stateOf('kjs-tx-1', 'CompleteAbort'), 'CompleteAbort')
    assert.deepEqual(endOffsets('kjs-txn'), [before[0] + 4, before[1] + 3])
    await producer.disconnect()

    const [d] = await ts.server.context.transactions.describeTransactions(['kjs-tx-1'])
    assert.equal(d.errorCode, 0)
    assert.deepEqual(d.topics, [])
  })

  it('a new producer with the same transactional id fences the old one', async () => {
    const old = kafka.producer({ transactionalId: 'kjs-tx-2', idempotent: true, maxInFlightRequests: 1 })
    await old.connect()
    const tx = await old.transaction()
    await tx.send({ topic: 'kjs-txn', messages: [{ partition: 0, value: 'zombie' }] })

    const fresh = kafka.producer({ transactionalId: 'kjs-tx-2', idempotent: true, maxInFlightRequests: 1 })
    await fresh.connect()
    // KafkaJS sends InitProducerId with its first transaction: the open one is aborted (fenced).
    const tx2 = await fresh.transaction()
    const [d] = await ts.server.context.transactions.describeTransactions(['kjs-tx-2'])
    assert.equal(d.transactionState, 'Empty')
    await assert.rejects(tx.commit(), (e: Error & { type?: string }) => {
      assert.match(String(e.type ?? e.message), /INVALID_PRODUCER_EPOCH|PRODUCER_FENCED/)
      return true
    })
    await tx2.send({ topic: 'kjs-txn', messages: [{ partition: 1, value: 'ok' }] })
    await tx2.commit()
    assert.equal(await stateOf('kjs-tx-2', 'CompleteCommit'), 'CompleteCommit')
    await old.disconnect()
    await fresh.disconnect()
  })

  it('a read_committed consumer sees committed records only', async () => {
    const producer = kafka.producer({ transactionalId: 'kjs-tx-3', idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    const committed = await producer.transaction()
    await committed.send({ topic: 'kjs-rc', messages: [{ value: 'c1' }, { value: 'c2' }] })
    await committed.commit()
    const aborted = await producer.transaction()
    await aborted.send({ topic: 'kjs-rc', messages: [{ value: 'a1' }] })
    await aborted.abort()
    await stateOf('kjs-tx-3', 'CompleteAbort')
    const open = await producer.transaction()
    await open.send({ topic: 'kjs-rc', messages: [{ value: 'o1' }] })

    const seen: string[] = []
    const consumer = kafka.consumer({ groupId: 'kjs-rc-g', maxWaitTimeInMs: 100, readUncommitted: false })
    await consumer.connect()
    await consumer.subscribe({ topic: 'kjs-rc', fromBeginning: true })
    const waitFor = async (n: number) => {
      const deadline = Date.now() + 15000
      while (seen.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    }
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(String(message.value))
      },
    })
    await waitFor(2)
    // The open transaction holds the LSO: nothing after c1, c2 yet.
    await new Promise((r) => setTimeout(r, 500))
    assert.deepEqual(seen, ['c1', 'c2'])
    await open.commit()
    await waitFor(3)
    assert.deepEqual(seen, ['c1', 'c2', 'o1'])
    await consumer.disconnect()
    await producer.disconnect()
  })

  it('sendOffsets: committed with the transaction, dropped with an abort', async () => {
    const producer = kafka.producer({ transactionalId: 'kjs-tx-4', idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    const admin = kafka.admin()
    await admin.connect()
    const offsets = async () =>
      (await admin.fetchOffsets({ groupId: 'kjs-offsets-g', topics: ['kjs-txn'] }))[0].partitions
        .map((p) => [p.partition, p.offset])
        .sort()
    const sendOffsets = (tx: Awaited<ReturnType<typeof producer.transaction>>, offset: string) =>
      tx.sendOffsets({
        consumerGroupId: 'kjs-offsets-g',
        topics: [{ topic: 'kjs-txn', partitions: [{ partition: 1, offset }] }],
      })
    const committed = await producer.transaction()
    await committed.send({ topic: 'kjs-txn', messages: [{ partition: 0, value: 'with-offsets' }] })
    await sendOffsets(committed, '17')
    await committed.commit()
    await stateOf('kjs-tx-4', 'CompleteCommit')
    assert.deepEqual(await offsets(), [
      [0, '-1'],
      [1, '17'],
    ])
    const aborted = await producer.transaction()
    await sendOffsets(aborted, '99')
    await aborted.abort()
    await stateOf('kjs-tx-4', 'CompleteAbort')
    assert.deepEqual(await offsets(), [
      [0, '-1'],
      [1, '17'],
    ])
    await admin.disconnect()
    await producer.disconnect()
  })
})
