// LogManager on the file engine: several log directories, background retention on its own timer,
// config checks and the Kafka key table.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  checkLogConfig,
  DEFAULT_LOG_CONFIG,
  DEFAULT_LOG_MANAGER_CONFIG,
  LOG_CONFIG_KEYS,
  resolveLogConfig,
} from '../../src/log/config.js'
import { createLogManager } from '../../src/log/manager.js'
import { batchOf, records } from './helpers.js'

test('several log.dirs: partitions spread over them, DescribeLogDirs lists each with its own', async () => {
  const root = mkdtempSync(join(tmpdir(), 'topograph-dirs-'))
  try {
    const dirs = [join(root, 'a'), join(root, 'b')]
    const m = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: dirs }, { noBackgroundJobs: true })
    await m.open()
    await m.createPartitions('t', 'id', 0, 4)
    for (let i = 0; i < 4; i++) await m.partition('t', i)!.append(batchOf(records(1)), { now: Date.now() })
    const stats = await m.logDirs()
    assert.deepEqual(
      stats.map((d) => d.path),
      dirs,
    )
    assert.deepEqual(
      stats.map((d) => d.partitions.length),
      [2, 2],
    )
    for (const d of stats) {
      assert.equal(d.errorCode, 0)
      assert.ok(d.totalBytes > 0 && d.usableBytes > 0)
      for (const p of d.partitions) assert.ok(readdirSync(d.path).includes(`t-${p.partition}`))
    }
    await m.close()
    // Reopened: each partition is found where it is.
    const m2 = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: dirs }, { noBackgroundJobs: true })
    await m2.open()
    await m2.createPartitions('t', 'id', 0, 4)
    for (let i = 0; i < 4; i++) assert.equal(m2.partition('t', i)!.logEndOffset, 1)
    await m2.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('retention runs by itself every log.retention.check.interval.ms', async () => {
  const root = mkdtempSync(join(tmpdir(), 'topograph-ret-'))
  try {
    const m = createLogManager({
      ...DEFAULT_LOG_MANAGER_CONFIG,
      logDirs: [root],
      retentionCheckIntervalMs: 50,
      defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, { segmentBytes: 200, retentionMs: 1000 }),
    })
    await m.open()
    await m.createPartitions('t', 'id', 0, 1)
    const p = m.partition('t', 0)!
    const old = Date.now() - 60000
    for (let i = 0; i < 5; i++) await p.append(batchOf(records(1), { timestamp: old }), { now: Date.now() })
    // The manager's timers are unref'd (they never keep a process alive): a ref'd guard keeps this
    // one running while it waits, and fails it if retention never comes.
    await new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error('no retention pass within 60 s')), 60_000)
      const off = p.addListener((e) => {
        if (e === 'start-offset' && p.logStartOffset === 5) {
          off()
          clearTimeout(guard)
          resolve()
        }
      })
    })
    assert.equal(p.logEndOffset, 5)
    await m.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('config: Kafka defaults pass the checks; bad values are named with Kafka’s message', () => {
  assert.equal(checkLogConfig(DEFAULT_LOG_CONFIG), null)
  assert.equal(
    checkLogConfig({ ...DEFAULT_LOG_CONFIG, minCleanableDirtyRatio: 2 }),
    'Invalid value 2 for configuration min.cleanable.dirty.ratio: Value must be between 0 and 1',
  )
  assert.match(
    checkLogConfig({ ...DEFAULT_LOG_CONFIG, cleanupPolicy: ['bogus' as never] })!,
    /cleanup\.policy/,
  )
  // Every LogConfig field has one Kafka key.
  assert.deepEqual(new Set(LOG_CONFIG_KEYS.map((k) => k.field)), new Set(Object.keys(DEFAULT_LOG_CONFIG)))
})
