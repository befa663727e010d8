// Segments the cleaner leaves with no batch on the file engine: removed with their files and
// descriptors, crash-safely; the log opened again reads as before.
import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import * as fs from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { type FileLayer, NODE_FILE_LAYER } from '../../src/log/file.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import type { LogConfig } from '../../src/log/types.js'
import { readAll } from './contract.js'
import { openFilesOf, openOnePartition } from './fs-probes.js'
import { batchOf } from './helpers.js'

const NOW = Date.now()
/** Batch i: key k(i mod 5), value v<i>, all of one size. */
const batch = (i: number) =>
  batchOf([{ key: `k${i % 5}`, value: `v${String(i).padStart(2, '0')}` }], { timestamp: NOW + i * 10 })
const CONFIG: Partial<LogConfig> = {
  cleanupPolicy: ['compact'],
  minCleanableDirtyRatio: 0.01,
  // Two batches a segment.
  segmentBytes: 2 * batch(0).byteLength,
}
/** Of 0..31 (30 and 31 in the active segment), what a clean leaves. */
const SURVIVORS = [25, 26, 27, 28, 29, 30, 31]

const open = (dir: string, layer: FileLayer = NODE_FILE_LAYER) => openOnePartition(dir, CONFIG, layer)

/** 30 batches over five keys in 15 segments, then two in a new active segment. */
async function fill(p: PartitionLogImpl): Promise<void> {
  for (let i = 0; i < 30; i++) await p.append(batch(i), { now: NOW })
  p.roll(NOW)
  for (let i = 30; i < 32; i++) await p.append(batch(i), { now: NOW })
  await p.flush()
}

const bases = (p: PartitionLogImpl) => p.store.segments().map((s) => s.baseOffset)
const files = (dir: string) => readdirSync(join(dir, 'c-0')).sort()
const withBase = (names: string[], base: number) =>
  names.filter((n) => n.startsWith(String(base).padStart(20, '0')))

test('cleaner: segments left empty go with their files and descriptors; the log opens the same after a close or a crash', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-cempty-'))
  const crashed = mkdtempSync(join(tmpdir(), 'topograph-cempty-crashed-'))
  try {
    const { m, p, storage } = await open(dir)
    await fill(p)
    await storage.checkpoint()
    const before = files(dir)
    assert.equal(bases(p).length, 16)
    for (const b of [2, 22])
      assert.deepEqual(
        withBase(before, b).map((n) => n.slice(21)),
        ['aborted', 'index', 'log', 'snapshot', 'timeindex'],
      )
    const fdsBefore = bases(p).reduce(
      (n, b) => n + openFilesOf(join(dir, 'c-0', `${String(b).padStart(20, '0')}.log`)),
      0,
    )
    assert.equal(fdsBefore, 16)

    await m.runCleaner(NOW)
    await storage.discarded()
    assert.deepEqual(bases(p), [0, 24, 26, 28, 30])
    assert.equal(m.cleaner!.lastStats.at(-1)!.segmentsRemoved, 11)
    const after = files(dir)
    for (let b = 2; b <= 22; b += 2) assert.deepEqual(withBase(after, b), [], `segment ${b}'s files`)
    assert.equal(after.filter((n) => n.endsWith('.log')).length, 5)
    const segmentFiles = (names: string[]) => names.filter((n) => /\.(log|index|timeindex)$/.test(n)).length
    assert.equal(segmentFiles(before) - segmentFiles(after), 11 * 3)
    let fds = 0
    for (let b = 0; b < 32; b += 2) fds += openFilesOf(join(dir, 'c-0', `${String(b).padStart(20, '0')}.log`))
    assert.equal(fds, 5)
    assert.deepEqual(
      (await readAll(p, 0)).map((b) => b.baseOffset),
      SURVIVORS,
    )

    // A crash now (the directory as it is, no clean-shutdown marker), and a clean close.
    cpSync(dir, crashed, { recursive: true })
    rmSync(join(crashed, '.kafka_cleanshutdown'), { force: true })
    await m.close()
    for (const d of [dir, crashed]) {
      const again = await open(d)
      assert.deepEqual(bases(again.p), [0, 24, 26, 28, 30], d)
      assert.equal(again.p.logStartOffset, 0)
      assert.equal(again.p.logEndOffset, 32)
      assert.deepEqual(
        (await readAll(again.p, 0)).map((b) => [b.baseOffset, b.values[0]]),
        SURVIVORS.map((o) => [o, `v${o}`]),
      )
      for (let o = 0; o < 32; o++)
        assert.equal(
          (await readAll(again.p, o))[0].baseOffset,
          SURVIVORS.find((s) => s >= o),
          `read at ${o}`,
        )
      assert.equal((await again.p.append(batch(32), { now: NOW })).baseOffset, 32)
      await again.m.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
    rmSync(crashed, { recursive: true, force: true })
  }
})

for (const point of ['.index', '.timeindex', '.log'] as const) {
  test(`cleaner: a crash before the rename of a removed segment's ${point} leaves it whole`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topograph-cempty-'))
    const crashed = mkdtempSync(join(tmpdir(), 'topograph-cempty-crashed-'))
    // Segment 2 is the first the clean removes; the crash: its renames stop at the point, and the
    // files are taken as they are then.
    const victim = `${String(2).padStart(20, '0')}${point}`
    let armed = false
    let reached = false
    const layer: FileLayer = {
      ...NODE_FILE_LAYER,
      rename(from, to, cb) {
        if (armed && from.endsWith(victim) && to.endsWith('.deleted')) {
          reached = true
          armed = false
          cpSync(dir, crashed, { recursive: true })
          setImmediate(() => cb(new Error('crash')))
        } else fs.rename(from, to, cb)
      },
    }
    try {
      const { m, p, storage } = await open(dir, layer)
      await fill(p)
      await storage.checkpoint()
      armed = true
      await m.runCleaner(NOW)
      await storage.discarded()
      assert.ok(reached, 'the clean reached the point')
      await m.close()

      rmSync(join(crashed, '.kafka_cleanshutdown'), { force: true })
      const again = await open(crashed)
      const segs = bases(again.p)
      // Every point is before its file's rename: segment 2 is whole, its batches at their
      // offsets (its indexes rebuilt when they went). After it, it is gone (the test above).
      const kept = segs.includes(2)
      assert.ok(kept, JSON.stringify(segs))
      const read = (await readAll(again.p, 0)).map((b) => [b.baseOffset, b.values[0]])
      for (const [o, v] of read) assert.equal(v, `v${String(o).padStart(2, '0')}`)
      const offsets = read.map(([o]) => o)
      for (const o of SURVIVORS) assert.ok(offsets.includes(o), `offset ${o}`)
      assert.equal(offsets.includes(2) && offsets.includes(3), kept)
      assert.equal((await readAll(again.p, 2))[0].baseOffset, kept ? 2 : SURVIVORS[0])
      assert.equal(again.p.logEndOffset, 32)
      assert.deepEqual(
        files(crashed).filter((n) => n.endsWith('.deleted') || n.endsWith('.cleaned')),
        [],
      )
      // The next clean removes it.
      await again.p.append(batch(32), { now: NOW })
      again.p.roll(NOW)
      await again.m.runCleaner(NOW)
      assert.equal(bases(again.p).includes(2), false)
      await again.m.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
      rmSync(crashed, { recursive: true, force: true })
    }
  })
}
