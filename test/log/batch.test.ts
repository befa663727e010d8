// The sans-io batch codec against the golden bytes of data-plane.md §2.6 and transactions.md §8.2,
// plus varint and record round trips.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import {
  BatchFormatError,
  buildBatch,
  ByteSink,
  decodeRecords,
  encodeRecords,
  incrementSequence,
  isCrcValid,
  nextBatchEnd,
  readBatchHeader,
  setBaseOffset,
  setPartitionLeaderEpoch,
  sizeOfVarlong,
  splitBatches,
  VarReader,
} from '../../src/log/batch.js'
import { crc32c } from '../../src/log/compression.js'
import { enc, fromHex, hex } from './helpers.js'

const GOLDEN_PRODUCED = fromHex(`
  0000000000000000 0000003a ffffffff 02 6d0428ed
  0000 00000000 0000018bcfe56800 0000018bcfe56800
  00000000000003e8 0005 00000000 00000001
  10 00 00 00 02 6b 02 76 00`)

test('CRC-32C of "123456789" is 0xE3069283', () => {
  assert.equal(crc32c(enc.encode('123456789')), 0xe3069283)
})

test('golden batch (§2.6): built from its fields, byte for byte', () => {
  const body = encodeRecords([
    { timestampDelta: 0, offsetDelta: 0, key: enc.encode('k'), value: enc.encode('v') },
  ])
  const built = buildBatch(
    {
      attributes: 0,
      lastOffsetDelta: 0,
      baseTimestamp: 1700000000000,
      maxTimestamp: 1700000000000,
      producerId: 1000,
      producerEpoch: 5,
      baseSequence: 0,
      recordsCount: 1,
    },
    body,
    crc32c,
  )
  assert.equal(hex(built), hex(GOLDEN_PRODUCED))
  assert.equal(built.byteLength, 70)
})

test('golden batch (§2.6): header fields read back, CRC valid', () => {
  const h = readBatchHeader(GOLDEN_PRODUCED)
  assert.deepEqual(h, {
    baseOffset: 0,
    batchLength: 58,
    partitionLeaderEpoch: -1,
    magic: 2,
    crc: 0x6d0428ed,
    attributes: 0,
    lastOffsetDelta: 0,
    baseTimestamp: 1700000000000,
    maxTimestamp: 1700000000000,
    producerId: 1000,
    producerEpoch: 5,
    baseSequence: 0,
    recordsCount: 1,
  })
  assert.ok(isCrcValid(GOLDEN_PRODUCED, 0, crc32c))
  const recs = decodeRecords(GOLDEN_PRODUCED.subarray(61), 1)
  assert.equal(recs.length, 1)
  assert.equal(Buffer.from(recs[0].key!).toString(), 'k')
  assert.equal(Buffer.from(recs[0].value!).toString(), 'v')
  assert.deepEqual(recs[0].headers, [])
})

test('golden batch (§2.6): assigning offset 7 and leader epoch 0 leaves the CRC unchanged', () => {
  const b = GOLDEN_PRODUCED.slice()
  setBaseOffset(b, 0, 7)
  setPartitionLeaderEpoch(b, 0, 0)
  assert.equal(hex(b.subarray(0, 21)), '0000000000000007' + '0000003a' + '00000000' + '02' + '6d0428ed')
  assert.equal(hex(b.subarray(21)), hex(GOLDEN_PRODUCED.subarray(21)))
  assert.ok(isCrcValid(b, 0, crc32c))
})

test('golden COMMIT marker (transactions.md §8.2) parses and its CRC is valid', () => {
  const marker = fromHex(`
    000000000000002a 00000042 00000000 02 3ab8ddac
    0030 00000000 0000018bcfe56800 0000018bcfe56800
    00000000000003e8 0005 ffffffff 00000001
    20 00 00 00 08 00000001 0c 000000000000 00`)
  assert.equal(marker.byteLength, 78)
  assert.ok(isCrcValid(marker, 0, crc32c))
  const h = readBatchHeader(marker)
  assert.equal(h.baseOffset, 42)
  assert.equal(h.attributes, 0x30)
  const [r] = decodeRecords(marker.subarray(61), 1)
  assert.equal(hex(r.key!), '00000001')
  assert.equal(hex(r.value!), '000000000000')
})

test('framing: partial trailing bytes are not a batch; a tiny length or bad magic is corrupt', () => {
  const two = new Uint8Array([...GOLDEN_PRODUCED, ...GOLDEN_PRODUCED.subarray(0, 30)])
  assert.deepEqual(splitBatches(two), { positions: [0], end: 70 })
  const tiny = GOLDEN_PRODUCED.slice()
  new DataView(tiny.buffer).setInt32(8, 13)
  assert.throws(
    () => nextBatchEnd(tiny, 0),
    (e: unknown) => e instanceof BatchFormatError && e.kind === 'corrupt',
  )
  const magic = GOLDEN_PRODUCED.slice()
  magic[16] = 7
  assert.throws(() => nextBatchEnd(magic, 0), BatchFormatError)
  assert.equal(nextBatchEnd(GOLDEN_PRODUCED.subarray(0, 11), 0), 'partial')
})

