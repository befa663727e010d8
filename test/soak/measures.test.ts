// The soak's fixed-size bookkeeping: the latency histogram picks the quantiles the sorted samples
// would, to within a bucket (2^(1/64)), and the per-producer counts answer what the maps of
// "p0:123" strings answered (lost, duplicated, not consumed). The load threads' minutes merge into
// the minute one thread would have counted with every member, and the groups and connections are
// shared out over the threads without loss.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  bunching,
  LatencyHistogram,
  LoopMonitor,
  type LoopMinute,
  mergeThreadMinutes,
  SeqCounts,
  SlowHeartbeats,
  SpeedRounds,
  speedProbeUs,
  splitLoad,
  type ThreadMinute,
  threadSchedstat,
} from '../../tools/soak/measures.js'

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

/** A seeded generator for the tests' samples. */
const lcg = (seed: number) => {
  let s = seed
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
}

test('LatencyHistogram: counts added from other threads give the quantiles of every sample', () => {
  const random = lcg(777)
  const all = new LatencyHistogram()
  const parts = [new LatencyHistogram(), new LatencyHistogram(), new LatencyHistogram()]
  const xs: number[] = []
  for (let i = 0; i < 30_000; i++) {
    // Each thread has its own spread: the merged tail is the slow thread's.
    const t = i % 3
    const x = (t === 2 ? 0.5 : 0.05) * Math.exp(6 * random() ** 3)
    xs.push(x)
    all.record(x)
    parts[t].record(x)
  }
  const merged = new LatencyHistogram()
  for (const h of parts) merged.addCounts(h.counts())
  assert.equal(merged.count, xs.length)
  for (const q of [0, 0.5, 0.9, 0.99, 0.999, 1]) {
    assert.equal(merged.quantile(q), all.quantile(q), `q ${q}`)
    const want = exact(xs, q)
    const got = merged.quantile(q)
    assert.ok(got / want <= BUCKET && want / got <= BUCKET, `q ${q}: ${got} against ${want}`)
  }
  // counts() is a copy: resetting the source leaves what was sent alone.
  const sent = parts[0].counts()
  parts[0].reset()
  assert.equal(
    sent.reduce((a, b) => a + b, 0),
    10_000,
  )
  assert.throws(() => merged.addCounts(new Uint32Array(3)), RangeError)
})

const loop = (over: Partial<LoopMinute>): LoopMinute => ({
  p99Ms: 1,
  maxMs: 5,
  gcMaxMs: 2,
  scavenges: 10,
  markCompacts: 0,
  heapAfterMarkCompactMb: Number.NaN,
  newSpaceMb: 16,
  cpuMs: 300,
  runWaitMs: 20,
  ...over,
})

const threadMinute = (
  samples: number[],
  sends: [number, number][],
  l: LoopMinute,
  k: number,
): ThreadMinute => {
  const latency = new LatencyHistogram()
  const handled = new LatencyHistogram()
  const ceiling = new LatencyHistogram()
  const firstInMs = new LatencyHistogram()
  const laterInMs = new LatencyHistogram()
  const changed = new LatencyHistogram()
  samples.forEach((x, i) => {
    latency.record(x)
    handled.record(x + 0.1)
    ceiling.record(x / 2)
    ;(i % 2 === 0 ? firstInMs : laterInMs).record(x)
    if (x >= 8) changed.record(x)
  })
  return {
    heartbeats: samples.length,
    fenced: k,
    fencedInFlight: 2 * k,
    fencedAfterGap: 0,
    topologyFenced: 1,
    retriable: 3,
    otherErrors: 0,
    joins: 10 * k,
    leaves: k,
    pushesOk: 5,
    pushesFailed: k,
    intervalsMoved: 4 * k,
    steadySends: 20 * k,
    earlyTimers: 15 * k,
    phaseCreepUs: -7 * k,
    ceilingHeartbeats: samples.length,
    ceilingFailures: k,
    sendsMs1: 100 * k,
    sendsMs2: 10 * k,
    sendsMs3: 3 * k,
    sendsMs4Plus: k,
    latency: latency.counts(),
    handled: handled.counts(),
    ceiling: ceiling.counts(),
    firstInMs: firstInMs.counts(),
    laterInMs: laterInMs.counts(),
    changed: changed.counts(),
    sendBuckets: sends,
    loop: l,
  }
}

