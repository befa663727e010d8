// The file engine writes the active segment back to disk in the background as it grows
// (WRITE_BACK_BYTES): an fsync on the threadpool each time that many bytes were appended since the
// last one started, at most one in flight per partition, never awaited by an append and never
// counted as a flush (the recovery point stays where the last flush put it). A failure of it takes
// the partition offline as a failed flush does, unless its segment left the partition meanwhile.
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { type FileLayer, FileLogStorage, NODE_FILE_LAYER, WRITE_BACK_BYTES } from '../../src/log/file.js'
import { createLogManager, type LogManagerImpl } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import type { LogConfig } from '../../src/log/types.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import { batchOf } from './helpers.js'

const WRITE_BACK = 64 * 1024
const NOW = Date.now()

/**
 * node:fs, holding the fsyncs of segment files (.log) until released, or failing them; every
 * other fsync (partition.metadata, index files, snapshots) goes through at once.
 */
function holdingLayer() {
  const paths = new Map<number, string>()
  const held: { fd: number; cb: (err: NodeJS.ErrnoException | null) => void }[] = []
  /** passFsyncs: let segment fsyncs through (a close at the end of a test). */
  const state = { segmentFsyncs: 0, fail: false, passFsyncs: false }
  const layer: FileLayer = {
    ...NODE_FILE_LAYER,
    open(path, flags, cb) {
      fs.open(path, flags, (err, fd) => {
        if (err === null) paths.set(fd, path)
        cb(err, fd)
      })
    },
    fsync(fd, cb) {
      if (!(paths.get(fd) ?? '').endsWith('.log') || state.passFsyncs) return fs.fsync(fd, cb)
      state.segmentFsyncs++
      if (state.fail) return cb(Object.assign(new Error('EIO: injected'), { code: 'EIO' }))
      held.push({ fd, cb })
      for (const w of waiters.splice(0)) w()
    },
  }
  const waiters: (() => void)[] = []
  /** Resolves once a segment fsync is held (at once if one is). */
  const whenHeld = (): Promise<void> =>
    held.length > 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))
  /** Lets the held fsyncs run; resolves once each has ended and its callback has run. */
  const release = (): Promise<void> =>
    Promise.all(
      held.splice(0).map(
        (h) =>
          new Promise<void>((resolve) =>
            fs.fsync(h.fd, (err) => {
              h.cb(err)
              resolve()
            }),
          ),
      ),
    ).then(() => {})
  return { layer, state, held, release, whenHeld }
}

