import { latestOf } from './latest.js'
import pg from 'pg'
import { redactPostgresUrl } from '../../config/index.js'
import { checkRecords, checkShard, injectedFailure, StorageError } from './errors.js'
import type { CoordinatorRecord, FaultInjection, RecordStore, ShardBatch, LoadOptions } from './types.js'

/** The table of every shard's log, in the first schema of the connection's search_path. */
export const POSTGRES_RECORDS_TABLE = 'topograph_coordinator_records'
/** One row: the schema version and the generation of the server that owns the store. */
export const POSTGRES_META_TABLE = 'topograph_coordinator_meta'
/** The upper 32 bits of the advisory lock key ('Topo'); the lower 32 are the records table's OID. */
export const POSTGRES_LOCK_CLASS = 0x546f706f

/** The schema version this code writes (`schema_version` in the meta table); a newer one is refused. */
const SCHEMA_VERSION = 1
/** Largest number of records, and of value bytes, sent in one INSERT (a longer batch is split). */
const CHUNK_ROWS = 1000
const CHUNK_BYTES = 16 << 20
/** Batches of up to this many records use a named statement, prepared once per connection. */
const PREPARED_ROWS = 16
/** How long re-taking a lost lock waits for the lost session's backend to end. */
const RELOCK_WAIT_MS = 1_000

export interface PostgresRecordStoreOptions {
  /** Connections of the pool that appends, loads and compactions use (default 8). */
  readonly poolSize?: number
  /** Bound on opening a connection, and on waiting for a free one in the pool (default 10 000). */
  readonly connectTimeoutMs?: number
  /** Bound on one statement, on the client and the server (default 30 000). */
  readonly queryTimeoutMs?: number
  /** How long `open()` waits for the lock of a store another session holds (default 5 000). */
  readonly lockWaitMs?: number
  /** Rows per fetch when loading a shard (default 10 000). */
  readonly loadBatchRows?: number
  /** Where losing and re-taking the lock is reported; pino-compatible. */
  readonly logger?: PostgresStoreLogger
}

export interface PostgresStoreLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

const SILENT: PostgresStoreLogger = { info() {}, warn() {}, error() {} }

/** The URL without its password (user info or `password=` parameter), for messages and logs. */
export { redactPostgresUrl }

function errorText(e: unknown): string {
  if (e instanceof Error) {
    // node-postgres reports a refused connection as an AggregateError with an empty message.
    if (e.message !== '') return e.message
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
    if (e instanceof AggregateError && e.errors.length > 0) return errorText(e.errors[0])
    return e.name
  }
  return String(e)
}

function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

function positiveInt(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback
  if (!Number.isSafeInteger(v) || v < 1) {
    throw new StorageError('STORAGE_INVALID_ARGUMENT', `${name} must be a positive integer, got ${String(v)}`)
  }
  return v
}

/** `INSERT` of `rows` records at the shard's next offsets, only while the store is ours (see `#append`). */
function insertSql(rows: number): string {
  const tuples: string[] = []
  for (let i = 0; i < rows; i++) tuples.push(`(${i}, $${3 + 2 * i}::bytea, $${4 + 2 * i}::bytea)`)
  return `INSERT INTO ${POSTGRES_RECORDS_TABLE} (shard, record_offset, key, value)
    SELECT $1::bigint, b.base + v.i, v.k, v.v
    FROM (SELECT COALESCE(MAX(record_offset) + 1, 0) AS base FROM ${POSTGRES_RECORDS_TABLE} WHERE shard = $1::bigint) b,
         (VALUES ${tuples.join(', ')}) AS v (i, k, v)
    WHERE EXISTS (SELECT 1 FROM ${POSTGRES_META_TABLE} WHERE id = 1 AND generation = $2::bigint)`
}

/**
 * `INSERT` of a group commit: `rows` records of several shards, each at its shard's next offsets
 * (`i` counts a shard's records in the statement; the statement's snapshot does not see its own
 * rows, so every row of a shard reads the same base), only while the store is ours.
 */
