import { fmix32 } from '../runtime/hash.js'
import { checkRecords, checkShard, injectedFailure, StorageError } from './errors.js'
import { latestMask, RecordPositions } from './latest.js'
import {
  type CoordinatorRecord,
  type FaultInjection,
  isLaidOut,
  type LoadOptions,
  type RecordStore,
  type ShardBatch,
} from './types.js'

/** Bytes of one chunk of a shard's log (a record larger than this gets a chunk of its own size). */
const CHUNK_BYTES = 1 << 20
/** Records of one chunk (a power of two: a position's chunk and slot are its bits). */
const CHUNK_RECORDS_BITS = 13
const CHUNK_RECORDS = 1 << CHUNK_RECORDS_BITS
/**
 * A shard's log is compacted on its own once it holds more superseded records than live ones, and
 * at least this many: the copy of the live records is then paid for by at least as many appends.
 * One chunk's worth: a shard with few live keys (a group's offsets) then spans at most about two
 * chunks, and each compaction empties about as many as the shard takes until the next one. With
 * 65,536 a shard of 6 live offsets held nine chunks; 16 such shards compacting at about the same
 * time emptied 128 chunks at once, more than the pool keeps, and took as many fresh ones again,
 * and with that fresh external memory V8 ran a full collection about every second (BENCHMARKS.md,
 * "OffsetCommit: the 16-group cell's full collections").
 */
const AUTO_COMPACT_MIN_SUPERSEDED = CHUNK_RECORDS
/**
 * Standard-size chunks a store keeps for reuse once compaction has dropped them. A fresh chunk's
 * memory is mapped by the operating system page by page as it is first written (a page fault per
 * 4 KiB, 1,024 for a chunk and its index), which on a virtual machine cost as much as writing the
 * records into it; a reused chunk is written without any.
 */
const POOLED_CHUNKS = 16

/**
 * A piece of a shard's log: the bytes of up to `CHUNK_RECORDS` records (key, then value) in one
 * buffer outside the JavaScript heap, and three int32s per record (where its key starts, the key's
 * length, the value's length or -1 for a tombstone). A full chunk is never copied again.
 */
class Chunk {
  readonly bytes: Buffer
  /** Bytes of `bytes` in use. */
  used = 0
  /** Records in the chunk. */
  count = 0
  readonly index = new Int32Array(3 * CHUNK_RECORDS)
  /** `bytes` four at a time, for hashing and comparing keys. */
  readonly view: DataView

  constructor(size: number) {
    this.bytes = Buffer.allocUnsafeSlow(size)
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength)
  }

  /** Empty again, for reuse (its bytes and index are overwritten as records are added). */
  reset(): this {
    this.used = 0
    this.count = 0
    return this
  }

  key(slot: number): Uint8Array {
    return copyOf(this.bytes, this.index[3 * slot], this.index[3 * slot + 1])
  }

  value(slot: number): Uint8Array | null {
    const start = this.index[3 * slot] + this.index[3 * slot + 1]
    const n = this.index[3 * slot + 2]
    return n < 0 ? null : copyOf(this.bytes, start, n)
  }

  /** The key's bytes as a string, for keys whose hash another key shares. */
  keyId(slot: number): string {
    const start = this.index[3 * slot]
    return this.bytes.toString('latin1', start, start + this.index[3 * slot + 1])
  }

  /** A hash of the key's bytes, as a small integer ({@link keyHash}). */
  keyHash(slot: number): number {
    return keyHash(this.view, this.bytes, this.index[3 * slot], this.index[3 * slot + 1])
  }

  /** Whether record `slot` has the same key as record `otherSlot` of `other`. */
  sameKey(slot: number, other: Chunk, otherSlot: number): boolean {
    const n = this.index[3 * slot + 1]
    if (other.index[3 * otherSlot + 1] !== n) return false
    const i0 = this.index[3 * slot]
    const j0 = other.index[3 * otherSlot]
    // Four bytes a compare, then the rest one by one.
    const a = this.view
    const b = other.view
    const words = n - (n & 3)
    let i = 0
    for (; i < words; i += 4) if (a.getInt32(i0 + i, true) !== b.getInt32(j0 + i, true)) return false
    const x = this.bytes
    const y = other.bytes
    for (; i < n; i++) if (x[i0 + i] !== y[j0 + i]) return false
    return true
  }
}

