// Time-based retention on the file engine racing appends, rolls and the background work queued
// against the segments it deletes (flushes, index files, producer snapshots), and what deleting a
// segment's files leaves on the event loop.
import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { test } from 'node:test'
import { decodeRecords, readBatchHeader } from '../../src/log/batch.js'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { type FileLayer, FileLogStorage, NODE_FILE_LAYER } from '../../src/log/file.js'
import { createLogManager } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import { readAll } from './contract.js'
import { countingLayer, heldRenames, openFilesOf } from './fs-probes.js'
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

test('retention: a kill -9 right after retention deleted every segment keeps the producer state', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-ret-kill-'))
  const crashed = mkdtempSync(join(tmpdir(), 'topograph-ret-kill-copy-'))
  try {
    const { m, p } = await openManager(dir)
    const producer = { producerId: 12, producerEpoch: 0 }
    const timestamp = Date.now() - 60_000
    let seq = 0
    const send = (baseSequence: number, q = p) =>
      q.append(batchOf(records(2), { timestamp, ...producer, baseSequence }), { now: Date.now() })
    // Several rolls (each writes a producer snapshot at its base), then batches after the newest.
    for (let i = 0; i < 9; i++) {
      assert.equal((await send(seq)).errorCode, 0)
      seq += 2
    }
    await p.flush()
    const snapshots = () => readdirSync(join(dir, 't-0')).filter((f) => f.endsWith('.snapshot'))
    while (snapshots().length === 0) await new Promise((r) => setTimeout(r, 5))
    const end = p.logEndOffset
    // Retention deletes every segment; the process is killed in the same instant (a copy of the
    // directory as it is then, without the clean-shutdown marker).
    const retention = p.applyRetention(Date.now() + 60_000)
    cpSync(dir, crashed, { recursive: true })
    rmSync(join(crashed, '.kafka_cleanshutdown'), { force: true })
    await retention
    await m.close()

    const again = await openManager(crashed)
    assert.equal(again.p.logEndOffset, end)
    // A retry of the last batch is a duplicate; the next sequence is accepted.
    const retry = await send(seq - 2, again.p)
    assert.equal(retry.errorCode, 0)
    assert.equal(retry.baseOffset, end - 2)
    const next = await send(seq, again.p)
    assert.equal(next.errorCode, 0)
    assert.equal(next.baseOffset, end)
    await again.m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
    rmSync(crashed, { recursive: true, force: true })
  }
})

