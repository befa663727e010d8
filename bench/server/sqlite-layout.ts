// The SQLite engine's table layout alone, in raw better-sqlite3 loops: a Kafka Streams-shaped
// commit's 20 OffsetCommit records as 20 rows (one per record, the layout of schema version 1:
// 8-row INSERTs, then single ones, as the engine wrote them) against one row holding the same
// records in one BLOB (schema version 2: the records in Kafka's record format, encoded in the loop).
// Transactions of 1 commit (20 records) and of 16 (a pipelining connection's batch: 320 records),
// each layout in a file of its own with the store's pragmas (WAL, synchronous=NORMAL, no automatic
// checkpoint; the WAL is checkpointed after each round, timed apart). Rounds alternate the
// layouts; the figure is µs of process CPU (user + system) per commit, median of the rounds, with
// the checkpoint's CPU per commit and the database's pages per transaction beside it. Two more
// rows: the BLOBs encoded before the loop (SQLite's part alone), and a table with a rowid.
//
//   node --import tsx bench/server/sqlite-layout.ts [commits=20000] [rounds=5]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { ByteSink, writeRecord } from '../../src/log/batch.js'
import { encodeCoordinatorRecords } from '../../src/protocol/records.js'
import type { CoordinatorRecord } from '../../src/protocol/records.js'

const COMMITS = Number(process.argv[2] ?? 20_000)
const ROUNDS = Number(process.argv[3] ?? 5)

// The Streams-shaped commit of requests.ts: one topic, 20 partitions, 32 bytes of metadata.
const commits = Array.from({ length: 64 }, (_, c) =>
  encodeCoordinatorRecords(
    Array.from(
      { length: 20 },
      (_, p): CoordinatorRecord => ({
        type: 'OffsetCommit',
        key: { group: 'bench-streams-commit', topic: 'bench-streams', partition: p },
        value: {
          offset: 5000n + BigInt(c * 20 + p),
          leaderEpoch: -1,
          metadata: 'AQAAAY_streams_task_position_x'.padEnd(32, '='),
          commitTimestamp: BigInt(1_700_000_000_000 + c),
          expireTimestamp: -1n,
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        },
        valueVersion: 3,
      }),
    ),
  ).map((r) => ({ key: Uint8Array.from(r.key), value: r.value === null ? null : Uint8Array.from(r.value) })),
)

function open(file: string, table: string): Database.Database {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('wal_autocheckpoint = 0')
  db.exec(table)
  return db
}

interface Layout {
  readonly name: string
  /** Writes `perTx` commits, from commit number `n` on, in one transaction. */
  readonly write: (n: number, perTx: number) => void
  readonly db: Database.Database
}

function rowsLayout(dir: string): Layout {
  const db = open(
    join(dir, 'rows.db'),
    `CREATE TABLE coordinator_records (shard INTEGER NOT NULL, offset INTEGER NOT NULL, key BLOB NOT NULL,
       value BLOB, PRIMARY KEY (shard, offset)) WITHOUT ROWID`,
  )
  const one = db.prepare('INSERT INTO coordinator_records (shard, offset, key, value) VALUES (?, ?, ?, ?)')
  const eight = db.prepare(
    `INSERT INTO coordinator_records (shard, offset, key, value) VALUES ${Array(8).fill('(?, ?, ?, ?)').join(', ')}`,
  )
  const wide = db.prepare(
    `INSERT INTO coordinator_records (shard, offset, key, value) VALUES ${Array(64).fill('(?, ?, ?, ?)').join(', ')}`,
  )
  const p8: unknown[] = new Array(32).fill(null)
  const p64: unknown[] = new Array(256).fill(null)
  let offset = 0
  const insert = (records: readonly { key: Uint8Array; value: Uint8Array | null }[]): void => {
    let i = 0
    for (const [stmt, params] of [
      [wide, p64],
      [eight, p8],
    ] as const) {
      const rows = params.length / 4
      for (; i + rows <= records.length; i += rows) {
        for (let j = 0; j < rows; j++) {
          params[4 * j] = 0
          params[4 * j + 1] = offset++
          params[4 * j + 2] = records[i + j].key
          params[4 * j + 3] = records[i + j].value
        }
        stmt.run(params)
      }
    }
    for (; i < records.length; i++) one.run(0, offset++, records[i].key, records[i].value)
  }
  const tx = db.transaction((n: number, perTx: number) => {
    const records = []
    for (let c = 0; c < perTx; c++) records.push(...commits[(n + c) & 63])
    insert(records)
  })
  return { name: 'one row a record', write: (n, perTx) => tx(n, perTx), db }
}

const BATCH_TABLE = `CREATE TABLE coordinator_batches (shard INTEGER NOT NULL, base_offset INTEGER NOT NULL,
  last_offset INTEGER NOT NULL, record_count INTEGER NOT NULL, records BLOB NOT NULL,
  PRIMARY KEY (shard, base_offset))`

