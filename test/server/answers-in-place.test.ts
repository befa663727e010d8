// Answers written in place (AnswerOutput): a connection's answers ready at once are encoded into a
// buffer it reuses, and bytes handed to the socket must stay as they were until the socket has taken
// them. The socket here is a stand-in that keeps every write's callback until the test completes it,
// as a socket whose peer does not read would.
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import { test } from 'node:test'
import {
  type AnswerOutput,
  Connection,
  type DispatchResult,
  type LaterAnswer,
  RequestGate,
  type Settled,
  SizePrefixedFrames,
  WRITTEN,
} from '../../src/server/connection.js'

/** A socket that records what is written and completes a write only when told to. */
class HeldSocket extends EventEmitter {
  /** Every write: the bytes as handed over (a view), a copy taken then, and whether it completed. */
  readonly writes: { view: Buffer; copy: Buffer; done: boolean; callback?: () => void }[] = []
  ended = false
  setNoDelay(): void {}
  setTimeout(): void {}
  cork(): void {}
  uncork(): void {}
  pause(): void {}
  resume(): void {}
  write(bytes: Buffer, callback?: () => void): boolean {
    this.writes.push({ view: bytes, copy: Buffer.from(bytes), done: false, callback })
    return true
  }
  end(): void {
    this.ended = true
  }
  destroySoon(): void {}
  destroy(): void {}
  /** Completes every write made so far (the kernel took the bytes). */
  completeAll(): void {
    for (const w of this.writes) {
      if (w.done) continue
      w.done = true
      w.callback?.()
    }
  }
  /** Throws when bytes handed to the socket changed before their write completed. */
  checkPending(): void {
    for (const [i, w] of this.writes.entries()) {
      if (!w.done) assert.deepEqual(w.view, w.copy, `write ${i} changed before the socket took it`)
    }
  }
  /** Everything written, in order, as copies taken at write time. */
  bytes(): Buffer {
    return Buffer.concat(this.writes.map((w) => w.copy))
  }
}

function frame(id: number, answerBytes: number): Buffer {
  const b = Buffer.alloc(10)
  b.writeInt32BE(6, 0)
  b.writeUInt16BE(id, 4)
  b.writeInt32BE(answerBytes, 6)
  return b
}

/** The answer to frame `id`: size prefix, the id, then `n` bytes that depend on the id. */
function answer(id: number, n: number): Buffer {
  const b = Buffer.alloc(6 + n)
  b.writeInt32BE(2 + n, 0)
  b.writeUInt16BE(id, 4)
  for (let i = 0; i < n; i++) b[6 + i] = (id * 31 + i) & 0xff
  return b
}

test('answers written in place leave in order, and bytes handed to the socket stay until it took them', async () => {
  const socket = new HeldSocket()
  const pending = new Map<number, (r: DispatchResult) => void>()
  let inPlace = 0
  let aborted = 0
  new Connection({
    socket: socket as unknown as Socket,
    frames: new SizePrefixedFrames(1000),
    idleTimeoutMs: 0,
    onClose: () => {},
    dispatch: (f: Uint8Array, out?: AnswerOutput): DispatchResult => {
      const view = Buffer.from(f.buffer, f.byteOffset, f.byteLength)
      const id = view.readUInt16BE(0)
      const n = view.readInt32BE(2)
      // Every seventh request is answered later; every eleventh starts in place and gives up.
      if (id % 7 === 3) {
        return { kind: 'pending', promise: new Promise((resolve) => pending.set(id, resolve)) }
      }
      const w = out?.begin() ?? null
      if (w !== null && id % 11 === 5) {
        w.writeRaw(Buffer.alloc(100, 0xee))
        out!.abort()
        aborted++
      } else if (w !== null) {
        const a = answer(id, n)
        w.writeInt32(0)
        w.writeRaw(a.subarray(4))
        w.patchInt32(w.start, w.length - 4)
        out!.commit()
        inPlace++
        return WRITTEN
      }
      return { kind: 'response', bytes: answer(id, n) }
    },
  })
  // Mostly heartbeat-sized answers; some near the room an answer starts with, some larger than it,
  // some larger than the whole buffer.
  const sizes = (id: number) =>
    id % 97 === 0 ? 20_000 : id % 13 === 0 ? 5000 : id % 5 === 0 ? 900 : 40 + (id % 60)
  const expected: Buffer[] = []
  let id = 0
  // Rounds of frames, some completed by the socket between rounds and some not: a buffer still
  // being written must not be written over, one fully taken may be.
  for (let round = 0; round < 40; round++) {
    const batch: Buffer[] = []
    for (let k = 0; k < 30; k++, id++) {
      batch.push(frame(id, sizes(id)))
      expected.push(answer(id, sizes(id)))
    }
    socket.emit('data', Buffer.concat(batch))
    const want = expected.reduce((n, a) => n + a.length, 0)
    // Turns of the event loop (a run of frames goes on in setImmediate), answering what is pending.
    for (let turn = 0; turn < 1000 && socket.bytes().length < want; turn++) {
      await new Promise((r) => setImmediate(r))
      socket.checkPending()
      for (const [pid, resolve] of [...pending]) {
        pending.delete(pid)
        resolve({ kind: 'response', bytes: answer(pid, sizes(pid)) })
      }
    }
    socket.checkPending()
    if (round % 3 !== 2) socket.completeAll()
  }
  assert.deepEqual(socket.bytes(), Buffer.concat(expected), 'every answer, whole and in order')
  assert.ok(inPlace > 500, `${inPlace} answers written in place`)
  assert.ok(aborted > 0, 'some answers started in place and were given up')
  // The buffer was written again once the socket had taken it: two writes over the same bytes.
  const views = socket.writes.map((w) => w.view)
  const reused = views.some((a, i) =>
    views.some(
      (b, j) =>
        j > i &&
        a.buffer === b.buffer &&
        a.byteOffset < b.byteOffset + b.byteLength &&
        b.byteOffset < a.byteOffset + a.byteLength,
    ),
  )
  assert.ok(reused, 'the answer buffer is reused')
})