function groupInsertSql(rows: number): string {
  const tuples: string[] = []
  for (let i = 0; i < rows; i++) {
    const p = 2 + 4 * i
    tuples.push(`($${p}::bigint, $${p + 1}::int, $${p + 2}::bytea, $${p + 3}::bytea)`)
  }
  return `INSERT INTO ${POSTGRES_RECORDS_TABLE} (shard, record_offset, key, value)
    SELECT v.s, b.base + v.i, v.k, v.v
    FROM (VALUES ${tuples.join(', ')}) AS v (s, i, k, v)
    CROSS JOIN LATERAL (SELECT COALESCE(MAX(record_offset) + 1, 0) AS base
                        FROM ${POSTGRES_RECORDS_TABLE} WHERE shard = v.s) b
    WHERE EXISTS (SELECT 1 FROM ${POSTGRES_META_TABLE} WHERE id = 1 AND generation = $1::bigint)`
}

const LOAD_SQL = `SELECT record_offset, key, value FROM ${POSTGRES_RECORDS_TABLE}
  WHERE shard = $1::bigint AND record_offset > $2::bigint ORDER BY record_offset LIMIT $3`

// One statement, so one snapshot: the rows that are not the last of their key, and the last ones
// that are tombstones, go together. A tombstone never outlives what it superseded (as in SQLite's
// compaction, there in one transaction). Nothing is deleted unless the store is still ours.
const COMPACT_SQL = `WITH owner AS (SELECT generation FROM ${POSTGRES_META_TABLE} WHERE id = 1),
  dropped AS (
    DELETE FROM ${POSTGRES_RECORDS_TABLE} r
    USING (
      SELECT record_offset FROM (
        SELECT record_offset, value IS NULL AS tombstone,
               record_offset = MAX(record_offset) OVER (PARTITION BY key) AS last
        FROM ${POSTGRES_RECORDS_TABLE} WHERE shard = $1::bigint
      ) x WHERE NOT last OR tombstone
    ) d
    WHERE r.shard = $1::bigint AND r.record_offset = d.record_offset
      AND (SELECT generation FROM owner) = $2::bigint
    RETURNING 1
  )
  SELECT (SELECT generation FROM owner) AS generation, (SELECT count(*) FROM dropped) AS dropped`

/** What an open store holds; replaced on every open, so work queued before a close keeps its own. */
interface Session {
  readonly pool: pg.Pool
  /** The advisory lock's key, as a decimal string (int8). */
  readonly lockKey: string
  /** The generation this store wrote into the meta table when it took the store. */
  readonly generation: string
  /** The connection holding the session-level advisory lock; undefined after it was lost. */
  lock: pg.Client | undefined
  /** Single flight of re-taking a lost lock. */
  relock: Promise<void> | undefined
  /** Set when another server took the store: every later write fails with it. */
  fenced: StorageError | undefined
  closing: boolean
}

/**
 * PostgreSQL engine of `coordinator.storage=postgres://…`: every shard's log in one table keyed by
 * (shard, record_offset), offsets per shard that only grow, so `load` returns append order.
 *
 * - Appends, loads and compactions of one shard run one after another in call order (a promise
 *   chain per shard); different shards run at once over a pool of connections.
 * - An append is one INSERT statement (one transaction), or BEGIN … COMMIT around several when the
 *   batch is long. A group commit (appendBatches) is one INSERT of every shard's records. Offsets come from the shard's current maximum inside the statement, so a failed
 *   or rolled-back append leaves no gap and nothing to forget.
 * - One server per store: open() takes a session-level advisory lock on a dedicated connection and
 *   fails with STORAGE_OPEN_FAILED when another session holds it. If that connection is lost, the
 *   lock is taken again before the next write. The lock alone cannot stop a server that lost it
 *   from writing while another took over, so open() also bumps a generation in the meta table
 *   (after every in-flight write of a previous owner committed), and every write carries the
 *   generation it expects: a store whose generation is not the current one writes nothing and fails.
 */
