// The latency load's consumer side (bench/data/fetch-answers.ts) and its producers' CRC
// (bench/data/stamped-crc.ts): what the benchmark measures rests on them reading every batch and
// sending valid ones, so they are checked against the codec here.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { crc32c } from '@node-rs/crc32'
import fc from 'fast-check'
import { FetchAnswerReader, FetchPoll } from '../../bench/data/fetch-answers.js'
import { StampedCrc } from '../../bench/data/stamped-crc.js'
import { decodeRequest, encodeResponseFrame } from '../../src/protocol/frames.js'
import {
  createFetchResponse,
  createFetchResponseFetchableTopicResponse,
  createFetchResponsePartitionData,
} from '../../src/protocol/generated/messages/FetchResponse.js'
import { makeBatch } from '../helpers/data-plane.js'

const STAMP_KEY = 'STAMP###'

/** A batch of `records` records at `base`, whose first record's key holds `stamp`. */
function stampedBatch(base: number, records: number, stamp: number): { bytes: Buffer; stampAt: number } {
  const b = Buffer.from(
    makeBatch(
      Array.from({ length: records }, (_, i) => ({
        key: i === 0 ? STAMP_KEY : `k${i}`,
        value: 'v'.repeat(100 + i),
        timestamp: 1_700_000_000_000 + i,
      })),
    ),
  )
  const stampAt = b.indexOf(STAMP_KEY)
  b.writeDoubleLE(stamp, stampAt)
  b.writeUInt32BE(Math.floor(base / 2 ** 32), 0)
  b.writeUInt32BE(base >>> 0, 4)
  return { bytes: b, stampAt }
}

function answer(
  correlationId: number,
  records: Buffer | null,
  codes: { top?: number; partition?: number } = {},
): Buffer {
  return encodeResponseFrame(
    1,
    12,
    correlationId,
    createFetchResponse({
      errorCode: codes.top ?? 0,
      sessionId: 0,
      responses:
        codes.top !== undefined
          ? []
          : [
              createFetchResponseFetchableTopicResponse({
                topic: 'bench-topic',
                partitions: [
                  createFetchResponsePartitionData({
                    partitionIndex: 0,
                    errorCode: codes.partition ?? 0,
                    highWatermark: 10n,
                    lastStableOffset: 10n,
                    logStartOffset: 0n,
                    abortedTransactions: null,
                    records,
                  }),
                ],
              }),
            ],
    }),
  )
}

interface Seen {
  batches: [number, number, number][]
  ends: number[]
  starts: number
}

function reader(stampAt: number): { r: FetchAnswerReader; seen: Seen } {
  const seen: Seen = { batches: [], ends: [], starts: 0 }
  const r = new FetchAnswerReader(stampAt, {
    start: () => {
      seen.starts++
    },
    batch: (base, delta, stamp) => seen.batches.push([base, delta, stamp]),
    end: (code) => seen.ends.push(code),
  })
  return { r, seen }
}

test('FetchAnswerReader reports every batch of answers split anywhere, and their errors', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 5 }),
      fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 0, max: 2 ** 40 }),
      (perAnswer, cuts, firstBase) => {
        let base = firstBase
        let stampAt = 0
        const frames: Buffer[] = []
        const expected: Seen = { batches: [], ends: [], starts: 0 }
        perAnswer.forEach((n, a) => {
          const batches: Buffer[] = []
          for (let i = 0; i < n; i++) {
            const b = stampedBatch(base, 3, base * 1.5 + 0.25)
            stampAt = b.stampAt
            batches.push(b.bytes)
            expected.batches.push([base, 2, base * 1.5 + 0.25])
            base += 3
          }
          frames.push(answer(a, n === 0 ? null : Buffer.concat(batches)))
          expected.ends.push(0)
          expected.starts++
        })
        frames.push(answer(90, null, { partition: 1 }), answer(91, null, { top: 7 }))
        expected.ends.push(1, 7)
        expected.starts += 2
        if (stampAt === 0) stampAt = stampedBatch(0, 3, 0).stampAt
        const stream = Buffer.concat(frames)
        const { r, seen } = reader(stampAt)
        let at = 0
        for (let i = 0; at < stream.length; i++) {
          const n = cuts[i % cuts.length]
          r.push(stream.subarray(at, Math.min(stream.length, at + n)))
          at += n
        }
        assert.deepEqual(seen, expected)
      },
    ),
  )
})

test('FetchAnswerReader skips a batch cut at the end of the records', () => {
  const whole = stampedBatch(5, 2, 42)
  const cut = stampedBatch(7, 2, 43).bytes.subarray(0, 70)
  const { r, seen } = reader(whole.stampAt)
  r.push(answer(1, Buffer.concat([whole.bytes, cut])))
  assert.deepEqual(seen, { batches: [[5, 1, 42]], ends: [0], starts: 1 })
})

test('FetchPoll patches the correlation id and the offset of one encoded Fetch', () => {
  const poll = new FetchPoll('bench-topic', 3, 1 << 20, 500, 1)
  for (const [id, offset] of [
    [1, 0],
    [2, 2 ** 32 + 5],
    [2 ** 31 - 1, 2 ** 50 + 3],
  ]) {
    const f = poll.frame(id, offset)
    assert.equal(f.readInt32BE(0), f.length - 4)
    const { header, body } = decodeRequest(f.subarray(4)) as unknown as {
      header: { correlationId: number; requestApiKey: number; requestApiVersion: number }
      body: {
        maxWaitMs: number
        minBytes: number
        topics: { topic: string; partitions: { partition: number; fetchOffset: bigint }[] }[]
      }
    }
    assert.equal(header.requestApiKey, 1)
    assert.equal(header.requestApiVersion, 12)
    assert.equal(header.correlationId, id)
    assert.equal(body.maxWaitMs, 500)
    assert.equal(body.topics[0].topic, 'bench-topic')
    assert.equal(body.topics[0].partitions[0].partition, 3)
    assert.equal(body.topics[0].partitions[0].fetchOffset, BigInt(offset))
  }
})

test('StampedCrc gives the CRC-32C of the batch with any stamp', () => {
  const { bytes, stampAt } = stampedBatch(0, 16, 0)
  const covered = Buffer.from(bytes.subarray(21))
  const crc = new StampedCrc(covered, stampAt - 21)
  fc.assert(
    fc.property(fc.double({ noNaN: false }), (stamp) => {
      covered.writeDoubleLE(stamp, stampAt - 21)
      assert.equal(crc.of(covered, stampAt - 21), crc32c(covered) >>> 0)
    }),
  )
})
