// Connections that read into one buffer shared by every connection of a server (net.Socket's
// `onread`, read-buffer.ts), over real loopback sockets with a dispatch the test controls.
import assert from 'node:assert/strict'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { test } from 'node:test'
import { Connection, type DispatchResult, FRAMES_PER_TURN } from '../../src/server/connection.js'
import { READ_BUFFER_BYTES, ReadBufferFrames, readingInto } from '../../src/server/read-buffer.js'
import { perTurn, sizePrefixed } from '../helpers/frames.js'
import { startTestServer } from './harness.js'
import { WireClient } from './wire-client.js'

const frame = sizePrefixed

async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
  assert.ok(cond())
}

interface Served {
  readonly server: Server
  readonly port: number
  /** Every read handed to a connection, with the buffer it lay in. */
  readonly reads: { bytes: number; buffer: ArrayBufferLike }[]
  readonly closed: string[]
}

/** A server whose connections read into one buffer, as the listener's plaintext connections do. */
async function serve(
  dispatch: (frame: Uint8Array) => DispatchResult,
  options: { maxFrameSize?: number; pipelined?: (frame: Uint8Array) => boolean } = {},
): Promise<Served> {
  const shared = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES)
  const reads: Served['reads'] = []
  const closed: string[] = []
  const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (accepted) => {
    let connection: Connection | null = null
    const socket = readingInto(accepted, shared, (n, buf) => {
      reads.push({ bytes: n, buffer: buf.buffer })
      connection?.receive(buf.subarray(0, n))
    })
    assert.ok(socket !== null, 'a TCP socket can read into a buffer of ours')
    const frames = new ReadBufferFrames(options.maxFrameSize ?? 1 << 20)
    connection = new Connection({
      socket,
      frames,
      reads: 'onread',
      idleTimeoutMs: 0,
      onClose: (reason) => closed.push(reason),
      pipelined: options.pipelined,
      dispatch,
    })
    socket.resume()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return { server, port: (server.address() as { port: number }).port, reads, closed }
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(s))
    s.once('error', reject)
  })
}

/** Collects size-prefixed answers. */
function answers(socket: Socket): Buffer[] {
  const out: Buffer[] = []
  let tail = Buffer.alloc(0)
  socket.on('data', (b: Buffer) => {
    tail = Buffer.concat([tail, b])
    while (tail.length >= 4 && tail.length >= 4 + tail.readInt32BE(0)) {
      const n = tail.readInt32BE(0)
      out.push(Buffer.from(tail.subarray(4, 4 + n)))
      tail = tail.subarray(4 + n)
    }
  })
  return out
}

const echo = (f: Uint8Array): DispatchResult => ({ kind: 'response', bytes: frame(f) })

test('read buffer: frames split across two reads (at every boundary within 16 bytes of a frame edge), another connection reading in between', async () => {
  const s = await serve(echo)
  const a = await open(s.port)
  const b = await open(s.port)
  const fromA = answers(a)
  const fromB = answers(b)
  try {
    // A small frame, one of the reused buffer's size, and a small one again: every frame edge is
    // within 16 bytes of the stream's start or end (test/server/read-buffer.test.ts splits a
    // stream at every boundary without sockets).
    const payloads = [Buffer.from('first'), Buffer.alloc(5000, 0xa5), Buffer.from('last')]
    payloads[1].write('middle', 100)
    const stream = Buffer.concat(payloads.map(frame))
    const other = frame(Buffer.alloc(3000, 0x5a))
    for (let cut = 1; cut < stream.length; cut += cut < 16 || stream.length - cut < 16 ? 1 : 97) {
      const readsBefore = s.reads.length
      a.write(stream.subarray(0, cut))
      // The first part is read (and released) before the other connection overwrites the buffer.
      await until(() => s.reads.length > readsBefore)
      const answeredB = fromB.length
      b.write(other)
      await until(() => fromB.length === answeredB + 1)
      a.write(stream.subarray(cut))
      await until(() => fromA.length === payloads.length)
      assert.deepEqual(fromA, payloads, `split at ${cut}`)
      assert.deepEqual(fromB[fromB.length - 1], other.subarray(4))
      fromA.length = 0
    }
    const buffers = new Set(s.reads.map((r) => r.buffer))
    assert.equal(buffers.size, 1, 'every read of both connections lay in one buffer')
  } finally {
    a.destroy()
    b.destroy()
    await new Promise<void>((r) => s.server.close(() => r()))
  }
})

