import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { acquireFileLock, type FileLock, FileLockBusyError } from '../../file-lock.js'
import { checkRecords, checkShard, injectedFailure, StorageError } from './errors.js'
import { type CheckpointEvent, WalCheckpointer } from './sqlite-checkpoint.js'
import type { CoordinatorRecord, FaultInjection, RecordStore, ShardBatch } from './types.js'

/** The file name of the store inside `data.dir`. */
export const SQLITE_FILE_NAME = 'coordinator.db'

/** The file whose lock says which process owns the store (see `#lock()`). */
export const SQLITE_LOCK_FILE_NAME = 'coordinator.lock'

/** The schema version this code writes (`PRAGMA user_version`); a newer file is refused. */
const SCHEMA_VERSION = 1

/** WAL size past which the checkpoint worker copies it into the database file; see `open()`. */
const WAL_CHECKPOINT_BYTES = 16 * 1024 * 1024
/** WAL size past which writes wait for the checkpoint (sqlite-checkpoint.ts). */
const WAL_MAX_BYTES = 128 * 1024 * 1024

export interface SqliteRecordStoreOptions {
  /**
   * `normal` (default) keeps every acknowledged append across a crash or kill -9 of the process;
   * `full` also keeps it across power loss or an operating-system crash, at the cost of an fsync
   * per append. See the comment in `open()`.
   */
  readonly synchronous?: 'normal' | 'full'
  /** WAL size that starts a checkpoint in the worker thread (default 16 MiB). */
  readonly walCheckpointBytes?: number
  /**
   * WAL size past which writes wait until a checkpoint has copied it and the WAL starts over
   * (default 128 MiB; at least `walCheckpointBytes`).
   */
  readonly walMaxBytes?: number
  /** Told what the checkpointer does (tests and benchmarks). */
  readonly onCheckpoint?: (event: CheckpointEvent) => void
}

/** Rows of the multi-row INSERT an append uses while at least this many records are left. */
const ROWS_PER_INSERT = 8
/**
 * Rows of the wider INSERT used first, while at least this many records are left (a batch of
 * pipelined commits): a row costs about 15 % less CPU than in the 8-row statement; wider still
 * gained nothing measurable.
 */
const ROWS_PER_WIDE_INSERT = 64

function recordBytes(records: readonly CoordinatorRecord[]): number {
  let n = 0
  for (const r of records) n += r.key.length + (r.value?.length ?? 0)
  return n
}

interface Statements {
  readonly insert: Database.Statement<[number, number, Uint8Array, Uint8Array | null]>
  /** `ROWS_PER_INSERT` rows in one statement: a row costs about half as much CPU as alone. */
  readonly insertMany: Database.Statement<unknown[]>
  readonly load: Database.Statement<[number], CoordinatorRecord>
  readonly maxOffset: Database.Statement<[number], { readonly m: number | null }>
  readonly dropSuperseded: Database.Statement<[number, number]>
  readonly dropTombstones: Database.Statement<[number]>
}

/**
 * Inserts rows of `records` from `from` on, `params.length / 4` rows a statement, while that many
 * are left; returns the index of the first record not inserted. The records are the caller's:
 * `params` keeps nothing of them afterwards.
 */
function insertRows(
  statement: Database.Statement<unknown[]>,
  params: unknown[],
  shard: number,
  offset: number,
  records: readonly CoordinatorRecord[],
  from: number,
): number {
  const rows = params.length / 4
  let i = from
  for (; i + rows <= records.length; i += rows) {
    for (let j = 0; j < rows; j++) {
      const r = records[i + j]
      params[4 * j] = shard
      params[4 * j + 1] = offset++
      params[4 * j + 2] = r.key
      params[4 * j + 3] = r.value
    }
    statement.run(params)
  }
  params.fill(null)
  return i
}

/**
 * One SQLite file, `<data.dir>/coordinator.db`, holding every shard's log in one table keyed by
 * (shard, offset). Offsets are per shard and only grow, so `load` returns append order.
 *
 * better-sqlite3 is synchronous: an append runs to completion (commit included) before the promise
 * it returns settles, so appends are applied in call order without any queue here.
 */
