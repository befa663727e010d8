// The request log (`request.log.enable`): one line per answered request over real TCP, naming the
// API, version, correlation id, client and the error codes inside the answer; written whatever
// log.level says, and nothing at all when the key is off (the default).
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { answerErrors } from '../../src/server/request-log.js'
import { createLogger } from '../../src/server/logger.js'
import { ZERO_UUID } from '../../src/server/topics/catalog.js'
import { makeBatch, produceRequest } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from './harness.js'
import { FrameConnection, openSocket, requestFrame, WireClient } from './wire-client.js'

type Line = Record<string, unknown> & { msg: string }

/** Frames written as they are, without waiting for answers (acks=0 gets none). */
class RawConnection extends FrameConnection {
  static async open(port: number): Promise<RawConnection> {
    return new RawConnection(await openSocket(port))
  }
}

function capture(): { lines: () => Line[]; stream: Writable } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk))
      cb()
    },
  })
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line)
  return { stream, lines }
}

const completed = (lines: Line[]) => lines.filter((l) => l.component === 'RequestChannel')

/** Waits until `n` request lines have been written (a close is logged after the answer is settled). */
async function requestLines(out: ReturnType<typeof capture>, n: number): Promise<Line[]> {
  for (let i = 0; i < 200 && completed(out.lines()).length < n; i++)
    await new Promise((r) => setTimeout(r, 10))
  return completed(out.lines())
}

const createTopics = (name: string) => ({
  topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
  timeoutMs: 10000,
  validateOnly: false,
})

describe('request log on', () => {
  const out = capture()
  let srv: TestServer
  before(async () => {
    srv = await startTestServer(
      { 'request.log.enable': 'true', 'auto.create.topics.enable': 'false' },
      // warn: the request log writes at INFO all the same
      { logger: createLogger({ level: 'warn', destination: out.stream }) },
    )
  })
  after(() => srv.stop())

  it('names the API, the client, the time and "no error" for a clean answer', async () => {
    const c = await WireClient.connect(srv.port)
    try {
      await c.request(18, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' })
      const [line] = await requestLines(out, 1)
      assert.match(
        line.msg,
        /^\[RequestChannel\] Completed request: ApiVersions v3 \(correlationId \d+, clientId "test"\) from 127\.0\.0\.1:\d+ in \d+\.\d\d ms: no error$/,
      )
      assert.equal(line.level, 'info')
      assert.equal(line.api, 'ApiVersions')
      assert.equal(line.apiKey, 18)
      assert.equal(line.apiVersion, 3)
      assert.equal(line.clientId, 'test')
      assert.equal(line.principal, 'User:ANONYMOUS')
      assert.equal(line.outcome, 'answered')
      assert.deepEqual(line.errors, {})
      assert.equal(typeof line.ms, 'number')
      assert.ok((line.ms as number) >= 0)
    } finally {
      c.close()
    }
  })

  it('counts the error codes inside an answer and keeps their messages', async () => {
    const c = await WireClient.connect(srv.port)
    try {
      const before = completed(out.lines()).length
      // Metadata for two topics that do not exist, auto-creation off: two partitions' worth of errors.
      await c.request(3, 12, {
        topics: [
          { name: 'absent-1', topicId: ZERO_UUID },
          { name: 'absent-2', topicId: ZERO_UUID },
        ],
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: false,
      })
      await c.request(19, 7, createTopics('logged'))
      await c.request(19, 7, createTopics('logged'))
      const lines = (await requestLines(out, before + 3)).slice(before)
      assert.equal(lines[0].api, 'Metadata')
      assert.deepEqual(lines[0].errors, { UNKNOWN_TOPIC_OR_PARTITION: 2 })
      assert.match(lines[0].msg, /: UNKNOWN_TOPIC_OR_PARTITION ×2$/)
      assert.deepEqual(lines[1].errors, {})
      assert.deepEqual(lines[2].errors, { TOPIC_ALREADY_EXISTS: 1 })
      assert.match(lines[2].msg, /: TOPIC_ALREADY_EXISTS$/)
      assert.deepEqual(lines[2].errorMessages, ["Topic 'logged' already exists."])
    } finally {
      c.close()
    }
  })

  it('says when a request got no answer (acks=0) and when its connection was closed', async () => {
    const admin = await WireClient.connect(srv.port)
    await admin.request(19, 7, createTopics('acks-zero'))
    admin.close()
    const before = completed(out.lines()).length
    const conn = await RawConnection.open(srv.port)
    try {
      const batch = makeBatch([{ key: 'k', value: 'v', timestamp: Date.now() }])
      // acks=0 to a topic that exists: appended, nothing sent back.
      conn.write(
        requestFrame(0, 9, 1, produceRequest([{ topic: 'acks-zero', partition: 0, records: batch }], 0)),
      )
      // acks=0 to a partition that does not exist: Kafka closes the connection instead of answering.
      conn.write(
        requestFrame(0, 9, 2, produceRequest([{ topic: 'acks-zero', partition: 7, records: batch }], 0)),
      )
      assert.equal(await conn.closedWithin(5000), true)
      const lines = (await requestLines(out, before + 2)).slice(before)
      assert.equal(lines.length, 2)
      assert.equal(lines[0].outcome, 'no answer')
      assert.match(
        lines[0].msg,
        /Completed request: Produce v9 \(correlationId 1, clientId "test"\).*: no answer$/,
      )
      assert.equal(lines[1].outcome, 'closed')
      assert.equal(lines[1].correlationId, 2)
      assert.equal(typeof lines[1].reason, 'string')
      assert.match(lines[1].msg, /: connection closed \(.+\)$/)
    } finally {
      conn.close()
    }
  })
})

describe('request log off (the default)', () => {
  it('writes no request line, at any log level', async () => {
    const out = capture()
    const srv = await startTestServer(
      {},
      { logger: createLogger({ level: 'trace', destination: out.stream }) },
    )
    try {
      const c = await WireClient.connect(srv.port)
      await c.request(18, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' })
      await c.request(3, 12, {
        topics: [{ name: 'absent', topicId: ZERO_UUID }],
        allowAutoTopicCreation: false,
      })
      c.close()
      assert.ok(out.lines().length > 0, 'the server logs at trace')
      assert.deepEqual(completed(out.lines()), [])
    } finally {
      await srv.stop()
    }
  })
})

describe('answerErrors', () => {
  it('walks nested answers, skips record bytes and names unknown codes by number', () => {
    const response = {
      errorCode: 0,
      errorMessage: null,
      responses: [
        {
          name: 't',
          partitions: [
            { errorCode: 6, errorMessage: 'not the leader', records: new Uint8Array([0, 1]) },
            { errorCode: 6, errorMessage: 'not the leader' },
            { errorCode: 3, errorMessage: null },
            { errorCode: 9999, errorMessage: 'odd' },
          ],
        },
      ],
    }
    assert.deepEqual(answerErrors(response), {
      codes: { NOT_LEADER_OR_FOLLOWER: 2, UNKNOWN_TOPIC_OR_PARTITION: 1, 'error code 9999': 1 },
      messages: ['not the leader', 'odd'],
    })
    assert.deepEqual(answerErrors(undefined), { codes: {}, messages: [] })
  })
})
