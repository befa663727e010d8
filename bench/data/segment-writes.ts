// What a segment write costs per batch when several batches go in one system call: 16,717-byte
// batches (the data benches' batch) written one `pwrite64` each, as the file engine appends now,
// against one `pwritev` of `group` batches, back to back into a file whose pages were read ahead
// first (ftruncate, then a read of the hole: clean zeroed pages in the page cache, as the engine
// leaves them for its appends). Wall time per batch, each way in turn (the first way alternating), `rounds` times.
//
//   node --import tsx bench/data/segment-writes.ts [group=4] [batches=3600] [rounds=3] [dir=os.tmpdir()]
import {
  closeSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  writeSync,
  writevSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { f2, loadAverage } from './load.js'

const group = Number(process.argv[2] ?? 4)
const batches = Number(process.argv[3] ?? 3600)
const rounds = Number(process.argv[4] ?? 3)
const dir = mkdtempSync(join(process.argv[5] ?? tmpdir(), 'topograph-segment-writes-'))
const BATCH = 16_717
const batch = Buffer.alloc(BATCH, 1)

/** A file of `batches` batches' length whose pages were read ahead. */
function readAhead(name: string): number {
  const fd = openSync(join(dir, name), 'w+')
  ftruncateSync(fd, BATCH * batches + 65_536)
  const scratch = Buffer.alloc(1 << 20)
  for (let at = 0; at < BATCH * batches; at += scratch.length) readSync(fd, scratch, 0, scratch.length, at)
  return fd
}

function timed(name: string, write: (fd: number) => void): number {
  const fd = readAhead(name)
  const t0 = process.hrtime.bigint()
  write(fd)
  const us = Number(process.hrtime.bigint() - t0) / 1e3 / batches
  closeSync(fd)
  rmSync(join(dir, name))
  return us
}

try {
  const group0 = Array.from({ length: group }, () => batch)
  for (let round = 1; round <= rounds; round++) {
    const writeOne = (fd: number) => {
      for (let i = 0; i < batches; i++) writeSync(fd, batch, 0, BATCH, i * BATCH)
    }
    const writeGrouped = (fd: number) => {
      for (let i = 0; i + group <= batches; i += group) writevSync(fd, group0, i * BATCH)
    }
    // Each way goes first in every other round: a file's pages come from what the previous one freed.
    let one: number
    let grouped: number
    if (round % 2 === 1) {
      one = timed(`one-${round}`, writeOne)
      grouped = timed(`grouped-${round}`, writeGrouped)
    } else {
      grouped = timed(`grouped-${round}`, writeGrouped)
      one = timed(`one-${round}`, writeOne)
    }
    console.log(
      `round ${round}: µs a batch, one pwrite64 each ${f2(one)}, one pwritev of ${group} ${f2(grouped)}; load ${loadAverage()}`,
    )
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
