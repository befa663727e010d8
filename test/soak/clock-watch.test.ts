// The soak's clock watch (tools/soak/clock-watch.ts): steps of the wall clock against the monotonic
// one and gaps of the whole process, from given readings, and the minute's summary and labels.
import assert from 'node:assert/strict'
import { mock, test } from 'node:test'
import {
  type ClockEvent,
  ClockMinute,
  ClockWatch,
  describeClockEvent,
  readClocks,
  tickClocks,
} from '../../tools/soak/clock-watch.js'
import { flatnessVerdicts, hostMinutes } from '../../tools/soak/soak.js'

const WALL0 = Date.UTC(2026, 11, 5, 5, 33, 0)

/** Ticks every 10 ms of the monotonic clock from 1,000 ms, the wall clock at WALL0 + mono + the offset. */
function ticks(watch: ClockWatch, from: number, to: number, offset = 0) {
  const seen = []
  for (let mono = from; mono <= to; mono += 10)
    seen.push(...watch.tick({ mono, wall: WALL0 + mono + offset }))
  return seen
}

test('steady clocks: no step and no gap, jitter of a few ms included', () => {
  const w = new ClockWatch()
  assert.deepEqual(ticks(w, 1000, 61_000), [])
  // The wall clock's whole milliseconds and a tick 90 ms late are neither.
  assert.deepEqual(w.tick({ mono: 61_003.7, wall: WALL0 + 61_003 }), [])
  assert.deepEqual(w.tick({ mono: 61_093.7, wall: WALL0 + 61_095 }), [])
})

test('a forward step of the wall clock is a step of its size, not a gap', () => {
  const w = new ClockWatch()
  ticks(w, 1000, 2000)
  // The monotonic clock went on 10 ms; the wall clock 5,010 ms (set forward by 5 s).
  const seen = w.tick({ mono: 2010, wall: WALL0 + 2010 + 5000 })
  assert.deepEqual(seen, [{ kind: 'wall-step', wallAt: WALL0 + 7010, ms: 5000 }])
  // From there on the new offset is the steady one.
  assert.deepEqual(ticks(w, 2020, 3000, 5000), [])
  // A backward step is negative.
  assert.deepEqual(w.tick({ mono: 3010, wall: WALL0 + 3010 + 4000 }), [
    { kind: 'wall-step', wallAt: WALL0 + 7010, ms: -1000 },
  ])
})

test('a pause that both clocks saw is a gap of its length, not a step', () => {
  const w = new ClockWatch()
  ticks(w, 1000, 2000)
  assert.deepEqual(w.tick({ mono: 6900, wall: WALL0 + 6900 }), [
    { kind: 'gap', wallAt: WALL0 + 6900, ms: 4900, waitedMs: Number.NaN },
  ])
  // A pause the monotonic clock saw in part, the wall clock caught up on the rest: both.
  assert.deepEqual(w.tick({ mono: 8000, wall: WALL0 + 8000 + 3000 }), [
    { kind: 'gap', wallAt: WALL0 + 11_000, ms: 1100, waitedMs: Number.NaN },
    { kind: 'wall-step', wallAt: WALL0 + 11_000, ms: 3000 },
  ])
})

test('a gap in which the tick thread waited for a core is a wait, not a stall of the process', () => {
  const w = new ClockWatch()
  w.tick({ mono: 1000, wall: WALL0 + 1000, waitMs: 50 })
  // 400 ms between ticks, 300 of them runnable without a core: the guest's contention.
  assert.deepEqual(w.tick({ mono: 1400, wall: WALL0 + 1400, waitMs: 350 }), [
    { kind: 'wait', wallAt: WALL0 + 1400, ms: 400, waitedMs: 300 },
  ])
  // 400 ms with 20 of them waiting: nothing in the guest ran it, a stall of the whole process.
  assert.deepEqual(w.tick({ mono: 1800, wall: WALL0 + 1800, waitMs: 370 }), [
    { kind: 'gap', wallAt: WALL0 + 1800, ms: 400, waitedMs: 20 },
  ])
  // Without the thread's wait (no schedstat) a gap is a stall.
  assert.equal(w.tick({ mono: 2300, wall: WALL0 + 2300 })[0].kind, 'gap')
})

