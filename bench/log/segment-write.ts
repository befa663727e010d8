/**
 * What one segment write costs, and why: the 16,717-byte batch of the data-plane loads (16 × 1 KiB
 * records) written with one positional `writeSync` per batch, as the file engine appends, against
 * the same bytes written other ways, alternated in rounds so that the machine's load weighs on
 * every case alike. Reports CPU µs per batch (user and system, this process) and wall µs per batch.
 *
 * Every file is kept until the end, and `fill-MB` of file data are written first and kept too, so
 * that the cases take page-cache pages the kernel has not handed out recently: on a VM whose host
 * takes back free guest memory (virtio-balloon free page reporting), the first touch of such a
 * page costs a host fault, and a write that extends a file takes new pages. The run also reports
 * that first touch for anonymous memory (µs per 4 KiB page), measured after the fill.
 *
 * - `extend`: each write extends the file (the file engine's append today).
 * - `overwrite, written`: the same positions of a file already written once (blocks allocated,
 *   pages in the page cache): no change of size, no block allocation.
 * - `overwrite, sparse`: a file grown first with `ftruncate` (Kafka's `file.preallocate` on Linux:
 *   `RandomAccessFile.setLength`), so the size does not change but every block is allocated by
 *   the write.
 * - `overwrite, sparse, read first`: the sparse file's pages read once before the writes (a read of
 *   a hole puts zeroed, clean pages in the page cache), so the writes find their pages resident.
 *   The read itself is timed apart (`read of the hole`, per 16,717 bytes read in 1 MiB reads).
 * - `writev × k`: k batches appended in one `writevSync` (k batches served in one turn written
 *   together), reported per batch.
 *
 *   node --import tsx bench/log/segment-write.ts [batches per case=4000] [rounds=3] [dir=tmpdir] [fill-MB=0]
 *
 * Not part of the test gate. Run with the directory on the file system to measure (the log's:
 * /work here) and on /dev/shm (tmpfs: the copy alone, no file system blocks or journal).
 */
import {
  closeSync,
  ftruncateSync,
  readSync,
  mkdtempSync,
  openSync,
  rmSync,
  unlinkSync,
  writeSync,
  writevSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const perCase = Number(process.argv[2] ?? 4000)
const rounds = Number(process.argv[3] ?? 3)
const dir = mkdtempSync(join(process.argv[4] ?? tmpdir(), 'topograph-segment-write-'))
const fillMB = Number(process.argv[5] ?? 0)
const BATCH = 16_717
const batch = Buffer.alloc(BATCH, 0x5a)
/** Files closed at the end, not before: their pages stay in the page cache meanwhile. */
const kept: { fd: number; path: string }[] = []
let serial = 0

interface Sample {
  user: number
  system: number
  wall: number
}

function time(run: () => void): Sample {
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  run()
  const wall = Number(process.hrtime.bigint() - t0) / 1e3
  const c = process.cpuUsage(c0)
  return { user: c.user / perCase, system: c.system / perCase, wall: wall / perCase }
}

function fresh(name: string): { fd: number; path: string } {
  const path = join(dir, `${name.replace(/\W+/g, '-')}-${serial++}`)
  return { fd: openSync(path, 'w+'), path }
}

function done(f: { fd: number; path: string }): void {
  kept.push(f)
}

/** Reads [0, bytes) of a file in 1 MiB reads into one scratch buffer. */
const scratch = Buffer.allocUnsafeSlow(1 << 20)
function readAll(fd: number, bytes: number): void {
  for (let pos = 0; pos < bytes; pos += scratch.length)
    readSync(fd, scratch, 0, Math.min(scratch.length, bytes - pos), pos)
}

/** First touch of fresh anonymous memory, µs per 4 KiB page (64 MiB). */
function firstTouch(): number {
  const t0 = process.hrtime.bigint()
  const b = Buffer.allocUnsafeSlow(64 << 20)
  for (let i = 0; i < b.length; i += 4096) b[i] = 1
  return Number(process.hrtime.bigint() - t0) / 1e3 / (b.length / 4096)
}

/** The file engine's append: one positional write per batch, from the start of the file. */
function appendAll(fd: number): void {
  for (let i = 0; i < perCase; i++) writeSync(fd, batch, 0, BATCH, i * BATCH)
}

/** A case: a fresh file made ready by `prepare` (not timed), then `run` on it timed. */
function onFile(name: string, prepare: (fd: number) => void, run: (fd: number) => void): () => Sample {
  return () => {
    const f = fresh(name)
    prepare(f.fd)
    const s = time(() => run(f.fd))
    done(f)
    return s
  }
}

const hole = (fd: number) => ftruncateSync(fd, perCase * BATCH)
const cases: Record<string, () => Sample> = {
  extend: onFile('extend', () => {}, appendAll),
  'overwrite, written': onFile('written', appendAll, appendAll),
  'overwrite, sparse': onFile('sparse', hole, appendAll),
  'overwrite, sparse, read first': onFile(
    'sparse-read',
    (fd) => {
      hole(fd)
      readAll(fd, perCase * BATCH)
    },
    appendAll,
  ),
  'read of the hole (1 MiB reads), per 16,717 B': onFile('hole', hole, (fd) => readAll(fd, perCase * BATCH)),
}
for (const k of [2, 4, 8]) {
  const list = Array.from({ length: k }, () => batch)
  cases[`writev × ${k}`] = onFile(
    `writev-${k}`,
    () => {},
    (fd) => {
      for (let i = 0; i < perCase; i += k) writevSync(fd, list, i * BATCH)
    },
  )
}

const results = new Map<string, Sample[]>()
const touches: number[] = []
try {
  if (fillMB > 0) {
    const f = fresh('fill')
    const chunk = Buffer.alloc(1 << 20, 0x33)
    for (let i = 0; i < fillMB; i++) writeSync(f.fd, chunk, 0, chunk.length, i * chunk.length)
    done(f)
  }
  touches.push(firstTouch())
  for (let r = 0; r < rounds; r++) {
    // Alternate the order each round (forwards, then backwards), so no case always runs first.
    const names = Object.keys(cases)
    for (const name of r % 2 === 0 ? names : names.reverse()) {
      const s = cases[name]()
      const list = results.get(name) ?? []
      list.push(s)
      results.set(name, list)
    }
    touches.push(firstTouch())
  }
} finally {
  for (const f of kept) {
    closeSync(f.fd)
    unlinkSync(f.path)
  }
  rmSync(dir, { recursive: true, force: true })
}
const f1 = (n: number) => n.toFixed(1)
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(
  `${perCase} batches of ${BATCH} B per case, ${rounds} rounds, in ${process.argv[4] ?? tmpdir()}, after ${fillMB} MB of fill; first touch of anonymous memory: ${touches.map((t) => t.toFixed(2)).join(', ')} µs per 4 KiB page`,
)
console.log('| case | CPU µs/batch user + system (rounds) | system, median | wall µs/batch, median |')
console.log('| --- | --- | ---: | ---: |')
for (const [name, ss] of results)
  console.log(
    `| ${name} | ${ss.map((s) => f1(s.user + s.system)).join(', ')} | ${f1(med(ss.map((s) => s.system)))} | ${f1(med(ss.map((s) => s.wall)))} |`,
  )
