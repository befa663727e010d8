// DescribeTopicPartitions (key 75) over TCP: pages of partitions with a cursor, every topic or the
// named ones, unknown, invalid and unauthorized names, the request's limit against
// max.request.partition.size.limit, and INVALID_REQUEST for a cursor Kafka refuses.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type { DescribeTopicPartitionsResponse } from '../../src/protocol/generated/messages/DescribeTopicPartitionsResponse.js'
import type { Authorizer } from '../../src/server/router.js'
import { createTopics } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const authorizer: Authorizer = {
  authorize: (_principal, _operation, resourceType, resourceName) =>
    resourceType !== 'TOPIC' || !resourceName.startsWith('secret'),
}

let ts: TestServer
let c: WireClient

before(async () => {
  ts = await startTestServer({ 'max.request.partition.size.limit': '5' }, { authorizer })
  c = await WireClient.connect(ts.port)
  assert.deepEqual(
    await createTopics(c, [
      { name: 'dtp-a', partitions: 3 },
      { name: 'dtp-b', partitions: 4 },
      { name: 'dtp-c', partitions: 1 },
      { name: 'secret-x', partitions: 1 },
    ]),
    [0, 0, 0, 0],
  )
})
after(async () => {
  c?.close()
  await ts?.stop()
})

const describeTopics = async (
  topics: readonly string[],
  limit = 2000,
  cursor: { topicName: string; partitionIndex: number } | null = null,
) =>
  (
    await c.request<DescribeTopicPartitionsResponse>(75, 0, {
      topics: topics.map((name) => ({ name })),
      responsePartitionLimit: limit,
      cursor,
    })
  ).body

/** Each topic as `name:error:first..last partition`, and the next cursor. */
const shape = (r: DescribeTopicPartitionsResponse) => ({
  topics: r.topics.map(
    (t) =>
      `${t.name}:${t.errorCode}:${t.partitions.length === 0 ? '-' : `${t.partitions[0].partitionIndex}..${t.partitions.at(-1)?.partitionIndex}`}`,
  ),
  next: r.nextCursor === null ? null : `${r.nextCursor.topicName}/${r.nextCursor.partitionIndex}`,
})

describe('DescribeTopicPartitions', () => {
  it('describes each partition as one node leads it, with the topic id and authorized operations', async () => {
    const r = await describeTopics(['dtp-c'])
    assert.equal(r.topics.length, 1)
    const t = r.topics[0]
    assert.equal(t.errorCode, 0)
    assert.match(t.topicId, /^[A-Za-z0-9_-]{22}$/)
    assert.notEqual(t.topicId, 'AAAAAAAAAAAAAAAAAAAAAA')
    assert.equal(t.isInternal, false)
    assert.notEqual(t.topicAuthorizedOperations, -2147483648)
    assert.deepEqual(t.partitions, [
      {
        errorCode: 0,
        partitionIndex: 0,
        leaderId: 1,
        leaderEpoch: 0,
        replicaNodes: [1],
        isrNodes: [1],
        eligibleLeaderReplicas: [],
        lastKnownElr: [],
        offlineReplicas: [],
      },
    ])
    assert.equal(r.nextCursor, null)
  })

  it('pages every topic by the broker limit (5), the cursor resuming inside a topic', async () => {
    const all = (await describeTopics([])).topics.map((t) => t.name)
    assert.ok(!all.includes('secret-x'), 'an unauthorized topic is left out when every topic is asked')
    const first = shape(await describeTopics([], 2000, { topicName: 'dtp-a', partitionIndex: 0 }))
    assert.deepEqual(first, { topics: ['dtp-a:0:0..2', 'dtp-b:0:0..1'], next: 'dtp-b/2' })
    const second = shape(await describeTopics([], 2000, { topicName: 'dtp-b', partitionIndex: 2 }))
    assert.deepEqual(second.topics.slice(0, 2), ['dtp-b:0:2..3', 'dtp-c:0:0..0'])
  })

  it("the request's own smaller limit wins; a topic filled to the limit sends the cursor to the next", async () => {
    assert.deepEqual(shape(await describeTopics(['dtp-a', 'dtp-b'], 3)), {
      topics: ['dtp-a:0:0..2'],
      next: 'dtp-b/0',
    })
    assert.deepEqual(shape(await describeTopics(['dtp-a'], 0)), { topics: ['dtp-a:0:0..0'], next: 'dtp-a/1' })
  })

  it('named topics: unknown, invalid and unauthorized ones answered with their errors, refusals last', async () => {
    const r = await describeTopics(['secret-x', 'nope', 'dtp-c', 'bad/name', 'dtp-c'])
    assert.deepEqual(shape(r), {
      topics: [
        `bad/name:${ErrorCode.INVALID_TOPIC_EXCEPTION}:-`,
        'dtp-c:0:0..0',
        `nope:${ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}:-`,
        `secret-x:${ErrorCode.TOPIC_AUTHORIZATION_FAILED}:-`,
      ],
      next: null,
    })
    const refused = r.topics.at(-1)
    assert.equal(refused?.topicId, 'AAAAAAAAAAAAAAAAAAAAAA')
    assert.equal(refused?.topicAuthorizedOperations, -2147483648)
  })

  it('topics before the cursor are skipped; a cursor outside the list or negative is INVALID_REQUEST', async () => {
    assert.deepEqual(
      shape(await describeTopics(['dtp-a', 'dtp-c'], 2000, { topicName: 'dtp-c', partitionIndex: 0 })).topics,
      ['dtp-c:0:0..0'],
    )
    const outside = await describeTopics(['dtp-a'], 2000, { topicName: 'dtp-b', partitionIndex: 0 })
    assert.deepEqual(
      outside.topics.map((t) => [t.name, t.errorCode, t.partitions.length]),
      [['dtp-a', ErrorCode.INVALID_REQUEST, 0]],
    )
    const negative = await describeTopics(['dtp-a'], 2000, { topicName: 'dtp-a', partitionIndex: -1 })
    assert.equal(negative.topics[0].errorCode, ErrorCode.INVALID_REQUEST)
  })
})
