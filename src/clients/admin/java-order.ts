/**
 * The iteration order of Java's `HashMap`/`HashSet`, for output that Kafka's tools print by
 * iterating one (the offsets tables of kafka-streams-groups, the partitions named in an admin
 * error). Kafka's order is deterministic across runs except among keys that share a bucket, whose
 * order follows insertion; callers give the keys in the insertion order they want for those.
 *
 * The model: a map filled by `put` from the default capacity 16 (load factor 0.75, so the table
 * doubles when the size passes three quarters of it, and also when a bucket would hold a ninth key
 * while the table is below 64, instead of becoming a tree); iteration walks the buckets in index
 * order, a bucket's keys in insertion order. Buckets that do become trees (nine colliding keys in a
 * table of 64 or more) are not modelled.
 */

/** Java's `String.hashCode()` (UTF-16 code units, 32-bit overflow). */
export function javaStringHash(s: string): number {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0
  return h
}

/** Kafka's `TopicPartition.hashCode()`: 31·(31 + partition) + topic.hashCode(). */
export function topicPartitionHash(topic: string, partition: number): number {
  return (Math.imul(31, (31 + partition) | 0) + javaStringHash(topic)) | 0
}

/** HashMap's bucket index of a key hash in a table of `capacity` buckets. */
function bucket(hash: number, capacity: number): number {
  return (hash ^ (hash >>> 16)) & (capacity - 1)
}

const TREEIFY_THRESHOLD = 8
const MIN_TREEIFY_CAPACITY = 64

/** HashMap's `tableSizeFor`: the smallest power of two at least `n` (1 for 0). */
function tableSizeFor(n: number): number {
  let c = 1
  while (c < n) c *= 2
  return c
}

/** The table size a HashMap reaches after `put`ting these hashes one by one. */
function finalCapacity(hashes: readonly number[], initialCapacity: number | undefined): number {
  let capacity = initialCapacity === undefined ? 16 : tableSizeFor(initialCapacity)
  let counts = new Map<number, number>()
  const rebuild = (size: number): void => {
    counts = new Map()
    for (let i = 0; i < size; i++) {
      const b = bucket(hashes[i]!, capacity)
      counts.set(b, (counts.get(b) ?? 0) + 1)
    }
  }
  for (let i = 0; i < hashes.length; i++) {
    const b = bucket(hashes[i]!, capacity)
    const inBucket = (counts.get(b) ?? 0) + 1
    counts.set(b, inBucket)
    if (inBucket > TREEIFY_THRESHOLD && capacity < MIN_TREEIFY_CAPACITY) {
      capacity *= 2
      rebuild(i + 1)
    }
    if (i + 1 > capacity * 0.75) {
      capacity *= 2
      rebuild(i + 1)
    }
  }
  return capacity
}

/**
 * `items` (distinct keys, in insertion order) in the order a HashMap filled with them iterates;
 * `initialCapacity` for a map made with `new HashMap<>(n)`.
 */
export function javaHashOrder<T>(
  items: readonly T[],
  hash: (item: T) => number,
  initialCapacity?: number,
): T[] {
  const hashes = items.map(hash)
  const capacity = finalCapacity(hashes, initialCapacity)
  return items
    .map((item, i) => ({ item, b: bucket(hashes[i]!, capacity), i }))
    .sort((x, y) => x.b - y.b || x.i - y.i)
    .map((x) => x.item)
}
