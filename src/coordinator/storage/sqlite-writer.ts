/**
 * The SQLite engine's write transactions, off the event loop.
 *
 * better-sqlite3 commits synchronously: on the event loop a group commit of 320 records holds it
 * for its whole transaction (the inserts, the WAL's write() calls), and every request that arrives
 * meanwhile waits. With the store's `writeThread` option (off by default: BENCHMARKS.md,
 * "OffsetCommit: the SQLite write in a writer thread", says why) a worker thread owns a third
 * connection to the file (beside the store's own, which opens, migrates, loads and compacts, and
 * the checkpoint worker's) and runs every append transaction. The event loop
 * encodes a write's batch rows into one buffer, hands it over (transferred, not copied) with one
 * small array that says where each row ends, and gets back the write's number once it committed, or
 * what failed. While a write is in flight the runtime gathers every shard's next batch for the one
 * after it (group commit), so the hand-over costs once per store write, not once per operation.
 *
 * The worker answers the writes in the order they were posted, and owns the shards' next offsets
 * (it alone appends while it runs). A write's promise settles only once its transaction committed
 * (durable as a commit on the event loop was: its frames are in the WAL file) or rolled back.
 */
import type { Worker } from 'node:worker_threads'
import { CLOSE_ON_MESSAGE, sqliteWorker } from './sqlite-checkpoint.js'

/** What the worker answers: a committed write's number, or a failure. */
type WriterMessage =
  | number
  | { readonly kind: 'ready'; readonly cacheSize: number }
  | { readonly kind: 'closed' }
  | { readonly kind: 'open-failed'; readonly message: string }
  | {
      readonly kind: 'failed'
      readonly id: number
      readonly injected: boolean
      readonly message: string
      readonly code: string | undefined
    }

/** A write the worker could not commit (rolled back). */
export class WriterFailure extends Error {
  /** The store's injected failure fired (the rows were inserted, then the transaction rolled back). */
  readonly injected: boolean
  /** SQLite's error code, when it was SQLite's error. */
  readonly code: string | undefined
  constructor(message: string, injected: boolean, code: string | undefined) {
    super(message)
    this.name = 'WriterFailure'
    this.injected = injected
    this.code = code
  }
}

export interface SqliteWriterOptions {
  readonly file: string
  readonly synchronous: 'NORMAL' | 'FULL'
  /** The store's `journal_size_limit`: the connection that starts the WAL over cuts its file back. */
  readonly journalSizeLimit: number
  /** The store's `cache_size` (KiB when negative): this connection appends, so it caches what it writes. */
  readonly cacheSize: number
  /** Told once when the worker is gone (failed or exited) while the store still used it. */
  readonly onLost: (reason: string) => void
}

interface Pending {
  readonly resolve: () => void
  readonly reject: (error: Error) => void
}

