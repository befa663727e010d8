// The cleaner's swap of a cleaned segment on the file engine, interrupted as a crash would: the
// log opened again serves every batch at its own offsets, from whichever file survived.
import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import * as fs from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { type FileLayer, FileLogStorage, NODE_FILE_LAYER } from '../../src/log/file.js'
import { createLogManager } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import type { LogConfig } from '../../src/log/types.js'
import { readAll } from './contract.js'
import { batchOf } from './helpers.js'

const CONFIG: Partial<LogConfig> = {
  cleanupPolicy: ['compact'],
  minCleanableDirtyRatio: 0.01,
  indexIntervalBytes: 0,
}
const NOW = Date.now()

async function open(dir: string, layer: FileLayer = NODE_FILE_LAYER) {
  const storage = new FileLogStorage([dir], { fs: layer })
  const m = createLogManager(
    { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [dir], defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, CONFIG) },
    { storage, noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('c', 'id', 0, 1, CONFIG)
  return { m, storage, p: m.partition('c', 0)! as PartitionLogImpl }
}

/** Batch i: key k(i mod 5), value v<i>, all of one size (so positions in the two files line up). */
const batch = (i: number) =>
  batchOf([{ key: `k${i % 5}`, value: `v${String(i).padStart(3, '0')}` }], { timestamp: NOW })

for (const point of ['before the log', 'after the log'] as const) {
  test(`cleaner swap interrupted ${point}'s rename: every batch is read at its own offset`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topograph-swap-'))
    const crashed = mkdtempSync(join(tmpdir(), 'topograph-swap-crashed-'))
    let armed = false
    let reached = false
    // The crash: the swap's renames stop at the point (the files stay as they are then).
    const layer: FileLayer = {
      ...NODE_FILE_LAYER,
      renameSync(from, to) {
        const log = from.endsWith('.log.cleaned')
        const stop = armed && (point === 'before the log' ? log : !log && from.endsWith('index.cleaned'))
        if (stop) {
          reached = true
          throw new Error('crash')
        }
        fs.renameSync(from, to)
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
      cpSync(dir, crashed, { recursive: true })
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
