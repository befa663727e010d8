// A latency run's first seconds by bucket (bench/data/timeline.ts): what throughput.ts prints with
// BENCH_RUN_TRACE=1 to tell where the slow batches of a run's first second come from.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bucketOf, consumerBuckets, describeTimeline, serverBuckets } from '../../bench/data/timeline.js'

test('bucketOf: from the start, by bucket, -1 outside', () => {
  assert.equal(bucketOf(1000, 1000, 50, 4), 0)
  assert.equal(bucketOf(1049.9, 1000, 50, 4), 0)
  assert.equal(bucketOf(1050, 1000, 50, 4), 1)
  assert.equal(bucketOf(1199.9, 1000, 50, 4), 3)
  assert.equal(bucketOf(1200, 1000, 50, 4), -1)
  assert.equal(bucketOf(999, 1000, 50, 4), -1)
})

test('consumerBuckets: sends, the worst latency, slow batches, the lag at each end and the answers', () => {
  // Batches sent at 0, 10, 20 (read together at 70), 60 (read at 75) and 110 (read at 112), ms
  // from the start at 1000; buckets of 50 ms, 3 of them.
  const at = (ms: number) => 1000 + ms
  const stamps = [0, 10, 20, 60, 110].map(at)
  const complete = [70, 70, 70, 75, 112].map(at)
  const answers = [
    { at: at(70), batches: 3 },
    { at: at(75), batches: 1 },
    { at: at(112), batches: 1 },
  ]
  const b = consumerBuckets(stamps, complete, answers, 1000, 50, 3, 10)
  assert.deepEqual(
    b.map((x) => [x.sent, x.worstMs, x.slow, x.lagEnd, x.answers, x.answerMaxBatches]),
    [
      [3, 70, 3, 3, 0, 0],
      [1, 15, 1, 0, 2, 3],
      [1, 2, 0, 0, 1, 1],
    ],
  )
})

test('consumerBuckets: batches outside the buckets are not counted, but a later one is lag', () => {
  // One batch sent before the start (not counted, not lag), one in bucket 0 read after the last bucket.
  const b = consumerBuckets([990, 1010], [995, 1300], [], 1000, 50, 2, 10)
  assert.deepEqual(
    b.map((x) => [x.sent, x.lagEnd]),
    [
      [1, 1],
      [0, 1],
    ],
  )
})

test('serverBuckets: the longest loop delay, collections and threadpool calls placed by their start', () => {
  const timeline = {
    startEpochMs: 5000,
    bucketMs: 10,
    measureFromMs: 10,
    buckets: consumerBuckets([], [], [], 0, 10, 2, 10),
  }
  const s = serverBuckets(
    timeline,
    [
      { at: 5001, ms: 3 },
      { at: 5002, ms: 7 },
      { at: 5030, ms: 99 },
    ],
    [{ at: 5012, ms: 4.25, what: 'GC scavenge' }],
    [
      { kind: 'fsync', from: 5011, to: 5061 },
      { kind: 'read', from: 5013, to: 5014 },
      { kind: 'read', from: 5015, to: 5018 },
    ],
  )
  assert.equal(s[0].loopDelayMs, 7)
  assert.deepEqual(s[0].gcs, [])
  assert.equal(s[1].loopDelayMs, 0)
  assert.deepEqual(s[1].gcs, ['scavenge 4.3'])
  assert.deepEqual(Object.fromEntries(s[1].calls), {
    fsync: { n: 1, longest: 50 },
    read: { n: 2, longest: 3 },
  })
  const lines = describeTimeline(timeline, s)
  assert.equal(lines.length, 3)
  assert.match(lines[1], /^ {3} {4}0 \|/)
  assert.match(lines[2], /^ {2}\* {3}10 \|.*\|\| 0\.0 \| scavenge 4\.3 \| fsync 1\/50, read 2\/3$/)
})
