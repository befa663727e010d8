// Streams groups end to end over TCP against an in-process server: join and convergence, crash
// and session timeout, static rejoin, topology upgrade in a rolling bounce (D4), missing and
// mis-partitioned topics, internal topic creation, describe.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { StreamsGroupDescribeResponse } from '../../src/protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const SESSION_MS = 800
let server: TestServer
let admin: WireClient
const members: StreamsMember[] = []

before(async () => {
  server = await startTestServer({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.session.timeout.ms': String(SESSION_MS),
    'group.streams.min.session.timeout.ms': String(SESSION_MS),
    'group.streams.heartbeat.interval.ms': '100',
    'group.streams.min.heartbeat.interval.ms': '100',
  })
  admin = await WireClient.connect(server.port)
})

after(async () => {
  for (const m of members) m.close()
  admin?.close()
  await server?.stop()
})

async function createTopic(name: string, numPartitions: number): Promise<void> {
  const { body } = await admin.request<{ topics: { errorCode: number }[] }>(19, 7, {
    topics: [{ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 1000,
  })
  assert.equal(body.topics[0].errorCode, 0)
}

async function describeGroup(groupId: string) {
  const { body } = await admin.request<StreamsGroupDescribeResponse>(89, 1, {
    groupIds: [groupId],
    includeAuthorizedOperations: false,
    includeTopologyDescription: false,
  })
  return body.groups[0]
}

async function member(
  groupId: string,
  memberId: string,
  processId: string,
  topology = simpleTopology(['in']),
  instanceId: string | null = null,
) {
  const m = await StreamsMember.connect(server.port, { groupId, memberId, processId, topology, instanceId })
  members.push(m)
  return m
}

/**
 * Heartbeats every member in rounds until the group is Stable with every member at the group epoch,
 * for at least `rounds` rounds and 20 s (a new group stays NotReady until the server has created its
 * internal topics in the background, which takes longer on a loaded machine).
 */
async function converge(groupId: string, group: readonly StreamsMember[], rounds = 30) {
  const deadline = Date.now() + 20_000
  for (let i = 0; i < rounds || Date.now() < deadline; i++) {
    for (const m of group) {
      const r = await m.heartbeat()
      assert.equal(r.errorCode, 0, `${m.memberId}: ${r.errorMessage}`)
    }
    const d = await describeGroup(groupId)
    if (d.groupState === 'Stable' && group.every((m) => m.epoch === d.groupEpoch)) return d
    if (i >= rounds) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  assert.fail(`group ${groupId} did not converge: ${(await describeGroup(groupId)).groupState}`)
}

function assertPartitionedOnce(group: readonly StreamsMember[], expected: string[]) {
  const all = group.flatMap((m) => m.activePartitions())
  assert.deepEqual([...all].sort(), [...expected].sort(), 'every task is active on exactly one member')
}

const tasks = (n: number, sub = '0') => Array.from({ length: n }, (_, i) => `${sub}-${i}`)

describe('streams groups over TCP', () => {
  it('3 processes × 2 members converge to Stable with every task assigned once; a crash rebalances', async () => {
    await createTopic('in', 6)
    const group: StreamsMember[] = []
    for (const p of ['p1', 'p2', 'p3'])
      for (const n of [1, 2]) group.push(await member('app', `${p}-m${n}`, p))
    const d = await converge('app', group)
    assert.equal(d.members.length, 6)
    assertPartitionedOnce(group, tasks(6))
    for (const p of ['p1', 'p2', 'p3']) {
      const perProcess = group.filter((m) => m.processId === p).flatMap((m) => m.activePartitions())
      assert.equal(perProcess.length, 2, `process ${p} holds 2 tasks`)
    }

    // p3-m2 crashes: it stops heartbeating; the others keep going until its session times out.
    const crashed = group.pop()!
    crashed.close()
    const deadline = Date.now() + SESSION_MS * 5
    let described = await describeGroup('app')
    while (described.members.length !== 5 && Date.now() < deadline) {
      for (const m of group) await m.heartbeat()
      await new Promise((r) => setTimeout(r, 100))
      described = await describeGroup('app')
    }
    assert.equal(described.members.length, 5, 'the crashed member was fenced by its session timeout')
    await converge('app', group)
    assertPartitionedOnce(group, tasks(6))
  })

  it('a static member leaving with -2 and rejoining under a new member id gets its tasks back', async () => {
    await createTopic('st-in', 4)
    const a = await member('static-app', 'a1', 'pa', simpleTopology(['st-in']), 'inst-a')
    const b = await member('static-app', 'b1', 'pb', simpleTopology(['st-in']), 'inst-b')
    await converge('static-app', [a, b])
    const before = a.activePartitions().sort()
    assert.equal(before.length, 2)
    assert.equal((await a.leave(-2)).errorCode, 0)
    const a2 = await member('static-app', 'a2', 'pa', simpleTopology(['st-in']), 'inst-a')
    const joined = await a2.heartbeat()
    assert.equal(joined.errorCode, 0)
    const d = await converge('static-app', [a2, b])
    assert.deepEqual(d.members.map((m) => m.memberId).sort(), ['a2', 'b1'])
    assert.deepEqual(a2.activePartitions().sort(), before)
  })

  it('topology upgrade in a rolling bounce (D4): stale members keep their tasks, lower epochs are fenced', async () => {
    await createTopic('up-in', 2)
    await createTopic('up-in2', 2)
    const v0 = simpleTopology(['up-in'])
    const v1 = simpleTopology(['up-in', 'up-in2'], { epoch: 1 })
    const a = await member('upgrade-app', 'ua', 'p1', v0)
    const b = await member('upgrade-app', 'ub', 'p2', v0)
    await converge('upgrade-app', [a, b])
    // Bounce a with the new topology at epoch 1.
    await a.leave()
    const a1 = await member('upgrade-app', 'ua-1', 'p1', v1)
    assert.equal((await a1.heartbeat()).errorCode, 0)
    const stale = await b.heartbeat()
    assert.equal(stale.errorCode, 0)
    assert.ok(
      stale.status?.some((s) => s.statusCode === 0),
      'b sees STALE_TOPOLOGY',
    )
    const d = await describeGroup('upgrade-app')
    assert.equal(d.topology?.epoch, 1)
    // A member still on epoch 0 cannot join any more.
    const late = await member('upgrade-app', 'late', 'p3', v0)
    assert.equal((await late.heartbeat()).errorCode, 132)
    // Bounce b too; the group converges on the new topology.
    await b.leave()
    const b1 = await member('upgrade-app', 'ub-1', 'p2', v1)
    await converge('upgrade-app', [a1, b1])
    assertPartitionedOnce([a1, b1], tasks(2))
  })

  it('missing source topics: NotReady until the topic exists, then tasks are assigned', async () => {
    const m = await member('missing-app', 'mm', 'p1', simpleTopology(['not-yet']))
    const joined = await m.heartbeat()
    assert.equal(joined.errorCode, 0)
    assert.deepEqual(
      joined.status?.map((s) => [s.statusCode, s.statusDetail]),
      [[1, 'Source topics not-yet are missing.']],
    )
    assert.equal((await describeGroup('missing-app')).groupState, 'NotReady')
    await createTopic('not-yet', 3)
    await converge('missing-app', [m])
    assertPartitionedOnce([m], tasks(3))
  })

  it('mis-partitioned copartitioned topics report INCORRECTLY_PARTITIONED_TOPICS', async () => {
    await createTopic('left', 2)
    await createTopic('right', 3)
    const m = await member('copart-app', 'cm', 'p1', simpleTopology(['left', 'right']))
    const r = await m.heartbeat()
    assert.equal(r.errorCode, 0)
    assert.deepEqual(
      r.status?.map((s) => s.statusCode),
      [2],
    )
    assert.deepEqual(r.activeTasks, [])
    assert.equal((await describeGroup('copart-app')).groupState, 'NotReady')
  })

  it('internal topics are created in the catalog (visible in Metadata) and describe shows the configured topology', async () => {
    await createTopic('ch-in', 3)
    const m = await member(
      'internal-app',
      'im',
      'p1',
      simpleTopology(['ch-in'], { changelog: 'internal-app-store-changelog' }),
    )
    const joined = await m.heartbeat()
    assert.deepEqual(
      joined.status?.map((s) => s.statusCode),
      [3],
    )
    await converge('internal-app', [m])
    const { body } = await admin.request<{ topics: { name: string; partitions: unknown[] }[] }>(3, 12, {
      topics: [{ name: 'internal-app-store-changelog', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }],
      allowAutoTopicCreation: false,
    })
    assert.equal(body.topics[0].partitions.length, 3)
    const d = await describeGroup('internal-app')
    assert.equal(d.groupState, 'Stable')
    assert.deepEqual(
      d.topology?.subtopologies?.[0].stateChangelogTopics.map((t) => [t.name, t.partitions]),
      [['internal-app-store-changelog', 3]],
    )
    assert.deepEqual(d.members[0].assignment.activeTasks, [{ subtopologyId: '0', partitions: [0, 1, 2] }])
    assert.equal(d.assignorName, 'sticky')
    const unknown = await describeGroup('no-such-group')
    assert.deepEqual([unknown.errorCode, unknown.errorMessage], [69, 'Group no-such-group not found.'])
  })
})
