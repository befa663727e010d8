// The soak's members keep their heartbeat phase as a Kafka Java client's timer keeps it
// (`HeartbeatRequestState`): a heartbeat its timer sent starts the next interval at the time it fell
// due, whether this load's timer fired after it or before it, and an answer with another interval
// starts it at the answer's arrival.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nextIntervalStart } from '../../tools/soak/members.js'

test('nextIntervalStart: a timer that fired early does not move the phase', () => {
  // Node fires a timer up to about 1.5 ms before the time it was set for (its loop's cached time,
  // whole milliseconds); the member would have sent at 10,000.
  assert.equal(nextIntervalStart(false, 10_000.9, 10_000, 9_998.6), 10_000)
})

test('nextIntervalStart: a timer that fired late does not move the phase', () => {
  assert.equal(nextIntervalStart(false, 10_030.2, 10_000, 10_025.0), 10_000)
})

test('nextIntervalStart: a changed interval starts at the answer, early or late', () => {
  assert.equal(nextIntervalStart(true, 10_001.3, 10_000, 9_999.2), 10_001.3)
  assert.equal(nextIntervalStart(true, 10_031.0, 10_000, 10_025.0), 10_031.0)
})

test('nextIntervalStart: a heartbeat no timer sent starts the interval at its send', () => {
  assert.equal(nextIntervalStart(false, 5_000.7, undefined, 5_000.1), 5_000.1)
})

test('nextIntervalStart: over many intervals of early and late timers, no creep', () => {
  // 1,000 intervals of 5 s, the timer off by −1.5 to +1.5 ms each time: the member's due times stay
  // on its phase (the rule before took an early send's time, creeping ~0.75 ms an interval).
  let due = 0
  let seed = 7
  for (let i = 0; i < 1000; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    const sentAt = due + ((seed / 2 ** 31) * 3 - 1.5)
    due = nextIntervalStart(false, sentAt + 0.3, due, sentAt) + 5000
  }
  assert.equal(due, 1000 * 5000)
})