/**
 * A 30-bit hash of `n` bytes of `bytes` from `start` (`view` over the same memory): MurmurHash3's
 * mixing of each four-byte word, the last one to three bytes one by one, and its finalizer. Four
 * bytes a step instead of FNV-1a's one took the engine's append of a 20-record commit from about 5
 * to 3.5 µs (BENCHMARKS.md, "OffsetCommit: where a Streams-shaped commit's CPU goes"). Keys that
 * share a hash are still told apart by their bytes.
 */
export function keyHash(view: DataView, bytes: Uint8Array, start: number, n: number): number {
  const end = start + n
  const words = end - (n & 3)
  let h = n
  let i = start
  for (; i < words; i += 4) {
    let k = Math.imul(view.getInt32(i, true), 0xcc9e2d51)
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593)
    h ^= k
    h = (Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64) | 0
  }
  for (; i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193)
  return fmix32(h) & 0x3fffffff
}

/** In `LatestRecords`' table: several keys share this hash; they are in `byKey`. */
const COLLIDED = 0xffffffff
/** Entries of a new `LatestRecords` table (a power of two). */
const FIRST_TABLE_ENTRIES = 16
/** Numbers a `LatestRecords` table entry takes: the hash plus one, the position, the next entry. */
const ENTRY = 3

/**
 * The position (`chunk * CHUNK_RECORDS + slot`) of the latest record of every key of a log. Keys
 * are found by a hash of their bytes and compared byte by byte, so recording a record costs a short
 * loop and a probe of a table of integers; only keys whose hash another key shares are kept by their
 * bytes as a string (turning every key into a string and hashing that cost several times more per
 * record). The table is open-addressed in one typed array, three numbers an entry (the hash plus
 * one, 0 for a free entry; the position; and the entry of the key recorded right after this one the
 * last time, plus one): a record whose key is already there is one probe and one store, where a Map
 * took a lookup and then a second one to set the entry. Entries are never removed (compaction builds
 * a new one), and the table doubles once half of it is taken.
 *
 * A log's keys come back in the same order (a group commits the same partitions, one after another,
 * commit after commit), so each record first tries the entry that followed the previous record's
 * last time: when the key found there is its own, it needs no hash and no probe, only the compare
 * every found key takes anyway. Otherwise (a key that follows a different one this time) the hash
 * finds it as before, at the cost of one compare more.
 */
class LatestRecords {
  #table = new Uint32Array(ENTRY * FIRST_TABLE_ENTRIES)
  /** Entries of the table, less one. */
  #mask = FIRST_TABLE_ENTRIES - 1
  /** Taken entries of the table (distinct hashes). */
  #taken = 0
  /** The entry of the key recorded last, or -1 (none, or a key kept in `byKey`). */
  #last = -1
  readonly byKey = new Map<string, number>()
  /** Distinct keys. */
  size = 0

  /** Record `slot` of `chunks[c]` is its key's latest. */
  set(chunks: readonly Chunk[], c: number, slot: number): void {
    const chunk = chunks[c]
    const position = c * CHUNK_RECORDS + slot
    const table = this.#table
    const last = this.#last
    if (last >= 0) {
      const next = table[ENTRY * last + 2] - 1
      if (next >= 0) {
        const previous = table[ENTRY * next + 1]
        if (
          previous !== COLLIDED &&
          chunk.sameKey(slot, chunks[previous >>> CHUNK_RECORDS_BITS], previous & (CHUNK_RECORDS - 1))
        ) {
          table[ENTRY * next + 1] = position
          this.#last = next
          return
        }
      }
    }
    const h = chunk.keyHash(slot)
    const mask = this.#mask
    let e = h & mask
    for (;;) {
      const tag = table[ENTRY * e]
      if (tag === 0) break
      if (tag === h + 1) {
        const previous = table[ENTRY * e + 1]
        if (previous === COLLIDED) {
          const id = chunk.keyId(slot)
          if (!this.byKey.has(id)) this.size++
          this.byKey.set(id, position)
          this.#last = -1
          return
        }
        const pc = chunks[previous >>> CHUNK_RECORDS_BITS]
        const ps = previous & (CHUNK_RECORDS - 1)
        if (chunk.sameKey(slot, pc, ps)) {
          table[ENTRY * e + 1] = position
          this.#follows(last, e)
          return
        }
        // A second key with this hash: both are kept by their bytes from now on.
        table[ENTRY * e + 1] = COLLIDED
        this.byKey.set(pc.keyId(ps), previous)
        this.byKey.set(chunk.keyId(slot), position)
        this.size++
        this.#last = -1
        return
      }
      e = (e + 1) & mask
    }
    table[ENTRY * e] = h + 1
    table[ENTRY * e + 1] = position
    this.size++
    this.#follows(last, e)
    if (++this.#taken * 2 > mask + 1) this.#grow()
  }

  /** Entry `e`'s key was recorded right after entry `last`'s (-1: after none). */
  #follows(last: number, e: number): void {
    if (last >= 0) this.#table[ENTRY * last + 2] = e + 1
    this.#last = e
  }

