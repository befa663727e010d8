import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { FrameError } from '../../src/protocol/frames.js'
import { PARKED_AFTER_MS, RequestGate, SizePrefixedFrames } from '../../src/server/connection.js'

function frame(payload: Uint8Array): Buffer {
  const b = Buffer.alloc(4 + payload.length)
  b.writeInt32BE(payload.length, 0)
  b.set(payload, 4)
  return b
}

test('frames survive any split of the byte stream', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 8 }),
      fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 10 }),
      (payloads, cuts) => {
        const stream = Buffer.concat(payloads.map(frame))
        const f = new SizePrefixedFrames(1000)
        const got: Buffer[] = []
        let pos = 0
        let i = 0
        while (pos < stream.length) {
          const n = cuts[i++ % cuts.length]
          f.push(stream.subarray(pos, pos + n))
          pos += n
          for (let x = f.next(); x !== null; x = f.next()) got.push(Buffer.from(x))
        }
        assert.deepEqual(
          got,
          payloads.map((p) => Buffer.from(p)),
        )
        assert.equal(f.buffered, 0)
      },
    ),
  )
})

test('frames spanning chunks are assembled in one reused buffer, a new one once a frame is kept', () => {
  const f = new SizePrefixedFrames(1 << 20)
  const payload = (fill: number) => Buffer.alloc(8000, fill)
  const spanning = (fill: number): Uint8Array => {
    const bytes = frame(payload(fill))
    f.push(bytes.subarray(0, 5000))
    assert.equal(f.next(), null)
    f.push(bytes.subarray(5000))
    const out = f.next()
    assert.ok(out !== null)
    return out
  }
  const first = spanning(1)
  assert.deepEqual(Buffer.from(first), payload(1))
  const second = spanning(2)
  assert.equal(second.buffer, first.buffer, 'the same buffer')
  assert.deepEqual(Buffer.from(second), payload(2))
  f.keep()
  const third = spanning(3)
  assert.notEqual(third.buffer, second.buffer, 'a kept frame keeps its buffer')
  assert.deepEqual(Buffer.from(second), payload(2), 'the kept frame is intact')
  assert.deepEqual(Buffer.from(third), payload(3))
  // A frame inside one chunk is a view of it: keep() after it leaves the reused buffer in use.
  f.push(frame(payload(4)))
  assert.deepEqual(Buffer.from(f.next()!), payload(4))
  f.keep()
  assert.equal(spanning(5).buffer, third.buffer)
  // Small frames are slices of Node's shared pool, not the reused buffer.
  f.push(frame(Buffer.alloc(100, 6)).subarray(0, 50))
  f.push(frame(Buffer.alloc(100, 6)).subarray(50))
  assert.notEqual(f.next()!.buffer, third.buffer)
})

test('oversized and negative sizes are refused with Kafka texts', () => {
  const f = new SizePrefixedFrames(10)
  f.push(Buffer.from([0, 0, 0, 11]))
  assert.throws(
    () => f.next(),
    (e: Error) => e instanceof FrameError && e.message === 'Invalid receive (size = 11 larger than 10)',
  )
  const g = new SizePrefixedFrames(10)
  g.push(Buffer.from([0xff, 0xff, 0xff, 0xff]))
  assert.throws(() => g.next(), /Invalid receive \(size = -1\)/)
  const h = new SizePrefixedFrames(10)
  h.push(Buffer.from([0, 0, 0, 10, 1, 2]))
  assert.equal(h.next(), null, 'an allowed size waits for its bytes')
})

test('RequestGate: permits in arrival order; permits held across two checks stop counting while others wait', async () => {
  const gate = new RequestGate(2)
  const a = gate.tryAcquire()
  const b = gate.tryAcquire()
  assert.ok(a !== null && b !== null)
  assert.equal(gate.tryAcquire(), null)
  const granted: string[] = []
  gate.wait(() => granted.push('c'))
  gate.wait(() => granted.push('d'))
  assert.equal(gate.tryAcquire(), null, 'a newcomer does not overtake the waiters')
  gate.release(a)
  assert.deepEqual(granted, ['c'])
  assert.equal(gate.inFlight, 2)
  // b and c stay held: with d waiting, within PARKED_AFTER_MS they stop counting and d gets in.
  // The sweep is an interval: a loaded machine that delays the timer phase runs one sweep per
  // late phase (intervals do not catch up), so wait for the second sweep rather than a fixed time.
  const deadline = Date.now() + 20 * PARKED_AFTER_MS
  while (granted.length < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, PARKED_AFTER_MS / 4))
  }
  assert.deepEqual(granted, ['c', 'd'])
  assert.equal(gate.inFlight, 1, 'only d counts')
  gate.release(b)
  assert.equal(gate.inFlight, 1, 'a parked permit no longer counts when it is returned')
  const e = gate.tryAcquire()
  assert.ok(e !== null)
  assert.equal(gate.inFlight, 2)
  assert.equal(gate.tryAcquire(), null)
})
