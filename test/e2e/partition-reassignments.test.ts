// ElectLeaders (43), AlterPartitionReassignments (45) and ListPartitionReassignments (46) over TCP,
// as a KRaft controller answers them for a one-broker cluster: elections never needed, the node
// itself the only valid target, nothing ever in progress; unknown topics and partitions, Kafka's
// messages for the refused targets, an unknown election type, and CLUSTER authorization.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type { AlterPartitionReassignmentsResponse } from '../../src/protocol/generated/messages/AlterPartitionReassignmentsResponse.js'
import type { ElectLeadersResponse } from '../../src/protocol/generated/messages/ElectLeadersResponse.js'
import type { ListPartitionReassignmentsResponse } from '../../src/protocol/generated/messages/ListPartitionReassignmentsResponse.js'
import type { Authorizer } from '../../src/server/router.js'
import { createTopics } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const NODE = 7
/** Only the principal "User:ops" may alter or describe the cluster. */
const authorizer: Authorizer = {
  authorize: (principal, _operation, resourceType) => resourceType !== 'CLUSTER' || principal === 'User:ops',
}

let ts: TestServer
let c: WireClient

before(async () => {
  ts = await startTestServer({ 'node.id': String(NODE) })
  c = await WireClient.connect(ts.port)
  assert.deepEqual(
    await createTopics(c, [
      { name: 'ra-b', partitions: 2 },
      { name: 'ra-a', partitions: 1 },
    ]),
    [0, 0],
  )
})
after(async () => {
  c?.close()
  await ts?.stop()
})

const NOT_NEEDED = 'Leader election not needed for topic partition.'

describe('ElectLeaders', () => {
  it('answers ELECTION_NOT_NEEDED for each named partition, preferred or unclean, at every version', async () => {
    for (const [version, electionType] of [
      [0, 0],
      [1, 0],
      [1, 1],
      [2, 0],
      [2, 1],
    ] as const) {
      const { body } = await c.request<ElectLeadersResponse>(43, version, {
        electionType,
        topicPartitions: [
          { topic: 'ra-b', partitions: [1, 0, 2, -1] },
          { topic: 'ra-none', partitions: [0] },
        ],
        timeoutMs: 30_000,
      })
      assert.equal(body.errorCode, 0)
      assert.deepEqual(
        body.replicaElectionResults.map((t) => [
          t.topic,
          t.partitionResult.map((p) => [p.partitionId, p.errorCode, p.errorMessage]),
        ]),
        [
          [
            'ra-b',
            [
              [1, ErrorCode.ELECTION_NOT_NEEDED, NOT_NEEDED],
              [0, ErrorCode.ELECTION_NOT_NEEDED, NOT_NEEDED],
              [2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'No such partition as ra-b-2'],
              [-1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'No such partition as ra-b--1'],
            ],
          ],
          ['ra-none', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'No such topic as ra-none']]],
        ],
        `v${version} type ${electionType}`,
      )
    }
  })

  it('with every partition asked for (null), lists each topic without the partitions not needing one', async () => {
    const { body } = await c.request<ElectLeadersResponse>(43, 2, {
      electionType: 0,
      topicPartitions: null,
      timeoutMs: 30_000,
    })
    assert.equal(body.errorCode, 0)
    assert.deepEqual(
      body.replicaElectionResults.map((t) => [t.topic, t.partitionResult.length]),
      [
        ['ra-a', 0],
        ['ra-b', 0],
      ],
    )
  })

  it('refuses an unknown election type with INVALID_REQUEST for the request and every partition', async () => {
    const { body } = await c.request<ElectLeadersResponse>(43, 2, {
      electionType: 2,
      topicPartitions: [{ topic: 'ra-a', partitions: [0] }],
      timeoutMs: 30_000,
    })
    assert.equal(body.errorCode, ErrorCode.INVALID_REQUEST)
    assert.deepEqual(body.replicaElectionResults[0]?.partitionResult, [
      { partitionId: 0, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unknown election type 2' },
    ])
  })
})

