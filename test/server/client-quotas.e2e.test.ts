// Client quotas over the wire: DescribeClientQuotas and AlterClientQuotas as Kafka answers them
// (validation, filters, authorization, durability across a restart), and enforcement: a client over
// its producer byte rate or request percentage gets ThrottleTimeMs and its connection reads nothing
// more for that long, while other clients are answered at once.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { fetchRequest, makeBatch, produceRequest } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from './harness.js'
import { decodeResponse, FrameConnection, openSocket, requestFrame } from './wire-client.js'

interface Entity {
  entityType: string
  entityName: string | null
}
interface AlterAnswer {
  entries: { errorCode: number; errorMessage: string | null; entity: Entity[] }[]
}
interface DescribeAnswer {
  throttleTimeMs: number
  errorCode: number
  errorMessage: string | null
  entries: { entity: Entity[]; values: { key: string; value: number }[] }[] | null
}

/** A connection that sends with a chosen client id. */
class Client extends FrameConnection {
  #id = 1
  readonly clientId: string
  private constructor(socket: import('node:net').Socket, clientId: string) {
    super(socket)
    this.clientId = clientId
  }
  static async open(port: number, clientId = 'test'): Promise<Client> {
    return new Client(await openSocket(port), clientId)
  }
  send(apiKey: number, version: number, body: unknown): number {
    const id = this.#id++
    this.write(requestFrame(apiKey, version, id, body, this.clientId))
    return id
  }
  async call<T>(apiKey: number, version: number, body: unknown): Promise<T> {
    this.send(apiKey, version, body)
    const f = await this.nextFrame(10_000)
    if (f === null) throw new Error('connection closed by the server')
    return decodeResponse<T>(apiKey, version, f).body
  }
  alter(
    entries: { entity: Entity[]; ops: { key: string; value?: number; remove?: boolean }[] }[],
    validateOnly = false,
  ) {
    return this.call<AlterAnswer>(49, 1, {
      entries: entries.map((e) => ({
        entity: e.entity,
        ops: e.ops.map((o) => ({ key: o.key, value: o.value ?? 0, remove: o.remove ?? false })),
      })),
      validateOnly,
    })
  }
  describe(components: { entityType: string; matchType: number; match: string | null }[], strict = false) {
    return this.call<DescribeAnswer>(48, 1, { components, strict })
  }
}

const user = (n: string | null): Entity => ({ entityType: 'user', entityName: n })
const client = (n: string | null): Entity => ({ entityType: 'client-id', entityName: n })
const ip = (n: string | null): Entity => ({ entityType: 'ip', entityName: n })

function sortedValues(d: DescribeAnswer) {
  return (d.entries ?? [])
    .map((e) => ({
      entity: [...e.entity].sort((a, b) => a.entityType.localeCompare(b.entityType)),
      values: [...e.values].sort((a, b) => a.key.localeCompare(b.key)),
    }))
    .sort((a, b) => JSON.stringify(a.entity).localeCompare(JSON.stringify(b.entity)))
}

