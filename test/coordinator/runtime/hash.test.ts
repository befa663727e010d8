import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { shardFor } from '../../../src/coordinator/runtime/hash.js'
import { javaStringHash } from '../../../src/java-order.js'

// Expected values printed by Java 17: s.hashCode(), then Utils.abs(h) % 50 and % 7 as Kafka computes.
const vectors: [string, number, number, number][] = [
  ['', 0, 0, 0],
  ['a', 97, 47, 6],
  ['hello', 99162322, 22, 0],
  ['polygenelubricants', -2147483648, 0, 0],
  ['my-streams-app', -1550722138, 38, 0],
  ['group-1', 293427299, 49, 4],
  ['Ünïcödé-grøup', 1187607504, 4, 6],
  ['emoji-\u{1F600}', 1164511306, 6, 0],
  ['connect-cluster', 1440343063, 13, 5],
  ['console-consumer-12345', 158455506, 6, 6],
]

test('javaStringHash matches Java String.hashCode (UTF-16 units, int overflow)', () => {
  for (const [s, h] of vectors) assert.equal(javaStringHash(s), h, s)
})

test('shardFor matches Kafka: Utils.abs(hashCode) % n, with Integer.MIN_VALUE mapping to 0', () => {
  for (const [s, , mod50, mod7] of vectors) {
    assert.equal(shardFor(s, 50), mod50, s)
    assert.equal(shardFor(s, 7), mod7, s)
    assert.equal(shardFor(s, 1), 0)
  }
  // Math.abs alone would give -2147483648 % 50 = -48 here; Kafka's Utils.abs gives 0.
  assert.equal(shardFor('polygenelubricants', 50), 0)
})

test('shardFor is always a shard in [0, n)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), fc.integer({ min: 1, max: 0x7fffffff }), (s, n) => {
      const shard = shardFor(s, n)
      assert.ok(Number.isInteger(shard) && shard >= 0 && shard < n)
    }),
  )
})

test('shardFor rejects a bad number of shards or a non-string id', () => {
  for (const n of [0, -1, 1.5, Number.NaN, 2 ** 31]) {
    assert.throws(() => shardFor('g', n), RangeError)
  }
  assert.throws(() => shardFor(42 as unknown as string, 50), /the key must be a string/)
})
