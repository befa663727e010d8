import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { shardFor } from '../../../src/coordinator/runtime/hash.js'
import {
  type EndTxnInput,
  type InitProducerIdInput,
  TransactionState as S,
  transactionRecordSerde,
  transactionShardFor,
  type TxnRecord,
} from '../../../src/coordinator/txn/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import {
  createTransactionLogValue,
  type TransactionLogValue,
} from '../../../src/protocol/generated/records/TransactionLogValue.js'
import { metadata, snapshot, TxnHarness } from './harness.js'

const T0 = 1_700_000_000_000
const init = (p: Partial<InitProducerIdInput> = {}): InitProducerIdInput => ({
  transactionalId: 'tx',
  transactionTimeoutMs: 10000,
  producerId: -1n,
  producerEpoch: -1,
  ...p,
})
const end = (p: Partial<EndTxnInput> = {}): EndTxnInput => ({
  transactionalId: 'tx',
  producerId: 1000n,
  producerEpoch: 0,
  committed: true,
  clientTransactionVersion: 2,
  ...p,
})
const rec = (value: Partial<TransactionLogValue> | null, lastProducerEpoch = -1, id = 'tx'): TxnRecord =>
  value === null
    ? { key: { transactionalId: id }, value: null }
    : {
        key: { transactionalId: id },
        value: createTransactionLogValue({ nextProducerEpoch: -1, ...value }),
        valueVersion: 1,
        lastProducerEpoch,
      }
const hex = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('hex'))

/** A harness whose id `tx` is Ongoing on t-0 and t-1 with producer 1000 at `epoch`. */
function ongoing(epoch = 0, level = 2): TxnHarness {
  const h = new TxnHarness()
  h.level = level
  h.apply(h.shard.initProducerId(init(), T0))
  for (let e = 0; e < epoch; e++) h.apply(h.shard.initProducerId(init(), T0))
  const r = h.shard.addPartitions(
    {
      transactionalId: 'tx',
      producerId: 1000n,
      producerEpoch: epoch,
      topics: [{ topic: 't', partitions: [0, 1] }],
      clientTransactionVersion: level >= 2 ? 2 : 0,
    },
    T0 + 10,
  )
  assert.equal(h.apply(r).errorCode, ErrorCode.NONE)
  return h
}

