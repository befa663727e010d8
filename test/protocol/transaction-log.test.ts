import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as p from '../../src/protocol/index.js'

const hex = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString('hex'))
const bytes = (h: string): Uint8Array => Buffer.from(h.replace(/\s+/g, ''), 'hex')

/** The first InitProducerId of a new id: pid 1000, epoch 0, timeout 10 s, Empty at 1700000000000. */
const EMPTY: p.TransactionLogValue = p.createTransactionLogValue({
  producerId: 1000n,
  previousProducerId: 1000n,
  producerEpoch: 0,
  transactionTimeoutMs: 10000,
  transactionStatus: 0,
  transactionPartitions: null,
  transactionLastUpdateTimestampMs: 1700000000000n,
  transactionStartTimestampMs: -1n,
})

describe('transaction log records: golden bytes', () => {
  it('the key is type id 0 and the transactional id as an int16-length string', () => {
    const { key, value } = p.encodeTransactionLogRecord({ key: { transactionalId: 'tx' }, value: null })
    assert.equal(hex(key), '0000' + '0002' + '7478')
    assert.equal(value, null)
    assert.deepEqual(p.decodeTransactionLogRecord(key, null), { key: { transactionalId: 'tx' }, value: null })
  })

  it('value v1 of a new Empty id (the example of the specification)', () => {
    const { value } = p.encodeTransactionLogRecord({ key: { transactionalId: 'tx' }, value: EMPTY })
    const expected =
      '0001 00000000000003e8 0000 00002710 00 00 0000018bcfe56800 ffffffffffffffff 01 00 08 00000000000003e8'
    assert.equal(hex(value), expected.replace(/ /g, ''))
    const back = p.decodeTransactionLogRecord(bytes('000000027478'), bytes(expected))
    assert.deepEqual(back, { key: { transactionalId: 'tx' }, value: EMPTY, valueVersion: 1 })
  })

  it('value v0: not flexible, int32 array length (-1 for null), no tagged fields', () => {
    const v0 = { ...EMPTY, previousProducerId: -1n }
    const { value } = p.encodeTransactionLogRecord({
      key: { transactionalId: 'tx' },
      value: v0,
      valueVersion: 0,
    })
    const expected = '0000 00000000000003e8 0000 00002710 00 ffffffff 0000018bcfe56800 ffffffffffffffff'
    assert.equal(hex(value), expected.replace(/ /g, ''))
    assert.deepEqual(p.decodeTransactionLogRecord(bytes('000000027478'), bytes(expected)), {
      key: { transactionalId: 'tx' },
      value: v0,
      valueVersion: 0,
    })
  })

  it('value v0 refuses the facts only v1 has (previous and next producer id, client version)', () => {
    assert.throws(
      () => p.encodeTransactionLogRecord({ key: { transactionalId: 'tx' }, value: EMPTY, valueVersion: 0 }),
      p.UnsupportedVersionError,
    )
    const tv2 = { ...EMPTY, previousProducerId: -1n, clientTransactionVersion: 2 }
    assert.throws(
      () => p.encodeTransactionLogRecord({ key: { transactionalId: 'tx' }, value: tv2, valueVersion: 0 }),
      p.UnsupportedVersionError,
    )
  })

  it('value v1 of an Ongoing TV2 transaction: compact partitions, tags 0 and 2 in order', () => {
    const value = p.createTransactionLogValue({
      producerId: 1000n,
      previousProducerId: 1000n,
      producerEpoch: 3,
      transactionTimeoutMs: 10000,
      transactionStatus: 1,
      transactionPartitions: [{ topic: 't', partitionIds: [0, 1] }],
      transactionLastUpdateTimestampMs: 1700000000000n,
      transactionStartTimestampMs: 1700000000000n,
      clientTransactionVersion: 2,
    })
    const enc = p.encodeTransactionLogRecord({ key: { transactionalId: 'tx' }, value })
    const expected =
      '0001 00000000000003e8 0003 00002710 01' +
      ' 02 02 74 03 00000000 00000001 00' +
      ' 0000018bcfe56800 0000018bcfe56800' +
      ' 02 00 08 00000000000003e8 02 02 0002'
    assert.equal(hex(enc.value), expected.replace(/ /g, ''))
    assert.deepEqual(p.decodeTransactionLogRecord(enc.key, enc.value), {
      key: { transactionalId: 'tx' },
      value,
      valueVersion: 1,
    })
  })

  it('a rotation writes NextProducerId as tag 1, between tags 0 and 2', () => {
    const value = p.createTransactionLogValue({
      producerId: 1000n,
      previousProducerId: 1000n,
      nextProducerId: 2000n,
      producerEpoch: 32767,
      transactionTimeoutMs: 10000,
      transactionStatus: 2,
      transactionPartitions: [],
      transactionLastUpdateTimestampMs: 1n,
      transactionStartTimestampMs: 1n,
      clientTransactionVersion: 2,
    })
    const enc = p.encodeTransactionLogRecord({ key: { transactionalId: 'a' }, value })
    assert.equal(
      hex(enc.value),
      '0001 00000000000003e8 7fff 00002710 02 01 0000000000000001 0000000000000001 03 00 08 00000000000003e8 01 08 00000000000007d0 02 02 0002'.replace(
        / /g,
        '',
      ),
    )
  })

  it('an unknown tagged field survives decode and encode byte for byte', () => {
    const withUnknown =
      '0001 00000000000003e8 0000 00002710 00 00 0000018bcfe56800 ffffffffffffffff 02 00 08 00000000000003e8 07 01 ab'
    const rec = p.decodeTransactionLogRecord(bytes('000000027478'), bytes(withUnknown))
    assert.deepEqual(
      rec.value?.unknownTaggedFields?.map((f) => f.tag),
      [7],
    )
    assert.equal(hex(p.encodeTransactionLogRecord(rec).value), withUnknown.replace(/ /g, ''))
  })
})

