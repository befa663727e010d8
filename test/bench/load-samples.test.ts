// The server load generator's bookkeeping (bench/server/load-samples.ts): every latency the
// benchmarks report is read back from these, so a stamp must come back to the answer it belongs to
// and no sample may be lost when they grow.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { KeptArrays, Samples, Stamps } from '../../bench/server/load-samples.js'

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

test('KeptArrays: the next load takes the same arrays, emptied, while they are large enough', () => {
  const kept = new KeptArrays()
  const first = kept.samples(0, 1000)
  for (let i = 0; i < 700; i++) first.push(700 - i)
  const second = kept.samples(0, 1000)
  assert.equal(second, first)
  assert.equal(second.length, 0)
  second.push(3)
  second.push(1)
  assert.deepEqual([...second.sorted()], [1, 3])
  // Another slot has arrays of its own; a larger need gets a larger array, kept from then on.
  assert.notEqual(kept.samples(1, 1000), first)
  const larger = kept.samples(0, 5000)
  assert.notEqual(larger, first)
  assert.ok(larger.capacity >= 5000)
  assert.equal(kept.samples(0, 16), larger)
})

test('KeptArrays: kept stamps start empty and come back in send order, wrapped before or not', () => {
  const kept = new KeptArrays()
  const ring = kept.stamps(0, 16)
  // Leave the ring wrapped and with stamps in flight, as a load that ended with answers missing.
  for (let i = 0; i < 30; i++) ring.push(i)
  for (let i = 0; i < 25; i++) ring.shift()
  const again = kept.stamps(0, 16)
  assert.equal(again, ring)
  assert.equal(again.inFlight, 0)
  assert.ok(Number.isNaN(again.peek()))
  for (let i = 0; i < 20; i++) again.push(100 + i)
  for (let i = 0; i < 20; i++) {
    assert.equal(again.peek(), 100 + i)
    again.shift()
  }
  assert.notEqual(kept.stamps(0, 1 << 10), ring)
})
