// The soak's fixed-size bookkeeping: the latency histogram picks the quantiles the sorted samples
// would, to within a bucket (2^(1/64)), and the per-producer counts answer what the maps of
// "p0:123" strings answered (lost, duplicated, not consumed).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LatencyHistogram, SeqCounts } from '../../tools/soak/measures.js'

const BUCKET = 2 ** (1 / 64)

/** The sample at rank ⌊n·q⌋ of the sorted samples, as the soak's rows used to pick it. */
const exact = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]
}

test('LatencyHistogram: quantiles within a bucket of the sorted samples', () => {
  let s = 12345
  const random = () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
  const h = new LatencyHistogram()
  const xs: number[] = []
  for (let i = 0; i < 20_000; i++) {
    // 0.05 ms to ~ 200 ms, heavy-tailed, as heartbeat latencies are.
    const x = 0.05 * Math.exp(8 * random() ** 3)
    xs.push(x)
    h.record(x)
  }
  assert.equal(h.count, xs.length)
  for (const q of [0, 0.1, 0.5, 0.9, 0.99, 0.999, 1]) {
    const want = exact(xs, q)
    const got = h.quantile(q)
    assert.ok(got / want <= BUCKET && want / got <= BUCKET, `q ${q}: ${got} against ${want}`)
  }
})

test('LatencyHistogram: the quantile moves with the tail, and reset empties it', () => {
  const h = new LatencyHistogram()
  assert.ok(Number.isNaN(h.quantile(0.99)))
  for (let i = 0; i < 990; i++) h.record(1)
  for (let i = 0; i < 10; i++) h.record(50)
  // Rank 990 of 1,000 is the first of the ten slow ones.
  assert.ok(Math.abs(h.quantile(0.99) - 50) / 50 < BUCKET - 1)
  assert.ok(Math.abs(h.quantile(0.5) - 1) < BUCKET - 1)
  h.reset()
  assert.equal(h.count, 0)
  assert.ok(Number.isNaN(h.quantile(0.5)))
  // Below 1 µs and beyond the last bucket: counted, in the first and last buckets.
  h.record(0)
  h.record(1e9)
  assert.ok(h.quantile(0) < 0.0011)
  assert.ok(h.quantile(1) > 100_000)
})

test('SeqCounts: lost, duplicated and not consumed, as the maps of keys answered', () => {
  const acked = new SeqCounts()
  const inLog = new SeqCounts()
  const consumed = new SeqCounts()
  // Producer 0 acked 0..4999 (grows past its first 1,024), producer 3 acked 0..9.
  for (let seq = 0; seq < 5000; seq++) acked.add(0, seq)
  for (let seq = 0; seq < 10; seq++) acked.add(3, seq)
  assert.equal(acked.size, 5010)
  // The log has every record once but 4321 of producer 0, and 7 of producer 3 twice.
  for (let seq = 0; seq < 5000; seq++) if (seq !== 4321) inLog.addRecord('p0', String(seq))
  for (let seq = 0; seq < 10; seq++) inLog.addRecord('p3', String(seq))
  inLog.addRecord('p3', '7')
  assert.equal(acked.missingFrom(inLog), 1)
  assert.equal(inLog.extra(), 1)
  // The consumers read producer 0's first 100 twice and never saw producer 3's.
  for (let seq = 0; seq < 5000; seq++) consumed.add(0, seq)
  for (let seq = 0; seq < 100; seq++) consumed.add(0, seq)
  assert.equal(acked.missingFrom(consumed), 10)
  assert.equal(consumed.extra(), 100)
  assert.equal(consumed.get(3, 0), 0)
  assert.equal(consumed.get(0, 99), 2)
  // Records that are not the soak's are refused, not counted.
  assert.equal(consumed.addRecord(null, '1'), false)
  assert.equal(consumed.addRecord('x1', '1'), false)
  assert.equal(consumed.addRecord('p1', 'abc'), false)
  assert.equal(consumed.size, 5000)
})