describe('transaction shard: InitProducerId', () => {
  it('a new id gets a fresh producer id at epoch 0; the Empty record is the specification example', () => {
    const h = new TxnHarness()
    const r = h.shard.initProducerId(init(), T0)
    assert.deepEqual(r.response, { errorCode: 0, producerId: 1000n, producerEpoch: 0, markers: null })
    assert.deepEqual(r.records, [
      rec({
        producerId: 1000n,
        previousProducerId: 1000n,
        producerEpoch: 0,
        transactionTimeoutMs: 10000,
        transactionStatus: S.EMPTY,
        transactionPartitions: null,
        transactionLastUpdateTimestampMs: BigInt(T0),
        transactionStartTimestampMs: -1n,
      }),
    ])
    const bytes = transactionRecordSerde.serialize(r.records[0]!)
    assert.equal(hex(bytes.key), '000000027478')
    assert.equal(
      hex(bytes.value),
      '0001 00000000000003e8 0000 00002710 00 00 0000018bcfe56800 ffffffffffffffff 01 00 08 00000000000003e8'.replace(
        / /g,
        '',
      ),
    )
    h.apply(r)
    assert.equal(h.md('tx').state, S.EMPTY)
  })

  it('an idle id bumps its epoch; without an epoch given lastProducerEpoch is -1', () => {
    const h = new TxnHarness()
    h.apply(h.shard.initProducerId(init(), T0))
    const r = h.shard.initProducerId(init({ transactionTimeoutMs: 20000 }), T0 + 5)
    assert.deepEqual(r.response, { errorCode: 0, producerId: 1000n, producerEpoch: 1, markers: null })
    assert.deepEqual(r.records, [
      rec({
        producerId: 1000n,
        previousProducerId: 1000n,
        producerEpoch: 1,
        transactionTimeoutMs: 20000,
        transactionStatus: S.EMPTY,
        transactionPartitions: null,
        transactionLastUpdateTimestampMs: BigInt(T0 + 5),
        transactionStartTimestampMs: -1n,
      }),
    ])
  })

  it('KIP-360: the current epoch bumps and is remembered; a retry of it gets the same epoch back', () => {
    const h = new TxnHarness()
    h.apply(h.shard.initProducerId(init(), T0))
    const bump = h.shard.initProducerId(init({ producerId: 1000n, producerEpoch: 0 }), T0 + 1)
    assert.deepEqual(bump.response, { errorCode: 0, producerId: 1000n, producerEpoch: 1, markers: null })
    assert.equal(bump.records[0]!.lastProducerEpoch, 0)
    h.apply(bump)
    assert.equal(h.md('tx').lastProducerEpoch, 0)
    // The answer was lost and the producer retries with the epoch it had.
    const retry = h.shard.initProducerId(init({ producerId: 1000n, producerEpoch: 0 }), T0 + 2)
    assert.deepEqual(retry.response, { errorCode: 0, producerId: 1000n, producerEpoch: 1, markers: null })
    assert.equal(retry.records.length, 1)
    assert.equal(retry.records[0]!.value!.producerEpoch, 1)
    h.apply(retry)
    // Any other epoch is fenced.
    const stale = h.shard.initProducerId(init({ producerId: 1000n, producerEpoch: 5 }), T0 + 3)
    assert.deepEqual(stale, {
      records: [],
      response: { errorCode: ErrorCode.PRODUCER_FENCED, producerId: -1n, producerEpoch: -1, markers: null },
    })
  })

  it('after loading, lastProducerEpoch is -1 (Kafka does not persist it): the retry is fenced', () => {
    const h = new TxnHarness()
    h.apply(h.shard.initProducerId(init(), T0))
    h.apply(h.shard.initProducerId(init({ producerId: 1000n, producerEpoch: 0 }), T0 + 1))
    h.reload()
    assert.equal(h.md('tx').lastProducerEpoch, -1)
    const retry = h.shard.initProducerId(init({ producerId: 1000n, producerEpoch: 0 }), T0 + 2)
    assert.equal(retry.response.errorCode, ErrorCode.PRODUCER_FENCED)
  })

  it('another producer id is fenced; so is a producer id given for an id that has an epoch', () => {
    const h = new TxnHarness()
    h.apply(h.shard.initProducerId(init(), T0))
    const r = h.shard.initProducerId(init({ producerId: 77n, producerEpoch: 0 }), T0)
    assert.equal(r.response.errorCode, ErrorCode.PRODUCER_FENCED)
    assert.deepEqual(r.records, [])
  })

  it('an unknown id with a producer id given (UNKNOWN_PRODUCER_ID recovery) gets the fresh id', () => {
    const h = new TxnHarness()
    const r = h.shard.initProducerId(init({ producerId: 55n, producerEpoch: 3 }), T0)
    assert.deepEqual(r.response, { errorCode: 0, producerId: 1000n, producerEpoch: 0, markers: null })
  })

  it('checks the request first: half a producer id/epoch pair, empty id, timeout bounds', () => {
    const h = new TxnHarness({ transactionMaxTimeoutMs: 60000 })
    const code = (i: InitProducerIdInput) => h.shard.initProducerId(i, T0).response.errorCode
    assert.equal(code(init({ producerId: 5n })), ErrorCode.INVALID_REQUEST)
    assert.equal(code(init({ producerEpoch: 5 })), ErrorCode.INVALID_REQUEST)
    assert.equal(code(init({ transactionalId: '' })), ErrorCode.INVALID_REQUEST)
    assert.equal(code(init({ transactionTimeoutMs: 0 })), ErrorCode.INVALID_TRANSACTION_TIMEOUT)
    assert.equal(code(init({ transactionTimeoutMs: -1 })), ErrorCode.INVALID_TRANSACTION_TIMEOUT)
    assert.equal(code(init({ transactionTimeoutMs: 60001 })), ErrorCode.INVALID_TRANSACTION_TIMEOUT)
    assert.equal(code(init({ transactionTimeoutMs: 60000 })), ErrorCode.NONE)
    assert.equal(h.ids.next, 1001n, 'no producer id is drawn for a refused request')
  })

  it('no producer id available: COORDINATOR_LOAD_IN_PROGRESS, nothing written', () => {
    const h = new TxnHarness()
    h.ids.exhausted = true
    assert.deepEqual(h.shard.initProducerId(init(), T0), {
      records: [],
      response: {
        errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        producerId: -1n,
        producerEpoch: -1,
        markers: null,
      },
    })
  })

  it('an exhausted epoch (32766) rotates to a new producer id at epoch 0', () => {
    const h = new TxnHarness()
    h.seed(metadata({ transactionalId: 'tx', producerId: 500n, prevProducerId: 500n, producerEpoch: 32766 }))
    const r = h.shard.initProducerId(init({ producerId: 500n, producerEpoch: 32766 }), T0)
    assert.deepEqual(r.response, { errorCode: 0, producerId: 1000n, producerEpoch: 0, markers: null })
    assert.deepEqual(r.records, [
      rec(
        {
          producerId: 1000n,
          previousProducerId: 500n,
          producerEpoch: 0,
          transactionTimeoutMs: 10000,
          transactionStatus: S.EMPTY,
          transactionPartitions: null,
          transactionLastUpdateTimestampMs: BigInt(T0),
          transactionStartTimestampMs: -1n,
        },
        32766,
      ),
    ])
    h.apply(r)
    // The answer was lost: the producer retries with the old id at 32766 and gets the new id again.
    const retry = h.shard.initProducerId(init({ producerId: 500n, producerEpoch: 32766 }), T0 + 1)
    assert.deepEqual(retry.response, { errorCode: 0, producerId: 1000n, producerEpoch: 0, markers: null })
    // Without an epoch the rotation records no last epoch.
    const h2 = new TxnHarness()
    h2.seed(metadata({ transactionalId: 'tx', producerId: 500n, producerEpoch: 32766 }))
    const r2 = h2.shard.initProducerId(init(), T0)
    assert.equal(r2.records[0]!.lastProducerEpoch, -1)
    assert.equal(r2.response.producerId, 1000n)
  })

  it('an Ongoing transaction at epoch 32767 (only a fence reaches it) ends with TV2 within Short.MAX_VALUE', () => {
    for (const committed of [true, false]) {
      const h = new TxnHarness()
      h.level = 2
      h.seed(
        metadata({
          transactionalId: 'tx',
          producerId: 500n,
          prevProducerId: 500n,
          producerEpoch: 32767,
          state: S.ONGOING,
          topicPartitions: new Map([['t', new Set([0])]]),
          txnStartTimestamp: T0,
          clientTransactionVersion: 2,
        }),
      )
      const r = h.shard.endTxn(end({ producerId: 500n, producerEpoch: 32767, committed }), T0 + 1)
      assert.equal(r.response.errorCode, ErrorCode.NONE)
      for (const x of r.records) assert.ok(x.value === null || x.value.producerEpoch <= 32767, `${committed}`)
      h.apply(r)
      // Reloading serializes every record (an int16 above 32767 cannot be written).
      h.reload()
      assert.equal(h.md('tx').producerEpoch, 32767)
    }
  })

  it("an exhausted epoch with a stale retry is Kafka's IllegalStateException: UNKNOWN_SERVER_ERROR", () => {
    const h = new TxnHarness()
    h.seed(
      metadata({ transactionalId: 'tx', producerId: 500n, producerEpoch: 32766, lastProducerEpoch: 32765 }),
    )
    const r = h.shard.initProducerId(init({ producerId: 500n, producerEpoch: 32765 }), T0)
    assert.equal(r.response.errorCode, ErrorCode.UNKNOWN_SERVER_ERROR)
  })

  it('Ongoing (TV2): the open transaction is aborted with epoch + 1 and the answer is CONCURRENT_TRANSACTIONS', () => {
    const h = ongoing(0)
    const r = h.shard.initProducerId(init(), T0 + 100)
    assert.deepEqual(r.response, {
      errorCode: ErrorCode.CONCURRENT_TRANSACTIONS,
      producerId: -1n,
      producerEpoch: -1,
      markers: {
        transactionalId: 'tx',
        producerId: 1000n,
        producerEpoch: 1,
        committed: false,
        coordinatorEpoch: 0,
        transactionVersion: 2,
        topics: [{ topic: 't', partitions: [0, 1] }],
      },
    })
    assert.deepEqual(r.records, [
      rec(
        {
          producerId: 1000n,
          previousProducerId: 1000n,
          producerEpoch: 1,
          transactionTimeoutMs: 10000,
          transactionStatus: S.PREPARE_ABORT,
          transactionPartitions: [{ topic: 't', partitionIds: [0, 1] }],
          transactionLastUpdateTimestampMs: BigInt(T0 + 100),
          transactionStartTimestampMs: BigInt(T0 + 10),
          clientTransactionVersion: 2,
        },
        0,
      ),
    ])
    h.apply(r)
    // While the markers are written the producer waits.
    assert.equal(
      h.shard.initProducerId(init(), T0 + 101).response.errorCode,
      ErrorCode.CONCURRENT_TRANSACTIONS,
    )
    h.apply(
      h.shard.completeTransaction(
        { transactionalId: 'tx', producerId: 1000n, producerEpoch: 1, committed: false },
        T0 + 102,
      ),
    )
    assert.equal(h.md('tx').state, S.COMPLETE_ABORT)
    // Fencing a zombie costs two epochs.
    const again = h.shard.initProducerId(init(), T0 + 103)
    assert.deepEqual(again.response, { errorCode: 0, producerId: 1000n, producerEpoch: 2, markers: null })
  })

  it('Ongoing (TV0/1): the fence writes the bumped epoch with lastProducerEpoch -1 and client version 0', () => {
    const h = ongoing(0, 1)
    const r = h.shard.initProducerId(init(), T0 + 100)
    assert.equal(r.response.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS)
    assert.deepEqual(r.records, [
      rec(
        {
          producerId: 1000n,
          previousProducerId: 1000n,
          producerEpoch: 1,
          transactionTimeoutMs: 10000,
          transactionStatus: S.PREPARE_ABORT,
          transactionPartitions: [{ topic: 't', partitionIds: [0, 1] }],
          transactionLastUpdateTimestampMs: BigInt(T0 + 100),
          transactionStartTimestampMs: BigInt(T0 + 10),
          clientTransactionVersion: 0,
        },
        -1,
      ),
    ])
    assert.equal(r.response.markers?.transactionVersion, 0)
    assert.equal(r.response.markers?.producerEpoch, 1)
  })

  it('Ongoing at an exhausted epoch (TV2): the abort rotates the producer id at completion', () => {
    const h = new TxnHarness()
    h.seed(
      metadata({
        transactionalId: 'tx',
        producerId: 500n,
        producerEpoch: 32766,
        state: S.ONGOING,
        topicPartitions: new Map([['t', new Set([0])]]),
        txnStartTimestamp: T0,
        clientTransactionVersion: 2,
      }),
    )
    const r = h.shard.initProducerId(init(), T0 + 1)
    assert.equal(r.response.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS)
    const v = r.records[0]!.value!
    assert.equal(v.producerEpoch, 32767)
    assert.equal(v.nextProducerId, 1000n)
    assert.equal(r.response.markers?.producerId, 500n)
    assert.equal(r.response.markers?.producerEpoch, 32767)
    h.apply(r)
    h.apply(
      h.shard.completeTransaction(
        { transactionalId: 'tx', producerId: 500n, producerEpoch: 32767, committed: false },
        T0 + 2,
      ),
    )
    const md = h.md('tx')
    assert.deepEqual(
      [md.state, md.producerId, md.prevProducerId, md.producerEpoch, md.nextProducerId],
      [S.COMPLETE_ABORT, 1000n, 500n, 0, -1n],
    )
  })

  it('a transaction being completed answers CONCURRENT_TRANSACTIONS before any fencing check', () => {
    const h = ongoing(0)
    h.apply(h.shard.endTxn(end(), T0 + 20))
    assert.equal(h.md('tx').state, S.PREPARE_COMMIT)
    const r = h.shard.initProducerId(init({ producerId: 9n, producerEpoch: 9 }), T0 + 21)
    assert.equal(r.response.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS)
  })
})

