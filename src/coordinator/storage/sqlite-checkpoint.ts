/**
 * The SQLite engine's WAL checkpoints, off the event loop.
 *
 * A checkpoint copies the pages the WAL holds back into the database file and fsyncs it. SQLite's
 * automatic checkpoint does that inside the commit that takes the WAL past `wal_autocheckpoint`
 * pages, which on the event loop held it for 140–220 ms at a time (BENCHMARKS.md, "Server"). Here
 * the store's own connection never checkpoints (`wal_autocheckpoint = 0`); a worker thread that
 * owns a second connection to the same file runs `PRAGMA wal_checkpoint(PASSIVE)` when the WAL has
 * grown past `softBytes`. A passive checkpoint takes no lock a writer needs, so commits keep going on
 * the event loop while the worker copies and fsyncs.
 *
 * SQLite starts the WAL over from its beginning only when a write transaction begins while every
 * frame in it has been copied. Under a steady stream of commits a round of copying always ends with
 * the frames committed while it ran still to copy, so rounds alone would let the WAL grow forever.
 * Each round therefore copies what came in during the one before, which is less, until what is left
 * is at most `tailFrames` (or after `maxRounds`): then the store holds its writes (they wait in its
 * queue, the event loop stays free) for one last round of those few frames, and the first write
 * after it starts the WAL over. Past `hardBytes` the store holds its writes at once until a round
 * has copied everything: the WAL never grows much past that bound, whatever the disk does.
 *
 * A round that leaves frames to copy does not fsync the database file (SQLite does that only once
 * it has copied every frame, before the WAL may start over), so without more the last round, run
 * with the writes held, would fsync every page the rounds before it copied: 17–23 ms of writes held
 * at a load average of 9–10 on the VM of BENCHMARKS.md. After such a round the worker therefore
 * writes the database file's and the WAL's dirty pages out itself (`fdatasync`, the writes
 * flowing), and the held round's own fsyncs find only the pages of the few frames it copies
 * ("OffsetCommit: the checkpoint's last round"). An extra fsync takes nothing from what SQLite's
 * own give: they still run, in their place.
 *
 * The WAL's current length is read from its file size: with `journal_size_limit` set to
 * `softBytes`, SQLite truncates the file to that size when it starts the WAL over, so a file larger
 * than `softBytes` is as long as the frames it holds.
 */
import { closeSync, openSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** What the worker answers after each `PRAGMA wal_checkpoint(PASSIVE)`. */
interface RoundResult {
  readonly busy: number
  /** Frames in the WAL when the round ran. */
  readonly log: number
  /** Frames of it copied into the database file. */
  readonly checkpointed: number
  /** The round ran with the writes flowing, and the worker wrote the files' dirty pages out after it. */
  readonly synced: boolean
}

type WorkerMessage =
  | { readonly kind: 'ready' }
  | ({ readonly kind: 'round' } & RoundResult)
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'closed' }

/** What the checkpointer reports to the store's observer (tests and benchmarks). */
export type CheckpointEvent =
  | { readonly kind: 'round-start'; readonly walBytes: number; readonly writesHeld: boolean }
  | ({ readonly kind: 'round-end'; readonly writesHeld: boolean } & RoundResult)
  | { readonly kind: 'writes-held'; readonly walBytes: number }
  | { readonly kind: 'writes-released' }
  | { readonly kind: 'inline'; readonly reason: string }
  /** The worker thread is started: the first time the WAL passed `softBytes`. */
  | { readonly kind: 'worker-start'; readonly walBytes: number }

export interface WalCheckpointerOptions {
  /** The database file. */
  readonly file: string
  /** The store's `synchronous` setting: a checkpoint's fsyncs follow its connection's setting. */
  readonly synchronous: 'NORMAL' | 'FULL'
  readonly softBytes: number
  readonly hardBytes: number
  /** The database's page size: a WAL frame is one page and a 24-byte header. */
  readonly pageSize: number
  /** Called to checkpoint on the event loop when no worker can (it failed to start or died). */
  readonly checkpointInline: () => void
  readonly onEvent?: (event: CheckpointEvent) => void
}