// CommonJS, evaluated in the worker: better-sqlite3 is loaded from the path the main thread resolved,
// as the checkpoint worker does (sqlite-checkpoint.ts). A write is { id, meta, bytes, fail }: `meta`
// holds four int32s per batch row (shard, record count, end of its records in `bytes`, attributes).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.sqlite)
const INJECTED = new Error('injected failure')
let db
let tx
const next = new Map()
try {
  // A busy timeout here, unlike on the event loop: waiting for a lock blocks only this thread (the
  // event loop's inline checkpoint, when the checkpoint worker is gone, takes the writer's lock).
  db = new Database(workerData.file, { timeout: 5000, nativeBinding: workerData.nativeBinding })
  db.pragma('synchronous = ' + workerData.synchronous)
  db.pragma('wal_autocheckpoint = 0')
  db.pragma('journal_size_limit = ' + workerData.journalSizeLimit)
  db.pragma('cache_size = ' + workerData.cacheSize)
  const insert = db.prepare(
    'INSERT INTO coordinator_batches (shard, base_offset, last_offset, record_count, attributes, records) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const lastOffset = db.prepare(
    'SELECT last_offset AS last FROM coordinator_batches WHERE shard = ? ORDER BY base_offset DESC LIMIT 1',
  )
  tx = db.transaction((meta, bytes, fail, written) => {
    let start = 0
    for (let i = 0; i < meta.length; i += 4) {
      const shard = meta[i]
      const count = meta[i + 1]
      const end = meta[i + 2]
      const attributes = meta[i + 3]
      let offset = written.get(shard)
      if (offset === undefined) offset = next.get(shard)
      if (offset === undefined) {
        const row = lastOffset.get(shard)
        offset = row === undefined ? 0 : row.last + 1
      }
      if (count > 0) insert.run(shard, offset, offset + count - 1, count, attributes, bytes.subarray(start, end))
      written.set(shard, offset + count)
      start = end
    }
    // The injected failure fires after the rows were inserted, so the rollback keeps them out.
    if (fail) throw INJECTED
  })
  parentPort.postMessage({ kind: 'ready', cacheSize: db.pragma('cache_size', { simple: true }) })
} catch (e) {
  parentPort.postMessage({ kind: 'open-failed', message: String((e && e.message) || e) })
}
parentPort.on('message', (m) => {
${CLOSE_ON_MESSAGE}
  if (db === undefined) {
    parentPort.postMessage({ kind: 'failed', id: m.id, injected: false, message: 'the writer is closed' })
    return
  }
  const written = new Map()
  try {
    // IMMEDIATE: the write lock is taken (or waited for) at BEGIN, so a shard's next offset, read
    // in the transaction, cannot go stale before its insert.
    tx.immediate(m.meta, Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength), m.fail, written)
  } catch (e) {
    parentPort.postMessage({
      kind: 'failed',
      id: m.id,
      injected: e === INJECTED,
      message: String((e && e.message) || e),
      code: e && typeof e.code === 'string' ? e.code : undefined,
    })
    return
  }
  // The next offsets move on only once the transaction committed.
  for (const [shard, offset] of written) next.set(shard, offset)
  parentPort.postMessage(m.id)
})
`

/** The worker thread that runs the SQLite engine's append transactions. */
export class SqliteWriter {
  /** The `cache_size` the thread's connection read back after its pragmas (KiB when negative). */
  readonly cacheSize: number
  readonly #worker: Worker
  readonly #onLost: (reason: string) => void
  /** Writes posted and not answered yet, in the order they were posted (the worker's order). */
  readonly #pending: Pending[] = []
  #firstId = 0
  #nextId = 0
  readonly #idle: (() => void)[] = []
  #gone = false
  #closing: Promise<void> | undefined

  private constructor(worker: Worker, onLost: (reason: string) => void, cacheSize: number) {
    this.cacheSize = cacheSize
    this.#worker = worker
    this.#onLost = onLost
  }

  /** Starts the worker and waits until its connection is open; rejects when it cannot start. */
  static start(options: SqliteWriterOptions): Promise<SqliteWriter> {
    return new Promise<SqliteWriter>((resolve, reject) => {
      let worker: Worker
      try {
        worker = sqliteWorker(WORKER_SOURCE, {
          file: options.file,
          synchronous: options.synchronous,
          journalSizeLimit: options.journalSizeLimit,
          cacheSize: options.cacheSize,
        })
      } catch (error) {
        reject(error)
        return
      }
      let writer: SqliteWriter | undefined
      const starting = (m: WriterMessage) => {
        if (typeof m === 'number' || writer !== undefined) return
        if (m.kind === 'ready') {
          const started = new SqliteWriter(worker, options.onLost, m.cacheSize)
          writer = started
          worker.off('message', starting)
          worker.on('message', (msg: WriterMessage) => started.#onMessage(msg))
          // Idle, the worker must not keep the process alive; a write in flight refs it.
          worker.unref()
          resolve(writer)
        } else if (m.kind === 'open-failed') {
          void worker.terminate()
          reject(new Error(m.message))
        }
      }
      worker.on('message', starting)
      worker.on('error', (error) => {
        if (writer === undefined) reject(error)
        else writer.#lost(`the writer thread failed: ${error.message}`)
      })
      worker.on('exit', () => {
        if (writer === undefined) reject(new Error('the writer thread exited before its connection opened'))
        else writer.#lost('the writer thread exited')
      })
    })
  }

  /** Writes posted and not answered yet. */
  get inFlight(): number {
    return this.#pending.length
  }

  /** Whether the worker is gone (failed or exited): nothing more can be written through it. */
  get gone(): boolean {
    return this.#gone
  }

  /**
   * Posts one write transaction: `meta` holds four int32s per batch row (shard, record count, end
   * of its records in `bytes`, attributes: the codec they are compressed with), `bytes` the rows'
   * records in Kafka's record format, each row's compressed when its attributes say so. Both buffers are
   * transferred: the caller must not touch them afterwards. Settles once the transaction committed
   * or rolled back; `fail` makes it roll back after its inserts (the store's test hook).
   */
  write(meta: Int32Array, bytes: Uint8Array, fail: boolean): Promise<void> {
    if (this.#gone || this.#closing !== undefined)
      return Promise.reject(new WriterFailure('the writer thread is gone', false, undefined))
    return new Promise<void>((resolve, reject) => {
      const id = this.#nextId++
      this.#pending.push({ resolve, reject })
      if (this.#pending.length === 1) this.#worker.ref()
      this.#worker.postMessage({ id, meta, bytes, fail }, [
        meta.buffer as ArrayBuffer,
        bytes.buffer as ArrayBuffer,
      ])
    })
  }

  /** Resolves once no write is in flight. */
  idle(): Promise<void> {
    if (this.#pending.length === 0) return Promise.resolve()
    return new Promise<void>((resolve) => this.#idle.push(resolve))
  }

  /** Test hook: ends the thread as if it had died, writes in flight or not. */
  async kill(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()))
    await this.#worker.terminate()
    await exited
  }

  /** Closes the worker's connection (after the writes in flight) and ends the thread. */
  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing
    const worker = this.#worker
    this.#closing = this.idle().then(
      () =>
        new Promise<void>((resolve) => {
          if (this.#gone) {
            resolve()
            return
          }
          this.#gone = true
          const done = () => {
            void worker.terminate().then(
              () => resolve(),
              () => resolve(),
            )
          }
          worker.on('message', (m: WriterMessage) => {
            if (typeof m !== 'number' && m.kind === 'closed') done()
          })
          worker.once('exit', () => resolve())
          worker.ref()
          worker.postMessage('close')
        }),
    )
    return this.#closing
  }

  #onMessage(m: WriterMessage): void {
    if (typeof m === 'number') {
      this.#settle(m)?.resolve()
      return
    }
    if (m.kind === 'failed') this.#settle(m.id)?.reject(new WriterFailure(m.message, m.injected, m.code))
  }

  /** The answer to the oldest write in flight, which `id` must be (the worker answers in order). */
  #settle(id: number): Pending | undefined {
    if (id !== this.#firstId) return undefined
    this.#firstId++
    const p = this.#pending.shift()
    if (this.#pending.length === 0) {
      this.#worker.unref()
      for (const resolve of this.#idle.splice(0)) resolve()
    }
    return p
  }

  /** The worker is gone: every write in flight fails (it may or may not have committed). */
  #lost(reason: string): void {
    if (this.#gone) return
    this.#gone = true
    void this.#worker.terminate().catch(() => {})
    const failure = new WriterFailure(reason, false, undefined)
    for (const p of this.#pending.splice(0)) p.reject(failure)
    this.#firstId = this.#nextId
    for (const resolve of this.#idle.splice(0)) resolve()
    this.#onLost(reason)
  }
}
