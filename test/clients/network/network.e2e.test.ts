import assert from 'node:assert/strict'
import { Buffer } from 'node:buffer'
import { after, describe, it } from 'node:test'
import {
  Connection,
  DisconnectError,
  encodeRequestFrame,
  ExponentialBackoff,
  FrameDecoder,
  KafkaError,
  NetworkClient,
  parseBootstrapServers,
  RequestState,
  TimeoutError,
  UnsupportedVersionError,
} from '../../../src/clients/network/index.js'
import { FakeBroker } from '../fake-broker.js'

const brokers: FakeBroker[] = []
async function broker(opts?: ConstructorParameters<typeof FakeBroker>[0]): Promise<FakeBroker> {
  const b = await FakeBroker.start(opts)
  brokers.push(b)
  return b
}
after(async () => {
  await Promise.all(brokers.map((b) => b.close()))
})

describe('framing', () => {
  it('splits frames across arbitrary chunk boundaries', () => {
    const frames = [
      Buffer.from([0, 0, 0, 3, 1, 2, 3]),
      Buffer.from([0, 0, 0, 0]),
      Buffer.from([0, 0, 0, 1, 9]),
    ]
    const all = Buffer.concat(frames)
    for (let split = 0; split <= all.length; split++) {
      const d = new FrameDecoder()
      const got = [...d.push(all.subarray(0, split)), ...d.push(all.subarray(split))]
      assert.deepEqual(
        got.map((b) => [...b]),
        [[1, 2, 3], [], [9]],
      )
    }
  })

  it('rejects a negative or oversized frame size', () => {
    assert.throws(() => new FrameDecoder(10).push(Buffer.from([0, 0, 0, 11])), /frame size 11/)
    assert.throws(() => new FrameDecoder().push(Buffer.from([0xff, 0xff, 0xff, 0xff])), /frame size -1/)
  })

  it('fails a v0 describe that asks for the description with Kafka message', () => {
    assert.throws(
      () =>
        encodeRequestFrame(89, 0, 1, 'c', {
          groupIds: ['g'],
          includeAuthorizedOperations: false,
          includeTopologyDescription: true,
        }),
      (e: unknown) =>
        e instanceof UnsupportedVersionError &&
        e.message === 'Attempted to write a non-default includeTopologyDescription at version 0' &&
        e.toString() ===
          'org.apache.kafka.common.errors.UnsupportedVersionException: Attempted to write a non-default includeTopologyDescription at version 0',
    )
  })

  it('writes the request header v2 for flexible versions and v1 otherwise', () => {
    const flex = encodeRequestFrame(89, 1, 7, 'ab', {
      groupIds: ['g'],
      includeAuthorizedOperations: true,
      includeTopologyDescription: true,
    })
    // size, key 89, version 1, correlation 7, clientId int16 length 2 "ab", empty tag section, body
    assert.deepEqual([...flex.subarray(4)], [0, 89, 0, 1, 0, 0, 0, 7, 0, 2, 97, 98, 0, 2, 2, 0x67, 1, 1, 0])
    assert.equal(flex.readInt32BE(0), flex.length - 4)
    const plain = encodeRequestFrame(42, 0, 1, null, { groupsNames: [] })
    assert.deepEqual([...plain.subarray(4, 14)], [0, 42, 0, 0, 0, 0, 0, 1, 0xff, 0xff])
  })
})

describe('bootstrap servers', () => {
  it('parses host:port lists and bracketed IPv6', () => {
    assert.deepEqual(parseBootstrapServers('a:1, b:9092'), [
      { host: 'a', port: 1 },
      { host: 'b', port: 9092 },
    ])
    assert.deepEqual(parseBootstrapServers(['[::1]:9092']), [{ host: '::1', port: 9092 }])
  })
  it('rejects bad entries with a clear message', () => {
    assert.throws(() => parseBootstrapServers('localhost'), /Invalid url in bootstrap.servers: localhost/)
    assert.throws(() => parseBootstrapServers('h:70000'), /Invalid url/)
    assert.throws(() => parseBootstrapServers(' , '), /No bootstrap servers/)
  })
})