test('read buffer: a muted connection does not read; it reads again once its throttle time has passed', async () => {
  const THROTTLE_MS = 1500
  const dispatched: { id: number; at: number }[] = []
  const s = await serve((f) => {
    dispatched.push({ id: f[0], at: performance.now() })
    // The first answer carries a quota's throttle: the connection is muted for that long.
    return { kind: 'response', bytes: frame(f.subarray(0, 1)), throttleMs: f[0] === 1 ? THROTTLE_MS : 0 }
  })
  const client = await open(s.port)
  const got = answers(client)
  try {
    client.write(frame(Uint8Array.from([1])))
    await until(() => got.length === 1)
    const readsWhenMuted = s.reads.length
    client.write(frame(Uint8Array.from([2])))
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(s.reads.length, readsWhenMuted, 'nothing read while muted')
    assert.deepEqual(
      dispatched.map((d) => d.id),
      [1],
    )
    await until(() => got.length === 2)
    assert.deepEqual(
      got.map((g) => g[0]),
      [1, 2],
    )
    // A timer never fires early: the second frame is served only after the throttle time.
    assert.ok(dispatched[1].at - dispatched[0].at >= THROTTLE_MS - 1, 'served after the throttle')
  } finally {
    client.destroy()
    await new Promise<void>((r) => s.server.close(() => r()))
  }
})

test('read buffer: frames before an oversized size prefix are answered, then the connection closes', async () => {
  const s = await serve(echo, { maxFrameSize: 100 })
  const client = await open(s.port)
  const got = answers(client)
  const ended = new Promise<void>((r) => client.once('end', () => r()))
  try {
    const oversized = Buffer.alloc(4)
    oversized.writeInt32BE(101)
    client.write(Buffer.concat([frame(Buffer.from('one')), frame(Buffer.from('two')), oversized]))
    await ended
    assert.deepEqual(got, [Buffer.from('one'), Buffer.from('two')])
    await until(() => s.closed.length === 1)
    assert.equal(s.closed[0], 'Invalid receive (size = 101 larger than 100)')
  } finally {
    client.destroy()
    await new Promise<void>((r) => s.server.close(() => r()))
  }
})

test('read buffer: pipelined requests answered later keep their bytes while the buffer is read into again', async () => {
  // Every request is pipelined and answered only once all are in flight, each reading its frame
  // again then; frames of several sizes, written in pieces.
  const seen: Uint8Array[] = []
  const pending: ((r: DispatchResult) => void)[] = []
  const s = await serve(
    (f) => {
      seen.push(f)
      return { kind: 'pending', promise: new Promise<DispatchResult>((resolve) => pending.push(resolve)) }
    },
    { pipelined: () => true },
  )
  const client = await open(s.port)
  const got = answers(client)
  try {
    const payloads = [8000, 100, 5000, 20_000, 3].map((n, i) => Buffer.alloc(n, i + 1))
    const stream = Buffer.concat(payloads.map(frame))
    for (let at = 0; at < stream.length; at += 3000) {
      const before = s.reads.length
      client.write(stream.subarray(at, at + 3000))
      await until(() => s.reads.length > before)
    }
    await until(() => seen.length === payloads.length)
    for (let i = 0; i < payloads.length; i++)
      assert.deepEqual(Buffer.from(seen[i]), payloads[i], `frame ${i} intact`)
    for (const [i, answer] of pending.entries())
      answer({ kind: 'response', bytes: frame(Uint8Array.from([i])) })
    await until(() => got.length === payloads.length)
    assert.deepEqual(
      got.map((g) => g[0]),
      [0, 1, 2, 3, 4],
    )
  } finally {
    client.destroy()
    await new Promise<void>((r) => s.server.close(() => r()))
  }
})

