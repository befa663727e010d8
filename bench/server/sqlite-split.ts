// Where the SQLite engine's CPU for a Kafka Streams-shaped commit goes, next to the memory engine's,
// each part alone in a loop of this process (process.cpuUsage, user + system, every thread of the
// process; 3 rounds, median; µs a commit). A write is 16 commits of 20 OffsetCommit records (a
// pipelining connection's batch, 320 records, what the runtime hands the store):
//
// - `encode the records`: the coordinator's records encoded (the same for both engines);
// - `memory engine append`: the memory engine's whole append;
// - `sqlite engine append`: the SQLite engine's whole append, its checkpoint worker's CPU included;
//   `…, no checkpoints`: the same with a checkpoint threshold it never reaches (the difference is
//   the checkpoint's cost a commit);
// - `batch row encoding`: the records into the row's BLOB (Kafka's record format), as the engine
//   does before the insert;
// - `zstd the row`: the row's records compressed with zstd at the engine's level (-1);
// - raw better-sqlite3 on a table of the engine's layout and pragmas (the BLOB encoded before the
//   loop): `empty transaction` (BEGIN and COMMIT through `db.transaction`), `insert, rolled back`
//   (the statement and the b-tree in the page cache, no WAL write), `insert, WAL file` (+ the WAL's
//   frames and the commit), and the same two with the row compressed;
//
// then what one write puts on disk: WAL frames and bytes a write, and the database's pages a write.
// `strace -c -f` around `… sqlite-split.ts <writes> syscalls` counts the system calls of the
// engine's append alone (nothing else runs in that mode).
//
//   node --import tsx bench/server/sqlite-split.ts [writes=3000] [all|syscalls]
//
// TOPOGRAPH_BENCH_BUILD=dist takes the compiled modules from dist/ (after `npm run build`);
// TOPOGRAPH_BENCH_ROOT=<dir> takes them from another checkout (a build before a change).
// BENCH_SQLITE_OPTIONS='{"…":…}' passes options to the engine (as `new SqliteRecordStore(dir, options)`).
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Compressor } from 'zstd-napi'
import { at, buildName, cpuRounds, root, streamsCommitRecords } from './in-process.js'

const writes = Number(process.argv[2] ?? 3000)
const mode = process.argv[3] ?? 'all'
const options = JSON.parse(process.env.BENCH_SQLITE_OPTIONS ?? '{}') as Record<string, unknown>
const { MemoryRecordStore } = await at('coordinator/storage/memory.js')
const { SqliteRecordStore } = await at('coordinator/storage/sqlite.js')
const { encodeCoordinatorRecords, releaseEncodedRecords } = await at('protocol/records.js')
const { ByteSink, writeRecord } = await at('log/batch.js')

interface Rec {
  readonly key: Uint8Array
  readonly value: Uint8Array | null
}
// 64 commits of the Streams shape, as the handler builds them.
const commits = streamsCommitRecords(64)
const COMMITS_A_WRITE = 16
/** Four writes of 16 commits each, encoded as the runtime hands them to the store. */
const batches: Rec[][] = Array.from({ length: 4 }, (_, w) =>
  commits.slice(w * COMMITS_A_WRITE, (w + 1) * COMMITS_A_WRITE).flatMap((c) => encodeCoordinatorRecords(c)),
)
/** The same records copied out (the raw loops read them as plain records). */
const plain: Rec[][] = batches.map((b) =>
  b.map((r) => ({ key: Uint8Array.from(r.key), value: r.value === null ? null : Uint8Array.from(r.value) })),
)

const rows: Map<string, number> = new Map()
/** Runs `step(i)` for i < count, 3 rounds; prints µs of CPU a commit (`perStep` commits a step). */
async function time(name: string, step: (i: number) => unknown, count: number, perStep = 1): Promise<void> {
  const rounds = (await cpuRounds(step, count)).map((x) => x / perStep)
  rows.set(name, rounds[1])
  console.log(
    `${name.padEnd(44)} ${rounds[1].toFixed(2).padStart(7)} µs CPU a commit (rounds ${rounds.map((x) => x.toFixed(2)).join(', ')})`,
  )
}

