// The cleaner's swap of a cleaned segment on the file engine, interrupted as a crash would: the
// log opened again serves every batch at its own offsets, from whichever file survived.
import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import * as fs from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { type FileLayer, NODE_FILE_LAYER } from '../../src/log/file.js'
import type { LogConfig } from '../../src/log/types.js'
import { readAll } from './contract.js'
import { heldRenames, openOnePartition } from './fs-probes.js'
import { batchOf } from './helpers.js'

const CONFIG: Partial<LogConfig> = {
  cleanupPolicy: ['compact'],
  minCleanableDirtyRatio: 0.01,
  indexIntervalBytes: 0,
}
const NOW = Date.now()

const open = (dir: string, layer: FileLayer = NODE_FILE_LAYER) => openOnePartition(dir, CONFIG, layer)

/** Batch i: key k(i mod 5), value v<i>, all of one size (so positions in the two files line up). */
const batch = (i: number) =>
  batchOf([{ key: `k${i % 5}`, value: `v${String(i).padStart(3, '0')}` }], { timestamp: NOW })

for (const point of ['before the log', 'after the log'] as const) {
  test(`cleaner swap interrupted ${point}'s rename: every batch is read at its own offset`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topograph-swap-'))
    const crashed = mkdtempSync(join(tmpdir(), 'topograph-swap-crashed-'))
    let armed = false
    let reached = false
    // The crash: the swap's renames stop at the point, and the files are taken as they are then.
    const layer: FileLayer = {
      ...NODE_FILE_LAYER,
      rename(from, to, cb) {
        const log = /\.log\.\d+\.cleaned$/.test(from)
        const stop = armed && (point === 'before the log' ? log : !log && /index\.\d+\.cleaned$/.test(from))
        if (stop) {
          reached = true
          armed = false
          cpSync(dir, crashed, { recursive: true })
          setImmediate(() => cb(new Error('crash')))
        } else fs.rename(from, to, cb)
      },
    }
    try {
      const size = batch(0).byteLength
      const { m, p, storage } = await open(dir, layer)
      // Segment 0: batches 0–9, whose last five supersede the first five; then an active segment.
      for (let i = 0; i < 10; i++) await p.append(batch(i), { now: NOW })
      p.roll(NOW)
      for (let i = 10; i < 12; i++) await p.append(batch(i), { now: NOW })
      assert.equal(batch(11).byteLength, size)
      await p.flush()
      await storage.checkpoint()
      const before = (await readAll(p, 0)).map((b) => [b.baseOffset, b.values[0]])
      armed = true
      await m.runCleaner(NOW).catch(() => {})
      armed = false
      assert.ok(reached, 'the clean reached the point')
      await m.close().catch(() => {})

      const again = await open(crashed)
      const after = (await readAll(again.p, 0)).map((b) => [b.baseOffset, b.values[0]])
      for (const [offset, value] of after)
        assert.equal(value, `v${String(offset).padStart(3, '0')}`, `offset ${offset}`)
      // Offsets 5–11 are there whichever file survived; 0–4 only if the old one did.
      for (let o = 5; o < 12; o++)
        assert.ok(
          after.some(([b]) => b === o),
          `offset ${o} is there`,
        )
      assert.ok(after.length <= before.length)
      // A read from offset 5 starts at offset 5.
      const from5 = await readAll(again.p, 5)
      assert.equal(from5[0].baseOffset, 5)
      assert.deepEqual(
        readdirSync(join(crashed, 'c-0')).filter((n) => n.endsWith('.cleaned') || n.endsWith('.deleted')),
        [],
      )
      await again.m.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
      rmSync(crashed, { recursive: true, force: true })
    }
  })
}

