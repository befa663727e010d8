import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock, systemClock } from '../../../src/coordinator/runtime/clock.js'

test('ManualClock runs due callbacks in due order, ties in scheduling order, at their due time', () => {
  const clock = new ManualClock(1000)
  const seen: string[] = []
  clock.setTimer(() => seen.push(`b@${clock.now()}`), 20)
  clock.setTimer(() => seen.push(`a@${clock.now()}`), 10)
  clock.setTimer(() => seen.push(`c@${clock.now()}`), 20)
  const cancelled = clock.setTimer(() => seen.push('never'), 5)
  clock.clearTimer(cancelled)
  clock.advance(9)
  assert.deepEqual(seen, [])
  assert.equal(clock.now(), 1009)
  clock.advance(11)
  assert.deepEqual(seen, ['a@1010', 'b@1020', 'c@1020'])
  assert.equal(clock.pendingTimers, 0)
})

test('ManualClock: a callback scheduled by a callback runs in the same advance when due', () => {
  const clock = new ManualClock()
  const seen: number[] = []
  clock.setTimer(() => {
    seen.push(clock.now())
    clock.setTimer(() => seen.push(clock.now()), 5)
  }, 5)
  clock.advance(12)
  assert.deepEqual(seen, [5, 10])
  assert.equal(clock.now(), 12)
})

test('ManualClock rejects negative or non-finite times', () => {
  const clock = new ManualClock()
  assert.throws(() => clock.advance(-1), RangeError)
  assert.throws(() => clock.setTimer(() => {}, Number.NaN), RangeError)
  assert.throws(() => new ManualClock(Number.POSITIVE_INFINITY), RangeError)
})

test('systemClock timers fire and can be cancelled', async () => {
  let fired = 0
  const h = systemClock.setTimer(() => fired++, 1)
  const cancelled = systemClock.setTimer(() => fired++, 1)
  systemClock.clearTimer(cancelled)
  await new Promise((r) => setTimeout(r, 20))
  assert.equal(fired, 1)
  systemClock.clearTimer(h) // already ran: ignored
  assert.ok(Math.abs(systemClock.now() - Date.now()) < 1000)
})
