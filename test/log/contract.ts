// The contract every log storage engine meets, driven through LogManager and PartitionLog (the
// interface the Kafka handlers use). test/log/memory.test.ts and file.test.ts run it per engine.
import assert from 'node:assert/strict'
import { after, afterEach, before, describe, test } from 'node:test'
import { compressSync as rawSnappy } from 'snappy'
import {
  buildBatch,
  CompressionCodec,
  CONTROL_FLAG_MASK,
  decodeRecords,
  encodeRecords,
  readBatchHeader,
  splitBatches,
  TIMESTAMP_TYPE_MASK,
} from '../../src/log/batch.js'
import { compress, crc32c, decompress } from '../../src/log/compression.js'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG } from '../../src/log/config.js'
import { txnMarker } from '../../src/log/marker.js'
import type { LogManagerImpl } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import { createLogManager } from '../../src/log/manager.js'
import type { LogStorage, PartitionStore } from '../../src/log/storage.js'
import type { AppendResult, LogConfig, LogManagerConfig, PartitionLog } from '../../src/log/types.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import { batchOf, dec, enc, hex, markerOf, records } from './helpers.js'

export interface LogHarness {
  /** A storage engine over the harness's durable place (a new instance each call, same data). */
  readonly storage: () => LogStorage
  readonly cleanup: () => Promise<void>
}

const NOW = 1700000000000
const RU = { minOneMessage: true, isolationLevel: 'read_uncommitted' } as const

/** Every batch in a read's bytes: header and decoded records. */
export function batchesIn(bytes: Uint8Array): { baseOffset: number; lastOffset: number; values: string[] }[] {
  const { positions } = splitBatches(bytes)
  return positions.map((p) => {
    const h = readBatchHeader(bytes, p)
    const body = bytes.subarray(p + 61, p + 12 + h.batchLength)
    const plain = decompress(h.attributes & 7, body, 1 << 26)
    const recs = decodeRecords(plain, h.recordsCount)
    return {
      baseOffset: h.baseOffset,
      lastOffset: h.baseOffset + h.lastOffsetDelta,
      values: recs.map((r) => (r.value === null ? '<null>' : dec.decode(r.value))),
    }
  })
}

/** Every batch from `from` to the log end, reading as a consumer does (one segment per read). */
export async function readAll(
  p: PartitionLog,
  from: number,
): Promise<{ baseOffset: number; lastOffset: number; values: string[] }[]> {
  const out: { baseOffset: number; lastOffset: number; values: string[] }[] = []
  let offset = from
  while (offset < p.logEndOffset) {
    const r = await p.read(offset, 1 << 20, RU)
    assert.equal(r.errorCode, 0)
    const bs = batchesIn(r.records)
    assert.ok(bs.length > 0, `no batch at ${offset}`)
    out.push(...bs)
    offset = bs[bs.length - 1].lastOffset + 1
  }
  return out
}

