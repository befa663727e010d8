import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { type FileLayer, FileLogStorage, NODE_FILE_LAYER } from '../../src/log/file.js'
import { createLogManager } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import type { AppendResult } from '../../src/log/types.js'
import { readAll, runLogContract } from './contract.js'
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

test('file: a roll makes no fsync in the append; the flush writes the rolled index files and snapshot', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-roll-'))
  try {
    let syncFsyncs = 0
    const layer: FileLayer = {
      ...NODE_FILE_LAYER,
      fsyncSync(fd) {
        syncFsyncs++
        NODE_FILE_LAYER.fsyncSync(fd)
      },
    }
    const open = async (logDir: string, fs: FileLayer = NODE_FILE_LAYER) => {
      const m = createLogManager(
        {
          ...DEFAULT_LOG_MANAGER_CONFIG,
          logDirs: [logDir],
          defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, { indexIntervalBytes: 0 }),
        },
        { storage: new FileLogStorage([logDir], { fs }), noBackgroundJobs: true },
      )
      await m.open()
      return m
    }
    const m = await open(dir, layer)
    await m.createPartitions('t', 'id', 0, 1, { segmentBytes: 200 })
    const p = m.partition('t', 0)!
    const now = Date.now()
    const producer = { producerId: 7, producerEpoch: 0 }
    const appended = (r: AppendResult | Promise<AppendResult>): AppendResult => {
      assert.ok(!(r instanceof Promise), "appended in the caller's turn")
      return r
    }
    assert.equal(
      appended(p.append(batchOf(records(2, 'a'), { timestamp: now, ...producer, baseSequence: 0 }), { now }))
        .errorCode,
      0,
    )
    assert.equal(
      appended(
        p.append(batchOf(records(2, 'b'), { timestamp: now + 1, ...producer, baseSequence: 2 }), { now }),
      ).errorCode,
      0,
    )
    const before = syncFsyncs
    // This append does not fit in 200 bytes: the segment rolls, in the append's turn.
    const rolled = appended(
      p.append(batchOf(records(2, 'c'), { timestamp: now + 2, ...producer, baseSequence: 4 }), { now }),
    )
    assert.equal(rolled.baseOffset, 4)
    assert.equal(syncFsyncs, before, 'no fsync on the event loop')
    const files = () => readdirSync(join(dir, 't-0')).sort()
    assert.ok(!files().includes('00000000000000000000.index'), 'the rolled index is written by the flush')
    // A crash now (a copy of the directory as it is): the rolled segment has no index files and
    // is indexed again at open; nothing is lost.
    const crashed = mkdtempSync(join(tmpdir(), 'topograph-log-roll-crash-'))
    cpSync(dir, crashed, { recursive: true })
    rmSync(join(crashed, '.kafka_cleanshutdown'), { force: true })

    await (p as PartitionLogImpl).flush()
    assert.ok(files().includes('00000000000000000000.index'))
    assert.ok(files().includes('00000000000000000000.timeindex'))
    assert.equal(readFileSync(join(dir, 't-0', '00000000000000000000.index')).byteLength, 16, 'two entries')
    assert.ok(!files().some((f) => f.endsWith('.tmp')))
    await m.close()
    assert.ok(files().includes('00000000000000000004.snapshot'))

    for (const d of [dir, crashed]) {
      const again = await open(d)
      await again.createPartitions('t', 'id', 0, 1, { segmentBytes: 200 })
      const q = again.partition('t', 0)!
      assert.deepEqual(
        (await readAll(q, 0)).map((b) => [b.baseOffset, b.values.join(',')]),
        [
          [0, 'av0,av1'],
          [2, 'bv0,bv1'],
          [4, 'cv0,cv1'],
        ],
      )
      // The producer's state came back too: its next sequence is accepted, a replay is a duplicate.
      const dup = await q.append(
        batchOf(records(2, 'c'), { timestamp: now + 2, ...producer, baseSequence: 4 }),
        {
          now,
        },
      )
      assert.equal(dup.baseOffset, 4)
      await again.close()
    }
    rmSync(crashed, { recursive: true, force: true })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
