import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createLogManager, DEFAULT_LOG_MANAGER_CONFIG } from '../../src/log/index.js'
import { batchOf, records } from './helpers.js'

test('memory engine: append then read', async () => {
  const m = createLogManager(
    { ...DEFAULT_LOG_MANAGER_CONFIG, storage: 'memory', logDirs: [] },
    { noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('t', 'id', 0, 1)
  const p = m.partition('t', 0)!
  const r = await p.append(batchOf(records(3)), { now: 1700000000000 })
  assert.equal(r.errorCode, 0)
  assert.equal(r.baseOffset, 0)
  const r2 = await p.append(batchOf(records(2)), { now: 1700000000000 })
  assert.equal(r2.baseOffset, 3)
  const rd = await p.read(0, 1 << 20, { minOneMessage: true, isolationLevel: 'read_uncommitted' })
  assert.equal(rd.highWatermark, 5)
  assert.ok(rd.records.byteLength > 0)
  await m.close()
})
