// Producer state on its own: snapshots in Kafka's layout round trip, a corrupt one is refused,
// expired producers are skipped, and the §5.3 checks in their order.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { readBatchHeader } from '../../src/log/batch.js'
import { crc32c } from '../../src/log/compression.js'
import { ProducerStateManager } from '../../src/log/producer-state.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import { batchOf, hex, records } from './helpers.js'

const T = 1700000000000

function header(producerId: number, epoch: number, seq: number, n = 1, transactional = false) {
  return readBatchHeader(
    batchOf(records(n), { producerId, producerEpoch: epoch, baseSequence: seq, transactional }),
  )
}

test('snapshot: Kafka layout (version 1, CRC-32C after byte 6, 46-byte entries), round trip', () => {
  const a = new ProducerStateManager('t-0')
  a.update(header(1000, 5, 0, 3), 10, T)
  a.update(header(1000, 5, 3, 2), 13, T + 1)
  a.update(header(7, 0, 0, 1, true), 15, T + 2)
  const snap = a.snapshot(crc32c)
  assert.equal(snap.byteLength, 10 + 2 * 46)
  assert.equal(hex(snap.subarray(0, 2)), '0001')
  assert.equal(new DataView(snap.buffer).getUint32(2), crc32c(snap.subarray(6)))
  // First entry: producer 1000, epoch 5, last seq 4, last offset 14, offset delta 1, timestamp, coordinator epoch -1, txn -1.
  assert.equal(
    hex(snap.subarray(10, 56)),
    '00000000000003e8' +
      '0005' +
      '00000004' +
      '000000000000000e' +
      '00000001' +
      (T + 1).toString(16).padStart(16, '0') +
      'ffffffff' +
      'ffffffffffffffff',
  )
  const b = new ProducerStateManager('t-0')
  assert.ok(b.load(snap, crc32c, T, 86400000))
  assert.deepEqual(b.describe(), a.describe())
  // After a restart, duplicate detection covers the last batch (as Kafka's snapshot).
  assert.equal(b.check(header(1000, 5, 3, 2), 20, undefined).kind, 'duplicate')
  assert.equal(b.check(header(1000, 5, 5, 1), 20, undefined).kind, 'ok')
})

test('snapshot: a corrupt snapshot is refused and changes nothing; expired producers are skipped', () => {
  const a = new ProducerStateManager('t-0')
  a.update(header(1, 0, 0), 0, T)
  a.update(header(2, 0, 0), 1, T + 100000)
  const snap = a.snapshot(crc32c)
  const bad = snap.slice()
  bad[20] ^= 1
  const b = new ProducerStateManager('t-0')
  b.update(header(9, 0, 0), 0, T)
  assert.equal(b.load(bad, crc32c, T, 1000), false)
  assert.deepEqual(
    b.describe().map((p) => p.producerId),
    [9],
  )
  assert.ok(b.load(snap, crc32c, T + 100500, 1000))
  assert.deepEqual(
    b.describe().map((p) => p.producerId),
    [2],
  )
})

test('checks: duplicate before epoch before sequence; transactional state', () => {
  const s = new ProducerStateManager('t-0')
  s.update(header(1, 3, 0, 2), 0, T)
  assert.equal(s.check(header(1, 3, 0, 2), 2, undefined).kind, 'duplicate')
  const older = s.check(header(1, 2, 2), 2, undefined)
  assert.ok(older.kind === 'error' && older.errorCode === ErrorCode.INVALID_PRODUCER_EPOCH)
  const gap = s.check(header(1, 3, 5), 2, undefined)
  assert.ok(gap.kind === 'error' && gap.errorCode === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
  assert.equal(s.check(header(1, 3, 2), 2, undefined).kind, 'ok')
  // A transactional batch opens a transaction; a plain batch of the same producer is refused.
  s.update(header(1, 3, 2, 1, true), 2, T)
  assert.equal(s.firstUnstableOffset(), 2)
  const plain = s.check(header(1, 3, 3), 3, undefined)
  assert.ok(plain.kind === 'error' && plain.errorCode === ErrorCode.INVALID_TXN_STATE)
  assert.equal(s.completeTransaction(1, 3, 0, T), 2)
  assert.equal(s.firstUnstableOffset(), -1)
  const unverified = s.check(header(1, 3, 3, 1, true), 3, false)
  assert.ok(unverified.kind === 'error' && unverified.errorCode === ErrorCode.INVALID_TXN_STATE)
  // Expiry: idle producers without an open transaction go.
  assert.equal(s.expire(T + 10, 5), 1)
  assert.deepEqual(s.describe(), [])
})
