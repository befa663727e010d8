// The latency runs' clock watch (bench/data/clock-gaps.ts): its gaps from the watch's messages, the
// server's and the load's stalls as spans on the shared clock, the overlaps, and the run's line.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  type ClockGapMessage,
  describeClockWatch,
  describeHeldAcross,
  heldAcross,
  loadStallSpans,
  schedulingOf,
  serverStallSpans,
  watchGaps,
} from '../../bench/data/clock-gaps.js'
import { emptyBucket, type LoadTimeline } from '../../bench/data/timeline.js'

/** A /proc/<pid>/stat line with the given nice, real-time priority and policy. */
function stat(nice: number, rt: number, policy: number): string {
  const f = Array.from({ length: 50 }, (_, i) => String(i + 1))
  f[18] = String(nice)
  f[39] = String(rt)
  f[40] = String(policy)
  return `4242 (node (a) b) ${f.slice(2).join(' ')}`
}

test("schedulingOf reads the policy, the real-time priority and the nice of a process's stat", () => {
  assert.equal(schedulingOf(stat(0, 50, 1)), 'SCHED_FIFO 50')
  assert.equal(schedulingOf(stat(0, 10, 2)), 'SCHED_RR 10')
  assert.equal(schedulingOf(stat(-10, 0, 0)), 'nice -10')
  assert.equal(schedulingOf(stat(5, 0, 3)), 'policy 3, nice 5')
})

const gap = (
  atMono: number,
  ms: number,
  waitedMs: number,
  kind: 'gap' | 'wait' = 'gap',
): ClockGapMessage => ({
  type: 'gap',
  kind,
  atMono,
  ms,
  waitedMs,
})

test('watchGaps: the gaps of the run, each from when its tick was due, late by the time past the tick', () => {
  const messages = [gap(900, 40, 0), gap(1100, 30, 1), gap(1500, 25, 14, 'wait'), gap(2001, 20, 0)]
  assert.deepEqual(watchGaps(messages, 1000, 2000), [
    // Ticks at 1070 and 1100: due at 1080, 20 ms late.
    { dueMono: 1080, lateMs: 20, waitedMs: 1, held: true },
    { dueMono: 1485, lateMs: 15, waitedMs: 14, held: false },
  ])
  assert.deepEqual(watchGaps(messages, 2100, 3000), [])
})

test('serverStallSpans: the loop stalls over 5 ms, the spans they were late, moved onto the shared clock', () => {
  const stalls = [
    { at: 10_000, ms: 4.9, ranMs: 0, waitedMs: 0 },
    { at: 10_100, ms: 22, ranMs: 20, waitedMs: 0 },
  ]
  assert.deepEqual(serverStallSpans(stalls, -9000), [{ from: 1100, to: 1122 }])
})

function timeline(gaps: number[]): LoadTimeline {
  return {
    startEpochMs: 0,
    bucketMs: 50,
    measureFromMs: 100,
    buckets: gaps.map((g) => ({ ...emptyBucket(), tickGapMs: g })),
  }
}

test("loadStallSpans: the load's tick gaps over 5 ms past its 1 ms tick, from the gap's length before the bucket to its end", () => {
  // Bucket 1's gap of 6 ms is 5 past the tick: not over. Bucket 2's 30 ms gap ended in 1100–1150.
  assert.deepEqual(loadStallSpans(timeline([2, 6, 30, 1.5]), 1000), [{ from: 1071, to: 1150 }])
  assert.deepEqual(loadStallSpans(timeline([]), 1000), [])
})

test('describeClockWatch: no gaps', () => {
  assert.equal(
    describeClockWatch({
      scheduling: 'SCHED_FIFO 50',
      ticks: 612,
      cpuMs: 41.4,
      gaps: [],
      measuredFromMono: 0,
    }),
    'clock watch (SCHED_FIFO 50, a tick every 10 ms): 612 ticks, its CPU 41 ms; gaps over 5 ms: none',
  )
})

