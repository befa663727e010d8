// Requests a client chooses badly: partition counts beyond the limits, values the response cannot
// carry, values the handler cannot serve. Each is answered with Kafka's error (INVALID_PARTITIONS,
// POLICY_VIOLATION, INVALID_REQUEST, …) and the connection stays open; nothing is logged as an
// unexpected error. The hex frames are the reproductions of the reports, size prefix included.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Writable } from 'node:stream'
import { ErrorCode } from '../../src/protocol/errors.js'
import { createLogger } from '../../src/server/logger.js'
import { startTestServer, type TestServer } from './harness.js'
import { decodeResponse, FrameConnection, openSocket, rawFrame, requestFrame } from './wire-client.js'

class Conn extends FrameConnection {
  static async open(port: number): Promise<Conn> {
    return new Conn(await openSocket(port))
  }
  /** Sends one frame and decodes its answer; fails when the server closes the connection instead. */
  async send<T = Record<string, unknown>>(apiKey: number, version: number, frame: Buffer): Promise<T> {
    this.write(frame)
    const f = await this.nextFrame()
    if (f === null) throw new Error('connection closed by the server')
    return decodeResponse<T>(apiKey, version, f).body
  }
  async call<T = Record<string, unknown>>(apiKey: number, version: number, body: unknown): Promise<T> {
    return this.send<T>(apiKey, version, requestFrame(apiKey, version, 7, body))
  }
  /** `body` with `@@LONG@@` in one compact string field, sent with `long` there instead. */
  async callLong<T = Record<string, unknown>>(
    apiKey: number,
    version: number,
    body: unknown,
    long: string,
  ): Promise<T> {
    return this.send<T>(apiKey, version, withLongCompactString(requestFrame(apiKey, version, 7, body), long))
  }
  /** The connection still answers: an ApiVersions round trip. */
  async stillOpen(): Promise<void> {
    const r = await this.call<{ errorCode: number }>(18, 3, {
      clientSoftwareName: 'test',
      clientSoftwareVersion: '1',
    })
    assert.equal(r.errorCode, ErrorCode.NONE)
  }
}

const hex = (s: string) => Buffer.from(s, 'hex')

function uvarint(n: number): Buffer {
  const out: number[] = []
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80)
    n >>>= 7
  }
  out.push(n)
  return Buffer.from(out)
}

/**
 * The writer refuses strings above 32767 bytes, as Kafka's does; a client's decoder need not. This
 * frames the request with the compact string `@@LONG@@` and puts `value` in its place.
 */
function withLongCompactString(frame: Buffer, value: string): Buffer {
  const marker = Buffer.from('@@LONG@@')
  const at = frame.indexOf(marker)
  assert.ok(at > 0 && frame[at - 1] === marker.length + 1)
  const out = Buffer.concat([
    frame.subarray(0, at - 1),
    uvarint(Buffer.byteLength(value) + 1),
    Buffer.from(value),
    frame.subarray(at + marker.length),
  ])
  out.writeInt32BE(out.length - 4, 0)
  return out
}

/** Every line the server logs, parsed. */
function capturingLogger() {
  const lines: { level: string; msg: string }[] = []
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l !== '') lines.push(JSON.parse(l))
      cb()
    },
  })
  return { logger: createLogger({ level: 'debug', destination }), lines }
}

interface TopicResult {
  name: string
  errorCode: number
  errorMessage: string | null
}

