// The server load generator's bookkeeping (bench/server/load-samples.ts): every latency the
// benchmarks report is read back from these, so a stamp must come back to the answer it belongs to
// and no sample may be lost when they grow.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { Samples, Stamps } from '../../bench/server/load-samples.js'

test('Stamps: answers take the stamps in send order, across wraps and growth', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 40 }),
      fc.array(fc.oneof(fc.constant('push' as const), fc.constant('shift' as const)), { maxLength: 400 }),
      (capacity, ops) => {
        const stamps = new Stamps(capacity)
        const model: number[] = []
        let next = 0
        for (const op of ops) {
          if (op === 'push') {
            stamps.push(next)
            model.push(next++)
          } else {
            assert.equal(Number.isNaN(stamps.peek()) ? undefined : stamps.peek(), model[0])
            stamps.shift()
            model.shift()
          }
          assert.equal(stamps.inFlight, model.length)
        }
        for (const want of model) {
          assert.equal(stamps.peek(), want)
          stamps.shift()
        }
        assert.equal(stamps.inFlight, 0)
        assert.ok(Number.isNaN(stamps.peek()))
      },
    ),
  )
})

test('Stamps: a ring of 16 holds 16 in flight and grows for the 17th', () => {
  const stamps = new Stamps(16)
  // Wrap the positions first, so that growth has to unwrap them.
  for (let i = 0; i < 10; i++) stamps.push(-1)
  for (let i = 0; i < 10; i++) stamps.shift()
  for (let i = 0; i < 17; i++) stamps.push(i)
  assert.equal(stamps.inFlight, 17)
  for (let i = 0; i < 17; i++) {
    assert.equal(stamps.peek(), i)
    stamps.shift()
  }
})

test('Samples: keeps every value past its first size, sorted ascending as numbers', () => {
  const samples = new Samples(16)
  const values = Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 1000) / 10 + (i % 3 === 0 ? 100 : 0))
  for (const v of values) samples.push(v)
  assert.equal(samples.length, 1000)
  assert.deepEqual(
    [...samples.sorted()],
    [...values].sort((a, b) => a - b),
  )
})
