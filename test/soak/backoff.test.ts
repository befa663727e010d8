// The soak's load backs off as a Kafka Java client does (`ExponentialBackoff`): the exponent stops
// at log2(max / base), so past the cap the jitter stays and members that reached the cap do not
// retry in step.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clientBackoffMs } from '../../tools/soak/client.js'

/** Equal, or one millisecond less: 2^log2(10) is a hair under 10 in floating point, in Java as here. */
const near = (actual: number, expected: number) =>
  assert.ok(actual === expected || actual === expected - 1, `${actual}, expected ${expected}`)

test('clientBackoffMs: doubles from the base with ±20 % jitter, as ExponentialBackoff', () => {
  assert.equal(
    clientBackoffMs(0, 100, 1000, () => 0),
    80,
  )
  assert.equal(
    clientBackoffMs(0, 100, 1000, () => 0.5),
    100,
  )
  assert.equal(
    clientBackoffMs(2, 100, 1000, () => 0.5),
    400,
  )
  assert.equal(
    clientBackoffMs(3, 100, 1000, () => 0),
    640,
  )
  assert.equal(
    clientBackoffMs(1, 50, 1000, () => 0.5),
    100,
  )
})

test('clientBackoffMs: past the cap the back-off keeps its jitter (0.8 × max to max), as ExponentialBackoff', () => {
  // ExponentialBackoff(100, 2, 1000, 0.2).backoff(10): exp = min(10, log2(10)), term = 1000,
  // 1000 × [0.8, 1.2) capped at 1000.
  for (const attempts of [5, 10, 50]) {
    near(
      clientBackoffMs(attempts, 100, 1000, () => 0),
      800,
    )
    near(
      clientBackoffMs(attempts, 100, 1000, () => 0.25),
      900,
    )
    assert.equal(
      clientBackoffMs(attempts, 100, 1000, () => 0.75),
      1000,
    )
    near(
      clientBackoffMs(attempts, 50, 1000, () => 0),
      800,
    )
  }
  // Many members at the cap: their next retries spread over 800–1000 ms.
  let seed = 1
  const random = () => {
    seed = (seed * 48271) % 2147483647
    return seed / 2147483647
  }
  const next = Array.from({ length: 1000 }, () => clientBackoffMs(20, 100, 1000, random))
  const distinct = new Set(next).size
  assert.ok(distinct > 100, `${distinct} distinct back-offs among 1000 members at the cap`)
  assert.ok(Math.min(...next) >= 799 && Math.max(...next) <= 1000)
})

test('clientBackoffMs: a maximum not above the base is the base, without jitter', () => {
  assert.equal(
    clientBackoffMs(5, 1000, 1000, () => 0),
    1000,
  )
  assert.equal(
    clientBackoffMs(5, 1000, 500, () => 0),
    500,
  )
})
