import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { FileLogStorage } from '../../src/log/file.js'
import { createLogManager } from '../../src/log/manager.js'
import { runLogContract } from './contract.js'
import { batchOf, records } from './helpers.js'

runLogContract('file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-'))
  return {
    storage: () => new FileLogStorage([join(dir, 'logs')]),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
})

test('file: a full offset index (segment.index.bytes) rolls the segment', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-idx-'))
  try {
    const m = createLogManager(
      {
        ...DEFAULT_LOG_MANAGER_CONFIG,
        logDirs: [dir],
        defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, { segmentIndexBytes: 24, indexIntervalBytes: 0 }),
      },
      { noBackgroundJobs: true },
    )
    await m.open()
    await m.createPartitions('t', 'id', 0, 1)
    const p = m.partition('t', 0)!
    const now = Date.now()
    for (let i = 0; i < 7; i++) await p.append(batchOf(records(1), { timestamp: now }), { now })
    // An offset-index entry per batch (interval 0) and 3 of them fit in 24 bytes: a new segment
    // every 3 batches (the time index grows only when the timestamp does).
    const logs = readdirSync(join(dir, 't-0')).filter((f) => f.endsWith('.log'))
    assert.deepEqual(logs.sort(), [
      '00000000000000000000.log',
      '00000000000000000003.log',
      '00000000000000000006.log',
    ])
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
