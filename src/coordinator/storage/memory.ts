import { checkRecords, checkShard, injectedFailure, StorageError } from './errors.js'
import type { CoordinatorRecord, FaultInjection, RecordStore } from './types.js'

interface Entry {
  readonly offset: number
  readonly key: Uint8Array
  readonly value: Uint8Array | null
}

/** Hex form of a key, used as a Map key during compaction (Uint8Arrays compare by identity). */
function keyId(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('hex')
}

function copy(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes)
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
  readonly #shards = new Map<number, Entry[]>()
  readonly #nextOffset = new Map<number, number>()
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
    const staged: Entry[] = []
    let offset = this.#nextOffset.get(shard) ?? 0
    for (const r of records) {
      staged.push({ offset: offset++, key: copy(r.key), value: r.value === null ? null : copy(r.value) })
      // The injected failure fires after part of the batch is staged, so a failure really happens
      // midway; nothing staged is visible because the log is only extended below.
      if (this.#failNext !== undefined) {
        const error = this.#failNext
        this.#failNext = undefined
        throw error
      }
    }
    if (this.#failNext !== undefined) {
      // An empty batch still consumes the injected failure, as any other append would.
      const error = this.#failNext
      this.#failNext = undefined
      throw error
    }
    let log = this.#shards.get(shard)
    if (log === undefined) {
      log = []
      this.#shards.set(shard, log)
    }
    for (const e of staged) log.push(e)
    this.#nextOffset.set(shard, offset)
  }

  async load(shard: number): Promise<CoordinatorRecord[]> {
    this.#checkOpen()
    checkShard(shard)
    const log = this.#shards.get(shard) ?? []
    return log.map((e) => ({ key: copy(e.key), value: e.value === null ? null : copy(e.value) }))
  }

  async compact(shard: number): Promise<void> {
    this.#checkOpen()
    checkShard(shard)
    const log = this.#shards.get(shard)
    if (log === undefined) return
    const latest = new Map<string, number>()
    for (let i = 0; i < log.length; i++) latest.set(keyId(log[i].key), i)
    const kept = log.filter((e, i) => e.value !== null && latest.get(keyId(e.key)) === i)
    this.#shards.set(shard, kept)
  }

  async close(): Promise<void> {
    this.#open = false
  }

  #checkOpen(): void {
    if (!this.#open) throw new StorageError('STORAGE_NOT_OPEN', 'the memory record store is not open')
  }
}