describe('transaction shard: AddPartitionsToTxn and AddOffsetsToTxn', () => {
  const add = (p: {
    producerId?: bigint
    producerEpoch?: number
    topics?: { topic: string; partitions: number[] }[]
  }) => ({
    transactionalId: 'tx',
    producerId: p.producerId ?? 1000n,
    producerEpoch: p.producerEpoch ?? 0,
    topics: p.topics ?? [{ topic: 't', partitions: [0] }],
    clientTransactionVersion: 0,
  })

  it('the first add starts the transaction (start time = now); later adds keep it and merge partitions', () => {
    const h = new TxnHarness()
    h.apply(h.shard.initProducerId(init(), T0))
    const first = h.shard.addPartitions(add({ topics: [{ topic: 'b', partitions: [1] }] }), T0 + 10)
    assert.deepEqual(first, {
      records: [
        rec({
          producerId: 1000n,
          previousProducerId: 1000n,
          producerEpoch: 0,
          transactionTimeoutMs: 10000,
          transactionStatus: S.ONGOING,
          transactionPartitions: [{ topic: 'b', partitionIds: [1] }],
          transactionLastUpdateTimestampMs: BigInt(T0 + 10),
          transactionStartTimestampMs: BigInt(T0 + 10),
        }),
      ],
      response: { errorCode: 0 },
    })
    h.apply(first)
    const second = h.shard.addPartitions(
      add({
        topics: [
          { topic: 'a', partitions: [2, 0] },
          { topic: 'b', partitions: [1, 3] },
        ],
      }),
      T0 + 20,
    )
    assert.deepEqual(second.records[0]!.value!.transactionPartitions, [
      { topic: 'b', partitionIds: [1, 3] },
      { topic: 'a', partitionIds: [2, 0] },
    ])
    assert.equal(second.records[0]!.value!.transactionStartTimestampMs, BigInt(T0 + 10))
    h.apply(second)
    // All already in: NONE, nothing written.
    assert.deepEqual(h.shard.addPartitions(add({ topics: [{ topic: 'a', partitions: [0] }] }), T0 + 30), {
      records: [],
      response: { errorCode: 0 },
    })
  })

  it('errors in Kafka order: empty id, unknown id, producer id, epoch', () => {
    const h = ongoing(0)
    const code = (input: ReturnType<typeof add>) => h.shard.addPartitions(input, T0).response.errorCode
    assert.equal(code({ ...add({}), transactionalId: '' }), ErrorCode.INVALID_REQUEST)
    assert.equal(code({ ...add({}), transactionalId: 'nope' }), ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    assert.equal(code(add({ producerId: 1n, producerEpoch: 7 })), ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    assert.equal(code(add({ producerEpoch: 7 })), ErrorCode.PRODUCER_FENCED)
  })

  it('a Prepare state answers CONCURRENT_TRANSACTIONS even to a wrong producer id', () => {
    const h = ongoing(0)
    h.apply(h.shard.endTxn(end(), T0 + 20))
    const r = h.shard.addPartitions(add({ producerId: 1n, producerEpoch: 1 }), T0 + 21)
    assert.equal(r.response.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS)
  })

  it('a v4+ add records client transaction version 2; a new transaction after a Complete one starts anew', () => {
    const h = ongoing(0)
    h.apply(h.shard.endTxn(end(), T0 + 20))
    h.apply(
      h.shard.completeTransaction(
        { transactionalId: 'tx', producerId: 1000n, producerEpoch: 1, committed: true },
        T0 + 21,
      ),
    )
    const r = h.shard.addPartitions(
      {
        ...add({ producerEpoch: 1, topics: [{ topic: 'u', partitions: [4] }] }),
        clientTransactionVersion: 2,
      },
      T0 + 30,
    )
    const v = r.records[0]!.value!
    assert.equal(v.clientTransactionVersion, 2)
    assert.equal(v.transactionStartTimestampMs, BigInt(T0 + 30))
    assert.deepEqual(v.transactionPartitions, [{ topic: 'u', partitionIds: [4] }])
  })

  it("AddOffsetsToTxn adds the group's __consumer_offsets partition (offsets.topic.num.partitions)", () => {
    const h = new TxnHarness({ offsetsTopicNumPartitions: 7 })
    h.apply(h.shard.initProducerId(init(), T0))
    const r = h.shard.addOffsets(
      { transactionalId: 'tx', producerId: 1000n, producerEpoch: 0, groupId: 'app' },
      T0 + 1,
    )
    assert.deepEqual(r.records[0]!.value!.transactionPartitions, [
      { topic: '__consumer_offsets', partitionIds: [shardFor('app', 7)] },
    ])
    assert.equal(r.records[0]!.value!.clientTransactionVersion, 0)
  })

  it('verification (v4+ VerifyOnly) reads: NONE for partitions in the transaction, TRANSACTION_ABORTABLE else', () => {
    const h = ongoing(0)
    const v = (p: Partial<ReturnType<typeof add>>) => h.shard.verifyPartitions({ ...add({}), ...p })
    assert.deepEqual(v({ topics: [{ topic: 't', partitions: [1, 5] }] }), {
      topics: [
        {
          topic: 't',
          partitions: [
            { partitionIndex: 1, errorCode: 0 },
            { partitionIndex: 5, errorCode: ErrorCode.TRANSACTION_ABORTABLE },
          ],
        },
      ],
    })
    const one = (p: Partial<ReturnType<typeof add>>) => v(p).topics[0]!.partitions[0]!.errorCode
    assert.equal(one({ transactionalId: '' }), ErrorCode.INVALID_REQUEST)
    assert.equal(one({ transactionalId: 'x' }), ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    assert.equal(one({ producerId: 2n }), ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    assert.equal(one({ producerEpoch: 3 }), ErrorCode.PRODUCER_FENCED)
    h.apply(h.shard.endTxn(end(), T0 + 20))
    assert.equal(one({ producerEpoch: 1 }), ErrorCode.CONCURRENT_TRANSACTIONS)
  })
})

describe('transaction shard: EndTxn v0-4 (TV1)', () => {
  const v1 = (p: Partial<EndTxnInput> = {}) => end({ clientTransactionVersion: 0, ...p })

  it('Ongoing → PrepareCommit with the same epoch; markers carry it; the Complete record clears partitions', () => {
    const h = ongoing(0, 1)
    const r = h.shard.endTxn(v1(), T0 + 20)
    assert.deepEqual(r.response, {
      errorCode: 0,
      producerId: -1n,
      producerEpoch: -1,
      markers: {
        transactionalId: 'tx',
        producerId: 1000n,
        producerEpoch: 0,
        committed: true,
        coordinatorEpoch: 0,
        transactionVersion: 0,
        topics: [{ topic: 't', partitions: [0, 1] }],
      },
    })
    assert.deepEqual(r.records, [
      rec({
        producerId: 1000n,
        previousProducerId: 1000n,
        producerEpoch: 0,
        transactionTimeoutMs: 10000,
        transactionStatus: S.PREPARE_COMMIT,
        transactionPartitions: [{ topic: 't', partitionIds: [0, 1] }],
        transactionLastUpdateTimestampMs: BigInt(T0 + 20),
        transactionStartTimestampMs: BigInt(T0 + 10),
      }),
    ])
    h.apply(r)
    const c = h.shard.completeTransaction(
      { transactionalId: 'tx', producerId: 1000n, producerEpoch: 0, committed: true },
      T0 + 30,
    )
    assert.deepEqual(c, {
      records: [
        rec({
          producerId: 1000n,
          previousProducerId: 1000n,
          producerEpoch: 0,
          transactionTimeoutMs: 10000,
          transactionStatus: S.COMPLETE_COMMIT,
          transactionPartitions: [],
          transactionLastUpdateTimestampMs: BigInt(T0 + 30),
          transactionStartTimestampMs: BigInt(T0 + 10),
        }),
      ],
      response: { completed: true },
    })
    h.apply(c)
    assert.equal(h.md('tx').topicPartitions.size, 0)
  })

  it("the table of §7.1 (Prepare states answer CONCURRENT_TRANSACTIONS: Kafka's pending Complete state)", () => {
    const cases: [string, number, number][] = []
    const codeIn = (setup: (h: TxnHarness) => void, committed: boolean) => {
      const h = new TxnHarness()
      h.level = 1
      h.apply(h.shard.initProducerId(init(), T0))
      setup(h)
      return h.shard.endTxn(v1({ committed }), T0 + 50).response.errorCode
    }
    const toOngoing = (h: TxnHarness) =>
      h.apply(
        h.shard.addPartitions(
          {
            transactionalId: 'tx',
            producerId: 1000n,
            producerEpoch: 0,
            topics: [{ topic: 't', partitions: [0] }],
            clientTransactionVersion: 0,
          },
          T0 + 1,
        ),
      )
    const toPrepare = (committed: boolean) => (h: TxnHarness) => {
      toOngoing(h)
      h.apply(h.shard.endTxn(v1({ committed }), T0 + 2))
    }
    const toComplete = (committed: boolean) => (h: TxnHarness) => {
      toPrepare(committed)(h)
      h.apply(
        h.shard.completeTransaction(
          { transactionalId: 'tx', producerId: 1000n, producerEpoch: 0, committed },
          T0 + 3,
        ),
      )
    }
    const states: [string, (h: TxnHarness) => void, number, number][] = [
      ['Ongoing', toOngoing, 0, 0],
      [
        'PrepareCommit',
        toPrepare(true),
        ErrorCode.CONCURRENT_TRANSACTIONS,
        ErrorCode.CONCURRENT_TRANSACTIONS,
      ],
      [
        'PrepareAbort',
        toPrepare(false),
        ErrorCode.CONCURRENT_TRANSACTIONS,
        ErrorCode.CONCURRENT_TRANSACTIONS,
      ],
      ['CompleteCommit', toComplete(true), 0, ErrorCode.INVALID_TXN_STATE],
      ['CompleteAbort', toComplete(false), ErrorCode.INVALID_TXN_STATE, 0],
      ['Empty', () => {}, ErrorCode.INVALID_TXN_STATE, ErrorCode.INVALID_TXN_STATE],
    ]
    for (const [name, setup, commit, abort] of states) {
      cases.push([`${name} commit`, codeIn(setup, true), commit])
      cases.push([`${name} abort`, codeIn(setup, false), abort])
    }
    for (const [name, got, want] of cases) assert.equal(got, want, name)
  })

  it('producer id and epoch are checked before the state', () => {
    const h = ongoing(0, 1)
    assert.equal(
      h.shard.endTxn(v1({ transactionalId: '' }), T0).response.errorCode,
      ErrorCode.INVALID_REQUEST,
    )
    assert.equal(
      h.shard.endTxn(v1({ transactionalId: 'x' }), T0).response.errorCode,
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
    )
    assert.equal(
      h.shard.endTxn(v1({ producerId: 3n }), T0).response.errorCode,
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
    )
    assert.equal(h.shard.endTxn(v1({ producerEpoch: 1 }), T0).response.errorCode, ErrorCode.PRODUCER_FENCED)
  })
})

describe('transaction shard: EndTxn v5 (TV2)', () => {
  it('Ongoing → PrepareCommit with epoch + 1; the answer is the epoch to use next', () => {
    const h = ongoing(0)
    const r = h.shard.endTxn(end(), T0 + 20)
    assert.deepEqual(r.response, {
      errorCode: 0,
      producerId: 1000n,
      producerEpoch: 1,
      markers: {
        transactionalId: 'tx',
        producerId: 1000n,
        producerEpoch: 1,
        committed: true,
        coordinatorEpoch: 0,
        transactionVersion: 2,
        topics: [{ topic: 't', partitions: [0, 1] }],
      },
    })
    assert.deepEqual(r.records, [
      rec(
        {
          producerId: 1000n,
          previousProducerId: 1000n,
          producerEpoch: 1,
          transactionTimeoutMs: 10000,
          transactionStatus: S.PREPARE_COMMIT,
          transactionPartitions: [{ topic: 't', partitionIds: [0, 1] }],
          transactionLastUpdateTimestampMs: BigInt(T0 + 20),
          transactionStartTimestampMs: BigInt(T0 + 10),
          clientTransactionVersion: 2,
        },
        0,
      ),
    ])
  })

  it('the table of §7.2 for the idle states (retry = epoch one below, current = equal)', () => {
    /** Sets `tx` to `state` with producer 1000 at epoch 5. */
    const at = (state: S) => {
      const h = new TxnHarness()
      h.seed(
        metadata({
          transactionalId: 'tx',
          producerEpoch: 5,
          state,
          txnStartTimestamp: state === S.EMPTY ? -1 : T0,
          clientTransactionVersion: 2,
        }),
      )
      return h
    }
    const OK = 0
    const EB = 'bump'
    const PF = ErrorCode.PRODUCER_FENCED
    const ITS = ErrorCode.INVALID_TXN_STATE
    // [state, abort retry, abort current, commit retry, commit current]
    const table: [S, ...(number | string)[]][] = [
      [S.EMPTY, PF, EB, PF, ITS],
      [S.COMPLETE_ABORT, OK, EB, ITS, ITS],
      [S.COMPLETE_COMMIT, ITS, EB, OK, ITS],
    ]
    for (const [state, ...want] of table) {
      const got = [
        [false, 4],
        [false, 5],
        [true, 4],
        [true, 5],
      ].map(([committed, epoch]) => {
        const h = at(state)
        const r = h.shard.endTxn(
          end({ committed: committed as boolean, producerEpoch: epoch as number }),
          T0 + 9,
        )
        if (r.response.errorCode !== 0) return r.response.errorCode
        if (r.records.length === 0) {
          // NONE for a retry: the current producer id and epoch.
          assert.deepEqual([r.response.producerId, r.response.producerEpoch], [1000n, 5])
          return OK
        }
        const v = r.records[0]!.value!
        assert.equal(v.transactionStatus, S.PREPARE_ABORT)
        assert.equal(v.producerEpoch, 6)
        // Nothing was added: the start time is now.
        assert.equal(v.transactionStartTimestampMs, BigInt(T0 + 9))
        assert.deepEqual(r.response.markers?.topics, [])
        return EB
      })
      assert.deepEqual(got, want, `state ${state}`)
    }
  })

  it('Ongoing accepts only the current epoch; Prepare states answer CONCURRENT_TRANSACTIONS', () => {
    const h = ongoing(0)
    assert.equal(h.shard.endTxn(end({ producerEpoch: 1 }), T0).response.errorCode, ErrorCode.PRODUCER_FENCED)
    h.apply(h.shard.endTxn(end(), T0 + 20))
    for (const [committed, epoch] of [
      [true, 0],
      [true, 1],
      [false, 0],
      [false, 1],
    ] as const) {
      const r = h.shard.endTxn(end({ committed, producerEpoch: epoch }), T0 + 21)
      assert.equal(r.response.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS)
    }
  })

  it('a retried commit after completion answers NONE with the current epoch', () => {
    const h = ongoing(0)
    h.apply(h.shard.endTxn(end(), T0 + 20))
    h.apply(
      h.shard.completeTransaction(
        { transactionalId: 'tx', producerId: 1000n, producerEpoch: 1, committed: true },
        T0 + 21,
      ),
    )
    assert.deepEqual(h.shard.endTxn(end({ producerEpoch: 0 }), T0 + 22), {
      records: [],
      response: { errorCode: 0, producerId: 1000n, producerEpoch: 1, markers: null },
    })
  })

  it('epoch 32766: a new producer id is allocated, and becomes current with epoch 0 at completion', () => {
    const h = new TxnHarness()
    h.seed(
      metadata({
        transactionalId: 'tx',
        producerId: 500n,
        prevProducerId: 500n,
        producerEpoch: 32766,
        state: S.ONGOING,
        topicPartitions: new Map([['t', new Set([3])]]),
        txnStartTimestamp: T0,
        clientTransactionVersion: 2,
      }),
    )
    const r = h.shard.endTxn(end({ producerId: 500n, producerEpoch: 32766 }), T0 + 1)
    assert.deepEqual(r.response, {
      errorCode: 0,
      producerId: 1000n,
      producerEpoch: 0,
      markers: {
        transactionalId: 'tx',
        producerId: 500n,
        producerEpoch: 32767,
        committed: true,
        coordinatorEpoch: 0,
        transactionVersion: 2,
        topics: [{ topic: 't', partitions: [3] }],
      },
    })
    assert.deepEqual(r.records, [
      rec(
        {
          producerId: 500n,
          previousProducerId: 500n,
          nextProducerId: 1000n,
          producerEpoch: 32767,
          transactionTimeoutMs: 10000,
          transactionStatus: S.PREPARE_COMMIT,
          transactionPartitions: [{ topic: 't', partitionIds: [3] }],
          transactionLastUpdateTimestampMs: BigInt(T0 + 1),
          transactionStartTimestampMs: BigInt(T0),
          clientTransactionVersion: 2,
        },
        32766,
      ),
    ])
    h.apply(r)
    const c = h.shard.completeTransaction(
      { transactionalId: 'tx', producerId: 500n, producerEpoch: 32767, committed: true },
      T0 + 2,
    )
    assert.deepEqual(c.records, [
      rec(
        {
          producerId: 1000n,
          previousProducerId: 500n,
          producerEpoch: 0,
          transactionTimeoutMs: 10000,
          transactionStatus: S.COMPLETE_COMMIT,
          transactionPartitions: [],
          transactionLastUpdateTimestampMs: BigInt(T0 + 2),
          transactionStartTimestampMs: BigInt(T0),
          clientTransactionVersion: 2,
        },
        32766,
      ),
    ])
    h.apply(c)
    // The client did not see the answer and retries with the old id at 32766: NONE, the new id.
    assert.deepEqual(h.shard.endTxn(end({ producerId: 500n, producerEpoch: 32766 }), T0 + 3).response, {
      errorCode: 0,
      producerId: 1000n,
      producerEpoch: 0,
      markers: null,
    })
    // The next transaction uses the new id.
    assert.equal(
      h.shard.endTxn(end({ producerId: 1000n, producerEpoch: 0, committed: false }), T0 + 4).response
        .producerEpoch,
      1,
    )
  })

  it('no producer id to rotate to: COORDINATOR_LOAD_IN_PROGRESS, nothing written', () => {
    const h = new TxnHarness()
    h.seed(metadata({ transactionalId: 'tx', producerEpoch: 32766, state: S.ONGOING, txnStartTimestamp: T0 }))
    h.ids.exhausted = true
    const r = h.shard.endTxn(end({ producerEpoch: 32766 }), T0)
    assert.deepEqual(r.records, [])
    assert.equal(r.response.errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
  })
})

describe('transaction shard: completion, timeouts, expiration', () => {
  it('completion only for the Prepare state and producer the markers were for', () => {
    const h = ongoing(0)
    h.apply(h.shard.endTxn(end(), T0 + 20))
    const stale = [
      { transactionalId: 'x', producerId: 1000n, producerEpoch: 1, committed: true },
      { transactionalId: 'tx', producerId: 1000n, producerEpoch: 1, committed: false },
      { transactionalId: 'tx', producerId: 1000n, producerEpoch: 0, committed: true },
      { transactionalId: 'tx', producerId: 9n, producerEpoch: 1, committed: true },
    ]
    for (const s of stale)
      assert.deepEqual(h.shard.completeTransaction(s, T0), { records: [], response: { completed: false } })
    const ok = h.shard.completeTransaction(
      { transactionalId: 'tx', producerId: 1000n, producerEpoch: 1, committed: true },
      T0 + 21,
    )
    assert.equal(ok.response.completed, true)
    h.apply(ok)
    // A second completion finds CompleteCommit.
    assert.equal(
      h.shard.completeTransaction(
        { transactionalId: 'tx', producerId: 1000n, producerEpoch: 1, committed: true },
        T0,
      ).response.completed,
      false,
    )
  })

  it('a transaction open longer than its timeout is aborted with a bumped epoch (not at the boundary)', () => {
    const h = ongoing(0)
    // Started at T0 + 10 with a 10 s timeout.
    assert.deepEqual(h.shard.abortTimedOutTransactions(T0 + 10 + 10000), {
      records: [],
      response: { markers: [] },
    })
    const r = h.shard.abortTimedOutTransactions(T0 + 10 + 10001)
    assert.equal(r.records.length, 1)
    assert.equal(r.records[0]!.value!.transactionStatus, S.PREPARE_ABORT)
    assert.equal(r.records[0]!.value!.producerEpoch, 1)
    assert.deepEqual(
      r.response.markers.map((m) => [m.transactionalId, m.producerEpoch, m.committed]),
      [['tx', 1, false]],
    )
    h.apply(r)
    // The fenced producer learns on its next request.
    assert.equal(h.shard.endTxn(end(), T0 + 20000).response.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS)
    h.apply(
      h.shard.completeTransaction(
        { transactionalId: 'tx', producerId: 1000n, producerEpoch: 1, committed: false },
        T0 + 20001,
      ),
    )
    // With TV2 the old epoch looks like a retry of the abort: a commit is INVALID_TXN_STATE, and
    // adding partitions is fenced.
    assert.equal(h.shard.endTxn(end(), T0 + 20002).response.errorCode, ErrorCode.INVALID_TXN_STATE)
    const add = h.shard.addPartitions(
      {
        transactionalId: 'tx',
        producerId: 1000n,
        producerEpoch: 0,
        topics: [{ topic: 't', partitions: [0] }],
        clientTransactionVersion: 2,
      },
      T0 + 20003,
    )
    assert.equal(add.response.errorCode, ErrorCode.PRODUCER_FENCED)
    // Nothing Ongoing: nothing to abort.
    assert.deepEqual(h.shard.abortTimedOutTransactions(T0 + 99999999).records, [])
  })

  it('idle ids not updated for transactional.id.expiration.ms get a tombstone and disappear', () => {
    const h = new TxnHarness({ transactionalIdExpirationMs: 1000 })
    h.apply(h.shard.initProducerId(init(), T0))
    h.apply(h.shard.initProducerId(init({ transactionalId: 'busy' }), T0))
    h.apply(
      h.shard.addPartitions(
        {
          transactionalId: 'busy',
          producerId: 1001n,
          producerEpoch: 0,
          topics: [{ topic: 't', partitions: [0] }],
          clientTransactionVersion: 2,
        },
        T0,
      ),
    )
    assert.deepEqual(h.shard.expireTransactionalIds(T0 + 999).records, [])
    const r = h.shard.expireTransactionalIds(T0 + 1000)
    assert.deepEqual(r, { records: [rec(null)], response: { expired: ['tx'] } })
    h.apply(r)
    assert.equal(h.shard.transaction('tx'), undefined)
    assert.equal(h.shard.describeTransaction('tx').errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
    // The id starts over with a new producer id.
    assert.equal(h.shard.initProducerId(init(), T0 + 2000).response.producerId, 1002n)
    // The tombstone survives a reload.
    h.reload()
    assert.equal(h.shard.transaction('tx'), undefined)
    assert.equal(h.shard.transaction('busy')?.state, S.ONGOING)
  })
})

describe('transaction shard: DescribeTransactions and ListTransactions', () => {
  it('describe: state name, timeout, start time, producer, partitions; errors per id', () => {
    const h = ongoing(0)
    assert.deepEqual(h.shard.describeTransaction('tx'), {
      transactionalId: 'tx',
      errorCode: 0,
      transactionState: 'Ongoing',
      transactionTimeoutMs: 10000,
      transactionStartTimeMs: BigInt(T0 + 10),
      producerId: 1000n,
      producerEpoch: 0,
      topics: [{ topic: 't', partitions: [0, 1] }],
    })
    assert.equal(h.shard.describeTransaction('').errorCode, ErrorCode.INVALID_REQUEST)
    const missing = h.shard.describeTransaction('nope')
    assert.deepEqual(missing, {
      transactionalId: 'nope',
      errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
      transactionState: '',
      transactionTimeoutMs: 0,
      transactionStartTimeMs: 0n,
      producerId: 0n,
      producerEpoch: 0,
      topics: [],
    })
    h.apply(h.shard.initProducerId(init({ transactionalId: 'idle' }), T0))
    assert.equal(h.shard.describeTransaction('idle').transactionState, 'Empty')
    assert.equal(h.shard.describeTransaction('idle').transactionStartTimeMs, -1n)
  })

  it('list: state, producer id, duration and pattern filters; unknown states reported', () => {
    const h = ongoing(0) // tx: Ongoing since T0 + 10, producer 1000
    h.apply(h.shard.initProducerId(init({ transactionalId: 'app-1' }), T0)) // Empty, producer 1001
    const list = (p: Partial<Parameters<typeof h.shard.listTransactions>[0]>, now = T0 + 100) =>
      h.shard.listTransactions(
        { stateFilters: [], producerIdFilters: [], durationFilter: -1n, transactionalIdPattern: null, ...p },
        now,
      )
    assert.deepEqual(list({}), {
      errorCode: 0,
      unknownStateFilters: [],
      transactionStates: [
        { transactionalId: 'tx', producerId: 1000n, transactionState: 'Ongoing' },
        { transactionalId: 'app-1', producerId: 1001n, transactionState: 'Empty' },
      ],
    })
    const ids = (p: Partial<Parameters<typeof h.shard.listTransactions>[0]>, now?: number) =>
      list(p, now).transactionStates.map((t) => t.transactionalId)
    assert.deepEqual(ids({ stateFilters: ['Empty'] }), ['app-1'])
    const unknown = list({ stateFilters: ['Bogus'] })
    assert.deepEqual([unknown.unknownStateFilters, unknown.transactionStates], [['Bogus'], []])
    assert.deepEqual(ids({ producerIdFilters: [1000n] }), ['tx'])
    // Running longer than 90 ms at T0 + 100: tx started at T0 + 10 (90 ms: not longer); Empty always passes.
    assert.deepEqual(ids({ durationFilter: 90n }), ['app-1'])
    assert.deepEqual(ids({ durationFilter: 89n }), ['tx', 'app-1'])
    // The pattern must match the whole id.
    assert.deepEqual(ids({ transactionalIdPattern: 'app' }), [])
    assert.deepEqual(ids({ transactionalIdPattern: 'app-.*' }), ['app-1'])
    assert.deepEqual(ids({ transactionalIdPattern: 't|app-1' }), ['app-1'])
    assert.deepEqual(ids({ transactionalIdPattern: '' }), ['tx', 'app-1'])
    assert.equal(list({ transactionalIdPattern: '(' }).errorCode, ErrorCode.INVALID_REGULAR_EXPRESSION)
  })
})

describe('transaction shard: loading and records', () => {
  it('after loading, Prepare states are completed: their markers are written again', () => {
    const h = ongoing(0)
    h.apply(h.shard.endTxn(end({ committed: false }), T0 + 20))
    h.reload()
    assert.deepEqual(h.shard.pendingMarkers(), [
      {
        transactionalId: 'tx',
        producerId: 1000n,
        producerEpoch: 1,
        committed: false,
        coordinatorEpoch: 0,
        transactionVersion: 2,
        topics: [{ topic: 't', partitions: [0, 1] }],
      },
    ])
    h.apply(
      h.shard.completeTransaction(
        { transactionalId: 'tx', producerId: 1000n, producerEpoch: 1, committed: false },
        T0 + 30,
      ),
    )
    assert.deepEqual(h.shard.pendingMarkers(), [])
  })

  it('onLoaded: the markers of Prepare states as completions, and the two periodic timers', () => {
    const h = new TxnHarness({
      abortTimedOutTransactionsIntervalMs: 500,
      removeExpiredTransactionalIdsIntervalMs: 900,
    })
    h.apply(h.shard.initProducerId(init(), T0))
    h.apply(
      h.shard.addPartitions(
        {
          transactionalId: 'tx',
          producerId: 1000n,
          producerEpoch: 0,
          topics: [{ topic: 't', partitions: [0] }],
          clientTransactionVersion: 2,
        },
        T0,
      ),
    )
    const loaded = h.shard.onLoaded(T0)
    assert.deepEqual(loaded.records, [])
    assert.deepEqual(loaded.completions, [])
    const timers = loaded.timers!.schedule!
    assert.deepEqual(
      timers.map((t) => [t.key, t.delayMs, t.retryBackoffMs]),
      [
        ['transaction-abort', 500, 500],
        ['transactionalId-expiration', 900, 900],
      ],
    )
    // The abort timer aborts the expired transaction, hands out its markers and arms itself again.
    const fired = timers[0]!.op(T0 + 10001)
    assert.equal(fired.records.length, 1)
    assert.equal(fired.records[0]!.value!.transactionStatus, S.PREPARE_ABORT)
    assert.deepEqual(
      fired.completions?.map((m) => [m.transactionalId, m.committed]),
      [['tx', false]],
    )
    assert.deepEqual(
      fired.timers?.schedule?.map((t) => t.key),
      ['transaction-abort'],
    )
    h.apply(fired)
    assert.deepEqual(
      h.shard.onLoaded(T0 + 10002).completions?.map((m) => m.producerEpoch),
      [1],
    )
    const expiry = timers[1]!.op(T0 + 1)
    assert.deepEqual(
      [expiry.records, expiry.timers?.schedule?.map((t) => t.key)],
      [[], ['transactionalId-expiration']],
    )
  })

  it('replaying the log from its stored bytes gives the live state (lastProducerEpoch aside)', () => {
    const h = ongoing(2)
    h.apply(h.shard.endTxn(end({ producerEpoch: 2 }), T0 + 20))
    const live = snapshot(h.shard, true)
    h.reload()
    assert.deepEqual(snapshot(h.shard, true), live)
  })

  it('with transaction.version 0 the values are written at version 0 without the v1 facts', () => {
    const h = new TxnHarness()
    h.level = 0
    const r = h.shard.initProducerId(init(), T0)
    assert.equal(r.records[0]!.valueVersion, 0)
    assert.equal(r.records[0]!.value!.previousProducerId, -1n)
    assert.equal(hex(transactionRecordSerde.serialize(r.records[0]!).value)!.slice(0, 4), '0000')
    h.apply(r)
    h.reload()
    assert.equal(h.md('tx').producerEpoch, 0)
  })

  it('the serde skips unknown key types and value versions, as Kafka’s loader does', () => {
    assert.equal(
      transactionRecordSerde.deserialize({ key: Buffer.from('0001000174', 'hex'), value: null }),
      undefined,
    )
    assert.equal(
      transactionRecordSerde.deserialize({
        key: Buffer.from('0000000174', 'hex'),
        value: Buffer.from('0005', 'hex'),
      }),
      undefined,
    )
    assert.throws(() =>
      transactionRecordSerde.deserialize({ key: Buffer.from('000000', 'hex'), value: null }),
    )
  })

  it('a record with a state id no state has fails replay', () => {
    const h = new TxnHarness()
    assert.throws(() => h.shard.replay(rec({ transactionStatus: 9 })), /Unknown transaction state id 9/)
  })

  it('placement: abs(Java hashCode) % transaction.state.log.num.partitions', () => {
    assert.equal(transactionShardFor('tx', 50), shardFor('tx', 50))
    // "polygenelubricants" hashes to Integer.MIN_VALUE, which Kafka's Utils.abs maps to 0.
    assert.equal(transactionShardFor('polygenelubricants', 50), 0)
  })
})