describe('DescribeClientQuotas and AlterClientQuotas', () => {
  let s: TestServer
  let c: Client
  before(async () => {
    s = await startTestServer()
    c = await Client.open(s.port)
  })
  after(async () => {
    c.close()
    await s.stop()
  })

  it('sets quotas on users, client ids, their combination, defaults and IPs; describes them', async () => {
    const r = await c.alter([
      { entity: [user('alice')], ops: [{ key: 'producer_byte_rate', value: 1024 }] },
      { entity: [user('alice'), client('app')], ops: [{ key: 'request_percentage', value: 12.5 }] },
      { entity: [client(null)], ops: [{ key: 'consumer_byte_rate', value: 2048 }] },
      { entity: [user(null)], ops: [{ key: 'controller_mutation_rate', value: 10 }] },
      { entity: [ip('10.0.0.1')], ops: [{ key: 'connection_creation_rate', value: 5 }] },
    ])
    assert.deepEqual(
      r.entries.map((e) => e.errorCode),
      [0, 0, 0, 0, 0],
    )
    const all = await c.describe([])
    assert.equal(all.errorCode, ErrorCode.NONE)
    assert.equal(all.entries?.length, 5)
    const alice = await c.describe([{ entityType: 'user', matchType: 0, match: 'alice' }])
    assert.deepEqual(sortedValues(alice), [
      {
        entity: [client('app'), user('alice')],
        values: [{ key: 'request_percentage', value: 12.5 }],
      },
      { entity: [user('alice')], values: [{ key: 'producer_byte_rate', value: 1024 }] },
    ])
    const strict = await c.describe([{ entityType: 'user', matchType: 0, match: 'alice' }], true)
    assert.equal(strict.entries?.length, 1)
    const defaults = await c.describe([{ entityType: 'client-id', matchType: 1, match: null }])
    assert.deepEqual(sortedValues(defaults), [
      { entity: [client(null)], values: [{ key: 'consumer_byte_rate', value: 2048 }] },
    ])
    const anyUser = await c.describe([{ entityType: 'user', matchType: 2, match: null }])
    assert.equal(anyUser.entries?.length, 2, 'the named users, not the default user')
    const ips = await c.describe([{ entityType: 'ip', matchType: 2, match: null }])
    assert.deepEqual(sortedValues(ips), [
      { entity: [ip('10.0.0.1')], values: [{ key: 'connection_creation_rate', value: 5 }] },
    ])
  })

  it('removes a quota; an entity left without quotas is no longer described', async () => {
    const r = await c.alter([
      { entity: [user(null)], ops: [{ key: 'controller_mutation_rate', remove: true }] },
    ])
    assert.equal(r.entries[0].errorCode, ErrorCode.NONE)
    const d = await c.describe([{ entityType: 'user', matchType: 1, match: null }])
    assert.deepEqual(d.entries, [])
  })

  it('validateOnly checks and stores nothing', async () => {
    const r = await c.alter([{ entity: [user('bob')], ops: [{ key: 'producer_byte_rate', value: 5 }] }], true)
    assert.equal(r.entries[0].errorCode, ErrorCode.NONE)
    const d = await c.describe([{ entityType: 'user', matchType: 0, match: 'bob' }])
    assert.deepEqual(d.entries, [])
  })

  it("refuses what Kafka's controller refuses, with its messages", async () => {
    const cases: [Parameters<Client['alter']>[0][number], string][] = [
      [{ entity: [], ops: [{ key: 'producer_byte_rate', value: 1 }] }, 'Invalid empty client quota entity'],
      [
        { entity: [{ entityType: 'group', entityName: 'g' }], ops: [] },
        'Unhandled client quota entity type: group',
      ],
      [{ entity: [user('')], ops: [] }, 'Empty user not supported'],
      [
        { entity: [user('u1')], ops: [{ key: 'connection_creation_rate', value: 1 }] },
        'Invalid configuration key connection_creation_rate',
      ],
      [
        { entity: [user('u2')], ops: [{ key: 'producer_byte_rate', value: 0 }] },
        'Quota producer_byte_rate must be greater than 0',
      ],
      [
        { entity: [user('u3')], ops: [{ key: 'producer_byte_rate', value: 1.5 }] },
        'producer_byte_rate cannot be a fractional value.',
      ],
      [
        { entity: [ip('1.2.3.4')], ops: [{ key: 'connection_creation_rate', value: 3e9 }] },
        'Proposed value for connection_creation_rate is too large for an INT.',
      ],
      [
        { entity: [ip('1.2.3.4'), user('u4')], ops: [] },
        'Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId',
      ],
      [{ entity: [user('u5')], ops: [{ key: 'bogus', value: 1 }] }, 'Invalid configuration key bogus'],
    ]
    for (const [entry, message] of cases) {
      const r = await c.alter([entry])
      assert.equal(r.entries[0].errorCode, ErrorCode.INVALID_REQUEST, message)
      assert.equal(r.entries[0].errorMessage, message)
    }
    // The same entity twice: the second is refused; the first's change stands (one append).
    const twice = await c.alter([
      { entity: [user('dup')], ops: [{ key: 'producer_byte_rate', value: 7 }] },
      { entity: [user('dup')], ops: [{ key: 'consumer_byte_rate', value: 7 }] },
    ])
    assert.equal(twice.entries.length, 1)
    assert.equal(twice.entries[0].errorCode, ErrorCode.INVALID_REQUEST)
    assert.match(twice.entries[0].errorMessage ?? '', /^Ignoring duplicate entity/)
  })

  it('refuses filters Kafka refuses', async () => {
    const bad: [Parameters<Client['describe']>[0], number, string][] = [
      [
        [{ entityType: '', matchType: 0, match: 'x' }],
        ErrorCode.INVALID_REQUEST,
        'Invalid empty entity type.',
      ],
      [
        [{ entityType: 'topic', matchType: 2, match: null }],
        ErrorCode.UNSUPPORTED_VERSION,
        'Unsupported entity type topic',
      ],
      [
        [{ entityType: 'user', matchType: 0, match: null }],
        ErrorCode.INVALID_REQUEST,
        'Request specified MATCH_TYPE_EXACT, but set match string to null.',
      ],
      [
        [{ entityType: 'user', matchType: 1, match: 'x' }],
        ErrorCode.INVALID_REQUEST,
        'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.',
      ],
      [
        [{ entityType: 'user', matchType: 7, match: null }],
        ErrorCode.INVALID_REQUEST,
        'Unknown match type 7',
      ],
      [
        [
          { entityType: 'user', matchType: 2, match: null },
          { entityType: 'user', matchType: 1, match: null },
        ],
        ErrorCode.INVALID_REQUEST,
        'Entity type user cannot appear more than once in the filter.',
      ],
      [
        [
          { entityType: 'ip', matchType: 2, match: null },
          { entityType: 'user', matchType: 2, match: null },
        ],
        ErrorCode.INVALID_REQUEST,
        'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.',
      ],
    ]
    for (const [components, code, message] of bad) {
      const d = await c.describe(components)
      assert.equal(d.errorCode, code, message)
      assert.equal(d.errorMessage, message)
      assert.equal(d.entries, null)
    }
  })

  it('quotas survive a restart', async () => {
    await s.stop(true)
    s = await startTestServer({}, {}, s.dataDir)
    c.close()
    c = await Client.open(s.port)
    const alice = await c.describe([{ entityType: 'user', matchType: 0, match: 'alice' }], true)
    assert.deepEqual(sortedValues(alice), [
      { entity: [user('alice')], values: [{ key: 'producer_byte_rate', value: 1024 }] },
    ])
    // alice, alice with app, the default client id, the IP, and the first change of the duplicate.
    const all = await c.describe([])
    assert.equal(all.entries?.length, 5)
  })
})