export class PostgresRecordStore implements RecordStore, FaultInjection {
  readonly #url: string
  readonly #shownUrl: string
  readonly #poolSize: number
  readonly #connectTimeoutMs: number
  readonly #queryTimeoutMs: number
  readonly #lockWaitMs: number
  readonly #loadBatchRows: number
  readonly #logger: PostgresStoreLogger
  #session: Session | undefined
  #opening: Promise<void> | undefined
  #closing: Promise<void> | undefined
  /** The last operation queued per shard; settles (never rejects) when it is done. */
  readonly #tails = new Map<number, Promise<void>>()
  #failNext: Error | undefined

  constructor(url: string, options: PostgresRecordStoreOptions = {}) {
    if (typeof url !== 'string' || !/^postgres(ql)?:\/\/./.test(url)) {
      throw new StorageError(
        'STORAGE_INVALID_ARGUMENT',
        'the PostgreSQL record store needs a postgres:// or postgresql:// URL',
      )
    }
    this.#url = url
    this.#shownUrl = redactPostgresUrl(url)
    this.#poolSize = positiveInt('poolSize', options.poolSize, 8)
    this.#connectTimeoutMs = positiveInt('connectTimeoutMs', options.connectTimeoutMs, 10_000)
    this.#queryTimeoutMs = positiveInt('queryTimeoutMs', options.queryTimeoutMs, 30_000)
    this.#lockWaitMs = positiveInt('lockWaitMs', options.lockWaitMs, 5_000)
    this.#loadBatchRows = positiveInt('loadBatchRows', options.loadBatchRows, 10_000)
    this.#logger = options.logger ?? SILENT
  }

  /** The connection URL with its password hidden. */
  get url(): string {
    return this.#shownUrl
  }

  async open(): Promise<void> {
    if (this.#session !== undefined) return
    if (this.#closing !== undefined) await this.#closing
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined
    })
    await this.#opening
  }

