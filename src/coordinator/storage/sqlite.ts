import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Compressor } from 'zstd-napi'
import { acquireFileLock, type FileLock, FileLockBusyError } from '../../file-lock.js'
import {
  BatchFormatError,
  ByteSink,
  COMPRESSION_CODEC_MASK,
  CompressionCodec,
  putVarint,
  readRecord,
  sizeOfVarint,
  VarReader,
  writeRecord,
} from '../../log/batch.js'
import { DecompressionError, decompress } from '../../log/compression.js'
import { checkRecords, checkShard, injectedFailure, StorageError } from './errors.js'
import { latestMask, RecordPositions } from './latest.js'
import { type CheckpointEvent, WalCheckpointer } from './sqlite-checkpoint.js'
import { SqliteWriter, WriterFailure } from './sqlite-writer.js'
import {
  type CoordinatorRecord,
  type FaultInjection,
  isLaidOut,
  type LaidOutRecord,
  type LoadOptions,
  type RecordStore,
  type ShardBatch,
} from './types.js'

/** The file name of the store inside `data.dir`. */
export const SQLITE_FILE_NAME = 'coordinator.db'

/** The file whose lock says which process owns the store (see `#lock()`). */
export const SQLITE_LOCK_FILE_NAME = 'coordinator.lock'

/**
 * The schema version this code writes (`PRAGMA user_version`); a newer file is refused. Version 1
 * kept one row per record (`coordinator_records`), version 2 batch rows without `attributes` (all
 * uncompressed); a file of either is migrated at open.
 */
const SCHEMA_VERSION = 3

/**
 * Rows whose records take fewer bytes than this are written uncompressed: the leaf page they land
 * in is written whole either way, and compressing costs a few µs a row whatever its size.
 */
const COMPRESS_MIN_BYTES = 512
/** zstd's level for batch rows: a fast level (BENCHMARKS.md, "SQLite: compressed batch rows"). */
const ZSTD_LEVEL = -1
/** A compressed row inflating past this is refused as corrupt (an append's row is far smaller). */
const MAX_ROW_BYTES = 1024 * 1024 * 1024

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
  /**
   * Whether append transactions run in a worker thread (sqlite-writer.ts) or on the event loop
   * (default `false`: the thread was not shown to lower the CPU a request or the p99 at half load,
   * docs/storage.md). Loads and compactions run on the event loop either way.
   */
  readonly writeThread?: boolean
  /**
   * `zstd` (default): a batch row whose records take 512 bytes or more is stored compressed with
   * zstd when that is smaller, as a Kafka record batch of codec zstd holds its records; `none`: rows
   * are written as they are. Either way every row's codec is in its `attributes`, so a file holds
   * both kinds and any setting reads any file.
   */
  readonly compression?: 'zstd' | 'none'
}

/**
 * Records a batch row holds at most when the rows of schema version 1 are migrated (an append's
 * batch is one row whatever its size).
 */
const MIGRATE_BATCH_RECORDS = 4096
/** Record bytes past which a migrated batch row is closed. */
const MIGRATE_BATCH_BYTES = 1024 * 1024
/** An encoding buffer grown past this for a large batch is dropped after it, not kept. */
const KEPT_SINK_BYTES = 1024 * 1024

function recordBytes(records: readonly CoordinatorRecord[]): number {
  let n = 0
  for (let i = 0; i < records.length; i++) {
    const r = records[i]
    // A record that tells where its bytes lie is measured there: reading `key` would make a view.
    n += isLaidOut(r) ? r.keyLength + Math.max(r.valueLength, 0) : r.key.length + (r.value?.length ?? 0)
  }
  return n
}

/**
 * The page cache of each connection that reads or writes the store's rows, as SQLite's `cache_size`
 * (negative: KiB). better-sqlite3 builds SQLite with a default of −16000, not SQLite's own −2000, and
 * the connection that appends keeps every page its appends create: without this setting its cache
 * grows with the database for as long as the process runs, up to about 3,700 pages of 4 KiB
 * (RELIABILITY.md, "Soak"). An append needs only the right-hand path of the table's and the primary
 * key's B-trees; loading and compaction read each row once, from the operating system's page cache
 * when it is not in this one. The checkpoint worker's connection copies WAL frames without its page
 * cache, so it sets none.
 */