test('records: a record whose declared length does not match its fields is INVALID_RECORD', () => {
  const body = encodeRecords([{ timestampDelta: 0, offsetDelta: 0, key: null, value: enc.encode('v') }])
  const bad = body.slice()
  bad[0] = 0x20 // declares 16 bytes, holds fewer
  assert.throws(
    () => decodeRecords(bad, 1),
    (e: unknown) => e instanceof BatchFormatError && e.kind === 'invalid',
  )
  assert.throws(() => decodeRecords(body, 2), BatchFormatError)
  const two = encodeRecords([
    { timestampDelta: 0, offsetDelta: 0, key: null, value: null },
    { timestampDelta: 0, offsetDelta: 1, key: null, value: null },
  ])
  assert.throws(() => decodeRecords(two, 1), BatchFormatError)
})

test('records: a negative header key size is rejected', () => {
  const sink = new ByteSink()
  // length, attributes, ts delta, offset delta, key -1, value -1, 1 header, key length -1
  const inner = new ByteSink()
  inner.writeByte(0)
  inner.writeVarlong(0)
  inner.writeVarint(0)
  inner.writeVarint(-1)
  inner.writeVarint(-1)
  inner.writeVarint(1)
  inner.writeVarint(-1)
  inner.writeVarint(-1)
  sink.writeVarint(inner.length)
  sink.writeBytes(inner.view())
  assert.throws(() => decodeRecords(sink.finish(), 1), /Invalid negative header key size -1/)
})

test('varints and varlongs round trip (property)', () => {
  fc.assert(
    fc.property(fc.integer({ min: -2147483648, max: 2147483647 }), fc.maxSafeInteger(), (i, l) => {
      const s = new ByteSink()
      s.writeVarint(i)
      s.writeVarlong(l)
      s.writeVarlong(0 - l)
      const r = new VarReader(s.finish())
      assert.equal(r.readVarint(), i)
      assert.equal(r.readVarlong(), l)
      assert.equal(r.readVarlong(), l === 0 ? 0 : -l)
    }),
  )
})

test('varlongs: the bytes of the zig-zag encoding over 64 bits, and their size (property)', () => {
  // The reference: Kafka's ByteUtils.writeVarlong, on BigInts.
  const reference = (value: number): number[] => {
    const big = BigInt(value)
    let v = BigInt.asUintN(64, (big << 1n) ^ (big >> 63n))
    const out: number[] = []
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80)
      v >>= 7n
    }
    out.push(Number(v))
    return out
  }
  const values = fc.oneof(fc.integer({ min: -2147483648, max: 2147483647 }), fc.maxSafeInteger())
  fc.assert(
    fc.property(values, (v) => {
      const s = new ByteSink()
      s.writeVarlong(v)
      assert.deepEqual([...s.finish()], reference(v))
      assert.equal(sizeOfVarlong(v), reference(v).length)
    }),
  )
  for (const v of [2147483647, -2147483648, 2147483648, -2147483649]) {
    const s = new ByteSink()
    s.writeVarlong(v)
    assert.deepEqual([...s.finish()], reference(v))
  }
})

test('varlongs read exactly on both sides of the 7-byte boundary, and cut short throw', () => {
  // 7 bytes carry 49 bits of the zig-zag value: ±2^48 is where the encoding takes an 8th byte.
  const edges = [0, 1, -1, 63, -64, 64, 2 ** 47, -(2 ** 47), 2 ** 48 - 1, -(2 ** 48), 2 ** 48, -(2 ** 48) - 1]
  for (const v of [...edges, 2 ** 52, -(2 ** 53) + 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
    const s = new ByteSink()
    s.writeVarlong(v)
    const bytes = s.finish()
    const r = new VarReader(bytes)
    assert.equal(r.readVarlong(), v)
    assert.equal(r.pos, bytes.byteLength)
    assert.throws(() => new VarReader(bytes, 0, bytes.byteLength - 1).readVarlong(), BatchFormatError)
  }
})

test('records round trip with headers, null keys and values (property)', () => {
  const rec = fc.record({
    timestampDelta: fc.integer({ min: -1e12, max: 1e12 }),
    key: fc.option(fc.uint8Array({ maxLength: 20 })),
    value: fc.option(fc.uint8Array({ maxLength: 50 })),
    headers: fc.array(
      fc.record({ key: fc.string({ maxLength: 8 }), value: fc.option(fc.uint8Array({ maxLength: 8 })) }),
      {
        maxLength: 3,
      },
    ),
  })
  fc.assert(
    fc.property(fc.array(rec, { minLength: 1, maxLength: 10 }), (rs) => {
      const input = rs.map((r, i) => ({ ...r, offsetDelta: i }))
      const out = decodeRecords(encodeRecords(input), input.length)
      assert.deepEqual(
        out.map((r) => ({
          timestampDelta: r.timestampDelta,
          offsetDelta: r.offsetDelta,
          key: r.key === null ? null : [...r.key],
          value: r.value === null ? null : [...r.value],
          headers: r.headers.map((h) => ({ key: h.key, value: h.value === null ? null : [...h.value] })),
        })),
        input.map((r) => ({
          timestampDelta: r.timestampDelta,
          offsetDelta: r.offsetDelta,
          key: r.key === null ? null : [...r.key],
          value: r.value === null ? null : [...r.value],
          headers: r.headers.map((h) => ({ key: h.key, value: h.value === null ? null : [...h.value] })),
        })),
      )
    }),
  )
})

test('sequence arithmetic wraps past 2147483647 to 0 (§5.6)', () => {
  assert.equal(incrementSequence(2147483647, 1), 0)
  assert.equal(incrementSequence(2147483646, 3), 1)
  assert.equal(incrementSequence(5, 3), 8)
})
