import { javaStringHash } from '../../java-order.js'

/**
 * The shard a key lives on (a group id on a `__consumer_offsets` partition, a transactional id on a
 * `__transaction_state` partition), computed as Kafka's coordinators do (`partitionFor`):
 * `Utils.abs(key.hashCode()) % numShards`. Kafka's `Utils.abs` maps Integer.MIN_VALUE to 0 (where
 * `Math.abs` would leave it negative), so a key hashing to −2^31 (for example
 * "polygenelubricants") lands on shard 0.
 */
export function shardFor(key: string, numShards: number): number {
  if (typeof key !== 'string') {
    throw new TypeError(`the key must be a string, got ${typeof key}`)
  }
  if (!Number.isInteger(numShards) || numShards < 1 || numShards > 0x7fffffff) {
    throw new RangeError(`the number of shards must be a positive 32-bit integer, got ${String(numShards)}`)
  }
  const h = javaStringHash(key)
  const abs = h === -0x80000000 ? 0 : Math.abs(h)
  return abs % numShards
}

/**
 * MurmurHash3's 32-bit finaliser (`fmix32`): every bit of the input moves every bit of the output,
 * so a hash built of steps that mix the low bits poorly (FNV-1a's) or a sum of mixed words can be
 * taken modulo a small number.
 */
export function fmix32(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}
