// Codecs: every codec round trips; snappy reads both the xerial framing Java writes and a raw
// block; writes carry the xerial header; a bomb is bounded; garbage fails cleanly.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compressSync as rawSnappy } from 'snappy'
import { CompressionCodec } from '../../src/log/batch.js'
import { compress, DecompressionError, decompress } from '../../src/log/compression.js'

const text = new TextEncoder().encode('hello kafka '.repeat(10000))

for (const [name, codec] of Object.entries(CompressionCodec)) {
  test(`${name}: compress then decompress returns the input`, () => {
    const c = compress(codec, text)
    if (codec !== 0) assert.ok(c.byteLength < text.byteLength)
    assert.deepEqual(Buffer.from(decompress(codec, c, 1 << 24)), Buffer.from(text))
  })
}

test('snappy: written with the xerial header (magic, version 1, compatible 1), 32 KiB blocks', () => {
  const c = compress(CompressionCodec.snappy, text)
  assert.equal(Buffer.from(c.subarray(0, 16)).toString('hex'), '82534e41505059000000000100000001')
  // 120000 bytes → 4 blocks of at most 32768
  let pos = 16
  let blocks = 0
  const dv = new DataView(c.buffer, c.byteOffset, c.byteLength)
  while (pos < c.byteLength) {
    pos += 4 + dv.getInt32(pos)
    blocks++
  }
  assert.equal(blocks, 4)
})

test('snappy: a raw block without the xerial header is read too', () => {
  const raw = rawSnappy(Buffer.from(text))
  assert.deepEqual(Buffer.from(decompress(CompressionCodec.snappy, raw, 1 << 24)), Buffer.from(text))
})

test('decompression is bounded by maxBytes', () => {
  for (const codec of [1, 2, 3, 4]) {
    const c = compress(codec, text)
    assert.throws(() => decompress(codec, c, 1000), DecompressionError, `codec ${codec}`)
  }
})

test('garbage and truncated streams fail with DecompressionError', () => {
  for (const codec of [1, 2, 3, 4]) {
    const c = compress(codec, text)
    assert.throws(
      () => decompress(codec, c.subarray(0, c.byteLength >> 1), 1 << 24),
      DecompressionError,
      `codec ${codec}`,
    )
    assert.throws(
      () => decompress(codec, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), 1 << 24),
      DecompressionError,
    )
  }
})
