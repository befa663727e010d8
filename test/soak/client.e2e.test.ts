// The soak's connections stamp an answer's arrival before any answer read in the same turn of the
// loop is decoded and handled, on its own connection or another: a slow handler of one connection's
// answer does not show in the latency of another connection's answer that was already there.
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