test("with the tick's period given, a gap's wait is set against the time past the period", () => {
  // The latency runs' watch: a 10 ms tick, a gap when a tick is more than 5 ms late.
  const w = new ClockWatch({ gapMs: 15, periodMs: 10 })
  w.tick({ mono: 1000, wall: WALL0 + 1000, waitMs: 0 })
  // 15 ms is not a gap; 16 is.
  assert.deepEqual(w.tick({ mono: 1015, wall: WALL0 + 1015, waitMs: 0 }), [])
  // 30 ms, 12 of it waiting for a core: 10 + 20 late, the wait is more than half of the 20.
  assert.deepEqual(w.tick({ mono: 1045, wall: WALL0 + 1045, waitMs: 12 }), [
    { kind: 'wait', wallAt: WALL0 + 1045, ms: 30, waitedMs: 12 },
  ])
  // The same wait without the period would be under half of the 30: a stall of the process.
  const soak = new ClockWatch({ gapMs: 15 })
  soak.tick({ mono: 1000, wall: WALL0 + 1000, waitMs: 0 })
  assert.equal(soak.tick({ mono: 1030, wall: WALL0 + 1030, waitMs: 12 })[0].kind, 'gap')
  // 26 ms, 2 of it waiting: the process held.
  assert.deepEqual(w.tick({ mono: 1071, wall: WALL0 + 1071, waitMs: 14 }), [
    { kind: 'gap', wallAt: WALL0 + 1071, ms: 26, waitedMs: 2 },
  ])
})

test('tickClocks reads the given clock at each tick, counts the ticks and posts each event with its reading', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] })
  const monos = [0, 10, 20, 55, 65]
  const seen: { e: ClockEvent; mono: number }[] = []
  const ticking = tickClocks((e, r) => seen.push({ e, mono: r.mono }), {
    tickMs: 10,
    gapMs: 15,
    periodMs: 10,
    mono: () => monos[0],
  })
  // readClocks reads the clock twice a tick; each tick's both reads see the same time here.
  const advance = () => {
    monos.shift()
    t.mock.timers.tick(10)
  }
  assert.equal(ticking.ticks(), 1)
  for (let i = 0; i < 4; i++) advance()
  assert.equal(ticking.ticks(), 5)
  // The wall clock is the real one here: only the monotonic clock's gap is this test's.
  const gaps = seen.filter((s) => s.e.kind !== 'wall-step')
  assert.equal(gaps.length, 1)
  assert.equal(gaps[0].e.ms, 35)
  assert.equal(gaps[0].mono, 55)
  ticking.stop()
  t.mock.timers.tick(100)
  assert.equal(ticking.ticks(), 5)
  mock.timers.reset()
})

test('a reading without the wall clock counts gaps and keeps the last offset', () => {
  const w = new ClockWatch()
  ticks(w, 1000, 2000, 250)
  assert.deepEqual(w.tick({ mono: 2500 }), [
    { kind: 'gap', wallAt: WALL0 + 2750, ms: 500, waitedMs: Number.NaN },
  ])
  assert.deepEqual(w.tick({ mono: 2510, wall: WALL0 + 2510 + 250 }), [])
})

test('readClocks keeps the wall clock only when the two monotonic reads are close', () => {
  const clock = (xs: number[]) => () => xs.shift() as number
  assert.deepEqual(
    readClocks(
      clock([100, 100.4]),
      () => 5,
      1,
      () => 7,
    ),
    { mono: 100.2, wall: 5, waitMs: 7 },
  )
  assert.deepEqual(
    readClocks(
      clock([100, 130]),
      () => 5,
      1,
      () => undefined,
    ),
    {
      mono: 115,
      waitMs: undefined,
    },
  )
  const r = readClocks()
  assert.ok(Number.isFinite(r.mono))
})

