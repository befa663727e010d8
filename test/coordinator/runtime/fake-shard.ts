// A small key/value shard for the runtime tests: records set a key to a number or delete it (null).
import { MemoryRecordStore } from '../../../src/coordinator/storage/memory.js'
import type {
  CoordinatorRecord,
  LoadOptions,
  FaultInjection,
  RecordStore,
  ShardBatch,
} from '../../../src/coordinator/storage/types.js'
import type {
  RecordSerde,
  ShardStateMachine,
  ShardTimer,
  WriteOperation,
} from '../../../src/coordinator/runtime/types.js'

export interface KvRecord {
  readonly key: string
  readonly value: number | null
}

export class KvShard implements ShardStateMachine<KvRecord> {
  readonly map = new Map<string, number>()
  replayed = 0
  loadedAt: number | undefined
  /** When set, replaying this key throws (to test a broken state machine). */
  poison: string | undefined
  readonly id: number
  readonly timer: ShardTimer<KvRecord>

  constructor(id: number, timer: ShardTimer<KvRecord>) {
    this.id = id
    this.timer = timer
  }

  replay(record: KvRecord): void {
    if (record.key === this.poison) throw new Error(`cannot replay ${record.key}`)
    this.replayed++
    if (record.value === null) this.map.delete(record.key)
    else this.map.set(record.key, record.value)
  }

  onLoaded(nowMs: number): undefined {
    this.loadedAt = nowMs
    return undefined
  }

  snapshot(): [string, number][] {
    return [...this.map].sort(([a], [b]) => a.localeCompare(b))
  }
}

const enc = new TextEncoder()
const dec = new TextDecoder()

/**
 * Keys starting with "?" are written as records of an unknown type, which loading must skip. Keys
 * starting with "!" are replayed record by record when loading; of the others, loading may replay
 * only the latest record.
 */
export const kvSerde: RecordSerde<KvRecord> = {
  latestOnly: (bytes, offset, length) => length === 0 || bytes[offset] !== 0x21,
  serialize: (r) => ({
    key: enc.encode(r.key),
    value: r.value === null ? null : enc.encode(String(r.value)),
  }),
  deserialize: (c) => {
    const key = dec.decode(c.key)
    if (key.startsWith('?')) return undefined
    return { key, value: c.value === null ? null : Number(dec.decode(c.value)) }
  },
}

/** Increments a key; answers the new value. */
export function incr(key: string, by = 1): WriteOperation<KvShard, KvRecord, number> {
  return (shard) => {
    const v = (shard.map.get(key) ?? 0) + by
    return { records: [{ key, value: v }], response: v }
  }
}

export function del(key: string): WriteOperation<KvShard, KvRecord, boolean> {
  return (shard) => ({
    records: shard.map.has(key) ? [{ key, value: null }] : [],
    response: shard.map.has(key),
  })
}

/**
 * A store around MemoryRecordStore that records calls and can hold appends until released, so tests
 * can look at the shard while an append is in flight.
 */
export class GatedStore implements RecordStore, FaultInjection {
  readonly inner = new MemoryRecordStore()
  readonly calls: string[] = []
  #gated = false
  #waiting: (() => void)[] = []
  #onAppend: (() => void)[] = []
  closed = false

  /** From now on, appends wait for release(). */
  gate(): void {
    this.#gated = true
  }

  /** Lets every waiting append through and stops gating. */
  release(): void {
    this.#gated = false
    const w = this.#waiting
    this.#waiting = []
    for (const f of w) f()
  }

  /** Resolves when the next append call starts. */
  nextAppend(): Promise<void> {
    return new Promise((resolve) => this.#onAppend.push(resolve))
  }

  get waitingAppends(): number {
    return this.#waiting.length
  }

  failNextAppend(error?: Error): void {
    this.inner.failNextAppend(error)
  }

  async open(): Promise<void> {
    await this.inner.open()
  }

  async append(shard: number, records: readonly CoordinatorRecord[]): Promise<void> {
    this.calls.push(`append:${shard}:${records.length}`)
    const started = this.#onAppend
    this.#onAppend = []
    for (const f of started) f()
    if (this.#gated) await new Promise<void>((resolve) => this.#waiting.push(resolve))
    await this.inner.append(shard, records)
  }

  /** A group commit: gated like an append; recorded as `batches:<shard>:<n>,<shard>:<n>…`. */
  async appendBatches(batches: readonly ShardBatch[]): Promise<void> {
    this.calls.push(`batches:${batches.map((b) => `${b.shard}:${b.records.length}`).join(',')}`)
    const started = this.#onAppend
    this.#onAppend = []
    for (const f of started) f()
    if (this.#gated) await new Promise<void>((resolve) => this.#waiting.push(resolve))
    await this.inner.appendBatches(batches)
  }

  async load(shard: number, options?: LoadOptions): Promise<CoordinatorRecord[]> {
    this.calls.push(`load:${shard}`)
    return this.inner.load(shard, options)
  }

  async compact(shard: number): Promise<void> {
    this.calls.push(`compact:${shard}`)
    await this.inner.compact(shard)
  }

  async close(): Promise<void> {
    this.closed = true
    await this.inner.close()
  }
}
