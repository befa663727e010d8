// What a fork of the process costs SQLite's page cache afterwards: one connection of the SQLite
// engine's pragmas appends rows of 1.5 KB, one a transaction (one new page about every two rows),
// until its page cache holds about 300 pages; then, with `fork`, the process forks a child that
// exits at once (as bench/server/load.ts forked its load generator before every load), and the
// appends go on until the cache has passed 1,024 pages. Each transaction is timed, with the page
// faults this process took in it.
//
// The page cache (pcache1) doubles its hash table when its page count reaches the bucket count
// (256, 512, 1,024, …) and relinks every cached page, writing the header that follows each page's
// data. After a fork every page of the process is copy-on-write, so that one transaction takes a
// write fault for every page cached before the fork (BENCHMARKS.md, "OffsetCommit: the forks of the
// load generator"). To time the resizes themselves (root; the path of the addon the process loads):
//
//   perf probe -x <better_sqlite3.node> --add 'rh=pcache1ResizeHash nPage=+56(%di):u32'
//   perf probe -x <better_sqlite3.node> --add 'rhret=pcache1ResizeHash%return'
//   perf record -e probe_better_sqlite3:rh -e probe_better_sqlite3:rhret__return \
//     -e exceptions:page_fault_user -k mono -- node --import tsx bench/server/pcache-fork.ts fork
//
//   node --import tsx bench/server/pcache-fork.ts [fork|none] [rows-before=600]
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'

const mode = process.argv[2] ?? 'fork'
const before = Number(process.argv[3] ?? 600)
if ((mode !== 'fork' && mode !== 'none') || !(before > 0)) {
  console.error('usage: pcache-fork.ts [fork|none] [rows-before]')
  process.exit(2)
}

const dir = mkdtempSync(join(tmpdir(), 'pcache-fork-'))
const db = new Database(join(dir, 'x.db'))
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.pragma('wal_autocheckpoint = 0')
db.exec(
  'CREATE TABLE b (shard INTEGER NOT NULL, base INTEGER NOT NULL, records BLOB NOT NULL, PRIMARY KEY (shard, base))',
)
const insert = db.prepare<[number, number, Buffer]>('INSERT INTO b (shard, base, records) VALUES (?, ?, ?)')
const blob = Buffer.alloc(1500, 7)
let row = 0
const append = db.transaction(() => insert.run(0, row++, blob))

/** Appends until `rows` rows; each transaction's ms and page faults. */
function appendUntil(rows: number): { ms: number; faults: number; row: number }[] {
  const out: { ms: number; faults: number; row: number }[] = []
  while (row < rows) {
    const faults = process.resourceUsage().minorPageFault
    const t = performance.now()
    append()
    out.push({
      ms: performance.now() - t,
      faults: process.resourceUsage().minorPageFault - faults,
      row: row - 1,
    })
  }
  return out
}

appendUntil(before)
if (mode === 'fork') {
  await new Promise<void>((resolve, reject) => {
    // libuv starts every child process with fork(), as child_process.fork does.
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
    child.once('exit', () => resolve())
    child.once('error', reject)
  })
}
const after = appendUntil(before + 1500)
const slowest = [...after].sort((a, b) => b.ms - a.ms).slice(0, 3)
const faults = after.reduce((n, x) => n + x.faults, 0)
console.log(
  `${mode}: ${after.length} transactions after row ${before}, ${faults} page faults in them; slowest: ${slowest
    .map((x) => `row ${x.row} ${x.ms.toFixed(2)} ms (${x.faults} faults)`)
    .join(', ')}`,
)
db.close()
rmSync(dir, { recursive: true, force: true })