export class SqliteRecordStore implements RecordStore, FaultInjection {
  readonly #path: string
  readonly #dataDir: string
  readonly #synchronous: 'normal' | 'full'
  readonly #walCheckpointBytes: number
  readonly #walMaxBytes: number
  readonly #onCheckpoint: ((event: CheckpointEvent) => void) | undefined
  #db: Database.Database | undefined
  /** The lock on `coordinator.lock` while the store is open (see `#lock()`). */
  #heldLock: FileLock | undefined
  #checkpointer: WalCheckpointer | undefined
  #closing: Promise<void> | undefined
  /** Operations waiting, in call order, while the checkpointer holds the writes. */
  readonly #waiting: (() => void)[] = []
  #stmts: Statements | undefined
  #appendTx: ((shard: number, records: readonly CoordinatorRecord[]) => void) | undefined
  #appendBatchesTx: ((batches: readonly ShardBatch[]) => Map<number, number>) | undefined
  #compactTx: ((shard: number) => void) | undefined
  /** Next offset per shard, read lazily from the table on the shard's first append. */
  readonly #nextOffset = new Map<number, number>()
  #failNext: Error | undefined
  /** The parameters of one multi-row INSERT, reused. */
  readonly #params: unknown[] = new Array(4 * ROWS_PER_INSERT).fill(null)
  readonly #wideParams: unknown[] = new Array(4 * ROWS_PER_WIDE_INSERT).fill(null)
  /** The `ROWS_PER_WIDE_INSERT`-row INSERT, prepared on first use for the database it belongs to. */
  #wideInsert: Database.Statement<unknown[]> | undefined

  constructor(dataDir: string, options: SqliteRecordStoreOptions = {}) {
    if (typeof dataDir !== 'string' || dataDir.length === 0) {
      throw new StorageError('STORAGE_INVALID_ARGUMENT', 'data.dir must be a non-empty path')
    }
    const synchronous = options.synchronous ?? 'normal'
    if (synchronous !== 'normal' && synchronous !== 'full') {
      throw new StorageError('STORAGE_INVALID_ARGUMENT', `synchronous must be 'normal' or 'full'`)
    }
    const soft = options.walCheckpointBytes ?? WAL_CHECKPOINT_BYTES
    const hard = options.walMaxBytes ?? Math.max(WAL_MAX_BYTES, soft)
    if (!Number.isSafeInteger(soft) || soft < 0 || !Number.isSafeInteger(hard) || hard < soft) {
      throw new StorageError(
        'STORAGE_INVALID_ARGUMENT',
        'walCheckpointBytes must be a non-negative integer and walMaxBytes an integer not below it',
      )
    }
    this.#dataDir = dataDir
    this.#path = join(dataDir, SQLITE_FILE_NAME)
    this.#synchronous = synchronous
    this.#walCheckpointBytes = soft
    this.#walMaxBytes = hard
    this.#onCheckpoint = options.onCheckpoint
  }

  /** The path of the database file. */
  get path(): string {
    return this.#path
  }

