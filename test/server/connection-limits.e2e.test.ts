// max.connections, max.connections.per.ip and its overrides against a real listener, as Kafka's
// ConnectionQuotas enforces them: a connection above its address's limit is closed at once; at the
// broker-wide limit a new connection waits, unread, until another closes; at most
// socket.listen.backlog.size connections wait.
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { OpenClients, startTestServer, type TestServer } from './harness.js'
import { WireClient } from './wire-client.js'

const API_VERSIONS = { clientSoftwareName: 'limits', clientSoftwareVersion: '1' }

async function answers(c: WireClient): Promise<void> {
  const r = await c.request<{ errorCode: number }>(18, 3, API_VERSIONS)
  assert.equal(r.body.errorCode, ErrorCode.NONE)
}

describe('connection limits', () => {
  const servers: TestServer[] = []
  const clients = new OpenClients()
  after(async () => {
    clients.closeAll()
    for (const s of servers) await s.stop()
  })
  async function server(overrides: Record<string, string>): Promise<TestServer> {
    const s = await startTestServer({ 'coordinator.storage': 'memory', ...overrides })
    servers.push(s)
    return s
  }
  const connect = (port: number): Promise<WireClient> => clients.connect(port)

  it('max.connections.per.ip: the connection above the limit is closed at once; a freed slot serves the next', async () => {
    const s = await server({ 'max.connections.per.ip': '2' })
    const a = await connect(s.port)
    const b = await connect(s.port)
    await answers(a)
    await answers(b)
    const c = await connect(s.port)
    assert.equal(await c.closedWithin(2000), true, 'the third connection from 127.0.0.1 is closed')
    a.close()
    await a.closed
    // The slot is returned when the socket closes on the server too.
    let d: WireClient | undefined
    for (let i = 0; i < 50 && d === undefined; i++) {
      const next = await connect(s.port)
      if (await next.closedWithin(50)) continue
      d = next
    }
    assert.ok(d, 'a connection is served once one of the two closed')
    await answers(d)
    await answers(b)
  })

  it('max.connections.per.ip.overrides: 0 by default and 3 for 127.0.0.1', async () => {
    const s = await server({
      'max.connections.per.ip': '0',
      'max.connections.per.ip.overrides': '::1:7, 127.0.0.1:3',
    })
    const open = [await connect(s.port), await connect(s.port), await connect(s.port)]
    for (const c of open) await answers(c)
    const fourth = await connect(s.port)
    assert.equal(await fourth.closedWithin(2000), true)
    for (const c of open) await answers(c)
  })

  it('max.connections: a connection at the limit waits unread and is served once a slot frees', async () => {
    const s = await server({ 'max.connections': '2', 'socket.listen.backlog.size': '1' })
    const a = await connect(s.port)
    const b = await connect(s.port)
    await answers(a)
    await answers(b)
    const waiting = await connect(s.port)
    // Its request is neither answered nor refused while both slots are held.
    const pending = waiting.request<{ errorCode: number }>(18, 3, API_VERSIONS)
    let settled = false
    void pending.then(
      () => {
        settled = true
      },
      () => {
        settled = true
      },
    )
    assert.equal(await waiting.closedWithin(300), false)
    assert.equal(settled, false, 'no answer while max.connections is reached')
    // One more than socket.listen.backlog.size waiting: closed.
    const beyond = await connect(s.port)
    assert.equal(await beyond.closedWithin(2000), true)
    a.close()
    const r = await pending
    assert.equal(r.body.errorCode, ErrorCode.NONE)
    await answers(b)
  })
})

describe('connection limit overrides naming a host', () => {
  it('a host name that does not resolve stops the start, naming the key', async () => {
    await assert.rejects(
      startTestServer({
        'coordinator.storage': 'memory',
        'max.connections.per.ip.overrides': 'no-such-host.invalid:5',
      }),
      (err: Error & { key?: string }) => err.key === 'max.connections.per.ip.overrides',
    )
  })
})

describe('max.connection.creation.rate', () => {
  let s: TestServer
  const opened: WireClient[] = []
  after(async () => {
    for (const c of opened) c.close()
    await s.stop()
  })
  it('connections above the rate are admitted later, none refused', async () => {
    s = await startTestServer({
      'coordinator.storage': 'memory',
      'max.connection.creation.rate': '5',
      'quota.window.num': '2',
    })
    const t0 = performance.now()
    const clients = await Promise.all(Array.from({ length: 12 }, () => WireClient.connect(s.port)))
    opened.push(...clients)
    const answeredAt = await Promise.all(
      clients.map(async (c) => {
        await answers(c)
        return performance.now() - t0
      }),
    )
    answeredAt.sort((a, b) => a - b)
    // 5 per second over a window of at least 1 s: the first few at once, the last 12 only after
    // the acceptor has waited out the rate (over a second in all).
    assert.ok(answeredAt[0] < 1000, `first answered after ${answeredAt[0].toFixed(0)} ms`)
    assert.ok(answeredAt[11] >= 800, `last answered after ${answeredAt[11].toFixed(0)} ms`)
  })
})
