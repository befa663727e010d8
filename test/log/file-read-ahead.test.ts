// The file engine reads the pages past a busy active segment's data ahead (READ_AHEAD_BYTES): the
// file is made longer than its data (a hole) and the hole is read on libuv's threadpool, so that
// appends write into pages already in the page cache. These tests pin what that must never change:
// reads return the data only, a roll and a close cut the file back to its data, a segment that
// appends slowly reads nothing ahead, and after a crash the zeros past the data are cut without
// being counted as lost bytes while a torn batch before them still is. (A real kill -9 during such
// appends is in recovery.e2e.test.ts.)
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { type FileLayer, FileLogStorage, NODE_FILE_LAYER, READ_AHEAD_CHUNKS } from '../../src/log/file.js'
import { createLogManager, type LogManagerImpl } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import type { LogConfig, LogLogger } from '../../src/log/types.js'
import { readAll } from './contract.js'
import { batchOf } from './helpers.js'

const AHEAD = 64 * 1024
const NOW = Date.now()

/**
 * node:fs, with every read ahead (a threadpool read into a plain Uint8Array) held until the test
 * releases it: whether a read ahead is in flight when the next append comes is the test's choice,
 * never the machine's speed.
 */
function gatedLayer(onAhead: (fd: number, position: number, length: number) => void = () => {}): {
  layer: FileLayer
  state: { started: number; ended: number }
  release: () => Promise<void>
} {
  const state = { started: 0, ended: 0 }
  const held: (() => Promise<void>)[] = []
  const layer: FileLayer = {
    ...NODE_FILE_LAYER,
    read(fd, buffer, offset, length, position, cb) {
      if (Buffer.isBuffer(buffer)) return fs.read(fd, buffer, offset, length, position, cb)
      state.started++
      onAhead(fd, position, length)
      held.push(
        () =>
          new Promise<void>((resolve) => {
            fs.read(fd, buffer, offset, length, position, (err, n) => {
              state.ended++
              cb(err, n)
              resolve()
            })
          }),
      )
    },
  }
  /** Lets every read ahead held so far run, and waits until each has ended. */
  async function release(): Promise<void> {
    while (held.length > 0) await Promise.all(held.splice(0).map((run) => run()))
  }
  return { layer, state, release }
}

async function open(
  dir: string,
  opts: { layer?: FileLayer; now?: () => number; logger?: LogLogger; configs?: Partial<LogConfig> } = {},
): Promise<LogManagerImpl> {
  const m = createLogManager(
    {
      ...DEFAULT_LOG_MANAGER_CONFIG,
      logDirs: [dir],
      defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, opts.configs ?? {}),
    },
    {
      storage: new FileLogStorage([dir], {
        fs: opts.layer,
        readAheadBytes: AHEAD,
        // A clock that stands still: every chunk of appends is within the pace.
        now: opts.now ?? (() => 0),
      }),
      noBackgroundJobs: true,
      logger: opts.logger,
    },
  )
  await m.open()
  await m.createPartitions('t', 'id', 0, 1, opts.configs)
  return m
}

/** A batch of 16 records of 1 KiB values, as the benchmarks send (about 16.7 KB). */
function bigBatch(i: number): Uint8Array {
  return batchOf(
    Array.from({ length: 16 }, (_, k) => ({ key: `b${i}-${k}`, value: `${i}:`.padEnd(1024, 'v') })),
    { timestamp: NOW },
  )
}

/** Appends batches `from` … `from + n - 1`, a turn of the event loop after each (as requests come). */
async function append(m: LogManagerImpl, from: number, n: number): Promise<void> {
  const p = m.partition('t', 0)!
  for (let i = from; i < from + n; i++) {
    assert.equal((await p.append(bigBatch(i), { now: NOW })).errorCode, 0)
    await new Promise((r) => setImmediate(r))
  }
}

function segmentFiles(dir: string): string[] {
  return readdirSync(join(dir, 't-0'))
    .filter((f) => f.endsWith('.log'))
    .sort()
    .map((f) => join(dir, 't-0', f))
}

/** True when the file's bytes from `from` to its end are all zeros. */
function zerosFrom(path: string, from: number): boolean {
  const b = fs.readFileSync(path).subarray(from)
  return b.byteLength > 0 && b.every((x) => x === 0)
}