export const PAGE_CACHE_SIZE = -2000

/** Compaction keeps the latest record of every key. */
const EVERY_KEY = () => true

/** One row of `coordinator_batches` as loading and compaction read it. */
interface BatchRow {
  readonly base: number
  readonly last: number
  readonly count: number
  /** The records' codec in the low three bits, as a Kafka record batch's attributes have it. */
  readonly attributes: number
  readonly records: Uint8Array
}

interface Statements {
  readonly insert: Database.Statement<[number, number, number, number, number, Uint8Array]>
  readonly load: Database.Statement<[number], BatchRow>
  readonly lastOffset: Database.Statement<[number], { readonly last: number }>
  readonly rewrite: Database.Statement<[number, number, Uint8Array, number, number]>
  readonly drop: Database.Statement<[number, number]>
}

/**
 * A row's records as they are stored: compressed with zstd (`attributes` 4, Kafka's codec id) when
 * `compressor` is given, the records take at least `COMPRESS_MIN_BYTES` and the result is smaller;
 * otherwise as they are (`attributes` 0). `bytes` is `encoded` itself or a new buffer.
 */
function rowBytes(
  compressor: Compressor | undefined,
  encoded: Uint8Array,
): { readonly attributes: number; readonly bytes: Uint8Array } {
  if (compressor === undefined || encoded.length < COMPRESS_MIN_BYTES)
    return { attributes: CompressionCodec.none, bytes: encoded }
  const compressed = compressor.compress(encoded)
  if (compressed.length >= encoded.length) return { attributes: CompressionCodec.none, bytes: encoded }
  return { attributes: CompressionCodec.zstd, bytes: compressed }
}

/** A zstd compressor at the rows' level, or undefined for `compression: 'none'`. */
function rowCompressor(compression: 'zstd' | 'none'): Compressor | undefined {
  if (compression === 'none') return undefined
  const c = new Compressor()
  c.setParameters({ compressionLevel: ZSTD_LEVEL })
  return c
}

/**
 * The records of a row as written: decompressed when its attributes name a codec. Exported for the
 * replay benches' raw scans, which read the rows as loading does.
 */
export function rowRecords(row: Pick<BatchRow, 'attributes' | 'records'>): Uint8Array {
  const codec = row.attributes & COMPRESSION_CODEC_MASK
  // Only a codec, and only one this store writes: anything else is not a row of this store.
  if (row.attributes !== codec || (codec !== CompressionCodec.none && codec !== CompressionCodec.zstd))
    throw new BatchFormatError('invalid', `a batch row with attributes ${row.attributes}`)
  if (codec === CompressionCodec.none) return row.records
  try {
    return decompress(codec, row.records, MAX_ROW_BYTES)
  } catch (cause) {
    if (cause instanceof DecompressionError)
      throw new BatchFormatError('invalid', `a batch row that does not decompress: ${cause.message}`)
    throw cause
  }
}

/**
 * Appends `records` to `sink` in Kafka's record format (the records of a record batch: a varint
 * length, attributes, timestamp delta, offset delta, key, value with -1 for a tombstone, no
 * headers), each at its offset delta from the batch's base offset.
 */
function encodeBatch(
  sink: ByteSink,
  records: readonly CoordinatorRecord[],
  offsetDeltas?: readonly number[],
): void {
  for (let i = 0; i < records.length; i++) {
    const r = records[i]
    const offsetDelta = offsetDeltas === undefined ? i : offsetDeltas[i]
    if (isLaidOut(r)) {
      writeLaidOut(sink, r, offsetDelta)
      continue
    }
    writeRecord(sink, { timestampDelta: 0, offsetDelta, key: r.key, value: r.value })
  }
}

