// ReadBufferFrames: frames from reads into one buffer that is overwritten after every release.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { FrameError } from '../../src/protocol/frames.js'
import { REUSED_FRAME_MIN_BYTES } from '../../src/server/connection.js'
import { ReadBufferFrames } from '../../src/server/read-buffer.js'
import { sizePrefixed } from '../helpers/frames.js'

const frame = sizePrefixed

/**
 * Feeds `stream` as a socket reading into `shared` would: each read overwrites the buffer, the
 * source is released after it and the buffer is then scribbled over. `take(i)` says how many
 * frames the connection handles after read i before it pauses (the rest stay buffered and are
 * handled before the next read, as a paused connection reads only once it has handled them).
 * Checks every frame against `expected` when it is returned, and again after the release that
 * follows (its bytes are valid until the next frame is asked for).
 */
function feed(
  f: ReadBufferFrames,
  stream: Buffer,
  cuts: readonly number[],
  expected: readonly Buffer[],
  take: (read: number) => number = () => Number.POSITIVE_INFINITY,
): number {
  const shared = Buffer.alloc(Math.max(...cuts))
  let got = 0
  let last: { bytes: Uint8Array; i: number } | null = null
  const next = (): boolean => {
    const x = f.next()
    if (x === null) return false
    assert.ok(got < expected.length, 'no more frames than sent')
    assert.deepEqual(Buffer.from(x), expected[got], `frame ${got}`)
    last = { bytes: x, i: got }
    got++
    return true
  }
  let pos = 0
  let read = 0
  while (pos < stream.length) {
    // What a paused connection handles before it reads again.
    while (next());
    const n = Math.min(cuts[read % cuts.length], stream.length - pos)
    stream.copy(shared, 0, pos, pos + n)
    pos += n
    f.push(shared.subarray(0, n))
    for (let k = take(read); k > 0 && next(); k--);
    f.release()
    shared.fill(0xee)
    const l = last as { bytes: Uint8Array; i: number } | null
    if (l !== null) assert.deepEqual(Buffer.from(l.bytes), expected[l.i], `frame ${l.i} after the release`)
    read++
  }
  while (next());
  return got
}

test('frames survive any split of the stream into reads of one overwritten buffer', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 8 }),
      fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 10 }),
      fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 5 }),
      (payloads, cuts, takes) => {
        const expected = payloads.map((p) => Buffer.from(p))
        const f = new ReadBufferFrames(1000)
        const got = feed(
          f,
          Buffer.concat(payloads.map(frame)),
          cuts,
          expected,
          (i) => takes[i % takes.length],
        )
        assert.equal(got, payloads.length)
        assert.equal(f.buffered, 0)
      },
    ),
  )
})

test('a stream split into two reads at every byte boundary gives the same frames', () => {
  // Small frames (Node's pool), one in the reused buffer's range and one that is empty.
  const payloads = [
    Buffer.from('abc'),
    Buffer.alloc(REUSED_FRAME_MIN_BYTES + 100, 7),
    Buffer.alloc(0),
    Buffer.alloc(300, 9),
    Buffer.alloc(REUSED_FRAME_MIN_BYTES, 3),
  ]
  const stream = Buffer.concat(payloads.map(frame))
  for (let cut = 1; cut < stream.length; cut++) {
    const f = new ReadBufferFrames(1 << 20)
    const got = feed(f, stream, [cut, stream.length - cut], payloads)
    assert.equal(got, payloads.length, `split at ${cut}`)
    assert.equal(f.buffered, 0, `split at ${cut}`)
  }
})

test('frames of 4 KiB and more are copied into one reused buffer, a new one once a frame is kept', () => {
  const f = new ReadBufferFrames(1 << 20)
  const shared = Buffer.alloc(64 * 1024)
  const read = (bytes: Buffer): Uint8Array | null => {
    bytes.copy(shared)
    f.push(shared.subarray(0, bytes.length))
    const out = f.next()
    f.release()
    shared.fill(0xee)
    return out
  }
  const payload = (fill: number) => Buffer.alloc(8000, fill)
  const first = read(frame(payload(1)))
  assert.ok(first !== null)
  assert.notEqual(first.buffer, shared.buffer, 'a copy, not a view of the read buffer')
  const second = read(frame(payload(2)))
  assert.ok(second !== null)
  assert.equal(second.buffer, first.buffer, 'the same buffer')
  f.keep()
  // One that spans reads comes out of the same kind of buffer.
  const bytes = frame(payload(3))
  assert.equal(read(bytes.subarray(0, 5000)), null)
  const third = read(bytes.subarray(5000))
  assert.ok(third !== null)
  assert.notEqual(third.buffer, second.buffer, 'a kept frame keeps its buffer')
  assert.deepEqual(Buffer.from(second), payload(2), 'the kept frame is intact')
  assert.deepEqual(Buffer.from(third), payload(3))
  // Small frames are slices of Node's shared pool, not the reused buffer.
  const small = read(frame(Buffer.alloc(100, 6)))
  assert.ok(small !== null)
  assert.notEqual(small.buffer, third.buffer)
  assert.deepEqual(Buffer.from(small), Buffer.alloc(100, 6))
})

test('oversized and negative sizes are refused with Kafka texts, also when the prefix spans reads', () => {
  const refuse = (chunks: number[][], message: RegExp) => {
    const f = new ReadBufferFrames(10)
    let error: unknown = null
    for (const c of chunks) {
      f.push(Buffer.from(c))
      try {
        while (f.next() !== null);
      } catch (e) {
        error = e
      }
      f.release()
    }
    assert.ok(error instanceof FrameError, String(error))
    assert.match(error.message, message)
  }
  refuse([[0, 0, 0, 11]], /^Invalid receive \(size = 11 larger than 10\)$/)
  refuse(
    [
      [0, 0],
      [0, 11],
    ],
    /^Invalid receive \(size = 11 larger than 10\)$/,
  )
  refuse([[0xff], [0xff, 0xff, 0xff]], /^Invalid receive \(size = -1\)$/)
  const h = new ReadBufferFrames(10)
  h.push(Buffer.from([0, 0, 0, 10, 1, 2]))
  assert.equal(h.next(), null, 'an allowed size waits for its bytes')
  h.release()
  assert.equal(h.buffered, 6)
})

test('a read pushed before the last one was released is refused', () => {
  const f = new ReadBufferFrames(10)
  f.push(Buffer.from([0, 0]))
  assert.throws(() => f.push(Buffer.from([0, 1])), /released/)
})
