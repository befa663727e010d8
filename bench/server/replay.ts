// Restart replay rate of the coordinator: how fast CoordinatorRuntime.load() (SQLite load, decode,
// replay into shards) gets through a data.dir, next to a raw better-sqlite3 scan of the same rows
// (one per batch of 10 records) that reads each record's key and value out of them (a row the
// engine stored compressed is decompressed first), measured in the same run. Goal: replay >= 50% of the raw scan's rate. Also measured: the raw scan with the
// bench's own decode and shard replay added (the part of loading that is the bench's, not the
// store's or the runtime's), and load + replay next to it.
// With TOPOGRAPH_TEST_PG_URL set, the same records also go to a PostgreSQL store (a schema of its
// own, dropped at the end), measured as a peer in the same rounds: its load + replay next to a raw
// node-postgres scan of the same rows, and next to the SQLite replay.
//
//   [TOPOGRAPH_TEST_PG_URL=postgres://…] npx tsx bench/server/replay.ts [records=200000] [shards=50] [valueBytes=120]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { CoordinatorRuntime } from '../../src/coordinator/runtime/runtime.js'
import type { RecordSerde, ShardStateMachine } from '../../src/coordinator/runtime/types.js'
import { POSTGRES_RECORDS_TABLE, PostgresRecordStore } from '../../src/coordinator/storage/postgres.js'
import { SQLITE_FILE_NAME, SqliteRecordStore } from '../../src/coordinator/storage/sqlite.js'
import type { CoordinatorRecord, RecordStore } from '../../src/coordinator/storage/types.js'
import { decompress } from 'zstd-napi'
import { readRecord, VarReader } from '../../src/log/batch.js'

const N = Number(process.argv[2] ?? 200_000)
const SHARDS = Number(process.argv[3] ?? 50)
const VALUE_BYTES = Number(process.argv[4] ?? 120)
const ROUNDS = 7
const PG_URL = process.env.TOPOGRAPH_TEST_PG_URL
if (![N, SHARDS, VALUE_BYTES].every((x) => Number.isInteger(x) && x > 0)) {
  console.error('usage: replay.ts [records>0] [shards>0] [valueBytes>0]')
  process.exit(2)
}

/** A record shaped like a coordinator record: int16 type + id in the key, int16 version + payload in the value. */
interface BenchRecord {
  readonly type: number
  readonly id: string
  readonly version: number
  readonly payload: Uint8Array | null
}

const enc = new TextEncoder()
const dec = new TextDecoder()

const serde: RecordSerde<BenchRecord> = {
  serialize(r) {
    const id = enc.encode(r.id)
    const key = new Uint8Array(2 + id.length)
    new DataView(key.buffer).setInt16(0, r.type)
    key.set(id, 2)
    if (r.payload === null) return { key, value: null }
    const value = new Uint8Array(2 + r.payload.length)
    new DataView(value.buffer).setInt16(0, r.version)
    value.set(r.payload, 2)
    return { key, value }
  },
  deserialize(c: CoordinatorRecord) {
    const kv = new DataView(c.key.buffer, c.key.byteOffset, c.key.byteLength)
    const type = kv.getInt16(0)
    const id = dec.decode(c.key.subarray(2))
    if (c.value === null) return { type, id, version: -1, payload: null }
    const vv = new DataView(c.value.buffer, c.value.byteOffset, c.value.byteLength)
    return { type, id, version: vv.getInt16(0), payload: c.value.subarray(2) }
  },
}

class BenchShard implements ShardStateMachine<BenchRecord> {
  readonly state = new Map<string, BenchRecord>()
  replay(r: BenchRecord): void {
    if (r.payload === null) this.state.delete(r.id)
    else this.state.set(r.id, r)
  }
}

/** A batch row as the raw scans read it. */
interface BatchRow {
  readonly n: number
  readonly attributes: number
  readonly records: Buffer
}