/**
 * `writeRecord`'s bytes for a record that tells where its key and value lie, copied from there: no
 * key or value view and no record object is made for it. The group coordinator's OffsetCommit
 * records come this way, and their two views and the object were a fifth of what a Kafka
 * Streams-shaped commit allocated with this engine (BENCHMARKS.md, "OffsetCommit: the checkpoint's
 * last round"). A test compares the rows with those of the same records read through their views.
 */
function writeLaidOut(sink: ByteSink, r: LaidOutRecord, offsetDelta: number): void {
  const keyLength = r.keyLength
  const valueLength = r.valueLength
  // Attributes, a timestamp delta of 0 and a header count of 0 take one byte each.
  const length =
    3 +
    sizeOfVarint(offsetDelta) +
    sizeOfVarint(keyLength) +
    keyLength +
    sizeOfVarint(valueLength) +
    Math.max(valueLength, 0)
  // The whole record reserved at once and written in place: a reservation per field was a third of
  // this function's time in a SQLite Streams-shaped commit's profile.
  const size = sizeOfVarint(length) + length
  const buf = sink.reserve(size)
  let at = putVarint(buf, sink.length, length)
  buf[at++] = 0 // attributes
  buf[at++] = 0 // timestamp delta
  at = putVarint(buf, at, offsetDelta)
  at = putVarint(buf, at, keyLength)
  const to = viewOf(buf)
  const from = r.bytes
  const fromView = sourceView(from)
  at = copyBytes(buf, to, at, from, fromView, r.offset, keyLength)
  at = putVarint(buf, at, valueLength)
  if (valueLength > 0) at = copyBytes(buf, to, at, from, fromView, r.offset + keyLength, valueLength)
  buf[at] = 0 // header count
  sink.advance(size)
}

/** Bytes copied four at a time below this (a view to copy through would cost more than the loop). */
const COPY_BY_VIEW_BYTES = 256

/**
 * Views of the last sink buffer and the last source buffer copied: a row's records come from one
 * or two slabs into one sink buffer, so each view is made once for many records.
 */
let copyTarget: Uint8Array | undefined
let copyTargetView: DataView | undefined
let copySource: Uint8Array | undefined
let copySourceView: DataView | undefined

function viewOf(buf: Uint8Array): DataView {
  if (buf !== copyTarget || copyTargetView === undefined) {
    copyTarget = buf
    copyTargetView = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  }
  return copyTargetView
}

function sourceView(buf: Uint8Array): DataView {
  if (buf !== copySource || copySourceView === undefined) {
    copySource = buf
    copySourceView = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  }
  return copySourceView
}

/**
 * Copies `length` bytes of `from` at `start` to `to` at `at` (`toView` and `fromView` over the
 * same memory); returns the end. Below {@link COPY_BY_VIEW_BYTES} a 32-bit word a step: the byte
 * loop this replaced was most of `writeLaidOut`'s time in a Streams-shaped commit's profile, and
 * words take a record's key and value in about a third of its time.
 */
function copyBytes(
  to: Uint8Array,
  toView: DataView,
  at: number,
  from: Uint8Array,
  fromView: DataView,
  start: number,
  length: number,
): number {
  if (length >= COPY_BY_VIEW_BYTES) {
    to.set(from.subarray(start, start + length), at)
    return at + length
  }
  const words = length & ~3
  let i = 0
  for (; i < words; i += 4) toView.setInt32(at + i, fromView.getInt32(start + i))
  for (; i < length; i++) to[at + i] = from[start + i]
  return at + length
}

/**
 * Finds where the `count` records of a batch row's records `bytes` lie and adds them to `p` (blob
 * `blob`); `deltas`, when given, receives each record's offset delta. Nothing is allocated per
 * record: the key and value views are made later, for the records wanted.
 *
 * Loading a shard runs this once per record, so a record as the store writes it (a key, no
 * headers) is read in place, without a reader or record object of its own. Anything else (no key,
 * headers, a length that does not add up) is read again from its start by `readRecord`, which
 * throws or reads it exactly as before.
 */
