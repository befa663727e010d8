// The raw scans the replay benches (replay.ts, replay-groups.ts) measure loading against: the
// SQLite file's batch rows read with better-sqlite3, and the PostgreSQL peer's rows read with
// node-postgres from a schema of the bench's own on the server TOPOGRAPH_TEST_PG_URL names. The
// row decoding comes from the build under test (src/, or dist/ with TOPOGRAPH_BENCH_BUILD=dist: see
// in-process.ts), as loading's does.
import Database from 'better-sqlite3'
import pg from 'pg'
import type { BatchRecord, VarReader as VarReaderType } from '../../src/log/batch.js'
import { at } from './in-process.js'

const { POSTGRES_RECORDS_TABLE } = await at('coordinator/storage/postgres.js')
const { rowRecords } = await at('coordinator/storage/sqlite.js')
const batch = await at('log/batch.js')
const VarReader: new (buf: Uint8Array) => VarReaderType = batch.VarReader
const readRecord: (r: VarReaderType) => BatchRecord = batch.readRecord

/**
 * The raw SQLite scan: every shard's batch rows in order, with the query the store's load uses,
 * each record's key and value read out of its row and handed to `visit`. Returns the records.
 */
export function rawSqliteScan(
  file: string,
  shards: number,
  visit: (shard: number, key: Uint8Array | null, value: Uint8Array | null) => void,
): number {
  const db = new Database(file, { readonly: true })
  const stmt = db.prepare<[number], { n: number; attributes: number; records: Buffer }>(
    'SELECT record_count AS n, attributes, records FROM coordinator_batches WHERE shard = ? ORDER BY base_offset',
  )
  let records = 0
  for (let shard = 0; shard < shards; shard++) {
    for (const row of stmt.all(shard)) {
      const reader = new VarReader(rowRecords(row))
      for (let i = 0; i < row.n; i++) {
        const r = readRecord(reader)
        records++
        visit(shard, r.key, r.value)
      }
    }
  }
  db.close()
  return records
}

export interface PgPeer {
  /** The URL with the bench's schema as its search_path. */
  readonly url: string
  /** Creates the schema (dropping what an earlier run left). */
  create(): Promise<void>
  /** Drops the schema; never rejects. */
  drop(): Promise<void>
}

/** A schema `<prefix>_<pid>` on TOPOGRAPH_TEST_PG_URL, or undefined when it is not set. */
export function pgPeer(prefix: string): PgPeer | undefined {
  const base = process.env.TOPOGRAPH_TEST_PG_URL
  if (base === undefined || base === '') return undefined
  const schema = `${prefix}_${process.pid}`
  const u = new URL(base)
  u.searchParams.set('options', `-c search_path=${schema}`)
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: base })
    await c.connect()
    try {
      await c.query(sql)
    } finally {
      await c.end()
    }
  }
  return {
    url: u.toString(),
    create: () => admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`),
    drop: () => admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined),
  }
}

/**
 * The raw scan: one connection, the shards one after another, one query each, every key and value
 * touched. Returns the time, the rows and a sum of their lengths (to keep the reads observable).
 */
export async function rawPgScan(
  url: string,
  shards: number,
): Promise<{ ms: number; rows: number; bytes: number }> {
  const t0 = process.hrtime.bigint()
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  let rows = 0
  let bytes = 0
  for (let shard = 0; shard < shards; shard++) {
    const r = await c.query<[string, Buffer, Buffer | null]>({
      text: `SELECT record_offset, key, value FROM ${POSTGRES_RECORDS_TABLE} WHERE shard = $1 ORDER BY record_offset`,
      values: [shard],
      rowMode: 'array',
    })
    for (const row of r.rows) {
      rows++
      bytes += row[1].length + (row[2]?.length ?? 0)
    }
  }
  await c.end()
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, rows, bytes }
}