/**
 * A request answered later as the router answers it: its value settles when the test says, and the
 * connection encodes it (`answer`) when its turn comes. Counts what the connection asked of it.
 */
class Later implements LaterAnswer {
  readonly kind = 'pending'
  readonly frameFree = true
  readonly value: Promise<unknown>
  readonly id: number
  settle!: (v: unknown) => void
  reject!: (e: unknown) => void
  inPlace = 0
  ownBuffer = 0
  dropped = 0
  failed = 0
  constructor(id: number) {
    this.id = id
    this.value = new Promise((resolve, reject) => {
      this.settle = resolve
      this.reject = reject
    })
  }
  get later(): LaterAnswer {
    return this
  }
  get promise(): Promise<DispatchResult> {
    return this.value.then((v) => this.answer(v, undefined))
  }
  answer(value: unknown, out: AnswerOutput | undefined): Settled {
    const a = answer(this.id, value as number)
    const w = out?.begin() ?? null
    if (w !== null) {
      w.writeInt32(0)
      w.writeRaw(a.subarray(4))
      w.patchInt32(w.start, w.length - 4)
      out!.commit()
      this.inPlace++
      return WRITTEN
    }
    this.ownBuffer++
    return { kind: 'response', bytes: a }
  }
  fail(): Settled {
    this.failed++
    return { kind: 'response', bytes: answer(this.id, 0) }
  }
  drop(): void {
    this.dropped++
  }
}

/**
 * Turns until the connection has dispatched `n` frames: it reads a turn's frames only within its
 * time budget, so on a busy machine a burst can take more than one turn.
 */
async function untilDispatched(laters: Map<number, Later>, n: number): Promise<void> {
  for (let i = 0; i < 1000 && laters.size < n; i++) await new Promise((r) => setImmediate(r))
  assert.equal(laters.size, n, 'frames dispatched')
}

function laterConnection(socket: HeldSocket, laters: Map<number, Later>): Connection {
  return new Connection({
    socket: socket as unknown as Socket,
    frames: new SizePrefixedFrames(1000),
    idleTimeoutMs: 0,
    onClose: () => {},
    gate: new RequestGate(100),
    pipelined: () => true,
    dispatch: (f: Uint8Array): DispatchResult => {
      const id = Buffer.from(f.buffer, f.byteOffset, f.byteLength).readUInt16BE(0)
      const later = new Later(id)
      laters.set(id, later)
      return later
    },
  })
}

test('later answers that settle together are encoded in place, in order, and leave in one socket write', async () => {
  const socket = new HeldSocket()
  const laters = new Map<number, Later>()
  laterConnection(socket, laters)
  const ids = [1, 2, 3, 4, 5]
  socket.emit('data', Buffer.concat(ids.map((id) => frame(id, 0))))
  await untilDispatched(laters, 5)
  assert.deepEqual([...laters.keys()], ids, 'all five in flight together')
  // Settled in one run of the microtask queue, out of order (as one segment write releases them).
  for (const id of [3, 1, 5, 2, 4]) laters.get(id)!.settle(40 + id)
  await new Promise((r) => setImmediate(r))
  assert.equal(socket.writes.length, 1, 'one socket write for the five answers')
  assert.deepEqual(socket.bytes(), Buffer.concat(ids.map((id) => answer(id, 40 + id))), 'in order')
  for (const l of laters.values())
    assert.deepEqual([l.inPlace, l.ownBuffer], [1, 0], `answer ${l.id} in place`)

  // One that rejects is answered by `fail`, in its place among the others.
  laters.clear()
  socket.completeAll()
  socket.emit('data', Buffer.concat([frame(6, 0), frame(7, 0), frame(8, 0)]))
  await untilDispatched(laters, 3)
  laters.get(8)!.settle(48)
  laters.get(7)!.reject(new Error('no'))
  laters.get(6)!.settle(46)
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(
    socket.bytes(),
    Buffer.concat([...ids.map((id) => answer(id, 40 + id)), answer(6, 46), answer(7, 0), answer(8, 48)]),
  )
  assert.equal(laters.get(7)!.failed, 1)
})

test('a later answer whose value comes after the connection closed is dropped, never encoded', async () => {
  const socket = new HeldSocket()
  const laters = new Map<number, Later>()
  laterConnection(socket, laters)
  socket.emit('data', Buffer.concat([frame(1, 0), frame(2, 0)]))
  await untilDispatched(laters, 2)
  // 2 settles first: it waits for 1, and is dropped at the close; 1 settles after the close.
  laters.get(2)!.settle(10)
  await new Promise((r) => setImmediate(r))
  socket.emit('close')
  laters.get(1)!.settle(10)
  await new Promise((r) => setImmediate(r))
  for (const l of laters.values()) {
    assert.deepEqual([l.dropped, l.inPlace, l.ownBuffer], [1, 0, 0], `answer ${l.id} dropped once, unwritten`)
  }
  assert.equal(socket.writes.length, 0)
})