async function open(
  dir: string,
  layer: FileLayer,
  configs: Partial<LogConfig> = {},
  /** The write-back interval; null: the engine's default (WRITE_BACK_BYTES). */
  writeBackBytes: number | null = WRITE_BACK,
): Promise<{ m: LogManagerImpl; p: PartitionLogImpl; storage: FileLogStorage }> {
  // No reads ahead (they depend on the pace of the appends): not under test here.
  const storage = new FileLogStorage([dir], {
    fs: layer,
    readAheadBytes: 0,
    writeBackBytes: writeBackBytes ?? undefined,
  })
  const defaults = resolveLogConfig(DEFAULT_LOG_CONFIG, configs)
  const m = createLogManager(
    { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [dir], defaults },
    { storage, noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('t', 'id', 0, 1, configs)
  return { m, p: m.partition('t', 0)! as PartitionLogImpl, storage }
}

/** A batch of 16 records of 1 KiB values (about 16.7 KB). */
function bigBatch(i: number): Uint8Array {
  return batchOf(
    Array.from({ length: 16 }, (_, k) => ({ key: `b${i}-${k}`, value: `${i}:`.padEnd(1024, 'v') })),
    { timestamp: NOW },
  )
}

const turn = () => new Promise((r) => setImmediate(r))

/** Runs `body` on partition t-0 of a fresh log directory over a holdingLayer, then removes it. */
async function withPartition(
  configs: Partial<LogConfig>,
  body: (o: Awaited<ReturnType<typeof open>> & { h: ReturnType<typeof holdingLayer> }) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-writeback-'))
  const h = holdingLayer()
  try {
    const opened = await open(dir, h.layer, configs)
    await body({ ...opened, h })
    h.state.fail = false
    await h.release()
    await opened.m.close().catch(() => {})
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('file: the active segment is written back every writeBackBytes, one at a time, never as a flush', () =>
  withPartition({}, async ({ p, storage, h }) => {
    // Three batches (about 50 KB): below the threshold, nothing is written back.
    for (let i = 0; i < 3; i++) assert.equal((await p.append(bigBatch(i), { now: NOW })).errorCode, 0)
    assert.equal(h.state.segmentFsyncs, 0)
    // The fourth passes 64 KiB: one write-back starts, and the append does not wait for it.
    assert.equal((await p.append(bigBatch(3), { now: NOW })).errorCode, 0)
    assert.equal(h.state.segmentFsyncs, 1)
    assert.equal(h.held.length, 1)
    // While it is in flight, no other starts, however much is appended (coalesced appends too).
    for (let i = 4; i < 16; i++) {
      const r = await p.append(bigBatch(i), { now: NOW, coalesce: i % 2 === 0 })
      assert.equal(r.errorCode, 0)
    }
    assert.equal(h.state.segmentFsyncs, 1)
    await h.release()
    // The next append after it ended starts the next one: more than 64 KiB came since.
    assert.equal((await p.append(bigBatch(100), { now: NOW })).errorCode, 0)
    assert.equal(h.state.segmentFsyncs, 2)
    // Not a flush: the recovery point did not move.
    assert.equal(storage.recoveryPointOf('t-0') ?? 0, 0)
    assert.ok(p.online)
    await h.release()
    const flushed = p.flush()
    await h.whenHeld()
    await h.release()
    await flushed
    assert.equal(storage.recoveryPointOf('t-0'), p.logEndOffset)
  }))

test('file: a failed write-back takes the partition offline as a failed flush does', () =>
  withPartition({}, async ({ p, h }) => {
    const events: string[] = []
    p.addListener((e) => events.push(e))
    for (let i = 0; i < 3; i++) assert.equal((await p.append(bigBatch(i), { now: NOW })).errorCode, 0)
    h.state.fail = true
    // The append that starts the write-back was written: its answer is not the write-back's.
    assert.equal((await p.append(bigBatch(3), { now: NOW })).errorCode, 0)
    assert.equal(h.state.segmentFsyncs, 1)
    await turn()
    assert.equal(p.online, false)
    assert.ok(events.includes('offline'))
    const after = await p.append(bigBatch(4), { now: NOW })
    assert.equal(after.errorCode, ErrorCode.KAFKA_STORAGE_ERROR)
  }))

test('file: a write-back whose segment retention deletes meanwhile fails nothing, and its file closes after it', () =>
  withPartition({ retentionMs: 1 }, async ({ p, h, storage }) => {
    for (let i = 0; i < 4; i++) assert.equal((await p.append(bigBatch(i), { now: NOW })).errorCode, 0)
    assert.equal(h.held.length, 1)
    const fd = h.held[0].fd
    // Roll, then delete every segment below the new active one while the write-back waits.
    p.roll(NOW)
    await p.applyRetention(NOW + 60_000)
    assert.ok(p.logStartOffset > 0, 'the written-back segment was deleted')
    // Pinned: its descriptor is still open while the fsync waits.
    assert.doesNotThrow(() => fs.fstatSync(fd))
    h.state.fail = true
    for (const x of h.held.splice(0))
      x.cb(Object.assign(new Error('EIO: injected'), { code: 'EIO' }) as NodeJS.ErrnoException)
    await turn()
    assert.ok(p.online, 'a failure on a deleted segment is no storage fault')
    // The close of a deleted segment's file runs on the threadpool.
    await storage.discarded()
    assert.throws(() => fs.fstatSync(fd), 'closed once the write-back ended')
  }))

test('file: by default a write-back starts once the active segment took WRITE_BACK_BYTES (4 MiB)', async () => {
  assert.equal(WRITE_BACK_BYTES, 4 * 1024 * 1024)
  const dir = mkdtempSync(join(tmpdir(), 'topograph-writeback-'))
  const h = holdingLayer()
  try {
    const { m, p } = await open(dir, h.layer, {}, null)
    let i = 0
    while (p.sizeInBytes + bigBatch(0).byteLength < WRITE_BACK_BYTES)
      assert.equal((await p.append(bigBatch(i++), { now: NOW })).errorCode, 0)
    assert.equal(h.state.segmentFsyncs, 0)
    assert.equal((await p.append(bigBatch(i++), { now: NOW })).errorCode, 0)
    assert.equal(h.state.segmentFsyncs, 1)
    h.state.passFsyncs = true
    await h.release()
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
