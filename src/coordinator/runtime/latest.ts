import type { CoordinatorRecord } from '../storage/types.js'

/** A hash of a key's bytes (FNV-1a, one byte a step, and a final mix); keys that share one are told apart by their bytes. */
function hashKey(key: Uint8Array): number {
  let h = 0x811c9dc5 ^ key.length
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i], 0x01000193)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  return h ^ (h >>> 13)
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * Which records of a shard's log a load replays: every record of a key `latestOnly` does not accept,
 * and of the others per key only the latest record, none of a key whose latest record is a
 * tombstone. For those keys that is the log as `RecordStore.compact` leaves it, in the same order,
 * which a store may hand `load` at any time (docs/storage.md, "Superseded records are not
 * replayed"). Returns 1 for a record to replay, 0 for one to skip.
 *
 * One pass from the end: the first record of a key met there is its latest. Keys are found in an
 * open-addressing table of record positions by a hash of their bytes and compared byte by byte,
 * so a record costs a short loop over its key and no allocation; the table grows with the distinct
 * keys, not with the records.
 */
export function latestRecords(
  records: readonly CoordinatorRecord[],
  latestOnly: (key: Uint8Array) => boolean,
): Uint8Array {
  const n = records.length
  const replay = new Uint8Array(n)
  let mask = 63
  let positions = new Int32Array(mask + 1).fill(-1)
  let hashes = new Int32Array(mask + 1)
  let keys = 0
  for (let i = n - 1; i >= 0; i--) {
    const key = records[i].key
    if (!latestOnly(key)) {
      replay[i] = 1
      continue
    }
    const h = hashKey(key)
    let slot = h & mask
    let seen = false
    for (let p = positions[slot]; p !== -1; p = positions[slot]) {
      if (hashes[slot] === h && sameBytes(records[p].key, key)) {
        seen = true
        break
      }
      slot = (slot + 1) & mask
    }
    if (seen) continue
    if (records[i].value !== null) replay[i] = 1
    positions[slot] = i
    hashes[slot] = h
    if (++keys * 2 > mask) {
      // Half full: twice the size, every key moved to its slot in the new table.
      const oldPositions = positions
      const oldHashes = hashes
      mask = mask * 2 + 1
      positions = new Int32Array(mask + 1).fill(-1)
      hashes = new Int32Array(mask + 1)
      for (let s = 0; s < oldPositions.length; s++) {
        if (oldPositions[s] === -1) continue
        let t = oldHashes[s] & mask
        while (positions[t] !== -1) t = (t + 1) & mask
        positions[t] = oldPositions[s]
        hashes[t] = oldHashes[s]
      }
    }
  }
  return replay
}