test("describeClockWatch: the gaps from the measured part's start, the held ones, and their overlaps", () => {
  const gaps = [
    { dueMono: 1500, lateMs: 40, waitedMs: 0.5, held: true },
    { dueMono: 2500, lateMs: 8, waitedMs: 7, held: false },
    { dueMono: 4000, lateMs: 12, waitedMs: 0, held: true },
  ]
  const o = { scheduling: 'nice -10', ticks: 600, cpuMs: 40, gaps, measuredFromMono: 2000 }
  assert.equal(
    describeClockWatch(o),
    "clock watch (nice -10, a tick every 10 ms): 600 ticks, its CPU 40 ms; gaps over 5 ms: 3, longest 40.0 ms, at -0.50 s (40.0 ms, held), 0.50 s (8.0 ms, waited 7.0 ms for a core), 2.00 s (12.0 ms, held) from the measured part's start; the whole process held (not waiting for a core) in 2; overlaps with the run trace only (BENCH_RUN_TRACE=1)",
  )
  // The first gap (1500–1540) overlaps a server stall and a load gap; the second (2500–2508) a
  // load gap only; the third (4000–4012) a server stall that ended as it began: none.
  const line = describeClockWatch({
    ...o,
    stalls: {
      server: [
        { from: 1530, to: 1560 },
        { from: 3990, to: 4000 },
      ],
      load: [
        { from: 1400, to: 1510 },
        { from: 2507, to: 2550 },
      ],
    },
  })
  assert.match(
    line,
    /; overlapping the server's loop stalls over 5 ms 1, the load's tick gaps over 5 ms 2, either 2 \(held 1\)$/,
  )
})

test('describeClockWatch: at most eight gaps listed, the rest counted', () => {
  const gaps = Array.from({ length: 11 }, (_, i) => ({
    dueMono: i * 1000,
    lateMs: 6 + i,
    waitedMs: 0,
    held: true,
  }))
  const line = describeClockWatch({
    scheduling: 'SCHED_FIFO 50',
    ticks: 600,
    cpuMs: 40,
    gaps,
    measuredFromMono: 0,
  })
  assert.match(
    line,
    /gaps over 5 ms: 11, longest 16\.0 ms, at 0\.00 s .* 7\.00 s \(13\.0 ms, held\), 3 more from/,
  )
})

test('describeClockWatch: a pinned watch names its CPU', () => {
  assert.match(
    describeClockWatch({
      scheduling: 'SCHED_FIFO 50',
      cpu: 1,
      ticks: 600,
      cpuMs: 40,
      gaps: [],
      measuredFromMono: 0,
    }),
    /^clock watch on CPU 1 \(SCHED_FIFO 50, a tick every 10 ms\): 600 ticks/,
  )
})

const late = (dueMono: number, lateMs: number, held = true) => ({
  dueMono,
  lateMs,
  waitedMs: held ? 0 : lateMs,
  held,
})

test('heldAcross: the spans all watches were held at once, and the held gaps while the others ticked', () => {
  const cpu0 = [late(1000, 11), late(2000, 8), late(3000, 6), late(4000, 9, false)]
  const cpu1 = [late(1005, 10), late(2003, 7, false), late(4002, 6)]
  const { together, alone } = heldAcross([cpu0, cpu1])
  // 1000–1011 and 1005–1015 overlap in 1005–1011; CPU 0's gap at 2000 overlaps CPU 1's wait (not
  // held: not together, and not alone either); CPU 0's at 3000 overlaps nothing of CPU 1; CPU 1's
  // at 4002 overlaps CPU 0's wait at 4000–4009.
  assert.deepEqual(together, [{ from: 1005, to: 1011 }])
  assert.deepEqual(alone, [1, 0])
  // Gaps that only touch (one ends as the other begins) are not at once.
  assert.deepEqual(heldAcross([[late(0, 10)], [late(10, 10)]]), { together: [], alone: [1, 1] })
  // One watch: nothing is "at once", and every held gap is alone.
  assert.deepEqual(heldAcross([cpu0]), { together: [], alone: [3] })
})

test('describeHeldAcross: the held gaps of each CPU and the spans of all held at once', () => {
  const cpu0 = [late(1000, 11), late(3000, 6)]
  const cpu1 = [late(1005, 10)]
  assert.equal(
    describeHeldAcross({ cpus: [0, 1], gaps: [cpu0, cpu1], measuredFromMono: 500 }),
    "clock watches on CPUs 0, 1: held gaps CPU 0 2 (1 while the others ticked), CPU 1 1 (0 while the others ticked); all held at once: 1, longest 6.0 ms, at 0.51 s (6.0 ms) from the measured part's start",
  )
  assert.equal(
    describeHeldAcross({ cpus: [0, 1], gaps: [[late(3000, 6)], []], measuredFromMono: 0 }),
    'clock watches on CPUs 0, 1: held gaps CPU 0 1 (1 while the others ticked), CPU 1 0 (0 while the others ticked); all held at once: never',
  )
})
