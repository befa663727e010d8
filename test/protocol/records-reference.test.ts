// A Writer made with `referenceRecordsFrom` keeps large records fields as references (a Fetch
// answer's batches go to the socket as the log returned them): its chunks, written in order, must be
// the same bytes as the single-buffer encoding, for every message with a records field, every
// version, and inside uvarint-sized payloads (tagged fields) too.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  createFetchResponse,
  createFetchResponsePartitionData,
} from '../../src/protocol/generated/messages/FetchResponse.js'
import { apiDefinition } from '../../src/protocol/generated/registry.js'
import { Writer } from '../../src/protocol/writer.js'
import { encodeResponseChunks, encodeResponseFrame, REFERENCE_RECORDS_FROM } from '../../src/server/router.js'
import { fn, schemas, structArb, versionsOf } from './schema-arbitrary.js'

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40)

/** The chunks of a referencing writer, checked against `plain` (a copying writer's bytes). */
function assertSame(w: Writer, plain: Uint8Array): Buffer[] {
  const chunks = w.finishChunks()
  assert.equal(w.length, plain.byteLength, 'length counts the referred bytes')
  assert.deepEqual(Buffer.concat(chunks), Buffer.from(plain))
  assert.deepEqual(w.finish(), Buffer.from(plain), 'finish() copies them in')
  return chunks
}

describe('Writer: records fields referred to, not copied', () => {
  for (const s of schemas.filter((x) => x.name === 'FetchResponse' || x.name === 'ProduceRequest')) {
    for (const v of versionsOf(s)) {
      it(`${s.name} v${v}: the chunks are the bytes of the copying encoding`, () => {
        const write = fn(`write${s.name}`)
        fc.assert(
          fc.property(structArb(s, s.root, v, true), fc.integer({ min: 0, max: 8 }), (m, from) => {
            const plain = new Writer()
            write(plain, m, v)
            const w = new Writer(16, from)
            write(w, m, v)
            assertSame(w, plain.finish())
          }),
          { numRuns: RUNS },
        )
      })
    }
  }

  it('the referred bytes are the caller’s buffers; smaller fields and null are copied', () => {
    const big = Buffer.alloc(5000, 7)
    const small = Uint8Array.from([1, 2, 3])
    const plain = new Writer()
    const w = new Writer(16, 4096)
    for (const x of [plain, w]) {
      x.writeInt16(1)
      x.writeCompactNullableRecords(big)
      x.writeNullableRecords(small)
      x.writeCompactNullableRecords(null)
      x.writeRecords(big)
      x.writeCompactRecords(small)
      x.writeNullableRecords(null)
    }
    const chunks = assertSame(w, plain.finish())
    assert.equal(chunks.length, 5, 'own bytes, big, own bytes, big, own bytes: no empty chunk')
    assert.equal(chunks.filter((c) => c === big).length, 2, 'the very buffer, twice')
    assert.throws(() => w.writeRecords(null as unknown as Uint8Array), /null/)
  })

  it('references inside uvarint-sized payloads, nested, at the payload start and before it', () => {
    const a = Buffer.alloc(300, 1)
    const b = Buffer.alloc(200, 2)
    const c = Uint8Array.from({ length: 130 }, (_, i) => i)
    const script = (x: Writer) => {
      x.writeInt8(9)
      x.writeCompactNullableRecords(a) // before the payload, ends where it starts
      const outer = x.beginUVarintSized()
      x.writeCompactNullableRecords(b) // at the payload's start
      const inner = x.beginUVarintSized()
      x.writeInt32(42)
      x.writeNullableRecords(c)
      x.endUVarintSized(inner)
      x.writeNullableRecords(a)
      x.endUVarintSized(outer)
      const empty = x.beginUVarintSized()
      x.endUVarintSized(empty)
      x.writeInt8(8)
    }
    const plain = new Writer()
    script(plain)
    const w = new Writer(8, 1)
    script(w)
    const chunks = assertSame(w, plain.finish())
    assert.deepEqual(
      chunks.filter((x) => x === a || x === b || x.buffer === c.buffer).length,
      4,
      'every field referred to',
    )
  })
})

describe('encodeResponseChunks', () => {
  const def = apiDefinition(1)
  assert.ok(def !== undefined)
  const batches = Buffer.alloc(1 << 20, 5)
  const body = (records: Uint8Array) =>
    createFetchResponse({
      responses: [
        {
          topic: 't',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
          partitions: [0, 1].map((partitionIndex) =>
            createFetchResponsePartitionData({ partitionIndex, highWatermark: 9n, records }),
          ),
        },
      ],
    })

  for (const v of [4, 11, 12, 16, 18]) {
    it(`Fetch v${v}: the same frame as encodeResponseFrame, the 1 MiB records not copied`, () => {
      const m = body(batches)
      const single = encodeResponseFrame(def, v, 77, m)
      const [chunks, length] = encodeResponseChunks(def, v, 77, m)
      assert.ok(Array.isArray(chunks))
      assert.equal(length, single.byteLength)
      assert.deepEqual(Buffer.concat(chunks), single)
      assert.equal(chunks.filter((x) => x === batches).length, 2)
    })
  }

  it('an answer without large records fields is one buffer', () => {
    const m = body(Buffer.alloc(REFERENCE_RECORDS_FROM - 1, 3))
    const [bytes, length] = encodeResponseChunks(def, 12, 5, m)
    assert.ok(Buffer.isBuffer(bytes))
    assert.equal(length, bytes.byteLength)
    assert.deepEqual(bytes, encodeResponseFrame(def, 12, 5, m))
  })
})