describe('limits and requests the handler cannot serve', () => {
  let ts: TestServer
  let c: Conn
  const captured = capturingLogger()

  before(async () => {
    ts = await startTestServer(
      {
        'topic.max.partitions': '1000',
        'max.partitions': '1500',
        'group.initial.rebalance.delay.ms': '0',
        // Limits, not storage: thousands of partition logs in memory; no topic made by Metadata.
        'log.storage': 'memory',
        'auto.create.topics.enable': 'false',
      },
      { logger: captured.logger },
    )
    c = await Conn.open(ts.port)
  })
  after(async () => {
    c.close()
    await ts.stop()
  })

  it('CreateTopics with 2147483647 partitions is refused before anything is allocated; Metadata answers at once', async () => {
    const created = await c.send<{ topics: TopicResult[] }>(
      19,
      2,
      hex('000000240013000200000001ffff000000010001747fffffffffff0000000000000000000003e800'),
    )
    assert.deepEqual(created.topics, [
      {
        ...created.topics[0],
        name: 't',
        errorCode: ErrorCode.POLICY_VIOLATION,
        errorMessage: 'Excessively large number of partitions per request.',
      },
    ])
    const started = Date.now()
    const md = await c.send<{ topics: TopicResult[] }>(
      3,
      1,
      hex('000000110003000100000001ffff00000001000174'),
    )
    assert.ok(Date.now() - started < 1000)
    assert.equal(md.topics[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
  })

  it('topic.max.partitions: INVALID_PARTITIONS naming the limit; max.partitions: POLICY_VIOLATION naming it', async () => {
    const create = (name: string, numPartitions: number) =>
      c.call<{ topics: TopicResult[] }>(19, 7, {
        topics: [{ name, numPartitions, replicationFactor: -1, assignments: [], configs: [] }],
        timeoutMs: 1000,
      })
    const tooMany = await create('big', 1001)
    assert.equal(tooMany.topics[0]!.errorCode, ErrorCode.INVALID_PARTITIONS)
    assert.equal(
      tooMany.topics[0]!.errorMessage,
      "Topic 'big' would have 1001 partitions, above the limit of 1000 (topic.max.partitions).",
    )
    assert.equal((await create('at-limit', 1000)).topics[0]!.errorCode, ErrorCode.NONE)
    const over = await create('over-total', 501)
    assert.equal(over.topics[0]!.errorCode, ErrorCode.POLICY_VIOLATION)
    assert.equal(
      over.topics[0]!.errorMessage,
      "Adding 501 partition(s) for topic 'over-total' would bring the server to 1501 partitions, above the limit of 1500 (max.partitions).",
    )
    // Topics of one request count together.
    const two = await c.call<{ topics: TopicResult[] }>(19, 7, {
      topics: [
        { name: 'x1', numPartitions: 300, replicationFactor: -1, assignments: [], configs: [] },
        { name: 'x2', numPartitions: 300, replicationFactor: -1, assignments: [], configs: [] },
      ],
      timeoutMs: 1000,
    })
    assert.deepEqual(
      two.topics.map((t) => t.errorCode),
      [ErrorCode.NONE, ErrorCode.POLICY_VIOLATION],
    )
    assert.equal(ts.server.context.topics.totalPartitions, 1300)
  })

  it('checkPartitionLimits serves a partition increase (CreatePartitions)', () => {
    const topics = ts.server.context.topics
    assert.equal(topics.checkPartitionLimits('at-limit', 1000, 0), null)
    assert.equal(topics.checkPartitionLimits('x1', 500, 200), null)
    assert.deepEqual(topics.checkPartitionLimits('x1', 501, 201), {
      error: 'POLICY_VIOLATION',
      message:
        "Adding 201 partition(s) for topic 'x1' would bring the server to 1501 partitions, above the limit of 1500 (max.partitions).",
    })
    assert.equal(topics.checkPartitionLimits('x1', 1001, 701)?.error, 'INVALID_PARTITIONS')
  })

  it('Metadata v10 with a null topic name: INVALID_REQUEST, the name echoed as ""', async () => {
    const md = await c.send<{ topics: TopicResult[] }>(
      3,
      10,
      hex(
        '0000003c0003000a0000017200056b66757a7a00036ba7b8109dad11d180b400c04fd430c80459756a000000000000618d388d90524d9bbc8200000000000000',
      ),
    )
    assert.deepEqual(
      md.topics.map((t) => [t.name, t.errorCode]),
      [
        ['Yuj', ErrorCode.INVALID_REQUEST],
        ['', ErrorCode.INVALID_REQUEST],
      ],
    )
    await c.stillOpen()
  })

  it('Metadata v13 with a null name and a zero topic id: INVALID_REQUEST', async () => {
    const md = await c.send<{ topics: TopicResult[] }>(
      3,
      13,
      hex('000000260003000d00003b1e00056b66757a7a0002000000000000000000000000000000000000000100'),
    )
    assert.deepEqual(
      md.topics.map((t) => [t.name, t.errorCode]),
      [['', ErrorCode.INVALID_REQUEST]],
    )
    await c.stillOpen()
  })

  it('JoinGroup naming one protocol twice: INVALID_REQUEST at once', async () => {
    const r = await c.send<{ errorCode: number }>(
      11,
      5,
      hex(
        '0000002f000b000500000001ffff00016700001770000027100000000169000163000000020001700000000000017000000000',
      ),
    )
    assert.equal(r.errorCode, ErrorCode.INVALID_REQUEST)
    await c.stillOpen()
  })

  it('OffsetCommit v2 with RetentionTimeMs = INT64_MAX stores the offset', async () => {
    const created = await c.call<{ topics: TopicResult[] }>(19, 7, {
      topics: [{ name: 't', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE)
    const r = await c.send<{ topics: { partitions: { errorCode: number }[] }[] }>(
      8,
      2,
      hex(
        '000000340008000200000007ffff000167ffffffff00007fffffffffffffff00000001000174000000010000000000000000000000050000',
      ),
    )
    assert.equal(r.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE)
    const fetched = await c.call<{
      topics: { partitions: { committedOffset: bigint; errorCode: number }[] }[]
    }>(9, 2, { groupId: 'g', requireStable: false, topics: [{ name: 't', partitionIndexes: [0] }] })
    assert.equal(fetched.topics[0]!.partitions[0]!.committedOffset, 5n)
  })

  it('ListOffsets with isolation level 7: INVALID_REQUEST, nothing logged as an error', async () => {
    const before = captured.lines.length
    const r = await c.call<{ topics: { partitions: { errorCode: number }[] }[] }>(2, 5, {
      replicaId: -1,
      isolationLevel: 7,
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
    })
    assert.equal(r.topics[0]!.partitions[0]!.errorCode, ErrorCode.INVALID_REQUEST)
    assert.deepEqual(
      captured.lines.slice(before).filter((l) => l.level === 'error' || l.level === 'fatal'),
      [],
    )
  })

  describe('a request string longer than a response can carry is INVALID_REQUEST, the connection stays open', () => {
    const long = 'x'.repeat(40_000)

    it('StreamsGroupHeartbeat (compact string member id)', async () => {
      const r = await c.callLong<{ errorCode: number }>(
        88,
        0,
        {
          groupId: 'sg',
          memberId: '@@LONG@@',
          memberEpoch: 0,
          rebalanceTimeoutMs: 1000,
          topology: { epoch: 0, subtopologies: [] },
          activeTasks: [],
          standbyTasks: [],
          warmupTasks: [],
        },
        long,
      )
      assert.equal(r.errorCode, ErrorCode.INVALID_REQUEST)
      await c.stillOpen()
    })

    it('JoinGroup v6 (compact string group instance id)', async () => {
      const r = await c.callLong<{ errorCode: number }>(
        11,
        6,
        {
          groupId: 'jg',
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 10_000,
          memberId: '',
          groupInstanceId: '@@LONG@@',
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: new Uint8Array() }],
        },
        long,
      )
      assert.equal(r.errorCode, ErrorCode.INVALID_REQUEST)
      await c.stillOpen()
    })

    it('ListOffsets v6 (compact string topic name)', async () => {
      const r = await c.callLong<{ topics: { name: string; partitions: { errorCode: number }[] }[] }>(
        2,
        6,
        {
          replicaId: -1,
          topics: [
            { name: '@@LONG@@', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] },
          ],
        },
        long,
      )
      assert.deepEqual(
        r.topics.map((t) => [t.name, t.partitions[0]!.errorCode]),
        [['', ErrorCode.INVALID_REQUEST]],
      )
      await c.stillOpen()
    })

    it('ListOffsets v5: 20000 bytes that are not UTF-8 grow to 60000 once decoded', async () => {
      // ReplicaId, IsolationLevel, one topic whose name is 20000 bytes of 0xff, and its partition:
      // index 0, CurrentLeaderEpoch -1, Timestamp -1 (latest).
      const name = Buffer.alloc(20_000, 0xff)
      const body = Buffer.alloc(4 + 1 + 4 + 2 + name.length + 4 + 4 + 4 + 8)
      let o = body.writeInt32BE(-1, 0)
      o = body.writeInt8(0, o)
      o = body.writeInt32BE(1, o)
      o = body.writeInt16BE(name.length, o)
      o += name.copy(body, o)
      o = body.writeInt32BE(1, o)
      o = body.writeInt32BE(0, o)
      o = body.writeInt32BE(-1, o)
      body.writeBigInt64BE(-1n, o)
      const r = await c.send<{ topics: { name: string; partitions: { errorCode: number }[] }[] }>(
        2,
        5,
        rawFrame(2, 5, 9, body),
      )
      assert.deepEqual(
        r.topics.map((t) => [t.name, t.partitions[0]!.errorCode]),
        [['', ErrorCode.INVALID_REQUEST]],
      )
      await c.stillOpen()
    })
  })

  it('none of the above was logged as an unexpected error', () => {
    assert.deepEqual(
      captured.lines.filter((l) => l.level === 'error' || l.level === 'fatal').map((l) => l.msg),
      [],
    )
  })
})

describe('frames the server cannot read are logged at WARN when it closes the connection', () => {
  let ts: TestServer
  const captured = capturingLogger()
  before(async () => {
    ts = await startTestServer({ 'log.storage': 'memory' }, { logger: captured.logger })
  })
  after(() => ts.stop())

  const closedAfter = async (bytes: Buffer) => {
    const c = await Conn.open(ts.port)
    c.socket.write(bytes)
    await c.closed
  }
  const warned = async (pattern: RegExp) => {
    const deadline = Date.now() + 5000
    for (;;) {
      if (captured.lines.some((l) => l.level === 'warn' && pattern.test(l.msg))) return
      assert.ok(Date.now() < deadline, `no WARN line ${pattern} in ${JSON.stringify(captured.lines)}`)
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  it('a size prefix over socket.request.max.bytes (Kafka: "Unexpected error from …")', async () => {
    await closedAfter(Buffer.from([0x7f, 0xff, 0xff, 0xff]))
    await warned(
      /^Unexpected error from 127\.0\.0\.1:\d+ \(channelId=\d+\); closing connection: Invalid receive \(size = 2147483647 larger than 104857600\)$/,
    )
  })

  it('an unknown API key and a body that does not decode (Kafka: "Closing socket for …")', async () => {
    await closedAfter(rawFrame(999, 0, 1, Buffer.alloc(0)))
    await warned(/^Closing socket for 127\.0\.0\.1:\d+ because of error: unknown or unserved API key 999$/)
    // Metadata v12 whose topic array claims more entries than the frame holds.
    await closedAfter(rawFrame(3, 12, 2, Buffer.from([0x00, 0x7f, 0xff, 0xff, 0xff])))
    await warned(
      /^Closing socket for 127\.0\.0\.1:\d+ because of error: Error getting request for apiKey: Metadata, apiVersion: 12: /,
    )
  })

  it('a client that closes its connection is not a warning', async () => {
    const before = captured.lines.filter((l) => l.level === 'warn').length
    const c = await Conn.open(ts.port)
    c.close()
    await c.closed
    await new Promise((r) => setTimeout(r, 100))
    assert.equal(captured.lines.filter((l) => l.level === 'warn').length, before)
  })
})

describe('state a client can create is bounded', () => {
  let ts: TestServer
  let c: Conn

  before(async () => {
    ts = await startTestServer({
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'super.users': 'User:ANONYMOUS',
      'max.acls': '3',
      'max.acl.bytes': '40',
      'max.group.configs': '2',
    })
    c = await Conn.open(ts.port)
  })
  after(async () => {
    c.close()
    await ts.stop()
  })

  const acl = (resourceName: string, principal = 'User:alice') => ({
    resourceType: 2,
    resourceName,
    resourcePatternType: 3,
    principal,
    host: '*',
    operation: 8,
    permissionType: 3,
  })
  type Results = { results: { errorCode: number; errorMessage: string | null }[] }

  it('max.acl.bytes: an ACL with longer strings is POLICY_VIOLATION; the others are created', async () => {
    const r = await c.call<Results>(30, 3, { creations: [acl('t1'), acl('t'.repeat(40))] })
    assert.deepEqual(
      r.results.map((x) => [x.errorCode, x.errorMessage]),
      [
        [ErrorCode.NONE, null],
        [
          ErrorCode.POLICY_VIOLATION,
          "The ACL's resource name, principal and host take 51 bytes, above the limit of 40 (max.acl.bytes).",
        ],
      ],
    )
  })

  it('max.acls: a request that would store more is refused as a whole; an existing ACL still succeeds', async () => {
    const r = await c.call<Results>(30, 3, { creations: [acl('t2'), acl('t3'), acl('t4')] })
    assert.deepEqual(
      r.results.map((x) => [x.errorCode, x.errorMessage]),
      Array(3).fill([
        ErrorCode.POLICY_VIOLATION,
        'Creating 3 ACL(s) would bring the server to 4 ACLs, above the limit of 3 (max.acls).',
      ]),
    )
    const fits = await c.call<Results>(30, 3, { creations: [acl('t1'), acl('t2'), acl('t3')] })
    assert.deepEqual(
      fits.results.map((x) => x.errorCode),
      [ErrorCode.NONE, ErrorCode.NONE, ErrorCode.NONE],
    )
  })

  it('max.group.configs: configs on one group more are POLICY_VIOLATION; changing a group that has configs is not', async () => {
    const alter = (groupId: string, value: string | null) =>
      c.call<{ responses: { errorCode: number; errorMessage: string | null }[] }>(44, 1, {
        resources: [
          {
            resourceType: 32,
            resourceName: groupId,
            configs: [
              { name: 'streams.num.standby.replicas', configOperation: value === null ? 1 : 0, value },
            ],
          },
        ],
        validateOnly: false,
      })
    assert.equal((await alter('g1', '1')).responses[0]!.errorCode, ErrorCode.NONE)
    assert.equal((await alter('g2', '1')).responses[0]!.errorCode, ErrorCode.NONE)
    const third = await alter('g3', '1')
    assert.deepEqual(
      [third.responses[0]!.errorCode, third.responses[0]!.errorMessage],
      [
        ErrorCode.POLICY_VIOLATION,
        'Group g3 would be group 3 with configs, above the limit of 2 (max.group.configs).',
      ],
    )
    assert.equal((await alter('g2', '2')).responses[0]!.errorCode, ErrorCode.NONE)
    assert.equal((await alter('g1', null)).responses[0]!.errorCode, ErrorCode.NONE)
    assert.equal((await alter('g3', '1')).responses[0]!.errorCode, ErrorCode.NONE)
  })
})

describe('DescribeConfigs stays bounded', () => {
  let ts: TestServer
  let c: Conn

  before(async () => {
    ts = await startTestServer()
    c = await Conn.open(ts.port)
  })
  after(async () => {
    c.close()
    await ts.stop()
  })

  it('a resource named 2800 times: one shared answer, and entries beyond 100000 are POLICY_VIOLATION', async () => {
    await c.call(19, 7, {
      topics: [{ name: 'dc', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    const n = 2800
    const r = await c.call<{
      results: { errorCode: number; errorMessage: string | null; configs: unknown[] }[]
    }>(32, 4, {
      resources: Array.from({ length: n }, () => ({
        resourceType: 2,
        resourceName: 'dc',
        configurationKeys: null,
      })),
      includeSynonyms: false,
      includeDocumentation: false,
    })
    const perTopic = r.results[0]!.configs.length
    assert.ok(perTopic > 30)
    const served = Math.floor(100_000 / perTopic)
    assert.equal(r.results.length, n)
    assert.deepEqual(
      r.results.slice(served - 1, served + 1).map((x) => [x.errorCode, x.errorMessage, x.configs.length]),
      [
        [ErrorCode.NONE, null, perTopic],
        [
          ErrorCode.POLICY_VIOLATION,
          'The response would describe more than 100000 config entries; describe fewer resources per request.',
          0,
        ],
      ],
    )
  })
})
