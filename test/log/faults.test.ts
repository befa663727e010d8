// I/O failures on the append path: the append fails with KAFKA_STORAGE_ERROR, the partition goes
// offline (every later operation answers KAFKA_STORAGE_ERROR), and nothing already acknowledged is
// damaged. Faults come from a file layer that wraps node:fs and fails on command; nothing else is
// mocked.
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { FileLogStorage, type FileLayer, NODE_FILE_LAYER } from '../../src/log/file.js'
import { createLogManager, type LogManagerImpl } from '../../src/log/manager.js'
import type { LogConfig } from '../../src/log/types.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import { readAll } from './contract.js'
import { batchOf, records } from './helpers.js'

type Fault = 'none' | 'enospc-write' | 'partial-write' | 'eio-fsync'

function faultyLayer(): { layer: FileLayer; arm: (f: Fault) => void } {
  let fault: Fault = 'none'
  const err = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: injected`), { code })
  const layer: FileLayer = {
    ...NODE_FILE_LAYER,
    writeSync(fd, buffer, offset, length, position) {
      if (fault === 'enospc-write') throw err('ENOSPC')
      if (fault === 'partial-write' && length > 20) {
        fs.writeSync(fd, buffer, offset, 20, position)
        throw err('ENOSPC')
      }
      return fs.writeSync(fd, buffer, offset, length, position)
    },
    fsync(fd, cb) {
      if (fault === 'eio-fsync') {
        cb(err('EIO'))
        return
      }
      fs.fsync(fd, cb)
    },
  }
  return { layer, arm: (f) => (fault = f) }
}

async function open(
  dir: string,
  layer: FileLayer,
  configs: Partial<LogConfig> = {},
): Promise<LogManagerImpl> {
  const m = createLogManager(
    {
      ...DEFAULT_LOG_MANAGER_CONFIG,
      logDirs: [dir],
      defaults: resolveLogConfig(DEFAULT_LOG_MANAGER_CONFIG.defaults, configs),
    },
    { storage: new FileLogStorage([dir], { fs: layer }), noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('t', 'id', 0, 2)
  return m
}

const NOW = Date.now()
const RU = { minOneMessage: true, isolationLevel: 'read_uncommitted' } as const

for (const fault of ['enospc-write', 'partial-write', 'eio-fsync'] as const) {
  test(`${fault}: the append fails with KAFKA_STORAGE_ERROR, the partition goes offline, acknowledged data stays whole`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topograph-log-fault-'))
    try {
      const { layer, arm } = faultyLayer()
      const m = await open(dir, layer, fault === 'eio-fsync' ? { flushMessages: 1 } : {})
      const p = m.partition('t', 0)!
      const other = m.partition('t', 1)!
      for (let i = 0; i < 3; i++) {
        assert.equal(
          (await p.append(batchOf(records(2, `ok${i}`), { timestamp: NOW }), { now: NOW })).errorCode,
          0,
        )
      }
      const events: string[] = []
      p.addListener((e) => events.push(e))
      arm(fault)
      const failed = await p.append(batchOf(records(2, 'lost'), { timestamp: NOW }), { now: NOW })
      assert.equal(failed.errorCode, ErrorCode.KAFKA_STORAGE_ERROR)
      assert.equal(failed.logStartOffset, -1)
      arm('none')
      assert.equal(p.online, false)
      assert.ok(events.includes('offline'))
      assert.equal(
        (await p.append(batchOf(records(1), { timestamp: NOW }), { now: NOW })).errorCode,
        ErrorCode.KAFKA_STORAGE_ERROR,
      )
      assert.equal((await p.read(0, 1000, RU)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR)
      assert.equal((await p.listOffsets(-1, 'read_uncommitted')).errorCode, ErrorCode.KAFKA_STORAGE_ERROR)
      assert.equal((await p.deleteRecordsBefore(1)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR)
      assert.equal(p.endOffsetForLeaderEpoch(0).errorCode, ErrorCode.KAFKA_STORAGE_ERROR)
      // Other partitions keep working.
      assert.equal((await other.append(batchOf(records(1), { timestamp: NOW }), { now: NOW })).errorCode, 0)
      await m.close()

      // Restarted on a healthy disk: the three acknowledged batches, whole; the failed one is
      // absent or (fsync failure: it was written, not acknowledged) whole.
      const m2 = await open(dir, NODE_FILE_LAYER)
      const q = m2.partition('t', 0)!
      assert.equal(q.online, true)
      const values = (await readAll(q, 0)).map((b) => b.values.join(','))
      assert.deepEqual(values.slice(0, 3), ['ok0v0,ok0v1', 'ok1v0,ok1v1', 'ok2v0,ok2v1'])
      if (fault === 'eio-fsync') assert.ok(values.length === 3 || values[3] === 'lostv0,lostv1')
      else assert.equal(values.length, 3)
      assert.equal((await q.append(batchOf(records(1), { timestamp: NOW }), { now: NOW })).errorCode, 0)
      await m2.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}
