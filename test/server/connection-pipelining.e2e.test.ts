// The connection's pipelining over a real loopback socket, with a dispatch the test controls.
import assert from 'node:assert/strict'
import { createServer, connect } from 'node:net'
import { test } from 'node:test'
import {
  Connection,
  type DispatchResult,
  FRAMES_PER_TURN,
  SizePrefixedFrames,
} from '../../src/server/connection.js'
import { perTurn } from '../helpers/frames.js'

function frame(payload: Uint8Array): Buffer {
  const b = Buffer.alloc(4 + payload.length)
  b.writeInt32BE(payload.length, 0)
  b.set(payload, 4)
  return b
}

test('Connection: pipelined requests are dispatched together and answered in order; others wait', async () => {
  type Result = DispatchResult
  const dispatched: number[] = []
  const pending = new Map<number, (r: Result) => void>()
  const server = createServer((socket) => {
    new Connection({
      socket,
      frames: new SizePrefixedFrames(1000),
      idleTimeoutMs: 0,
      onClose: () => {},
      // Payload byte 0: 1 = a pipelined request; byte 1: its id.
      pipelined: (f) => f[0] === 1,
      dispatch: (f) => {
        const id = f[1]
        dispatched.push(id)
        return { kind: 'pending', promise: new Promise<Result>((resolve) => pending.set(id, resolve)) }
      },
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as { port: number }).port
  const client = connect(port, '127.0.0.1')
  const received: number[] = []
  client.on('data', (b: Buffer) => {
    for (let o = 0; o + 5 <= b.length; o += 5) received.push(b[o + 4])
  })
  const until = async (cond: () => boolean) => {
    const deadline = Date.now() + 5000
    while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
    assert.ok(cond())
  }
  const answer = (id: number) => pending.get(id)?.({ kind: 'response', bytes: Buffer.from([0, 0, 0, 1, id]) })
  try {
    client.write(
      Buffer.concat([
        frame(Uint8Array.from([1, 1])),
        frame(Uint8Array.from([1, 2])),
        frame(Uint8Array.from([1, 3])),
        frame(Uint8Array.from([0, 4])),
        frame(Uint8Array.from([1, 5])),
      ]),
    )
    await until(() => dispatched.length === 3)
    await new Promise((r) => setTimeout(r, 20))
    assert.deepEqual(dispatched, [1, 2, 3], 'the pipelined three are in flight together; 4 waits')
    answer(3)
    answer(1)
    await until(() => received.length === 1)
    await new Promise((r) => setTimeout(r, 20))
    assert.deepEqual(received, [1], 'the answer to 3 waits for the answer to 2')
    answer(2)
    await until(() => received.length === 3)
    assert.deepEqual(received, [1, 2, 3])
    await until(() => dispatched.length === 4)
    await new Promise((r) => setTimeout(r, 20))
    assert.deepEqual(dispatched, [1, 2, 3, 4], 'a pipelined request does not join one that is not')
    answer(4)
    await until(() => dispatched.length === 5)
    answer(5)
    await until(() => received.length === 5)
    assert.deepEqual(received, [1, 2, 3, 4, 5])
  } finally {
    client.destroy()
    await new Promise<void>((r) => server.close(() => r()))
  }
})

test('Connection: a backlog read in many socket reads of one turn is still served at most FRAMES_PER_TURN a turn, answers in order', async () => {
  // 400 frames of 20 KiB sent at once: the server reads them 64 KiB at a time, and libuv reads a
  // socket with a backlog several times in one turn of the event loop. A turn ends at the check
  // phase (setImmediate), where the connection resumes a run it cut short.
  const FRAMES = 400
  const turns = perTurn()
  const server = createServer((socket) => {
    new Connection({
      socket,
      frames: new SizePrefixedFrames(1 << 20),
      idleTimeoutMs: 0,
      onClose: () => {},
      dispatch: (f) => {
        turns.count()
        return { kind: 'response', bytes: Buffer.from([0, 0, 0, 2, f[0], f[1]]) }
      },
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as { port: number }).port
  const client = connect(port, '127.0.0.1')
  const received: number[] = []
  let tail = Buffer.alloc(0)
  client.on('data', (b: Buffer) => {
    tail = Buffer.concat([tail, b])
    while (tail.length >= 6) {
      received.push(tail.readUInt16BE(4))
      tail = tail.subarray(6)
    }
  })
  try {
    const payload = (i: number) => {
      const p = Buffer.alloc(20 * 1024, 7)
      p.writeUInt16BE(i, 0)
      return p
    }
    client.write(Buffer.concat(Array.from({ length: FRAMES }, (_, i) => frame(payload(i)))))
    const deadline = Date.now() + 20_000
    while (received.length < FRAMES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    assert.deepEqual(
      received,
      Array.from({ length: FRAMES }, (_, i) => i),
      'every answer, in order',
    )
    const most = turns.most()
    assert.ok(most <= FRAMES_PER_TURN, `${most} frames served in one turn`)
  } finally {
    client.destroy()
    await new Promise<void>((r) => server.close(() => r()))
  }
})

/**
 * Three pipelined requests answered later, each frame sent in two socket writes so that it spans
 * two reads, their dispatches saying `frameFree` or not; `check` runs on the dispatched frames
 * once all three are in flight, then every request is answered.
 */
async function framesSpanningReads(
  frameFree: boolean,
  check: (seen: readonly Uint8Array[], payload: (i: number) => Buffer) => void,
): Promise<void> {
  const frames = new SizePrefixedFrames(1 << 20)
  const seen: Uint8Array[] = []
  const pending: ((r: DispatchResult) => void)[] = []
  const server = createServer((socket) => {
    new Connection({
      socket,
      frames,
      idleTimeoutMs: 0,
      onClose: () => {},
      pipelined: () => true,
      dispatch: (f) => {
        seen.push(f)
        const promise = new Promise<DispatchResult>((resolve) => pending.push(resolve))
        return { kind: 'pending', frameFree, promise }
      },
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as { port: number }).port
  const client = connect(port, '127.0.0.1')
  let received = 0
  client.on('data', (b: Buffer) => {
    received += b.length
  })
  const until = async (cond: () => boolean) => {
    const deadline = Date.now() + 20_000
    while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
    assert.ok(cond())
  }
  const payload = (i: number) => Buffer.alloc(8000, i + 1)
  try {
    for (let i = 0; i < 3; i++) {
      const bytes = frame(payload(i))
      client.write(bytes.subarray(0, 5000))
      await until(() => frames.buffered >= 5000)
      client.write(bytes.subarray(5000))
      await until(() => seen.length === i + 1)
    }
    check(seen, payload)
    for (const answer of pending) answer({ kind: 'response', bytes: Buffer.from([0, 0, 0, 1, 9]) })
    await until(() => received === 15)
  } finally {
    client.destroy()
    await new Promise<void>((r) => server.close(() => r()))
  }
}

test('Connection: a frame whose request is answered later keeps its bytes while later frames spanning reads are assembled', async () => {
  // The connection reuses one buffer for such frames only while nothing reads them after their
  // dispatch. Here every request reads its frame again once all three are in flight.
  await framesSpanningReads(false, (seen, payload) => {
    for (let i = 0; i < 3; i++) assert.deepEqual(Buffer.from(seen[i]), payload(i), `frame ${i} intact`)
  })
})

test('Connection: a request answered later that is done with its frame (frameFree) leaves its buffer to the next frame', async () => {
  // Each dispatch says it reads nothing of its frame any more (a Produce whose log copied its
  // batch): the frames are assembled in the one reused buffer, no new buffer per request.
  await framesSpanningReads(true, (seen, payload) => {
    assert.ok(
      seen.every((f) => f.buffer === seen[0].buffer),
      'every frame was assembled in the same buffer',
    )
    assert.deepEqual(Buffer.from(seen[2]), payload(2))
  })
})
