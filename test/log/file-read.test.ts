// The file engine's large reads run on libuv's threadpool (fs.read), the small ones and those that
// start in the active segment's last 16 MiB at once (within a budget per turn): a consumer
// catching up from far back must not hold the event loop for the copy of megabytes, and one near
// the log end, or a few MB behind it after a stall, must not pay a threadpool round trip at every
// Fetch. These tests pin which reads are done at once, that the
// synchronous part of a large read stays small, that the answer is whole and exact, and
// that a read racing a roll, retention, the cleaner's swap or a topic deletion answers correctly
// or with Kafka's error. The races are made deterministic by a file layer that holds the
// threadpool reads until the test lets them go; nothing else is mocked.
import assert from 'node:assert/strict'
import * as fs from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import {
  type FileLayer,
  FileLogStorage,
  type FileLogStorageOptions,
  NODE_FILE_LAYER,
  SYNC_READ_BYTES,
  TAIL_READ_BYTES,
  TAIL_WINDOW_BYTES,
} from '../../src/log/file.js'
import { createLogManager, type LogManagerImpl } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import type { LogConfig, ReadResult } from '../../src/log/types.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import { readAll } from './contract.js'
import { openFilesOf } from './fs-probes.js'
import { batchOf } from './helpers.js'

const RU = { minOneMessage: true, isolationLevel: 'read_uncommitted' } as const
const NOW = Date.now()

/**
 * Reads of the segment's headers (to find a read's first batch) are windows of this many bytes at
 * most; the tests below count a read's data reads, the larger ones.
 */
const HEADER_WINDOW = 16 * 1024

/**
 * node:fs, recording the synchronous reads' sizes, the threadpool reads of data (`asyncReads`,
 * those larger than a header window) and the closes, holding threadpool reads while `hold` is set.
 */
function tracingLayer() {
  const state = {
    syncReads: [] as number[],
    asyncReads: 0,
    headerReads: 0,
    closed: [] as number[],
    hold: false,
    held: [] as (() => void)[],
  }
  const layer: FileLayer = {
    ...NODE_FILE_LAYER,
    readSync(fd, buffer, offset, length, position) {
      state.syncReads.push(length)
      return fs.readSync(fd, buffer, offset, length, position)
    },
    read(fd, buffer, offset, length, position, cb) {
      if (length > HEADER_WINDOW) state.asyncReads++
      else state.headerReads++
      const go = () => fs.read(fd, buffer, offset, length, position, (err, n) => cb(err, n))
      if (state.hold) state.held.push(go)
      else go()
    },
    closeSync(fd) {
      state.closed.push(fd)
      fs.closeSync(fd)
    },
  }
  const release = () => {
    state.hold = false
    for (const go of state.held.splice(0)) go()
  }
  return { layer, state, release }
}

