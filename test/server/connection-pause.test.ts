// When a connection pauses its socket for a request answered later (a long poll): only once bytes
// wait behind the request. A consumer long polls one Fetch at a time and sends nothing until its
// answer, so pausing at every Fetch cost two epoll_ctl calls and a round of Node's stream code for
// nothing; a client that does send meanwhile is paused at its first read, which is kept, so it
// still costs one request and one read chunk, and its frames are answered in order.
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import { type TestContext, test } from 'node:test'
import { Connection, type DispatchResult, SizePrefixedFrames } from '../../src/server/connection.js'

/** A socket that records pauses, resumes and writes. */
class CountingSocket extends EventEmitter {
  paused = false
  pauses = 0
  resumes = 0
  readonly written: Buffer[] = []
  setNoDelay(): void {}
  setTimeout(): void {}
  cork(): void {}
  uncork(): void {}
  pause(): void {
    this.paused = true
    this.pauses++
  }
  resume(): void {
    this.paused = false
    this.resumes++
  }
  write(bytes: Buffer, callback?: () => void): boolean {
    this.written.push(Buffer.from(bytes))
    callback?.()
    return true
  }
  end(): void {}
  destroySoon(): void {}
  destroy(): void {}
}

function frame(id: number): Buffer {
  const b = Buffer.alloc(6)
  b.writeInt32BE(2, 0)
  b.writeUInt16BE(id, 4)
  return b
}

function answer(id: number): Buffer {
  return frame(id)
}

const turn = () => new Promise<void>((r) => setImmediate(r))

/**
 * The connection bounds the work of a turn by time (MS_PER_TURN) as well as by frames. These tests
 * are about pausing, not about that bound, so the clock stands still unless a test moves it.
 */
function clock(t: TestContext, msPerLook = 0): void {
  let now = 0
  t.mock.method(performance, 'now', () => {
    now += msPerLook
    return now
  })
}

function connect() {
  const socket = new CountingSocket()
  const pending = new Map<number, () => void>()
  const dispatched: number[] = []
  new Connection({
    socket: socket as unknown as Socket,
    frames: new SizePrefixedFrames(1000),
    idleTimeoutMs: 0,
    onClose: () => {},
    dispatch: (f: Uint8Array): DispatchResult => {
      const id = Buffer.from(f.buffer, f.byteOffset, f.byteLength).readUInt16BE(0)
      dispatched.push(id)
      // Even ids are long polls, answered when the test says so.
      if (id % 2 === 0) {
        return {
          kind: 'pending',
          promise: new Promise((resolve) =>
            pending.set(id, () => resolve({ kind: 'response', bytes: answer(id) })),
          ),
        }
      }
      return { kind: 'response', bytes: answer(id) }
    },
  })
  const answerLater = async (id: number) => {
    pending.get(id)?.()
    pending.delete(id)
    await turn()
  }
  return { socket, dispatched, answerLater }
}

test('a long poll with nothing sent behind it does not pause the socket', async (t) => {
  clock(t)
  const { socket, answerLater } = connect()
  for (let id = 0; id < 20; id += 2) {
    socket.emit('data', frame(id))
    await turn()
    assert.equal(socket.paused, false, `long poll ${id} in flight`)
    await answerLater(id)
  }
  assert.equal(socket.pauses, 0)
  assert.equal(socket.resumes, 0)
  assert.deepEqual(
    socket.written,
    Array.from({ length: 10 }, (_, k) => answer(2 * k)),
  )
})

test('bytes sent behind a long poll pause the socket and wait for its answer, in order', async (t) => {
  clock(t)
  const { socket, dispatched, answerLater } = connect()
  socket.emit('data', frame(0))
  await turn()
  assert.equal(socket.paused, false)
  // The client sends on: that read is kept, and pauses the socket.
  socket.emit('data', Buffer.concat([frame(1), frame(3)]))
  await turn()
  assert.equal(socket.paused, true, 'paused at the first read behind the long poll')
  assert.deepEqual(dispatched, [0], 'nothing behind the long poll is handled before its answer')
  // A frame sent in the same read as the long poll pauses it at once.
  await answerLater(0)
  assert.equal(socket.paused, false, 'reading again once answered')
  assert.deepEqual(dispatched, [0, 1, 3])
  socket.emit('data', Buffer.concat([frame(2), frame(5)]))
  await turn()
  assert.equal(socket.paused, true, 'bytes already read behind the long poll')
  assert.deepEqual(dispatched, [0, 1, 3, 2])
  await answerLater(2)
  assert.deepEqual(dispatched, [0, 1, 3, 2, 5])
  assert.deepEqual(socket.written, [0, 1, 3, 2, 5].map(answer))
  assert.equal(socket.paused, false)
})

test('a turn whose time is up pauses the socket only while frames are left for the next turn', async (t) => {
  // A slow machine: every look at the clock is two milliseconds later, past MS_PER_TURN.
  clock(t, 2)
  const { socket, dispatched } = connect()
  // Nothing left behind the answered frame: the socket keeps reading.
  socket.emit('data', frame(1))
  await turn()
  await turn()
  assert.deepEqual(dispatched, [1])
  assert.equal(socket.pauses, 0, 'nothing left to read, nothing to pause for')
  // A frame left over when the time is up waits for the next turn, the socket paused meanwhile.
  socket.emit('data', Buffer.concat([frame(3), frame(5)]))
  assert.deepEqual(dispatched, [1, 3])
  assert.equal(socket.paused, true)
  await turn()
  await turn()
  assert.deepEqual(dispatched, [1, 3, 5])
  assert.equal(socket.paused, false)
  assert.equal(socket.pauses, 1)
  assert.deepEqual(socket.written, [1, 3, 5].map(answer))
})
