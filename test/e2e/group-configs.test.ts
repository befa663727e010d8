// Group-level configs end to end over TCP: the admin client sets them on a group with live streams
// members; the next heartbeats carry the group's heartbeat interval and standby tasks appear; a
// group's short session timeout fences a silent member long before the broker's would. The same
// for consumer groups (KIP-848) with the consumer.* keys.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Admin, type AlterConfigOp } from '../../src/clients/admin/index.js'
import type { StreamsGroupDescribeResponse } from '../../src/protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { ConsumerMember } from '../helpers/consumer-member.js'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

/** The broker's session timeout: long, so only a group's own could fence within the test. */
const BROKER_SESSION_MS = 60_000
let server: TestServer
let wire: WireClient
let admin: Admin
const members: StreamsMember[] = []

before(async () => {
  server = await startTestServer({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.session.timeout.ms': String(BROKER_SESSION_MS),
    'group.streams.min.session.timeout.ms': '500',
    'group.streams.heartbeat.interval.ms': '100',
    'group.streams.min.heartbeat.interval.ms': '100',
    'group.consumer.assignment.interval.ms': '0',
    'group.consumer.session.timeout.ms': String(BROKER_SESSION_MS),
    'group.consumer.min.session.timeout.ms': '500',
    'group.consumer.heartbeat.interval.ms': '100',
    'group.consumer.min.heartbeat.interval.ms': '100',
    // Every answer carries the group's interval itself, as in Kafka, so the tests can see it.
    'group.heartbeat.spread.enable': 'false',
  })
  wire = await WireClient.connect(server.port)
  admin = Admin.create({
    bootstrapServers: `127.0.0.1:${server.port}`,
    retryBackoffMs: 5,
    retryBackoffMaxMs: 20,
  })
})

after(async () => {
  for (const m of members) m.close()
  wire?.close()
  await admin?.close()
  await server?.stop()
})

async function describeGroup(groupId: string) {
  const { body } = await wire.request<StreamsGroupDescribeResponse>(89, 1, {
    groupIds: [groupId],
    includeAuthorizedOperations: false,
    includeTopologyDescription: false,
  })
  return body.groups[0]
}

async function member(groupId: string, memberId: string, processId: string, changelog?: string) {
  const m = await StreamsMember.connect(server.port, {
    groupId,
    memberId,
    processId,
    topology: simpleTopology([`${groupId}-in`], { changelog }),
  })
  members.push(m)
  return m
}

async function converge(groupId: string, group: readonly StreamsMember[]) {
  for (let i = 0; i < 50; i++) {
    for (const m of group) {
      const r = await m.heartbeat()
      assert.equal(r.errorCode, 0, `${m.memberId}: ${r.errorMessage}`)
    }
    const d = await describeGroup(groupId)
    if (d.groupState === 'Stable' && group.every((m) => m.epoch === d.groupEpoch)) return d
    await new Promise((r) => setTimeout(r, 20))
  }
  assert.fail(`group ${groupId} did not converge: ${(await describeGroup(groupId)).groupState}`)
}

const set = (name: string, value: string): AlterConfigOp => ({ name, value, opType: 'SET' })
const standbyCount = (m: StreamsMember) => m.standby.reduce((n, t) => n + t.partitions.length, 0)

describe('group-level configs with live streams members', () => {
  it('streams.heartbeat.interval.ms and streams.num.standby.replicas apply from the next heartbeat', async () => {
    await admin.createTopics([{ name: 'cfg-app-in', numPartitions: 2 }]).all()
    const group = [
      await member('cfg-app', 'a1', 'p1', 'cfg-app-store-changelog'),
      await member('cfg-app', 'a2', 'p2', 'cfg-app-store-changelog'),
    ]
    const before = await converge('cfg-app', group)
    assert.deepEqual(
      group.map((m) => [m.last?.heartbeatIntervalMs, m.activePartitions().length, standbyCount(m)]),
      [
        [100, 1, 0],
        [100, 1, 0],
      ],
    )

    await admin
      .incrementalAlterConfigs([
        [
          { type: 'GROUP', name: 'cfg-app' },
          [set('streams.heartbeat.interval.ms', '300'), set('streams.num.standby.replicas', '1')],
        ],
      ])
      .all()

    const next = await group[0].heartbeat()
    assert.equal(next.errorCode, 0)
    assert.equal(next.heartbeatIntervalMs, 300, 'the next heartbeat carries the group’s interval')
    const after = await converge('cfg-app', group)
    assert.ok(after.groupEpoch > before.groupEpoch, 'the assignment configs changed: a new target assignment')
    assert.deepEqual(
      group.map((m) => [m.last?.heartbeatIntervalMs, m.activePartitions().length, standbyCount(m)]),
      [
        [300, 1, 1],
        [300, 1, 1],
      ],
      'each member holds one active task and the other one as a standby',
    )
  })

  it('streams.session.timeout.ms fences a silent member at the group’s timeout, not the broker’s', async () => {
    await admin.createTopics([{ name: 'cfg-fence-in', numPartitions: 2 }]).all()
    const alive = await member('cfg-fence', 'f1', 'p1')
    const silent = await member('cfg-fence', 'f2', 'p2')
    await converge('cfg-fence', [alive, silent])
    await admin
      .incrementalAlterConfigs([
        [{ type: 'GROUP', name: 'cfg-fence' }, [set('streams.session.timeout.ms', '3000')]],
      ])
      .all()
    // One heartbeat each arms the group's session timeout; then f2 goes silent.
    await alive.heartbeat()
    await silent.heartbeat()
    silent.close()
    // Generous bound, far below the broker's 60 s: only the group's 3 s can fence f2 in time.
    const deadline = Date.now() + 20_000
    let described = await describeGroup('cfg-fence')
    while (described.members.length !== 1 && Date.now() < deadline) {
      assert.equal((await alive.heartbeat()).errorCode, 0)
      await new Promise((r) => setTimeout(r, 100))
      described = await describeGroup('cfg-fence')
    }
    assert.deepEqual(
      described.members.map((m) => m.memberId),
      ['f1'],
      'the silent member was fenced by the group’s session timeout',
    )
    await converge('cfg-fence', [alive])
    assert.equal(alive.activePartitions().length, 2, 'its tasks moved to the member that stayed')
  })
})

