/**
 * Kafka's default partitioning of keyed records: murmur2 of the key bytes, made positive, modulo
 * the partition count (`Utils.murmur2`, `Utils.toPositive`, `BuiltInPartitioner.partitionForKey`), so
 * that a key lands on the partition Kafka's Java producer and Kafka Streams would pick.
 */

/** Kafka's murmur2 (seed 0x9747b28c) of `data`, as a signed 32-bit integer. */
export function murmur2(data: Uint8Array): number {
  const length = data.byteLength
  const m = 0x5bd1e995
  const r = 24
  let h = 0x9747b28c ^ length
  const length4 = length >>> 2
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24)
    k = Math.imul(k, m)
    k ^= k >>> r
    k = Math.imul(k, m)
    h = Math.imul(h, m)
    h ^= k
  }
  const rest = length & 3
  const tail = length & ~3
  if (rest === 3) h ^= data[tail + 2]! << 16
  if (rest >= 2) h ^= data[tail + 1]! << 8
  if (rest >= 1) {
    h ^= data[tail]!
    h = Math.imul(h, m)
  }
  h ^= h >>> 13
  h = Math.imul(h, m)
  h ^= h >>> 15
  return h | 0
}

/** The partition Kafka's producer picks for a keyed record. */
export function partitionForKey(key: Uint8Array, numPartitions: number): number {
  return (murmur2(key) & 0x7fffffff) % numPartitions
}
