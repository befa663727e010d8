// ListOffsets over TCP against a server: what a Kafka broker answers for an empty partition for
// each timestamp code and version, the version gate of the codes, unknown topics and partitions,
// duplicates, leader-epoch fencing, ReplicaId and isolation level, and DESCRIBE-on-topic
// authorization (through an injected authorizer that records what it was asked).
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type { Authorizer } from '../../src/server/router.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

interface PartitionAnswer {
  partitionIndex: number
  errorCode: number
  timestamp: bigint
  offset: bigint
  leaderEpoch: number
}
interface Answer {
  topics: { name: string; partitions: PartitionAnswer[] }[]
}

const asked: Array<[string, string, string]> = []
const authorizer: Authorizer = {
  authorize(_principal, operation, resourceType, resourceName) {
    asked.push([operation, resourceType, resourceName])
    return !(resourceType === 'TOPIC' && resourceName.startsWith('secret'))
  },
}

let ts: TestServer
let c: WireClient

before(async () => {
  ts = await startTestServer({}, { authorizer })
  c = await WireClient.connect(ts.port)
  const created = await c.request<{ topics: { errorCode: number }[] }>(19, 7, {
    topics: ['lo-a', 'secret-b'].map((name) => ({
      name,
      numPartitions: 2,
      replicationFactor: -1,
      assignments: [],
      configs: [],
    })),
    timeoutMs: 1000,
    validateOnly: false,
  })
  assert.deepEqual(
    created.body.topics.map((t) => t.errorCode),
    [0, 0],
  )
})

after(async () => {
  c?.close()
  await ts?.stop()
})

async function listOffsets(
  version: number,
  topics: {
    name: string
    partitions: { partitionIndex: number; timestamp: bigint; currentLeaderEpoch?: number }[]
  }[],
  extra: Record<string, unknown> = {},
): Promise<Answer> {
  const { body } = await c.request<Answer>(2, version, {
    replicaId: -1,
    isolationLevel: 0,
    timeoutMs: 1000,
    topics: topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ currentLeaderEpoch: -1, ...p })),
    })),
    ...extra,
  })
  return body
}

const row = (p: PartitionAnswer) => [p.partitionIndex, p.errorCode, p.timestamp, p.offset, p.leaderEpoch]