describe('group-level configs with live consumer group members', () => {
  const consumers: WireClient[] = []
  after(() => {
    for (const c of consumers) c.close()
  })
  async function consumer(groupId: string, memberId: string, topic: string) {
    const c = await WireClient.connect(server.port)
    consumers.push(c)
    return new ConsumerMember(c, groupId, memberId, [topic])
  }
  async function describeConsumerGroup(groupId: string) {
    // biome-ignore lint/suspicious/noExplicitAny: decoded bodies are checked field by field
    const { body } = await wire.request<any>(69, 1, {
      groupIds: [groupId],
      includeAuthorizedOperations: false,
    })
    return body.groups[0]
  }
  /** Heartbeats every member until the group is Stable at every member's epoch. */
  async function settle(groupId: string, group: readonly ConsumerMember[]) {
    for (let i = 0; i < 50; i++) {
      for (const m of group) await m.heartbeat()
      const d = await describeConsumerGroup(groupId)
      if (d.groupState === 'Stable' && group.every((m) => m.epoch === d.groupEpoch)) return d
      await new Promise((r) => setTimeout(r, 20))
    }
    assert.fail(`group ${groupId} did not settle: ${(await describeConsumerGroup(groupId)).groupState}`)
  }

  it('consumer.heartbeat.interval.ms applies from the next heartbeat, and DELETE restores the broker’s', async () => {
    await admin.createTopics([{ name: 'ccfg-in', numPartitions: 2 }]).all()
    const a = await consumer('ccfg-app', 'c1', 'ccfg-in')
    assert.equal((await a.heartbeat()).heartbeatIntervalMs, 100)
    const alter = (op: AlterConfigOp) =>
      admin.incrementalAlterConfigs([[{ type: 'GROUP', name: 'ccfg-app' }, [op]]]).all()
    await alter(set('consumer.heartbeat.interval.ms', '300'))
    assert.equal((await a.heartbeat()).heartbeatIntervalMs, 300, 'the next heartbeat carries the group’s')
    await alter({ name: 'consumer.heartbeat.interval.ms', value: null, opType: 'DELETE' })
    assert.equal((await a.heartbeat()).heartbeatIntervalMs, 100, 'back to the broker’s')
  })

  it('consumer.session.timeout.ms fences a silent member at the group’s timeout, not the broker’s', async () => {
    await admin.createTopics([{ name: 'cfence-in', numPartitions: 2 }]).all()
    const alive = await consumer('cfence-app', 'k1', 'cfence-in')
    const silent = await consumer('cfence-app', 'k2', 'cfence-in')
    await alive.heartbeat()
    await silent.heartbeat()
    await settle('cfence-app', [alive, silent])
    assert.deepEqual([alive.partitions().length, silent.partitions().length], [1, 1])
    await admin
      .incrementalAlterConfigs([
        [{ type: 'GROUP', name: 'cfence-app' }, [set('consumer.session.timeout.ms', '3000')]],
      ])
      .all()
    // One heartbeat each arms the group's session timeout; then k2 goes silent.
    await alive.heartbeat()
    await silent.heartbeat()
    // Generous bound, far below the broker's 60 s: only the group's 3 s can fence k2 in time.
    const deadline = Date.now() + 20_000
    let described = await describeConsumerGroup('cfence-app')
    while (described.members.length !== 1 && Date.now() < deadline) {
      await alive.heartbeat()
      await new Promise((r) => setTimeout(r, 100))
      described = await describeConsumerGroup('cfence-app')
    }
    assert.deepEqual(
      described.members.map((m: { memberId: string }) => m.memberId),
      ['k1'],
      'the silent member was fenced by the group’s session timeout',
    )
    await settle('cfence-app', [alive])
    assert.deepEqual(alive.partitions(), [0, 1], 'its partitions moved to the member that stayed')
  })
})
