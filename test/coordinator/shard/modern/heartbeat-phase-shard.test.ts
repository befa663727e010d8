// The spreading of heartbeat phases in the shard, for both modern group types: the answer's
// HeartbeatIntervalMs is the only thing it changes (same records, same timers, same state), members
// that heartbeat at the same moment are told to come back at their own phases, and a member on its
// phase gets the group's interval.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  heartbeatPhaseMs,
  onPhaseToleranceMs,
} from '../../../../src/coordinator/shard/modern/heartbeat-phase.js'
import * as consumer from '../consumer/harness.js'
import * as streams from '../streams/harness.js'

const INTERVAL_MS = 5000
const JOINED_AT = 1_000_123
const MEMBERS = Array.from({ length: 12 }, (_, i) => `member-${i}`)

/** Whether `at` falls on the member's phase (within the tolerance that counts as on it). */
function onPhase(memberId: string, at: number): boolean {
  const off = (((at - heartbeatPhaseMs(memberId, INTERVAL_MS)) % INTERVAL_MS) + INTERVAL_MS) % INTERVAL_MS
  return Math.min(off, INTERVAL_MS - off) <= onPhaseToleranceMs(INTERVAL_MS)
}

/** What a heartbeat's result holds, for either group type. */
interface Answered {
  readonly records: readonly unknown[]
  readonly timers?: { readonly schedule?: readonly { key: string; delayMs: number }[] }
  readonly response: { readonly heartbeatIntervalMs: number; readonly memberEpoch: number }
}

/**
 * One heartbeat answered with the spreading and without: the same records and timers, the same
 * answer but for the interval, the group's interval without it. Returns when the member, answered
 * with the spreading, comes back.
 */
function comesBackAt(spread: Answered, exact: Answered): { at: number; epoch: number } {
  assert.deepEqual(spread.records, exact.records)
  const timers = (r: Answered) => r.timers?.schedule?.map((t) => [t.key, t.delayMs])
  assert.deepEqual(timers(spread), timers(exact))
  assert.deepEqual(
    { ...spread.response, heartbeatIntervalMs: undefined },
    { ...exact.response, heartbeatIntervalMs: undefined },
  )
  assert.equal(exact.response.heartbeatIntervalMs, INTERVAL_MS)
  const answered = spread.response.heartbeatIntervalMs
  assert.ok(answered >= INTERVAL_MS / 2 && answered <= (3 * INTERVAL_MS) / 2, `${answered}`)
  return { at: JOINED_AT + answered, epoch: spread.response.memberEpoch }
}

/** The tenths of the interval the times fall in (how many distinct ones). */
const tenthsUsed = (times: readonly number[]) =>
  new Set(times.map((t) => Math.floor((t % INTERVAL_MS) / 500))).size

describe('heartbeat phases in the shard', () => {
  it('streams: members joining at one moment come back at their own phases, then get the interval', async () => {
    const spread = await streams.Harness.start(streams.topicsImage({ foo: 4 }))
    const exact = await streams.Harness.start(streams.topicsImage({ foo: 4 }))
    const off = { ...streams.NO_DELAY, heartbeatSpreadEnable: false }
    try {
      spread.nowMs = JOINED_AT
      exact.nowMs = JOINED_AT
      const next = new Map<string, { at: number; epoch: number }>()
      for (const memberId of MEMBERS) {
        const join = streams.joinRequest({ memberId, processId: memberId })
        next.set(
          memberId,
          comesBackAt(await spread.heartbeat(join, streams.NO_DELAY), await exact.heartbeat(join, off)),
        )
      }
      // Told to come back together, they would all fall in one tenth; told by the spreading, each
      // comes back at its own phase.
      for (const [memberId, { at }] of next) assert.ok(onPhase(memberId, at), memberId)
      assert.ok(tenthsUsed([...next.values()].map((n) => n.at)) >= 6)
      await spread.assertReplayEquivalent()
      await exact.assertReplayEquivalent()

      // On their phases, they get the group's interval.
      for (const [memberId, { at, epoch }] of [...next].sort(([, x], [, y]) => x.at - y.at)) {
        spread.nowMs = at
        const r = await spread.heartbeat(
          streams.heartbeatRequest({ memberId, memberEpoch: epoch }),
          streams.NO_DELAY,
        )
        assert.equal(r.response.errorCode, 0)
        assert.equal(r.response.heartbeatIntervalMs, INTERVAL_MS, memberId)
      }
      await spread.assertReplayEquivalent()
    } finally {
      await spread.close()
      await exact.close()
    }
  })

  it('consumer: members joining at one moment come back at their own phases, then get the interval', () => {
    const spread = new consumer.Harness({ foo: 4 })
    const exact = new consumer.Harness({ foo: 4 })
    exact.config = { ...exact.config, heartbeatSpreadEnable: false }
    const next = new Map<string, { at: number; epoch: number }>()
    for (const memberId of MEMBERS) {
      const a = spread.heartbeat(consumer.join(memberId), JOINED_AT)
      const b = exact.heartbeat(consumer.join(memberId), JOINED_AT)
      next.set(
        memberId,
        comesBackAt({ ...a.result, response: a.response }, { ...b.result, response: b.response }),
      )
    }
    for (const [memberId, { at }] of next) assert.ok(onPhase(memberId, at), memberId)
    assert.ok(tenthsUsed([...next.values()].map((n) => n.at)) >= 6)
    assert.deepEqual(spread.snapshot(spread.reloaded()), spread.snapshot())
    assert.deepEqual(spread.snapshot(), exact.snapshot())

    for (const [memberId, { at, epoch }] of [...next].sort(([, x], [, y]) => x.at - y.at)) {
      const r = spread.heartbeat(consumer.beat(memberId, epoch, null), at)
      assert.equal(r.response.errorCode, 0)
      assert.equal(r.response.heartbeatIntervalMs, INTERVAL_MS, memberId)
    }
  })
})