test("a minute's clock summary: steps summed, the longest gap, a label for each and the rest counted", () => {
  const m = new ClockMinute()
  assert.deepEqual(m.take(), {
    wallSteps: 0,
    wallStepMs: 0,
    gaps: 0,
    longestGapMs: 0,
    waits: 0,
    longestWaitMs: 0,
    notes: [],
  })
  const events = [
    { kind: 'gap', wallAt: WALL0 + 38_100, ms: 4900 },
    { kind: 'wall-step', wallAt: WALL0 + 52_000, ms: 5012 },
    { kind: 'wall-step', wallAt: WALL0 + 52_100, ms: -12 },
    { kind: 'gap', wallAt: WALL0 + 53_000, ms: 150 },
    { kind: 'gap', wallAt: WALL0 + 54_000, ms: 120 },
    { kind: 'gap', wallAt: WALL0 + 55_000, ms: 130 },
    { kind: 'wait', wallAt: WALL0 + 40_000, ms: 300, waitedMs: 280 },
  ] as const
  for (const e of events) m.add(e)
  const s = m.take()
  assert.equal(s.wallSteps, 2)
  assert.equal(s.wallStepMs, 5000)
  assert.equal(s.gaps, 4)
  assert.equal(s.longestGapMs, 4900)
  // The wait for a core is counted apart and not named: it is the guest's own, not the host's.
  assert.equal(s.waits, 1)
  assert.equal(s.longestWaitMs, 300)
  assert.deepEqual(s.notes, [
    "host: the whole load process stalled 4900 ms (its tick thread's 10-ms ticks, until 05:33:38.100 UTC)",
    'host: the wall clock stepped +5012 ms against the monotonic clock (05:33:52.000 UTC)',
    'host: the wall clock stepped −12 ms against the monotonic clock (05:33:52.100 UTC)',
    "host: the whole load process stalled 150 ms (its tick thread's 10-ms ticks, until 05:33:53.000 UTC)",
    "2 more of the host's clock events",
  ])
  // The next minute starts empty.
  assert.equal(m.take().notes.length, 0)
  assert.equal(describeClockEvent(events[1]), s.notes[1])
  assert.equal(
    describeClockEvent(events[6]),
    "the load process's tick thread waited 280 ms of 300 for a core (05:33:40.000 UTC)",
  )
})

test('a minute the host hit is named in the flatness verdicts and still counted in them', () => {
  const o = { flatFrom: 2, restartAt: 5, minutes: 8 }
  const rows = [1, 1, 1, 1, 1, 1, 2.5, 1].map((p99, minute) => ({
    minute,
    p99,
    ceilingP99: Number.NaN,
    rssMb: 190,
    wallSteps: minute === 6 || minute === 0 ? 1 : 0,
    processGaps: minute === 3 || minute === 5 ? 1 : 0,
  }))
  // Minute 0 is before the window and 5 is the restart's: only 3 and 6 are named.
  assert.equal(
    hostMinutes(rows, o),
    '; the host stepped the wall clock or stalled the load process in minutes 3, 6 (counted)',
  )
  const [raw, rss] = flatnessVerdicts(rows, o)
  assert.equal(raw.pass, false, 'the minute the host hit stays in the verdict')
  assert.match(raw.detail, /max 2\.50: ±150\.0 % .* ms; the host .* minutes 3, 6 \(counted\)$/)
  assert.equal(rss.pass, true)
  assert.match(rss.detail, /MB; the host .* minutes 3, 6 \(counted\)$/)
  assert.equal(
    hostMinutes(
      rows.map((r) => ({ ...r, wallSteps: 0, processGaps: 0 })),
      o,
    ),
    '',
  )
})
