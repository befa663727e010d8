/**
 * Java's `String.hashCode()` and the iteration order of Java's `HashMap`/`HashSet`, for output
 * that Kafka's tools print by iterating one (the offsets tables of kafka-streams-groups, the
 * partitions named in an admin error), answers Kafka's broker builds in one (the SCRAM credential
 * results), and the coordinator shard a key lives on. Kafka's order is deterministic across runs
 * except among keys that share a bucket, whose order follows insertion; callers give the keys in
 * the insertion order they want for those.
 *
 * The model: a map filled by `put` from the default capacity 16 (load factor 0.75, so the table
 * doubles when the size passes three quarters of it, and also when a bucket would hold a ninth key
 * while the table is below 64, instead of becoming a tree); iteration walks the buckets in index
 * order, a bucket's keys in insertion order. Buckets that do become trees (nine colliding keys in a
 * table of 64 or more) are not modelled.
 */

/**
 * Java's `String.hashCode()`: s[0]·31^(n−1) + … + s[n−1] over the UTF-16 code units, in 32-bit
 * two's-complement arithmetic. JavaScript strings are UTF-16 too, so `charCodeAt` sees the same
 * units (a character outside the BMP counts as its two surrogates, as in Java).
 */
export function javaStringHash(s: string): number {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0
  return h
}

/** Kafka's `TopicPartition.hashCode()`: 31·(31 + partition) + topic.hashCode(). */
export function topicPartitionHash(topic: string, partition: number): number {
  return (Math.imul(31, (31 + partition) | 0) + javaStringHash(topic)) | 0
}

const TREEIFY_THRESHOLD = 8
const MIN_TREEIFY_CAPACITY = 64

/** HashMap's `tableSizeFor`: the smallest power of two at least `n` (1 for 0). */
function tableSizeFor(n: number): number {
  let c = 1
  while (c < n) c *= 2
  return c
}

/**
 * A map that iterates as a `java.util.HashMap` that saw the same `set` (Java's `put`) and `delete`
 * (`remove`) calls, for answers and output Kafka builds by iterating one. Keys are told apart as a
 * JavaScript `Map` tells them apart; `hash` is the key's Java `hashCode()`.
 */
export class JavaHashMap<K, V> {
  readonly #hash: (key: K) => number
  #capacity: number
  #seq = 0
  readonly #entries = new Map<K, { value: V; readonly spread: number; readonly seq: number }>()
  /** Keys per bucket of the current table. */
  #counts = new Map<number, number>()

  /** `initialCapacity` for a map made with `new HashMap<>(n)`. */
  constructor(hash: (key: K) => number, initialCapacity?: number) {
    this.#hash = hash
    this.#capacity = initialCapacity === undefined ? 16 : tableSizeFor(initialCapacity)
  }

  get size(): number {
    return this.#entries.size
  }

  has(key: K): boolean {
    return this.#entries.has(key)
  }

  get(key: K): V | undefined {
    return this.#entries.get(key)?.value
  }

  set(key: K, value: V): this {
    const entry = this.#entries.get(key)
    if (entry !== undefined) {
      entry.value = value
      return this
    }
    const h = this.#hash(key)
    const spread = h ^ (h >>> 16)
    this.#entries.set(key, { value, spread, seq: this.#seq++ })
    const bucket = spread & (this.#capacity - 1)
    const inBucket = (this.#counts.get(bucket) ?? 0) + 1
    this.#counts.set(bucket, inBucket)
    if (inBucket > TREEIFY_THRESHOLD && this.#capacity < MIN_TREEIFY_CAPACITY) this.#grow()
    if (this.#entries.size > this.#capacity * 0.75) this.#grow()
    return this
  }

  delete(key: K): boolean {
    const entry = this.#entries.get(key)
    if (entry === undefined) return false
    this.#entries.delete(key)
    const bucket = entry.spread & (this.#capacity - 1)
    this.#counts.set(bucket, (this.#counts.get(bucket) ?? 1) - 1)
    return true
  }

  /** The entries in Java's iteration order. */
  entries(): [K, V][] {
    const mask = this.#capacity - 1
    return [...this.#entries]
      .sort(([, a], [, b]) => (a.spread & mask) - (b.spread & mask) || a.seq - b.seq)
      .map(([k, e]) => [k, e.value])
  }

  keys(): K[] {
    return this.entries().map(([k]) => k)
  }

  values(): V[] {
    return this.entries().map(([, v]) => v)
  }

  /** Doubles the table; a bucket's keys keep their order, as Java's split keeps it. */
  #grow(): void {
    this.#capacity *= 2
    const mask = this.#capacity - 1
    this.#counts = new Map()
    for (const e of this.#entries.values()) {
      const bucket = e.spread & mask
      this.#counts.set(bucket, (this.#counts.get(bucket) ?? 0) + 1)
    }
  }
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
  const map = new JavaHashMap<T, T>(hash, initialCapacity)
  for (const item of items) map.set(item, item)
  return map.keys()
}