/** The row's records: decompressed when the engine stored them compressed (attributes 4, zstd). */
function rowRecords(row: BatchRow): Uint8Array {
  return row.attributes === 4 ? decompress(row.records) : row.records
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** Writes N records across the shards in batches of 10 (like a busy heartbeat load); returns ms. */
async function write(store: RecordStore): Promise<number> {
  const payload = new Uint8Array(VALUE_BYTES).map((_, i) => i & 0xff)
  let written = 0
  const writeStart = process.hrtime.bigint()
  while (written < N) {
    const shard = written % SHARDS
    const batch: CoordinatorRecord[] = []
    for (let i = 0; i < 10 && written < N; i++, written++) {
      batch.push(serde.serialize({ type: 17, id: `group-${shard}/member-${written}`, version: 0, payload }))
    }
    await store.append(shard, batch)
  }
  return Number(process.hrtime.bigint() - writeStart) / 1e6
}

/** Opens a store, loads and replays every shard through the runtime, closes; returns ms. */
async function replay(open: () => Promise<RecordStore>): Promise<number> {
  const t0 = process.hrtime.bigint()
  const s = await open()
  const shards: BenchShard[] = []
  const runtime = new CoordinatorRuntime<BenchShard, BenchRecord>({
    store: s,
    numShards: SHARDS,
    serde,
    newShard: () => {
      const b = new BenchShard()
      shards.push(b)
      return b
    },
  })
  await runtime.load()
  await runtime.close()
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  const live = shards.reduce((n, b) => n + b.state.size, 0)
  if (live !== N) throw new Error(`replay found ${live} records, expected ${N}`)
  return ms
}

function rate(ms: number[]): string {
  return `${Math.round(N / (median(ms) / 1000)).toLocaleString('en')} records/s (${median(ms).toFixed(1)} ms)`
}

function ratio(name: string, num: number[], den: number[], goal?: number): void {
  // Rates are N / time, so the ratio of rates is the inverse ratio of the median times.
  const r = median(den) / median(num)
  const verdict = goal === undefined ? '' : ` (goal >= ${goal * 100}%) ${r >= goal ? 'OK' : 'BELOW GOAL'}`
  console.log(`${name.padEnd(34)}${(r * 100).toFixed(1)}%${verdict}`)
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-replay-bench-'))
  const schema = `tg_replay_bench_${process.pid}`
  let pgUrl: string | undefined
  if (PG_URL !== undefined && PG_URL !== '') {
    const u = new URL(PG_URL)
    u.searchParams.set('options', `-c search_path=${schema}`)
    pgUrl = u.toString()
  }
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: PG_URL })
    await c.connect()
    try {
      await c.query(sql)
    } finally {
      await c.end()
    }
  }
  try {
    // 1. The same N records to each store.
    const store = new SqliteRecordStore(dir)
    await store.open()
    const writeMs = await write(store)
    await store.close()
    let pgWriteMs = 0
    if (pgUrl !== undefined) {
      await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`)
      const p = new PostgresRecordStore(pgUrl)
      await p.open()
      pgWriteMs = await write(p)
      await p.close()
    }

    // 2. Alternate the measurements so all of them see the same cache state.
    const replayMs: number[] = []
    const rawMs: number[] = []
    const rawReplayMs: number[] = []
    const pgReplayMs: number[] = []
    const pgRawMs: number[] = []
    let checksum = 0
    for (let round = 0; round < ROUNDS; round++) {
      replayMs.push(
        await replay(async () => {
          const s = new SqliteRecordStore(dir)
          await s.open()
          return s
        }),
      )
      {
        // The raw scan: the same rows (one per batch), straight from better-sqlite3, each record's
        // key and value read out of its row, bytes touched.
        const t0 = process.hrtime.bigint()
        const db = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true })
        const stmt = db.prepare<[number], BatchRow>(
          'SELECT record_count AS n, attributes, records FROM coordinator_batches WHERE shard = ? ORDER BY base_offset',
        )
        let rows = 0
        for (let shard = 0; shard < SHARDS; shard++) {
          for (const row of stmt.all(shard)) {
            const reader = new VarReader(rowRecords(row))
            for (let i = 0; i < row.n; i++) {
              const r = readRecord(reader)
              rows++
              checksum += (r.key?.length ?? 0) + (r.value?.length ?? 0)
            }
          }
        }
        db.close()
        rawMs.push(Number(process.hrtime.bigint() - t0) / 1e6)
        if (rows !== N) throw new Error(`raw scan found ${rows} rows, expected ${N}`)
      }
      {
        // The same raw scan, each record also decoded by the bench's serde and replayed into a
        // bench shard: what loading does that the raw scan does not (a shard keeps every record),
        // without the store and the runtime in between.
        const t0 = process.hrtime.bigint()
        const db = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true })
        const stmt = db.prepare<[number], BatchRow>(
          'SELECT record_count AS n, attributes, records FROM coordinator_batches WHERE shard = ? ORDER BY base_offset',
        )
        // Every shard is kept to the end, as the runtime keeps them.
        const kept: BenchShard[] = []
        for (let shard = 0; shard < SHARDS; shard++) {
          const b = new BenchShard()
          kept.push(b)
          for (const row of stmt.all(shard)) {
            const reader = new VarReader(rowRecords(row))
            for (let i = 0; i < row.n; i++) {
              const r = readRecord(reader)
              if (r.key === null) continue
              const record = serde.deserialize({ key: r.key, value: r.value })
              if (record !== undefined) b.replay(record)
            }
          }
        }
        db.close()
        rawReplayMs.push(Number(process.hrtime.bigint() - t0) / 1e6)
        const live = kept.reduce((n, b) => n + b.state.size, 0)
        if (live !== N) throw new Error(`raw scan + replay found ${live} records, expected ${N}`)
      }
      if (pgUrl !== undefined) {
        const url = pgUrl
        pgReplayMs.push(
          await replay(async () => {
            const s = new PostgresRecordStore(url)
            await s.open()
            return s
          }),
        )
        // The raw scan: one connection, the shards one after another, one query each, bytes touched.
        const t0 = process.hrtime.bigint()
        const c = new pg.Client({ connectionString: url })
        await c.connect()
        let rows = 0
        for (let shard = 0; shard < SHARDS; shard++) {
          const r = await c.query<[string, Buffer, Buffer | null]>({
            text: `SELECT record_offset, key, value FROM ${POSTGRES_RECORDS_TABLE} WHERE shard = $1 ORDER BY record_offset`,
            values: [shard],
            rowMode: 'array',
          })
          for (const row of r.rows) {
            rows++
            checksum += row[1].length + (row[2]?.length ?? 0)
          }
        }
        await c.end()
        pgRawMs.push(Number(process.hrtime.bigint() - t0) / 1e6)
        if (rows !== N) throw new Error(`raw PostgreSQL scan found ${rows} rows, expected ${N}`)
      }
    }
    const line = (label: string, text: string) => console.log(`${label.padEnd(34)}${text}`)
    const writeRate = (ms: number) => `${Math.round(N / (ms / 1000)).toLocaleString('en')} records/s`
    console.log(`records ${N}, shards ${SHARDS}, value ${VALUE_BYTES} B, rounds ${ROUNDS} (medians)`)
    line('write (batches of 10):', writeRate(writeMs))
    line('raw SQLite scan:', rate(rawMs))
    line('load + replay:', rate(replayMs))
    ratio('replay / raw scan:', replayMs, rawMs, 0.5)
    line('raw scan + bench replay:', rate(rawReplayMs))
    ratio('replay / raw scan + bench replay:', replayMs, rawReplayMs)
    if (pgUrl !== undefined) {
      line('postgres write (batches of 10):', writeRate(pgWriteMs))
      line('raw PostgreSQL scan:', rate(pgRawMs))
      line('postgres load + replay:', rate(pgReplayMs))
      ratio('postgres replay / raw PG scan:', pgReplayMs, pgRawMs, 0.5)
      ratio('postgres replay / SQLite replay:', pgReplayMs, replayMs)
      ratio('postgres write / SQLite write:', [pgWriteMs], [writeMs])
    } else {
      console.log('postgres: not measured (set TOPOGRAPH_TEST_PG_URL to add it)')
    }
    if (checksum < 0) console.log(checksum) // keeps the raw scans' reads observable
  } finally {
    rmSync(dir, { recursive: true, force: true })
    if (pgUrl !== undefined) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
  }
}

await main()