describe('client quota authorization', () => {
  let s: TestServer
  after(async () => s.stop())
  it('CLUSTER_AUTHORIZATION_FAILED without DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster', async () => {
    s = await startTestServer(
      {},
      { authorizer: { authorize: (_p, op) => op !== 'DESCRIBE_CONFIGS' && op !== 'ALTER_CONFIGS' } },
    )
    const c = await Client.open(s.port)
    const d = await c.describe([])
    assert.equal(d.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    assert.equal(d.entries, null)
    const a = await c.alter([{ entity: [user('x')], ops: [{ key: 'producer_byte_rate', value: 1 }] }])
    assert.equal(a.entries[0].errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    assert.deepEqual(a.entries[0].entity, [user('x')])
    c.close()
  })
})

describe('client quota enforcement', () => {
  let s: TestServer
  before(async () => {
    s = await startTestServer({ 'log.storage': 'memory', 'quota.window.num': '2' })
    const admin = await Client.open(s.port, 'admin')
    await admin.call(19, 7, {
      topics: [{ name: 'q', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [] }],
      timeoutMs: 5000,
    })
    const r = await admin.alter([
      { entity: [client('slow-producer')], ops: [{ key: 'producer_byte_rate', value: 10_000 }] },
      { entity: [client('busy')], ops: [{ key: 'request_percentage', value: 0.01 }] },
      { entity: [client('slow-consumer')], ops: [{ key: 'consumer_byte_rate', value: 10_000 }] },
    ])
    assert.deepEqual(
      r.entries.map((e) => e.errorCode),
      [0, 0, 0],
    )
    admin.close()
  })
  after(async () => s.stop())

  const API_VERSIONS = { clientSoftwareName: 'q', clientSoftwareVersion: '1' }

  it('producer_byte_rate: ThrottleTimeMs in the Produce answer, the connection muted that long, others not', async () => {
    const slow = await Client.open(s.port, 'slow-producer')
    const other = await Client.open(s.port, 'other')
    const batch = makeBatch([{ key: null, value: 'x'.repeat(40_000), timestamp: Date.now() }])
    const body = produceRequest([{ topic: 'q', partition: 0, records: batch }])
    const answer = await slow.call<{
      throttleTimeMs: number
      responses: { partitionResponses: { errorCode: number }[] }[]
    }>(0, 9, body)
    assert.equal(
      answer.responses[0].partitionResponses[0].errorCode,
      ErrorCode.NONE,
      'the records are appended',
    )
    // 40 KB at 10 KB/s over a measured window of at least one second: about 3 s of throttle.
    assert.ok(answer.throttleTimeMs >= 1000, `throttleTimeMs ${answer.throttleTimeMs}`)
    const t = performance.now()
    slow.send(18, 3, API_VERSIONS)
    // The other client is answered at once meanwhile.
    const o = await other.call<{ errorCode: number; throttleTimeMs: number }>(18, 3, API_VERSIONS)
    assert.equal(o.throttleTimeMs, 0)
    const next = await slow.nextFrame(answer.throttleTimeMs + 10_000)
    assert.ok(next !== null)
    const waited = performance.now() - t
    assert.ok(
      waited >= answer.throttleTimeMs * 0.8,
      `answered after ${waited.toFixed(0)} ms, throttle ${answer.throttleTimeMs} ms`,
    )
    slow.close()
    other.close()
  })

  it('consumer_byte_rate: the Fetch answer carries its records and ThrottleTimeMs; the connection is muted', async () => {
    // The producer test above appended 40 KB to q-0.
    const consumer = await Client.open(s.port, 'slow-consumer')
    const answer = await consumer.call<{
      throttleTimeMs: number
      responses: { partitions: { errorCode: number; records: Uint8Array | null }[] }[]
    }>(1, 12, fetchRequest([{ topic: 'q', partition: 0, offset: 0 }]))
    const part = answer.responses[0].partitions[0]
    assert.equal(part.errorCode, ErrorCode.NONE)
    assert.ok((part.records?.byteLength ?? 0) > 40_000, 'the records are delivered')
    assert.ok(answer.throttleTimeMs >= 1000, `throttleTimeMs ${answer.throttleTimeMs}`)
    const t = performance.now()
    consumer.send(18, 3, API_VERSIONS)
    assert.ok((await consumer.nextFrame(answer.throttleTimeMs + 10_000)) !== null)
    assert.ok(performance.now() - t >= answer.throttleTimeMs * 0.8)
    consumer.close()
  })

  it('request_percentage: a client over its share of request time is throttled at most one window', async () => {
    const busy = await Client.open(s.port, 'busy')
    let throttle = 0
    for (let i = 0; i < 50 && throttle === 0; i++) {
      const r = await busy.call<{ throttleTimeMs: number }>(3, 12, { topics: null })
      throttle = r.throttleTimeMs
    }
    assert.ok(throttle > 0, 'a Metadata answer carries a throttle time')
    assert.ok(throttle <= 1000, `bounded by quota.window.size.seconds: ${throttle}`)
    busy.close()
  })
})

describe('connection_creation_rate', () => {
  let s: TestServer
  after(async () => s.stop())
  it('connections from an IP above its rate are held unanswered, then closed; within it they are served', async () => {
    s = await startTestServer({ 'quota.window.num': '2' })
    const admin = await Client.open(s.port, 'admin')
    const r = await admin.alter([
      { entity: [ip('127.0.0.1')], ops: [{ key: 'connection_creation_rate', value: 3 }] },
    ])
    assert.equal(r.entries[0].errorCode, ErrorCode.NONE)
    const burst = await Promise.all(Array.from({ length: 12 }, () => Client.open(s.port, 'burst')))
    const outcomes = await Promise.all(
      burst.map(async (c) => {
        c.send(18, 3, { clientSoftwareName: 'burst', clientSoftwareVersion: '1' })
        const f = await c.nextFrame(5000).catch(() => 'silent' as const)
        c.close()
        return f === null ? 'closed' : f === 'silent' ? 'silent' : 'served'
      }),
    )
    const served = outcomes.filter((o) => o === 'served').length
    const closed = outcomes.filter((o) => o === 'closed').length
    // 3 per second over a window of at least one second: a few served, the rest closed unanswered.
    assert.ok(served >= 1 && served <= 4, `served ${served}: ${outcomes.join(' ')}`)
    assert.equal(closed, 12 - served, outcomes.join(' '))
    admin.close()
  })
})
