/**
 * The transaction coordinator service on the real runtime and a real (memory) record store, on a
 * manual clock: requests, marker writing through the writer seam, completion, retries, restarts,
 * timeouts and storage failures.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ManualClock } from '../../../src/coordinator/runtime/clock.js'
import { shardFor } from '../../../src/coordinator/runtime/hash.js'
import {
  PrefetchingProducerIds,
  TransactionCoordinatorService,
  type TransactionMarkerWriter,
  transactionLogsStart,
} from '../../../src/coordinator/service/transaction-coordinator-service.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/memory.js'
import { SqliteRecordStore } from '../../../src/coordinator/storage/sqlite.js'
import type { RecordStore } from '../../../src/coordinator/storage/types.js'
import type { MarkerPartitionResult, TxnMarkerIntent } from '../../../src/coordinator/txn/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { decodeTransactionLogRecord } from '../../../src/protocol/transaction-log.js'
import { infoMessages } from '../../helpers/info-messages.js'

const T0 = 1_700_000_000_000

/** Lets queued promises and their continuations run. */
async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r))
}

/** The marker seam as the logs implement it: records every write; answers can be scripted. */
class RecordingMarkerWriter implements TransactionMarkerWriter {
  readonly writes: { marker: TxnMarkerIntent; topics: { topic: string; partitions: number[] }[] }[] = []
  /** Per `topic-partition`, the error codes of the next writes (then NONE). */
  readonly script = new Map<string, number[]>()
  readonly missing = new Set<string>()

  async writeTxnMarkers(
    marker: TxnMarkerIntent,
    topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[],
  ): Promise<MarkerPartitionResult[]> {
    this.writes.push({
      marker,
      topics: topics.map((t) => ({ topic: t.topic, partitions: [...t.partitions] })),
    })
    const out: MarkerPartitionResult[] = []
    for (const t of topics) {
      for (const p of t.partitions) {
        const errorCode = this.script.get(`${t.topic}-${p}`)?.shift() ?? ErrorCode.NONE
        out.push({ topic: t.topic, partition: p, errorCode })
      }
    }
    return out
  }

  partitionExists(topic: string, partition: number): boolean {
    return !this.missing.has(`${topic}-${partition}`)
  }
}

class Ids {
  next = 1000n
  generateProducerId(): bigint | null {
    return this.next++
  }
}

interface Ctx {
  service: TransactionCoordinatorService
  store: RecordStore & { failNextAppend(error?: Error): void }
  clock: ManualClock
  writer: RecordingMarkerWriter
  ids: Ids
}

async function start(p: Partial<Ctx> = {}): Promise<Ctx> {
  const store = p.store ?? new MemoryRecordStore()
  await store.open()
  const clock = p.clock ?? new ManualClock(T0)
  const writer = p.writer ?? new RecordingMarkerWriter()
  const ids = p.ids ?? new Ids()
  const service = await TransactionCoordinatorService.start({
    store,
    config: { transactionStateLogNumPartitions: 5, offsetsTopicNumPartitions: 7 },
    producerIds: ids,
    markers: writer,
    clock,
  })
  return { service, store, clock, writer, ids }
}

/** EndTxn v5 of `tx` for producer 1000. */
function endTxn(c: Ctx, producerEpoch: number, committed: boolean) {
  return c.service.endTxn({
    transactionalId: 'tx',
    producerId: 1000n,
    producerEpoch,
    committed,
    clientTransactionVersion: 2,
  })
}

/** InitProducerId of `tx` for a new producer. */
function initTx(c: Ctx) {
  return c.service.initProducerId({
    transactionalId: 'tx',
    transactionTimeoutMs: 10000,
    producerId: -1n,
    producerEpoch: -1,
  })
}

async function describe1(c: Ctx, id = 'tx') {
  return (await c.service.describeTransactions([id]))[0]!
}

/** InitProducerId, then t-0 and t-1 (TV2 add) and the group's offsets partition. */
async function openTransaction(c: Ctx, id = 'tx') {
  const init = await c.service.initProducerId({
    transactionalId: id,
    transactionTimeoutMs: 10000,
    producerId: -1n,
    producerEpoch: -1,
  })
  assert.equal(init.errorCode, 0)
  const base = { transactionalId: id, producerId: init.producerId, producerEpoch: init.producerEpoch }
  assert.equal(
    await c.service.addPartitionsToTxn({
      ...base,
      topics: [{ topic: 't', partitions: [0, 1] }],
      clientTransactionVersion: 2,
    }),
    0,
  )
  assert.equal(await c.service.addOffsetsToTxn({ ...base, groupId: 'app' }), 0)
  return init
}