test('retention: deleted segments are renamed, closed and removed off the event loop', async () => {
  // Retention closed and unlinked each deleted segment's file in the caller's turn. The call that
  // drops a file's last reference frees its blocks: 550 ms for a 1-GiB segment on an ext4 mounted
  // with `discard`, a stall of every connection. Its renames to `.deleted` followed: a rename in
  // the partition's directory waits for a busy disk as long as a create. Counted, not timed.
  const dir = mkdtempSync(join(tmpdir(), 'topograph-ret-off-loop-'))
  try {
    const { layer, during } = countingLayer()
    const storage = new FileLogStorage([dir], { fs: layer })
    const m = createLogManager(
      {
        ...DEFAULT_LOG_MANAGER_CONFIG,
        logDirs: [dir],
        defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, { indexIntervalBytes: 0 }),
      },
      { storage, noBackgroundJobs: true },
    )
    await m.open()
    await m.createPartitions('t', 'id', 0, 1, { segmentBytes: 300, retentionMs: 1 })
    const p = m.partition('t', 0)! as PartitionLogImpl
    const timestamp = Date.now() - 60_000
    for (let i = 0; i < 8; i++) await p.append(batchOf(records(2), { timestamp }), { now: Date.now() })
    await p.flush()
    const segmentDir = join(dir, 't-0')
    const logs = () => readdirSync(segmentDir).filter((n) => n.endsWith('.log'))
    const before = logs()
    assert.ok(before.length >= 3, `${before.length} segments`)
    const seen = await during(() => p.applyRetention(Date.now() + 60_000))
    assert.equal(p.store.segmentCount, 1, 'the active segment is left')
    assert.equal(seen.calls.unlinkSync ?? 0, 0, JSON.stringify(seen.calls))
    assert.equal(seen.calls.closeSync ?? 0, 0, JSON.stringify(seen.calls))
    assert.equal(seen.calls.renameSync ?? 0, 0, JSON.stringify(seen.calls))
    assert.equal(seen.calls.readdirSync ?? 0, 0, JSON.stringify(seen.calls))
    await storage.discarded()
    const gone = before.filter((n) => !logs().includes(n))
    assert.ok(gone.length >= before.length - 1, `${gone.length} of ${before.length} segments deleted`)
    assert.equal(logs().length, 1, 'the active segment is left')
    assert.deepEqual(
      readdirSync(segmentDir).filter((n) => n.endsWith('.deleted')),
      [],
      'the renamed files are removed',
    )
    for (const n of gone) assert.equal(openFilesOf(join(segmentDir, `${n}.deleted`)), 0, `${n} closed`)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

/** A compacted partition `c-0` on the file engine, its synchronous file calls counted by `during`. */
async function openCompacted(dir: string, segmentBytes: number) {
  const { layer, during } = countingLayer()
  const storage = new FileLogStorage([dir], { fs: layer })
  const m = createLogManager(
    { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [dir], defaults: DEFAULT_LOG_CONFIG },
    { storage, noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('c', 'id', 0, 1, {
    cleanupPolicy: ['compact'],
    segmentBytes,
    minCleanableDirtyRatio: 0.01,
  })
  return { m, p: m.partition('c', 0)! as PartitionLogImpl, storage, during }
}

test("compaction: a cleaned copy's index files are made durable, and the replaced file closed, off the event loop", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-clean-off-loop-'))
  try {
    const { m, p, storage, during } = await openCompacted(dir, 400)
    const now = Date.now()
    for (let i = 0; i < 30; i++) {
      const key = 'abcde'[i % 5]
      await p.append(batchOf([{ key, value: `${key}${i}` }], { timestamp: now }), { now })
    }
    const segmentDir = join(dir, 'c-0')
    const first = join(segmentDir, '00000000000000000000.log')
    const seen = await during(() => m.runCleaner(now))
    // The cleaned copies replaced their segments by renames on the threadpool (as the flushes
    // meanwhile renamed the rolled segments' index files in); the old files' descriptors were let go.
    assert.equal(seen.calls.unlinkSync ?? 0, 0, JSON.stringify(seen.calls))
    assert.equal(seen.calls.renameSync ?? 0, 0, JSON.stringify(seen.calls))
    assert.ok(
      m.cleaner!.lastStats.some((st) => st.segments > 0),
      'the cleaner replaced segments',
    )
    // The copies are written on the threadpool as well.
    assert.equal((seen.calls.writeSync ?? 0) + (seen.calls.writevSync ?? 0), 0, JSON.stringify(seen.calls))
    // No fsync in the caller's turn (the copies' index files are written on the threadpool), and
    // no close: the replaced segments' files are let go there too.
    assert.equal(seen.calls.fsyncSync ?? 0, 0, JSON.stringify(seen.calls))
    assert.equal(seen.calls.closeSync ?? 0, 0, JSON.stringify(seen.calls))
    await storage.discarded()
    // One descriptor on the segment's name: the new file's. The replaced one is closed.
    assert.equal(openFilesOf(first), 1)
    assert.deepEqual(
      readdirSync(segmentDir).filter((n) => n.endsWith('.cleaned') || n.endsWith('.deleted')),
      [],
    )
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('compaction: a clean reads the segments and writes their copies off the event loop', async () => {
  // The cleaner read each segment twice (the offset map, then the copy) in 1-MiB synchronous reads
  // and wrote every kept batch with a synchronous write, in the caller's turn: a segment the page
  // cache no longer held, or a slow disk, held every connection for as long as the disk took.
  // Counted, not timed: the clean's synchronous reads and writes.
  const dir = mkdtempSync(join(tmpdir(), 'topograph-clean-reads-'))
  try {
    const { m, p, during } = await openCompacted(dir, 1024 * 1024)
    const now = Date.now()
    const value = 'v'.repeat(1000)
    // 4 MiB and more: 16-record batches over 64 keys, each key written about 70 times.
    for (let b = 0; b < 280; b++) {
      const batch = Array.from({ length: 16 }, (_, i) => ({
        key: `k${(b * 16 + i) % 64}`,
        value: `${b}:${value}`,
      }))
      await p.append(batchOf(batch, { timestamp: now }), { now })
    }
    const before = p.sizeInBytes
    assert.ok(p.store.segmentCount >= 5, `${p.store.segmentCount} segments`)
    const seen = await during(() => m.runCleaner(now))
    const stats = m.cleaner!.lastStats.at(-1)
    assert.ok(stats !== undefined && stats.segments >= 3, JSON.stringify(stats))
    assert.ok(p.sizeInBytes < before / 2, `${p.sizeInBytes} of ${before} bytes left`)
    const moved = JSON.stringify({ calls: seen.calls, bytes: seen.bytes })
    assert.equal((seen.bytes.writeSync ?? 0) + (seen.bytes.writevSync ?? 0), 0, moved)
    // Nor a read: a read's first batch is found on the threadpool too.
    assert.equal(seen.calls.readSync ?? 0, 0, moved)
    // Every key is still there, at its latest value.
    const latest = new Map<string, string>()
    for (const b of p.store.batchesFrom(0)) {
      const h = readBatchHeader(b.bytes, 0)
      for (const r of decodeRecords(b.bytes.subarray(61), h.recordsCount))
        latest.set(Buffer.from(r.key!).toString(), Buffer.from(r.value!).toString())
    }
    assert.equal(latest.size, 64)
    for (let k = 0; k < 64; k++) {
      const lastBatch = Math.floor((279 * 16 + 15 - ((279 * 16 + 15 - k) % 64)) / 16)
      assert.equal(latest.get(`k${k}`)?.split(':')[0], String(lastBatch), `k${k}`)
    }
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

for (const step of ['creation', 'fsync', 'swap'] as const)
  test(`compaction: the wait for a cleaned copy's ${step} is not counted as the cleaner's time on the event loop`, async () => {
    // Creating a file waits for the disk as long as a write can (650 ms under a disk load in the
    // compaction benchmark), an fsync or a rename as long; they run on the threadpool, and the loop
    // is free meanwhile. Here each copy's step is held 300 ms. (The fsync's was counted: a slice
    // of 575 ms in the benchmark while the loop's longest delay was 41 ms.)
    const dir = mkdtempSync(join(tmpdir(), 'topograph-clean-wait-'))
    try {
      const copies = new Set<number>()
      const layer: FileLayer = {
        ...NODE_FILE_LAYER,
        open(path, flags, cb) {
          const copy = String(path).endsWith('.log.cleaned') || /\.log\.\d+\.cleaned$/.test(String(path))
          const go = () =>
            NODE_FILE_LAYER.open(path, flags, (err, fd) => {
              if (err === null && copy) copies.add(fd)
              cb(err, fd)
            })
          if (step === 'creation' && copy) setTimeout(go, 300)
          else go()
        },
        fsync(fd, cb) {
          if (step === 'fsync' && copies.has(fd)) setTimeout(() => NODE_FILE_LAYER.fsync(fd, cb), 300)
          else NODE_FILE_LAYER.fsync(fd, cb)
        },
        rename(from, to, cb) {
          if (step === 'swap' && /\.log\.\d+\.cleaned$/.test(from))
            setTimeout(() => NODE_FILE_LAYER.rename(from, to, cb), 300)
          else NODE_FILE_LAYER.rename(from, to, cb)
        },
      }
      const m = createLogManager(
        { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [dir], defaults: DEFAULT_LOG_CONFIG },
        { storage: new FileLogStorage([dir], { fs: layer }), noBackgroundJobs: true },
      )
      await m.open()
      await m.createPartitions('c', 'id', 0, 1, {
        cleanupPolicy: ['compact'],
        segmentBytes: 400,
        minCleanableDirtyRatio: 0.01,
      })
      const p = m.partition('c', 0)!
      const now = Date.now()
      // A key of each batch's own: no segment is left empty (and removed rather than swapped).
      for (let i = 0; i < 30; i++) {
        const key = 'abcde'[i % 5]
        await p.append(
          batchOf(
            [
              { key, value: `${key}${i}` },
              { key: `u${i}`, value: 'u' },
            ],
            { timestamp: now },
          ),
          { now },
        )
      }
      const started = performance.now()
      await m.runCleaner(now)
      const stats = m.cleaner!.lastStats.at(-1)!
      assert.ok(stats.segments >= 2, JSON.stringify(stats))
      assert.ok(performance.now() - started >= 600, `each copy waited for its ${step}`)
      assert.ok(stats.longestSliceMs < 150, `longest slice ${stats.longestSliceMs} ms`)
      await m.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

test('retention: a crash before the deleted segments are renamed leaves them to the next pass; a close waits for the renames', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-ret-held-'))
  const crashed = mkdtempSync(join(tmpdir(), 'topograph-ret-held-copy-'))
  const renames = heldRenames((_from, to) => to.endsWith('.deleted'))
  try {
    const storage = new FileLogStorage([dir], { fs: renames.layer })
    const m = createLogManager(
      {
        ...DEFAULT_LOG_MANAGER_CONFIG,
        logDirs: [dir],
        defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, { indexIntervalBytes: 0 }),
      },
      { storage, noBackgroundJobs: true },
    )
    await m.open()
    await m.createPartitions('t', 'id', 0, 1, { segmentBytes: 300, retentionMs: 1 })
    const p = m.partition('t', 0)! as PartitionLogImpl
    const timestamp = Date.now() - 60_000
    for (let i = 0; i < 8; i++) await p.append(batchOf(records(2), { timestamp }), { now: Date.now() })
    await p.flush()
    const end = p.logEndOffset
    renames.hold()
    assert.ok((await p.applyRetention(Date.now() + 60_000)) >= 2)
    await renames.reached
    // The crash: the deleted segments' files are still under their names.
    cpSync(dir, crashed, { recursive: true })
    rmSync(join(crashed, '.kafka_cleanshutdown'), { force: true })
    let closed = false
    const closing = p.store.close().then(() => (closed = true))
    await new Promise((r) => setTimeout(r, 50))
    assert.equal(closed, false, 'the close waits for the renames')
    renames.release()
    await closing
    await storage.discarded()
    assert.deepEqual(
      readdirSync(join(dir, 't-0')).filter((n) => n.endsWith('.log') || n.endsWith('.deleted')),
      ['00000000000000000016.log'],
    )
    await m.close().catch(() => {})

    // Reopened, the log ends where it did and starts where retention left it (every segment went:
    // at its end); the segments the crash kept are below it, and the next pass deletes them.
    const again = await openManager(crashed)
    assert.equal(again.p.logEndOffset, end)
    assert.equal(again.p.logStartOffset, end)
    assert.ok(again.p.store.segmentCount > 1, `${again.p.store.segmentCount} segments`)
    assert.deepEqual(await readAll(again.p, again.p.logStartOffset), [])
    await again.p.applyRetention(Date.now() + 60_000)
    assert.equal(again.p.store.segmentCount, 1)
    assert.equal(again.p.logStartOffset, end)
    await again.m.close()
  } finally {
    renames.release()
    rmSync(dir, { recursive: true, force: true })
    rmSync(crashed, { recursive: true, force: true })
  }
})