  async #open(): Promise<void> {
    const pool = new pg.Pool({
      connectionString: this.#url,
      max: this.#poolSize,
      // Also bounds the wait for a free connection, so appends fail instead of queueing forever.
      connectionTimeoutMillis: this.#connectTimeoutMs,
      query_timeout: this.#queryTimeoutMs,
      statement_timeout: this.#queryTimeoutMs,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'topograph-coordinator',
    })
    // An idle connection the server drops (restart, pg_terminate_backend) emits 'error' on the pool;
    // without a listener that would end the process. The pool discards it and connects anew later.
    pool.on('error', (e) => {
      this.#logger.warn(
        { err: errorText(e) },
        'A pooled PostgreSQL connection of the coordinator storage was lost',
      )
    })
    let lock: pg.Client | undefined
    try {
      lock = await this.#connectLock()
      const lockKey = await this.#prepareSchema(lock)
      await this.#takeLock(lock, lockKey, this.#lockWaitMs)
      const generation = await this.#claim(lock)
      const session: Session = {
        pool,
        lockKey,
        generation,
        lock,
        relock: undefined,
        fenced: undefined,
        closing: false,
      }
      this.#watchLock(session, lock)
      this.#session = session
      this.#logger.info(
        { url: this.#shownUrl, generation },
        'Opened the PostgreSQL coordinator storage and took its lock',
      )
    } catch (cause) {
      await lock?.end().catch(() => undefined)
      await pool.end().catch(() => undefined)
      if (cause instanceof StorageError) throw cause
      throw new StorageError(
        'STORAGE_OPEN_FAILED',
        `cannot open the PostgreSQL coordinator storage at ${this.#shownUrl}: ${errorText(cause)}`,
        { cause },
      )
    }
  }

  /** A connection of its own for the advisory lock (a pooled one would be recycled). */
  async #connectLock(): Promise<pg.Client> {
    const lock = new pg.Client({
      connectionString: this.#url,
      connectionTimeoutMillis: this.#connectTimeoutMs,
      // Waiting for the lock is bounded by lock_timeout on the server; this only catches silence.
      query_timeout: Math.max(this.#queryTimeoutMs, this.#lockWaitMs + 5_000),
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'topograph-coordinator-lock',
    })
    // Errors of a connection that dies while idle; handled by #watchLock once the store is open.
    lock.on('error', () => undefined)
    await lock.connect()
    // The server notices a vanished client (host down, network gone) within about 25 s instead of
    // the operating system's 2 h, so its lock does not outlive it for long. Ignored over Unix sockets.
    await lock.query(
      'SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3',
    )
    return lock
  }

  /** Creates the tables when missing; returns the lock key of this schema's store. */
  async #prepareSchema(lock: pg.Client): Promise<string> {
    const schema = (await lock.query<{ s: string | null }>('SELECT current_schema() AS s')).rows[0]?.s
    if (schema === null || schema === undefined) {
      throw new StorageError(
        'STORAGE_OPEN_FAILED',
        `cannot open the PostgreSQL coordinator storage at ${this.#shownUrl}: no schema of the search_path exists`,
      )
    }
    const ddl = `
      CREATE TABLE IF NOT EXISTS ${POSTGRES_RECORDS_TABLE} (
        shard bigint NOT NULL,
        record_offset bigint NOT NULL,
        key bytea NOT NULL,
        value bytea,
        PRIMARY KEY (shard, record_offset)
      );
      CREATE TABLE IF NOT EXISTS ${POSTGRES_META_TABLE} (
        id smallint PRIMARY KEY CHECK (id = 1),
        schema_version integer NOT NULL,
        generation bigint NOT NULL
      )`
    try {
      await lock.query(ddl)
    } catch (e) {
      // Two servers creating the tables at the same moment: one of them can see a unique violation
      // on the catalog despite IF NOT EXISTS. The tables exist afterwards, so a second try succeeds.
      const code = sqlState(e)
      if (code !== '23505' && code !== '42P07') throw e
      await lock.query(ddl)
    }
    // The key names this very table, so stores in different schemas or databases never collide.
    const oid = (
      await lock.query<{ oid: string }>(`SELECT '${POSTGRES_RECORDS_TABLE}'::regclass::oid::bigint AS oid`)
    ).rows[0].oid
    return String((BigInt(POSTGRES_LOCK_CLASS) << 32n) | BigInt(oid))
  }

  /** Takes the session-level advisory lock, waiting at most `waitMs` for another holder. */
  async #takeLock(lock: pg.Client, lockKey: string, waitMs: number): Promise<void> {
    try {
      await lock.query(`SET lock_timeout = ${waitMs}`)
      await lock.query('SELECT pg_advisory_lock($1::bigint)', [lockKey])
    } catch (e) {
      if (sqlState(e) !== '55P03') throw e
      throw new StorageError('STORAGE_OPEN_FAILED', await this.#lockedMessage(lock, lockKey, waitMs), {
        cause: e,
      })
    } finally {
      await lock.query('RESET lock_timeout').catch(() => undefined)
    }
  }

  async #lockedMessage(lock: pg.Client, lockKey: string, waitMs: number): Promise<string> {
    const key = BigInt(lockKey)
    const holder = await lock
      .query<{ pid: number; app: string | null; addr: string | null; since: Date | null }>(
        `SELECT a.pid, a.application_name AS app, host(a.client_addr) AS addr, a.backend_start AS since
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
           AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [String(key >> 32n), String(key & 0xffffffffn)],
      )
      .then((r) => r.rows[0])
      .catch(() => undefined)
    const who =
      holder === undefined
        ? ''
        : ` (held by backend ${holder.pid}${holder.app ? ` of ${holder.app}` : ''}${holder.addr ? ` from ${holder.addr}` : ''}${holder.since ? ` since ${holder.since.toISOString()}` : ''})`
    return (
      `the PostgreSQL coordinator storage at ${this.#shownUrl} is locked: another Topograph server is using it${who}; ` +
      `waited ${waitMs} ms`
    )
  }

  /**
   * Makes the store ours: waits until no write of a previous owner is in flight (SHARE mode conflicts
   * with every INSERT and DELETE), then bumps the generation, so that a previous owner's later writes
   * see a generation that is not theirs and write nothing. Returns the new generation.
   */
  async #claim(lock: pg.Client): Promise<string> {
    await lock.query('BEGIN')
    try {
      await lock.query(`LOCK TABLE ${POSTGRES_RECORDS_TABLE} IN SHARE MODE`)
      const row = (
        await lock.query<{ schema_version: number; generation: string }>(
          `INSERT INTO ${POSTGRES_META_TABLE} (id, schema_version, generation) VALUES (1, $1, 1)
           ON CONFLICT (id) DO UPDATE SET generation = ${POSTGRES_META_TABLE}.generation + 1
           RETURNING schema_version, generation`,
          [SCHEMA_VERSION],
        )
      ).rows[0]
      if (row.schema_version > SCHEMA_VERSION) {
        throw new StorageError(
          'STORAGE_OPEN_FAILED',
          `the PostgreSQL coordinator storage at ${this.#shownUrl} has schema version ${row.schema_version}, newer than this version of topograph understands (${SCHEMA_VERSION})`,
        )
      }
      await lock.query('COMMIT')
      return row.generation
    } catch (e) {
      await lock.query('ROLLBACK').catch(() => undefined)
      throw e
    }
  }

  #watchLock(session: Session, lock: pg.Client): void {
    const lost = (e?: unknown) => {
      if (session.lock !== lock) return
      session.lock = undefined
      lock.end().catch(() => undefined)
      if (!session.closing) {
        this.#logger.warn(
          { err: e === undefined ? 'connection ended' : errorText(e), url: this.#shownUrl },
          'Lost the PostgreSQL connection holding the coordinator storage lock; it is taken again before the next write',
        )
      }
    }
    lock.on('error', lost)
    lock.on('end', () => lost())
  }

  /** Re-takes a lost lock (once for all shards); then the store must still be ours. */
  async #ensureLock(s: Session): Promise<void> {
    if (s.fenced !== undefined) throw s.fenced
    if (s.lock !== undefined) return
    s.relock ??= (async () => {
      let lock: pg.Client | undefined
      try {
        lock = await this.#connectLock()
        // Only the lost session's backend can be in the way for long as it ends: a short wait.
        await this.#takeLock(lock, s.lockKey, Math.min(this.#lockWaitMs, RELOCK_WAIT_MS))
        const current = (
          await lock.query<{ generation: string }>(
            `SELECT generation FROM ${POSTGRES_META_TABLE} WHERE id = 1`,
          )
        ).rows[0]?.generation
        if (s.closing) {
          await lock.end().catch(() => undefined)
          return
        }
        if (current !== s.generation) {
          await lock.end().catch(() => undefined)
          this.#fence(s, current)
          return
        }
        s.lock = lock
        this.#watchLock(s, lock)
        this.#logger.info({ url: this.#shownUrl }, 'Took the PostgreSQL coordinator storage lock again')
      } catch (e) {
        await lock?.end().catch(() => undefined)
        throw new StorageError(
          'STORAGE_WRITE_FAILED',
          `cannot take the lock of the PostgreSQL coordinator storage at ${this.#shownUrl} again: ${errorText(e)}`,
          { cause: e },
        )
      }
    })().finally(() => {
      s.relock = undefined
    })
    await s.relock
    if (s.fenced !== undefined) throw s.fenced
  }

  #fence(s: Session, current: string | undefined): StorageError {
    if (s.fenced === undefined) {
      s.fenced = new StorageError(
        'STORAGE_WRITE_FAILED',
        `the PostgreSQL coordinator storage at ${this.#shownUrl} was taken over by another Topograph server ` +
          `(generation ${current ?? 'unknown'}, this server's ${s.generation}); this server writes nothing more to it`,
      )
      this.#logger.error({ url: this.#shownUrl }, s.fenced.message)
    }
    return s.fenced
  }

  failNextAppend(error?: Error): void {
    this.#failNext = error ?? injectedFailure()
  }

  append(shard: number, records: readonly CoordinatorRecord[]): Promise<void> {
    try {
      const s = this.#openSession()
      checkShard(shard)
      checkRecords(records)
      // Copied now: the caller may reuse its buffers as soon as this returns. Buffers go to the
      // server as binary parameters.
      const copies = records.map((r) => ({
        key: Buffer.from(r.key),
        value: r.value === null ? null : Buffer.from(r.value),
      }))
      const injected = this.#failNext
      this.#failNext = undefined
      return this.#inShardOrder(shard, () => this.#append(s, shard, copies, injected))
    } catch (e) {
      return Promise.reject(e)
    }
  }

  appendBatches(batches: readonly ShardBatch[]): Promise<void> {
    try {
      const s = this.#openSession()
      if (!Array.isArray(batches as unknown)) {
        throw new StorageError('STORAGE_INVALID_ARGUMENT', 'batches must be an array')
      }
      for (const b of batches) {
        checkShard(b.shard)
        checkRecords(b.records)
      }
      // Copied now, as in append.
      const copies = batches.map((b) => ({
        shard: b.shard,
        records: b.records.map((r) => ({
          key: Buffer.from(r.key),
          value: r.value === null ? null : Buffer.from(r.value),
        })),
      }))
      const injected = this.#failNext
      this.#failNext = undefined
      const shards = [...new Set(copies.map((b) => b.shard))]
      return this.#inShardsOrder(shards, () => this.#appendBatches(s, copies, injected))
    } catch (e) {
      return Promise.reject(e)
    }
  }

  /** A group commit: one INSERT (one round trip) when it fits, else one transaction of chunks. */
  async #appendBatches(
    s: Session,
    batches: readonly { shard: number; records: readonly { key: Buffer; value: Buffer | null }[] }[],
    injected: Error | undefined,
  ): Promise<void> {
    const rows: { shard: number; i: number; key: Buffer; value: Buffer | null }[] = []
    const counts = new Map<number, number>()
    let bytes = 0
    for (const b of batches) {
      for (const r of b.records) {
        const i = counts.get(b.shard) ?? 0
        counts.set(b.shard, i + 1)
        rows.push({ shard: b.shard, i, key: r.key, value: r.value })
        bytes += r.key.byteLength + (r.value?.byteLength ?? 0)
      }
    }
    if (injected !== undefined && rows.length === 0) throw injected
    if (rows.length === 0) return
    try {
      await this.#ensureLock(s)
      if (injected === undefined && rows.length <= CHUNK_ROWS && bytes <= CHUNK_BYTES) {
        const values: unknown[] = [s.generation]
        for (const r of rows) values.push(r.shard, r.i, r.key, r.value)
        const r = await s.pool.query({ text: groupInsertSql(rows.length), values })
        if (r.rowCount !== rows.length) throw await this.#fenceFromDatabase(s)
        return
      }
      await this.#insertInTransaction(s, batches, injected)
    } catch (cause) {
      if (cause instanceof StorageError || (injected !== undefined && cause === injected)) throw cause
      throw new StorageError('STORAGE_WRITE_FAILED', `group append failed: ${errorText(cause)}`, { cause })
    }
  }

  /** The batches' records in chunks of INSERTs between BEGIN and COMMIT, on one connection. */
  async #insertInTransaction(
    s: Session,
    batches: readonly { shard: number; records: readonly { key: Buffer; value: Buffer | null }[] }[],
    injected: Error | undefined,
  ): Promise<void> {
    const client = await s.pool.connect()
    let broken: unknown
    try {
      await client.query('BEGIN')
      for (const b of batches) {
        for (const chunk of chunked(b.records)) {
          const r = await client.query(this.#insert(b.shard, s.generation, chunk))
          if (r.rowCount !== chunk.length) throw await this.#fenceFromDatabase(s)
          // The injected failure fires after rows were inserted, so the rollback path is exercised.
          if (injected !== undefined) throw injected
        }
      }
      await client.query('COMMIT')
    } catch (e) {
      broken = e
      await client.query('ROLLBACK').catch(() => undefined)
      throw e
    } finally {
      // A connection that failed mid-transaction is discarded rather than trusted again.
      client.release(broken instanceof StorageError || broken === injected ? undefined : (broken as Error))
    }
  }

  async #append(
    s: Session,
    shard: number,
    records: readonly { readonly key: Buffer; readonly value: Buffer | null }[],
    injected: Error | undefined,
  ): Promise<void> {
    if (injected !== undefined && records.length === 0) throw injected
    if (records.length === 0) return
    try {
      await this.#ensureLock(s)
      const chunks = chunked(records)
      if (chunks.length === 1 && injected === undefined) {
        // One statement is one transaction: no BEGIN/COMMIT round trips.
        const r = await s.pool.query(this.#insert(shard, s.generation, chunks[0]))
        if (r.rowCount !== records.length) throw await this.#fenceFromDatabase(s)
        return
      }
      await this.#insertInTransaction(s, [{ shard, records }], injected)
    } catch (cause) {
      if (cause instanceof StorageError || (injected !== undefined && cause === injected)) throw cause
      // When a connection is lost during the commit, the batch may have been written even though
      // this append fails; a later load returns it. Nothing of the batch was replayed here.
      throw new StorageError('STORAGE_WRITE_FAILED', `append to shard ${shard} failed: ${errorText(cause)}`, {
        cause,
      })
    }
  }

  #insert(
    shard: number,
    generation: string,
    chunk: readonly { readonly key: Buffer; readonly value: Buffer | null }[],
  ): pg.QueryConfig {
    const values: unknown[] = [shard, generation]
    for (const r of chunk) values.push(r.key, r.value)
    const n = chunk.length
    return n <= PREPARED_ROWS
      ? { name: `topograph-append-${n}`, text: insertSqlCached(n), values }
      : { text: insertSql(n), values }
  }

  /** After a write that wrote nothing: the store is someone else's now. */
  async #fenceFromDatabase(s: Session): Promise<StorageError> {
    const current = await s.pool
      .query<{ generation: string }>(`SELECT generation FROM ${POSTGRES_META_TABLE} WHERE id = 1`)
      .then((r) => r.rows[0]?.generation)
      .catch(() => undefined)
    return this.#fence(s, current)
  }

  load(shard: number, options?: LoadOptions): Promise<CoordinatorRecord[]> {
    try {
      const s = this.#openSession()
      checkShard(shard)
      const latestOnly = options?.latestOnly
      return this.#inShardOrder(shard, async () => {
        const records = await this.#load(s, shard)
        // node-postgres makes every row's objects as it parses the answer: the superseded ones are
        // left out after it.
        return latestOnly === undefined ? records : latestOf(records, latestOnly)
      })
    } catch (e) {
      return Promise.reject(e)
    }
  }

  async #load(s: Session, shard: number): Promise<CoordinatorRecord[]> {
    const out: CoordinatorRecord[] = []
    try {
      // Pages by offset: no page holds more than loadBatchRows rows. Writes of this shard wait in its
      // queue meanwhile, so the pages make up one consistent log.
      let after = '-1'
      for (;;) {
        const r = await s.pool.query<[string, Buffer, Buffer | null]>({
          name: 'topograph-load',
          text: LOAD_SQL,
          values: [shard, after, this.#loadBatchRows],
          rowMode: 'array',
        })
        const rows = r.rows
        for (let i = 0; i < rows.length; i++) out.push({ key: rows[i][1], value: rows[i][2] })
        if (rows.length < this.#loadBatchRows) return out
        after = rows[rows.length - 1][0]
      }
    } catch (cause) {
      throw new StorageError('STORAGE_READ_FAILED', `load of shard ${shard} failed: ${errorText(cause)}`, {
        cause,
      })
    }
  }

  compact(shard: number): Promise<void> {
    try {
      const s = this.#openSession()
      checkShard(shard)
      return this.#inShardOrder(shard, () => this.#compact(s, shard))
    } catch (e) {
      return Promise.reject(e)
    }
  }

  async #compact(s: Session, shard: number): Promise<void> {
    try {
      await this.#ensureLock(s)
      const r = await s.pool.query<{ generation: string | null }>({
        name: 'topograph-compact',
        text: COMPACT_SQL,
        values: [shard, s.generation],
      })
      const current = r.rows[0]?.generation ?? undefined
      if (current !== s.generation) throw this.#fence(s, current)
    } catch (cause) {
      if (cause instanceof StorageError) throw cause
      throw new StorageError(
        'STORAGE_WRITE_FAILED',
        `compaction of shard ${shard} failed: ${errorText(cause)}`,
        { cause },
      )
    }
  }

  async close(): Promise<void> {
    if (this.#opening !== undefined) await this.#opening.catch(() => undefined)
    const s = this.#session
    if (s === undefined) {
      await this.#closing
      return
    }
    this.#session = undefined
    s.closing = true
    this.#closing = (async () => {
      // Operations queued before the close run to their end.
      await Promise.all(this.#tails.values())
      await s.relock?.catch(() => undefined)
      const lock = s.lock
      s.lock = undefined
      if (lock !== undefined) {
        // Unlocked before the connection ends, so a server started right after finds it free.
        await lock.query('SELECT pg_advisory_unlock($1::bigint)', [s.lockKey]).catch(() => undefined)
        await lock.end().catch(() => undefined)
      }
      await s.pool.end().catch(() => undefined)
    })().finally(() => {
      this.#closing = undefined
    })
    await this.#closing
  }

  #openSession(): Session {
    const s = this.#session
    if (s === undefined) {
      throw new StorageError(
        'STORAGE_NOT_OPEN',
        `the PostgreSQL record store at ${this.#shownUrl} is not open`,
      )
    }
    return s
  }

  /** Runs `work` after every operation queued before on the same shard. */
  /** `work` after everything queued on any of `shards`, and before what is queued on them next. */
  #inShardsOrder<T>(shards: readonly number[], work: () => Promise<T>): Promise<T> {
    const previous = shards.map((shard) => this.#tails.get(shard)).filter((t) => t !== undefined)
    const run = previous.length === 0 ? work() : Promise.all(previous).then(work)
    const tail = run.then(
      () => undefined,
      () => undefined,
    )
    for (const shard of shards) {
      this.#tails.set(shard, tail)
      tail.then(() => {
        if (this.#tails.get(shard) === tail) this.#tails.delete(shard)
      })
    }
    return run
  }

  #inShardOrder<T>(shard: number, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(shard)
    const run = previous === undefined ? work() : previous.then(work)
    const tail = run.then(
      () => undefined,
      () => undefined,
    )
    this.#tails.set(shard, tail)
    tail.then(() => {
      if (this.#tails.get(shard) === tail) this.#tails.delete(shard)
    })
    return run
  }
}

const insertSqlByRows: string[] = []
function insertSqlCached(rows: number): string {
  let sql = insertSqlByRows[rows]
  if (sql === undefined) {
    sql = insertSql(rows)
    insertSqlByRows[rows] = sql
  }
  return sql
}

/** Splits a batch into INSERTs of at most CHUNK_ROWS records and about CHUNK_BYTES of values. */
function chunked<T extends { readonly key: Buffer; readonly value: Buffer | null }>(
  records: readonly T[],
): T[][] {
  const chunks: T[][] = []
  let current: T[] = []
  let bytes = 0
  for (const r of records) {
    const size = r.key.byteLength + (r.value?.byteLength ?? 0)
    if (current.length > 0 && (current.length >= CHUNK_ROWS || bytes + size > CHUNK_BYTES)) {
      chunks.push(current)
      current = []
      bytes = 0
    }
    current.push(r)
    bytes += size
  }
  if (current.length > 0) chunks.push(current)
  return chunks
}
