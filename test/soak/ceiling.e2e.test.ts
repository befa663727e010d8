// The soak's ceiling in its own process (tools/soak/ceiling.ts): it answers pipelined heartbeats,
// one answer per request, which a connection that matches answers in order hands to each request
// (the answer's correlation id is always 0), and it reports its CPU time.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as p from '../../src/protocol/index.js'
import { CEILING_MEMBER_EPOCH, type CeilingProcess, startCeiling } from '../../tools/soak/ceiling.js'
import { ReconnectingClient, type Timing } from '../../tools/soak/client.js'

/** Runs `body` with a ceiling's process and a connection to it, and stops both. */
async function withCeiling(
  inOrder: boolean,
  body: (c: { ceiling: CeilingProcess; client: ReconnectingClient }) => Promise<void>,
) {
  const ceiling = await startCeiling(5000)
  const client = new ReconnectingClient(ceiling.port, undefined, inOrder)
  try {
    await client.start()
    await body({ ceiling, client })
  } finally {
    client.stop()
    await ceiling.stop()
  }
}

test('the ceiling answers every pipelined heartbeat, matched in order', { timeout: 60_000 }, () =>
  withCeiling(true, async ({ ceiling, client }) => {
    const timings: Timing[] = []
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        const timing = { sentAt: 0, receivedAt: 0 }
        timings.push(timing)
        return client.request(
          88,
          1,
          p.createStreamsGroupHeartbeatRequest({
            groupId: `g${i % 3}`,
            memberId: `m${i}`,
            memberEpoch: CEILING_MEMBER_EPOCH,
          }),
          timing,
        )
      }),
    )
    for (const r of answers) {
      assert.equal(r.errorCode, 0)
      assert.equal(r.heartbeatIntervalMs, 5000)
    }
    for (const t of timings) assert.ok(t.receivedAt > t.sentAt && t.sentAt > 0)
    assert.ok((await ceiling.cpuMs()) > 0)
  }),
)

test("matched by correlation id, the ceiling's fixed one answers no request", { timeout: 60_000 }, () =>
  withCeiling(false, async ({ client }) => {
    const r = client.request(
      88,
      1,
      p.createStreamsGroupHeartbeatRequest({ groupId: 'g', memberId: 'm', memberEpoch: 1 }),
    )
    const first = await Promise.race([
      r.then(() => 'answered'),
      new Promise((x) => setTimeout(() => x('waiting'), 500)),
    ])
    assert.equal(first, 'waiting')
  }),
)