describe('TransactionCoordinatorService', () => {
  it('a committed transaction: Prepare record, answer, markers on every partition, then CompleteCommit', async () => {
    const c = await start()
    const init = await openTransaction(c)
    assert.deepEqual(init, { errorCode: 0, producerId: 1000n, producerEpoch: 0 })
    const end = await endTxn(c, 0, true)
    assert.deepEqual(end, { errorCode: 0, producerId: 1000n, producerEpoch: 1 })
    await settle()
    assert.equal(c.writer.writes.length, 1)
    assert.deepEqual(c.writer.writes[0], {
      marker: {
        transactionalId: 'tx',
        producerId: 1000n,
        producerEpoch: 1,
        committed: true,
        coordinatorEpoch: 0,
        transactionVersion: 2,
        topics: [
          { topic: 't', partitions: [0, 1] },
          { topic: '__consumer_offsets', partitions: [shardFor('app', 7)] },
        ],
      },
      topics: [
        { topic: 't', partitions: [0, 1] },
        { topic: '__consumer_offsets', partitions: [shardFor('app', 7)] },
      ],
    })
    const d = await describe1(c)
    assert.deepEqual([d.transactionState, d.producerEpoch, d.topics], ['CompleteCommit', 1, []])
    // The records sit in the transaction logs of the store, after the group shards' ids.
    const log = await c.store.load(transactionLogsStart(5) + c.service.shardFor('tx'))
    assert.deepEqual(
      log.map((r) => decodeTransactionLogRecord(r.key, r.value).value!.transactionStatus),
      [0, 1, 1, 2, 4],
    )
    await c.service.close()
  })

  it('a partition that failed is written again after the back-off; the others are not', async () => {
    const c = await start()
    await openTransaction(c)
    c.writer.script.set('t-1', [ErrorCode.NOT_LEADER_OR_FOLLOWER])
    await endTxn(c, 0, false)
    await settle()
    assert.equal(c.writer.writes.length, 1)
    assert.equal((await describe1(c)).transactionState, 'PrepareAbort')
    c.clock.advance(100)
    await settle()
    assert.deepEqual(c.writer.writes[1]!.topics, [{ topic: 't', partitions: [1] }])
    assert.equal((await describe1(c)).transactionState, 'CompleteAbort')
    await c.service.close()
  })

  it('an epoch that moved on stops the markers; the next start writes them again and completes', async () => {
    const c = await start()
    await openTransaction(c)
    c.writer.script.set('t-0', [ErrorCode.INVALID_PRODUCER_EPOCH])
    await endTxn(c, 0, true)
    await settle()
    c.clock.advance(1000)
    await settle()
    assert.equal(c.writer.writes.length, 1)
    assert.equal((await describe1(c)).transactionState, 'PrepareCommit')
    // Meanwhile the producer waits.
    const busy = await initTx(c)
    assert.equal(busy.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS)
    await c.service.close()
    const again = await start({ store: c.store, clock: c.clock, ids: c.ids })
    await settle()
    assert.equal(again.writer.writes.length, 1)
    assert.equal(again.writer.writes[0]!.marker.committed, true)
    assert.equal((await describe1(again)).transactionState, 'CompleteCommit')
    await again.service.close()
  })

  it('a deleted topic gets no marker; a transaction with nothing added completes at once', async () => {
    const c = await start()
    await openTransaction(c)
    c.writer.missing.add('t-0')
    c.writer.missing.add('t-1')
    await endTxn(c, 0, true)
    await settle()
    assert.deepEqual(
      c.writer.writes.map((w) => w.topics.map((t) => t.topic)),
      [['__consumer_offsets']],
    )
    assert.equal((await describe1(c)).transactionState, 'CompleteCommit')
    // TV2 abort with nothing added: no partitions, completes without a write.
    const r = await endTxn(c, 1, false)
    assert.deepEqual(r, { errorCode: 0, producerId: 1000n, producerEpoch: 2 })
    await settle()
    assert.equal(c.writer.writes.length, 1)
    assert.equal((await describe1(c)).transactionState, 'CompleteAbort')
    await c.service.close()
  })

  it('the periodic check aborts a transaction open longer than its timeout', async () => {
    const c = await start()
    await openTransaction(c)
    c.clock.advance(10000)
    await settle()
    assert.equal((await describe1(c)).transactionState, 'Ongoing')
    c.clock.advance(10000)
    await settle()
    const d = await describe1(c)
    assert.deepEqual([d.transactionState, d.producerEpoch], ['CompleteAbort', 1])
    assert.equal(c.writer.writes[0]!.marker.committed, false)
    // The fenced producer's EndTxn is refused; a new InitProducerId gets the next epoch.
    const late = await endTxn(c, 0, true)
    assert.equal(late.errorCode, ErrorCode.INVALID_TXN_STATE)
    const init = await initTx(c)
    assert.deepEqual(init, { errorCode: 0, producerId: 1000n, producerEpoch: 2 })
    await c.service.close()
  })

  it('InitProducerId fences an open transaction: CONCURRENT_TRANSACTIONS until the abort completed', async () => {
    const c = await start()
    await openTransaction(c)
    c.writer.script.set('t-0', [ErrorCode.REQUEST_TIMED_OUT])
    const init = () => initTx(c)
    assert.equal((await init()).errorCode, ErrorCode.CONCURRENT_TRANSACTIONS)
    await settle()
    assert.equal((await init()).errorCode, ErrorCode.CONCURRENT_TRANSACTIONS)
    c.clock.advance(100)
    await settle()
    assert.deepEqual(await init(), { errorCode: 0, producerId: 1000n, producerEpoch: 2 })
    await c.service.close()
  })

  it('a failed append answers NOT_COORDINATOR and changes nothing', async () => {
    const c = await start()
    await openTransaction(c)
    c.store.failNextAppend()
    const r = await endTxn(c, 0, true)
    assert.deepEqual(r, { errorCode: ErrorCode.NOT_COORDINATOR, producerId: -1n, producerEpoch: -1 })
    await settle()
    assert.equal(c.writer.writes.length, 0)
    assert.equal((await describe1(c)).transactionState, 'Ongoing')
    await c.service.close()
  })

  it('ListTransactions merges every shard; describe answers per id', async () => {
    const c = await start()
    for (const id of ['a', 'b', 'c', 'd']) {
      await c.service.initProducerId({
        transactionalId: id,
        transactionTimeoutMs: 10000,
        producerId: -1n,
        producerEpoch: -1,
      })
    }
    const all = await c.service.listTransactions({
      stateFilters: [],
      producerIdFilters: [],
      durationFilter: -1n,
      transactionalIdPattern: null,
    })
    assert.equal(all.errorCode, 0)
    assert.deepEqual(all.transactionStates.map((t) => t.transactionalId).sort(), ['a', 'b', 'c', 'd'])
    const bad = await c.service.listTransactions({
      stateFilters: ['Nope'],
      producerIdFilters: [],
      durationFilter: -1n,
      transactionalIdPattern: '[',
    })
    assert.equal(bad.errorCode, ErrorCode.INVALID_REGULAR_EXPRESSION)
    const described = await c.service.describeTransactions(['a', 'zz', ''])
    assert.deepEqual(
      described.map((d) => [d.transactionalId, d.errorCode, d.transactionState]),
      [
        ['a', 0, 'Empty'],
        ['zz', ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, ''],
        ['', ErrorCode.INVALID_REQUEST, ''],
      ],
    )
    await c.service.close()
    // Closed: requests answer NOT_COORDINATOR.
    const closed = await c.service.initProducerId({
      transactionalId: 'a',
      transactionTimeoutMs: 10000,
      producerId: -1n,
      producerEpoch: -1,
    })
    assert.equal(closed.errorCode, ErrorCode.NOT_COORDINATOR)
  })

  it('EndTxn is answered before any marker is written (Kafka answers once Prepare is appended)', async () => {
    const c = await start()
    await openTransaction(c)
    const end = await endTxn(c, 0, true)
    assert.equal(end.errorCode, 0)
    // The answer arrived while the markers were still to be written.
    assert.equal(c.writer.writes.length, 0)
    assert.equal(c.service.isCompleting('tx'), true)
    await settle()
    assert.equal(c.writer.writes.length, 1)
    assert.equal(c.service.isCompleting('tx'), false)
    assert.equal((await describe1(c)).transactionState, 'CompleteCommit')
    await c.service.close()
  })

  it('waitForCompletion wakes when the Complete record is written, or after its limit', async () => {
    const c = await start()
    const init = await openTransaction(c)
    // Nothing being completed: at once.
    await c.service.waitForCompletion('tx', 1000)
    c.writer.script.set('t-0', [ErrorCode.NOT_LEADER_OR_FOLLOWER])
    await endTxn(c, 0, true)
    await settle()
    // t-0 waits for the back-off: the next transaction's add is refused meanwhile.
    const add = () =>
      c.service.addPartitionsToTxn({
        transactionalId: 'tx',
        producerId: init.producerId,
        producerEpoch: 1,
        topics: [{ topic: 't', partitions: [0] }],
        clientTransactionVersion: 2,
      })
    assert.equal(await add(), ErrorCode.CONCURRENT_TRANSACTIONS)
    let woke = false
    const waiting = c.service.waitForCompletion('tx', 5000).then(() => {
      woke = true
    })
    // A short limit passes first.
    let shortWoke = false
    const short = c.service.waitForCompletion('tx', 10).then(() => {
      shortWoke = true
    })
    c.clock.advance(10)
    await short
    assert.deepEqual([shortWoke, woke], [true, false])
    // The marker back-off (100 ms) ends: t-0 is written, CompleteCommit follows, the waiter wakes
    // long before its own limit.
    c.clock.advance(90)
    await waiting
    assert.equal(woke, true)
    assert.equal((await describe1(c)).transactionState, 'CompleteCommit')
    assert.equal(await add(), ErrorCode.NONE)
    await c.service.close()
  })

  it('afterCompletion: an add that met the completing transaction is answered once it is complete', async () => {
    const c = await start()
    const init = await openTransaction(c)
    c.writer.script.set('t-0', [ErrorCode.NOT_LEADER_OR_FOLLOWER])
    await endTxn(c, 0, true)
    await settle()
    const attempts: number[] = []
    const add = async () => {
      const code = await c.service.addPartitionsToTxn({
        transactionalId: 'tx',
        producerId: init.producerId,
        producerEpoch: 1,
        topics: [{ topic: 't', partitions: [2] }],
        clientTransactionVersion: 0,
      })
      attempts.push(code)
      return code
    }
    const answer = c.service.afterCompletion('tx', 1000, add)
    await settle()
    assert.deepEqual(attempts, [ErrorCode.CONCURRENT_TRANSACTIONS])
    // The marker back-off ends, the transaction completes, the add runs again.
    c.clock.advance(100)
    assert.equal(await answer, ErrorCode.NONE)
    assert.deepEqual(attempts, [ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NONE])
    // Nothing completing: one attempt, its answer as is.
    assert.equal(await c.service.afterCompletion('tx', 1000, add), ErrorCode.NONE)
    assert.equal(attempts.length, 3)
    await c.service.close()
  })

  it('close wakes the requests waiting for a completion', async () => {
    const c = await start()
    await openTransaction(c)
    c.writer.script.set('t-0', [ErrorCode.NOT_LEADER_OR_FOLLOWER])
    await endTxn(c, 0, false)
    await settle()
    const waiting = c.service.waitForCompletion('tx', 60_000)
    await c.service.close()
    await waiting
  })
})