describe('back-off', () => {
  it('grows exponentially with jitter and is capped', () => {
    const fixed = new ExponentialBackoff({ initialMs: 100, maxMs: 1000, random: () => 0.5 })
    assert.deepEqual(
      [0, 1, 2, 3, 4, 10].map((n) => fixed.backoff(n)),
      [100, 200, 400, 800, 1000, 1000],
    )
    const low = new ExponentialBackoff({ initialMs: 100, maxMs: 1000, random: () => 0 })
    assert.equal(low.backoff(0), 80)
    const high = new ExponentialBackoff({ initialMs: 100, maxMs: 1000, random: () => 0.9999 })
    assert.equal(high.backoff(1), 239)
  })

  it('RequestState allows one request in flight and waits out the back-off', () => {
    const s = new RequestState(new ExponentialBackoff({ initialMs: 100, maxMs: 1000, random: () => 0.5 }))
    assert.equal(s.canSendRequest(0), true)
    s.onSendAttempt(0)
    assert.equal(s.canSendRequest(0), false)
    s.onFailedAttempt(10)
    assert.equal(s.remainingBackoffMs(10), 100)
    assert.equal(s.canSendRequest(109), false)
    assert.equal(s.canSendRequest(110), true)
    s.onSendAttempt(110)
    s.onFailedAttempt(120)
    assert.equal(s.remainingBackoffMs(120), 200)
    s.onSendAttempt(400)
    s.onSuccessfulAttempt(400)
    assert.equal(s.remainingBackoffMs(400), 100)
  })
})

describe('connection', () => {
  it('negotiates the highest common version per API', async () => {
    const b = await broker({
      apiVersions: new Map([
        [18, { min: 0, max: 4 }],
        [89, { min: 0, max: 0 }],
        [42, { min: 0, max: 7 }],
      ]),
    })
    const c = await Connection.open({ host: '127.0.0.1', port: b.port })
    try {
      assert.equal(b.requestsOf(18).at(-1)?.version, 4)
      assert.equal(c.negotiateVersion(89), 0)
      assert.equal(c.negotiateVersion(42), 3)
      assert.equal(c.negotiateVersion(42, 2), 2)
      assert.throws(() => c.negotiateVersion(88), UnsupportedVersionError)
    } finally {
      c.close()
    }
  })

  it('falls back to the broker ApiVersions range (KIP-511)', async () => {
    const b = await broker()
    b.apiVersions.set(18, { min: 0, max: 2 })
    const c = await Connection.open({ host: '127.0.0.1', port: b.port })
    try {
      assert.deepEqual(
        b.requestsOf(18).map((r) => r.version),
        [5, 2],
      )
      assert.equal(c.negotiateVersion(18), 2)
    } finally {
      c.close()
    }
  })

  it('pipelines requests and matches responses by correlation id', async () => {
    const b = await broker()
    let n = 0
    b.on(16, () => ({ groups: [{ groupId: `g${n++}`, protocolType: '', groupState: '', groupType: '' }] }))
    const c = await Connection.open({ host: '127.0.0.1', port: b.port })
    try {
      const rs = await Promise.all(
        [0, 1, 2, 3, 4].map(() => c.send(16, { statesFilter: [], typesFilter: [] })),
      )
      assert.deepEqual(
        rs.map((r) => r.groups[0]!.groupId),
        ['g0', 'g1', 'g2', 'g3', 'g4'],
      )
      const ids = b.requestsOf(16).map((r) => r.header.correlationId)
      assert.equal(new Set(ids).size, 5)
    } finally {
      c.close()
    }
  })

  it('times out an unanswered request and closes the connection', async () => {
    const b = await broker()
    b.on(16, () => 'drop')
    const c = await Connection.open({ host: '127.0.0.1', port: b.port, requestTimeoutMs: 100 })
    await assert.rejects(c.send(16, { statesFilter: [], typesFilter: [] }), TimeoutError)
    assert.equal(c.closed, true)
  })

  it('fails pending requests with a retriable DisconnectError when the broker closes', async () => {
    const b = await broker()
    b.on(16, () => 'close')
    const c = await Connection.open({ host: '127.0.0.1', port: b.port })
    await assert.rejects(c.send(16, { statesFilter: [], typesFilter: [] }), (e: unknown) => {
      return e instanceof DisconnectError && e.retriable
    })
  })

  it('with ssl options a refused connection is still a retriable DisconnectError', async () => {
    await assert.rejects(Connection.open({ host: '127.0.0.1', port: 1, ssl: {} }), DisconnectError)
  })

  it('reports a refused connection as a DisconnectError', async () => {
    const b = await broker()
    const port = b.port
    await b.close()
    brokers.splice(brokers.indexOf(b), 1)
    await assert.rejects(Connection.open({ host: '127.0.0.1', port }), DisconnectError)
  })
})

