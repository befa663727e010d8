// A load thread's sends: `SendBursts` counts each send by how many of the thread's sends went out in
// its millisecond, and `SendSlots` moves a phase by at most its reach onto the least-taken
// millisecond of the interval near it, so that phases drawn at random leave the thread one by one.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { rng } from '../../tools/soak/common.js'
import type { ThreadCounts } from '../../tools/soak/measures.js'
import { SendBursts, SendSlots } from '../../tools/soak/send-slots.js'
import { burstShares } from '../../tools/soak/soak.js'

test('SendBursts: each send told how many went out before it in its millisecond', () => {
  const b = new SendBursts()
  assert.deepEqual(
    [3.1, 3.5, 3.9, 4.0, 6.2, 6.3].map((t) => b.note(t)),
    [0, 1, 2, 0, 0, 1],
  )
})

test('SendBursts: sends counted by the size of their millisecond', () => {
  const b = new SendBursts()
  // ms 10: one; ms 11: three; ms 12: one; ms 14: five (counted as ≥4).
  for (const t of [10.2, 11.0, 11.4, 11.99, 12.5, 14.1, 14.2, 14.3, 14.4, 14.9]) b.note(t)
  assert.deepEqual(b.take(), [2, 0, 3, 5])
  // Taken: they start again.
  b.note(20.5)
  b.note(20.6)
  assert.deepEqual(b.take(), [0, 2, 0, 0])
  assert.deepEqual(b.take(), [0, 0, 0, 0])
})

test('SendSlots: a free slot keeps the phase, a taken one moves it to the nearest free one', () => {
  const s = new SendSlots(5000, 3)
  assert.deepEqual(s.place(10_250.4), { at: 10_250.4, slot: 250 })
  // 250 is taken: 249 (the earlier of the two nearest) is free.
  assert.deepEqual(s.place(250.7), { at: 249.7, slot: 249 })
  // 249 and 250 taken: 251.
  assert.deepEqual(s.place(5250.1), { at: 5251.1, slot: 251 })
  assert.equal(s.taken(250), 1)
  // Near the end of the interval the slots wrap round.
  assert.deepEqual(s.place(4999.5), { at: 4999.5, slot: 4999 })
  assert.deepEqual(s.place(9999.5), { at: 9998.5, slot: 4998 })
  assert.deepEqual(s.place(14_999.2), { at: 15_000.2, slot: 0 })
})

test('SendSlots: within its reach only, then the least taken; release gives the slot back', () => {
  const s = new SendSlots(100, 1)
  s.place(10)
  s.place(9)
  s.place(11)
  // 9, 10 and 11 each taken once: no better slot within ±1, so 10 is taken twice.
  assert.deepEqual(s.place(10.5), { at: 10.5, slot: 10 })
  assert.equal(s.taken(10), 2)
  s.release(9)
  assert.deepEqual(s.place(10.5), { at: 9.5, slot: 9 })
  s.release(9)
  s.release(9 + 1)
  s.release(10)
  assert.equal(s.taken(10), 0)
  assert.throws(() => s.release(10), RangeError)
})

test('SendSlots: phases drawn at random leave the thread one by one where random ones would not', () => {
  // 4,000 phases in a 5,000-ms interval: at random, about half of them share their ms with
  // another (1 − e^−0.8); placed within 10 ms, a few in the densest stretches do, two to a ms.
  const random = rng(42)
  const slots = new SendSlots(5000, 10)
  const atRandom = new Uint16Array(5000)
  const placed = new Uint16Array(5000)
  for (let i = 0; i < 4000; i++) {
    const at = 1_000_000 + random() * 5000
    atRandom[Math.floor(at) % 5000]++
    const p = slots.place(at)
    assert.ok(Math.abs(p.at - at) <= 10)
    assert.equal(Math.floor(p.at) % 5000, p.slot)
    placed[p.slot]++
  }
  const shared = (a: Uint16Array) => a.reduce((n, k) => n + (k > 1 ? k : 0), 0)
  assert.ok(shared(atRandom) > 1800, `${shared(atRandom)} of 4,000 at random share their ms`)
  assert.ok(shared(placed) < 200, `${shared(placed)} of 4,000 placed share their ms`)
  assert.equal(Math.max(...placed), 2)
})

test('burstShares: the row shows the share of the minute’s sends of each size', () => {
  const counts = (ms1: number, ms2: number, ms3: number, ms4: number) =>
    ({ sendsMs1: ms1, sendsMs2: ms2, sendsMs3: ms3, sendsMs4Plus: ms4 }) as ThreadCounts
  assert.equal(burstShares(counts(170, 190, 170, 470)), '17.0 / 19.0 / 17.0 / 47.0 %')
  assert.equal(burstShares(counts(0, 0, 0, 0)), '—')
})