  /** Every key's latest position, in no particular order. */
  positions(): number[] {
    const out: number[] = []
    const table = this.#table
    for (let e = 0; e < table.length; e += ENTRY)
      if (table[e] !== 0 && table[e + 1] !== COLLIDED) out.push(table[e + 1])
    for (const p of this.byKey.values()) out.push(p)
    return out
  }

  /** The table at twice its size, every entry placed again (the entries' order forgotten). */
  #grow(): void {
    const old = this.#table
    const table = new Uint32Array(2 * old.length)
    const mask = 2 * this.#mask + 1
    for (let i = 0; i < old.length; i += ENTRY) {
      const tag = old[i]
      if (tag === 0) continue
      let e = (tag - 1) & mask
      while (table[ENTRY * e] !== 0) e = (e + 1) & mask
      table[ENTRY * e] = tag
      table[ENTRY * e + 1] = old[i + 1]
    }
    this.#table = table
    this.#mask = mask
    this.#last = -1
  }
}

/**
 * One shard's log, in chunks: growing it allocates a new chunk and never copies the records already
 * stored (a log in one buffer that doubled when full copied all of it on the event loop, which took
 * hundreds of milliseconds once the log held a few hundred megabytes). Records live outside the
 * JavaScript heap; the heap holds a few objects per chunk and one entry per live key, not three per
 * record, which would sit among the groups' objects and slow down every lookup and every full GC.
 */
class ShardLog {
  readonly chunks: Chunk[] = []
  /** Records in the log. */
  length = 0
  /** The latest record of every key. */
  readonly latest = new LatestRecords()

  get superseded(): number {
    return this.length - this.latest.size
  }

  /**
   * The chunk to write `n` more bytes into: the last one if it has room, else a new one from `pool`
   * (not yet in `chunks`).
   */
  static tail(chunks: readonly Chunk[], n: number, pool: ChunkPool): Chunk {
    const last = chunks[chunks.length - 1]
    if (last !== undefined && last.count < CHUNK_RECORDS && last.used + n <= last.bytes.length) return last
    return pool.take(n)
  }

  /** Copies record `slot` of `from` to the end of this log (no failure can happen midway). */
  copy(from: Chunk, slot: number, pool: ChunkPool): void {
    const start = from.index[3 * slot]
    const keyLength = from.index[3 * slot + 1]
    const valueLength = from.index[3 * slot + 2]
    const n = keyLength + Math.max(0, valueLength)
    const chunk = ShardLog.tail(this.chunks, n, pool)
    if (chunk !== this.chunks[this.chunks.length - 1]) this.chunks.push(chunk)
    from.bytes.copy(chunk.bytes, chunk.used, start, start + n)
    const s = chunk.count
    chunk.index[3 * s] = chunk.used
    chunk.index[3 * s + 1] = keyLength
    chunk.index[3 * s + 2] = valueLength
    chunk.used += n
    chunk.count++
    this.latest.set(this.chunks, this.chunks.length - 1, s)
    this.length++
  }

  /**
   * A new log with the latest record of every key, in log order, minus the tombstones. This log's
   * chunks go back to `pool` afterwards: nothing refers to them once the new log replaces it
   * (records leave the store as copies).
   */
  compacted(pool: ChunkPool): ShardLog {
    const positions = this.latest.positions().sort((a, b) => a - b)
    const out = new ShardLog()
    for (const p of positions) {
      const chunk = this.chunks[Math.floor(p / CHUNK_RECORDS)]
      const slot = p % CHUNK_RECORDS
      if (chunk.index[3 * slot + 2] >= 0) out.copy(chunk, slot, pool)
    }
    for (const c of this.chunks) pool.give(c)
    return out
  }
}

/** Emptied standard-size chunks kept for reuse, at most {@link POOLED_CHUNKS}. */
class ChunkPool {
  readonly #free: Chunk[] = []

  /** A chunk with room for a record of `n` bytes: a kept one when `n` fits the standard size. */
  take(n: number): Chunk {
    if (n <= CHUNK_BYTES) {
      const kept = this.#free.pop()
      if (kept !== undefined) return kept.reset()
    }
    return new Chunk(Math.max(CHUNK_BYTES, n))
  }