describe('AlterPartitionReassignments', () => {
  const alter = async (
    version: number,
    topics: { name: string; partitions: { partitionIndex: number; replicas: number[] | null }[] }[],
    allowReplicationFactorChange = true,
  ) =>
    (
      await c.request<AlterPartitionReassignmentsResponse>(45, version, {
        timeoutMs: 30_000,
        allowReplicationFactorChange,
        topics,
      })
    ).body

  it('accepts the node itself as the target; refuses other targets and cancels with Kafka’s errors', async () => {
    for (const version of [0, 1]) {
      const body = await alter(version, [
        {
          name: 'ra-b',
          partitions: [
            { partitionIndex: 0, replicas: [NODE] },
            { partitionIndex: 1, replicas: null },
            { partitionIndex: 0, replicas: [] },
            { partitionIndex: 1, replicas: [NODE, 3] },
            { partitionIndex: 1, replicas: [NODE, NODE] },
            { partitionIndex: 5, replicas: [NODE] },
          ],
        },
        { name: 'ra-none', partitions: [{ partitionIndex: 0, replicas: [NODE] }] },
      ])
      assert.equal(body.errorCode, 0)
      assert.equal(body.errorMessage, null)
      const M = 'The manual partition assignment includes'
      assert.deepEqual(
        body.responses.map((t) => [
          t.name,
          t.partitions.map((p) => [p.partitionIndex, p.errorCode, p.errorMessage]),
        ]),
        [
          [
            'ra-b',
            [
              [0, 0, null],
              [1, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, null],
              [0, ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${M} an empty replica list.`],
              [1, ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${M} broker 3, but no such broker is registered.`],
              [1, ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${M} the broker ${NODE} more than once.`],
              [5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'Unable to find partition ra-b:5.'],
            ],
          ],
          ['ra-none', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'Unable to find a topic named ra-none.']]],
        ],
        `v${version}`,
      )
    }
  })

  it('v1 echoes AllowReplicationFactorChange; a target of this node passes either way', async () => {
    const body = await alter(
      1,
      [{ name: 'ra-a', partitions: [{ partitionIndex: 0, replicas: [NODE] }] }],
      false,
    )
    assert.equal(body.allowReplicationFactorChange, false)
    assert.equal(body.responses[0]?.partitions[0]?.errorCode, 0)
  })
})

describe('ListPartitionReassignments', () => {
  it('lists nothing in progress, for every partition or named ones, even after a reassignment', async () => {
    for (const topics of [null, [{ name: 'ra-b', partitionIndexes: [0, 1] }]]) {
      const { body } = await c.request<ListPartitionReassignmentsResponse>(46, 0, {
        timeoutMs: 30_000,
        topics,
      })
      assert.equal(body.errorCode, 0)
      assert.equal(body.errorMessage, null)
      assert.deepEqual(body.topics, [])
    }
  })
})

describe('CLUSTER authorization', () => {
  let secured: TestServer
  before(async () => {
    secured = await startTestServer({}, { authorizer })
  })
  after(async () => {
    await secured?.stop()
  })

  it('refuses a principal without ALTER / DESCRIBE on the cluster, for the request and every partition', async () => {
    const anon = await WireClient.connect(secured.port)
    try {
      const refused = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
      const msg = 'Cluster authorization failed.'
      const elect = (
        await anon.request<ElectLeadersResponse>(43, 2, {
          electionType: 0,
          topicPartitions: [{ topic: 'x', partitions: [0, 1] }],
          timeoutMs: 1000,
        })
      ).body
      assert.equal(elect.errorCode, refused)
      assert.deepEqual(
        elect.replicaElectionResults[0]?.partitionResult.map((p) => [
          p.partitionId,
          p.errorCode,
          p.errorMessage,
        ]),
        [
          [0, refused, msg],
          [1, refused, msg],
        ],
      )
      const alterBody = (
        await anon.request<AlterPartitionReassignmentsResponse>(45, 1, {
          timeoutMs: 1000,
          allowReplicationFactorChange: true,
          topics: [{ name: 'x', partitions: [{ partitionIndex: 0, replicas: [1] }] }],
        })
      ).body
      assert.deepEqual(
        [alterBody.errorCode, alterBody.errorMessage, alterBody.responses[0]?.partitions[0]?.errorCode],
        [refused, msg, refused],
      )
      const list = (
        await anon.request<ListPartitionReassignmentsResponse>(46, 0, {
          timeoutMs: 1000,
          topics: [{ name: 'x', partitionIndexes: [3] }],
        })
      ).body
      assert.deepEqual([list.errorCode, list.errorMessage], [refused, msg])
      assert.deepEqual(list.topics, [
        {
          name: 'x',
          partitions: [{ partitionIndex: 3, replicas: [], addingReplicas: [], removingReplicas: [] }],
        },
      ])
    } finally {
      anon.close()
    }
  })
})
