// The soak's connections stamp an answer's arrival before any answer read in the same turn of the
// loop is decoded and handled, on its own connection or another: a slow handler of one connection's
// answer does not show in the latency of another connection's answer that was already there.
// The requests a turn makes on one connection go out in one write.
import assert from 'node:assert/strict'
import { createServer, type Server, type Socket } from 'node:net'
import { test } from 'node:test'
import * as p from '../../src/protocol/index.js'
import { ceilingAnswer } from '../../tools/soak/ceiling.js'
import { PipelinedConnection, type Timing } from '../../tools/soak/client.js'

const busy = (ms: number) => {
  const until = performance.now() + ms
  while (performance.now() < until);
}

test('two connections answered at once: both stamped before either answer is handled', {
  timeout: 30_000,
}, async () => {
  const peers: Socket[] = []
  const server: Server = createServer((s) => {
    peers.push(s)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const a = await PipelinedConnection.open(port, true)
  const b = await PipelinedConnection.open(port, true)
  try {
    while (peers.length < 2) await new Promise((r) => setTimeout(r, 5))
    // Both requests must have reached the server before it answers them together.
    let requests = 0
    const bothIn = new Promise<void>((resolve) => {
      for (const s of peers)
        s.once('data', () => {
          if (++requests === 2) resolve()
        })
    })
    const request = () =>
      p.createStreamsGroupHeartbeatRequest({ groupId: 'g', memberId: 'm', memberEpoch: 1 })
    const ta: Timing = { sentAt: 0, receivedAt: 0 }
    const tb: Timing = { sentAt: 0, receivedAt: 0 }
    const handled: number[] = []
    // Each answer's handler holds the loop for 50 ms, as a burst of answers' handling would.
    const onAnswer = () => {
      handled.push(performance.now())
      busy(50)
    }
    const answered = Promise.all([
      a.request(88, 1, request(), ta).then(onAnswer),
      b.request(88, 1, request(), tb).then(onAnswer),
    ])
    await bothIn
    // Written in one turn: both answers are in their sockets before the client's loop polls again.
    const answer = ceilingAnswer(5000)
    for (const s of peers) s.write(answer)
    await answered
    assert.equal(handled.length, 2)
    // Both stamped in the same poll, before the first handler ran (not 50 ms after it).
    const lastStamp = Math.max(ta.receivedAt, tb.receivedAt)
    assert.ok(
      lastStamp <= Math.min(...handled),
      `the second answer stamped ${(lastStamp - Math.min(...handled)).toFixed(1)} ms after the first was handled`,
    )
  } finally {
    a.close()
    b.close()
    for (const s of peers) s.destroy()
    await new Promise((r) => server.close(r))
  }
})

test('the requests of one turn go out in one write, stamped when it is made', {
  timeout: 30_000,
}, async () => {
  const chunks: Buffer[] = []
  let peer: Socket | undefined
  const server: Server = createServer((s) => {
    peer = s
    s.on('data', (c: Buffer) => chunks.push(c))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const c = await PipelinedConnection.open(port, true)
  try {
    while (peer === undefined) await new Promise((r) => setTimeout(r, 5))
    const request = (memberId: string) =>
      p.createStreamsGroupHeartbeatRequest({ groupId: 'g', memberId, memberEpoch: 1 })
    const frames = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          const all = Buffer.concat(chunks)
          let off = 0
          let seen = 0
          while (all.length - off >= 4 && all.length - off >= 4 + all.readInt32BE(off)) {
            off += 4 + all.readInt32BE(off)
            seen++
          }
          if (seen >= n) resolve()
          else setTimeout(check, 2)
        }
        check()
      })
    // Three requests in one turn, and the turn goes on for 20 ms after them.
    const timings: Timing[] = [0, 1, 2].map(() => ({ sentAt: 0, receivedAt: 0 }))
    const madeAt = performance.now()
    const first = timings.map((t, i) => c.request(88, 1, request(`m${i}`), t))
    busy(20)
    await frames(3)
    assert.equal(c.writes, 1)
    // Stamped at the write, after the turn that made them: the turn's own work is not in them.
    for (const t of timings) {
      assert.equal(t.sentAt, timings[0].sentAt)
      assert.ok(t.sentAt >= madeAt + 20, `stamped ${(t.sentAt - madeAt).toFixed(1)} ms after the requests`)
    }
    // A request of a later turn is a write of its own.
    const later = c.request(88, 1, request('m3'), { sentAt: 0, receivedAt: 0 })
    await frames(4)
    assert.equal(c.writes, 2)
    // Every request is still answered, in order.
    const answer = ceilingAnswer(5000)
    for (let i = 0; i < 4; i++) (peer as Socket).write(answer)
    const bodies = await Promise.all([...first, later])
    assert.deepEqual(
      bodies.map((b) => b.heartbeatIntervalMs),
      [5000, 5000, 5000, 5000],
    )
  } finally {
    c.close()
    peer?.destroy()
    await new Promise((r) => server.close(r))
  }
})
