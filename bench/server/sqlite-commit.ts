// What an SQLite commit costs the event loop, and whether a worker thread should own the store.
// One process, the store's table and pragmas (WAL, synchronous=NORMAL, exclusive locking), commits
// of `ops` coordinator writes of 6 records each (the server benchmark's OffsetCommit, about 60 bytes
// a record), back to back for `seconds`:
//
//   main, autocheckpoint N   better-sqlite3 on the event loop (as SqliteRecordStore does) with
//                            wal_autocheckpoint = N pages (SQLite's default is 1000)
//   worker                   the same transaction in a worker thread; the main thread posts the
//                            records and waits for the answer (one commit in flight)
//
//   turn, autocheckpoint 10000
//                            as "main, autocheckpoint 10000", with one event-loop turn
//                            (setImmediate) between commits, as a server's commits come
//   store, checkpoint worker SqliteRecordStore itself (normal locking, wal_autocheckpoint=0, the
//                            checkpoint in its worker thread), one event-loop turn between commits
//
// For each it prints commits/s, records/s, how long each commit held the event loop (p50/p99/max:
// for the worker, posting and receiving) and the commit's latency (p99/max), in one run.
//
//   node --import tsx bench/server/sqlite-commit.ts [seconds=3] [ops=1,4,40] [modes=all|turns]
//
// `turns` runs only the two rows with a turn between commits (the checkpoint before and after it
// left the commit).
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { SqliteRecordStore } from '../../src/coordinator/storage/sqlite.js'

const seconds = Number(process.argv[2] ?? 3)
const opsList = (process.argv[3] ?? '1,4,40').split(',').map(Number)
const onlyTurns = process.argv[4] === 'turns'
const sqlitePath = createRequire(import.meta.url).resolve('better-sqlite3')
const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

const SCHEMA = `CREATE TABLE IF NOT EXISTS coordinator_records (
  shard INTEGER NOT NULL, offset INTEGER NOT NULL, key BLOB NOT NULL, value BLOB,
  PRIMARY KEY (shard, offset)) WITHOUT ROWID`

interface Rec {
  key: Uint8Array
  value: Uint8Array
}
function batchOf(ops: number, seq: number): Rec[] {
  const out: Rec[] = []
  for (let o = 0; o < ops; o++) {
    for (let p = 0; p < 6; p++) {
      const key = Buffer.from(`\u0000\u0001bench-commit-${o % 16}/bench-${p >> 1}/${p}`)
      const value = Buffer.alloc(40, seq & 0xff)
      out.push({ key, value })
    }
  }
  return out
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0
}

interface Result {
  name: string
  ops: number
  commits: number
  seconds: number
  held: number[]
  latency: number[]
  walPagesAtEnd: number
}

function openDb(dir: string, autocheckpoint: number): Database.Database {
  const db = new Database(join(dir, 'coordinator.db'), { timeout: 0 })
  db.pragma('locking_mode = EXCLUSIVE')
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma(`wal_autocheckpoint = ${autocheckpoint}`)
  db.exec(SCHEMA)
  return db
}

/**
 * Commits on the calling thread, back to back; with `turns`, the event loop gets a turn between
 * commits (as the store's callers do), so a checkpoint of SQLite's own runs where it would.
 */
async function runMain(ops: number, autocheckpoint: number, turns = false): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-sqlite-commit-'))
  const db = openDb(dir, autocheckpoint)
  const insert = db.prepare('INSERT INTO coordinator_records (shard, offset, key, value) VALUES (?, ?, ?, ?)')
  let offset = 0
  const tx = db.transaction((records: Rec[]) => {
    for (const r of records) insert.run(0, offset++, r.key, r.value)
  })
  const held: number[] = []
  const t0 = performance.now()
  let commits = 0
  while (performance.now() - t0 < seconds * 1000) {
    const records = batchOf(ops, commits)
    const a = performance.now()
    tx(records)
    held.push(performance.now() - a)
    commits++
    if (turns) await turn()
  }
  const elapsed = (performance.now() - t0) / 1000
  const wal = turns ? [] : (db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])
  db.close()
  rmSync(dir, { recursive: true, force: true })
  return {
    name: `${turns ? 'turn' : 'main'}, autocheckpoint ${autocheckpoint}`,
    ops,
    commits,
    seconds: elapsed,
    held,
    latency: held,
    walPagesAtEnd: wal[0]?.log ?? 0,
  }
}

