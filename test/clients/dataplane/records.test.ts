// The client side of record batches: Kafka's murmur2 partitioning, and a batch written by the
// client read back through the same path as fetched bytes (every codec, offsets from a position,
// a truncated trailing batch ignored, control batches skipped).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { murmur2, partitionForKey } from '../../../src/clients/dataplane/partitioner.js'
import { decodeFetchedRecords, encodeBatch } from '../../../src/clients/dataplane/records.js'
import { CODEC_NAMES, readBatchHeader, setBaseOffset } from '../../../src/log/batch.js'

const enc = new TextEncoder()
const dec = new TextDecoder()

describe('murmur2 partitioning', () => {
  it("gives Kafka's values (UtilsTest.testMurmur2)", () => {
    const cases: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ]
    for (const [s, h] of cases) assert.equal(murmur2(enc.encode(s)), h, s)
  })
  it('maps a key to toPositive(murmur2) % partitions', () => {
    assert.equal(partitionForKey(enc.encode('foobar'), 7), (-790332482 & 0x7fffffff) % 7)
    for (let i = 0; i < 200; i++) {
      const p = partitionForKey(enc.encode(`key-${i}`), 3)
      assert.ok(p >= 0 && p < 3)
    }
  })
})

describe('client record batches', () => {
  for (const codec of CODEC_NAMES) {
    it(`round-trips keys, values, headers and timestamps (${codec})`, () => {
      const records = Array.from({ length: 5 }, (_, i) => ({
        key: i === 2 ? null : enc.encode(`k${i}`),
        value: i === 3 ? null : enc.encode(`value ${i} ${'x'.repeat(i * 50)}`),
        headers: [{ key: 'h', value: i === 1 ? null : enc.encode(`v${i}`) }],
        timestamp: 1_700_000_000_000 + i * 10,
      }))
      const batch = encodeBatch(records, codec)
      const h = readBatchHeader(batch)
      assert.equal(h.attributes & 7, ['none', 'gzip', 'snappy', 'lz4', 'zstd'].indexOf(codec))
      assert.equal(h.lastOffsetDelta, 4)
      assert.equal(h.maxTimestamp, 1_700_000_000_040)
      // as a broker stores it: at base offset 10, followed by the first bytes of another batch
      setBaseOffset(batch, 0, 10)
      const bytes = new Uint8Array(batch.byteLength + 20)
      bytes.set(batch)
      bytes.set(batch.subarray(0, 20), batch.byteLength)
      const { records: got, nextOffset } = decodeFetchedRecords(bytes, 12)
      assert.equal(nextOffset, 15)
      assert.deepEqual(
        got.map((r) => [
          r.offset,
          r.timestamp,
          r.key === null ? null : dec.decode(r.key),
          r.value === null ? null : dec.decode(r.value),
          r.headers.map((x) => [x.key, x.value === null ? null : dec.decode(x.value)]),
        ]),
        records
          .slice(2)
          .map((r, n) => [
            12 + n,
            r.timestamp,
            r.key === null ? null : dec.decode(r.key),
            r.value === null ? null : dec.decode(r.value),
            r.headers.map((x) => [x.key, x.value === null ? null : dec.decode(x.value)]),
          ]),
      )
    })
  }
  it('gives nothing and keeps the position for empty or partial bytes', () => {
    assert.deepEqual(decodeFetchedRecords(null, 7), { records: [], nextOffset: 7 })
    const batch = encodeBatch([{ key: null, value: enc.encode('v') }])
    assert.deepEqual(decodeFetchedRecords(batch.subarray(0, 30), 7), { records: [], nextOffset: 7 })
  })
})
