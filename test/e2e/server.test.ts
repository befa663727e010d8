// End to end over real TCP against an in-process server: ApiVersions, Metadata, FindCoordinator,
// DescribeCluster, CreateTopics, DeleteTopics, pipelining, and every kind of bad input.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { decodeResponse, rawFrame, requestFrame } from '../server/wire-client.js'
import { OpenClients, startTestServer, type TestServer } from '../server/harness.js'

type Obj = Record<string, unknown>
// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

describe('server over TCP', { timeout: 60_000 }, () => {
  let ts: TestServer
  const clients = new OpenClients()
  const client = () => clients.connect(ts.port)
  before(async () => {
    ts = await startTestServer({ 'connections.max.idle.ms': '1500', 'socket.request.max.bytes': '65536' })
  })
  after(async () => {
    clients.closeAll()
    await ts.stop()
  })

  test('ApiVersions v0–v5 advertise exactly the registered handlers', async () => {
    const c = await client()
    for (let v = 0; v <= 5; v++) {
      const { body } = await c.request<AnyBody>(18, v, {
        clientSoftwareName: 'test',
        clientSoftwareVersion: '1.0',
      })
      assert.equal(body.errorCode, 0)
      const keys = body.apiKeys.map((k: Obj) => [k.apiKey, k.minVersion, k.maxVersion])
      assert.deepEqual(keys, [
        [0, 0, 13],
        [1, 4, 18],
        [2, 1, 11],
        [3, 0, 13],
        [8, 2, 10],
        [9, 1, 10],
        [10, 0, 6],
        [11, 0, 9],
        [12, 0, 4],
        [13, 0, 5],
        [14, 0, 5],
        [15, 0, 6],
        [16, 0, 5],
        [17, 0, 1],
        [18, 0, 5],
        [19, 2, 7],
        [20, 1, 6],
        [21, 0, 2],
        [22, 0, 5],
        [23, 2, 4],
        [24, 0, 5],
        [25, 0, 4],
        [26, 0, 5],
        [27, 1, 2],
        [28, 0, 6],
        [29, 1, 3],
        [30, 1, 3],
        [31, 1, 3],
        [32, 1, 4],
        [33, 0, 2],
        [35, 1, 5],
        [36, 0, 2],
        [37, 0, 3],
        [42, 0, 3],
        [43, 0, 2],
        [44, 0, 1],
        [45, 0, 1],
        [46, 0, 0],
        [47, 0, 0],
        [48, 0, 1],
        [49, 0, 1],
        [50, 0, 0],
        [51, 0, 0],
        [60, 0, 2],
        [61, 0, 0],
        [65, 0, 0],
        [66, 0, 2],
        [68, 0, 1],
        [69, 0, 1],
        [75, 0, 0],
        [88, 0, 1],
        [89, 0, 1],
        [93, 0, 0],
      ])
    }
  })

  test('ApiVersions v3+ finalizes transaction.version 2 with a non-negative epoch', async () => {
    const c = await client()
    for (let v = 3; v <= 5; v++) {
      const { body } = await c.request<AnyBody>(18, v, {
        clientSoftwareName: 'x',
        clientSoftwareVersion: '1',
      })
      assert.equal(body.finalizedFeaturesEpoch, 0n)
      assert.deepEqual(
        body.finalizedFeatures.map((f: Obj) => [f.name, f.minVersionLevel, f.maxVersionLevel]),
        [['transaction.version', 2, 2]],
      )
      // v3 leaves out supported features whose minimum is 0 (KAFKA-17492).
      assert.deepEqual(
        body.supportedFeatures.map((f: Obj) => [f.name, f.minVersion, f.maxVersion]),
        v === 3 ? [] : [['transaction.version', 0, 2]],
      )
    }
  })

  test('ApiVersions of an unknown version gets the KIP-511 v0 answer', async () => {
    const c = await client()
    c.write(rawFrame(18, 127, 77, Buffer.from([0])))
    const frame = await c.nextFrame()
    assert.ok(frame)
    const { correlationId, body } = decodeResponse<AnyBody>(18, 0, frame)
    assert.equal(correlationId, 77)
    assert.equal(body.errorCode, ErrorCode.UNSUPPORTED_VERSION)
    assert.deepEqual(
      body.apiKeys.map((k: Obj) => [k.apiKey, k.minVersion, k.maxVersion]),
      [[18, 0, 5]],
    )
    // The connection stays usable, as in Kafka.
    const again = await c.request<AnyBody>(18, 3, { clientSoftwareName: 'a', clientSoftwareVersion: 'b' })
    assert.equal(again.body.errorCode, 0)
  })

  test('ApiVersions v5 ClusterId/NodeId checks (KIP-1242)', async () => {
    const c = await client()
    const base = { clientSoftwareName: 'x', clientSoftwareVersion: '1' }
    const only = await c.request<AnyBody>(18, 5, { ...base, nodeId: 1 })
    assert.equal(only.body.errorCode, ErrorCode.INVALID_REQUEST)
    const onlyCluster = await c.request<AnyBody>(18, 5, { ...base, clusterId: ts.server.clusterId })
    assert.equal(onlyCluster.body.errorCode, ErrorCode.INVALID_REQUEST)
    const wrong = await c.request<AnyBody>(18, 5, { ...base, clusterId: 'AAAAAAAAAAAAAAAAAAAAAB', nodeId: 1 })
    assert.equal(wrong.body.errorCode, ErrorCode.REBOOTSTRAP_REQUIRED)
    const wrongNode = await c.request<AnyBody>(18, 5, { ...base, clusterId: ts.server.clusterId, nodeId: 2 })
    assert.equal(wrongNode.body.errorCode, ErrorCode.REBOOTSTRAP_REQUIRED)
    const right = await c.request<AnyBody>(18, 5, { ...base, clusterId: ts.server.clusterId, nodeId: 1 })
    assert.equal(right.body.errorCode, 0)
    const badName = await c.request<AnyBody>(18, 3, {
      clientSoftwareName: '-bad',
      clientSoftwareVersion: '1',
    })
    assert.equal(badName.body.errorCode, ErrorCode.INVALID_REQUEST)
    assert.deepEqual(badName.body.apiKeys, [])
  })

  test('Metadata v0–v13 lists the node, the cluster id and created topics', async () => {
    const c = await client()
    const created = await c.request<AnyBody>(19, 7, {
      topics: [{ name: 'meta-a', numPartitions: 3, replicationFactor: -1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)
    const topicId = created.body.topics[0].topicId
    for (let v = 0; v <= 13; v++) {
      const topics = v === 0 ? [] : null
      const { body } = await c.request<AnyBody>(3, v, { topics, allowAutoTopicCreation: v < 4 })
      assert.deepEqual(
        body.brokers.map((b: Obj) => [b.nodeId, b.host, b.port]),
        [[1, '127.0.0.1', ts.port]],
        `v${v}`,
      )
      if (v >= 2) assert.equal(body.clusterId, ts.server.clusterId)
      if (v >= 1) assert.equal(body.controllerId, 1)
      const t = body.topics.find((x: Obj) => x.name === 'meta-a')
      assert.ok(t, `v${v} lists the topic`)
      assert.equal(t.partitions.length, 3)
      assert.deepEqual(
        t.partitions.map((p: Obj) => [p.partitionIndex, p.leaderId, p.replicaNodes, p.isrNodes]),
        [
          [0, 1, [1], [1]],
          [1, 1, [1], [1]],
          [2, 1, [1], [1]],
        ],
      )
      if (v >= 10) assert.equal(t.topicId, topicId)
    }
  })

  test('Metadata: unknown topic is UNKNOWN_TOPIC_OR_PARTITION and, without AllowAutoTopicCreation, not created', async () => {
    const c = await client()
    const { body } = await c.request<AnyBody>(3, 12, {
      topics: [{ name: 'never-made', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }],
      allowAutoTopicCreation: false,
    })
    assert.equal(body.topics.length, 1)
    assert.equal(body.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    const again = await c.request<AnyBody>(3, 12, { topics: null })
    assert.ok(!again.body.topics.some((t: Obj) => t.name === 'never-made'))
    const byId = await c.request<AnyBody>(3, 12, {
      topics: [{ name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' }],
    })
    assert.equal(byId.body.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_ID)
    assert.equal(byId.body.topics[0].name, null)
  })

  test('FindCoordinator v0–v6 points at this node; v4+ batches keys', async () => {
    const c = await client()
    for (let v = 0; v <= 3; v++) {
      const { body } = await c.request<AnyBody>(10, v, { key: 'g1', keyType: 0 })
      assert.equal(body.errorCode, 0)
      assert.deepEqual([body.nodeId, body.host, body.port], [1, '127.0.0.1', ts.port])
    }
    for (let v = 4; v <= 6; v++) {
      const { body } = await c.request<AnyBody>(10, v, { keyType: 0, coordinatorKeys: ['a', 'b'] })
      assert.deepEqual(
        body.coordinators.map((x: Obj) => [x.key, x.nodeId, x.port, x.errorCode]),
        [
          ['a', 1, ts.port, 0],
          ['b', 1, ts.port, 0],
        ],
      )
    }
  })

  test('FindCoordinator key type 1 (TRANSACTION) points at this node, batched on v4+', async () => {
    const c = await client()
    for (let v = 1; v <= 3; v++) {
      const { body } = await c.request<AnyBody>(10, v, { key: 'tx1', keyType: 1 })
      assert.equal(body.errorCode, 0)
      assert.deepEqual([body.nodeId, body.port], [1, ts.port])
    }
    for (let v = 4; v <= 6; v++) {
      const { body } = await c.request<AnyBody>(10, v, { keyType: 1, coordinatorKeys: ['t1', 't2'] })
      assert.deepEqual(
        body.coordinators.map((x: Obj) => [x.key, x.nodeId, x.port, x.errorCode]),
        [
          ['t1', 1, ts.port, 0],
          ['t2', 1, ts.port, 0],
        ],
      )
    }
    const share = await c.request<AnyBody>(10, 6, { keyType: 2, coordinatorKeys: ['s'] })
    assert.equal(share.body.coordinators[0].errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE)
  })

  test('DescribeCluster v0–v2: one broker, the cluster id, endpoint type checks', async () => {
    const c = await client()
    for (let v = 0; v <= 2; v++) {
      const { body } = await c.request<AnyBody>(60, v, { includeClusterAuthorizedOperations: true })
      assert.equal(body.errorCode, 0)
      assert.equal(body.clusterId, ts.server.clusterId)
      assert.deepEqual(
        body.brokers.map((b: Obj) => [b.brokerId, b.host, b.port]),
        [[1, '127.0.0.1', ts.port]],
      )
      assert.notEqual(body.clusterAuthorizedOperations, -2147483648)
    }
    const ctrl = await c.request<AnyBody>(60, 1, { endpointType: 2 })
    assert.equal(ctrl.body.errorCode, ErrorCode.MISMATCHED_ENDPOINT_TYPE)
    const unknown = await c.request<AnyBody>(60, 1, { endpointType: 9 })
    assert.equal(unknown.body.errorCode, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE)
  })

  test('CreateTopics: Kafka errors per topic, validate-only, defaults, configs', async () => {
    const c = await client()
    const t = (name: string, extra: Obj = {}) => ({
      name,
      numPartitions: -1,
      replicationFactor: -1,
      assignments: [],
      configs: [],
      ...extra,
    })
    const { body } = await c.request<AnyBody>(19, 7, {
      topics: [
        t('ct-ok', { configs: [{ name: 'retention.ms', value: '1000' }] }),
        t('ct-bad/name'),
        t('x'.repeat(250)),
        t('.'),
        t('ct-parts', { numPartitions: 0 }),
        t('ct-rf', { replicationFactor: 3 }),
        t('ct-rf0', { replicationFactor: 0 }),
        t('ct-cfg', { configs: [{ name: 'no.such', value: '1' }] }),
        t('ct-dup'),
        t('ct-dup'),
      ],
      timeoutMs: 1000,
    })
    const byName = new Map(body.topics.map((r: AnyBody) => [r.name, r]))
    const ok: AnyBody = byName.get('ct-ok')
    assert.equal(ok.errorCode, 0)
    assert.equal(ok.numPartitions, 1)
    assert.equal(ok.replicationFactor, 1)
    assert.notEqual(ok.topicId, 'AAAAAAAAAAAAAAAAAAAAAA')
    const retention = ok.configs.find((x: Obj) => x.name === 'retention.ms')
    assert.deepEqual([retention.value, retention.configSource], ['1000', 1])
    const code = (n: string) => (byName.get(n) as AnyBody).errorCode
    assert.equal(code('ct-bad/name'), ErrorCode.INVALID_TOPIC_EXCEPTION)
    assert.equal(code('x'.repeat(250)), ErrorCode.INVALID_TOPIC_EXCEPTION)
    assert.equal(code('.'), ErrorCode.INVALID_TOPIC_EXCEPTION)
    assert.equal(code('ct-parts'), ErrorCode.INVALID_PARTITIONS)
    assert.equal(code('ct-rf'), ErrorCode.INVALID_REPLICATION_FACTOR)
    assert.equal(code('ct-rf0'), ErrorCode.INVALID_REPLICATION_FACTOR)
    assert.equal(code('ct-cfg'), ErrorCode.INVALID_CONFIG)
    assert.equal(code('ct-dup'), ErrorCode.INVALID_REQUEST)
    assert.equal(body.topics.filter((r: AnyBody) => r.name === 'ct-dup').length, 1)

    const again = await c.request<AnyBody>(19, 7, { topics: [t('ct-ok')], timeoutMs: 1000 })
    assert.equal(again.body.topics[0].errorCode, ErrorCode.TOPIC_ALREADY_EXISTS)
    assert.equal(again.body.topics[0].errorMessage, "Topic 'ct-ok' already exists.")

    const validate = await c.request<AnyBody>(19, 7, {
      topics: [t('ct-validate', { numPartitions: 4 })],
      timeoutMs: 1000,
      validateOnly: true,
    })
    assert.equal(validate.body.topics[0].errorCode, 0)
    assert.equal(validate.body.topics[0].numPartitions, 4)
    const meta = await c.request<AnyBody>(3, 12, {
      topics: [{ name: 'ct-validate', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }],
    })
    assert.equal(meta.body.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)

    // v2 (not flexible) also works.
    const v2 = await c.request<AnyBody>(19, 2, {
      topics: [t('ct-v2', { numPartitions: 2 })],
      timeoutMs: 1000,
    })
    assert.equal(v2.body.topics[0].errorCode, 0)
  })

  test('DeleteTopics by name (v1–v5) and by id (v6), with Kafka errors', async () => {
    const c = await client()
    const mk = async (name: string) => {
      const r = await c.request<AnyBody>(19, 7, {
        topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 1000,
      })
      assert.equal(r.body.topics[0].errorCode, 0)
      return r.body.topics[0].topicId as string
    }
    await mk('del-a')
    const v1 = await c.request<AnyBody>(20, 1, { topicNames: ['del-a', 'del-missing'], timeoutMs: 1000 })
    const codes = Object.fromEntries(v1.body.responses.map((r: AnyBody) => [r.name, r.errorCode]))
    assert.deepEqual(codes, { 'del-a': 0, 'del-missing': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION })

    const id = await mk('del-b')
    const v6 = await c.request<AnyBody>(20, 6, {
      topics: [
        { name: null, topicId: id },
        { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' },
        { name: 'x', topicId: id },
      ],
      timeoutMs: 1000,
    })
    const byId = v6.body.responses
    assert.ok(byId.some((r: AnyBody) => r.topicId === id && r.name === 'del-b' && r.errorCode === 0))
    assert.ok(
      byId.some(
        (r: AnyBody) => r.topicId === 'AAAAAAAAAAAAAAAAAAAAAQ' && r.errorCode === ErrorCode.UNKNOWN_TOPIC_ID,
      ),
    )
    assert.ok(byId.some((r: AnyBody) => r.name === 'x' && r.errorCode === ErrorCode.INVALID_REQUEST))
    const meta = await c.request<AnyBody>(3, 12, { topics: null })
    assert.ok(!meta.body.topics.some((t: AnyBody) => t.name === 'del-a' || t.name === 'del-b'))
  })

  test('pipelined requests are answered in request order', async () => {
    const c = await client()
    const frames: Buffer[] = []
    for (let i = 0; i < 50; i++) {
      // Alternate a sync API (ApiVersions) and an async one (CreateTopics, validate-only) so
      // completion order differs from request order.
      if (i % 2 === 0)
        frames.push(requestFrame(18, 3, 1000 + i, { clientSoftwareName: 'p', clientSoftwareVersion: '1' }))
      else {
        frames.push(
          requestFrame(19, 7, 1000 + i, {
            topics: [
              { name: `pipe-${i}`, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
            ],
            timeoutMs: 1000,
            validateOnly: true,
          }),
        )
      }
    }
    c.write(Buffer.concat(frames))
    for (let i = 0; i < 50; i++) {
      const f = await c.nextFrame()
      assert.ok(f)
      assert.equal(f.readInt32BE(0), 1000 + i)
    }
  })

  test('a frame split across many writes is reassembled', async () => {
    const c = await client()
    const frame = requestFrame(3, 12, 5, { topics: null })
    for (const byte of frame) {
      c.write(Buffer.from([byte]))
      await new Promise((r) => setImmediate(r))
    }
    const f = await c.nextFrame()
    assert.ok(f)
    assert.equal(decodeResponse<AnyBody>(3, 12, f).correlationId, 5)
  })

  describe('bad input closes only the offending connection, after answering what came before', () => {
    const expectClosedAfterOneAnswer = async (bad: Buffer) => {
      const c = await client()
      const bystander = await client()
      // A good request pipelined before the bad frame is still answered.
      c.write(
        Buffer.concat([requestFrame(18, 3, 1, { clientSoftwareName: 'a', clientSoftwareVersion: '1' }), bad]),
      )
      const first = await c.nextFrame()
      assert.ok(first, 'the earlier request is answered')
      assert.equal(first.readInt32BE(0), 1)
      assert.equal(await c.nextFrame(), null, 'then the connection is closed without an answer')
      const ok = await bystander.request<AnyBody>(18, 3, {
        clientSoftwareName: 'a',
        clientSoftwareVersion: '1',
      })
      assert.equal(ok.body.errorCode, 0)
    }

    test('unknown API key', async () => {
      await expectClosedAfterOneAnswer(rawFrame(999, 0, 2, Buffer.alloc(0)))
    })
    test('a Produce version below the served range (v2, though ApiVersions advertises 0)', async () => {
      await expectClosedAfterOneAnswer(rawFrame(0, 2, 2, Buffer.alloc(0)))
    })
    test('unsupported version of Metadata', async () => {
      await expectClosedAfterOneAnswer(rawFrame(3, 14, 2, Buffer.alloc(0)))
    })
    test('a version below the served range (CreateTopics v1)', async () => {
      await expectClosedAfterOneAnswer(rawFrame(19, 1, 2, Buffer.alloc(0)))
    })
    test('malformed body (truncated Metadata)', async () => {
      await expectClosedAfterOneAnswer(rawFrame(3, 1, 2, Buffer.from([0, 0, 0, 5, 0])))
    })
    test('absurd array length', async () => {
      await expectClosedAfterOneAnswer(rawFrame(3, 1, 2, Buffer.from([0x7f, 0xff, 0xff, 0xff])))
    })
    test('header shorter than its fixed fields', async () => {
      await expectClosedAfterOneAnswer(Buffer.from([0, 0, 0, 3, 0, 18, 0]))
    })
    test('oversized frame (above socket.request.max.bytes)', async () => {
      const big = Buffer.alloc(4)
      big.writeInt32BE(65537, 0)
      await expectClosedAfterOneAnswer(big)
    })
    test('negative frame size', async () => {
      await expectClosedAfterOneAnswer(Buffer.from([0xff, 0xff, 0xff, 0xfe]))
    })
  })

  test('a half frame that stalls is closed after connections.max.idle.ms; others keep working', async () => {
    const c = await client()
    c.write(Buffer.from([0, 0, 0, 100, 0, 18]))
    const bystander = await client()
    // The bystander stays active (every 300 ms), so idleness alone decides which one is closed.
    let answered = 0
    const keepAlive = setInterval(() => {
      bystander.request<AnyBody>(3, 1, { topics: [] }).then(
        () => answered++,
        () => undefined,
      )
    }, 300)
    try {
      assert.ok(await c.closedWithin(4000), 'stalled connection closed')
    } finally {
      clearInterval(keepAlive)
    }
    assert.ok(!bystander.isClosed, 'the active connection stays open')
    assert.ok(answered >= 3)
    const ok = await bystander.request<AnyBody>(3, 1, { topics: [] })
    assert.deepEqual(ok.body.topics, [])
  })

  test('many clients at once', async () => {
    const many = await Promise.all(Array.from({ length: 100 }, () => client()))
    const results = await Promise.all(many.map((c) => c.request<AnyBody>(3, 12, { topics: null })))
    for (const r of results) assert.equal(r.body.clusterId, ts.server.clusterId)
  })
})