/** A WAL file's header, before its first frame. */
const WAL_HEADER_BYTES = 32
/** A WAL frame's header, before the page it holds. */
const WAL_FRAME_HEADER_BYTES = 24
/** What a commit counts for between reads of the WAL's size, besides its records' bytes. */
const STAT_COMMIT_BYTES = 8 * 1024
/** Record bytes (and commits) between reads of the WAL's size. */
const STAT_EVERY_BYTES = 64 * 1024
/** Frames left after a round below which the next round runs with the writes held. */
const TAIL_FRAMES = 256
/** Rounds with writes flowing before the writes are held for the last one, however much is left. */
const MAX_ROUNDS = 4
/** Rounds with writes held that did not copy everything before the event loop does it instead. */
const MAX_HELD_ROUNDS = 3

/**
 * The first lines of a SQLite worker's message handler (CommonJS source): 'close' closes its
 * connection `db` and answers `{ kind: 'closed' }`.
 */
export const CLOSE_ON_MESSAGE = `  if (m === 'close') {
    try { db && db.close() } catch {}
    db = undefined
    parentPort.postMessage({ kind: 'closed' })
    return
  }`

// CommonJS, evaluated in the worker: better-sqlite3 is loaded from the path the main thread resolved,
// so the worker finds the same copy wherever the process was started.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.sqlite)
let db
try {
  db = new Database(workerData.file, { timeout: 0, nativeBinding: workerData.nativeBinding })
  // The checkpoint fsyncs the WAL before copying and the database file after, as the store's own
  // connection would with this setting; the store's durability rests on those fsyncs.
  db.pragma('synchronous = ' + workerData.synchronous)
  db.pragma('wal_autocheckpoint = 0')
  parentPort.postMessage({ kind: 'ready' })
} catch (e) {
  parentPort.postMessage({ kind: 'error', message: String(e && e.message || e) })
}
const { fdatasyncSync } = require('node:fs')
parentPort.on('message', (m) => {
${CLOSE_ON_MESSAGE}
  if (db === undefined) return
  try {
    const r = db.pragma('wal_checkpoint(PASSIVE)')[0]
    // A round with the writes flowing ('round+sync'): commits went on during it, so SQLite did not
    // fsync the database file. Its dirty pages are written out now, and the WAL's, while the writes
    // still flow, so that the held last round's fsyncs have only its own pages to write.
    const synced = m === 'round+sync' && workerData.dbFd >= 0
    if (synced) {
      fdatasyncSync(workerData.dbFd)
      fdatasyncSync(workerData.walFd)
    }
    parentPort.postMessage({ kind: 'round', busy: r.busy, log: r.log, checkpointed: r.checkpointed, synced })
  } catch (e) {
    parentPort.postMessage({ kind: 'error', message: String(e && e.message || e) })
  }
})
`

/**
 * A worker thread that evaluates `source` (CommonJS) with `workerData` holding `data` and, as
 * `sqlite` and `nativeBinding`, where to load better-sqlite3 from: the path the main thread
 * resolved, so the worker finds the same copy wherever the process was started.
 */
export function sqliteWorker(source: string, data: Record<string, unknown>): Worker {
  return new Worker(source, {
    eval: true,
    workerData: {
      ...data,
      sqlite: createRequire(import.meta.url).resolve('better-sqlite3'),
      // The addon the process was told to load instead of the installed one (the test runner does
      // that on Node versions other than the one node_modules was built for, with a preload that
      // patches process.dlopen; preloads do not run in worker threads). Unset: the installed one.
      nativeBinding: process.env.TOPOGRAPH_BETTER_SQLITE3_ADDON || undefined,
    },
  })
}

export class WalCheckpointer {
  readonly #walPath: string
  readonly #options: WalCheckpointerOptions
  readonly #frameBytes: number
  #worker: Worker | undefined
  /** The worker was started (or will never be: closed, or killed by the test hook before it started). */
  #started = false
  /** A round was posted and its answer has not come back. */
  #running = false
  /** Rounds run since the WAL last started over (or since the writes were held). */
  #rounds = 0
  /** The store's writes wait until the WAL starts over. */
  #holding = false
  #paused = false
  /** Counts towards the next read of the WAL's size. */
  #sinceStat = 0
  #closing: Promise<void> | undefined
  /**
   * The database file and the WAL opened for the worker's `fdatasync` (−1: not open). Closing a
   * descriptor of a file drops every POSIX lock this process holds on it, SQLite's included, so
   * they are closed only once every connection is ({@link closeFiles}).
   */
  #dbFd = -1
  #walFd = -1
  /** Called when the writes held are released. */
  readonly #release: () => void

  constructor(options: WalCheckpointerOptions, release: () => void) {
    this.#options = options
    this.#walPath = `${options.file}-wal`
    this.#frameBytes = options.pageSize + WAL_FRAME_HEADER_BYTES
    this.#release = release
  }

  /**
   * Starts the worker thread the first time the WAL needs a checkpoint, not when the store opens: a
   * thread's start costs tens of milliseconds of CPU (about 65 ms on the 2-core VM of
   * BENCHMARKS.md, "Storage replay"), which at the server's start competed with loading the shards,
   * and a WAL reaches `softBytes` only after megabytes of appends. Messages posted while it starts
   * wait for it. Returns undefined when it cannot start: the event loop checkpoints.
   */
  #ensureWorker(): Worker | undefined {
    if (this.#started) return this.#worker
    this.#started = true
    this.#options.onEvent?.({ kind: 'worker-start', walBytes: this.#walBytes() })
    try {
      this.#dbFd = openSync(this.#options.file, 'r')
      this.#walFd = openSync(this.#walPath, 'r')
    } catch {
      // Rounds go on without writing the files out first (the held round then fsyncs more); what
      // did open is closed with the store, not now.
    }
    const both = this.#dbFd >= 0 && this.#walFd >= 0
    let worker: Worker
    try {
      worker = sqliteWorker(WORKER_SOURCE, {
        file: this.#options.file,
        synchronous: this.#options.synchronous,
        dbFd: both ? this.#dbFd : -1,
        walFd: both ? this.#walFd : -1,
      })
    } catch {
      return undefined
    }
    // A store left open must not keep the process alive.
    worker.unref()
    worker.on('message', (m: WorkerMessage) => this.#onMessage(m))
    worker.on('error', () => this.#lost('the checkpoint worker failed'))
    worker.on('exit', () => this.#lost('the checkpoint worker exited'))
    this.#worker = worker
    return worker
  }

  /** Whether the store's writes must wait (in its queue) for the WAL to start over. */
  get holding(): boolean {
    return this.#holding
  }

  /**
   * Called after every write transaction the store committed, with the bytes of the records it
   * wrote. The WAL's size is read every few commits or every 64 KiB of records, not after each.
   */
  afterCommit(recordBytes: number): void {
    this.#sinceStat += recordBytes + STAT_COMMIT_BYTES
    if (this.#sinceStat < STAT_EVERY_BYTES) return
    this.#sinceStat = 0
    const bytes = this.#walBytes()
    if (bytes <= this.#options.softBytes) return
    if (this.#ensureWorker() === undefined) {
      // No worker: the event loop checkpoints, as SQLite's automatic checkpoint did.
      this.#options.checkpointInline()
      this.#options.onEvent?.({ kind: 'inline', reason: 'no checkpoint worker' })
      return
    }
    if (bytes > this.#options.hardBytes && !this.#holding) {
      this.#hold(bytes)
    }
    if (!this.#running) this.#post(bytes)
  }

  /** Test hook: while paused no round starts (a slow or stuck checkpoint). */
  pause(paused: boolean): void {
    this.#paused = paused
    if (!paused && !this.#running && (this.#holding || this.#walBytes() > this.#options.softBytes)) {
      this.#ensureWorker()
      this.#post(this.#walBytes())
    }
  }

  /** Test hook: ends the worker thread as if it had died; the event loop checkpoints from then on. */
  async killWorker(): Promise<void> {
    // Not started yet: it never will be.
    this.#started = true
    const worker = this.#worker
    if (worker === undefined) return
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    await worker.terminate()
    await exited
  }

  /** Stops the worker after its round; its connection closes before the store's does. */
  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing
    this.#started = true
    const worker = this.#worker
    this.#worker = undefined
    this.#holding = false
    if (worker === undefined) {
      this.#closing = Promise.resolve()
      return this.#closing
    }
    this.#closing = new Promise<void>((resolve) => {
      const done = () => {
        void worker.terminate().then(
          () => resolve(),
          () => resolve(),
        )
      }
      worker.on('message', (m: WorkerMessage) => {
        if (m.kind === 'closed') done()
      })
      worker.once('exit', () => resolve())
      // Kept alive until its connection is closed: the store's close waits for it.
      worker.ref()
      worker.postMessage('close')
    })
    return this.#closing
  }

  /**
   * Closes the descriptors the worker wrote the files out through. The store calls it after its
   * last connection to the file has closed (see {@link #dbFd}).
   */
  closeFiles(): void {
    for (const fd of [this.#dbFd, this.#walFd]) {
      if (fd < 0) continue
      try {
        closeSync(fd)
      } catch {
        // Nothing was written through it.
      }
    }
    this.#dbFd = -1
    this.#walFd = -1
  }

  #walBytes(): number {
    try {
      return statSync(this.#walPath, { throwIfNoEntry: false })?.size ?? 0
    } catch {
      // The commit is done whatever the size reads; a WAL that cannot be measured is not checkpointed
      // early, and the next read tries again.
      return 0
    }
  }

  #hold(bytes: number): void {
    this.#holding = true
    this.#rounds = 0
    this.#options.onEvent?.({ kind: 'writes-held', walBytes: bytes })
  }

  #unhold(): void {
    if (!this.#holding) return
    this.#holding = false
    this.#options.onEvent?.({ kind: 'writes-released' })
    this.#release()
  }

  #post(bytes: number): void {
    if (this.#paused || this.#worker === undefined) return
    this.#running = true
    this.#options.onEvent?.({ kind: 'round-start', walBytes: bytes, writesHeld: this.#holding })
    // While a round runs the worker keeps the process alive: writes may be waiting for it.
    this.#worker.ref()
    this.#worker.postMessage(this.#holding ? 'round' : 'round+sync')
  }

  #onMessage(m: WorkerMessage): void {
    if (this.#worker === undefined) return
    if (m.kind === 'ready' || m.kind === 'closed') return
    if (m.kind === 'error') {
      this.#lost(`checkpoint failed: ${m.message}`)
      return
    }
    this.#running = false
    this.#worker.unref()
    this.#rounds++
    this.#options.onEvent?.({
      kind: 'round-end',
      writesHeld: this.#holding,
      busy: m.busy,
      log: m.log,
      checkpointed: m.checkpointed,
      synced: m.synced,
    })
    const copiedAll = m.busy === 0 && m.checkpointed === m.log
    if (this.#holding) {
      if (copiedAll) {
        // Nothing was written during this round: the next write starts the WAL over.
        this.#rounds = 0
        this.#unhold()
      } else if (this.#rounds >= MAX_HELD_ROUNDS) {
        this.#options.checkpointInline()
        this.#options.onEvent?.({ kind: 'inline', reason: 'held rounds did not copy the WAL' })
        this.#rounds = 0
        this.#unhold()
      } else {
        this.#post(this.#walBytes())
      }
      return
    }
    // The round's answer counts the frames there were when it began; commits since then added more.
    // The file says how many there are now (it is cut back to softBytes when the WAL starts over).
    const bytes = this.#walBytes()
    if (bytes <= this.#options.softBytes) {
      this.#rounds = 0
      return
    }
    const left = Math.floor((bytes - WAL_HEADER_BYTES) / this.#frameBytes) - m.checkpointed
    if (left <= TAIL_FRAMES || this.#rounds >= MAX_ROUNDS) this.#hold(bytes)
    this.#post(bytes)
  }

  /** The worker is gone: from now on the event loop checkpoints, and held writes go on. */
  #lost(_reason: string): void {
    if (this.#worker === undefined) return
    const worker = this.#worker
    this.#worker = undefined
    this.#running = false
    void worker.terminate().catch(() => {})
    if (this.#holding) {
      this.#options.checkpointInline()
      this.#options.onEvent?.({ kind: 'inline', reason: _reason })
      this.#unhold()
    }
  }
}
