// KIP-848 consumer groups over real TCP against a server: two members share a topic's partitions
// through ConsumerGroupHeartbeat (a partition is never owned by both), commit with their member
// epoch, are described by ConsumerGroupDescribe and listed by ListGroups, and the group survives a
// restart (its records replay).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: decoded bodies are checked field by field
type AnyBody = any
type Owned = { topicId: string; partitions: number[] }[]

class Member {
  epoch = 0
  owned: Owned = []
  constructor(
    readonly client: WireClient,
    readonly memberId: string,
  ) {}

  /** One heartbeat; it adopts the assignment it is given (revoking at once, as a consumer does). */
  async heartbeat(full = false): Promise<AnyBody> {
    const joining = this.epoch === 0
    const { body } = await this.client.request<AnyBody>(68, 1, {
      groupId: 'orders-app',
      memberId: this.memberId,
      memberEpoch: this.epoch,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: joining || full ? 30000 : -1,
      subscribedTopicNames: joining || full ? ['orders'] : null,
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: joining ? [] : this.owned,
    })
    assert.equal(body.errorCode, 0, body.errorMessage)
    this.epoch = body.memberEpoch
    if (body.assignment !== null) this.owned = body.assignment.topicPartitions
    return body
  }

  partitions(): number[] {
    return this.owned.flatMap((t) => t.partitions).sort((a, b) => a - b)
  }
}

async function settle(members: Member[], describeClient: WireClient): Promise<void> {
  for (let i = 0; i < 20; i++) {
    for (const m of members) {
      await m.heartbeat()
      // Never two owners at any moment.
      const all = members.flatMap((x) => x.partitions())
      assert.equal(new Set(all).size, all.length, `a partition is owned twice: ${all}`)
    }
    const { body } = await describeClient.request<AnyBody>(69, 1, {
      groupIds: ['orders-app'],
      includeAuthorizedOperations: false,
    })
    if (body.groups[0].groupState === 'Stable') return
  }
  assert.fail('the group did not become Stable')
}

describe('consumer groups (KIP-848) over TCP', () => {
  let ts: TestServer
  let admin: WireClient

  before(async () => {
    ts = await startTestServer({ 'group.consumer.assignment.interval.ms': '0' })
    admin = await WireClient.connect(ts.port)
    const created = await admin.request<AnyBody>(19, 7, {
      topics: [{ name: 'orders', numPartitions: 4, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)
  })
  after(async () => {
    admin.close()
    await ts.stop()
  })

  test('two members share the partitions, commit with their epochs, and the group survives a restart', async () => {
    const a = new Member(await WireClient.connect(ts.port), 'member-a')
    const b = new Member(await WireClient.connect(ts.port), 'member-b')
    await a.heartbeat()
    assert.deepEqual(a.partitions(), [0, 1, 2, 3])
    await b.heartbeat()
    await settle([a, b], admin)
    assert.equal(a.partitions().length, 2)
    assert.equal(b.partitions().length, 2)
    assert.deepEqual([...a.partitions(), ...b.partitions()].sort(), [0, 1, 2, 3])

    const { body: described } = await admin.request<AnyBody>(69, 1, {
      groupIds: ['orders-app', 'nope'],
      includeAuthorizedOperations: true,
    })
    const g = described.groups[0]
    assert.equal(g.groupState, 'Stable')
    assert.equal(g.assignorName, 'uniform')
    assert.deepEqual(g.members.map((m: AnyBody) => m.memberId).sort(), ['member-a', 'member-b'])
    // No authorizer: every operation Kafka supports on a GROUP (READ 3, DELETE 6, DESCRIBE 8,
    // DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11), as bits.
    assert.equal(g.authorizedOperations, (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11))
    for (const m of g.members) {
      assert.equal(m.memberType, 1)
      assert.equal(m.assignment.topicPartitions[0].topicName, 'orders')
      assert.deepEqual(m.assignment.topicPartitions, m.targetAssignment.topicPartitions)
    }
    assert.deepEqual(
      [described.groups[1].errorCode, described.groups[1].errorMessage],
      [ErrorCode.GROUP_ID_NOT_FOUND, 'Group nope not found.'],
    )

    const { body: listed } = await admin.request<AnyBody>(16, 5, {
      statesFilter: [],
      typesFilter: ['consumer'],
    })
    assert.deepEqual(
      listed.groups.map((x: AnyBody) => [x.groupId, x.protocolType, x.groupState, x.groupType]),
      [['orders-app', 'consumer', 'Stable', 'consumer']],
    )

    const commit = async (memberEpoch: number) => {
      const { body } = await a.client.request<AnyBody>(8, 9, {
        groupId: 'orders-app',
        generationIdOrMemberEpoch: memberEpoch,
        memberId: 'member-a',
        groupInstanceId: null,
        topics: [
          {
            name: 'orders',
            partitions: [
              {
                partitionIndex: a.partitions()[0],
                committedOffset: 7n,
                committedLeaderEpoch: -1,
                committedMetadata: '',
              },
            ],
          },
        ],
      })
      return body.topics[0].partitions[0].errorCode
    }
    assert.equal(await commit(a.epoch), 0)
    assert.equal(await commit(a.epoch + 1), ErrorCode.STALE_MEMBER_EPOCH)

    // Restart: the group is replayed from its records.
    a.client.close()
    b.client.close()
    admin.close()
    const dataDir = ts.dataDir
    await ts.stop(true)
    ts = await startTestServer({ 'group.consumer.assignment.interval.ms': '0' }, {}, dataDir)
    admin = await WireClient.connect(ts.port)
    const { body: again } = await admin.request<AnyBody>(69, 1, {
      groupIds: ['orders-app'],
      includeAuthorizedOperations: false,
    })
    assert.equal(again.groups[0].groupEpoch, g.groupEpoch)
    assert.deepEqual(again.groups[0].members.map((m: AnyBody) => m.memberId).sort(), ['member-a', 'member-b'])

    // A member leaves; the other takes every partition over.
    const a2 = new Member(await WireClient.connect(ts.port), 'member-a')
    a2.epoch = a.epoch
    a2.owned = a.owned
    const b2 = new Member(await WireClient.connect(ts.port), 'member-b')
    b2.epoch = b.epoch
    b2.owned = b.owned
    const { body: left } = await b2.client.request<AnyBody>(68, 1, {
      groupId: 'orders-app',
      memberId: 'member-b',
      memberEpoch: -1,
      topicPartitions: null,
    })
    assert.deepEqual([left.errorCode, left.memberEpoch], [0, -1])
    await settle([a2], admin)
    assert.deepEqual(a2.partitions(), [0, 1, 2, 3])
    a2.client.close()
    b2.client.close()
  })
})
