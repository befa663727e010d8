import type { CoordinatorRecord, LatestOnly } from './types.js'
import { fmix32 } from '../runtime/hash.js'

/**
 * Where a shard's records lie, as a store finds them before it makes any object for them: record
 * `i`'s key is `keyLength[i]` bytes from `keyStart[i]` in `blobs[blob[i]]`, its value
 * `valueLength[i]` bytes from `valueStart[i]` in the same blob (−1: a tombstone). Made for
 * `capacity` records (a store that knows how many it will add says so), grows by doubling past
 * them; nothing is allocated per record.
 */
export class RecordPositions {
  readonly blobs: Uint8Array[] = []
  count = 0
  blob: Int32Array
  keyStart: Int32Array
  keyLength: Int32Array
  valueStart: Int32Array
  valueLength: Int32Array

  constructor(capacity = 256) {
    const n = Math.max(1, capacity)
    this.blob = new Int32Array(n)
    this.keyStart = new Int32Array(n)
    this.keyLength = new Int32Array(n)
    this.valueStart = new Int32Array(n)
    this.valueLength = new Int32Array(n)
  }

  add(blob: number, keyStart: number, keyLength: number, valueStart: number, valueLength: number): void {
    const i = this.count
    if (i === this.blob.length) this.#grow()
    this.blob[i] = blob
    this.keyStart[i] = keyStart
    this.keyLength[i] = keyLength
    this.valueStart[i] = valueStart
    this.valueLength[i] = valueLength
    this.count = i + 1
  }

  /** Record `i` as an object, its key and value views into its blob. */
  record(i: number): CoordinatorRecord {
    const bytes = this.blobs[this.blob[i]]
    const k = this.keyStart[i]
    const v = this.valueStart[i]
    const n = this.valueLength[i]
    return { key: bytes.subarray(k, k + this.keyLength[i]), value: n < 0 ? null : bytes.subarray(v, v + n) }
  }

  #grow(): void {
    const twice = (a: Int32Array) => {
      const b = new Int32Array(a.length * 2)
      b.set(a)
      return b
    }
    this.blob = twice(this.blob)
    this.keyStart = twice(this.keyStart)
    this.keyLength = twice(this.keyLength)
    this.valueStart = twice(this.valueStart)
    this.valueLength = twice(this.valueLength)
  }
}

/**
 * A hash of `length` bytes from `start` (murmur3's 32-bit steps, four bytes a step, then its final
 * mix); keys that share one are told apart by their bytes.
 */
function hashKey(bytes: Uint8Array, start: number, length: number): number {
  let h = length
  const end = start + length
  let i = start
  for (; i + 4 <= end; i += 4) {
    let k = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24)
    k = Math.imul(k, 0xcc9e2d51)
    k = (k << 15) | (k >>> 17)
    h ^= Math.imul(k, 0x1b873593)
    h = (h << 13) | (h >>> 19)
    h = (Math.imul(h, 5) + 0xe6546b64) | 0
  }
  if (i < end) {
    let k = 0
    for (let s = 0; i < end; i++, s += 8) k |= bytes[i] << s
    k = Math.imul(k, 0xcc9e2d51)
    k = (k << 15) | (k >>> 17)
    h ^= Math.imul(k, 0x1b873593)
  }
  return fmix32(h)
}

/**
 * Which of the records at `p` a load returns under `latestOnly` (1) and which it leaves out (0):
 * every record of a key `latestOnly` does not accept; of the others per key only the latest
 * record, none of a key whose latest record is a tombstone.
 *
 * One pass from the end: the first record of a key met there is its latest. Keys are found in an
 * open-addressing table of record numbers by a hash of their bytes and compared byte by byte where
 * they lie, so a record costs a short loop over its key and no allocation; the table grows with the
 * distinct keys, not with the records.
 */
export function latestMask(p: RecordPositions, latestOnly: LatestOnly): Uint8Array {
  const n = p.count
  const keep = new Uint8Array(n)
  const { blobs, blob, keyStart, keyLength, valueLength } = p
  let mask = 63
  let slots = new Int32Array(mask + 1).fill(-1)
  let hashes = new Int32Array(mask + 1)
  let keys = 0
  for (let i = n - 1; i >= 0; i--) {
    const bytes = blobs[blob[i]]
    const start = keyStart[i]
    const length = keyLength[i]
    if (!latestOnly(bytes, start, length)) {
      keep[i] = 1
      continue
    }
    const h = hashKey(bytes, start, length)
    let slot = h & mask
    let seen = false
    for (let j = slots[slot]; j !== -1; j = slots[slot]) {
      if (hashes[slot] === h && keyLength[j] === length) {
        const other = blobs[blob[j]]
        const o = keyStart[j]
        let same = true
        for (let b = 0; b < length; b++) {
          if (other[o + b] !== bytes[start + b]) {
            same = false
            break
          }
        }
        if (same) {
          seen = true
          break
        }
      }
      slot = (slot + 1) & mask
    }
    if (seen) continue
    if (valueLength[i] >= 0) keep[i] = 1
    slots[slot] = i
    hashes[slot] = h
    if (++keys * 2 > mask) {
      // Half full: twice the size, every key moved to its slot in the new table.
      const oldSlots = slots
      const oldHashes = hashes
      mask = mask * 2 + 1
      slots = new Int32Array(mask + 1).fill(-1)
      hashes = new Int32Array(mask + 1)
      for (let s = 0; s < oldSlots.length; s++) {
        if (oldSlots[s] === -1) continue
        let t = oldHashes[s] & mask
        while (slots[t] !== -1) t = (t + 1) & mask
        slots[t] = oldSlots[s]
        hashes[t] = oldHashes[s]
      }
    }
  }
  return keep
}

/**
 * The records of `records` a load returns under `latestOnly` (see {@link latestMask}), in order:
 * for a store whose records are objects already (the PostgreSQL engine's rows).
 */
export function latestOf(records: readonly CoordinatorRecord[], latestOnly: LatestOnly): CoordinatorRecord[] {
  const p = new RecordPositions(records.length)
  for (let i = 0; i < records.length; i++) {
    const r = records[i]
    p.blobs.push(r.key)
    p.add(i, 0, r.key.length, 0, r.value === null ? -1 : r.value.length)
  }
  const keep = latestMask(p, latestOnly)
  const out: CoordinatorRecord[] = []
  for (let i = 0; i < records.length; i++) if (keep[i] === 1) out.push(records[i])
  return out
}
