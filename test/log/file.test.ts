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
import { heldRenames } from './fs-probes.js'
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

/** node:fs, counting the fsyncs made on the event loop (fsyncSync). */
function countingFsyncs(): { layer: FileLayer; syncFsyncs: () => number; syncRenames: () => number } {
  let n = 0
  let renames = 0
  const layer: FileLayer = {
    ...NODE_FILE_LAYER,
    fsyncSync(fd) {
      n++
      NODE_FILE_LAYER.fsyncSync(fd)
    },
    renameSync(from, to) {
      renames++
      NODE_FILE_LAYER.renameSync(from, to)
    },
  }
  return { layer, syncFsyncs: () => n, syncRenames: () => renames }
}

test('file: a roll makes no fsync in the append; the flush writes the rolled index files and snapshot', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-roll-'))
  try {
    const { layer, syncFsyncs, syncRenames } = countingFsyncs()
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
    const before = syncFsyncs()
    // This append does not fit in 200 bytes: the segment rolls, in the append's turn.
    const rolled = appended(
      p.append(batchOf(records(2, 'c'), { timestamp: now + 2, ...producer, baseSequence: 4 }), { now }),
    )
    assert.equal(rolled.baseOffset, 4)
    assert.equal(syncFsyncs(), before, 'no fsync on the event loop')
    const files = () => readdirSync(join(dir, 't-0')).sort()
    assert.ok(!files().includes('00000000000000000000.index'), 'the rolled index is written by the flush')
    // A crash now (a copy of the directory as it is): the rolled segment has no index files and
    // is indexed again at open; nothing is lost.
    const crashed = mkdtempSync(join(tmpdir(), 'topograph-log-roll-crash-'))
    cpSync(dir, crashed, { recursive: true })
    rmSync(join(crashed, '.kafka_cleanshutdown'), { force: true })

    // The flush writes them on the threadpool, their renames in place included.
    const renamesBefore = syncRenames()
    await (p as PartitionLogImpl).flush()
    assert.equal(syncRenames(), renamesBefore, 'no rename on the event loop')
    assert.ok(files().includes('00000000000000000000.index'))
    assert.ok(files().includes('00000000000000000000.timeindex'))
    assert.equal(readFileSync(join(dir, 't-0', '00000000000000000000.index')).byteLength, 16, 'two entries')
    await m.close()
    assert.ok(files().includes('00000000000000000004.snapshot'))
    assert.ok(!files().some((f) => f.endsWith('.tmp')), 'no temporary file left')

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

test('file: the recovery-point checkpoint is written in call order with its fsync off the event loop', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-ckpt-'))
  try {
    const { layer, syncFsyncs } = countingFsyncs()
    const storage = new FileLogStorage([dir], { fs: layer })
    const m = createLogManager(
      { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [dir] },
      { storage, noBackgroundJobs: true },
    )
    await m.open()
    await m.createPartitions('t', 'id', 0, 1)
    const p = m.partition('t', 0)! as PartitionLogImpl
    const now = Date.now()
    const before = syncFsyncs()
    const text = () => readFileSync(join(dir, 'recovery-point-offset-checkpoint'), 'utf8')
    p.append(batchOf(records(2), { timestamp: now }), { now })
    await p.flush()
    const first = storage.checkpoint()
    p.append(batchOf(records(3), { timestamp: now }), { now })
    await p.flush()
    const second = storage.checkpoint()
    await Promise.all([first, second])
    assert.equal(syncFsyncs(), before, 'no fsync on the event loop')
    assert.match(text(), /^0\n1\nt 0 5\n$/, 'the later checkpoint is the one that stays')
    assert.ok(!readdirSync(dir).some((f) => f.endsWith('.tmp')))
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a log directory is locked while its storage is open; a second one is refused until close', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-'))
  try {
    const first = new FileLogStorage([join(dir, 'a'), join(dir, 'b')])
    await first.open()
    // The second storage shares only directory b: refused, and it holds no lock on a afterwards.
    const second = new FileLogStorage([join(dir, 'c'), join(dir, 'b')])
    await assert.rejects(second.open(), {
      message: `Failed to acquire lock on file .lock in ${join(dir, 'b')}. Another Topograph server is using this directory.`,
    })
    const third = new FileLogStorage([join(dir, 'c')])
    await third.open()
    await third.close()
    await first.close()
    await second.open()
    await second.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("file: a close waits for a flush's index files still being renamed in, and writes its own after", async () => {
  // The flush's renames of the index files run on the threadpool: a close that wrote the index
  // files meanwhile could have them replaced by the flush's after it.
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-index-close-'))
  const copy = mkdtempSync(join(tmpdir(), 'topograph-log-index-close-copy-'))
  const renames = heldRenames((from) => /0{20}\.(time)?index\.\d+\.tmp$/.test(from))
  try {
    const m = createLogManager(
      {
        ...DEFAULT_LOG_MANAGER_CONFIG,
        logDirs: [dir],
        defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, { indexIntervalBytes: 0 }),
      },
      { storage: new FileLogStorage([dir], { fs: renames.layer }), noBackgroundJobs: true },
    )
    await m.open()
    await m.createPartitions('t', 'id', 0, 1, { segmentBytes: 200 })
    const p = m.partition('t', 0)! as PartitionLogImpl
    const now = Date.now()
    renames.hold()
    for (let i = 0; i < 3; i++) await p.append(batchOf(records(2, 'abc'[i]), { timestamp: now + i }), { now })
    const flushing = p.store.flush()
    await renames.reached
    let closed = false
    const closing = p.store.close().then(() => (closed = true))
    await new Promise((r) => setTimeout(r, 50))
    assert.equal(closed, false, 'the close waits for the renames in flight')
    renames.release()
    await flushing
    await closing
    cpSync(dir, copy, { recursive: true })
    await m.close().catch(() => {})
    // The index files are whole and the segment's own: every batch read from its offset.
    const again = createLogManager(
      { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [copy], defaults: DEFAULT_LOG_CONFIG },
      { storage: new FileLogStorage([copy]), noBackgroundJobs: true },
    )
    await again.open()
    await again.createPartitions('t', 'id', 0, 1, { segmentBytes: 200 })
    const q = again.partition('t', 0)!
    for (const o of [0, 2, 4]) assert.equal((await readAll(q, o))[0].baseOffset, o, `offset ${o}`)
    assert.equal(readFileSync(join(copy, 't-0', '00000000000000000000.index')).byteLength, 16, 'two entries')
    assert.ok(!readdirSync(join(copy, 't-0')).some((f) => f.endsWith('.tmp')), 'no temporary file left')
    await again.close()
  } finally {
    renames.release()
    rmSync(dir, { recursive: true, force: true })
    rmSync(copy, { recursive: true, force: true })
  }
})

test("file: a time index entry's offset is the last offset of the batch with the largest timestamp, as Kafka's", async () => {
  // Kafka's LogSegment.append indexes (batch max timestamp so far, that batch's last offset), and
  // kafka-dump-log --verify-index-only checks every entry against it: the same after appends, after
  // a clean reopen, and after the indexes are rebuilt from the log.
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-tidx-'))
  const T = 1_790_000_000_000
  try {
    const open = async () => {
      const m = createLogManager(
        {
          ...DEFAULT_LOG_MANAGER_CONFIG,
          logDirs: [dir],
          defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, { indexIntervalBytes: 0 }),
        },
        { noBackgroundJobs: true },
      )
      await m.open()
      await m.createPartitions('t', 'id', 0, 1)
      return m
    }
    const at = (...ts: number[]) => ts.map((t, i) => ({ key: `k${i}`, value: `v${i}`, timestamp: T + t }))
    const timeIndex = () => {
      const b = readFileSync(join(dir, 't-0', '00000000000000000000.timeindex'))
      const entries: [number, number][] = []
      for (let p = 0; p < b.byteLength; p += 12) {
        entries.push([Number(b.readBigInt64BE(p)) - T, b.readInt32BE(p + 8)])
      }
      return entries
    }
    const m = await open()
    const p = m.partition('t', 0)!
    // offsets 0–2, the largest timestamp first; 3–4 older; 5–7 the largest in the middle
    for (const b of [at(10, 0, 1), at(5, 6), at(20, 30, 11)]) await p.append(batchOf(b), { now: T })
    await m.close()
    const expected: [number, number][] = [
      [10, 2],
      [30, 7],
    ]
    assert.deepEqual(timeIndex(), expected, 'after appends')
    const again = await open()
    assert.equal((await again.partition('t', 0)!.listOffsets(T + 25, 'read_uncommitted')).offset, 6)
    await again.close()
    assert.deepEqual(timeIndex(), expected, 'after a clean reopen')
    // Rebuilt from the log: the index files gone, no clean-shutdown marker.
    for (const f of readdirSync(join(dir, 't-0'))) {
      if (f.endsWith('.index') || f.endsWith('.timeindex')) rmSync(join(dir, 't-0', f))
    }
    rmSync(join(dir, '.kafka_cleanshutdown'), { force: true })
    const rebuilt = await open()
    assert.equal((await rebuilt.partition('t', 0)!.listOffsets(T + 25, 'read_uncommitted')).offset, 6)
    assert.equal((await rebuilt.partition('t', 0)!.listOffsets(T + 10, 'read_uncommitted')).offset, 0)
    await rebuilt.close()
    assert.deepEqual(timeIndex(), expected, 'after a rebuild')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