test('mergeThreadMinutes: counts added, histograms merged, sends by bucket, the worst loop', () => {
  const a = threadMinute(
    [1, 1, 1, 2],
    [
      [100, 3],
      [101, 1],
    ],
    loop({ p99Ms: 2.5, maxMs: 40, gcMaxMs: 3, markCompacts: 1, heapAfterMarkCompactMb: 20 }),
    1,
  )
  const b = threadMinute(
    [4, 8, 16],
    [
      [101, 2],
      [250, 1],
    ],
    loop({ p99Ms: 6, maxMs: 12, gcMaxMs: 9, scavenges: 4, newSpaceMb: 32, cpuMs: 500, runWaitMs: 45 }),
    2,
  )
  const c = threadMinute([], [], loop({ markCompacts: 2, heapAfterMarkCompactMb: 15 }), 0)
  const m = mergeThreadMinutes([a, b, c])
  assert.equal(m.heartbeats, 7)
  assert.equal(m.fenced, 3)
  assert.equal(m.fencedInFlight, 6)
  assert.equal(m.topologyFenced, 3)
  assert.equal(m.retriable, 9)
  assert.equal(m.joins, 30)
  assert.equal(m.leaves, 3)
  assert.equal(m.pushesOk, 15)
  assert.equal(m.pushesFailed, 3)
  assert.equal(m.intervalsMoved, 12)
  assert.equal(m.phaseCreepUs, -21)
  assert.deepEqual([m.sendsMs1, m.sendsMs2, m.sendsMs3, m.sendsMs4Plus], [300, 30, 9, 3])
  assert.equal(m.latency.count, 7)
  assert.equal(m.handled.count, 7)
  // The ceiling's latencies merge as the members' do: half of each, so its highest is 8.
  assert.equal(m.ceilingHeartbeats, 7)
  assert.equal(m.ceilingFailures, 3)
  assert.equal(m.ceiling.count, 7)
  assert.ok(Math.abs(m.ceiling.quantile(1) - 8) / 8 < BUCKET - 1)
  // Split by place in the ms: a's 1 and 1 and b's 4 and 16 first, a's 1 and 2 and b's 8 after others.
  assert.equal(m.firstInMs.count, 4)
  assert.equal(m.laterInMs.count, 3)
  assert.ok(Math.abs(m.firstInMs.quantile(1) - 16) / 16 < BUCKET - 1)
  assert.ok(Math.abs(m.laterInMs.quantile(1) - 8) / 8 < BUCKET - 1)
  // The heartbeats that changed state (here those of 8 ms and more): b's 8 and 16.
  assert.equal(m.changed.count, 2)
  assert.ok(Math.abs(m.changed.quantile(0) - 8) / 8 < BUCKET - 1)
  // Rank ⌊7 · 0.5⌋ = 3 of 1, 1, 1, 2, 4, 8, 16 is 2; the highest is 16.
  assert.ok(Math.abs(m.latency.quantile(0.5) - 2) / 2 < BUCKET - 1)
  assert.ok(Math.abs(m.latency.quantile(1) - 16) / 16 < BUCKET - 1)
  assert.deepEqual(
    [...m.sendBuckets].sort((x, y) => x[0] - y[0]),
    [
      [100, 3],
      [101, 3],
      [250, 1],
    ],
  )
  // The worst thread's delay and GC pause; the collections and the heaps of every thread added up.
  assert.equal(m.loop.p99Ms, 6)
  assert.equal(m.loop.maxMs, 40)
  assert.equal(m.loop.gcMaxMs, 9)
  assert.equal(m.loop.scavenges, 24)
  assert.equal(m.loop.markCompacts, 3)
  assert.equal(m.loop.heapAfterMarkCompactMb, 35)
  assert.equal(m.loop.newSpaceMb, 32)
  // The threads' CPU and their waits for a core, added up.
  assert.equal(m.loop.cpuMs, 1100)
  assert.equal(m.loop.runWaitMs, 85)
  // No thread: nothing counted, no loop to report.
  const none = mergeThreadMinutes([])
  assert.equal(none.heartbeats, 0)
  assert.ok(Number.isNaN(none.loop.p99Ms))
  assert.ok(Number.isNaN(none.loop.heapAfterMarkCompactMb))
  assert.ok(Number.isNaN(none.latency.quantile(0.99)))
})

test('bunching: the busiest 100 ms and the busiest tenth of the minute, over every thread', () => {
  // A minute of 60 s has 600 buckets, its busiest tenth 60. 600 sends, even: 10 %.
  const even = new Map<number, number>()
  for (let i = 0; i < 600; i++) even.set(i, 1)
  assert.deepEqual(bunching(even, 60_000), { max100ms: 1, topTenthShare: 0.1 })
  // Two threads that send in the same buckets bunch as one load: the merged minute shows it.
  const t0: [number, number][] = Array.from({ length: 60 }, (_, i) => [i, 5])
  const t1: [number, number][] = [...Array.from({ length: 60 }, (_, i) => [i, 5] as [number, number])]
  for (let i = 60; i < 600; i++) t1.push([i, 1])
  const merged = mergeThreadMinutes([
    threadMinute([], t0, loop({}), 0),
    threadMinute([], t1, loop({}), 0),
  ]).sendBuckets
  const b = bunching(merged, 60_000)
  assert.equal(b.max100ms, 10)
  // 600 of the 1,140 sends in the busiest 60 buckets.
  assert.equal(b.topTenthShare, 600 / 1140)
  // Buckets without a send count as empty ones: a minute of one busy bucket is all in its tenth.
  assert.deepEqual(bunching(new Map([[7, 4]]), 60_000), { max100ms: 4, topTenthShare: 1 })
  const empty = bunching(new Map(), 60_000)
  assert.ok(Number.isNaN(empty.max100ms) && Number.isNaN(empty.topTenthShare))
})