  async open(): Promise<void> {
    if (this.#db !== undefined) return
    try {
      mkdirSync(this.#dataDir, { recursive: true })
    } catch (cause) {
      throw new StorageError(
        'STORAGE_OPEN_FAILED',
        `cannot open ${this.#path}: ${(cause as Error).message}`,
        {
          cause,
        },
      )
    }
    const lock = this.#lock()
    let db: Database.Database
    try {
      // timeout 0: nothing on the event loop ever waits for a lock.
      db = new Database(this.#path, { timeout: 0 })
    } catch (cause) {
      lock.release()
      throw new StorageError(
        'STORAGE_OPEN_FAILED',
        `cannot open ${this.#path}: ${(cause as Error).message}`,
        {
          cause,
        },
      )
    }
    try {
      // WAL in the normal locking mode: the checkpoint worker's connection reads the WAL's index in
      // the shared-memory file (coordinator.db-shm) beside it. The lock file, not the database
      // file, keeps a second process out. A server of an earlier version holds the database file
      // in exclusive locking mode: switching to WAL then fails with SQLITE_BUSY, reported below.
      db.pragma('journal_mode = WAL')
      // In WAL mode a commit is a write() of the frames to the WAL file before COMMIT returns.
      // With synchronous=NORMAL the WAL is fsynced only at checkpoints, so a committed transaction
      // sits in the operating system's page cache, which outlives the process: kill -9 right after
      // an acknowledged append loses nothing (test/coordinator/storage/kill.e2e.test.ts proves it).
      // Only power loss or an OS crash could lose the last commits; `synchronous: 'full'` covers
      // that too, at one fsync per append. Kafka itself acknowledges coordinator writes without an
      // fsync (it relies on replication), so NORMAL is the default. The checkpoint worker's
      // connection uses the same setting, so a checkpoint fsyncs the WAL before it copies it and
      // the database file before the WAL can start over, as SQLite's own checkpoint would.
      db.pragma(`synchronous = ${this.#synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
      // SQLite's automatic checkpoint runs inside the commit that takes the WAL past its threshold
      // and fsyncs the database file there: 140–220 ms on the event loop once or twice a run of the
      // server benchmark (BENCHMARKS.md, "Server"). This connection never checkpoints; a worker
      // thread does (sqlite-checkpoint.ts), and the WAL file is cut back to the threshold whenever
      // the WAL starts over (which is also how the checkpointer reads the WAL's length).
      db.pragma('wal_autocheckpoint = 0')
      db.pragma(`journal_size_limit = ${this.#walCheckpointBytes}`)
      const version = db.pragma('user_version', { simple: true }) as number
      if (version > SCHEMA_VERSION) {
        throw new StorageError(
          'STORAGE_OPEN_FAILED',
          `${this.#path} has schema version ${version}, newer than this version of topograph understands (${SCHEMA_VERSION})`,
        )
      }
      // WITHOUT ROWID: the table is clustered on (shard, offset), so loading a shard is one
      // contiguous range scan. Coordinator records are small, which is where this layout is best.
      db.exec(`
        CREATE TABLE IF NOT EXISTS coordinator_records (
          shard INTEGER NOT NULL,
          offset INTEGER NOT NULL,
          key BLOB NOT NULL,
          value BLOB,
          PRIMARY KEY (shard, offset)
        ) WITHOUT ROWID;
        PRAGMA user_version = ${SCHEMA_VERSION};
      `)
      const stmts: Statements = {
        insert: db.prepare('INSERT INTO coordinator_records (shard, offset, key, value) VALUES (?, ?, ?, ?)'),
        insertMany: db.prepare(
          `INSERT INTO coordinator_records (shard, offset, key, value) VALUES ${Array(ROWS_PER_INSERT).fill('(?, ?, ?, ?)').join(', ')}`,
        ),
        load: db.prepare('SELECT key, value FROM coordinator_records WHERE shard = ? ORDER BY offset'),
        maxOffset: db.prepare('SELECT MAX(offset) AS m FROM coordinator_records WHERE shard = ?'),
        // Keeps the last record of every key; a key whose last record is a tombstone then loses the
        // tombstone too (dropTombstones), in the same transaction, so no superseded record outlives it.
        dropSuperseded: db.prepare(
          `DELETE FROM coordinator_records WHERE shard = ? AND offset NOT IN
             (SELECT MAX(offset) FROM coordinator_records WHERE shard = ? GROUP BY key)`,
        ),
        dropTombstones: db.prepare('DELETE FROM coordinator_records WHERE shard = ? AND value IS NULL'),
      }
      this.#appendTx = db.transaction((shard: number, records: readonly CoordinatorRecord[]) => {
        // The injected failure fires after rows were inserted, so the rollback path is exercised.
        const offset = this.#insert(stmts, shard, this.#offsetFor(shard, stmts), records)
        this.#maybeFail()
        this.#nextOffset.set(shard, offset)
      })
      // A group commit: every shard's batch in one transaction. The next offsets go into the cache
      // only once it committed (a rollback midway must not leave a shard's cached offset moved on).
      this.#appendBatchesTx = db.transaction((batches: readonly ShardBatch[]) => {
        const next = new Map<number, number>()
        for (const b of batches) {
          const offset = next.get(b.shard) ?? this.#offsetFor(b.shard, stmts)
          next.set(b.shard, this.#insert(stmts, b.shard, offset, b.records))
        }
        // The injected failure fires after the rows are inserted, so the rollback path is exercised.
        this.#maybeFail()
        return next
      })
      this.#compactTx = db.transaction((shard: number) => {
        stmts.dropSuperseded.run(shard, shard)
        stmts.dropTombstones.run(shard)
      })
      this.#stmts = stmts
      this.#db = db
      this.#heldLock = lock
    } catch (cause) {
      db.close()
      lock.release()
      if (cause instanceof StorageError) throw cause
      const message = (cause as Error).message
      const busy = (cause as { code?: unknown }).code === 'SQLITE_BUSY'
      throw new StorageError(
        'STORAGE_OPEN_FAILED',
        busy
          ? `${this.#path} is locked: another process is using data.dir ${this.#dataDir}`
          : `cannot open ${this.#path}: ${message}`,
        { cause },
      )
    }
    this.#checkpointer = new WalCheckpointer(
      {
        file: this.#path,
        synchronous: this.#synchronous === 'full' ? 'FULL' : 'NORMAL',
        softBytes: this.#walCheckpointBytes,
        hardBytes: this.#walMaxBytes,
        pageSize: db.pragma('page_size', { simple: true }) as number,
        checkpointInline: () => this.#checkpointInline(),
        onEvent: this.#onCheckpoint,
      },
      () => this.#runWaiting(),
    )
  }

  /**
   * Makes the store this process's alone: two servers appending to one data.dir would corrupt each
   * other's offsets. A second process (or a second store in this one) fails at once.
   */
  #lock(): FileLock {
    const file = join(this.#dataDir, SQLITE_LOCK_FILE_NAME)
    try {
      return acquireFileLock(file)
    } catch (cause) {
      throw new StorageError(
        'STORAGE_OPEN_FAILED',
        cause instanceof FileLockBusyError
          ? `${this.#path} is locked: another process is using data.dir ${this.#dataDir}`
          : `cannot open ${file}: ${(cause as Error).message}`,
        { cause },
      )
    }
  }

  /** Test hook: while paused the checkpoint worker starts no round (a stuck or slow checkpoint). */
  pauseCheckpoints(paused: boolean): void {
    this.#checkpointer?.pause(paused)
  }

  /** Test hook: ends the checkpoint worker thread as if it had died. */
  killCheckpointWorker(): Promise<void> {
    return this.#checkpointer?.killWorker() ?? Promise.resolve()
  }

  /** Whether an operation must wait behind the writes the checkpointer holds. */
  #mustWait(): boolean {
    return this.#waiting.length > 0 || this.#checkpointer?.holding === true
  }

  /** Runs `op` once the checkpointer lets the writes go, after every operation already waiting. */
  #later<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push(() => {
        try {
          resolve(op())
        } catch (error) {
          reject(error)
        }
      })
    })
  }

  #runWaiting(): void {
    while (this.#waiting.length > 0 && this.#checkpointer?.holding !== true) {
      const op = this.#waiting.shift() as () => void
      op()
    }
  }

  /** A checkpoint on the event loop, for when the worker cannot run one. */
  #checkpointInline(): void {
    try {
      this.#db?.pragma('wal_checkpoint(RESTART)')
    } catch {
      // A failed checkpoint loses nothing: the WAL still holds every commit, and the next one retries.
    }
  }

  failNextAppend(error?: Error): void {
    this.#failNext = error ?? injectedFailure()
  }

  async append(shard: number, records: readonly CoordinatorRecord[]): Promise<void> {
    if (this.#appendTx === undefined) throw this.#notOpen()
    checkShard(shard)
    checkRecords(records)
    if (this.#mustWait()) return this.#later(() => this.#appendNow(shard, records))
    this.#appendNow(shard, records)
  }

  #appendNow(shard: number, records: readonly CoordinatorRecord[]): void {
    const tx = this.#appendTx
    if (tx === undefined) throw this.#notOpen()
    const injected = this.#failNext
    try {
      tx(shard, records)
    } catch (cause) {
      // The transaction rolled back; the cached offset was not advanced (it is set last).
      if (cause instanceof StorageError || (injected !== undefined && cause === injected)) throw cause
      throw new StorageError(
        'STORAGE_WRITE_FAILED',
        `append to shard ${shard} failed: ${(cause as Error).message}`,
        {
          cause,
        },
      )
    }
    this.#checkpointer?.afterCommit(recordBytes(records))
  }

  async appendBatches(batches: readonly ShardBatch[]): Promise<void> {
    if (this.#appendBatchesTx === undefined) throw this.#notOpen()
    if (!Array.isArray(batches))
      throw new StorageError('STORAGE_INVALID_ARGUMENT', 'batches must be an array')
    for (const b of batches) {
      checkShard(b.shard)
      checkRecords(b.records)
    }
    if (this.#mustWait()) return this.#later(() => this.#appendBatchesNow(batches))
    this.#appendBatchesNow(batches)
  }

  #appendBatchesNow(batches: readonly ShardBatch[]): void {
    const tx = this.#appendBatchesTx
    if (tx === undefined) throw this.#notOpen()
    const injected = this.#failNext
    let next: Map<number, number>
    try {
      next = tx(batches)
    } catch (cause) {
      if (cause instanceof StorageError || (injected !== undefined && cause === injected)) throw cause
      throw new StorageError('STORAGE_WRITE_FAILED', `group append failed: ${(cause as Error).message}`, {
        cause,
      })
    }
    for (const [shard, offset] of next) this.#nextOffset.set(shard, offset)
    let bytes = 0
    for (const b of batches) bytes += recordBytes(b.records)
    this.#checkpointer?.afterCommit(bytes)
  }

  async load(shard: number): Promise<CoordinatorRecord[]> {
    if (this.#stmts === undefined) throw this.#notOpen()
    checkShard(shard)
    // Behind held writes, so that a load never misses an append made before it.
    if (this.#mustWait()) return this.#later(() => this.#loadNow(shard))
    return this.#loadNow(shard)
  }

  #loadNow(shard: number): CoordinatorRecord[] {
    const stmts = this.#stmts
    if (stmts === undefined) throw this.#notOpen()
    try {
      // Rows come back as { key: Buffer, value: Buffer | null }, already CoordinatorRecords.
      return stmts.load.all(shard)
    } catch (cause) {
      throw new StorageError(
        'STORAGE_READ_FAILED',
        `load of shard ${shard} failed: ${(cause as Error).message}`,
        {
          cause,
        },
      )
    }
  }

  async compact(shard: number): Promise<void> {
    if (this.#compactTx === undefined) throw this.#notOpen()
    checkShard(shard)
    if (this.#mustWait()) return this.#later(() => this.#compactNow(shard))
    this.#compactNow(shard)
  }

  #compactNow(shard: number): void {
    const tx = this.#compactTx
    if (tx === undefined) throw this.#notOpen()
    try {
      tx(shard)
    } catch (cause) {
      throw new StorageError(
        'STORAGE_WRITE_FAILED',
        `compaction of shard ${shard} failed: ${(cause as Error).message}`,
        { cause },
      )
    }
    this.#checkpointer?.afterCommit(0)
  }

  close(): Promise<void> {
    if (this.#closing === undefined) {
      this.#closing = this.#close().finally(() => {
        this.#closing = undefined
      })
    }
    return this.#closing
  }

  async #close(): Promise<void> {
    const db = this.#db
    if (db === undefined) return
    // The worker's connection closes first, so that this one is the last: closing it copies what is
    // left of the WAL into the database file and removes the WAL. Operations held for a checkpoint
    // run before that, in their order.
    const checkpointer = this.#checkpointer
    this.#checkpointer = undefined
    await checkpointer?.close()
    this.#runWaiting()
    this.#db = undefined
    this.#wideInsert = undefined
    this.#stmts = undefined
    this.#appendTx = undefined
    this.#appendBatchesTx = undefined
    this.#compactTx = undefined
    this.#nextOffset.clear()
    db.close()
    this.#heldLock?.release()
    this.#heldLock = undefined
  }

  /** Inserts `records` at `offset` on; returns the next offset. Runs inside a transaction. */
  #insert(stmts: Statements, shard: number, offset: number, records: readonly CoordinatorRecord[]): number {
    let i = 0
    if (records.length >= ROWS_PER_WIDE_INSERT) {
      i = insertRows(this.#wideInsertStatement(), this.#wideParams, shard, offset, records, 0)
      offset += i
    }
    const narrow = insertRows(stmts.insertMany, this.#params, shard, offset, records, i)
    offset += narrow - i
    for (i = narrow; i < records.length; i++)
      stmts.insert.run(shard, offset++, records[i].key, records[i].value)
    return offset
  }

  #wideInsertStatement(): Database.Statement<unknown[]> {
    const db = this.#db as Database.Database
    if (this.#wideInsert === undefined || this.#wideInsert.database !== db) {
      this.#wideInsert = db.prepare(
        `INSERT INTO coordinator_records (shard, offset, key, value) VALUES ${Array(ROWS_PER_WIDE_INSERT).fill('(?, ?, ?, ?)').join(', ')}`,
      )
    }
    return this.#wideInsert
  }

  #offsetFor(shard: number, stmts: Statements): number {
    let next = this.#nextOffset.get(shard)
    if (next === undefined) {
      const m = stmts.maxOffset.get(shard)?.m
      next = m === null || m === undefined ? 0 : m + 1
    }
    return next
  }

  #maybeFail(): void {
    if (this.#failNext !== undefined) {
      const error = this.#failNext
      this.#failNext = undefined
      throw error
    }
  }

  #notOpen(): StorageError {
    return new StorageError('STORAGE_NOT_OPEN', `the SQLite record store ${this.#path} is not open`)
  }
}