function scanBatch(
  bytes: Uint8Array,
  count: number,
  blob: number,
  p: RecordPositions,
  deltas?: number[],
): void {
  const reader = new VarReader(bytes)
  const blobEnd = reader.end
  for (let i = 0; i < count; i++) {
    const start = reader.pos
    const length = reader.readVarint()
    const end = reader.pos + length
    let keyStart = -1
    let keyLength = -1
    let valueStart = 0
    let valueLength = -1
    let offsetDelta = 0
    if (length >= 0 && end <= blobEnd) {
      // The record's own bounds, as readRecord's body reader has them: a read past them throws
      // the same error.
      reader.end = end
      reader.advance(1) // attributes
      reader.readVarlong() // timestamp delta
      offsetDelta = reader.readVarint()
      keyLength = reader.readVarint()
      if (keyLength >= 0) {
        keyStart = reader.pos
        reader.advance(keyLength)
        valueLength = reader.readVarint()
        valueStart = reader.pos
        if (valueLength >= 0) reader.advance(valueLength)
        if (reader.readVarint() !== 0 || reader.pos !== end) keyStart = -1
      }
      reader.end = blobEnd
    }
    if (keyStart === -1) {
      reader.pos = start
      reader.end = blobEnd
      const r = readRecord(reader)
      if (r.key === null) throw new BatchFormatError('invalid', 'a coordinator record without a key')
      // readRecord's key and value are views into `bytes`.
      keyStart = r.key.byteOffset - bytes.byteOffset
      keyLength = r.key.length
      valueStart = r.value === null ? 0 : r.value.byteOffset - bytes.byteOffset
      valueLength = r.value === null ? -1 : r.value.length
      offsetDelta = r.offsetDelta
    }
    p.add(blob, keyStart, keyLength, valueStart, valueLength)
    deltas?.push(offsetDelta)
  }
  if (reader.pos !== reader.end)
    throw new BatchFormatError('invalid', 'bytes after the last record of a batch')
}

/**
 * Finds where the records of `rows` lie (each row's records decompressed). The keys and values lie
 * in the rows' own copies of their BLOBs, which nothing else holds: views into them may be kept or
 * changed by a caller.
 */
function scanRows(rows: readonly BatchRow[], deltas?: number[]): RecordPositions {
  let records = 0
  for (const row of rows) records += row.count
  const p = new RecordPositions(records)
  for (const row of rows) {
    const blob = rowRecords(row)
    p.blobs.push(new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength))
    scanBatch(p.blobs[p.blobs.length - 1], row.count, p.blobs.length - 1, p, deltas)
  }
  return p
}

/**
 * The records at `p` as objects (plain Uint8Array views: a Buffer's `subarray` goes through Node's
 * FastBuffer constructor, a plain one's is V8's own); with `keep`, only those it marks.
 */
function recordsAt(p: RecordPositions, keep?: Uint8Array): CoordinatorRecord[] {
  const out: CoordinatorRecord[] = []
  for (let i = 0; i < p.count; i++) if (keep === undefined || keep[i] === 1) out.push(p.record(i))
  return out
}

