// The admin client's consumer group calls against a real server over TCP: two KIP-848 members share
// a topic, and describeConsumerGroups reports the state, epochs, assignor, and each member's
// subscription, assignment and target; listConsumerGroups lists the group with its state; ids of
// other group types and unknown ids fail with Kafka's errors.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Admin, KafkaError } from '../../../src/clients/admin/index.js'
import { ConsumerMember } from '../../helpers/consumer-member.js'
import { createTopics } from '../../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../../server/harness.js'
import { WireClient } from '../../server/wire-client.js'

describe('admin: consumer groups', () => {
  let ts: TestServer
  let admin: Admin
  const clients: WireClient[] = []
  let a: ConsumerMember
  let b: ConsumerMember

  before(async () => {
    ts = await startTestServer({ 'group.consumer.assignment.interval.ms': '0' })
    const c = await WireClient.connect(ts.port)
    clients.push(c)
    assert.deepEqual(await createTopics(c, [{ name: 'orders', partitions: 4 }]), [0])
    admin = Admin.create({ bootstrapServers: `127.0.0.1:${ts.port}`, retryBackoffMs: 5 })
    const member = async (id: string) => {
      const wc = await WireClient.connect(ts.port)
      clients.push(wc)
      return new ConsumerMember(wc, 'orders-app', id, ['orders'])
    }
    a = await member('member-a')
    b = await member('member-b')
    await a.heartbeat()
    await b.heartbeat()
    // Until both members hold two partitions each (the revocation takes a few heartbeats).
    for (let i = 0; i < 10 && (a.partitions().length !== 2 || b.partitions().length !== 2); i++) {
      await a.heartbeat()
      await b.heartbeat()
    }
  })
  after(async () => {
    for (const c of clients) c.close()
    await admin?.close()
    await ts?.stop()
  })

  it('describeConsumerGroups: state, epochs, assignor, members with assignment and target', async () => {
    const d = await admin
      .describeConsumerGroups(['orders-app'], { includeAuthorizedOperations: true })
      .get('orders-app')
    assert.equal(d.groupId, 'orders-app')
    assert.equal(d.groupState, 'Stable')
    assert.equal(d.groupEpoch, 2)
    assert.equal(d.targetAssignmentEpoch, 2)
    assert.equal(d.assignorName, 'uniform')
    assert.equal(d.coordinator.port, ts.port)
    assert.ok(d.authorizedOperations !== null && d.authorizedOperations > 0)
    const byId = new Map(d.members.map((m) => [m.memberId, m]))
    assert.deepEqual([...byId.keys()].sort(), ['member-a', 'member-b'])
    for (const [id, m] of byId) {
      const own = id === 'member-a' ? a : b
      assert.equal(m.memberEpoch, 2)
      assert.equal(m.memberType, 'consumer')
      assert.deepEqual(m.subscribedTopicNames, ['orders'])
      assert.equal(m.subscribedTopicRegex, null)
      assert.deepEqual(
        m.assignment,
        own.partitions().map((partition) => ({ topic: 'orders', partition })),
      )
      assert.deepEqual(m.targetAssignment, m.assignment)
    }
    const all = d.members.flatMap((m) => m.assignment.map((p) => p.partition)).sort()
    assert.deepEqual(all, [0, 1, 2, 3])
  })

  it('describeConsumerGroups: an unknown id and a group of another type fail with Kafka’s errors', async () => {
    // A simple group (offsets only) is not a consumer group.
    const c = clients[0]!
    const commit = await c.request<{ topics: { partitions: { errorCode: number }[] }[] }>(8, 8, {
      groupId: 'simple-app',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 'orders',
          partitions: [
            { partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' },
          ],
        },
      ],
    })
    assert.equal(commit.body.topics[0]!.partitions[0]!.errorCode, 0)
    const r = await admin.describeConsumerGroups(['nope', 'simple-app']).settled()
    const nope = r.get('nope')!
    const simple = r.get('simple-app')!
    assert.ok('error' in nope && nope.error instanceof KafkaError)
    assert.equal(nope.error.message, 'Group nope not found.')
    assert.ok('error' in simple)
    assert.equal(simple.error.message, 'Group simple-app is not a consumer group.')
  })

  it('listConsumerGroups lists the consumer groups with their state and filters by state', async () => {
    const listed = await admin.listConsumerGroups()
    const app = listed.find((g) => g.groupId === 'orders-app')
    assert.deepEqual(app, {
      groupId: 'orders-app',
      protocolType: 'consumer',
      groupState: 'Stable',
      groupType: 'consumer',
    })
    // The simple group is a classic group with an empty protocol type, listed as Kafka lists it.
    assert.ok(listed.some((g) => g.groupId === 'simple-app' && g.groupType === 'classic'))
    const stable = await admin.listConsumerGroups({ states: ['stable'] })
    assert.deepEqual(
      stable.map((g) => g.groupId),
      ['orders-app'],
    )
  })
})