async function runStore(ops: number): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-sqlite-commit-'))
  const store = new SqliteRecordStore(dir)
  await store.open()
  const held: number[] = []
  const latency: number[] = []
  const t0 = performance.now()
  let commits = 0
  while (performance.now() - t0 < seconds * 1000) {
    const records = batchOf(ops, commits)
    const a = performance.now()
    const pending = store.append(0, records)
    held.push(performance.now() - a)
    await pending
    latency.push(performance.now() - a)
    commits++
    await turn()
  }
  const elapsed = (performance.now() - t0) / 1000
  await store.close()
  rmSync(dir, { recursive: true, force: true })
  return { name: 'store, checkpoint worker', ops, commits, seconds: elapsed, held, latency, walPagesAtEnd: 0 }
}

const workerSource = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.sqlitePath)
const db = new Database(workerData.file, { timeout: 0 })
db.pragma('locking_mode = EXCLUSIVE')
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.exec(workerData.schema)
const insert = db.prepare('INSERT INTO coordinator_records (shard, offset, key, value) VALUES (?, ?, ?, ?)')
let offset = 0
const tx = db.transaction((records) => { for (const r of records) insert.run(0, offset++, r.key, r.value) })
parentPort.on('message', (m) => {
  if (m === 'close') { db.close(); parentPort.postMessage('closed'); return }
  try { tx(m); parentPort.postMessage(null) } catch (e) { parentPort.postMessage(String(e)) }
})
`

async function runWorker(ops: number): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-sqlite-commit-'))
  const worker = new Worker(workerSource, {
    eval: true,
    workerData: { sqlitePath, file: join(dir, 'coordinator.db'), schema: SCHEMA },
  })
  const held: number[] = []
  const latency: number[] = []
  let commits = 0
  const t0 = performance.now()
  await new Promise<void>((resolve, reject) => {
    let sentAt = 0
    let postHeld = 0
    const next = () => {
      if (performance.now() - t0 >= seconds * 1000) return resolve()
      const records = batchOf(ops, commits)
      sentAt = performance.now()
      worker.postMessage(records)
      postHeld = performance.now() - sentAt
    }
    worker.on('message', (m: unknown) => {
      const a = performance.now()
      if (m !== null) return reject(new Error(String(m)))
      latency.push(a - sentAt)
      commits++
      next()
      // The loop is held by posting this commit and by receiving the previous one's answer.
      held.push(postHeld + (performance.now() - a - postHeld))
    })
    worker.on('error', reject)
    next()
  })
  const elapsed = (performance.now() - t0) / 1000
  worker.postMessage('close')
  await new Promise((r) => worker.once('message', r))
  await worker.terminate()
  rmSync(dir, { recursive: true, force: true })
  return { name: 'worker', ops, commits, seconds: elapsed, held, latency, walPagesAtEnd: 0 }
}

console.log(
  '| commit | ops × 6 records | commits/s | records/s | loop held p50 / p99 / max ms | latency p99 / max ms |',
)
console.log('| --- | ---: | ---: | ---: | ---: | ---: |')
for (const ops of opsList) {
  const rows = onlyTurns
    ? [await runMain(ops, 10000, true), await runStore(ops)]
    : [
        await runMain(ops, 1000),
        await runMain(ops, 10000),
        await runWorker(ops),
        await runMain(ops, 10000, true),
        await runStore(ops),
      ]
  for (const r of rows) {
    const f = (n: number) => n.toFixed(3)
    console.log(
      `| ${r.name} | ${r.ops} | ${Math.round(r.commits / r.seconds).toLocaleString('en')} | ${Math.round((r.commits * r.ops * 6) / r.seconds).toLocaleString('en')} | ${f(pct(r.held, 50))} / ${f(pct(r.held, 99))} / ${f(Math.max(...r.held))} | ${f(pct(r.latency, 99))} / ${f(Math.max(...r.latency))} |`,
    )
  }
}
