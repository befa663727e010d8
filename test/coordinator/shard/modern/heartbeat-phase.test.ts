import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  answeredHeartbeatIntervalMs,
  heartbeatIntervalBounds,
  heartbeatPhaseMs,
  onPhaseToleranceMs,
} from '../../../../src/coordinator/shard/modern/heartbeat-phase.js'

/** A group's interval and session timeout, as the config checks allow them (interval < session). */
const settings = fc.integer({ min: 2, max: 60_000 }).chain((intervalMs) =>
  fc.record({
    intervalMs: fc.constant(intervalMs),
    sessionTimeoutMs: fc.integer({ min: intervalMs + 1, max: intervalMs + 120_000 }),
  }),
)
const memberIds = fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 40 }))
/** The shard's clock: wall-clock milliseconds, or a test's manual clock from 0. */
const times = fc.oneof(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1.5e12, max: 2.5e12 }))

const on = (intervalMs: number, sessionTimeoutMs: number) => ({
  heartbeatIntervalMs: intervalMs,
  sessionTimeoutMs,
  heartbeatSpreadEnable: true,
})

/** The answers a client that sends exactly when told gets, starting at `nowMs`. */
function answers(memberId: string, intervalMs: number, sessionTimeoutMs: number, nowMs: number, n: number) {
  const out: number[] = []
  let t = nowMs
  for (let i = 0; i < n; i++) {
    const a = answeredHeartbeatIntervalMs(on(intervalMs, sessionTimeoutMs), memberId, t)
    out.push(a)
    t += a
  }
  return out
}

describe('heartbeat phases: the interval a heartbeat is answered with', () => {
  it('stays within half and one and a half intervals, below the session timeout, a whole number', () => {
    fc.assert(
      fc.property(settings, memberIds, times, ({ intervalMs, sessionTimeoutMs }, memberId, nowMs) => {
        const a = answeredHeartbeatIntervalMs(on(intervalMs, sessionTimeoutMs), memberId, nowMs)
        const { minMs, maxMs } = heartbeatIntervalBounds(intervalMs, sessionTimeoutMs)
        assert.ok(Number.isInteger(a))
        assert.ok(a >= minMs && a <= maxMs, `${a} outside [${minMs}, ${maxMs}]`)
        assert.ok(2 * a >= intervalMs && 2 * a <= 3 * intervalMs)
        assert.ok(a < sessionTimeoutMs)
        // Never more than halfway from the interval to the session timeout.
        assert.ok(a - intervalMs <= (sessionTimeoutMs - intervalMs) / 2)
      }),
      { numRuns: 2000 },
    )
  })

  it('brings a member onto its phase within two answers, and the plain interval from then on', () => {
    fc.assert(
      fc.property(settings, memberIds, times, ({ intervalMs, sessionTimeoutMs }, memberId, nowMs) => {
        const [a1, a2, a3, a4] = answers(memberId, intervalMs, sessionTimeoutMs, nowMs, 4)
        assert.deepEqual([a3, a4], [intervalMs, intervalMs])
        // Where the session timeout leaves room for half an interval more, one answer does it.
        if (sessionTimeoutMs >= 2 * intervalMs) assert.equal(a2, intervalMs)
        // Once the adjusted answers are done, the member heartbeats on its phase.
        const landed = nowMs + a1 + (a2 === intervalMs ? 0 : a2)
        const off =
          (((landed - heartbeatPhaseMs(memberId, intervalMs)) % intervalMs) + intervalMs) % intervalMs
        const tolerance = onPhaseToleranceMs(intervalMs)
        assert.ok(off <= tolerance || intervalMs - off <= tolerance, `${off} ms off its phase`)
      }),
      { numRuns: 2000 },
    )
  })

  it('answers the plain interval to a member within the tolerance of its phase', () => {
    fc.assert(
      fc.property(
        settings,
        memberIds,
        fc.integer({ min: 0, max: 400_000_000 }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        ({ intervalMs, sessionTimeoutMs }, memberId, cycles, where) => {
          const tolerance = onPhaseToleranceMs(intervalMs)
          const early = Math.round(where * tolerance)
          // A heartbeat whose plain successor falls `early` ms from the member's phase.
          const nowMs = cycles * intervalMs + heartbeatPhaseMs(memberId, intervalMs) + early
          assert.equal(
            answeredHeartbeatIntervalMs(on(intervalMs, sessionTimeoutMs), memberId, nowMs),
            intervalMs,
          )
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('moves a member that is off its phase by more than the tolerance', () => {
    fc.assert(
      fc.property(settings, memberIds, times, ({ intervalMs, sessionTimeoutMs }, memberId, nowMs) => {
        const phase = heartbeatPhaseMs(memberId, intervalMs)
        const off = (((nowMs + intervalMs - phase) % intervalMs) + intervalMs) % intervalMs
        const a = answeredHeartbeatIntervalMs(on(intervalMs, sessionTimeoutMs), memberId, nowMs)
        const tolerance = onPhaseToleranceMs(intervalMs)
        assert.equal(a === intervalMs, off <= tolerance || intervalMs - off <= tolerance)
      }),
      { numRuns: 2000 },
    )
  })

  it('answers the group interval itself when spreading is off', () => {
    fc.assert(
      fc.property(settings, memberIds, times, ({ intervalMs, sessionTimeoutMs }, memberId, nowMs) => {
        const config = { heartbeatIntervalMs: intervalMs, sessionTimeoutMs, heartbeatSpreadEnable: false }
        assert.equal(answeredHeartbeatIntervalMs(config, memberId, nowMs), intervalMs)
      }),
    )
  })

  it('gives member ids of any shape phases spread evenly over the interval', () => {
    const intervalMs = 5000
    const shapes: [string, (i: number) => string][] = [
      ['sequential', (i) => `member-${i}`],
      ['UUIDs with a counter', (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`],
    ]
    for (const [shape, id] of shapes) {
      const tenths = new Array<number>(10).fill(0)
      for (let i = 0; i < 10_000; i++) tenths[Math.floor(heartbeatPhaseMs(id(i), intervalMs) / 500)]++
      for (const n of tenths) assert.ok(n >= 900 && n <= 1100, `${shape}: a tenth holds ${n} of 10,000`)
    }
  })

  it('spreads members that heartbeat at the same moment over the interval after one answer', () => {
    const intervalMs = 5000
    const nowMs = 1_790_000_000_123
    const tenths = new Array<number>(10).fill(0)
    for (let i = 0; i < 10_000; i++) {
      const memberId = `m-${i}`
      const next = nowMs + answeredHeartbeatIntervalMs(on(intervalMs, 45_000), memberId, nowMs)
      tenths[Math.floor((next % intervalMs) / 500)]++
    }
    for (const n of tenths) assert.ok(n >= 900 && n <= 1100, `a tenth of the interval holds ${n} of 10,000`)
  })
})