  /** Keeps a chunk nothing refers to any more (a larger one is left to the GC). */
  give(chunk: Chunk): void {
    if (chunk.bytes.length === CHUNK_BYTES && this.#free.length < POOLED_CHUNKS) this.#free.push(chunk)
  }

  get size(): number {
    return this.#free.length
  }
}

/** A fresh Uint8Array with `n` bytes of `bytes` from `start`. */
function copyOf(bytes: Buffer, start: number, n: number): Uint8Array {
  const out = new Uint8Array(n)
  out.set(bytes.subarray(start, start + n))
  return out
}

/** What one shard's log holds (MemoryRecordStore.usage). */
export interface MemoryLogUsage {
  /** Records in the log, superseded ones included. */
  readonly records: number
  /** Keys whose latest record is in the log. */
  readonly liveKeys: number
  readonly chunks: number
  /** Bytes of the chunks' buffers. */
  readonly bytes: number
}

/**
 * Keeps every shard's log in process memory: nothing survives the process. For tests and for
 * `coordinator.storage=memory`. Records are copied in and out, so callers may reuse their buffers and
 * mutating a loaded record never changes the store, as with the SQLite engine.
 *
 * A shard's log compacts itself (as `compact` does) once more than half of it, and at least a
 * chunk's worth of records (8,192), are superseded: a steady commit load that rewrites the same
 * offsets keeps the log at most about twice its live size, or one chunk beyond it, instead of
 * growing without bound. The chunks a compaction empties are kept (up to {@link POOLED_CHUNKS})
 * for the next appends of any shard.
 *
 * The data belongs to the instance, not to `open()`: closing and opening the same instance again
 * finds the records still there.
 */
export class MemoryRecordStore implements RecordStore, FaultInjection {
  readonly #shards = new Map<number, ShardLog>()
  readonly #pool = new ChunkPool()
  #open = false
  #failNext: Error | undefined

  async open(): Promise<void> {
    this.#open = true
  }

  failNextAppend(error?: Error): void {
    this.#failNext = error ?? injectedFailure()
  }

  /** Chunks that compaction emptied and the next appends of any shard reuse. */
  get pooledChunks(): number {
    return this.#pool.size
  }

  /** What the shard's log holds now. */
  usage(shard: number): MemoryLogUsage {
    const log = this.#shards.get(shard)
    if (log === undefined) return { records: 0, liveKeys: 0, chunks: 0, bytes: 0 }
    return {
      records: log.length,
      liveKeys: log.latest.size,
      chunks: log.chunks.length,
      bytes: log.chunks.reduce((a, c) => a + c.bytes.length, 0),
    }
  }

  async append(shard: number, records: readonly CoordinatorRecord[]): Promise<void> {
    this.#checkOpen()
    checkShard(shard)
    checkRecords(records)
    this.#append(shard, records)
  }

  async appendBatches(batches: readonly ShardBatch[]): Promise<void> {
    this.#checkOpen()
    if (!Array.isArray(batches))
      throw new StorageError('STORAGE_INVALID_ARGUMENT', 'batches must be an array')
    for (const b of batches) {
      checkShard(b.shard)
      checkRecords(b.records)
    }
    // The injected failure fails the whole write, before any batch is visible.
    this.#maybeFail()
    for (const b of batches) this.#append(b.shard, b.records)
  }