const dir = mkdtempSync(join(tmpdir(), 'topograph-sqlite-split-'))
try {
  if (mode === 'syscalls') {
    // The engine's append alone, for strace -c -f: open, `writes` appends of 16 commits, close.
    const store = new SqliteRecordStore(join(dir, 'sys'), options)
    await store.open()
    for (let i = 0; i < writes; i++) await store.append(0, batches[i & 3])
    await store.close()
  } else {
    console.log(
      `root ${root}, ${buildName}; ${writes.toLocaleString('en')} writes of ${COMMITS_A_WRITE} commits × 20 records a round; options ${JSON.stringify(options)}`,
    )
    await time(
      'encode the records',
      (i) => releaseEncodedRecords(encodeCoordinatorRecords(commits[i & 63])),
      writes * COMMITS_A_WRITE,
    )
    const memory = new MemoryRecordStore()
    await memory.open()
    await time('memory engine append', (i) => memory.append(0, batches[i & 3]), writes, COMMITS_A_WRITE)
    await memory.close()

    const withCheckpoints = new SqliteRecordStore(join(dir, 'engine'), options)
    await withCheckpoints.open()
    await time(
      'sqlite engine append',
      (i) => withCheckpoints.append(0, batches[i & 3]),
      writes,
      COMMITS_A_WRITE,
    )
    await withCheckpoints.close()
    const never = 2 ** 50
    const noCheckpoints = new SqliteRecordStore(join(dir, 'engine-nc'), {
      ...options,
      walCheckpointBytes: never,
      walMaxBytes: never,
    })
    await noCheckpoints.open()
    const wal = join(dir, 'engine-nc', 'coordinator.db-wal')
    const walBefore = statSync(wal, { throwIfNoEntry: false })?.size ?? 0
    await time(
      'sqlite engine append, no checkpoints',
      (i) => noCheckpoints.append(0, batches[i & 3]),
      writes,
      COMMITS_A_WRITE,
    )
    const walBytes = (statSync(wal).size - walBefore) / (3 * writes)
    await noCheckpoints.close()

    const sink = new ByteSink(64 * 1024)
    const encodeRow = (records: readonly Rec[]): Uint8Array => {
      sink.reset()
      for (let i = 0; i < records.length; i++) {
        const r = records[i]
        writeRecord(sink, { timestampDelta: 0, offsetDelta: i, key: r.key, value: r.value })
      }
      return sink.view()
    }
    await time('batch row encoding', (i) => encodeRow(batches[i & 3]), writes, COMMITS_A_WRITE)
    const blobs = plain.map((b) => Uint8Array.from(encodeRow(b)))
    const zstd = new Compressor()
    zstd.setParameters({ compressionLevel: -1 })
    await time('zstd the row', (i) => zstd.compress(blobs[i & 3]), writes, COMMITS_A_WRITE)
    const compressed = blobs.map((b) => zstd.compress(b))

    const raw = (file: string) => {
      const db = new Database(file, { timeout: 0 })
      if (file !== ':memory:') {
        db.pragma('journal_mode = WAL')
        db.pragma('synchronous = NORMAL')
        db.pragma('wal_autocheckpoint = 0')
      }
      db.exec(`CREATE TABLE coordinator_batches (shard INTEGER NOT NULL, base_offset INTEGER NOT NULL,
        last_offset INTEGER NOT NULL, record_count INTEGER NOT NULL, records BLOB NOT NULL,
        PRIMARY KEY (shard, base_offset))`)
      const insert = db.prepare(
        'INSERT INTO coordinator_batches (shard, base_offset, last_offset, record_count, records) VALUES (?, ?, ?, ?, ?)',
      )
      let offset = 0
      const n = COMMITS_A_WRITE * 20
      const tx = db.transaction((blob: Uint8Array) => {
        insert.run(0, offset, offset + n - 1, n, blob)
        offset += n
      })
      const rolledBack = new Error('rolled back')
      /** The insert in a transaction that rolls back: the statement's work without the WAL's. */
      const undone = db.transaction((blob: Uint8Array) => {
        insert.run(0, offset, offset + n - 1, n, blob)
        throw rolledBack
      })
      const rollback = (blob: Uint8Array) => {
        try {
          undone(blob)
        } catch (e) {
          if (e !== rolledBack) throw e
        }
      }
      return { db, tx, rollback }
    }
    const empty = raw(join(dir, 'empty.db'))
    const nothing = empty.db.transaction(() => {})
    await time('raw: empty transaction', () => nothing(), writes, COMMITS_A_WRITE)
    empty.db.close()
    const file = raw(join(dir, 'raw.db'))
    await time('raw: insert, rolled back', (i) => file.rollback(blobs[i & 3]), writes, COMMITS_A_WRITE)
    await time('raw: insert, WAL file', (i) => file.tx(blobs[i & 3]), writes, COMMITS_A_WRITE)
    const pages = (file.db.pragma('page_count', { simple: true }) as number) / (3 * writes)
    const pageSize = file.db.pragma('page_size', { simple: true }) as number
    file.db.close()
    const small = raw(join(dir, 'raw-zstd.db'))
    await time(
      'raw: compressed, rolled back',
      (i) => small.rollback(compressed[i & 3]),
      writes,
      COMMITS_A_WRITE,
    )
    await time('raw: compressed, WAL file', (i) => small.tx(compressed[i & 3]), writes, COMMITS_A_WRITE)
    const smallPages = (small.db.pragma('page_count', { simple: true }) as number) / (3 * writes)
    small.db.close()

    const e = (name: string) => rows.get(name) ?? Number.NaN
    console.log(
      `engine's WAL a write: ${walBytes.toFixed(0)} bytes, ${(walBytes / (pageSize + 24)).toFixed(2)} frames of ${pageSize} B; database pages a write: raw rows ${pages.toFixed(2)}, compressed rows ${smallPages.toFixed(2)}`,
    )
    console.log(
      `sqlite − memory append ${(e('sqlite engine append') - e('memory engine append')).toFixed(2)} µs a commit; checkpoint ${(e('sqlite engine append') - e('sqlite engine append, no checkpoints')).toFixed(2)}, row encoding ${e('batch row encoding').toFixed(2)}, zstd ${e('zstd the row').toFixed(2)}; raw rows: statement + b-tree ${e('raw: insert, rolled back').toFixed(2)}, WAL and commit ${(e('raw: insert, WAL file') - e('raw: insert, rolled back')).toFixed(2)}; compressed rows: ${e('raw: compressed, rolled back').toFixed(2)}, ${(e('raw: compressed, WAL file') - e('raw: compressed, rolled back')).toFixed(2)}`,
    )
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