export function runLogContract(name: string, factory: () => Promise<LogHarness>): void {
  describe(`Log contract: ${name}`, () => {
    let h: LogHarness
    let n = 0
    const managers: LogManagerImpl[] = []
    before(async () => {
      h = await factory()
    })
    // A storage engine may hold its directory for one manager at a time (the file engine locks
    // it), so each test closes the managers it opened.
    afterEach(async () => {
      for (const m of managers.splice(0)) await m.close()
    })
    after(async () => {
      await h.cleanup()
    })

    async function manager(
      storage: LogStorage = h.storage(),
      over: Partial<LogManagerConfig> = {},
    ): Promise<LogManagerImpl> {
      const m = createLogManager(
        { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: ['unused'], ...over },
        { storage, noBackgroundJobs: true, clock: () => NOW },
      )
      await m.open()
      managers.push(m)
      return m
    }

    /** A fresh topic with one partition; returns the partition and its manager. */
    async function fresh(
      configs: Partial<LogConfig> = {},
      storage?: LogStorage,
    ): Promise<{ m: LogManagerImpl; p: PartitionLog; topic: string }> {
      // Topics of one test share its manager (one open manager per storage at a time).
      const m =
        storage === undefined && managers.length > 0 ? managers[managers.length - 1]! : await manager(storage)
      const topic = `t${n++}`
      await m.createPartitions(topic, `id-${topic}`, 0, 1, configs)
      return { m, p: m.partition(topic, 0)!, topic }
    }

    test('lentReadBytes: what reads under loans hold until they are given back, nothing else', async () => {
      const { m, p } = await fresh()
      assert.equal(m.lentReadBytes(), 0)
      await p.append(batchOf(records(50)), { now: NOW })
      const loans: (() => void)[] = []
      const r = await p.read(0, 1 << 20, { ...RU, loans })
      assert.ok(r.records.byteLength > 0)
      const held = m.lentReadBytes()
      // An engine that lends buffers counts at least the bytes read; one that lends none, nothing.
      assert.ok(held === 0 ? loans.length === 0 : held >= r.records.byteLength, `held ${held}`)
      await p.read(0, 1 << 20, RU)
      assert.equal(m.lentReadBytes(), held, 'a read without loans holds nothing')
      for (const giveBack of loans) giveBack()
      assert.equal(m.lentReadBytes(), 0)
      // A reservation counts until released with an engine that lends, not at all with one that does not.
      const release = m.reserveReadBytes(1000)
      assert.ok(m.lentReadBytes() === (held === 0 ? 0 : 1000), `reserved ${m.lentReadBytes()}`)
      release()
      assert.equal(m.lentReadBytes(), 0)
    })

    test('offsets are assigned in order; the stored batch differs from the produced one only in baseOffset and leader epoch', async () => {
      const { p } = await fresh()
      const produced = batchOf(records(3), { producerId: 1000, producerEpoch: 5, baseSequence: 0 })
      const a = await p.append(produced, { now: NOW })
      assert.equal(a.errorCode, ErrorCode.NONE)
      assert.equal(a.baseOffset, 0)
      assert.equal(a.lastOffset, 2)
      assert.equal(a.logAppendTime, -1)
      assert.equal(a.logStartOffset, 0)
      const b = await p.append(batchOf(records(2)), { now: NOW })
      assert.equal(b.baseOffset, 3)
      assert.equal(p.logEndOffset, 5)
      assert.equal(p.highWatermark, 5)
      assert.equal(p.lastStableOffset, 5)
      const r = await p.read(0, 1 << 20, RU)
      assert.equal(r.errorCode, ErrorCode.NONE)
      assert.equal(r.highWatermark, 5)
      assert.equal(r.logStartOffset, 0)
      assert.equal(r.abortedTransactions, null)
      const stored = r.records.subarray(0, produced.byteLength)
      assert.equal(hex(stored.subarray(0, 12)), '0000000000000000' + hex(produced.subarray(8, 12)))
      assert.equal(hex(stored.subarray(12, 16)), '00000000')
      assert.equal(hex(stored.subarray(16)), hex(produced.subarray(16)))
      assert.deepEqual(
        batchesIn(r.records).map((x) => [x.baseOffset, x.values]),
        [
          [0, ['v0', 'v1', 'v2']],
          [3, ['v0', 'v1']],
        ],
      )
    })

    test("append is done in the caller's turn; with flush.messages=1 it answers after the fsync", async () => {
      const { p } = await fresh()
      let appended = 0
      p.addListener((e) => {
        if (e === 'append') appended++
      })
      const a = p.append(batchOf(records(2)), { now: NOW })
      assert.ok(!(a instanceof Promise), 'an append without a flush policy answers at once')
      assert.equal(a.errorCode, ErrorCode.NONE)
      assert.equal(p.logEndOffset, 2)
      assert.equal(appended, 1)
      const refused = p.append(new Uint8Array(10), { now: NOW })
      assert.ok(!(refused instanceof Promise))
      assert.equal(refused.errorCode, ErrorCode.INVALID_RECORD)

      const flushed = (await fresh({ flushMessages: 1 })).p
      const pending = flushed.append(batchOf(records(2)), { now: NOW })
      assert.ok(pending instanceof Promise, 'flush.messages=1 waits for the fsync')
      assert.equal(flushed.logEndOffset, 2)
      assert.equal((await pending).errorCode, ErrorCode.NONE)
      // A refused batch needs no fsync: answered at once.
      const bad = flushed.append(new Uint8Array(10), { now: NOW })
      assert.ok(!(bad instanceof Promise))
      assert.equal(bad.errorCode, ErrorCode.INVALID_RECORD)
    })

    test('records handed over (recordsOwned) are rewritten in place; the store keeps no view of them', async () => {
      const { p } = await fresh()
      await p.append(batchOf(records(7)), { now: NOW })
      // Not handed over: the caller's bytes stay as they were.
      const lent = batchOf(records(2, 'lent'))
      const lentBefore = hex(lent)
      assert.equal((await p.append(lent, { now: NOW })).baseOffset, 7)
      assert.equal(hex(lent), lentBefore)
      // Handed over, at an offset inside a larger buffer (a frame): the batch is stored from those
      // bytes, its base offset written into them; nothing around it is touched.
      const batch = batchOf(records(3, 'owned'))
      const frame = new Uint8Array(batch.byteLength + 8).fill(0xee)
      frame.set(batch, 4)
      const view = frame.subarray(4, 4 + batch.byteLength)
      const a = await p.append(view, { now: NOW, recordsOwned: true })
      assert.equal(a.errorCode, ErrorCode.NONE)
      assert.equal(a.baseOffset, 9)
      assert.equal(hex(view.subarray(0, 8)), '0000000000000009', 'rewritten in place, not copied')
      assert.equal(hex(frame.subarray(0, 4)), 'eeeeeeee')
      assert.equal(hex(frame.subarray(4 + batch.byteLength)), 'eeeeeeee')
      // The caller's buffer is reused afterwards (the connection's next bytes): what was stored
      // does not change with it.
      frame.fill(0)
      lent.fill(0)
      assert.deepEqual(
        (await readAll(p, 7)).map((x) => [x.baseOffset, x.values]),
        [
          [7, ['lentv0', 'lentv1']],
          [9, ['ownedv0', 'ownedv1', 'ownedv2']],
        ],
      )
      // A refused batch leaves a handed-over buffer's offsets alone (it is never stored).
      const bad = batchOf(records(1))
      bad[20] ^= 0xff // CRC
      const before = hex(bad)
      assert.equal(
        (await p.append(bad, { now: NOW, recordsOwned: true })).errorCode,
        ErrorCode.CORRUPT_MESSAGE,
      )
      assert.equal(hex(bad), before)
    })

    /** Counts the store writes of `p` (PartitionLogImpl's store): batches per write. */
    function countWrites(p: PartitionLog): number[] {
      const store = (p as unknown as { store: PartitionStore }).store
      const writes: number[] = []
      const append = store.append.bind(store)
      const appendBatches = store.appendBatches.bind(store)
      // An engine may write a batch of several through its own append (the memory engine).
      let inBatches = false
      store.append = (batch, info) => {
        if (!inBatches) writes.push(1)
        append(batch, info)
      }
      store.appendBatches = (chunks, spans) => {
        writes.push(spans.length)
        inBatches = true
        try {
          appendBatches(chunks, spans)
        } finally {
          inBatches = false
        }
      }
      return writes
    }

    const C = { now: NOW, coalesce: true } as const

    test('coalesced appends: offsets in arrival order, one store write for the turn, visible and answered only once written', async () => {
      const { p } = await fresh()
      await p.append(batchOf(records(1, 'w')), { now: NOW })
      const writes = countWrites(p)
      const events: string[] = []
      p.addListener((e) => events.push(`${e}@${p.logEndOffset}`))
      const seenAtAnswer: number[] = []
      const results = [2, 3, 1].map((n, i) => {
        const r = p.append(batchOf(records(n, `c${i}`)), C)
        assert.ok(r instanceof Promise, 'a coalesced append answers once written')
        return r.then((a) => {
          seenAtAnswer.push(p.logEndOffset)
          return a
        })
      })
      // Taken, not written: nothing of them is visible yet.
      assert.equal(p.logEndOffset, 1)
      assert.equal(p.highWatermark, 1)
      assert.equal(p.bytesAvailable(1, 'read_uncommitted'), 0)
      assert.equal((await p.read(1, 1 << 20, RU)).records.byteLength, 0)
      assert.deepEqual(writes, [])
      assert.deepEqual(events, [])
      const answers = await Promise.all(results)
      assert.deepEqual(
        answers.map((a) => [a.errorCode, a.baseOffset, a.lastOffset, a.duplicate]),
        [
          [0, 1, 2, false],
          [0, 3, 5, false],
          [0, 6, 6, false],
        ],
      )
      assert.deepEqual(writes, [3], 'one write of the three batches')
      assert.deepEqual(events, ['append@7'], 'listeners hear the write once, when it is visible')
      assert.deepEqual(seenAtAnswer, [7, 7, 7], 'answered after the write')
      assert.deepEqual(
        (await readAll(p, 0)).map((x) => [x.baseOffset, x.values]),
        [
          [0, ['wv0']],
          [1, ['c0v0', 'c0v1']],
          [3, ['c1v0', 'c1v1', 'c1v2']],
          [6, ['c2v0']],
        ],
      )
      // A refused batch is answered at once and stages nothing.
      const refused = p.append(new Uint8Array(10), C)
      assert.ok(!(refused instanceof Promise))
      assert.equal(refused.errorCode, ErrorCode.INVALID_RECORD)
    })

    test('coalesced appends: a retried batch of the same turn is a duplicate, written once, answered after the original', async () => {
      const { p } = await fresh()
      const writes = countWrites(p)
      const b0 = batchOf(records(2, 'a'), { producerId: 9, producerEpoch: 0, baseSequence: 0 })
      const first = p.append(b0, C)
      const retry = p.append(b0, C)
      const gap = p.append(batchOf(records(1), { producerId: 9, producerEpoch: 0, baseSequence: 7 }), C)
      const next = p.append(batchOf(records(1, 'b'), { producerId: 9, producerEpoch: 0, baseSequence: 2 }), C)
      assert.ok(!(gap instanceof Promise), 'the sequence check sees the staged batch')
      assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
      let written = -1
      const dup = await (retry as Promise<AppendResult>).then((d) => {
        written = p.logEndOffset
        return d
      })
      assert.equal(written, 3, 'the duplicate is answered once its original is written')
      assert.deepEqual([dup.errorCode, dup.baseOffset, dup.lastOffset, dup.duplicate], [0, 0, 1, true])
      assert.deepEqual([(await first).baseOffset, (await next).baseOffset], [0, 2])
      assert.deepEqual(writes, [2])
      assert.deepEqual(
        (await readAll(p, 0)).map((x) => x.values),
        [['av0', 'av1'], ['bv0']],
      )
    })

    test('coalesced appends: whatever must see them written writes them first (an append, a marker, a roll, an fsync, DeleteRecords)', async () => {
      const { p } = await fresh({ segmentBytes: 400 })
      const writes = countWrites(p)
      // An append that is not coalesced comes after the staged ones, at once.
      const staged = p.append(batchOf(records(1, 'a')), C)
      const direct = p.append(batchOf(records(1, 'b')), { now: NOW })
      assert.ok(!(direct instanceof Promise))
      assert.equal(direct.baseOffset, 1)
      assert.equal(p.logEndOffset, 2)
      assert.equal((await staged).baseOffset, 0)
      assert.deepEqual(writes, [1, 1])
      // A roll (segment.bytes) writes the staged batches into the segment they were sized for.
      const big = () => batchOf([{ key: 'k', value: 'x'.repeat(120) }])
      const rolls = [p.append(big(), C), p.append(big(), C), p.append(big(), C)]
      const answers = await Promise.all(rolls)
      assert.deepEqual(
        answers.map((a) => [a.errorCode, a.baseOffset]),
        [
          [0, 2],
          [0, 3],
          [0, 4],
        ],
      )
      const segs = (p as unknown as { store: PartitionStore }).store.segments()
      for (const s of segs)
        assert.ok(s.sizeInBytes <= 400, `segment ${s.baseOffset} holds ${s.sizeInBytes} bytes`)
      assert.ok(segs.length >= 2)
      assert.deepEqual(
        (await readAll(p, 0)).map((x) => x.baseOffset),
        [0, 1, 2, 3, 4],
      )
      // DeleteRecords to the high watermark stops at the written data.
      const pending = p.append(batchOf(records(1, 'd')), C)
      const del = await p.deleteRecordsBefore(-1)
      assert.equal(del.lowWatermark, 5)
      assert.equal((await pending).baseOffset, 5)
      assert.equal(p.logStartOffset, 5)
      // A marker is written after the staged batches.
      const txn = p.append(
        batchOf(records(1, 't'), { producerId: 3, producerEpoch: 0, baseSequence: 0, transactional: true }),
        C,
      )
      const marker = p.appendMarker(
        txnMarker(
          { producerId: 3, producerEpoch: 0, committed: true, coordinatorEpoch: 0, timestamp: NOW },
          crc32c,
        ),
        { now: NOW, transactionVersion: 0 },
      )
      assert.ok(!(marker instanceof Promise))
      assert.deepEqual([marker.errorCode, marker.baseOffset], [0, 7])
      assert.equal((await txn).baseOffset, 6)
      assert.equal(p.lastStableOffset, 8)
      // flush.messages=1: a coalesced append answers after its write and the fsync.
      const flushed = (await fresh({ flushMessages: 1 })).p
      const fw = countWrites(flushed)
      const f = await Promise.all([
        flushed.append(batchOf(records(1)), C),
        flushed.append(batchOf(records(1)), C),
      ])
      assert.deepEqual(
        f.map((a) => [a.errorCode, a.baseOffset]),
        [
          [0, 0],
          [0, 1],
        ],
      )
      assert.deepEqual(fw, [2])
    })

    test('coalesced appends of a partition deleted before their write answer UNKNOWN_TOPIC_OR_PARTITION', async () => {
      const { m, p, topic } = await fresh()
      const staged = p.append(batchOf(records(1)), C)
      await m.deleteTopic(topic)
      const r = await staged
      assert.equal(r.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    })

    test('golden batch of §2.6 appended at offset 7: only baseOffset and leader epoch change', async () => {
      const { p } = await fresh()
      await p.append(batchOf(records(7)), { now: NOW })
      const golden = batchOf([{ key: 'k', value: 'v', timestamp: 1700000000000 }], {
        producerId: 1000,
        producerEpoch: 5,
        baseSequence: 0,
      })
      assert.equal(hex(golden.subarray(17, 21)), '6d0428ed')
      const a = await p.append(golden, { now: NOW })
      assert.equal(a.baseOffset, 7)
      const r = await p.read(7, 1 << 20, RU)
      assert.equal(
        hex(r.records),
        '0000000000000007' + '0000003a' + '00000000' + '02' + '6d0428ed' + hex(golden.subarray(21)),
      )
    })

    test('read: from the batch holding the offset, whole batches within maxBytes, the first one whole when minOneMessage', async () => {
      const { p } = await fresh()
      for (let i = 0; i < 5; i++) await p.append(batchOf(records(4, `b${i}`)), { now: NOW })
      const mid = await p.read(6, 1 << 20, RU)
      assert.deepEqual(
        batchesIn(mid.records).map((b) => b.baseOffset),
        [4, 8, 12, 16],
      )
      const size = splitBatches(mid.records).positions[1]
      const cut = await p.read(4, size * 2 + 10, RU)
      assert.equal(cut.records.byteLength, size * 2)
      const one = await p.read(4, 5, RU)
      assert.equal(one.records.byteLength, size)
      const none = await p.read(4, 5, { ...RU, minOneMessage: false })
      assert.equal(none.records.byteLength, 0)
      const capped = await p.read(0, 1 << 20, { ...RU, maxOffset: 8 })
      assert.deepEqual(
        batchesIn(capped.records).map((b) => b.baseOffset),
        [0, 4],
      )
    })

    test('read: OFFSET_OUT_OF_RANGE below the log start and past the log end; at the end nothing', async () => {
      const { p } = await fresh()
      await p.append(batchOf(records(3)), { now: NOW })
      const past = await p.read(4, 100, RU)
      assert.equal(past.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE)
      assert.equal(past.highWatermark, -1)
      const end = await p.read(3, 100, RU)
      assert.equal(end.errorCode, ErrorCode.NONE)
      assert.equal(end.records.byteLength, 0)
      assert.equal(end.highWatermark, 3)
      await p.deleteRecordsBefore(2)
      assert.equal((await p.read(1, 100, RU)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE)
      const from2 = await p.read(2, 100, { minOneMessage: true, isolationLevel: 'read_committed' })
      assert.equal(from2.errorCode, ErrorCode.NONE)
      assert.equal(from2.logStartOffset, 2)
      assert.deepEqual(from2.abortedTransactions, [])
      assert.equal(batchesIn(from2.records)[0].baseOffset, 0, 'the batch holding offset 2 starts at 0')
    })

    test('rolling by segment.bytes: data spans segments, reads cross them', async () => {
      const { p } = await fresh({ segmentBytes: 1024 })
      const appended: number[] = []
      for (let i = 0; i < 40; i++)
        appended.push((await p.append(batchOf(records(2, `r${i}-`)), { now: NOW })).baseOffset)
      let offset = 0
      const seen: string[] = []
      while (offset < p.logEndOffset) {
        const r = await p.read(offset, 300, RU)
        const bs = batchesIn(r.records)
        assert.ok(bs.length > 0)
        for (const b of bs) if (b.baseOffset >= offset) seen.push(...b.values)
        offset = bs[bs.length - 1].lastOffset + 1
      }
      assert.equal(seen.length, 80)
      assert.equal(seen[79], 'r39-v1')
      assert.ok(p.sizeInBytes > 1024)
    })

    test('idempotent producer: a retried batch gets its original offset and is not written twice', async () => {
      const { p } = await fresh()
      const b0 = batchOf(records(2), { producerId: 7, producerEpoch: 0, baseSequence: 0 })
      const b1 = batchOf(records(3), { producerId: 7, producerEpoch: 0, baseSequence: 2 })
      assert.equal((await p.append(b0, { now: NOW })).baseOffset, 0)
      assert.equal((await p.append(b1, { now: NOW })).baseOffset, 2)
      const dup = await p.append(b0, { now: NOW })
      assert.equal(dup.errorCode, ErrorCode.NONE)
      assert.equal(dup.baseOffset, 0)
      assert.equal(dup.duplicate, true)
      assert.equal(dup.logAppendTime, NOW, 'a duplicate reports the cached max timestamp (Kafka)')
      assert.equal(p.logEndOffset, 5)
      const gap = await p.append(batchOf(records(1), { producerId: 7, producerEpoch: 0, baseSequence: 9 }), {
        now: NOW,
      })
      assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
      assert.equal(gap.logStartOffset, 0)
      const old = await p.append(
        batchOf(records(1), { producerId: 7, producerEpoch: -1 + 0, baseSequence: 5 }),
        {
          now: NOW,
        },
      )
      assert.equal(old.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH)
      const bumpBad = await p.append(
        batchOf(records(1), { producerId: 7, producerEpoch: 1, baseSequence: 5 }),
        {
          now: NOW,
        },
      )
      assert.equal(bumpBad.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
      const bump = await p.append(batchOf(records(1), { producerId: 7, producerEpoch: 1, baseSequence: 0 }), {
        now: NOW,
      })
      assert.equal(bump.errorCode, ErrorCode.NONE)
      const fenced = await p.append(
        batchOf(records(1), { producerId: 7, producerEpoch: 0, baseSequence: 5 }),
        {
          now: NOW,
        },
      )
      assert.equal(fenced.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH)
      const unknown = await p.append(
        batchOf(records(1), { producerId: 8, producerEpoch: 3, baseSequence: 42 }),
        {
          now: NOW,
        },
      )
      assert.equal(unknown.errorCode, ErrorCode.NONE, 'an unknown producer may start at any sequence')
      assert.deepEqual(
        p.producerStates().sort((a, b) => a.producerId - b.producerId),
        [
          {
            producerId: 7,
            producerEpoch: 1,
            lastSequence: 0,
            lastTimestamp: NOW,
            coordinatorEpoch: -1,
            currentTxnStartOffset: -1,
          },
          {
            producerId: 8,
            producerEpoch: 3,
            lastSequence: 42,
            lastTimestamp: NOW,
            coordinatorEpoch: -1,
            currentTxnStartOffset: -1,
          },
        ],
      )
    })

    test('idempotent producer: only the last 5 batches are duplicates; sequences wrap', async () => {
      const { p } = await fresh()
      const batches = Array.from({ length: 7 }, (_, i) =>
        batchOf(records(1), {
          producerId: 9,
          producerEpoch: 0,
          baseSequence: 2147483644 + i > 2147483647 ? i - 4 : 2147483644 + i,
        }),
      )
      for (let i = 0; i < 7; i++) assert.equal((await p.append(batches[i], { now: NOW })).baseOffset, i)
      assert.equal((await p.append(batches[2], { now: NOW })).baseOffset, 2)
      const tooOld = await p.append(batches[1], { now: NOW })
      assert.equal(tooOld.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
      assert.equal(p.logEndOffset, 7)
    })

    test('validation: framing, base offset, size, CRC, counts, control, sequence (§3.1 order)', async () => {
      const { p } = await fresh({ maxMessageBytes: 500 })
      const ok = batchOf(records(1))
      const expect = async (bytes: Uint8Array, code: number, withStart: boolean): Promise<void> => {
        const r = await p.append(bytes, { now: NOW })
        assert.equal(r.errorCode, code)
        assert.equal(r.logStartOffset, withStart ? 0 : -1)
        assert.equal(r.baseOffset, -1)
      }
      await expect(new Uint8Array(0), ErrorCode.INVALID_RECORD, false)
      await expect(ok.subarray(0, 40), ErrorCode.INVALID_RECORD, false)
      await expect(new Uint8Array([...ok, ...ok]), ErrorCode.INVALID_RECORD, false)
      const magic1 = ok.slice()
      magic1[16] = 1
      await expect(magic1, ErrorCode.INVALID_RECORD, false)
      const magic9 = ok.slice()
      magic9[16] = 9
      await expect(magic9, ErrorCode.CORRUPT_MESSAGE, false)
      const based = ok.slice()
      based[7] = 3
      await expect(based, ErrorCode.INVALID_RECORD, true)
      await expect(batchOf([{ value: 'x'.repeat(600) }]), ErrorCode.MESSAGE_TOO_LARGE, false)
      const crc = ok.slice()
      crc[crc.byteLength - 1] ^= 1
      await expect(crc, ErrorCode.CORRUPT_MESSAGE, false)
      await expect(batchOf(records(1), { attributes: CONTROL_FLAG_MASK }), ErrorCode.INVALID_RECORD, true)
      await expect(
        batchOf(records(1), { producerId: 3, producerEpoch: 0, baseSequence: -1 }),
        ErrorCode.INVALID_RECORD,
        true,
      )
      await expect(batchOf(records(1), { attributes: 6 }), ErrorCode.UNKNOWN_SERVER_ERROR, false)
      // Trailing bytes after the one batch are dropped, not an error.
      const trailing = await p.append(new Uint8Array([...ok, 1, 2, 3]), { now: NOW })
      assert.equal(trailing.errorCode, ErrorCode.NONE)
      assert.equal(p.logEndOffset, 1)
    })

    test('validation: record errors on a compacted topic and out-of-range timestamps', async () => {
      const { p } = await fresh({ cleanupPolicy: ['compact'], messageTimestampAfterMaxMs: 1000 })
      const nullKeys = await p.append(batchOf([{ key: 'a' }, { key: null }, { key: null }]), { now: NOW })
      assert.equal(nullKeys.errorCode, ErrorCode.INVALID_RECORD)
      assert.deepEqual(nullKeys.recordErrors, [
        {
          batchIndex: 1,
          message: `Compacted topic cannot accept message without key in topic partition ${p.topic}-0.`,
        },
        {
          batchIndex: 2,
          message: `Compacted topic cannot accept message without key in topic partition ${p.topic}-0.`,
        },
      ])
      assert.match(
        nullKeys.errorMessage!,
        /^One or more records have been rejected due to 2 record errors in total/,
      )
      const future = await p.append(
        batchOf([
          { key: 'a', timestamp: NOW },
          { key: 'b', timestamp: NOW + 5000 },
        ]),
        { now: NOW },
      )
      assert.equal(future.errorCode, ErrorCode.INVALID_TIMESTAMP)
      assert.equal(future.errorMessage, 'One or more records have been rejected due to invalid timestamp')
      assert.deepEqual(future.recordErrors, [
        {
          batchIndex: 1,
          message: `Timestamp ${NOW + 5000} of message with offset 1 is out of range. The timestamp should be within [${NOW - 2 ** 63}, ${NOW + 1000}]`,
        },
      ])
      const lat = await p.append(
        batchOf([{ key: 'a' }], { attributes: TIMESTAMP_TYPE_MASK, timestamp: -1 }),
        { now: NOW },
      )
      assert.equal(lat.errorCode, ErrorCode.INVALID_TIMESTAMP)
      assert.match(lat.recordErrors[0].message!, /Producer should not set timestamp type to LogAppendTime\.$/)
      assert.equal(p.logEndOffset, 0, 'nothing of a rejected batch is appended')
    })

    test('LogAppendTime topics stamp the batch with the broker clock (new CRC) and report it', async () => {
      const { p } = await fresh({ messageTimestampType: 'LogAppendTime' })
      const a = await p.append(batchOf(records(2), { timestamp: 5 }), { now: NOW + 123 })
      assert.equal(a.logAppendTime, NOW + 123)
      const r = await p.read(0, 1000, RU)
      const hd = readBatchHeader(r.records)
      assert.equal(hd.maxTimestamp, NOW + 123)
      assert.equal(hd.attributes & TIMESTAMP_TYPE_MASK, TIMESTAMP_TYPE_MASK)
      assert.equal(hd.crc, crc32c(r.records.subarray(21)))
    })

    test('CreateTime: a wrong producer maxTimestamp is recomputed from the records', async () => {
      const { p } = await fresh()
      const b = batchOf([{ timestamp: NOW - 10 }, { timestamp: NOW - 5 }])
      new DataView(b.buffer).setUint32(39, 0) // corrupt maxTimestamp's low word, then fix the CRC
      new DataView(b.buffer).setUint32(17, crc32c(b.subarray(21)))
      assert.equal((await p.append(b, { now: NOW })).errorCode, ErrorCode.NONE)
      const hd = readBatchHeader((await p.read(0, 1000, RU)).records)
      assert.equal(hd.maxTimestamp, NOW - 5)
    })

    for (const [codecName, codec] of Object.entries(CompressionCodec)) {
      test(`compression ${codecName}: kept as sent with compression.type=producer, records intact`, async () => {
        const { p } = await fresh()
        const sent = batchOf(records(20), { codec })
        assert.equal((await p.append(sent, { now: NOW })).errorCode, ErrorCode.NONE)
        const r = await p.read(0, 1 << 20, RU)
        assert.equal(hex(r.records.subarray(16)), hex(sent.subarray(16)))
        assert.equal(batchesIn(r.records)[0].values[19], 'v19')
      })
      test(`compression ${codecName}: recompressed to zstd when compression.type=zstd`, async () => {
        const { p } = await fresh({ compressionType: 'zstd' })
        const sent = batchOf(records(20), { codec, producerId: 4, producerEpoch: 0, baseSequence: 0 })
        assert.equal((await p.append(sent, { now: NOW })).errorCode, ErrorCode.NONE)
        const r = await p.read(0, 1 << 20, RU)
        const hd = readBatchHeader(r.records)
        assert.equal(hd.attributes & 7, CompressionCodec.zstd)
        assert.equal(hd.producerId, 4)
        assert.equal(hd.crc, crc32c(r.records.subarray(21)))
        assert.deepEqual(
          batchesIn(r.records)[0].values,
          records(20).map((x) => x.value),
        )
      })
    }

    test('compression: a raw snappy block (librdkafka) is accepted and stored as sent', async () => {
      const { p } = await fresh()
      const body = encodeRecords(
        records(5).map((r, i) => ({
          timestampDelta: 0,
          offsetDelta: i,
          key: enc.encode(r.key!),
          value: enc.encode(r.value!),
        })),
      )
      const sent = buildBatch(
        {
          attributes: CompressionCodec.snappy,
          lastOffsetDelta: 4,
          baseTimestamp: NOW,
          maxTimestamp: NOW,
          recordsCount: 5,
        },
        rawSnappy(Buffer.from(body)),
        crc32c,
      )
      assert.equal((await p.append(sent, { now: NOW })).errorCode, ErrorCode.NONE)
      const r = await p.read(0, 1 << 20, RU)
      assert.equal(hex(r.records.subarray(16)), hex(sent.subarray(16)))
      assert.equal(batchesIn(r.records)[0].values[4], 'v4')
    })

    test('compression: inner offsets that are not 0..n-1 make the broker rebuild the batch', async () => {
      const { p } = await fresh()
      const body = encodeRecords([
        { timestampDelta: 0, offsetDelta: 0, key: enc.encode('a'), value: enc.encode('1') },
        { timestampDelta: 0, offsetDelta: 5, key: enc.encode('b'), value: enc.encode('2') },
      ])
      const sent = buildBatch(
        {
          attributes: CompressionCodec.gzip,
          lastOffsetDelta: 1,
          baseTimestamp: NOW,
          maxTimestamp: NOW,
          recordsCount: 2,
        },
        compress(CompressionCodec.gzip, body),
        crc32c,
      )
      assert.equal((await p.append(sent, { now: NOW })).errorCode, ErrorCode.NONE)
      const r = await p.read(0, 1 << 20, RU)
      const hd = readBatchHeader(r.records)
      assert.equal(hd.attributes & 7, CompressionCodec.gzip)
      const recs = decodeRecords(decompress(CompressionCodec.gzip, r.records.subarray(61), 1 << 20), 2)
      assert.deepEqual(
        recs.map((x) => x.offsetDelta),
        [0, 1],
      )
      assert.equal(hd.crc, crc32c(r.records.subarray(21)))
    })

    test('compression: a truncated compressed stream is INVALID_RECORD', async () => {
      const { p } = await fresh()
      const full = batchOf(records(50), { codec: CompressionCodec.gzip })
      const cut = full.slice(0, full.byteLength - 20)
      new DataView(cut.buffer).setInt32(8, cut.byteLength - 12)
      new DataView(cut.buffer).setUint32(17, crc32c(cut.subarray(21)))
      assert.equal((await p.append(cut, { now: NOW })).errorCode, ErrorCode.INVALID_RECORD)
    })

    test('ListOffsets max timestamp: only records at or after the log start count', async () => {
      const ts = [1000, 3000, 2000, 1500, 1500]
      // One batch a record, then the five in one batch (the log start falls inside it).
      for (const oneBatch of [false, true]) {
        const { p } = await fresh()
        if (oneBatch) await p.append(batchOf(ts.map((t) => ({ timestamp: NOW + t }))), { now: NOW })
        else for (const t of ts) await p.append(batchOf([{ timestamp: NOW + t }]), { now: NOW })
        assert.deepEqual(await p.listOffsets(-3, 'read_uncommitted'), {
          errorCode: 0,
          offset: 1,
          timestamp: NOW + 3000,
          leaderEpoch: 0,
        })
        assert.equal((await p.deleteRecordsBefore(3)).lowWatermark, 3)
        // The largest timestamp left is 1500, at offsets 3 and 4: the earlier one.
        assert.deepEqual(
          await p.listOffsets(-3, 'read_uncommitted'),
          {
            errorCode: 0,
            offset: 3,
            timestamp: NOW + 1500,
            leaderEpoch: 0,
          },
          `one batch: ${oneBatch}`,
        )
        await p.deleteRecordsBefore(5)
        assert.deepEqual(await p.listOffsets(-3, 'read_uncommitted'), {
          errorCode: 0,
          offset: -1,
          timestamp: -1,
          leaderEpoch: -1,
        })
      }
      // Several segments: the log start falls in the one whose largest timestamp was the log's, and
      // the largest left is in a later segment.
      const { p } = await fresh({ segmentBytes: 200 })
      const times = [100, 9000, 200, 300, 400, 500, 600, 700]
      for (const t of times)
        await p.append(batchOf([{ timestamp: NOW + t }, { timestamp: NOW + t + 1 }]), { now: NOW })
      assert.equal((await p.listOffsets(-3, 'read_uncommitted')).offset, 3)
      await p.deleteRecordsBefore(4)
      assert.deepEqual(await p.listOffsets(-3, 'read_uncommitted'), {
        errorCode: 0,
        offset: 15,
        timestamp: NOW + 701,
        leaderEpoch: 0,
      })
    })

    test('ListOffsets: latest, earliest, max timestamp, by time, unsupported', async () => {
      const { p } = await fresh({ segmentBytes: 400 })
      const empty = await p.listOffsets(-3, 'read_uncommitted')
      assert.deepEqual(empty, { errorCode: 0, offset: -1, timestamp: -1, leaderEpoch: -1 })
      for (let i = 0; i < 10; i++) {
        await p.append(
          batchOf([{ timestamp: NOW + i * 100 }, { timestamp: NOW + i * 100 + (i === 4 ? 5000 : 50) }]),
          { now: NOW + 10000 },
        )
      }
      assert.deepEqual(await p.listOffsets(-1, 'read_uncommitted'), {
        errorCode: 0,
        offset: 20,
        timestamp: -1,
        leaderEpoch: 0,
      })
      assert.deepEqual(await p.listOffsets(-1, 'read_committed'), {
        errorCode: 0,
        offset: 20,
        timestamp: -1,
        leaderEpoch: 0,
      })
      assert.deepEqual(await p.listOffsets(-2, 'read_uncommitted'), {
        errorCode: 0,
        offset: 0,
        timestamp: -1,
        leaderEpoch: 0,
      })
      assert.deepEqual(await p.listOffsets(-4, 'read_uncommitted'), {
        errorCode: 0,
        offset: 0,
        timestamp: -1,
        leaderEpoch: 0,
      })
      assert.deepEqual(await p.listOffsets(-5, 'read_uncommitted'), {
        errorCode: 0,
        offset: -1,
        timestamp: -1,
        leaderEpoch: -1,
      })
      assert.deepEqual(await p.listOffsets(-3, 'read_uncommitted'), {
        errorCode: 0,
        offset: 9,
        timestamp: NOW + 5400,
        leaderEpoch: 0,
      })
      assert.deepEqual(await p.listOffsets(NOW + 250, 'read_uncommitted'), {
        errorCode: 0,
        offset: 5,
        timestamp: NOW + 250,
        leaderEpoch: 0,
      })
      assert.deepEqual(await p.listOffsets(NOW + 1000, 'read_uncommitted'), {
        errorCode: 0,
        offset: 9,
        timestamp: NOW + 5400,
        leaderEpoch: 0,
      })
      assert.deepEqual(await p.listOffsets(NOW + 99999, 'read_uncommitted'), {
        errorCode: 0,
        offset: -1,
        timestamp: -1,
        leaderEpoch: -1,
      })
      assert.equal((await p.listOffsets(-7, 'read_uncommitted')).errorCode, ErrorCode.UNSUPPORTED_VERSION)
      await p.deleteRecordsBefore(7)
      assert.equal((await p.listOffsets(NOW, 'read_uncommitted')).offset, 7)
      assert.equal((await p.listOffsets(-2, 'read_uncommitted')).offset, 7)
    })

    test('DeleteRecords: moves the log start offset; -1 is the high watermark; bounds and policy', async () => {
      const { p } = await fresh()
      await p.append(batchOf(records(5)), { now: NOW })
      assert.deepEqual(await p.deleteRecordsBefore(2), { errorCode: 0, errorMessage: null, lowWatermark: 2 })
      assert.deepEqual(await p.deleteRecordsBefore(1), { errorCode: 0, errorMessage: null, lowWatermark: 2 })
      const beyond = await p.deleteRecordsBefore(6)
      assert.equal(beyond.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE)
      assert.equal(
        beyond.errorMessage,
        `Cannot increment the log start offset to 6 of partition ${p.topic}-0 since it is larger than the high watermark 5`,
      )
      assert.equal((await p.deleteRecordsBefore(-5)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE)
      assert.deepEqual(await p.deleteRecordsBefore(-1), { errorCode: 0, errorMessage: null, lowWatermark: 5 })
      assert.equal((await p.append(batchOf(records(1)), { now: NOW })).logStartOffset, 5)
      const { p: compacted } = await fresh({ cleanupPolicy: ['compact'] })
      const refused = await compacted.deleteRecordsBefore(0)
      assert.equal(refused.errorCode, ErrorCode.POLICY_VIOLATION)
      assert.equal(
        refused.errorMessage,
        `Records of partition ${compacted.topic}-0 can not be deleted due to the configured policy`,
      )
      const { p: both } = await fresh({ cleanupPolicy: ['compact', 'delete'] })
      assert.equal((await both.deleteRecordsBefore(0)).errorCode, ErrorCode.NONE)
    })

    test('OffsetForLeaderEpoch: epoch 0 ends at the log end offset, others are unknown', async () => {
      const { p } = await fresh()
      assert.deepEqual(p.endOffsetForLeaderEpoch(0), { errorCode: 0, leaderEpoch: 0, endOffset: 0 })
      await p.append(batchOf(records(3)), { now: NOW })
      assert.deepEqual(p.endOffsetForLeaderEpoch(0), { errorCode: 0, leaderEpoch: 0, endOffset: 3 })
      assert.deepEqual(p.endOffsetForLeaderEpoch(1), { errorCode: 0, leaderEpoch: -1, endOffset: -1 })
      assert.deepEqual(p.endOffsetForLeaderEpoch(-1), { errorCode: 0, leaderEpoch: -1, endOffset: -1 })
    })

    test('retention: whole segments by size and time, never the only data left unless Kafka would; start offset moves', async () => {
      const { m, p } = await fresh({ segmentBytes: 300, retentionBytes: 700, retentionMs: -1 })
      for (let i = 0; i < 20; i++)
        await p.append(batchOf(records(1, `x${i}`), { timestamp: NOW }), { now: NOW })
      const before = p.sizeInBytes
      await m.runRetention(NOW)
      assert.ok(p.sizeInBytes <= 700 + 300, `size ${p.sizeInBytes} (was ${before})`)
      assert.ok(p.sizeInBytes < before)
      assert.ok(p.logStartOffset > 0)
      const r = await p.read(p.logStartOffset, 1 << 20, RU)
      assert.equal(batchesIn(r.records)[0].baseOffset, p.logStartOffset)
      assert.equal(p.logEndOffset, 20)

      const t = await fresh({ segmentBytes: 300, retentionMs: 1000 })
      for (let i = 0; i < 10; i++) await t.p.append(batchOf(records(1), { timestamp: NOW }), { now: NOW })
      await t.m.runRetention(NOW + 500)
      assert.equal(t.p.logStartOffset, 0)
      await t.m.runRetention(NOW + 5000)
      assert.equal(t.p.logStartOffset, 10, 'every segment expired: the active one too, after a roll')
      assert.equal(t.p.logEndOffset, 10)
      assert.equal(t.p.sizeInBytes, 0)
      assert.equal((await t.p.append(batchOf(records(1)), { now: NOW + 5000 })).baseOffset, 10)

      const c = await fresh({
        segmentBytes: 300,
        retentionMs: 1000,
        retentionBytes: 10,
        cleanupPolicy: ['compact'],
      })
      for (let i = 0; i < 10; i++) await c.p.append(batchOf(records(1), { timestamp: NOW }), { now: NOW })
      await c.m.runRetention(NOW + 5000)
      assert.equal(c.p.logStartOffset, 0, 'a compact-only topic is not deleted by time or size')
    })

    test('retention: segments wholly below a DeleteRecords offset are deleted under every policy', async () => {
      const { m, p } = await fresh({
        segmentBytes: 300,
        cleanupPolicy: ['compact', 'delete'],
        retentionMs: -1,
      })
      for (let i = 0; i < 12; i++) await p.append(batchOf(records(1), { timestamp: NOW }), { now: NOW })
      const size = p.sizeInBytes
      await p.deleteRecordsBefore(9)
      await m.runRetention(NOW)
      assert.ok(p.sizeInBytes < size)
      assert.equal(p.logStartOffset, 9)
      assert.equal((await p.read(9, 1 << 20, RU)).errorCode, ErrorCode.NONE)
    })

    test('listeners hear appends and start-offset moves synchronously; unsubscribe stops them', async () => {
      const { p } = await fresh()
      const events: string[] = []
      const off = p.addListener((e) => events.push(`${e}@${p.logEndOffset}`))
      await p.append(batchOf(records(2)), { now: NOW })
      await p.deleteRecordsBefore(1)
      off()
      await p.append(batchOf(records(2)), { now: NOW })
      assert.deepEqual(events, ['append@2', 'start-offset@2'])
      assert.equal(p.bytesAvailable(0, 'read_uncommitted'), 0, 'below the log start offset')
      assert.equal(p.bytesAvailable(1, 'read_uncommitted'), p.sizeInBytes)
      assert.equal(p.bytesAvailable(4, 'read_uncommitted'), 0)
    })

    test('an emit tells the listeners registered when it started: removed meanwhile too, added not', async () => {
      const { p } = await fresh()
      const told: string[] = []
      let offB: () => void = () => {}
      let added = false
      p.addListener(() => {
        told.push('a')
        offB()
        if (!added) {
          added = true
          p.addListener(() => told.push('c'))
        }
      })
      offB = p.addListener(() => told.push('b'))
      await p.append(batchOf(records(1)), { now: NOW })
      assert.deepEqual(told, ['a', 'b'], 'b removed by a is still told; c added by a is not')
      await p.append(batchOf(records(1)), { now: NOW })
      assert.deepEqual(told, ['a', 'b', 'a', 'c'], 'the next emit tells the listeners as they are then')
    })

    test('reopen: data, log start offset and producer state survive a clean close', async () => {
      const storage = h.storage()
      const { m, p, topic } = await fresh({ segmentBytes: 300 }, storage)
      for (let i = 0; i < 8; i++) {
        await p.append(batchOf(records(1, `s${i}`), { producerId: 11, producerEpoch: 2, baseSequence: i }), {
          now: NOW,
        })
      }
      await p.deleteRecordsBefore(3)
      await m.close()
      const m2 = await manager(h.storage())
      await m2.createPartitions(topic, `id-${topic}`, 0, 1, { segmentBytes: 300 })
      const q = m2.partition(topic, 0)!
      assert.equal(q.logEndOffset, 8)
      assert.equal(q.logStartOffset, 3)
      const dup = await q.append(
        batchOf(records(1, 's7'), { producerId: 11, producerEpoch: 2, baseSequence: 7 }),
        { now: NOW },
      )
      assert.equal(dup.duplicate, true)
      assert.equal(dup.baseOffset, 7)
      const next = await q.append(
        batchOf(records(1), { producerId: 11, producerEpoch: 2, baseSequence: 8 }),
        { now: NOW },
      )
      assert.equal(next.baseOffset, 8)
      const gap = await q.append(
        batchOf(records(1), { producerId: 11, producerEpoch: 2, baseSequence: 10 }),
        { now: NOW },
      )
      assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
      assert.deepEqual(
        (await readAll(q, 3)).map((b) => b.values[0]),
        ['s3v0', 's4v0', 's5v0', 's6v0', 's7v0', 'v0'],
      )
      assert.deepEqual(await q.listOffsets(-3, 'read_uncommitted'), {
        errorCode: 0,
        offset: 3,
        timestamp: NOW,
        leaderEpoch: 0,
      })
    })

    test('a topic re-created under the same name with a new id starts empty', async () => {
      const storage = h.storage()
      const m = await manager(storage)
      await m.createPartitions('again', 'id-1', 0, 1)
      await m.partition('again', 0)!.append(batchOf(records(3)), { now: NOW })
      await m.deleteTopic('again')
      assert.equal(m.partition('again', 0), undefined)
      await m.createPartitions('again', 'id-2', 0, 2)
      assert.equal(m.partition('again', 0)!.logEndOffset, 0)
      assert.equal(m.partition('again', 1)!.logEndOffset, 0)
      await m.partition('again', 1)!.append(batchOf(records(3)), { now: NOW })
      await m.close()
      const m2 = await manager(h.storage())
      await m2.createPartitions('again', 'id-3', 0, 2)
      assert.equal(m2.partition('again', 1)!.logEndOffset, 0, 'data of another topic id is not served')
    })

    test('a deleted topic: listeners hear it, operations on a kept reference answer UNKNOWN_TOPIC_OR_PARTITION', async () => {
      const { m, p, topic } = await fresh()
      await p.append(batchOf(records(2)), { now: NOW })
      const events: string[] = []
      p.addListener((e) => events.push(e))
      await m.deleteTopic(topic)
      assert.deepEqual(events, ['deleted'])
      assert.equal(m.partition(topic, 0), undefined)
      assert.equal(
        (await p.append(batchOf(records(1)), { now: NOW })).errorCode,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      )
      assert.equal((await p.read(0, 100, RU)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    })

    test('topic changes run in call order: concurrent creates open each partition once', async () => {
      const m = await manager()
      const topic = `c${n++}`
      await Promise.all([
        m.createPartitions(topic, 'cid', 0, 2),
        m.createPartitions(topic, 'cid', 0, 3),
        m.createPartitions(topic, 'cid', 2, 4),
      ])
      const parts = [0, 1, 2, 3].map((i) => m.partition(topic, i)!)
      for (const p of parts) assert.equal((await p.append(batchOf(records(1)), { now: NOW })).baseOffset, 0)
      assert.equal(new Set(parts).size, 4)
    })

    test('transaction markers: the golden COMMIT marker is stored as written; epochs and coordinator epochs are checked', async () => {
      const { p } = await fresh()
      const txn = (seq: number, epoch = 5) =>
        batchOf(records(1), {
          producerId: 1000,
          producerEpoch: epoch,
          baseSequence: seq,
          transactional: true,
        })
      assert.equal((await p.append(txn(0), { now: NOW })).baseOffset, 0)
      assert.equal(p.producerStates()[0].currentTxnStartOffset, 0)
      // A client may not write a marker.
      assert.equal(
        (await p.append(markerOf(1000, 5, true, 0), { now: NOW })).errorCode,
        ErrorCode.INVALID_RECORD,
      )
      // Transaction version 2: the marker's epoch must be above the open transaction's.
      const same = await p.append(markerOf(1000, 5, true, 0), {
        now: NOW,
        origin: 'coordinator',
        transactionVersion: 2,
      })
      assert.equal(same.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH)
      const commit = await p.append(markerOf(1000, 5, true, 3), {
        now: NOW,
        origin: 'coordinator',
        transactionVersion: 0,
      })
      assert.equal(commit.errorCode, ErrorCode.NONE)
      assert.equal(commit.baseOffset, 1)
      const r = await p.read(1, 1000, RU)
      assert.equal(
        hex(r.records.subarray(21)),
        hex(markerOf(1000, 5, true, 3).subarray(21)),
        'stored as written but for the offset and leader epoch',
      )
      assert.deepEqual(p.producerStates(), [
        {
          producerId: 1000,
          producerEpoch: 5,
          lastSequence: 0,
          lastTimestamp: NOW,
          coordinatorEpoch: 3,
          currentTxnStartOffset: -1,
        },
      ])
      const zombie = await p.append(markerOf(1000, 5, false, 2), { now: NOW, origin: 'coordinator' })
      assert.equal(zombie.errorCode, ErrorCode.TRANSACTION_COORDINATOR_FENCED)
      const older = await p.append(markerOf(1000, 4, false, 3), { now: NOW, origin: 'coordinator' })
      assert.equal(older.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH)
      // Re-sent TV2 marker with no transaction open: accepted and written again.
      const again = await p.append(markerOf(1000, 5, true, 3), {
        now: NOW,
        origin: 'coordinator',
        transactionVersion: 2,
      })
      assert.equal(again.baseOffset, 2)
      // The producer's next transaction continues its sequence.
      assert.equal((await p.append(txn(1), { now: NOW })).baseOffset, 3)
    })

    for (const configs of [
      {},
      { messageTimestampType: 'LogAppendTime' },
      { cleanupPolicy: ['compact'] },
      { maxMessageBytes: 70 },
    ] as Partial<LogConfig>[]) {
      test(`transaction markers: appendMarker answers, stores and applies what append with origin coordinator does (${JSON.stringify(configs)})`, async () => {
        // The same script on two partitions: markers appended as bytes through the validating path
        // on one, as the coordinator's built marker on the other.
        const { p: viaAppend } = await fresh(configs)
        const { p: viaMarker } = await fresh(configs)
        const clock = NOW + 5
        const results: [unknown, unknown][] = []
        const txn = (pid: number, epoch: number, seq: number) =>
          batchOf(records(2, `p${pid}e${epoch}s${seq}`), {
            producerId: pid,
            producerEpoch: epoch,
            baseSequence: seq,
            transactional: true,
          })
        const steps: (
          | { data: Uint8Array }
          | { pid: number; epoch: number; committed: boolean; coordinatorEpoch: number; tv: number }
        )[] = [
          { data: txn(7, 0, 0) },
          { data: txn(8, 3, 0) },
          // TV2: the marker's epoch must be above the open transaction's.
          { pid: 7, epoch: 0, committed: true, coordinatorEpoch: 1, tv: 2 },
          { pid: 7, epoch: 1, committed: false, coordinatorEpoch: 1, tv: 2 },
          // Re-sent with nothing open: written again.
          { pid: 7, epoch: 1, committed: false, coordinatorEpoch: 1, tv: 2 },
          // A lower coordinator epoch is fenced, a lower producer epoch refused.
          { pid: 7, epoch: 2, committed: true, coordinatorEpoch: 0, tv: 2 },
          { pid: 8, epoch: 2, committed: true, coordinatorEpoch: 1, tv: 0 },
          // TV0/1: the data's own epoch.
          { pid: 8, epoch: 3, committed: true, coordinatorEpoch: 1, tv: 0 },
          { data: txn(7, 2, 0) },
          // A producer the partition never saw.
          { pid: 9, epoch: 0, committed: false, coordinatorEpoch: 1, tv: 2 },
          { pid: 7, epoch: 3, committed: false, coordinatorEpoch: 2, tv: 2 },
        ]
        for (const step of steps) {
          if ('data' in step) {
            results.push([
              await viaAppend.append(step.data.slice(), { now: clock }),
              await viaMarker.append(step.data.slice(), { now: clock }),
            ])
            continue
          }
          const built = txnMarker(
            {
              producerId: step.pid,
              producerEpoch: step.epoch,
              committed: step.committed,
              coordinatorEpoch: step.coordinatorEpoch,
              timestamp: clock,
            },
            crc32c,
          )
          const before = hex(built.bytes)
          results.push([
            await viaAppend.append(
              markerOf(step.pid, step.epoch, step.committed, step.coordinatorEpoch, clock),
              {
                now: clock,
                origin: 'coordinator',
                transactionVersion: step.tv,
              },
            ),
            await viaMarker.appendMarker(built, { now: clock, transactionVersion: step.tv }),
          ])
          assert.equal(hex(built.bytes), before, 'the built marker is left as it was')
        }
        for (const [i, [a, m]] of results.entries()) assert.deepEqual(m, a, `step ${i}`)
        if (configs.maxMessageBytes === undefined) {
          assert.ok(results.some(([a]) => (a as { errorCode: number }).errorCode === ErrorCode.NONE))
        }
        assert.equal(viaMarker.logEndOffset, viaAppend.logEndOffset)
        assert.equal(viaMarker.lastStableOffset, viaAppend.lastStableOffset)
        assert.deepEqual(viaMarker.producerStates(), viaAppend.producerStates())
        const RC = { minOneMessage: true, isolationLevel: 'read_committed' } as const
        const [a, m] = [await viaAppend.read(0, 1 << 20, RC), await viaMarker.read(0, 1 << 20, RC)]
        assert.equal(hex(m.records), hex(a.records))
        assert.deepEqual(m.abortedTransactions, a.abortedTransactions)
      })
    }

    test('transactions: the LSO holds read_committed back until the marker; aborted transactions are listed', async () => {
      const storage = h.storage()
      const { m, p, topic } = await fresh({}, storage)
      const RC = { minOneMessage: true, isolationLevel: 'read_committed' } as const
      const txn = (pid: number, seq: number) =>
        batchOf(records(2, `p${pid}s${seq}`), {
          producerId: pid,
          producerEpoch: 0,
          baseSequence: seq,
          transactional: true,
        })
      await p.append(batchOf(records(1, 'plain')), { now: NOW }) // 0
      await p.append(txn(1, 0), { now: NOW }) // 1-2, producer 1 opens at 1
      await p.append(txn(2, 0), { now: NOW }) // 3-4, producer 2 opens at 3
      assert.equal(p.lastStableOffset, 1)
      assert.equal(p.highWatermark, 5)
      assert.deepEqual(await p.listOffsets(-1, 'read_committed'), {
        errorCode: 0,
        offset: 1,
        timestamp: -1,
        leaderEpoch: 0,
      })
      const held = await p.read(0, 1 << 20, RC)
      assert.deepEqual(
        batchesIn(held.records).map((b) => b.baseOffset),
        [0],
      )
      assert.equal(held.lastStableOffset, 1)
      assert.deepEqual(held.abortedTransactions, [])
      assert.equal(p.bytesAvailable(1, 'read_committed'), 0)
      assert.equal(p.bytesAvailable(0, 'read_committed'), held.records.byteLength, 'up to the LSO')
      // Producer 1 aborts (marker at 5): the LSO moves to producer 2's first offset.
      assert.equal(
        (await p.append(markerOf(1, 0, false, 0), { now: NOW, origin: 'coordinator' })).baseOffset,
        5,
      )
      assert.equal(p.lastStableOffset, 3)
      const upToLso = (await p.read(0, 1 << 20, RC)).records.byteLength
      assert.equal(p.bytesAvailable(0, 'read_committed'), upToLso)
      assert.equal(p.bytesAvailable(2, 'read_committed'), upToLso - held.records.byteLength)
      assert.ok(p.bytesAvailable(0, 'read_uncommitted') > upToLso)
      // Producer 2 commits (marker at 6): nothing open, LSO = HW.
      assert.equal(
        (await p.append(markerOf(2, 0, true, 0), { now: NOW, origin: 'coordinator' })).baseOffset,
        6,
      )
      assert.equal(p.lastStableOffset, 7)
      const all = await p.read(0, 1 << 20, RC)
      assert.deepEqual(all.abortedTransactions, [{ producerId: 1, firstOffset: 1 }])
      assert.deepEqual(
        (await p.read(6, 1 << 20, RC)).abortedTransactions,
        [],
        'an abort marker before the fetch offset is not listed',
      )
      assert.equal((await p.read(0, 1 << 20, RU)).abortedTransactions, null)
      await m.close()
      const m2 = await manager(h.storage())
      await m2.createPartitions(topic, `id-${topic}`, 0, 1)
      const q = m2.partition(topic, 0)!
      assert.equal(q.lastStableOffset, 7)
      assert.deepEqual((await q.read(2, 1 << 20, RC)).abortedTransactions, [
        { producerId: 1, firstOffset: 1 },
      ])
      // An open transaction survives a restart and still holds the LSO.
      await q.append(txn(3, 0), { now: NOW }) // 7-8
      assert.equal(q.lastStableOffset, 7)
    })

    test('DescribeLogDirs: one entry per directory with every partition and its size', async () => {
      const { m, p } = await fresh()
      await p.append(batchOf(records(3)), { now: NOW })
      const dirs = await m.logDirs()
      assert.equal(dirs.length, 1)
      assert.equal(dirs[0].errorCode, 0)
      const mine = dirs[0].partitions.find((x) => x.topic === p.topic)
      assert.deepEqual(mine, { topic: p.topic, partition: 0, size: p.sizeInBytes })
    })

    test('compaction: the latest record per key survives, offsets and batch ranges are kept, the active segment is untouched', async () => {
      const { m, p } = await fresh({
        cleanupPolicy: ['compact'],
        segmentBytes: 400,
        minCleanableDirtyRatio: 0.01,
      })
      // 30 batches over keys a..e, values numbered by offset.
      for (let i = 0; i < 30; i++) {
        const key = 'abcde'[i % 5]
        await p.append(batchOf([{ key, value: `${key}${i}` }], { timestamp: NOW }), { now: NOW })
      }
      const activeBase = (await readAll(p, 0)).length
      await m.runCleaner(NOW)
      const after = await readAll(p, 0)
      const values = after.flatMap((b) => b.values)
      // Keys whose latest record sits in the cleaned range keep only that record; the active
      // segment keeps everything it had.
      const last = new Map<string, number>()
      for (let i = 0; i < 30; i++) last.set('abcde'[i % 5], i)
      assert.ok(values.length < 30, `cleaned: ${values.length} records left`)
      for (const [key, i] of last) assert.ok(values.includes(`${key}${i}`), `${key}${i} kept`)
      for (const b of after) {
        assert.equal(b.lastOffset - b.baseOffset, 0, 'a batch keeps its offset range')
        assert.equal(b.values[0], `${'abcde'[b.baseOffset % 5]}${b.baseOffset}`, 'offsets never change')
      }
      assert.ok(activeBase > 0)
      assert.equal(p.logEndOffset, 30)
      assert.equal((await p.append(batchOf([{ key: 'z' }]), { now: NOW })).baseOffset, 30)
      // Reading from a removed offset starts at the next surviving batch.
      const r = await p.read(0, 1 << 20, RU)
      assert.equal(r.errorCode, 0)
      assert.ok(batchesIn(r.records)[0].baseOffset >= 0)
    })

    test('compaction: segments left empty go, but the first; reads, ListOffsets and offsets as before; a reopen too', async () => {
      const configs: Partial<LogConfig> = {
        cleanupPolicy: ['compact'],
        // Two batches a segment.
        segmentBytes: 2 * batchOf([{ key: 'k0', value: 'v00' }]).byteLength,
        minCleanableDirtyRatio: 0.01,
      }
      const storage = h.storage()
      const { m, p, topic } = await fresh(configs, storage)
      // 30 batches over keys k0..k4, then two in a new active segment: of the cleaned range only
      // 25..29 survive, and the segments holding 2..23 have nothing left.
      const batch = (i: number) =>
        batchOf([{ key: `k${i % 5}`, value: `v${String(i).padStart(2, '0')}` }], { timestamp: NOW + i * 10 })
      for (let i = 0; i < 30; i++) await p.append(batch(i), { now: NOW })
      ;(p as PartitionLogImpl).roll(NOW)
      for (let i = 30; i < 32; i++) await p.append(batch(i), { now: NOW })
      const bases = (q: PartitionLog) => (q as PartitionLogImpl).store.segments().map((s) => s.baseOffset)
      assert.deepEqual(bases(p), [...Array.from({ length: 15 }, (_, i) => i * 2), 30])
      await m.runCleaner(NOW)
      const survivors = [25, 26, 27, 28, 29, 30, 31]
      const check = async (q: PartitionLog, label: string): Promise<void> => {
        assert.deepEqual(bases(q), [0, 24, 26, 28, 30], `${label}: segments`)
        assert.equal(q.logStartOffset, 0, label)
        assert.equal(q.logEndOffset, 32, label)
        assert.deepEqual(
          (await readAll(q, 0)).map((b) => [b.baseOffset, b.values[0]]),
          survivors.map((o) => [o, `v${o}`]),
          label,
        )
        // A fetch at any offset, a removed segment's too, starts at the next batch after it.
        for (let o = 0; o < 32; o++) {
          const r = await q.read(o, 1 << 20, RU)
          assert.equal(r.errorCode, 0)
          assert.equal(
            batchesIn(r.records)[0]?.baseOffset,
            survivors.find((s) => s >= o),
            `${label}: read ${o}`,
          )
        }
        const at = async (ts: number) => {
          const r = await q.listOffsets(ts, 'read_uncommitted')
          return [r.errorCode, r.offset, r.timestamp]
        }
        assert.deepEqual(await at(-2), [0, 0, -1], `${label}: earliest`)
        assert.deepEqual(await at(-1), [0, 32, -1], `${label}: latest`)
        assert.deepEqual(await at(-3), [0, 31, NOW + 310], `${label}: max timestamp`)
        assert.deepEqual(await at(NOW), [0, 25, NOW + 250], `${label}: by time`)
        assert.deepEqual(await at(NOW + 105), [0, 25, NOW + 250], `${label}: by time`)
        assert.deepEqual(await at(NOW + 265), [0, 27, NOW + 270], `${label}: by time`)
        assert.deepEqual(await at(NOW + 400), [0, -1, -1], `${label}: by time`)
      }
      await check(p, 'cleaned')
      await m.close()
      managers.splice(managers.indexOf(m), 1)
      const m2 = await manager(h.storage())
      await m2.createPartitions(topic, `id-${topic}`, 0, 1, configs)
      const q = m2.partition(topic, 0)!
      await check(q, 'reopened')
      assert.equal((await q.append(batch(32), { now: NOW })).baseOffset, 32)
    })

    test('compaction: a segment rolls by segment.ms only at an append stamped that long after its first batch, never by the clock; only then is it cleaned', async () => {
      const { m, p } = await fresh({
        segmentMs: 1000,
        cleanupPolicy: ['compact'],
        minCleanableDirtyRatio: 0.01,
      })
      // Ten updates of two keys, all stamped NOW, appended over a minute of the broker's clock.
      for (const [i, value] of ['a0', 'b1', 'a2', 'b3', 'a4', 'b5', 'a6', 'b7', 'a8', 'b9'].entries())
        await p.append(batchOf([{ key: value[0], value }], { timestamp: NOW }), { now: NOW + i * 6000 })
      // Stamped segment.ms after the first batch, not past it: the same segment, which stays
      // active however long the cleaner waits.
      await p.append(batchOf([{ key: 'a', value: 'a10' }], { timestamp: NOW + 1000 }), { now: NOW + 120_000 })
      await m.runCleaner(NOW + 240_000)
      const values = async (): Promise<string[]> => (await readAll(p, 0)).flatMap((b) => b.values)
      assert.equal((await values()).length, 11, 'the active segment is never cleaned')
      // Stamped past segment.ms: it rolls, and the segment rolled out is cleaned.
      await p.append(batchOf([{ key: 'b', value: 'b11' }], { timestamp: NOW + 1001 }), { now: NOW + 240_000 })
      await m.runCleaner(NOW + 240_000)
      assert.deepEqual(await values(), ['b9', 'a10', 'b11'])
    })

    test('compaction: tombstones stay for delete.retention.ms, then go; a producer keeps its last batch', async () => {
      const { m, p, topic } = await fresh(
        {
          cleanupPolicy: ['compact'],
          segmentBytes: 300,
          minCleanableDirtyRatio: 0.01,
          deleteRetentionMs: 1000,
        },
        h.storage(),
      )
      const idem = (
        key: string,
        value: string | null,
        producerId: number,
        baseSequence: number,
      ): Uint8Array =>
        batchOf([{ key, value }], { timestamp: NOW, producerId, producerEpoch: 0, baseSequence })
      await p.append(idem('x', 'x1', 5, 0), { now: NOW })
      await p.append(idem('x', null, 5, 1), { now: NOW })
      await p.append(idem('y', 'y1', 6, 0), { now: NOW })
      await p.append(idem('y', 'y2', 6, 1), { now: NOW })
      for (let i = 0; i < 12; i++)
        await p.append(batchOf([{ key: `f${i}`, value: 'filler' }], { timestamp: NOW }), { now: NOW })
      await m.runCleaner(NOW)
      let all = await readAll(p, 0)
      const x = all.filter((b) => b.baseOffset <= 1)
      assert.deepEqual(
        x.map((b) => [b.baseOffset, b.values]),
        [[1, ['<null>']]],
        'x1 is gone, the tombstone stays',
      )
      assert.deepEqual(
        all.filter((b) => b.baseOffset === 2 || b.baseOffset === 3).map((b) => [b.baseOffset, b.values]),
        [[3, ['y2']]],
      )
      // Past the horizon the tombstone goes, but producer 5's last batch stays (empty).
      await p.append(batchOf([{ key: 'g' }], { timestamp: NOW }), { now: NOW })
      await m.runCleaner(NOW + 5000)
      all = await readAll(p, 0)
      const one = all.find((b) => b.baseOffset === 1)
      assert.ok(one !== undefined, 'the batch holding producer 5 last sequence is kept')
      assert.deepEqual(one.values, [])
      await m.close()
      const m2 = await manager(h.storage())
      await m2.createPartitions(topic, `id-${topic}`, 0, 1, { cleanupPolicy: ['compact'] })
      const q = m2.partition(topic, 0)!
      const dup = await q.append(idem('x', null, 5, 1), { now: NOW })
      assert.equal(dup.errorCode, 0)
      assert.equal(dup.baseOffset, 1, 'still a duplicate after compaction and a restart')
    })

    test('compaction: a record of an aborted transaction never removes the committed record of its key', async () => {
      const { m, p } = await fresh({
        cleanupPolicy: ['compact'],
        segmentBytes: 300,
        minCleanableDirtyRatio: 0.01,
      })
      await p.append(batchOf([{ key: 'k', value: 'committed' }], { timestamp: NOW }), { now: NOW }) // 0
      await p.append(
        batchOf([{ key: 'k', value: 'aborted' }], {
          timestamp: NOW,
          producerId: 9,
          producerEpoch: 0,
          baseSequence: 0,
          transactional: true,
        }),
        { now: NOW },
      ) // 1
      await p.append(markerOf(9, 0, false, 0), { now: NOW, origin: 'coordinator' }) // 2: abort
      for (let i = 0; i < 10; i++)
        await p.append(batchOf([{ key: `f${i}` }], { timestamp: NOW }), { now: NOW })
      await m.runCleaner(NOW)
      const values = (await readAll(p, 0)).flatMap((b) => b.values)
      assert.ok(values.includes('committed'), 'the committed value of k survives')
    })

    test('compaction: aborted data goes; markers stay while their transaction has data, then get a horizon and go', async () => {
      const { m, p } = await fresh({
        cleanupPolicy: ['compact'],
        segmentBytes: 300,
        minCleanableDirtyRatio: 0.01,
        deleteRetentionMs: 1000,
      })
      const txn = (key: string, value: string, producerId: number, baseSequence: number) =>
        batchOf([{ key, value }], {
          timestamp: NOW,
          producerId,
          producerEpoch: 0,
          baseSequence,
          transactional: true,
        })
      const coordinator = { now: NOW, origin: 'coordinator' } as const
      await p.append(batchOf([{ key: 'k', value: 'committed' }], { timestamp: NOW }), { now: NOW }) // 0
      await p.append(txn('k', 'aborted-k', 9, 0), { now: NOW }) // 1
      await p.append(txn('a', 'aborted-a', 9, 1), { now: NOW }) // 2
      await p.append(markerOf(9, 0, false, 0), coordinator) // 3: ABORT
      await p.append(txn('c', 'c1', 10, 0), { now: NOW }) // 4
      await p.append(markerOf(10, 0, true, 0), coordinator) // 5: COMMIT
      await p.append(txn('z', 'z1', 9, 2), { now: NOW }) // 6
      await p.append(markerOf(9, 0, true, 0), coordinator) // 7: COMMIT
      await p.append(txn('c', 'c2', 10, 1), { now: NOW }) // 8
      await p.append(markerOf(10, 0, true, 0), coordinator) // 9: COMMIT
      const fill = async (from: number) => {
        for (let i = 0; i < 12; i++)
          await p.append(batchOf([{ key: `f${from + i}`, value: 'filler' }], { timestamp: NOW }), {
            now: NOW,
          })
      }
      await fill(0)
      /** baseOffset → [record count, delete horizon or null] of the batches up to offset 9. */
      const shape = async () => {
        const out = new Map<number, [number, number | null]>()
        let offset = 0
        while (offset < 10) {
          const r = await p.read(offset, 1 << 20, RU)
          const { positions } = splitBatches(r.records)
          for (const pos of positions) {
            const hh = readBatchHeader(r.records, pos)
            if (hh.baseOffset < 10)
              out.set(hh.baseOffset, [hh.recordsCount, hh.attributes & 0x40 ? hh.baseTimestamp : null])
            offset = hh.baseOffset + hh.lastOffsetDelta + 1
          }
        }
        return [...out]
      }
      // 1. The aborted batches go whatever their keys, and c1 (replaced by c2); the markers stay,
      // batches of their transactions having been seen in this clean.
      await m.runCleaner(NOW)
      assert.deepEqual(await shape(), [
        [0, [1, null]],
        [3, [1, null]],
        [5, [1, null]],
        [6, [1, null]],
        [7, [1, null]],
        [8, [1, null]],
        [9, [1, null]],
      ])
      // 2. No batch of the aborted transaction nor of producer 10's first one is left: their
      // markers get a delete horizon.
      await fill(100)
      await m.runCleaner(NOW + 10)
      assert.deepEqual(
        (await shape()).filter(([o]) => o === 3 || o === 5),
        [
          [3, [1, NOW + 1010]],
          [5, [1, NOW + 1010]],
        ],
      )
      // 3. Past the horizons both removable markers go; producer 10's last marker (9) and the
      // batches with data stay, and read_committed readers still see the committed values only.
      await fill(200)
      await m.runCleaner(NOW + 5000)
      assert.deepEqual(await shape(), [
        [0, [1, null]],
        [6, [1, null]],
        [7, [1, null]],
        [8, [1, null]],
        [9, [1, null]],
      ])
      const values = (await readAll(p, 0)).flatMap((b) => b.values)
      assert.ok(!values.includes('aborted-k') && !values.includes('aborted-a'))
      assert.ok(values.includes('committed') && values.includes('z1') && values.includes('c2'))
    })

    test('compaction: an aborted transaction leaves the index once none of its data is left', async () => {
      const configs = {
        cleanupPolicy: ['compact'],
        segmentBytes: 300,
        minCleanableDirtyRatio: 0.01,
        deleteRetentionMs: 1000,
      } satisfies Partial<LogConfig>
      const { m, p, topic } = await fresh(configs, h.storage())
      const RC = { minOneMessage: true, isolationLevel: 'read_committed' } as const
      const txn = (key: string, producerId: number, baseSequence: number) =>
        batchOf([{ key, value: `v-${producerId}-${baseSequence}` }], {
          timestamp: NOW,
          producerId,
          producerEpoch: 0,
          baseSequence,
          transactional: true,
        })
      const coordinator = { now: NOW, origin: 'coordinator' } as const
      // Each producer commits a transaction after its aborted one, so that no aborted batch is
      // its last (that one would stay, emptied, and keep its marker and entry, as in Kafka).
      await p.append(txn('k', 7, 0), { now: NOW }) // 0
      await p.append(txn('a', 7, 1), { now: NOW }) // 1
      await p.append(markerOf(7, 0, false, 0), coordinator) // 2: ABORT
      await p.append(txn('b', 8, 0), { now: NOW }) // 3
      await p.append(markerOf(8, 0, false, 0), coordinator) // 4: ABORT
      await p.append(txn('x', 7, 2), { now: NOW }) // 5
      await p.append(markerOf(7, 0, true, 0), coordinator) // 6: COMMIT
      await p.append(txn('y', 8, 1), { now: NOW }) // 7
      await p.append(markerOf(8, 0, true, 0), coordinator) // 8: COMMIT
      const fill = async (from: number) => {
        for (let i = 0; i < 12; i++)
          await p.append(batchOf([{ key: `f${from + i}`, value: 'filler' }], { timestamp: NOW }), {
            now: NOW,
          })
      }
      /** The aborted transactions read_committed reads list from offset 0 to the end, in order. */
      const index = async (q: PartitionLog) => {
        const seen = new Map<string, { producerId: number; firstOffset: number }>()
        let offset = 0
        while (offset < q.lastStableOffset) {
          const r = await q.read(offset, 1 << 20, RC)
          for (const a of r.abortedTransactions ?? []) seen.set(`${a.producerId}:${a.firstOffset}`, a)
          const batches = batchesIn(r.records)
          if (batches.length === 0) break
          offset = batches[batches.length - 1]!.lastOffset + 1
        }
        return [...seen.values()]
      }
      await fill(0)
      assert.deepEqual(await index(p), [
        { producerId: 7, firstOffset: 0 },
        { producerId: 8, firstOffset: 3 },
      ])
      // 1. The aborted batches go; their markers stay because their data was seen in this clean,
      // and so do their index entries (Kafka writes them into the cleaned index).
      await m.runCleaner(NOW)
      const values = (await readAll(p, 0)).flatMap((b) => b.values)
      assert.deepEqual(
        values.filter((v) => v.startsWith('v-')),
        ['v-7-2', 'v-8-1'],
        'the aborted records are gone',
      )
      assert.deepEqual(await index(p), [
        { producerId: 7, firstOffset: 0 },
        { producerId: 8, firstOffset: 3 },
      ])
      // 2. No data of either transaction is left: the markers become removable (a delete horizon)
      // and the index loses both entries.
      await fill(100)
      await m.runCleaner(NOW + 10)
      assert.deepEqual(await index(p), [])
      // 3. The cleaned index is what a reopened log serves.
      await m.close()
      const m2 = await manager(h.storage())
      await m2.createPartitions(topic, `id-${topic}`, 0, 1, configs)
      assert.deepEqual(await index(m2.partition(topic, 0)!), [])
    })

    test("compaction: an aborted batch holding the producer's last sequence stays, empty", async () => {
      const { m, p } = await fresh({
        cleanupPolicy: ['compact'],
        segmentBytes: 300,
        minCleanableDirtyRatio: 0.01,
      })
      await p.append(
        batchOf([{ key: 'k', value: 'aborted' }], {
          timestamp: NOW,
          producerId: 11,
          producerEpoch: 0,
          baseSequence: 0,
          transactional: true,
        }),
        { now: NOW },
      ) // 0
      await p.append(markerOf(11, 0, false, 0), { now: NOW, origin: 'coordinator' }) // 1
      for (let i = 0; i < 12; i++)
        await p.append(batchOf([{ key: `f${i}`, value: 'filler' }], { timestamp: NOW }), { now: NOW })
      await m.runCleaner(NOW)
      const all = await readAll(p, 0)
      assert.deepEqual(
        all.filter((b) => b.baseOffset === 0).map((b) => b.values),
        [[]],
        'the batch is kept without its record',
      )
    })

    test('compaction: the cleaner works in slices; an append made while it runs completes before it', async () => {
      const { m, p } = await fresh({
        cleanupPolicy: ['compact'],
        segmentBytes: 64 * 1024,
        minCleanableDirtyRatio: 0.01,
      })
      const big = Array.from({ length: 200 }, (_, i) => ({ key: `k${i % 50}`, value: 'x'.repeat(100) }))
      for (let i = 0; i < 60; i++) await p.append(batchOf(big, { timestamp: NOW }), { now: NOW })
      const order: string[] = []
      const cleaning = m.runCleaner(NOW).then(() => order.push('cleaned'))
      await new Promise((resolve) => setImmediate(resolve))
      const a = await p.append(batchOf(records(1), { timestamp: NOW }), { now: NOW })
      order.push('appended')
      await cleaning
      assert.equal(a.errorCode, 0)
      assert.deepEqual(order, ['appended', 'cleaned'])
      const stats = m.cleaner!.lastStats.at(-1)!
      assert.ok(stats.recordsRemoved > 0)
    })

    test('defaults: Kafka values', () => {
      assert.equal(DEFAULT_LOG_CONFIG.segmentBytes, 1073741824)
      assert.equal(DEFAULT_LOG_CONFIG.maxMessageBytes, 1048588)
      assert.equal(DEFAULT_LOG_CONFIG.retentionMs, 604800000)
    })
  })
}
