// Kafka's Java transactional producer (transaction version 2: implicit partition adds from Produce
// v12+, EndTxn v5 epoch bumps) and a read_committed Java consumer against the server: committed
// records are read, the aborted one is not; sendOffsetsToTransaction (TxnOffsetCommit v5) commits
// offsets with the transaction and an abort drops them; an abandoned transaction is aborted at its
// timeout, and its producer can no longer commit.
// Needs Java 17+ and the client jars in ../shared/kafka-java (skipped with a message otherwise).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createTopics } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const KAFKA_JAVA = fileURLToPath(new URL('../../../shared/kafka-java/', import.meta.url))
const RUN_CLASS = `${KAFKA_JAVA}bin/kafka-run-class`
const available = existsSync(RUN_CLASS)
const skip = available ? false : `Kafka's Java clients not found at ${KAFKA_JAVA}`

let ts: TestServer
before(async () => {
  if (!available) return
  // Abandoned transactions are looked for every half second.
  ts = await startTestServer({ 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '500' })
  const c = await WireClient.connect(ts.port)
  assert.deepEqual(
    await createTopics(c, [{ name: 'java-txn' }, { name: 'java-txn-2', partitions: 2 }]),
    [0, 0],
  )
  c.close()
})
after(async () => {
  await ts?.stop()
})

describe("Kafka's Java transactional producer", { skip }, () => {
  it('commits, aborts and is read back with read_committed', { timeout: 180_000 }, async () => {
    const program = fileURLToPath(new URL('./TxnProducer.java', import.meta.url))
    const { stdout } = await promisify(execFile)(RUN_CLASS, [program, `127.0.0.1:${ts.port}`, 'java-txn'], {
      timeout: 170_000,
    })
    const lines = stdout.trim().split('\n')
    // c1 c2 (commit marker at 2) a1 (abort marker at 4) c3 (5; commit marker at 6): the position is
    // past c3, and past its marker once the consumer has fetched it.
    assert.deepEqual(lines.slice(0, 3), ['c1', 'c2', 'c3'])
    assert.ok(lines[3] === 'end=6' || lines[3] === 'end=7', lines[3])
    const [d] = await ts.server.context.transactions.describeTransactions(['java-tx'])
    assert.equal(d.transactionState, 'CompleteCommit')
  })

  it('sendOffsetsToTransaction commits or drops offsets; an abandoned transaction is aborted at its timeout', {
    timeout: 180_000,
  }, async () => {
    const program = fileURLToPath(new URL('./TxnTimeoutAndOffsets.java', import.meta.url))
    const { stdout } = await promisify(execFile)(RUN_CLASS, [program, `127.0.0.1:${ts.port}`, 'java-txn-2'], {
      timeout: 170_000,
    })
    // The committed transaction's offset, unchanged by the aborted one; the read_committed consumer
    // reads "after" only, which it can once the abandoned transaction is aborted; the abandoned
    // producer's commit (EndTxn v5 with the epoch just below the abort's bump, in CompleteAbort)
    // is INVALID_TXN_STATE, as Kafka answers (transactions.md §7.2, §10.1).
    assert.deepEqual(stdout.trim().split('\n'), [
      'committed=42',
      'committed=42',
      'after',
      'commit=InvalidTxnStateException',
    ])
    const [d] = await ts.server.context.transactions.describeTransactions(['abandoned-tx'])
    assert.equal(d.transactionState, 'CompleteAbort')
  })
})