describe('network client', () => {
  it('reads metadata and batches FindCoordinator from v4', async () => {
    const b = await broker()
    const client = new NetworkClient({ bootstrapServers: `127.0.0.1:${b.port}` })
    try {
      const md = await client.metadata()
      assert.equal(md.brokers[0]!.port, b.port)
      const found = await client.findCoordinators(['a', 'b'])
      assert.equal((found.get('a') as { port: number }).port, b.port)
      const fc = b.requestsOf(10)
      assert.equal(fc.length, 1)
      assert.deepEqual((fc[0]!.request as { coordinatorKeys: string[] }).coordinatorKeys, ['a', 'b'])
      // cached now
      await client.findCoordinator('a')
      assert.equal(b.requestsOf(10).length, 1)
    } finally {
      await client.close()
    }
  })

  it('sends one FindCoordinator per key before v4', async () => {
    const b = await broker()
    b.apiVersions.set(10, { min: 0, max: 3 })
    const client = new NetworkClient({ bootstrapServers: [`127.0.0.1:${b.port}`] })
    try {
      await client.findCoordinators(['a', 'b'])
      assert.deepEqual(
        b.requestsOf(10).map((r) => [(r.request as { key: string }).key, r.version]),
        [
          ['a', 3],
          ['b', 3],
        ],
      )
    } finally {
      await client.close()
    }
  })

  it('retries a retriable error, rediscovering the coordinator, then gives up at the deadline', async () => {
    const b = await broker()
    const client = new NetworkClient({
      bootstrapServers: `127.0.0.1:${b.port}`,
      retryBackoffMs: 10,
      retryBackoffMaxMs: 20,
    })
    try {
      let calls = 0
      const v = await client.withRetries(
        async () => {
          await client.findCoordinator('g')
          if (++calls < 3)
            throw new KafkaError('not coordinator', {
              code: 16,
              errorName: 'NOT_COORDINATOR',
              retriable: true,
            })
          return 'ok'
        },
        { deadline: Date.now() + 5000, operation: 'test', coordinatorKey: 'g' },
      )
      assert.equal(v, 'ok')
      assert.equal(b.requestsOf(10).length, 3)
      await assert.rejects(
        client.withRetries(
          async () => {
            throw new KafkaError('loading', { code: 14, retriable: true })
          },
          { deadline: Date.now() + 100, operation: 'loading-test' },
        ),
        (e: unknown) => e instanceof TimeoutError && /loading-test/.test(e.message),
      )
      await assert.rejects(
        client.withRetries(
          async () => {
            throw new KafkaError('fatal', { code: 69 })
          },
          { deadline: Date.now() + 5000, operation: 'x' },
        ),
        /fatal/,
      )
    } finally {
      await client.close()
    }
  })

  it('reconnects after the broker drops the connection', async () => {
    const b = await broker()
    const client = new NetworkClient({ bootstrapServers: `127.0.0.1:${b.port}` })
    try {
      await client.metadata()
      b.dropConnections()
      await new Promise((r) => setTimeout(r, 50))
      await client.metadata()
      assert.equal(b.requestsOf(18).length, 2)
    } finally {
      await client.close()
    }
  })
})