describe('transaction log records: what a loader skips', () => {
  it('a key type id other than 0 is UnknownRecordTypeError', () => {
    assert.throws(
      () => p.decodeTransactionLogRecord(bytes('0001 0002 7478'), null),
      (e: unknown) => e instanceof p.UnknownRecordTypeError && e.typeId === 1,
    )
  })

  it('a value version other than 0-1 is UnknownRecordValueVersionError', () => {
    assert.throws(
      () => p.decodeTransactionLogRecord(bytes('0000 0002 7478'), bytes('0002 00')),
      (e: unknown) => e instanceof p.UnknownRecordValueVersionError && e.version === 2,
    )
  })

  it('truncated and trailing bytes are DecodeErrors', () => {
    assert.throws(() => p.decodeTransactionLogRecord(bytes('0000 0002 74'), null), p.DecodeError)
    assert.throws(() => p.decodeTransactionLogRecord(bytes('0000 0002 747800'), null), p.DecodeError)
    assert.throws(() => p.decodeTransactionLogRecord(bytes('0000 0002 7478'), bytes('00')), p.DecodeError)
    const good = hex(p.encodeTransactionLogRecord({ key: { transactionalId: 'tx' }, value: EMPTY }).value)!
    assert.throws(
      () => p.decodeTransactionLogRecord(bytes('0000 0002 7478'), bytes(good + '00')),
      p.DecodeError,
    )
    assert.throws(
      () => p.decodeTransactionLogRecord(bytes('0000 0002 7478'), bytes(good.slice(0, -2))),
      p.DecodeError,
    )
  })

  it('writing value version 2 is refused', () => {
    assert.throws(
      () => p.encodeTransactionLogRecord({ key: { transactionalId: 'tx' }, value: EMPTY, valueVersion: 2 }),
      RangeError,
    )
  })

  it('the group coordinator table does not hold the transaction log records', () => {
    // Type id 0 of __consumer_offsets is LegacyOffsetCommitKey, not TransactionLogKey.
    assert.equal(p.coordinatorRecordDefinition('LegacyOffsetCommit').typeId, 0)
    assert.ok(!p.COORDINATOR_RECORDS.some((d) => (d.type as string).startsWith('TransactionLog')))
  })
})