test('file: an active segment taking appends at pace reads pages ahead; reads, a roll and a close see only the data', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-ahead-'))
  try {
    const { layer, state, release } = gatedLayer()
    const m = await open(dir, { layer })
    const p = m.partition('t', 0) as PartitionLogImpl
    // Each read ahead ends before the next append.
    for (let i = 0; i < 20; i++) {
      await append(m, i, 1)
      await release()
    }
    assert.ok(state.started >= 2, `reads ahead: ${state.started}`)
    const [active] = segmentFiles(dir)
    const data = p.sizeInBytes
    // The file is longer than its data, by zeros, up to READ_AHEAD_CHUNKS chunks past it.
    assert.ok(statSync(active).size > data)
    assert.ok(statSync(active).size <= data + READ_AHEAD_CHUNKS * AHEAD)
    assert.ok(zerosFrom(active, data))
    const batches = await readAll(p, 0)
    assert.equal(batches.length, 20)
    assert.equal(batches[19].lastOffset, 20 * 16 - 1)
    const whole = await p.read(0, 1 << 30, { minOneMessage: true, isolationLevel: 'read_uncommitted' })
    assert.equal(whole.records.byteLength, data)
    // A roll cuts the rolled segment back to its data.
    p.roll(NOW)
    await append(m, 20, 10)
    await release()
    const [rolled, newActive] = segmentFiles(dir)
    assert.equal(statSync(rolled).size, data)
    assert.ok(statSync(newActive).size > p.sizeInBytes - data)
    // A close cuts the active one back too, and a clean start finds every batch.
    const activeData = p.sizeInBytes - data
    await m.close()
    assert.equal(statSync(newActive).size, activeData)
    const again = await open(dir)
    assert.equal(again.partition('t', 0)!.logEndOffset, 30 * 16)
    assert.equal((await readAll(again.partition('t', 0)!, 0)).length, 30)
    await again.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a segment that takes its appends slower than the pace reads nothing ahead', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-ahead-slow-'))
  try {
    const { layer, state } = gatedLayer()
    // Two seconds pass between two looks of the clock: never a chunk within the pace.
    let t = 0
    const m = await open(dir, {
      layer,
      now: () => {
        t += 2000
        return t
      },
    })
    await append(m, 0, 20)
    assert.equal(state.started, 0)
    const [active] = segmentFiles(dir)
    assert.equal(statSync(active).size, m.partition('t', 0)!.sizeInBytes)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: after a crash the zeros read ahead are cut, not counted as lost; a torn batch before them is', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-ahead-crash-'))
  try {
    const { layer, state, release } = gatedLayer()
    const m = await open(dir, { layer })
    // Each read ahead ends before the next append, so the file stays ahead of the data.
    for (let i = 0; i < 20; i++) {
      await append(m, i, 1)
      await release()
    }
    assert.ok(state.started >= 2, `reads ahead: ${state.started}`)
    const data = m.partition('t', 0)!.sizeInBytes
    // Two crash images (the files as a kill -9 leaves them: no clean-shutdown marker), one with
    // half a batch written past the data, in the zeros.
    const clean = join(dir, 'crash-zeros')
    const torn = join(dir, 'crash-torn')
    for (const d of [clean, torn]) cpSync(join(dir, 't-0'), join(d, 't-0'), { recursive: true })
    for (const d of [clean, torn]) {
      for (const f of readdirSync(dir).filter((n) => n.endsWith('checkpoint')))
        fs.copyFileSync(join(dir, f), join(d, f))
    }
    const tornPath = segmentFiles(torn)[0]
    assert.ok(statSync(tornPath).size > data)
    const half = bigBatch(99).subarray(0, 40)
    const fd = fs.openSync(tornPath, 'r+')
    fs.writeSync(fd, half, 0, half.byteLength, data)
    fs.closeSync(fd)
    await m.close()
    for (const [d, lost] of [
      [clean, 0],
      [torn, 40],
    ] as const) {
      const recovered: { truncatedBytes?: number }[] = []
      const logger: LogLogger = {
        info(o) {
          recovered.push(o as { truncatedBytes?: number })
        },
        warn() {},
        error() {},
      }
      const r = await open(d, { logger })
      const q = r.partition('t', 0)!
      assert.equal(q.logEndOffset, 20 * 16)
      assert.equal(statSync(segmentFiles(d)[0]).size, data, 'cut back to the data')
      assert.equal((await readAll(q, 0)).length, 20)
      assert.deepEqual(
        recovered.filter((o) => o.truncatedBytes !== undefined).map((o) => o.truncatedBytes),
        [lost],
      )
      // Appends go on right after the data.
      assert.equal((await q.append(bigBatch(20), { now: NOW })).baseOffset, 20 * 16)
      await r.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a read ahead never covers the chunk the next appends write into', async () => {
  // A read of a hole keeps its new pages locked until it has zeroed them; an append reaching one
  // waits for it inside its writeSync, on the event loop. So every read ahead starts at least a
  // chunk past the data as it was when the read was asked.
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-ahead-lead-'))
  try {
    const reads: { from: number; to: number; dataEnd: number }[] = []
    // Where each file's written data ends.
    const ends = new Map<number, number>()
    const { layer: gated, release } = gatedLayer((fd, position, length) =>
      reads.push({ from: position, to: position + length, dataEnd: ends.get(fd) ?? 0 }),
    )
    const layer: FileLayer = {
      ...gated,
      writeSync(fd, buffer, offset, length, position) {
        const n = fs.writeSync(fd, buffer, offset, length, position)
        ends.set(fd, Math.max(ends.get(fd) ?? 0, position + n))
        return n
      },
    }
    const m = await open(dir, { layer })
    // Reads ahead in flight when the next appends come (held over two appends out of three), and
    // ended before them (released after every third).
    for (let i = 0; i < 40; i++) {
      await append(m, i, 1)
      if (i % 3 === 2) await release()
    }
    await release()
    await m.close()
    assert.ok(reads.length >= 3, `reads ahead: ${reads.length}`)
    for (const r of reads) {
      assert.ok(r.from >= r.dataEnd + AHEAD, `read ahead from ${r.from}, data to ${r.dataEnd}`)
      assert.ok(r.to <= r.dataEnd + READ_AHEAD_CHUNKS * AHEAD, `read ahead to ${r.to}, data to ${r.dataEnd}`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
