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
      // An offline partition's files may not all have been written: no clean-shutdown marker, so
      // the next start recovers the logs.
      assert.equal(fs.existsSync(join(dir, '.kafka_cleanshutdown')), false)

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
      assert.equal(fs.existsSync(join(dir, '.kafka_cleanshutdown')), true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}

for (const fault of ['enospc', 'partial'] as const) {
  test(`coalesced appends, ${fault} write: exactly the appends of the failed write fail, nothing of it stays, the other partition's write of the turn succeeds`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topograph-log-fault-'))
    try {
      // Fails the next segment write of at least 100 bytes once (a pwritev: the staged batches of
      // a partition lie apart when another partition's were staged between them).
      let armed = false
      let vectored = 0
      const err = (): NodeJS.ErrnoException =>
        Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' })
      const layer: FileLayer = {
        ...NODE_FILE_LAYER,
        writeSync(fd, buffer, offset, length, position) {
          if (armed && length >= 100) {
            armed = false
            if (fault === 'partial') fs.writeSync(fd, buffer, offset, 20, position)
            throw err()
          }
          return fs.writeSync(fd, buffer, offset, length, position)
        },
        writevSync(fd, buffers, position) {
          vectored++
          if (armed) {
            armed = false
            if (fault === 'partial') fs.writeSync(fd, buffers[0], 0, 20, position)
            throw err()
          }
          return fs.writevSync(fd, buffers as Uint8Array[], position)
        },
      }
      const m = await open(dir, layer)
      const p = m.partition('t', 0)!
      const q = m.partition('t', 1)!
      const C = { now: NOW, coalesce: true } as const
      for (let i = 0; i < 3; i++)
        assert.equal((await p.append(batchOf(records(2, `ok${i}`), { timestamp: NOW }), C)).errorCode, 0)
      const events: string[] = []
      p.addListener((e) => events.push(e))
      const a1 = p.append(batchOf(records(2, 'lost1'), { timestamp: NOW }), C)
      const b1 = q.append(batchOf(records(2, 'kept'), { timestamp: NOW }), C)
      const a2 = p.append(batchOf(records(2, 'lost2'), { timestamp: NOW }), C)
      armed = true
      const [r1, r2, rb] = await Promise.all([a1, a2, b1])
      assert.equal(vectored, 1, "p's two batches went in one pwritev")
      assert.deepEqual(
        [r1.errorCode, r2.errorCode, rb.errorCode],
        [ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NONE],
      )
      assert.equal(p.online, false)
      assert.deepEqual(events, ['offline'], 'no append was ever visible')
      assert.equal(p.logEndOffset, 6)
      assert.equal(q.online, true)
      await m.close()

      const m2 = await open(dir, NODE_FILE_LAYER)
      const values = (await readAll(m2.partition('t', 0)!, 0)).map((b) => b.values.join(','))
      assert.deepEqual(values, ['ok0v0,ok0v1', 'ok1v0,ok1v1', 'ok2v0,ok2v1'])
      assert.deepEqual(
        (await readAll(m2.partition('t', 1)!, 0)).map((b) => b.values.join(',')),
        ['keptv0,keptv1'],
      )
      await m2.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}

test('coalesced appends: a short pwritev is completed, every batch whole', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-fault-'))
  try {
    const layer: FileLayer = {
      ...NODE_FILE_LAYER,
      // Writes the first 30 bytes of the first buffer only.
      writevSync: (fd, buffers, position) => fs.writeSync(fd, buffers[0], 0, 30, position),
    }
    const m = await open(dir, layer)
    const p = m.partition('t', 0)!
    const q = m.partition('t', 1)!
    const C = { now: NOW, coalesce: true } as const
    const all = [
      p.append(batchOf(records(2, 'a'), { timestamp: NOW }), C),
      q.append(batchOf(records(1, 'x'), { timestamp: NOW }), C),
      p.append(batchOf(records(3, 'b'), { timestamp: NOW }), C),
    ]
    assert.deepEqual(
      (await Promise.all(all)).map((r) => [r.errorCode, r.baseOffset]),
      [
        [0, 0],
        [0, 0],
        [0, 2],
      ],
    )
    assert.deepEqual(
      (await readAll(p, 0)).map((b) => b.values.join(',')),
      ['av0,av1', 'bv0,bv1,bv2'],
    )
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("compaction: a failed write of a segment's copy leaves the segment as it was; the next clean succeeds", async () => {
  // The copy is written on the threadpool, a megabyte at a time, one write in flight while the
  // next is gathered: a failure in the middle must drop the whole copy, after the write in flight
  // ended, and leave the partition online with every record.
  const dir = mkdtempSync(join(tmpdir(), 'topograph-clean-fault-'))
  let failAt = -1
  let writes = 0
  // Only the copy's writes count: checkpoints, index files and snapshots are written on the
  // threadpool too, and a failure of one of them is a storage fault of its own.
  const copies = new Set<number>()
  const layer: FileLayer = {
    ...NODE_FILE_LAYER,
    open(path, flags, cb) {
      fs.open(path, flags, (err, fd) => {
        if (err === null && /\.log\.\d+\.cleaned$/.test(path)) copies.add(fd)
        cb(err, fd)
      })
    },
    write(fd, buffer, offset, length, position, cb) {
      if (failAt >= 0 && copies.has(fd) && ++writes === failAt) {
        setImmediate(() => cb(Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' }), 0))
        return
      }
      fs.write(fd, buffer, offset, length, position, cb)
    },
  }
  try {
    const m = createLogManager(
      { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [dir] },
      { storage: new FileLogStorage([dir], { fs: layer }), noBackgroundJobs: true },
    )
    await m.open()
    await m.createPartitions('c', 'id', 0, 1, {
      cleanupPolicy: ['compact'],
      segmentBytes: 4 * 1024 * 1024,
      minCleanableDirtyRatio: 0.01,
    })
    const p = m.partition('c', 0)!
    const value = 'v'.repeat(1000)
    // Every key unique: the copy keeps everything but one record a batch, so it is several MiB.
    for (let b = 0; b < 600; b++) {
      const batch = Array.from({ length: 16 }, (_, i) => ({ key: i === 0 ? 'dup' : `k${b}-${i}`, value }))
      await p.append(batchOf(batch, { timestamp: NOW }), { now: NOW })
    }
    const before = await readAll(p, 0)
    failAt = 2
    await m.runCleaner(NOW)
    assert.ok(writes >= 2, `${writes} writes`)
    assert.equal(p.online, true)
    const segmentDir = join(dir, 'c-0')
    const leftovers = () => fs.readdirSync(segmentDir).filter((n) => n.includes('.cleaned'))
    assert.deepEqual(await readAll(p, 0), before, 'every record as it was')
    failAt = -1
    await m.runCleaner(NOW)
    const count = (bs: { values: string[] }[]) => bs.reduce((n, b) => n + b.values.length, 0)
    const after = await readAll(p, 0)
    assert.ok(count(after) < count(before), `${count(after)} of ${count(before)} records after the clean`)
    assert.deepEqual(leftovers(), [])
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
