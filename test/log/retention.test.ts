// Time-based retention on the file engine racing appends, rolls and the background work queued
// against the segments it deletes (flushes, index files, producer snapshots).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { FileLogStorage } from '../../src/log/file.js'
import { createLogManager } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import { batchOf, records } from './helpers.js'

async function openManager(dir: string) {
  const m = createLogManager(
    {
      ...DEFAULT_LOG_MANAGER_CONFIG,
      logDirs: [dir],
      defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, { indexIntervalBytes: 0 }),
    },
    { storage: new FileLogStorage([dir]), noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('t', 'id', 0, 1, { segmentBytes: 300, retentionMs: 1, fileDeleteDelayMs: 0 })
  return { m, p: m.partition('t', 0)! as PartitionLogImpl }
}

test('retention: deleting segments whose flush, index write or snapshot is queued keeps the partition online', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-ret-race-'))
  try {
    const { m, p } = await openManager(dir)
    const producer = { producerId: 11, producerEpoch: 0 }
    let seq = 0
    const timestamp = Date.now() - 60_000
    for (let round = 0; round < 40; round++) {
      // Enough batches to roll (each roll queues a flush of the rolled segment, its index files
      // and a producer snapshot), then a retention pass in the same turn that deletes every
      // segment, the one just rolled out included, before that work ran.
      for (let i = 0; i < 4; i++) {
        const r = await p.append(batchOf(records(2), { timestamp, ...producer, baseSequence: seq }), {
          now: Date.now(),
        })
        assert.equal(r.errorCode, 0, `append at sequence ${seq} (round ${round})`)
        seq += 2
      }
      const pending = p.flush()
      const retention = p.applyRetention(Date.now() + 60_000)
      await Promise.allSettled([pending, retention])
      assert.ok(p.online, `the partition is online after round ${round}`)
      await new Promise((r) => setImmediate(r))
    }
    // Retention went on deleting (the log start moved) and the producer goes on.
    assert.ok(p.logStartOffset > 0)
    const next = await p.append(batchOf(records(2), { timestamp, ...producer, baseSequence: seq }), {
      now: Date.now(),
    })
    assert.equal(next.errorCode, 0)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
