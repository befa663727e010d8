import { javaStringHashCode } from '../coordinator/runtime/hash.js'

/**
 * A map with the iteration order of a `java.util.HashMap<String, …>` that saw the same `set`
 * (Java's `put`) and `delete` (`remove`) calls, for answers Kafka builds by iterating one (the
 * results of AlterUserScramCredentials and DescribeUserScramCredentials).
 *
 * The model: a table of 16 buckets that doubles when a new key takes the size past three quarters
 * of it, and also when a bucket of a table below 64 buckets would hold a ninth key (Java grows the
 * table there instead of making the bucket a tree); a key's bucket is `(h ^ (h >>> 16)) & (n − 1)`
 * of its `String.hashCode()`; iteration walks the buckets in index order and each bucket in the order
 * its keys were first put (a growth keeps that order; a removal takes the key out). Buckets that do
 * become trees (nine keys in one bucket of a table of 64 or more) are not modelled.
 */
export class JavaStringHashMap<V> {
  #capacity = 16
  #seq = 0
  readonly #entries = new Map<string, { value: V; readonly hash: number; readonly seq: number }>()

  get size(): number {
    return this.#entries.size
  }

  has(key: string): boolean {
    return this.#entries.has(key)
  }

  get(key: string): V | undefined {
    return this.#entries.get(key)?.value
  }

  set(key: string, value: V): this {
    const entry = this.#entries.get(key)
    if (entry !== undefined) {
      entry.value = value
      return this
    }
    const h = javaStringHashCode(key)
    const hash = h ^ (h >>> 16)
    const bucket = hash & (this.#capacity - 1)
    let inBucket = 0
    for (const e of this.#entries.values()) if ((e.hash & (this.#capacity - 1)) === bucket) inBucket++
    this.#entries.set(key, { value, hash, seq: this.#seq++ })
    if (inBucket >= 8 && this.#capacity < 64) this.#capacity *= 2
    if (this.#entries.size > this.#capacity * 0.75) this.#capacity *= 2
    return this
  }

  delete(key: string): boolean {
    return this.#entries.delete(key)
  }

  /** The entries in Java's iteration order. */
  entries(): [string, V][] {
    const mask = this.#capacity - 1
    return [...this.#entries]
      .sort(([, a], [, b]) => (a.hash & mask) - (b.hash & mask) || a.seq - b.seq)
      .map(([k, e]) => [k, e.value])
  }

  keys(): string[] {
    return this.entries().map(([k]) => k)
  }

  values(): V[] {
    return this.entries().map(([, v]) => v)
  }
}