async function open(
  dir: string,
  layer: FileLayer,
  configs: Partial<LogConfig> = {},
  tail: Pick<FileLogStorageOptions, 'tailReadBytes' | 'tailWindowBytes'> = {},
): Promise<LogManagerImpl> {
  const m = createLogManager(
    {
      ...DEFAULT_LOG_MANAGER_CONFIG,
      logDirs: [dir],
      defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, configs),
    },
    { storage: new FileLogStorage([dir], { fs: layer, ...tail }), noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('t', 'id', 0, 1, configs)
  return m
}

/** A batch of 16 records of 1 KiB values, as the benchmarks send (about 16.7 KB). */
function bigBatch(i: number): Uint8Array {
  return batchOf(
    Array.from({ length: 16 }, (_, k) => ({ key: `b${i}-${k}`, value: `${i}:`.padEnd(1024, 'v') })),
    { timestamp: NOW },
  )
}

async function fill(m: LogManagerImpl, batches: number): Promise<void> {
  const p = m.partition('t', 0)!
  for (let i = 0; i < batches; i++) assert.equal((await p.append(bigBatch(i), { now: NOW })).errorCode, 0)
}

/** The base offsets of the batches a read returned (each whole). */
function batchesOf(r: ReadResult): number[] {
  const out: number[] = []
  const dv = new DataView(r.records.buffer, r.records.byteOffset, r.records.byteLength)
  for (let pos = 0; pos + 12 <= r.records.byteLength; ) {
    const base = dv.getInt32(pos) * 4294967296 + dv.getUint32(pos + 4)
    const size = dv.getInt32(pos + 8) + 12
    assert.ok(pos + size <= r.records.byteLength, 'whole batches only')
    out.push(base)
    pos += size
  }
  return out
}

test('file: a read of many MB runs off the event loop and answers every batch, exactly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-'))
  try {
    const { layer, state } = tracingLayer()
    const m = await open(dir, layer)
    await fill(m, 400) // about 6.7 MB in one segment
    const p = m.partition('t', 0)!
    const expected = await readAll(p, 0)
    state.syncReads.length = 0
    const r = await p.read(0, 8 << 20, RU)
    assert.equal(r.errorCode, ErrorCode.NONE)
    assert.ok(r.records.byteLength > 6_000_000, `${r.records.byteLength} bytes`)
    assert.ok(state.asyncReads > 0, 'read on the threadpool')
    assert.ok(
      state.syncReads.every((n) => n <= SYNC_READ_BYTES),
      `synchronous reads of ${Math.max(...state.syncReads)} bytes at most`,
    )
    // Byte for byte what the log holds: decode it as the contract's readAll does.
    assert.deepEqual(
      batchesOf(r),
      expected.map((b) => b.baseOffset),
    )
    const again = await p.read(160, 1 << 20, RU)
    assert.equal(batchesOf(again)[0], 160)
    assert.ok(again.records.byteLength <= 1 << 20)
    // A small read (a consumer at the log end) is done at once, without the threadpool.
    const before = state.asyncReads
    const tail = await p.read(p.logEndOffset - 16, 1 << 20, RU)
    assert.equal(batchesOf(tail).length, 1)
    assert.equal(state.asyncReads, before)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

/** The next turn of the event loop (after the check phase, where a turn's budget ends). */
const nextTurn = () => new Promise<void>((r) => setImmediate(r))

/** The base offset of the last batch (of 16 records) that starts at least `bytes` before the log end; reads no batch. */
function offsetBehind(p: PartitionLogImpl, bytes: number): number {
  for (let o = p.logEndOffset - 16; o > 0; o -= 16)
    if (p.bytesAvailable(o, 'read_uncommitted') >= bytes) return o
  return 0
}

/**
 * A file log of `batches` bigBatch batches in partition t-0, through the tracing layer; `readAt`
 * reads 1 MiB from an offset in a turn of its own and says how many threadpool reads it took.
 */
async function withTracedLog(
  batches: number,
  configs: Partial<LogConfig>,
  tail: Pick<FileLogStorageOptions, 'tailReadBytes' | 'tailWindowBytes'>,
  body: (
    p: PartitionLogImpl,
    state: ReturnType<typeof tracingLayer>['state'],
    readAt: (offset: number) => Promise<{ r: ReadResult; pooled: number }>,
  ) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-window-'))
  try {
    const { layer, state } = tracingLayer()
    const m = await open(dir, layer, configs, tail)
    await fill(m, batches)
    const p = m.partition('t', 0)! as PartitionLogImpl
    const readAt = async (offset: number) => {
      await nextTurn()
      const before = state.asyncReads
      const r = await p.read(offset, 1 << 20, RU)
      assert.equal(batchesOf(r)[0], offset)
      return { r, pooled: state.asyncReads - before }
    }
    await body(p, state, readAt)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test("file: a read that starts in the active segment's last 16 MiB is done at once, whatever its size; one further back on the threadpool", () =>
  // About 18.4 MB in one segment: more than the window.
  withTracedLog(1100, {}, {}, async (p, _state, readAt) => {
    const expected = (await readAll(p, 0)).map((b) => b.baseOffset)
    const exact = (r: ReadResult) => {
      const got = batchesOf(r)
      assert.deepEqual(got, expected.slice(expected.indexOf(got[0]), expected.indexOf(got[0]) + got.length))
    }
    assert.equal(TAIL_WINDOW_BYTES, 16 << 20)
    // 30 batches behind the log end: about 500 KB, more than SYNC_READ_BYTES, in the window.
    const near = await readAt(p.logEndOffset - 16 * 30)
    assert.ok(near.r.records.byteLength > SYNC_READ_BYTES, `${near.r.records.byteLength} bytes`)
    assert.equal(near.pooled, 0, 'no threadpool read')
    assert.equal(batchesOf(near.r).length, 30)
    exact(near.r)
    // About 8 MB behind (a consumer after a stall): a full 1 MiB answer, at once, exactly.
    const mid = await readAt(offsetBehind(p, 8 << 20))
    assert.equal(mid.pooled, 0, 'no threadpool read')
    assert.ok(mid.r.records.byteLength > (1 << 20) - 17_000, `${mid.r.records.byteLength} bytes`)
    exact(mid.r)
    // Further back than the window: on the threadpool, as before.
    const far = await readAt(16 * 10)
    assert.equal(far.pooled, 1)
    exact(far.r)
  }))

test("file: the window for reads at once is the storage's tailWindowBytes, and only the active segment's", () =>
  // About 7.7 MB: a rolled segment of 4 MiB, an active one of about 3.5 MB; a window of 2 MiB.
  withTracedLog(460, { segmentBytes: 4 << 20 }, { tailWindowBytes: 2 << 20 }, async (p, _state, readAt) => {
    assert.equal(p.store.segmentCount, 2)
    const active = p.store.segments()[1].baseOffset
    // 1.5 MB behind the end: in the window.
    assert.ok(offsetBehind(p, 1_500_000) > active)
    assert.equal((await readAt(offsetBehind(p, 1_500_000))).pooled, 0, 'at once')
    // 2.5 MB behind: in the active segment, outside the window.
    assert.ok(offsetBehind(p, 2_500_000) > active)
    assert.equal((await readAt(offsetBehind(p, 2_500_000))).pooled, 1, 'on the threadpool')
    // The rolled segment's last batches are fewer bytes behind the log end than the window, but
    // the window is the active segment's: on the threadpool.
    assert.equal((await readAt(active - 16 * 40)).pooled, 1, 'on the threadpool')
  }))

test('file: a consumer megabytes behind catches up at once, one budget a turn, every batch exactly once', () =>
  // About 13.4 MB in one segment, in the window.
  withTracedLog(800, {}, {}, async (p, state, readAt) => {
    const expected = (await readAll(p, 0)).map((b) => b.baseOffset)
    const start = offsetBehind(p, 12 << 20)
    const seen: number[] = []
    let next = start
    let reads = 0
    while (next < p.logEndOffset) {
      const { r, pooled } = await readAt(next)
      assert.equal(pooled, 0, `the read from ${next} at once`)
      assert.ok(r.records.byteLength <= 1 << 20)
      const got = batchesOf(r)
      seen.push(...got)
      next = got[got.length - 1] + 16
      reads++
    }
    assert.ok(reads >= 12, `${reads} reads`)
    assert.deepEqual(
      seen,
      expected.filter((o) => o >= start),
    )
    // Two full answers in one turn: the second is over the turn's budget, on the threadpool.
    await nextTurn()
    const before = state.asyncReads
    const a = offsetBehind(p, 4 << 20)
    const b = offsetBehind(p, 2 << 20)
    const [ra, rb] = await Promise.all([p.read(a, 1 << 20, RU), p.read(b, 1 << 20, RU)])
    assert.ok(ra.records.byteLength + rb.records.byteLength > TAIL_READ_BYTES)
    assert.equal(state.asyncReads, before + 1, 'the second read of the turn went to the threadpool')
    assert.equal(batchesOf(ra)[0], a)
    assert.equal(batchesOf(rb)[0], b)
  }))

test('file: tail reads at once share a budget per turn of the event loop; the rest go to the threadpool', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-tail-budget-'))
  try {
    const { layer, state } = tracingLayer()
    const m = await open(dir, layer)
    await m.createPartitions('t', 'id', 1, 2, {})
    const p0 = m.partition('t', 0)!
    const p1 = m.partition('t', 1)!
    for (const p of [p0, p1])
      for (let i = 0; i < 40; i++) assert.equal((await p.append(bigBatch(i), { now: NOW })).errorCode, 0)
    await nextTurn()
    // Each read: the whole partition, about 670 KB; two of them are more than TAIL_READ_BYTES.
    const before = state.asyncReads
    const [a, b] = await Promise.all([p0.read(0, 1 << 20, RU), p1.read(0, 1 << 20, RU)])
    assert.ok(a.records.byteLength + b.records.byteLength > TAIL_READ_BYTES)
    assert.equal(state.asyncReads, before + 1, 'the second read of the turn went to the threadpool')
    assert.deepEqual(Buffer.from(a.records), Buffer.from(b.records))
    assert.equal(batchesOf(b).length, 40)
    // A later turn has its budget again.
    await nextTurn()
    const c = await p1.read(0, 1 << 20, RU)
    assert.equal(state.asyncReads, before + 1, 'at once in a new turn')
    assert.deepEqual(Buffer.from(c.records), Buffer.from(b.records))
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: reads with loans use the pool, the same bytes as fresh reads; a buffer is lent again only once given back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-loans-'))
  try {
    const { layer } = tracingLayer()
    const m = await open(dir, layer)
    await fill(m, 120) // about 2 MB in one segment
    const p = m.partition('t', 0)!
    const pool = (m.storage as FileLogStorage).readBuffers
    // A large read (threadpool) and a small one (at once, a consumer at the log end).
    for (const [offset, maxBytes] of [
      [0, 1 << 20],
      [p.logEndOffset - 32, 1 << 20],
    ]) {
      const fresh = await p.read(offset, maxBytes, RU)
      const loans: (() => void)[] = []
      const lent = await p.read(offset, maxBytes, { ...RU, loans })
      assert.equal(loans.length, 1)
      assert.ok(pool.lentBytes >= lent.records.byteLength)
      assert.deepEqual(Buffer.from(lent.records), Buffer.from(fresh.records))
      // While lent, the same read gets another buffer; once given back, the same one again.
      const more: (() => void)[] = []
      const second = await p.read(offset, maxBytes, { ...RU, loans: more })
      assert.notEqual(second.records.buffer, lent.records.buffer)
      for (const giveBack of [...loans, ...more]) giveBack()
      assert.equal(pool.lentBytes, 0)
      const third = await p.read(offset, maxBytes, { ...RU, loans })
      assert.equal(third.records.buffer, second.records.buffer, 'the last buffer given back')
      for (const giveBack of loans) giveBack()
    }
    // Without loans, a read's buffer is the caller's to keep: the pool lends nothing.
    const owned = pool.ownedBytes
    await p.read(0, 1 << 20, RU)
    await p.read(p.logEndOffset - 32, 1 << 20, RU)
    assert.equal(pool.lentBytes, 0)
    assert.equal(pool.ownedBytes, owned)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a large read racing appends and a roll returns the batches below the end it started at', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-roll-'))
  try {
    const { layer, state, release } = tracingLayer()
    // No tail reads at once: the active segment's bytes go to the threadpool too, to race.
    const m = await open(dir, layer, { segmentBytes: 1 << 20 }, { tailReadBytes: 0 })
    await fill(m, 40)
    const p = m.partition('t', 0)!
    const end = p.logEndOffset
    state.hold = true
    const reading = p.read(0, 4 << 20, RU)
    // Appends go on while the read waits on the threadpool, rolling new segments.
    await fill(m, 80)
    assert.ok((p as PartitionLogImpl).store.segmentCount > 1, 'rolled')
    release()
    const r = await reading
    assert.equal(r.errorCode, ErrorCode.NONE)
    assert.equal(r.highWatermark, end)
    const got = batchesOf(r)
    // One segment at most (a read never crosses one), from 0, every batch below `end`.
    assert.deepEqual(
      got,
      got.map((_, i) => i * 16),
    )
    assert.ok(got[got.length - 1] < end)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a segment deleted by retention during a large read is read whole, its file closed after', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-retention-'))
  try {
    const { layer, state, release } = tracingLayer()
    const m = await open(dir, layer, { segmentBytes: 1 << 20 })
    await fill(m, 150) // about 2.5 MB: three segments
    const p = m.partition('t', 0)! as PartitionLogImpl
    const segs = p.store.segments()
    assert.ok(segs.length >= 3)
    const expected = (await p.read(0, 4 << 20, RU)).records.slice()
    state.hold = true
    const reading = p.read(0, 4 << 20, RU)
    // DeleteRecords past the first segment, then retention deletes it while the read waits.
    assert.equal((await p.deleteRecordsBefore(segs[1].baseOffset)).errorCode, ErrorCode.NONE)
    assert.equal(await p.applyRetention(NOW), 1)
    const first = join(dir, 't-0', '00000000000000000000.log')
    // Renamed `.deleted` and removed off the event loop, the descriptor kept open for the read.
    await (m.storage as FileLogStorage).discarded()
    assert.ok(!fs.existsSync(first), 'the file is renamed away')
    assert.equal(openFilesOf(`${first}.deleted`), 1, 'kept open for the read')
    release()
    const r = await reading
    assert.equal(r.errorCode, ErrorCode.NONE)
    assert.deepEqual(Buffer.from(r.records), Buffer.from(expected), 'the deleted segment, byte for byte')
    await (m.storage as FileLogStorage).discarded()
    assert.equal(openFilesOf(`${first}.deleted`), 0, 'closed once the read ended')
    assert.ok(!fs.existsSync(`${first}.deleted`), 'and removed')
    assert.equal(p.online, true)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a large read whose topic is deleted meanwhile answers UNKNOWN_TOPIC_OR_PARTITION', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-delete-'))
  try {
    const { layer, state, release } = tracingLayer()
    const m = await open(dir, layer)
    await fill(m, 100)
    const p = m.partition('t', 0)!
    state.hold = true
    const reading = p.read(0, 4 << 20, RU)
    await m.deleteTopic('t')
    release()
    const r = await reading
    assert.equal(r.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    assert.equal(r.records.byteLength, 0)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a large read racing a clean shutdown still answers; the files close after it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-close-'))
  try {
    const { layer, state, release } = tracingLayer()
    const m = await open(dir, layer)
    await fill(m, 100)
    const p = m.partition('t', 0)!
    const expected = (await p.read(0, 4 << 20, RU)).records.slice()
    state.hold = true
    const reading = p.read(0, 4 << 20, RU)
    // The close writes its files and ends while the read is still held.
    await m.close()
    const active = join(dir, 't-0', '00000000000000000000.log')
    assert.equal(openFilesOf(active), 1, 'kept open for the read')
    release()
    const r = await reading
    assert.equal(r.errorCode, ErrorCode.NONE)
    assert.deepEqual(Buffer.from(r.records), Buffer.from(expected))
    assert.equal(openFilesOf(active), 0)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: the long poll counts bytes before an open transaction without reading them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-lso-'))
  try {
    const { layer, state } = tracingLayer()
    const m = await open(dir, layer)
    await fill(m, 60) // about 1 MB readable
    const p = m.partition('t', 0)!
    const readable = p.logEndOffset
    const txn = batchOf([{ key: 'k', value: 'open' }], {
      producerId: 5,
      producerEpoch: 0,
      baseSequence: 0,
      transactional: true,
      timestamp: NOW,
    })
    assert.equal((await p.append(txn, { now: NOW })).errorCode, 0)
    await fill(m, 60) // after the open transaction: not readable by read_committed
    assert.equal(p.lastStableOffset, readable)
    const RC = { ...RU, isolationLevel: 'read_committed' } as const
    const from0 = (await p.read(0, 8 << 20, RC)).records.byteLength
    const from480 = (await p.read(480, 8 << 20, RC)).records.byteLength
    state.syncReads.length = 0
    // What a parked read_committed Fetch checks at every append.
    assert.equal(p.bytesAvailable(0, 'read_committed'), from0)
    assert.equal(p.bytesAvailable(480, 'read_committed'), from480)
    assert.ok(
      state.syncReads.every((n) => n <= 16 * 1024),
      `synchronous reads of ${Math.max(...state.syncReads)} bytes at most`,
    )
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: the batch of an offset near the log end is found without reading headers, and exactly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-recent-'))
  try {
    const { layer, state } = tracingLayer()
    const m = await open(dir, layer, { segmentBytes: 1 << 20 })
    // Batches of 16 records (about 16.7 KB, larger than the walk's window) and of 3 (small ones,
    // many to a window), interleaved, over a roll.
    const p = m.partition('t', 0)!
    const bases: number[] = []
    for (let i = 0; i < 100; i++) {
      bases.push(p.logEndOffset)
      const batch =
        i % 3 === 2 ? batchOf([{ key: 'a' }, { key: 'b' }, { key: 'c' }], { timestamp: NOW }) : bigBatch(i)
      assert.equal((await p.append(batch, { now: NOW })).errorCode, 0)
    }
    assert.ok((p as PartitionLogImpl).store.segmentCount > 1, 'rolled')
    const end = p.logEndOffset
    const expected = await readAll(p, 0)
    await nextTurn()
    // Every offset: the first batch answered is the one holding it, and the bytes counted from it
    // are those a storage opened afresh (which knows no recent batch) counts.
    const firstOf = async (q: typeof p, offset: number) => batchesOf(await q.read(offset, 1, RU))
    const seen: { first: number[]; bytes: number }[] = []
    for (let offset = 0; offset < end; offset++) {
      const first = await firstOf(p, offset)
      assert.deepEqual(first, [expected.find((b) => b.lastOffset >= offset)!.baseOffset], `offset ${offset}`)
      seen.push({ first, bytes: p.bytesAvailable(offset, 'read_uncommitted') })
    }
    await m.close()
    const again = createLogManager(
      { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [dir], defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, {}) },
      { storage: new FileLogStorage([dir], { fs: layer }), noBackgroundJobs: true },
    )
    await again.open()
    await again.createPartitions('t', 'id', 0, 1, { segmentBytes: 1 << 20 })
    const q = again.partition('t', 0)!
    for (let offset = 0; offset < end; offset++) {
      assert.deepEqual(
        { first: await firstOf(q, offset), bytes: q.bytesAvailable(offset, 'read_uncommitted') },
        seen[offset],
        `offset ${offset} after reopening`,
      )
    }
    // A consumer at the log end: counting the bytes after an append reads nothing, and the
    // Fetch's read is one read of the batches themselves.
    const at = q.logEndOffset
    assert.equal((await q.append(bigBatch(1000), { now: NOW })).errorCode, 0)
    await nextTurn()
    state.syncReads.length = 0
    assert.ok(q.bytesAvailable(at, 'read_uncommitted') > 16_000)
    assert.deepEqual(state.syncReads, [], 'no read to count the bytes')
    const r = await q.read(at, 1 << 20, RU)
    assert.deepEqual(batchesOf(r), [at])
    assert.deepEqual(state.syncReads, [r.records.byteLength], 'one read, of the batch')
    await again.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a large read away from the log end finds its first batch on the threadpool too: no read at once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-locate-'))
  try {
    const { layer, state } = tracingLayer()
    // Index entries 1 MiB apart: the walk to a batch crosses many windows of headers. Segments of
    // 2 MiB, and a written-lately window of 1 MiB, so most reads start away from the log end.
    const m = await open(
      dir,
      layer,
      { segmentBytes: 2 << 20, indexIntervalBytes: 1 << 20 },
      { tailWindowBytes: 1 << 20 },
    )
    await fill(m, 480) // three segments of about 2 MiB, an active one of about 1.7 MB
    const p = m.partition('t', 0)! as PartitionLogImpl
    const expected = (await readAll(p, 0)).map((b) => b.baseOffset)
    const activeBase = p.store.activeSegment().baseOffset
    // Batch starts and offsets inside batches, in the first segment, a middle one and far back
    // in the active one.
    for (const offset of [0, 7, 16 * 61 + 3, 16 * 190, activeBase + 5]) {
      await nextTurn()
      state.syncReads.length = 0
      const r = await p.read(offset, 1 << 20, RU)
      assert.equal(r.errorCode, ErrorCode.NONE)
      assert.deepEqual(state.syncReads, [], `no read at once for offset ${offset}`)
      const got = batchesOf(r)
      const i = expected.findIndex((b) => b + 15 >= offset)
      assert.ok(got.length >= 40, `${got.length} batches from ${offset}`)
      assert.deepEqual(got, expected.slice(i, i + got.length))
    }
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a large read from an offset the cleaner removed at the end of a segment starts in the next one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-cleaned-'))
  try {
    const { layer, state } = tracingLayer()
    // One index entry a segment (at its start): the walk to the removed offset reads the whole
    // cleaned segment's headers and finds no batch there.
    const m = await open(dir, layer, {
      cleanupPolicy: ['compact'],
      segmentBytes: 1 << 20,
      indexIntervalBytes: 1 << 20,
      minCleanableDirtyRatio: 0.01,
    })
    const p = m.partition('t', 0)! as PartitionLogImpl
    const keyed = (i: number, keys: string) =>
      batchOf(
        Array.from({ length: 16 }, (_, k) => ({ key: `${keys}-${k}`, value: `${i}:`.padEnd(1024, 'v') })),
        { timestamp: NOW },
      )
    // Batches of their own keys until one rolls: it is the second segment's first.
    let n = 0
    while (p.store.segmentCount === 1) {
      assert.equal((await p.append(keyed(n, `own${n}`), { now: NOW })).errorCode, 0)
      n++
    }
    const firstEnd = p.store.activeSegment().baseOffset
    const lastOfFirst = n - 2
    // The first segment's last three batches' keys written again: the cleaner removes them there.
    for (let k = lastOfFirst - 2; k <= lastOfFirst; k++) await p.append(keyed(n++, `own${k}`), { now: NOW })
    // More, so that the second segment is not the active one.
    while (p.store.segmentCount < 3) await p.append(keyed(n, `own${n++}`), { now: NOW })
    await m.runCleaner(NOW)
    const removed = firstEnd - 2 * 16
    assert.ok(!(await readAll(p, 0)).some((b) => b.baseOffset === removed), 'the cleaner removed it')
    assert.equal(p.store.segments()[1].baseOffset, firstEnd)
    await nextTurn()
    state.syncReads.length = 0
    const headers = state.headerReads
    const r = await p.read(removed, 1 << 20, RU)
    assert.deepEqual(state.syncReads, [])
    assert.ok(state.headerReads - headers > 10, `${state.headerReads - headers} header windows read`)
    assert.equal(batchesOf(r)[0], firstEnd)
    // In order through the cleaned segment's gaps: each read starts at the batch after the last.
    const kept = (await readAll(p, 0)).map((b) => b.baseOffset)
    const seen: number[] = []
    for (let offset = 0; offset < firstEnd; ) {
      const batches = batchesOf(await p.read(offset, 70_000, RU))
      seen.push(...batches)
      offset = batches[batches.length - 1] + 16
    }
    assert.deepEqual(seen, kept.slice(0, seen.length))
    assert.ok(seen.includes(firstEnd))
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('file: a reader going through a segment in order finds each first batch without reading headers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-read-order-'))
  try {
    const { layer, state } = tracingLayer()
    const m = await open(
      dir,
      layer,
      { segmentBytes: 4 << 20, indexIntervalBytes: 1 << 20 },
      { tailWindowBytes: 1 << 20 },
    )
    // Batches of one size (keys and values of fixed width), so that every read of 6.5 batches
    // stops halfway into one: a rolled segment of 4 MiB, an active one of about 0.8 MB.
    const p = m.partition('t', 0)! as PartitionLogImpl
    const sized = (i: number) =>
      batchOf(
        Array.from({ length: 16 }, (_, k) => ({
          key: `b${String(i).padStart(4, '0')}-${String(k).padStart(2, '0')}`,
          value: `${String(i).padStart(4, '0')}:`.padEnd(1024, 'v'),
        })),
        { timestamp: NOW },
      )
    const size = sized(0).byteLength
    for (let i = 0; i < 300; i++) {
      assert.equal(sized(i).byteLength, size)
      assert.equal((await p.append(sized(i), { now: NOW })).errorCode, 0)
    }
    const expected = (await readAll(p, 0)).map((b) => b.baseOffset)
    const end = p.store.segments()[1].baseOffset
    const got: number[] = []
    let headersAfterFirst = -1
    // Each read stops inside a batch, whose header then says where the next read starts.
    for (let offset = 0; offset < end; ) {
      state.syncReads.length = 0
      const r = await p.read(offset, Math.round(6.5 * size), RU)
      assert.deepEqual(state.syncReads, [])
      const batches = batchesOf(r)
      assert.ok(batches.length > 0)
      got.push(...batches)
      if (headersAfterFirst < 0) headersAfterFirst = state.headerReads
      offset = batches[batches.length - 1] + 16
    }
    assert.deepEqual(got, expected.slice(0, got.length))
    assert.equal(got.at(-1)! + 16, end)
    assert.ok(got.length / 6 > 30, `${got.length} batches in ${Math.round(got.length / 6)} reads`)
    assert.equal(state.headerReads, headersAfterFirst, 'no header read after the first read')
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
