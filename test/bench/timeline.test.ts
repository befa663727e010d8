// A latency run's first seconds by bucket (bench/data/timeline.ts): what throughput.ts prints with
// BENCH_RUN_TRACE=1 to tell where the slow batches of a run's first second come from.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  bucketOf,
  classifyStalls,
  consumerBuckets,
  describeStalls,
  describeTimeline,
  serverBuckets,
} from '../../bench/data/timeline.js'

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

test('classifyStalls: what overlapped each stall, and the largest share as its cause', () => {
  // Buckets of 10 ms from 5000; the load's tick gap 3 ms in bucket 1, 9 ms in bucket 2; slow
  // batches sent 2 in bucket 1, 5 in bucket 3.
  const buckets = consumerBuckets([], [], [], 0, 10, 40, 10)
  buckets[1].tickGapMs = 3
  buckets[2].tickGapMs = 9
  buckets[1].slow = 2
  buckets[3].slow = 5
  const timeline = { startEpochMs: 5000, bucketMs: 10, measureFromMs: 0, buckets }
  const stalls = classifyStalls(
    [
      // 1: due at 5015, 10 ms late: interval 5010–5025, a scavenge of 8 ms inside it.
      { at: 5015, ms: 10, ranMs: 14, waitedMs: 0 },
      // 2: due at 5105, 12 ms late: interval 5100–5117, a writeSync of 9 ms, the thread asleep in it.
      { at: 5105, ms: 12, ranMs: 5, waitedMs: 1 },
      // 3: due at 5205, 20 ms late: interval 5200–5225, runnable and waiting 18 ms of it.
      { at: 5205, ms: 20, ranMs: 4, waitedMs: 18 },
      // 4: due at 5305, 8 ms late: interval 5300–5313, asleep outside any file call.
      { at: 5305, ms: 8, ranMs: 2, waitedMs: 0 },
      // 5: due at 5355, 7 ms late: interval 5350–5362, running its own work.
      { at: 5355, ms: 7, ranMs: 12, waitedMs: 0 },
    ],
    [
      { at: 5012, ms: 8, what: 'GC scavenge' },
      { at: 5380, ms: 2, what: 'GC mark-sweep-compact', flags: 'forced' },
    ],
    [{ kind: 'writeSync', bytes: 16384, from: 5104, to: 5113 }],
    [
      { kind: 'read ahead', bytes: 3 * 1048576, from: 5090, to: 5135 },
      { kind: 'fsync', bytes: 0, from: 5400, to: 5450 },
    ],
    timeline,
  )
  assert.deepEqual(
    stalls.map((s) => s.cause),
    ['GC', 'file call', 'no CPU', 'asleep', 'running'],
  )
  assert.deepEqual(stalls[0].gcs, ['scavenge 8.0'])
  assert.equal(stalls[0].gcMs, 8)
  assert.equal(stalls[0].loadTickGapMs, 9)
  assert.equal(stalls[0].slowAfter, 7)
  assert.equal(stalls[1].longestSync, 'writeSync 9.0 (16 KB)')
  assert.equal(stalls[1].asleepMs, 11)
  assert.deepEqual(stalls[1].inFlight, ['read ahead 45.0 ms (3.0 MiB) from -10.0'])
  assert.deepEqual(stalls[2].inFlight, [])
  const lines = describeStalls(stalls, 7.5, (ms) => ((ms - 5000) / 1000).toFixed(3))
  assert.equal(lines.length, 2 + 4)
  assert.match(
    lines[0],
    /stalls over 7\.5 ms: 4 by cause: no CPU 1 \(20\.0 ms late in all, longest 20\.0\), file call 1 .*, GC 1 .*, asleep 1 .*; with a read ahead in flight 1, an fsync 0, a Fetch read 0$/,
  )
  assert.match(
    lines[3],
    /^ {2}0\.105 \| 12\.0 \| file call \| 5\.0 \/ 1\.0 \/ 11\.0 of 17\.0 \| - \| 9\.0 \(writeSync 9\.0 \(16 KB\)\) \| read ahead/,
  )
})