describe('TransactionCoordinatorService on SQLite', () => {
  it('a decided transaction survives a restart: the reopened file completes it with the same result', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'txn-service-'))
    try {
      const writer = new RecordingMarkerWriter()
      const first = await start({ store: new SqliteRecordStore(dir), writer })
      await openTransaction(first)
      // The markers cannot be written before the process stops.
      writer.script.set('t-0', [ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_LEADER_OR_FOLLOWER])
      assert.equal((await endTxn(first, 0, false)).errorCode, 0)
      await settle()
      await first.service.close()
      await first.store.close()
      const again = await start({ store: new SqliteRecordStore(dir), clock: first.clock })
      await settle()
      assert.deepEqual(
        again.writer.writes.map((w) => [w.marker.committed, w.marker.producerEpoch, w.topics.length]),
        [[false, 1, 2]],
      )
      const d = await describe1(again)
      assert.deepEqual([d.transactionState, d.producerEpoch], ['CompleteAbort', 1])
      await again.service.close()
      await again.store.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('PrefetchingProducerIds', () => {
  it('hands out prefetched ids synchronously, null when none is ready, and refills', async () => {
    let next = 7
    const ids = new PrefetchingProducerIds(async () => next++, { prefetch: 2 })
    assert.equal(ids.generateProducerId(), null)
    await ids.fill()
    assert.equal(ids.generateProducerId(), 7n)
    assert.equal(ids.generateProducerId(), 8n)
    await settle()
    assert.equal(ids.generateProducerId(), 9n)
  })

  it('a failing source reports its error and hands out nothing', async () => {
    const errors: unknown[] = []
    const ids = new PrefetchingProducerIds(
      async () => {
        throw new Error('no block')
      },
      { onError: (e) => errors.push(e) },
    )
    await ids.fill()
    assert.equal(ids.generateProducerId(), null)
    assert.equal(errors.length, 1)
  })
})

describe('loading', () => {
  it("names each loaded shard as its partition of __transaction_state, as Kafka's log does", async () => {
    const { logger, messages } = infoMessages()
    const store = new MemoryRecordStore()
    await store.open()
    const service = await TransactionCoordinatorService.start({
      store,
      config: { transactionStateLogNumPartitions: 3, offsetsTopicNumPartitions: 7 },
      producerIds: new Ids(),
      markers: new RecordingMarkerWriter(),
      clock: new ManualClock(T0),
      logger,
    })
    try {
      assert.deepEqual(
        messages.filter((m) => m.startsWith('Finished loading')),
        [0, 1, 2].map((p) => `Finished loading of metadata from __transaction_state-${p}`),
      )
    } finally {
      await service.close()
    }
  })
})