test("cleaner swap: its renames wait off the event loop, and the partition's work meanwhile leaves the copy's files alone", async () => {
  // The swap renamed on the event loop: on a busy disk a rename in the partition's directory took
  // up to 325 ms, a stall of every connection. Now it runs on the threadpool; here its renames are
  // held while the partition appends, reads, flushes, runs retention and closes its store.
  const dir = mkdtempSync(join(tmpdir(), 'topograph-swap-held-'))
  const copy = mkdtempSync(join(tmpdir(), 'topograph-swap-held-copy-'))
  let syncRenames = 0
  // Renames of segment 0's index files by a flush (from their temporary files) while the swap is
  // held: they would cross the swap's.
  let flushRenames = 0
  const counted: FileLayer = {
    ...NODE_FILE_LAYER,
    renameSync(from, to) {
      if (renames.held > 0) syncRenames++
      fs.renameSync(from, to)
    },
    rename(from, to, cb) {
      if (renames.held > 0 && /0{20}\.(time)?index\.\d+\.tmp$/.test(from)) flushRenames++
      fs.rename(from, to, cb)
    },
  }
  // The swap's renames: the old index files away, then the copy's files onto their names.
  const renames = heldRenames((from, to) => from.endsWith('.cleaned') || to.endsWith('.deleted'), counted)
  try {
    const { m, p, storage } = await open(dir, renames.layer)
    for (let i = 0; i < 10; i++) await p.append(batch(i), { now: NOW })
    // The store's roll alone (the partition's would flush): segment 0's index files are still to
    // be written when the swap starts.
    p.store.roll(NOW)
    for (let i = 10; i < 12; i++) await p.append(batch(i), { now: NOW })
    assert.deepEqual(
      readdirSync(join(dir, 'c-0')).filter(
        (n) => n.startsWith('00000000000000000000.') && n.includes('index'),
      ),
      [],
    )
    renames.hold()
    const cleaning = m.runCleaner(NOW)
    await renames.reached
    // The swap waits; the partition goes on with the old segment.
    await p.append(batch(12), { now: NOW })
    const during = (await readAll(p, 0)).map((b) => b.values[0])
    assert.deepEqual(
      during,
      Array.from({ length: 13 }, (_, i) => `v${String(i).padStart(3, '0')}`),
    )
    // A flush now leaves segment 0's index files to the swap.
    await p.flush()
    assert.equal(flushRenames, 0, "a flush's renames of segment 0's index files")
    await storage.checkpoint()
    const segments = p.store.segmentCount
    p.store.deleteOldestSegments(1)
    assert.equal(p.store.segmentCount, segments, 'retention leaves the segment being swapped')
    let closed = false
    const closing = p.store.close().then(() => (closed = true))
    await new Promise((r) => setTimeout(r, 50))
    assert.equal(closed, false, 'the close waits for the swap')
    assert.equal(syncRenames, 0, 'no rename on the event loop meanwhile')
    renames.release()
    await cleaning
    await closing
    assert.ok(
      m.cleaner!.lastStats.some((st) => st.segments === 1),
      JSON.stringify(m.cleaner!.lastStats),
    )
    cpSync(dir, copy, { recursive: true })
    await m.close().catch(() => {})

    // The store closed cleanly after the swap: the copy opens with the cleaned segment and its
    // own index files (indexIntervalBytes 0 indexes every batch), and a read from each offset
    // starts at that offset.
    const again = await open(copy)
    const after = (await readAll(again.p, 0)).map((b) => b.baseOffset)
    assert.deepEqual(after, [5, 6, 7, 8, 9, 10, 11, 12])
    for (const o of after) assert.equal((await readAll(again.p, o))[0].baseOffset, o, `offset ${o}`)
    assert.deepEqual(
      readdirSync(join(copy, 'c-0')).filter((n) => n.endsWith('.cleaned') || n.endsWith('.deleted')),
      [],
    )
    await again.m.close()
  } finally {
    renames.release()
    rmSync(dir, { recursive: true, force: true })
    rmSync(copy, { recursive: true, force: true })
  }
})
