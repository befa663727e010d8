import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Writer } from '../../src/protocol/writer.js'

/** The bytes a Writer should produce for `n` int32s starting at `from`, with an int16 and an int64 each. */
function expected(from: number, n: number): Buffer {
  const out = Buffer.alloc(n * 14)
  for (let i = 0; i < n; i++) {
    out.writeInt32BE(from + i, i * 14)
    out.writeInt16BE((from + i) & 0x7fff, i * 14 + 4)
    out.writeBigInt64BE(BigInt(from + i) * 1_000_003n, i * 14 + 6)
  }
  return out
}

function write(w: Writer, from: number, n: number): void {
  for (let i = 0; i < n; i++) {
    w.writeInt32(from + i)
    w.writeInt16((from + i) & 0x7fff)
    w.writeInt64(BigInt(from + i) * 1_000_003n)
  }
}

test('writers sharing the allocation pool, growing into buffers of their own (small and above the view cache), interleaved, write their own bytes', () => {
  const writers = Array.from({ length: 8 }, () => new Writer(64))
  const counts = [1, 3, 10, 100, 1_000, 20_000, 100_000, 2]
  // Interleave: every writer writes a little in turn, so the shared view is used across writers,
  // replaced when one grows, and used again by the ones still in the pool.
  const done = counts.map(() => 0)
  let left = true
  while (left) {
    left = false
    for (let k = 0; k < writers.length; k++) {
      const step = Math.min(counts[k] - done[k], 97)
      if (step <= 0) continue
      write(writers[k], k * 1_000_000 + done[k], step)
      done[k] += step
      left = true
    }
  }
  for (let k = 0; k < writers.length; k++) {
    assert.deepEqual(writers[k].finish(), expected(k * 1_000_000, counts[k]), `writer ${k}`)
  }
  // A reserved int32 is patched at its place in the writer's own bytes.
  const w = new Writer(16)
  const at = w.reserveInt32()
  write(w, 7, 3)
  w.patchInt32(at, 42)
  assert.equal(w.finish().readInt32BE(0), 42)
  assert.deepEqual(w.finish().subarray(4), expected(7, 3))
})