/**
 * One SQLite file, `<data.dir>/coordinator.db`, holding every shard's log in one table of batches
 * keyed by (shard, base offset). Offsets are per shard and only grow, so `load` returns append order.
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
  readonly #writeThread: boolean
  /** Compresses batch rows (zstd), unless the store was opened with `compression: 'none'`. */
  readonly #compressor: Compressor | undefined
  #db: Database.Database | undefined
  /** The worker thread that runs the appends, while the store is open with `writeThread`. */
  #writer: SqliteWriter | undefined
  /** Loads and compactions waiting for the writes in flight in the writer thread to end. */
  #draining = 0
  /** The lock on `coordinator.lock` while the store is open (see `#lock()`). */
  #heldLock: FileLock | undefined
  #checkpointer: WalCheckpointer | undefined
  #closing: Promise<void> | undefined
  /** Operations waiting, in call order, while the checkpointer holds the writes. */
  readonly #waiting: (() => void)[] = []
  #stmts: Statements | undefined
  #appendTx: ((shard: number, records: readonly CoordinatorRecord[]) => void) | undefined
  #appendBatchesTx: ((batches: readonly ShardBatch[]) => Map<number, number>) | undefined
  #compactTx: ((shard: number) => number) | undefined
  /** Next offset per shard, read lazily from the table on the shard's first append. */
  readonly #nextOffset = new Map<number, number>()
  #failNext: Error | undefined
  /** Where a batch's records are encoded before they go into its row (SQLite copies them). */
  #sink = new ByteSink(64 * 1024)

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
    this.#writeThread = options.writeThread ?? false
    const compression = options.compression ?? 'zstd'
    if (compression !== 'zstd' && compression !== 'none') {
      throw new StorageError('STORAGE_INVALID_ARGUMENT', `compression must be 'zstd' or 'none'`)
    }
    this.#compressor = rowCompressor(compression)
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
      db.pragma(`cache_size = ${PAGE_CACHE_SIZE}`)
      const version = db.pragma('user_version', { simple: true }) as number
      if (version > SCHEMA_VERSION) {
        throw new StorageError(
          'STORAGE_OPEN_FAILED',
          `${this.#path} has schema version ${version}, newer than this version of topograph understands (${SCHEMA_VERSION})`,
        )
      }
      // One row per append batch of a shard, as Kafka keeps coordinator records in record batches
      // of __consumer_offsets: a Streams-shaped commit's 20 records in one row cost less than half
      // the CPU of 20 rows (BENCHMARKS.md, "OffsetCommit: one SQLite row per batch"). `records`
      // holds the batch's records in Kafka's record format; each record's offset is `base_offset`
      // plus its offset delta, so offsets survive compaction (which rewrites a batch without its
      // dropped records). A table with a rowid, not WITHOUT ROWID: the latter is a B-tree of index
      // pages, which keep at most about 1,000 bytes of a row in the page (4 KiB pages) and the rest
      // in overflow pages, so a commit's 2 KB row would take two pages; a rowid table keeps up to
      // about 4,000 bytes in the leaf. The primary key is an index beside it (loading reads it in
      // order). `attributes` holds the records' codec as a Kafka record batch's attributes do: a
      // row of 512 bytes or more is stored compressed with zstd (schema version 3), because what a
      // commit costs here is mostly the bytes it writes, twice (into the WAL, then the checkpoint
      // into the database file): BENCHMARKS.md, "SQLite: compressed batch rows".
      db.exec(`
        CREATE TABLE IF NOT EXISTS coordinator_batches (
          shard INTEGER NOT NULL,
          base_offset INTEGER NOT NULL,
          last_offset INTEGER NOT NULL,
          record_count INTEGER NOT NULL,
          records BLOB NOT NULL,
          attributes INTEGER NOT NULL DEFAULT 0,
          PRIMARY KEY (shard, base_offset)
        );
      `)
      // Before the statements, which name `attributes`: a file of version 2 gets the column here.
      if (version < SCHEMA_VERSION) this.#migrate(db)
      const stmts: Statements = {
        insert: db.prepare(
          'INSERT INTO coordinator_batches (shard, base_offset, last_offset, record_count, attributes, records) VALUES (?, ?, ?, ?, ?, ?)',
        ),
        load: db.prepare(
          `SELECT base_offset AS base, last_offset AS last, record_count AS count, attributes, records
             FROM coordinator_batches WHERE shard = ? ORDER BY base_offset`,
        ),
        // Batches never overlap: the last one by base offset holds the shard's highest offset.
        lastOffset: db.prepare(
          'SELECT last_offset AS last FROM coordinator_batches WHERE shard = ? ORDER BY base_offset DESC LIMIT 1',
        ),
        rewrite: db.prepare(
          'UPDATE coordinator_batches SET record_count = ?, attributes = ?, records = ? WHERE shard = ? AND base_offset = ?',
        ),
        drop: db.prepare('DELETE FROM coordinator_batches WHERE shard = ? AND base_offset = ?'),
      }
      this.#appendTx = db.transaction((shard: number, records: readonly CoordinatorRecord[]) => {
        // The injected failure fires after the row was inserted, so the rollback path is exercised.
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
      this.#compactTx = db.transaction((shard: number) => this.#compactRows(stmts, shard))
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
    if (this.#writeThread) {
      try {
        this.#writer = await SqliteWriter.start({
          file: this.#path,
          synchronous: this.#synchronous === 'full' ? 'FULL' : 'NORMAL',
          journalSizeLimit: this.#walCheckpointBytes,
          cacheSize: PAGE_CACHE_SIZE,
          onLost: () => this.#writerLost(),
        })
      } catch {
        // No thread: the event loop commits, as with `writeThread: false`.
        this.#writer = undefined
      }
    }
  }

  /** The writer thread is gone: from now on the event loop commits (offsets are read afresh). */
  #writerLost(): void {
    this.#writer = undefined
    this.#nextOffset.clear()
    this.#runWaiting()
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

  /**
   * Test hook: ends the writer thread as if it had died. Its writes in flight fail; later ones
   * commit on the event loop.
   */
  killWriterThread(): Promise<void> {
    return this.#writer?.kill() ?? Promise.resolve()
  }

  /** Whether appends run in the writer thread now. */
  get writesOnThread(): boolean {
    return this.#writer !== undefined
  }

  /**
   * Whether an operation must wait: behind the writes the checkpointer holds, or behind a load or
   * compaction that waits for the writer thread's writes in flight.
   */
  #mustWait(): boolean {
    return this.#waiting.length > 0 || this.#checkpointer?.holding === true || this.#draining > 0
  }

  /**
   * Runs `op` (a load or a compaction, on this connection) once no write is in flight in the writer
   * thread: a load must see every append made before it, and two connections must never write at
   * once. Operations called meanwhile wait behind it, in call order.
   */
  #exclusively<T>(op: () => T): T | Promise<T> {
    const writer = this.#writer
    if (writer === undefined || writer.inFlight === 0) return op()
    this.#draining++
    return writer.idle().then(() => {
      this.#draining--
      try {
        return this.#exclusively(op)
      } finally {
        this.#runWaiting()
      }
    })
  }

  /** Runs `op` once the checkpointer lets the writes go, after every operation already waiting. */
  #later<T>(op: () => T | Promise<T>): Promise<T> {
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
    while (this.#waiting.length > 0 && this.#checkpointer?.holding !== true && this.#draining === 0) {
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
    return this.#appendNow(shard, records)
  }

  #appendNow(shard: number, records: readonly CoordinatorRecord[]): void | Promise<void> {
    if (this.#writer !== undefined) return this.#writeOnThread(this.#writer, [{ shard, records }])
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
    return this.#appendBatchesNow(batches)
  }

  #appendBatchesNow(batches: readonly ShardBatch[]): void | Promise<void> {
    if (this.#writer !== undefined) return this.#writeOnThread(this.#writer, batches)
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

  /**
   * An append or a group commit through the writer thread: the batch rows are encoded here into one
   * buffer of their own (the records are copied now, so callers may reuse theirs), which is handed
   * over with where each row ends; the promise settles once the worker's transaction committed or
   * rolled back. The failure hook is taken now, so it fails exactly this write.
   */
  #writeOnThread(writer: SqliteWriter, batches: readonly ShardBatch[]): Promise<void> {
    const injected = this.#failNext
    this.#failNext = undefined
    let bytes = 0
    let count = 0
    for (const b of batches) {
      bytes += recordBytes(b.records)
      count += b.records.length
    }
    // At most 23 bytes of framing a record (five varints and two single bytes), and a row is stored
    // compressed only when that is smaller: the buffer never grows.
    const sink = new ByteSink(bytes + 23 * count + 1)
    const meta = new Int32Array(4 * batches.length)
    const row = this.#sink
    for (let i = 0; i < batches.length; i++) {
      row.reset()
      encodeBatch(row, batches[i].records)
      const stored = rowBytes(this.#compressor, row.view())
      sink.writeBytes(stored.bytes)
      meta[4 * i] = batches[i].shard
      meta[4 * i + 1] = batches[i].records.length
      meta[4 * i + 2] = sink.length
      meta[4 * i + 3] = stored.attributes
    }
    this.#keepSink(row)
    const encoded = sink.reserve(0)
    return writer.write(meta, encoded, injected !== undefined).then(
      () => this.#checkpointer?.afterCommit(bytes),
      (cause: unknown) => {
        if (injected !== undefined && cause instanceof WriterFailure && cause.injected) throw injected
        const what = batches.length === 1 ? `append to shard ${batches[0].shard}` : 'group append'
        throw new StorageError('STORAGE_WRITE_FAILED', `${what} failed: ${(cause as Error).message}`, {
          cause,
        })
      },
    )
  }

  async load(shard: number, options?: LoadOptions): Promise<CoordinatorRecord[]> {
    if (this.#stmts === undefined) throw this.#notOpen()
    checkShard(shard)
    // Behind held writes and writes in flight, so that a load never misses an append made before it.
    const op = () => this.#exclusively(() => this.#loadNow(shard, options))
    if (this.#mustWait()) return this.#later(op)
    return op()
  }

  #loadNow(shard: number, options: LoadOptions | undefined): CoordinatorRecord[] {
    const stmts = this.#stmts
    if (stmts === undefined) throw this.#notOpen()
    try {
      // Every record's place first, then objects only for the records returned: under
      // `latestOnly` nearly all of a shard's offset commits are superseded, and are left out
      // before anything is made for them.
      const p = scanRows(stmts.load.all(shard))
      const latestOnly = options?.latestOnly
      return recordsAt(p, latestOnly === undefined ? undefined : latestMask(p, latestOnly))
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
    const op = () => this.#exclusively(() => this.#compactNow(shard))
    if (this.#mustWait()) return this.#later(op)
    return op()
  }

  #compactNow(shard: number): void {
    const tx = this.#compactTx
    if (tx === undefined) throw this.#notOpen()
    let written: number
    try {
      written = tx(shard)
    } catch (cause) {
      throw new StorageError(
        'STORAGE_WRITE_FAILED',
        `compaction of shard ${shard} failed: ${(cause as Error).message}`,
        { cause },
      )
    }
    this.#checkpointer?.afterCommit(written)
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
    // The writer thread's connection closes after its writes in flight (and those just released).
    const writer = this.#writer
    await writer?.close()
    this.#writer = undefined
    this.#runWaiting()
    this.#db = undefined
    this.#stmts = undefined
    this.#appendTx = undefined
    this.#appendBatchesTx = undefined
    this.#compactTx = undefined
    this.#nextOffset.clear()
    db.close()
    // Only now: closing them earlier would drop this connection's locks on the file.
    checkpointer?.closeFiles()
    this.#heldLock?.release()
    this.#heldLock = undefined
  }

  /**
   * Inserts `records` as one batch row at `offset` on; returns the next offset. Runs inside a
   * transaction. An empty batch leaves no row.
   */
  #insert(stmts: Statements, shard: number, offset: number, records: readonly CoordinatorRecord[]): number {
    const n = records.length
    if (n === 0) return offset
    const sink = this.#sink
    sink.reset()
    encodeBatch(sink, records)
    const row = rowBytes(this.#compressor, sink.view())
    stmts.insert.run(shard, offset, offset + n - 1, n, row.attributes, row.bytes)
    this.#keepSink(sink)
    return offset + n
  }

  /** Drops an encoding buffer a large batch grew, so that one large value is not held for good. */
  #keepSink(sink: ByteSink): void {
    if (sink.length > KEPT_SINK_BYTES) this.#sink = new ByteSink(64 * 1024)
  }

  #offsetFor(shard: number, stmts: Statements): number {
    let next = this.#nextOffset.get(shard)
    if (next === undefined) {
      const last = stmts.lastOffset.get(shard)?.last
      next = last === undefined ? 0 : last + 1
    }
    return next
  }

  /**
   * Compaction, inside a transaction: every batch row of the shard is read, and a row that holds a
   * record which is not the last of its key, or a key whose last record is a tombstone, is written
   * again without those records (each kept record keeps its offset, through its offset delta) or,
   * left empty, deleted. A row keeps its `last_offset`, so the shard's offsets never go back.
   * Returns the bytes written.
   */
  #compactRows(stmts: Statements, shard: number): number {
    const rows = stmts.load.all(shard)
    const deltas: number[] = []
    const p = scanRows(rows, deltas)
    // Live: the last record of its key, and not a tombstone.
    const live = latestMask(p, EVERY_KEY)
    let written = 0
    let i = 0
    for (const row of rows) {
      const kept: CoordinatorRecord[] = []
      const keptDeltas: number[] = []
      for (let j = 0; j < row.count; j++, i++) {
        if (live[i] === 1) {
          kept.push(p.record(i))
          keptDeltas.push(deltas[i])
        }
      }
      if (kept.length === row.count) continue
      if (kept.length === 0) {
        stmts.drop.run(shard, row.base)
        continue
      }
      const sink = this.#sink
      sink.reset()
      encodeBatch(sink, kept, keptDeltas)
      const stored = rowBytes(this.#compressor, sink.view())
      stmts.rewrite.run(kept.length, stored.attributes, stored.bytes, shard, row.base)
      written += stored.bytes.length
      this.#keepSink(sink)
    }
    return written
  }

  /**
   * Brings a file of an older schema version to this one, in one transaction with the new version
   * number: a crash leaves either file whole.
   *
   * - Version 2's batch rows get the `attributes` column, 0 (uncompressed) for every row they hold.
   * - Version 1's rows (`coordinator_records`, one row per record) move into batch rows.
   *   Consecutive records of a shard go into one row (up to `MIGRATE_BATCH_RECORDS` records or
   *   `MIGRATE_BATCH_BYTES`, uncompressed), each at its own offset (its delta from the row's base
   *   offset), so the order, the offsets and the gaps that compaction left stay as they were.
   */
  #migrate(db: Database.Database): void {
    const old = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'coordinator_records'")
      .get()
    const columns = db.prepare<[], { name: string }>('PRAGMA table_info(coordinator_batches)').all()
    db.transaction(() => {
      if (!columns.some((c) => c.name === 'attributes'))
        db.exec('ALTER TABLE coordinator_batches ADD COLUMN attributes INTEGER NOT NULL DEFAULT 0')
      if (old !== undefined) {
        const insert = db.prepare<[number, number, number, number, Uint8Array]>(
          'INSERT INTO coordinator_batches (shard, base_offset, last_offset, record_count, records) VALUES (?, ?, ?, ?, ?)',
        )
        const page = db.prepare<
          [number, number],
          { shard: number; offset: number; key: Buffer; value: Buffer | null }
        >(
          `SELECT shard, offset, key, value FROM coordinator_records
             WHERE (shard, offset) > (?, ?) ORDER BY shard, offset LIMIT 4096`,
        )
        const sink = new ByteSink(64 * 1024)
        let shard = -1
        let base = 0
        let last = 0
        let count = 0
        const flush = () => {
          if (count > 0) insert.run(shard, base, last, count, sink.view())
          sink.reset()
          count = 0
        }
        for (let rows = page.all(-1, -1); rows.length > 0; rows = page.all(shard, last)) {
          for (const row of rows) {
            if (row.shard !== shard || count >= MIGRATE_BATCH_RECORDS || sink.length >= MIGRATE_BATCH_BYTES) {
              flush()
              shard = row.shard
              base = row.offset
            }
            writeRecord(sink, {
              timestampDelta: 0,
              offsetDelta: row.offset - base,
              key: row.key,
              value: row.value,
            })
            last = row.offset
            count++
          }
        }
        flush()
        db.exec('DROP TABLE coordinator_records')
      }
      db.pragma(`user_version = ${SCHEMA_VERSION}`)
    })()
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