describe('ListOffsets on an empty log', () => {
  it('each timestamp code at v11: latest/earliest/earliest-local 0 with epoch 0, the others -1', async () => {
    const codes = [-1n, -2n, -3n, -4n, -5n, -6n, 0n, 1_700_000_000_000n]
    for (const ts of codes) {
      const r = await listOffsets(11, [{ name: 'lo-a', partitions: [{ partitionIndex: 1, timestamp: ts }] }])
      const expected = ts === -1n || ts === -2n || ts === -4n ? [1, 0, -1n, 0n, 0] : [1, 0, -1n, -1n, -1]
      assert.deepEqual(
        r.topics.map((t) => [t.name, t.partitions.map(row)]),
        [['lo-a', [expected]]],
        `ts ${ts}`,
      )
    }
  })

  it('versions gate the codes: -3 from v7, -4 from v8, -5 from v9, -6 from v11; unknown codes never', async () => {
    const gates: Array<[bigint, number]> = [
      [-3n, 7],
      [-4n, 8],
      [-5n, 9],
      [-6n, 11],
    ]
    for (const [code, first] of gates) {
      const before = await listOffsets(first - 1, [
        { name: 'lo-a', partitions: [{ partitionIndex: 0, timestamp: code }] },
      ])
      assert.equal(before.topics[0]!.partitions[0]!.errorCode, ErrorCode.UNSUPPORTED_VERSION, `${code}`)
      assert.equal(before.topics[0]!.partitions[0]!.offset, -1n)
      const at = await listOffsets(first, [
        { name: 'lo-a', partitions: [{ partitionIndex: 0, timestamp: code }] },
      ])
      assert.equal(at.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE, `${code}`)
    }
    const unknown = await listOffsets(11, [
      { name: 'lo-a', partitions: [{ partitionIndex: 0, timestamp: -7n }] },
    ])
    assert.equal(unknown.topics[0]!.partitions[0]!.errorCode, ErrorCode.UNSUPPORTED_VERSION)
    // Latest and earliest at the oldest version; v1–v3 carry no leader epoch.
    const v1 = await listOffsets(1, [
      {
        name: 'lo-a',
        partitions: [
          { partitionIndex: 0, timestamp: -1n },
          { partitionIndex: 1, timestamp: -2n },
        ],
      },
    ])
    assert.deepEqual(v1.topics[0]!.partitions.map(row), [
      [0, 0, -1n, 0n, -1],
      [1, 0, -1n, 0n, -1],
    ])
  })

  it('unknown topics and partitions, duplicates and leader-epoch fencing per partition', async () => {
    const r = await listOffsets(9, [
      {
        name: 'lo-a',
        partitions: [
          { partitionIndex: 0, timestamp: -1n },
          { partitionIndex: 2, timestamp: -1n },
          { partitionIndex: 1, timestamp: -1n },
          { partitionIndex: 1, timestamp: -2n },
          { partitionIndex: -1, timestamp: -1n },
        ],
      },
      { name: 'lo-missing', partitions: [{ partitionIndex: 0, timestamp: -2n }] },
      {
        name: 'lo-a',
        partitions: [
          { partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: 0 },
          { partitionIndex: 3, timestamp: -1n },
        ],
      },
    ])
    assert.deepEqual(
      r.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])]),
      [
        [
          'lo-a',
          [
            [0, ErrorCode.INVALID_REQUEST],
            [2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
            [1, ErrorCode.INVALID_REQUEST],
            [-1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
            [3, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
          ],
        ],
        ['lo-missing', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
      ],
    )
    const epochs = await listOffsets(4, [
      {
        name: 'lo-a',
        partitions: [
          { partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: 0 },
          { partitionIndex: 1, timestamp: -1n, currentLeaderEpoch: 1 },
        ],
      },
      { name: 'secret-b', partitions: [] },
    ])
    assert.deepEqual(
      epochs.topics[0]!.partitions.map((p) => [p.partitionIndex, p.errorCode, p.offset]),
      [
        [0, ErrorCode.NONE, 0n],
        [1, ErrorCode.UNKNOWN_LEADER_EPOCH, -1n],
      ],
    )
    const fenced = await listOffsets(4, [
      { name: 'lo-a', partitions: [{ partitionIndex: 0, timestamp: -2n, currentLeaderEpoch: -5 }] },
    ])
    assert.equal(fenced.topics[0]!.partitions[0]!.errorCode, ErrorCode.FENCED_LEADER_EPOCH)
  })

  it('any ReplicaId and both isolation levels are answered alike; an unknown isolation level fails the request', async () => {
    const ask = [{ name: 'lo-a', partitions: [{ partitionIndex: 0, timestamp: -1n }] }]
    for (const extra of [{ replicaId: 5 }, { replicaId: -2 }, { replicaId: -9 }, { isolationLevel: 1 }]) {
      const r = await listOffsets(11, ask, extra)
      assert.deepEqual(r.topics[0]!.partitions.map(row), [[0, 0, -1n, 0n, 0]], JSON.stringify(extra))
    }
    const bad = await listOffsets(
      11,
      [...ask, { name: 'secret-b', partitions: [{ partitionIndex: 0, timestamp: -1n }] }],
      { isolationLevel: 3 },
    )
    assert.deepEqual(
      bad.topics.map((t) => [t.name, t.partitions.map(row)]),
      [
        ['lo-a', [[0, ErrorCode.INVALID_REQUEST, -1n, -1n, -1]]],
        ['secret-b', [[0, ErrorCode.INVALID_REQUEST, -1n, -1n, -1]]],
      ],
    )
    // With nothing authorized the isolation level is never read.
    const onlySecret = await listOffsets(
      11,
      [{ name: 'secret-b', partitions: [{ partitionIndex: 0, timestamp: -1n }] }],
      {
        isolationLevel: 3,
      },
    )
    assert.equal(onlySecret.topics[0]!.partitions[0]!.errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
  })

  it('DESCRIBE on the topic: unauthorized topics (existing or not) answer TOPIC_AUTHORIZATION_FAILED after the others', async () => {
    asked.length = 0
    const r = await listOffsets(11, [
      {
        name: 'secret-b',
        partitions: [
          { partitionIndex: 0, timestamp: -1n },
          { partitionIndex: 0, timestamp: -2n },
        ],
      },
      { name: 'lo-a', partitions: [{ partitionIndex: 0, timestamp: -2n }] },
      { name: 'secret-missing', partitions: [{ partitionIndex: 7, timestamp: -1n }] },
    ])
    assert.deepEqual(
      r.topics.map((t) => [t.name, t.partitions.map(row)]),
      [
        ['lo-a', [[0, 0, -1n, 0n, 0]]],
        [
          'secret-b',
          [
            [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1n, -1n, -1],
            [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1n, -1n, -1],
          ],
        ],
        ['secret-missing', [[7, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1n, -1n, -1]]],
      ],
    )
    assert.deepEqual(asked, [
      ['DESCRIBE', 'TOPIC', 'secret-b'],
      ['DESCRIBE', 'TOPIC', 'lo-a'],
      ['DESCRIBE', 'TOPIC', 'secret-missing'],
    ])
  })

  it('ApiVersions advertises ListOffsets 1–11', async () => {
    const { body } = await c.request<{
      apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[]
    }>(18, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' })
    assert.deepEqual(
      body.apiKeys.filter((k) => k.apiKey === 2).map((k) => [k.minVersion, k.maxVersion]),
      [[1, 11]],
    )
  })
})
