// The server benchmarks' ceiling (bench/server/load.ts, `bareServer`) over loopback sockets: it must
// answer every request frame however the bytes arrive, and read into one buffer as Topograph's
// listener does, so that its own reads do not bring collections into the process that holds the
// servers it bounds (BENCHMARKS.md, "OffsetCommit: the ceiling's floor").
import assert from 'node:assert/strict'
import { connect, Socket } from 'node:net'
import { test } from 'node:test'
import { bareServer, closeServer } from '../../bench/server/load.js'

const answer = Buffer.from([0, 0, 0, 6, 0, 0, 0, 1, 0, 0])

/** `count` frames with bodies of 0 to `most` bytes, one after another. */
function frames(count: number, most: number): Buffer {
  const parts: Buffer[] = []
  for (let i = 0; i < count; i++) {
    const body = Buffer.alloc((i * 397) % (most + 1), i & 0xff)
    const prefix = Buffer.alloc(4)
    prefix.writeInt32BE(body.length)
    parts.push(prefix, body)
  }
  return Buffer.concat(parts)
}

/** Sends `bytes` in pieces of the given sizes, one write a turn, and waits for `answers` answers. */
async function exchange(port: number, bytes: Buffer, pieces: (i: number) => number, answers: number) {
  const socket = connect({ host: '127.0.0.1', port })
  socket.setNoDelay(true)
  await new Promise<void>((r) => socket.once('connect', () => r()))
  let received = 0
  const done = new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received >= answers * answer.length) resolve()
    })
    socket.on('error', reject)
  })
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = Math.max(1, Math.min(pieces(i), bytes.length - at))
    socket.write(bytes.subarray(at, at + n))
    at += n
    await new Promise((r) => setImmediate(r))
  }
  await done
  socket.destroy()
  return received
}

test('bareServer answers every frame, the bytes split anywhere, size prefixes included', async () => {
  const bare = await bareServer(answer)
  try {
    // One byte at a time and three at a time (across every prefix), small frames.
    const small = frames(60, 40)
    for (const pieces of [() => 1, () => 3]) {
      const received = await exchange(bare.port, small, pieces, 60)
      assert.equal(received, 60 * answer.length)
    }
    // Frames up to 1,500 bytes in uneven pieces, and all at once (several reads of 64 KiB).
    const large = frames(300, 1500)
    for (const pieces of [(i: number) => (i * 7919) % 2100, () => large.length]) {
      const received = await exchange(bare.port, large, pieces, 300)
      assert.equal(received, 300 * answer.length)
    }
  } finally {
    await closeServer(bare.server)
  }
})

test('bareServer reads its connections into a buffer of its own, not through data events', async () => {
  const bare = await bareServer(answer)
  const on = Socket.prototype.on
  const events: string[] = []
  Socket.prototype.on = function (this: Socket, event: string, ...rest: unknown[]) {
    if (this.localPort === bare.port) events.push(event)
    return (on as (...a: unknown[]) => Socket).call(this, event, ...rest)
  } as typeof on
  try {
    const received = await exchange(bare.port, frames(50, 1500), () => 500, 50)
    assert.equal(received, 50 * answer.length)
  } finally {
    Socket.prototype.on = on
    await closeServer(bare.server)
  }
  assert.ok(events.includes('error'), `the server's side was seen: ${events.join(', ')}`)
  assert.ok(!events.includes('data'), `listened to ${events.join(', ')}`)
})