/**
 * `rowid`: a table with a rowid (its primary key an index beside it) instead of WITHOUT ROWID. A
 * WITHOUT ROWID table is a B-tree of index pages, which keep at most about 1,000 bytes of a row in
 * the page (4 KiB pages) and the rest in overflow pages; a table with a rowid keeps up to about
 * 4,000, so a 20-record BLOB (about 2.2 KB) fits in its leaf page.
 */
function blobLayout(dir: string, rowid = false): Layout {
  const db = open(
    join(dir, rowid ? 'blob-rowid.db' : 'blob.db'),
    rowid ? BATCH_TABLE : `${BATCH_TABLE} WITHOUT ROWID`,
  )
  const insert = db.prepare(
    'INSERT INTO coordinator_batches (shard, base_offset, last_offset, record_count, records) VALUES (?, ?, ?, ?, ?)',
  )
  const sink = new ByteSink(64 * 1024)
  let offset = 0
  const tx = db.transaction((n: number, perTx: number) => {
    sink.reset()
    let count = 0
    for (let c = 0; c < perTx; c++) {
      for (const r of commits[(n + c) & 63]) {
        writeRecord(sink, { timestampDelta: 0, offsetDelta: count++, key: r.key, value: r.value })
      }
    }
    insert.run(0, offset, offset + count - 1, count, sink.view())
    offset += count
  })
  return {
    name: rowid ? 'one row a batch, rowid table' : 'one row a batch',
    write: (n, perTx) => tx(n, perTx),
    db,
  }
}

/** As `blobLayout`, with the BLOBs encoded once before the loop: SQLite's part alone. */
function preEncodedLayout(dir: string): Layout {
  const db = open(join(dir, 'pre.db'), `${BATCH_TABLE} WITHOUT ROWID`)
  const insert = db.prepare(
    'INSERT INTO coordinator_batches (shard, base_offset, last_offset, record_count, records) VALUES (?, ?, ?, ?, ?)',
  )
  const blobs = new Map<number, Uint8Array[]>()
  for (const perTx of [1, 16]) {
    blobs.set(
      perTx,
      commits.map((_, n) => {
        const sink = new ByteSink()
        let count = 0
        for (let c = 0; c < perTx; c++) {
          for (const r of commits[(n + c) & 63]) {
            writeRecord(sink, { timestampDelta: 0, offsetDelta: count++, key: r.key, value: r.value })
          }
        }
        return sink.finish()
      }),
    )
  }
  let offset = 0
  const tx = db.transaction((n: number, perTx: number) => {
    const count = 20 * perTx
    insert.run(0, offset, offset + count - 1, count, (blobs.get(perTx) as Uint8Array[])[n & 63])
    offset += count
  })
  return { name: 'one row a batch, encoded before', write: (n, perTx) => tx(n, perTx), db }
}

const dir = mkdtempSync(join(tmpdir(), 'topograph-sqlite-layout-'))
try {
  const layouts = [rowsLayout(dir), blobLayout(dir), preEncodedLayout(dir), blobLayout(dir, true)]
  for (const perTx of [1, 16]) {
    const results = new Map<string, { total: number; user: number; system: number; checkpoint: number }[]>(
      layouts.map((l) => [l.name, []]),
    )
    for (let round = 0; round < ROUNDS; round++) {
      for (const l of round % 2 === 0 ? layouts : [...layouts].reverse()) {
        const t0 = process.cpuUsage()
        for (let n = 0; n < COMMITS; n += perTx) l.write(n, perTx)
        const d = process.cpuUsage(t0)
        // The checkpoint that copies the round's WAL into the database file (the engine's worker
        // does it), timed apart: its cost follows the pages the commits wrote.
        const c = process.cpuUsage()
        l.db.pragma('wal_checkpoint(TRUNCATE)')
        const dc = process.cpuUsage(c)
        results.get(l.name)?.push({
          total: (d.user + d.system) / COMMITS,
          user: d.user / COMMITS,
          system: d.system / COMMITS,
          checkpoint: (dc.user + dc.system) / COMMITS,
        })
      }
    }
    for (const l of layouts) {
      const xs = [...(results.get(l.name) ?? [])].sort((a, b) => a.total - b.total)
      const m = xs[xs.length >> 1]
      const pages = (l.db.pragma('page_count', { simple: true }) as number) / ((ROUNDS * COMMITS) / perTx)
      console.log(
        `${perTx} commit(s) a transaction, ${l.name}: ${m.total.toFixed(2)} µs CPU per commit (user ${m.user.toFixed(2)} + system ${m.system.toFixed(2)}), checkpoint ${m.checkpoint.toFixed(2)}; ${pages.toFixed(2)} pages a transaction (rounds ${xs.map((x) => x.total.toFixed(2)).join(', ')})`,
      )
    }
  }
  for (const l of layouts) l.db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