  #append(shard: number, records: readonly CoordinatorRecord[]): void {
    let log = this.#shards.get(shard)
    if (log === undefined) {
      log = new ShardLog()
      this.#shards.set(shard, log)
    }
    // Staged after what is in use: in the last chunk beyond its `used` and `count`, and in new
    // chunks not yet in the log; nothing is visible until the counts move on below.
    const chunks = log.chunks
    const last: Chunk | undefined = chunks[chunks.length - 1]
    const fresh: Chunk[] = []
    let lastUsed = last?.used ?? 0
    let lastCount = last?.count ?? 0
    let chunk = last
    let used = lastUsed
    let count = lastCount
    const seal = () => {
      if (chunk === last) {
        lastUsed = used
        lastCount = count
      } else if (chunk !== undefined) {
        chunk.used = used
        chunk.count = count
      }
    }
    // Records that tell where their bytes lie and lie one after another in one buffer (the
    // encoder's slab) are copied as one run, with one call when the run ends, and their key and
    // value views are never made.
    let run: Uint8Array | undefined
    let runFrom = 0
    let runTo = 0
    let runAt = 0
    const copyRun = () => {
      if (run === undefined || chunk === undefined) return
      chunk.bytes.set(new Uint8Array(run.buffer, run.byteOffset + runFrom, runTo - runFrom), runAt)
      run = undefined
    }
    for (let i = 0; i < records.length; i++) {
      const r = records[i]
      const laid = isLaidOut(r)
      const keyLength = laid ? r.keyLength : r.key.byteLength
      const value = laid ? null : r.value
      const valueLength = laid ? r.valueLength : value === null ? -1 : value.byteLength
      const n = valueLength < 0 ? keyLength : keyLength + valueLength
      if (chunk === undefined || count === CHUNK_RECORDS || used + n > chunk.bytes.length) {
        copyRun()
        seal()
        chunk = this.#pool.take(n)
        fresh.push(chunk)
        used = 0
        count = 0
      }
      const index = chunk.index
      index[3 * count] = used
      index[3 * count + 1] = keyLength
      index[3 * count + 2] = valueLength
      if (laid) {
        if (r.bytes !== run || r.offset !== runTo) {
          copyRun()
          run = r.bytes
          runFrom = r.offset
          runAt = used
        }
        runTo = r.offset + n
      } else {
        copyRun()
        chunk.bytes.set(r.key, used)
        if (value !== null) chunk.bytes.set(value, used + keyLength)
      }
      used += n
      count++
      // The injected failure fires after part of the batch is staged, so a failure really happens
      // midway; nothing staged is visible because the log is only extended below.
      this.#maybeFail()
    }
    copyRun()
    // An empty batch still consumes the injected failure, as any other append would.
    this.#maybeFail()
    if (records.length === 0) return
    seal()
    // Visible from here on: the counts of the chunk that was last, then the new chunks.
    let c = last === undefined ? chunks.length : chunks.length - 1
    let slot = last === undefined ? 0 : last.count
    if (last !== undefined) {
      last.used = lastUsed
      last.count = lastCount
    }
    for (const f of fresh) chunks.push(f)
    log.length += records.length
    // The latest record of every key, for compaction.
    for (let i = 0; i < records.length; i++) {
      while (slot >= chunks[c].count) {
        c++
        slot = 0
      }
      log.latest.set(chunks, c, slot)
      slot++
    }
    if (log.superseded >= AUTO_COMPACT_MIN_SUPERSEDED && log.superseded > log.latest.size)
      this.#shards.set(shard, log.compacted(this.#pool))
  }

  async load(shard: number, options?: LoadOptions): Promise<CoordinatorRecord[]> {
    this.#checkOpen()
    checkShard(shard)
    const log = this.#shards.get(shard)
    if (log === undefined) return []
    const latestOnly = options?.latestOnly
    if (latestOnly !== undefined) {
      // Where the records lie in the chunks; copies only of the records returned.
      const p = new RecordPositions(log.length)
      for (const chunk of log.chunks) {
        p.blobs.push(chunk.bytes)
        for (let slot = 0; slot < chunk.count; slot++) {
          const start = chunk.index[3 * slot]
          const keyLength = chunk.index[3 * slot + 1]
          p.add(p.blobs.length - 1, start, keyLength, start + keyLength, chunk.index[3 * slot + 2])
        }
      }
      const keep = latestMask(p, latestOnly)
      const out: CoordinatorRecord[] = []
      let i = 0
      for (const chunk of log.chunks)
        for (let slot = 0; slot < chunk.count; slot++, i++)
          if (keep[i] === 1) out.push({ key: chunk.key(slot), value: chunk.value(slot) })
      return out
    }
    const out: CoordinatorRecord[] = new Array(log.length)
    let i = 0
    for (const chunk of log.chunks)
      for (let slot = 0; slot < chunk.count; slot++)
        out[i++] = { key: chunk.key(slot), value: chunk.value(slot) }
    return out
  }

  async compact(shard: number): Promise<void> {
    this.#checkOpen()
    checkShard(shard)
    const log = this.#shards.get(shard)
    if (log === undefined) return
    this.#shards.set(shard, log.compacted(this.#pool))
  }

  async close(): Promise<void> {
    this.#open = false
  }

  #maybeFail(): void {
    if (this.#failNext !== undefined) {
      const error = this.#failNext
      this.#failNext = undefined
      throw error
    }
  }

  #checkOpen(): void {
    if (!this.#open) throw new StorageError('STORAGE_NOT_OPEN', 'the memory record store is not open')
  }
}
