import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import * as p from '../../src/protocol/index.js'

describe('Reader / Writer primitives', () => {
  it('int64 is exact over the whole range', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (x) => {
        const w = new p.Writer(1)
        w.writeInt64(x)
        assert.equal(new p.Reader(w.finish()).readInt64(), x)
      }),
    )
  })
  it('unsigned varints round-trip and are minimal', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (x) => {
        const w = new p.Writer(1)
        w.writeUVarint(x)
        const b = w.finish()
        assert.equal(b.length, p.uvarintSize(x))
        assert.equal(new p.Reader(b).readUVarint(), x)
      }),
    )
  })
  it('uuid: zero is AAAAAAAAAAAAAAAAAAAAAA; others base64url', () => {
    const w = new p.Writer()
    w.writeUuid('AAAAAAAAAAAAAAAAAAAAAA')
    w.writeUuid('AAECAwQFBgcICQoLDA0ODw')
    const b = w.finish()
    assert.equal(b.toString('hex'), '00'.repeat(16) + '000102030405060708090a0b0c0d0e0f')
    const r = new p.Reader(b)
    assert.equal(r.readUuid(), 'AAAAAAAAAAAAAAAAAAAAAA')
    assert.equal(r.readUuid(), 'AAECAwQFBgcICQoLDA0ODw')
    assert.throws(() => new p.Writer().writeUuid('nope'), p.EncodeError)
  })
  it('bool: any non-zero byte is true', () => {
    assert.equal(new p.Reader(Buffer.from([2])).readBool(), true)
  })
  it('strings: compact null/empty, UTF-8 lengths', () => {
    const w = new p.Writer(2)
    w.writeCompactNullableString(null)
    w.writeCompactString('')
    w.writeString('é')
    w.writeNullableString(null)
    assert.equal(w.finish().toString('hex'), '00' + '01' + '0002c3a9' + 'ffff')
  })
  it('back-patched sizes', () => {
    const w = new p.Writer(2)
    const at = w.reserveInt32()
    const s = w.beginUVarintSized()
    w.writeRaw(new Uint8Array(200))
    w.endUVarintSized(s)
    w.patchInt32(at, w.length - 4)
    const b = w.finish()
    assert.equal(b.readInt32BE(0), 202)
    assert.equal(b.subarray(4, 6).toString('hex'), 'c801')
  })
  it('truncation reports the offset', () => {
    const r = new p.Reader(Buffer.from('0001', 'hex'))
    r.readInt8()
    assert.throws(
      () => r.readInt32(),
      (e: unknown) => e instanceof p.DecodeError && e.code === 'TRUNCATED' && e.offset === 1,
    )
  })
  it('decode must consume all bytes', () => {
    assert.throws(
      () => p.decodeHeartbeatResponse(Buffer.from('000000', 'hex'), 0),
      (e: unknown) => e instanceof p.DecodeError && e.code === 'TRAILING_BYTES',
    )
  })
  it('null in a non-nullable field is an EncodeError', () => {
    const m = p.createHeartbeatRequest({ groupInstanceId: null })
    p.encodeHeartbeatRequest(m, 3)
    assert.throws(
      () => p.encodeHeartbeatRequest({ ...m, groupId: null as unknown as string }, 3),
      p.EncodeError,
    )
  })
})

describe('errors table', () => {
  it('covers every code from -1 to 136', () => {
    for (let c = -1; c <= 136; c++) assert.ok(p.isKnownErrorCode(c), `missing ${c}`)
    assert.equal(p.ERRORS.length, 138)
    assert.equal(p.ErrorCode.GROUP_DELETION_FAILED, 134)
    assert.equal(p.ErrorCode.STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED, 135)
    assert.equal(p.errorName(16), 'NOT_COORDINATOR')
    assert.equal(p.errorInfo(16).retriable, true)
    assert.equal(p.errorInfo(129).retriable, false)
    assert.equal(p.errorName(9999), 'UNKNOWN_SERVER_ERROR')
    assert.equal(p.ApiKeys.StreamsGroupHeartbeat, 88)
  })
})

describe('coordinator records', () => {
  it('frames key and value like Kafka and round-trips every record type', () => {
    const rec: p.CoordinatorRecord = {
      type: 'StreamsGroupMetadata',
      key: p.createStreamsGroupMetadataKey({ groupId: 'g' }),
      value: p.createStreamsGroupMetadataValue({
        epoch: 3,
        metadataHash: 9n,
        storedDescriptionTopologyEpoch: -2,
      }),
    }
    const { key, value } = p.encodeCoordinatorRecord(rec)
    assert.equal(Buffer.from(key).toString('hex'), '0011' + '0001' + '67')
    assert.equal(
      Buffer.from(value!).toString('hex'),
      '0000' + '00000003' + '0000000000000009' + '01' + '0204fffffffe',
    )
    assert.deepEqual(p.decodeCoordinatorRecord(key, value), { ...rec, valueVersion: 0 })
    const tomb = p.encodeCoordinatorRecord({ ...rec, value: null })
    assert.equal(tomb.value, null)
    assert.deepEqual(p.decodeCoordinatorRecord(tomb.key, null), { ...rec, value: null })
  })
  it('legacy offset keys are type ids 0 and 1, group metadata 2', () => {
    assert.equal(p.coordinatorRecordDefinition('LegacyOffsetCommit').typeId, 0)
    assert.equal(p.coordinatorRecordDefinition('OffsetCommit').typeId, 1)
    assert.equal(p.coordinatorRecordDefinition('GroupMetadata').typeId, 2)
    const k = Buffer.from('0001' + '000167' + '000174' + '00000003', 'hex')
    const r = p.decodeCoordinatorRecord(k, null)
    assert.equal(r.type, 'OffsetCommit')
  })
  it('unknown type ids are a typed error', () => {
    assert.throws(
      () => p.decodeCoordinatorRecord(Buffer.from('0012', 'hex'), null),
      (e: unknown) => e instanceof p.UnknownRecordTypeError && e.typeId === 18,
    )
  })
})

describe('deepEqual', () => {
  it('deepEqual compares structs over the keys of both sides', () => {
    assert.equal(p.deepEqual({ a: 1, b: [1n, 'x'] }, { b: [1n, 'x'], a: 1 }), true)
    assert.equal(p.deepEqual({ a: 1 }, { a: 1, b: 2 }), false)
    assert.equal(p.deepEqual({ a: 1, b: 2 }, { a: 1 }), false)
    assert.equal(p.deepEqual({ a: 1, b: undefined }, { a: 1 }), true)
    assert.equal(p.deepEqual({ a: 1 }, { a: 1, unknownTaggedFields: [] }), true)
    assert.equal(p.deepEqual({ a: 1, unknownTaggedFields: [] }, { a: 1 }), true)
    assert.equal(
      p.deepEqual({ a: 1, unknownTaggedFields: [{ tag: 1, data: new Uint8Array(1) }] }, { a: 1 }),
      false,
    )
    assert.equal(p.deepEqual({ leader: { id: -1, epoch: -1 } }, { leader: { id: -1, epoch: 0 } }), false)
  })
})
