import { checkRecords, checkShard, injectedFailure, StorageError } from './errors.js'
import type { CoordinatorRecord, FaultInjection, RecordStore, ShardBatch } from './types.js'

/** First size of a shard's byte buffer; it doubles as the log grows. */
const INITIAL_BYTES = 4096

/**
 * One shard's log. The bytes of every record (key, then value) are packed in one buffer outside the
 * JavaScript heap, and each record is three numbers in three arrays: a store holding millions of
 * records adds a handful of heap objects, not three per record (an entry and two byte arrays), which
 * would sit among the groups' objects and slow down every heartbeat's lookups and every full GC.
 */
class ShardLog {
  bytes: Buffer = Buffer.allocUnsafeSlow(INITIAL_BYTES)
  /** Bytes of `bytes` in use. */
  used = 0
  /** Where each record's key starts in `bytes`; its value follows the key. */
  starts: number[] = []
  keyLengths: number[] = []
  /** -1: a tombstone (null value). */
  valueLengths: number[] = []

  get length(): number {
    return this.starts.length
  }

  /** Makes room for `n` more bytes after `used` (the bytes in use are kept). */
  reserve(n: number): void {
    const need = this.used + n
    if (need <= this.bytes.length) return
    let cap = this.bytes.length * 2
    while (cap < need) cap *= 2
    const next = Buffer.allocUnsafeSlow(cap)
    this.bytes.copy(next, 0, 0, this.used)
    this.bytes = next
  }

  key(i: number): Uint8Array {
    return copyOf(this.bytes, this.starts[i], this.keyLengths[i])
  }

  value(i: number): Uint8Array | null {
    const n = this.valueLengths[i]
    return n < 0 ? null : copyOf(this.bytes, this.starts[i] + this.keyLengths[i], n)
  }

  /** The key's bytes as a string, to compare keys during compaction. */
  keyId(i: number): string {
    const start = this.starts[i]
    return this.bytes.toString('latin1', start, start + this.keyLengths[i])
  }
}

/** A fresh Uint8Array with `n` bytes of `bytes` from `start`. */
function copyOf(bytes: Buffer, start: number, n: number): Uint8Array {
  const out = new Uint8Array(n)
  out.set(bytes.subarray(start, start + n))
  return out
}

/**
 * Keeps every shard's log in process memory: nothing survives the process. For tests and for
 * `coordinator.storage=memory`. Records are copied in and out, so callers may reuse their buffers and
 * mutating a loaded record never changes the store, as with the SQLite engine.
 *
 * The data belongs to the instance, not to `open()`: closing and opening the same instance again
 * finds the records still there.
 */
export class MemoryRecordStore implements RecordStore, FaultInjection {
  readonly #shards = new Map<number, ShardLog>()
  #open = false
  #failNext: Error | undefined

  async open(): Promise<void> {
    this.#open = true
  }

  failNextAppend(error?: Error): void {
    this.#failNext = error ?? injectedFailure()
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
    let size = 0
    for (const r of records) size += r.key.byteLength + (r.value === null ? 0 : r.value.byteLength)
    log.reserve(size)
    // Staged after the bytes in use; nothing is visible until `used` and the arrays move on below.
    const bytes = log.bytes
    let pos = log.used
    const starts: number[] = []
    const keyLengths: number[] = []
    const valueLengths: number[] = []
    for (const r of records) {
      starts.push(pos)
      bytes.set(r.key, pos)
      pos += r.key.byteLength
      keyLengths.push(r.key.byteLength)
      if (r.value === null) valueLengths.push(-1)
      else {
        bytes.set(r.value, pos)
        pos += r.value.byteLength
        valueLengths.push(r.value.byteLength)
      }
      // The injected failure fires after part of the batch is staged, so a failure really happens
      // midway; nothing staged is visible because the log is only extended below.
      this.#maybeFail()
    }
    // An empty batch still consumes the injected failure, as any other append would.
    this.#maybeFail()
    for (let i = 0; i < starts.length; i++) {
      log.starts.push(starts[i])
      log.keyLengths.push(keyLengths[i])
      log.valueLengths.push(valueLengths[i])
    }
    log.used = pos
  }

  async load(shard: number): Promise<CoordinatorRecord[]> {
    this.#checkOpen()
    checkShard(shard)
    const log = this.#shards.get(shard)
    if (log === undefined) return []
    const out: CoordinatorRecord[] = new Array(log.length)
    for (let i = 0; i < log.length; i++) out[i] = { key: log.key(i), value: log.value(i) }
    return out
  }

  async compact(shard: number): Promise<void> {
    this.#checkOpen()
    checkShard(shard)
    const log = this.#shards.get(shard)
    if (log === undefined) return
    const latest = new Map<string, number>()
    for (let i = 0; i < log.length; i++) latest.set(log.keyId(i), i)
    // The last record of every key, in log order, unless it is a tombstone.
    const compacted = new ShardLog()
    for (let i = 0; i < log.length; i++) {
      if (log.valueLengths[i] < 0 || latest.get(log.keyId(i)) !== i) continue
      const start = log.starts[i]
      const n = log.keyLengths[i] + log.valueLengths[i]
      compacted.reserve(n)
      log.bytes.copy(compacted.bytes, compacted.used, start, start + n)
      compacted.starts.push(compacted.used)
      compacted.keyLengths.push(log.keyLengths[i])
      compacted.valueLengths.push(log.valueLengths[i])
      compacted.used += n
    }
    this.#shards.set(shard, compacted)
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
