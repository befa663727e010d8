import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  markerResultAction,
  type TxnMarkerIntent,
  TxnMarkerTracker,
} from '../../../src/coordinator/txn/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'

const intent: TxnMarkerIntent = {
  transactionalId: 'tx',
  producerId: 1000n,
  producerEpoch: 1,
  committed: true,
  coordinatorEpoch: 0,
  transactionVersion: 2,
  topics: [
    { topic: 't', partitions: [0, 1] },
    { topic: '__consumer_offsets', partitions: [7] },
  ],
}

describe('transaction markers: results', () => {
  it("Kafka's table for one partition's result", () => {
    const table: [string, string][] = [
      ['NONE', 'remove'],
      ['UNSUPPORTED_FOR_MESSAGE_FORMAT', 'remove'],
      ['UNSUPPORTED_VERSION', 'remove'],
      ['UNKNOWN_TOPIC_OR_PARTITION', 'retry'],
      ['NOT_LEADER_OR_FOLLOWER', 'retry'],
      ['NOT_ENOUGH_REPLICAS', 'retry'],
      ['NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'retry'],
      ['REQUEST_TIMED_OUT', 'retry'],
      ['KAFKA_STORAGE_ERROR', 'retry'],
      ['INVALID_PRODUCER_EPOCH', 'abandon'],
      ['TRANSACTION_COORDINATOR_FENCED', 'abandon'],
      ['CORRUPT_MESSAGE', 'fatal'],
      ['MESSAGE_TOO_LARGE', 'fatal'],
      ['RECORD_LIST_TOO_LARGE', 'fatal'],
      ['INVALID_REQUIRED_ACKS', 'fatal'],
      ['UNKNOWN_SERVER_ERROR', 'fatal'],
    ]
    for (const [name, action] of table) {
      assert.equal(markerResultAction(ErrorCode[name as keyof typeof ErrorCode]), action, name)
    }
  })

  it('written partitions leave; the others are retried; complete when none remains', () => {
    const m = new TxnMarkerTracker(intent)
    assert.deepEqual(
      m.onResults([
        { topic: 't', partition: 0, errorCode: ErrorCode.NONE },
        { topic: 't', partition: 1, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER },
        { topic: '__consumer_offsets', partition: 7, errorCode: ErrorCode.NONE },
      ]),
      { kind: 'retry', topics: [{ topic: 't', partitions: [1] }] },
    )
    // A result for a partition not waited for changes nothing.
    assert.equal(
      m.onResults([{ topic: 'x', partition: 3, errorCode: ErrorCode.CORRUPT_MESSAGE }]).kind,
      'retry',
    )
    assert.deepEqual(m.onResults([{ topic: 't', partition: 1, errorCode: ErrorCode.NONE }]), {
      kind: 'complete',
    })
    assert.equal(m.done, true)
  })

  it('an epoch that moved on abandons the transaction; an unexpected error is fatal', () => {
    const m = new TxnMarkerTracker(intent)
    assert.deepEqual(
      m.onResults([{ topic: 't', partition: 0, errorCode: ErrorCode.INVALID_PRODUCER_EPOCH }]),
      {
        kind: 'abandoned',
        errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
      },
    )
    const f = new TxnMarkerTracker(intent)
    assert.deepEqual(f.onResults([{ topic: 't', partition: 1, errorCode: ErrorCode.MESSAGE_TOO_LARGE }]), {
      kind: 'fatal',
      errorCode: ErrorCode.MESSAGE_TOO_LARGE,
      topic: 't',
      partition: 1,
    })
  })

  it('partitions of a deleted topic are dropped, not retried; no partitions at all is complete at once', () => {
    const m = new TxnMarkerTracker(intent)
    m.dropMissing((topic) => topic !== 't')
    assert.deepEqual(m.remaining(), [{ topic: '__consumer_offsets', partitions: [7] }])
    assert.deepEqual(new TxnMarkerTracker({ ...intent, topics: [] }).progress(), { kind: 'complete' })
  })
})
