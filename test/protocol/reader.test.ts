// The Reader's fast paths (ASCII strings cut from a shared latin1 window, long bytes fields copied
// into a shared block, views reused across Readers over the same buffer) must give exactly what the
// plain UTF-8 / copy semantics give, wherever a value sits in the input.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { Reader } from '../../src/protocol/reader.js'
import { Writer } from '../../src/protocol/writer.js'

function encodeStrings(values: readonly string[], compact: boolean, pad: number): Buffer {
  const w = new Writer()
  for (let i = 0; i < pad; i++) w.writeInt8(0x7f)
  for (const v of values) compact ? w.writeCompactString(v) : w.writeString(v)
  return Buffer.from(w.finish())
}

describe('Reader fast paths', () => {
  it('decodes strings of any content and length at any offset, across window boundaries', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ maxLength: 80 }),
            fc.string({ unit: 'grapheme', maxLength: 40 }),
            fc.string({ minLength: 1900, maxLength: 2300 }),
          ),
          { maxLength: 12 },
        ),
        fc.boolean(),
        fc.nat(3000),
        (values, compact, pad) => {
          const bytes = encodeStrings(values, compact, pad)
          const r = new Reader(bytes, pad)
          for (const v of values) assert.equal(compact ? r.readCompactString() : r.readString(), v)
          assert.equal(r.offset, bytes.byteLength)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('counts the longest string read since the last reset, in its encoded bytes', () => {
    // The router walks a request for a string too long for a response only when this is large.
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'grapheme', maxLength: 30 })), {
          maxLength: 8,
        }),
        fc.boolean(),
        (values, compact) => {
          const r = new Reader(encodeStrings(['x'.repeat(500)], compact, 0))
          compact ? r.readCompactString() : r.readString()
          assert.equal(r.longestString, 500)
          r.reset(encodeStrings(values, compact, 0))
          assert.equal(r.longestString, 0)
          for (const _ of values) compact ? r.readCompactString() : r.readString()
          assert.equal(r.longestString, Math.max(0, ...values.map((v) => Buffer.byteLength(v, 'utf8'))))
        },
      ),
      { numRuns: 200 },
    )
  })

  it('decodes the same strings from a sub-view that does not start at the buffer start', () => {
    const values = ['a'.repeat(2100), 'é', 'x'.repeat(13), 'grüße', 'z']
    const inner = encodeStrings(values, true, 0)
    const outer = Buffer.concat([Buffer.alloc(777, 1), inner, Buffer.alloc(5, 2)])
    const view = outer.subarray(777, 777 + inner.byteLength)
    const r = new Reader(view)
    for (const v of values) assert.equal(r.readCompactString(), v)
  })

  it('copies bytes fields of every size: they never change when the input is overwritten', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 600 }), { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        (fields, compact) => {
          const w = new Writer()
          for (const f of fields) compact ? w.writeCompactBytes(f) : w.writeBytes(f)
          const input = Buffer.from(w.finish())
          const r = new Reader(input)
          const got = fields.map(() => (compact ? r.readCompactBytes() : r.readBytes()))
          input.fill(0xee)
          // A second message decoded from another buffer must not disturb the first one's bytes.
          const w2 = new Writer()
          for (const f of fields) w2.writeCompactBytes(new Uint8Array(f.length).fill(0x11))
          const r2 = new Reader(Buffer.from(w2.finish()))
          for (let i = 0; i < fields.length; i++) r2.readCompactBytes()
          for (let i = 0; i < fields.length; i++)
            assert.deepEqual(Buffer.from(got[i]), Buffer.from(fields[i]))
        },
      ),
      { numRuns: 200 },
    )
  })

  it('reads correctly when Readers over the same buffer and over other buffers alternate', () => {
    const a = encodeStrings(['alpha-'.repeat(10), 'β'], true, 0)
    const b = encodeStrings(['bravo-'.repeat(10), 'γ'], true, 0)
    for (let i = 0; i < 5; i++) {
      const ra = new Reader(a)
      const rb = new Reader(b)
      assert.equal(rb.readCompactString(), 'bravo-'.repeat(10))
      assert.equal(ra.readCompactString(), 'alpha-'.repeat(10))
      assert.equal(ra.readCompactString(), 'β')
      assert.equal(rb.readCompactString(), 'γ')
    }
  })
})