test('splitLoad: every group on one thread, the connections shared out, at least one a thread', () => {
  for (const [groups, connections, threads] of [
    [1000, 4, 4],
    [1000, 4, 1],
    [100, 4, 3],
    [20, 2, 2],
    [7, 1, 5],
    [5, 10, 5],
  ]) {
    const plan = splitLoad(groups, connections, threads)
    assert.equal(plan.length, threads)
    const seen = plan.flatMap((t) => t.groups).sort((x, y) => x - y)
    assert.deepEqual(
      seen,
      Array.from({ length: groups }, (_, g) => g),
    )
    plan.forEach((t, i) => {
      for (const g of t.groups) assert.equal(g % threads, i)
      assert.ok(t.connections >= 1)
    })
    const total = plan.reduce((a, t) => a + t.connections, 0)
    assert.equal(total, Math.max(connections, threads), `${groups} ${connections} ${threads}`)
  }
  assert.deepEqual(
    splitLoad(10, 4, 4).map((t) => t.connections),
    [1, 1, 1, 1],
  )
  assert.deepEqual(
    splitLoad(10, 5, 2).map((t) => t.connections),
    [3, 2],
  )
  assert.throws(() => splitLoad(3, 4, 4), RangeError)
  assert.throws(() => splitLoad(3, 4, 0), RangeError)
})

test('threadSchedstat: the CPU of this thread grows with its work, its wait never shrinks', (t) => {
  const before = threadSchedstat()
  if (before === undefined) {
    t.skip('no /proc/thread-self/schedstat here')
    return
  }
  // The kernel adds up a running thread's time at its scheduler ticks: 50 ms of spinning holds
  // some, however much of it the thread waited for a core.
  const spinUntil = performance.now() + 50
  while (performance.now() < spinUntil) {}
  const after = threadSchedstat() as { cpuMs: number; waitMs: number }
  assert.ok(after.cpuMs > before.cpuMs, `${after.cpuMs - before.cpuMs} ms`)
  assert.ok(after.waitMs >= before.waitMs)
})

test('speedProbeUs: the fixed work takes time, more for more work', () => {
  speedProbeUs()
  const small = Math.min(...Array.from({ length: 5 }, () => speedProbeUs(100_000)))
  const large = Math.min(speedProbeUs(2_000_000), speedProbeUs(2_000_000), speedProbeUs(2_000_000))
  assert.ok(small > 0, `${small} µs`)
  assert.ok(large > 5 * small, `${large} µs for 20 times the work of ${small} µs`)
})

test('SpeedRounds: the rounds since the last take, the median fastest at most the 90th percentile', () => {
  const rounds = new SpeedRounds()
  const none = rounds.take()
  assert.equal(none.rounds, 0)
  assert.ok(Number.isNaN(none.fastestUs) && Number.isNaN(none.p90Us))
  for (let i = 0; i < 5; i++) rounds.round()
  const five = rounds.take()
  assert.equal(five.rounds, 5)
  assert.ok(five.fastestUs > 0)
  assert.ok(five.p90Us >= five.fastestUs, `${five.p90Us} against ${five.fastestUs}`)
  rounds.round()
  assert.equal(rounds.take().rounds, 1)
})

test('LoopMonitor: a minute has the CPU of the thread and its wait for a core', (t) => {
  const monitor = new LoopMonitor()
  try {
    const spinUntil = performance.now() + 50
    while (performance.now() < spinUntil) {}
    const minute = monitor.take()
    if (threadSchedstat() === undefined) {
      assert.ok(Number.isNaN(minute.cpuMs))
      t.skip('no /proc/thread-self/schedstat here')
      return
    }
    assert.ok(minute.cpuMs > 0, `${minute.cpuMs} ms`)
    assert.ok(minute.runWaitMs >= 0)
  } finally {
    monitor.stop()
  }
})

test('SlowHeartbeats: the heartbeats at or above the bound, with their wall-clock send times', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'soak-slow-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'slow.jsonl')
  const slow = new SlowHeartbeats(file, 0.4)
  slow.note(1000, 0.39, false)
  slow.note(1000.5, 0.4, false)
  slow.note(2000, 1.25, true)
  slow.flush()
  slow.note(3000, 0.2, true)
  slow.flush()
  const lines = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  assert.deepEqual(
    lines.map((l) => [l.ms, l.c]),
    [
      [0.4, undefined],
      [1.25, 1],
    ],
  )
  assert.ok(Math.abs(lines[0].at - (performance.timeOrigin + 1000.5)) < 0.01)
  // Without a file nothing is kept or written.
  const none = new SlowHeartbeats(undefined, 0)
  none.note(1, 5, false)
  none.flush()
})