test('read buffer: a backlog read in many reads of one turn is served at most FRAMES_PER_TURN a turn, every frame intact and in order', async () => {
  // 400 frames of 20 KiB at once: a connection that stops a run keeps what it has not handled of
  // the read (the buffer is read into again for the next read, of this connection or another).
  const FRAMES = 400
  const turns = perTurn()
  let corrupt = 0
  const s = await serve((f) => {
    turns.count()
    const id = Buffer.from(f.buffer, f.byteOffset, f.byteLength).readUInt16BE(0)
    for (let i = 2; i < f.length; i++) if (f[i] !== (id & 0xff)) corrupt++
    return { kind: 'response', bytes: frame(f.subarray(0, 2)) }
  })
  const client = await open(s.port)
  const got = answers(client)
  try {
    const payload = (i: number) => {
      const p = Buffer.alloc(20 * 1024, i & 0xff)
      p.writeUInt16BE(i, 0)
      return p
    }
    client.write(Buffer.concat(Array.from({ length: FRAMES }, (_, i) => frame(payload(i)))))
    await until(() => got.length === FRAMES)
    assert.deepEqual(
      got.map((g) => g.readUInt16BE(0)),
      Array.from({ length: FRAMES }, (_, i) => i),
      'every answer, in order',
    )
    assert.equal(corrupt, 0, 'no byte of any frame changed')
    const most = turns.most()
    assert.ok(most <= FRAMES_PER_TURN, `${most} frames served in one turn`)
  } finally {
    client.destroy()
    await new Promise<void>((r) => s.server.close(() => r()))
  }
})

test('read buffer: the server counts the re-created sockets, so close completes once the clients are gone', async () => {
  const s = await serve(echo)
  const a = await open(s.port)
  const b = await open(s.port)
  const got = answers(a)
  a.write(frame(Buffer.from('x')))
  await until(() => got.length === 1)
  let count = 0
  const deadline = Date.now() + 20_000
  while (count !== 2 && Date.now() < deadline) {
    count = await new Promise<number>((resolve, reject) =>
      s.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
    )
    if (count !== 2) await new Promise((r) => setTimeout(r, 5))
  }
  assert.equal(count, 2, 'both connections counted')
  let closed = false
  s.server.close(() => {
    closed = true
  })
  a.destroy()
  b.destroy()
  await until(() => closed, 5000)
})

test('a PLAINTEXT listener reads all its connections into one buffer', async () => {
  // Every read reaches Connection.receive; with Node's own read buffers each lies in a new one.
  const connections = Connection.prototype as unknown as {
    receive: (this: Connection, chunk: Buffer) => void
  }
  const receive = connections.receive
  const buffers = new Set<ArrayBufferLike>()
  let reads = 0
  connections.receive = function (chunk) {
    buffers.add(chunk.buffer)
    reads++
    receive.call(this, chunk)
  }
  const ts = await startTestServer({ 'coordinator.storage': 'memory', 'log.storage': 'memory' })
  try {
    const a = await WireClient.connect(ts.port)
    const b = await WireClient.connect(ts.port)
    const body = { clientSoftwareName: 'test', clientSoftwareVersion: '1' }
    for (let i = 0; i < 3; i++) {
      assert.equal((await a.request<{ errorCode: number }>(18, 3, body)).body.errorCode, 0)
      assert.equal((await b.request<{ errorCode: number }>(18, 3, body)).body.errorCode, 0)
    }
    a.close()
    b.close()
    assert.ok(reads >= 6, `${reads} reads`)
    assert.equal(buffers.size, 1, 'one buffer for every read of both connections')
  } finally {
    connections.receive = receive
    await ts.stop()
  }
})
