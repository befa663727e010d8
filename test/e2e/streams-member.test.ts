// StreamsMember against a real Topograph server over TCP: two members of one application converge
// on a split of every task, a closed member's tasks move to the other, a static member leaves with
// -2 and gets its tasks back on rejoin, and the heartbeat runs at v1 with the broker's interval.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Admin } from '../../src/clients/admin/index.js'
import {
  type StreamsGroupStatus,
  StreamsMember,
  type StreamsTasks,
  Topology,
} from '../../src/clients/streams/index.js'
import { heartbeatIntervalBounds } from '../../src/coordinator/shard/modern/heartbeat-phase.js'
import { startTestServer, type TestServer } from '../server/harness.js'

const HEARTBEAT_MS = 100

let server: TestServer
let admin: Admin
const members: StreamsMember[] = []

before(async () => {
  server = await startTestServer({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.heartbeat.interval.ms': String(HEARTBEAT_MS),
    'group.streams.min.heartbeat.interval.ms': String(HEARTBEAT_MS),
    'group.streams.session.timeout.ms': '3000',
    'group.streams.min.session.timeout.ms': '3000',
  })
  admin = Admin.create({ bootstrapServers: `127.0.0.1:${server.port}` })
  await admin
    .createTopics([
      { name: 'orders', numPartitions: 4 },
      { name: 'payments', numPartitions: 2 },
    ])
    .all()
})

after(async () => {
  for (const m of members) await m.close()
  await admin?.close()
  await server?.stop()
})

// Two subtopologies: orders (4 partitions) → tasks 0_0..0_3, payments (2) → tasks 1_0, 1_1.
function topology(): Topology {
  return new Topology()
    .addSource('orders-source', 'orders')
    .addProcessor('orders-proc', ['orders-source'])
    .addSink('orders-sink', 'orders-out', 'orders-proc')
    .addSource('payments-source', 'payments')
    .addProcessor('payments-proc', ['payments-source'])
}

const ALL = ['0_0', '0_1', '0_2', '0_3', '1_0', '1_1']

function member(applicationId: string, extra: { instanceId?: string; log?: string[] } = {}): StreamsMember {
  const m = new StreamsMember({
    bootstrapServers: `127.0.0.1:${server.port}`,
    applicationId,
    topology: topology(),
    instanceId: extra.instanceId,
    rebalanceTimeoutMs: 5000,
    retryBackoffMs: 20,
    onTasksAssigned: (a) => void extra.log?.push(`assigned ${ids(a).join(' ')}`),
    onTasksRevoked: (r) => void extra.log?.push(`revoked ${ids(r).join(' ')}`),
  })
  members.push(m)
  return m
}

function ids(t: StreamsTasks): string[] {
  return t.activeTasks.flatMap((e) => e.partitions.map((p) => `${e.subtopologyId}_${p}`)).sort()
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('StreamsMember against a Topograph server', { timeout: 40_000 }, () => {
  it('joins at v1 with a client-generated member id and the broker interval, and gets every task', async () => {
    const a = member('app-single')
    await a.start()
    assert.equal(a.heartbeatVersion, 1)
    // The broker's interval, or one the heartbeat phases moved within their bounds of it.
    const { minMs, maxMs } = heartbeatIntervalBounds(HEARTBEAT_MS, 3000)
    assert.ok(a.heartbeatIntervalMs >= minMs && a.heartbeatIntervalMs <= maxMs, `${a.heartbeatIntervalMs}`)
    await waitFor('all tasks', () => ids(a.tasks()).length === ALL.length)
    assert.deepEqual(ids(a.tasks()), ALL)
    const [d] = [...(await admin.describeStreamsGroups(['app-single']).all()).values()]
    assert.ok(d)
    assert.deepEqual(
      d.members.map((m) => [m.memberId, m.processId]),
      [[a.memberId, a.processId]],
    )
    assert.equal(d.members[0]!.memberEpoch, a.memberEpoch)
    // Without a topology description plugin the broker never asks for a push.
    assert.equal(a.pushManager.pushRequired, false)
    await a.close()
  })

  it('two members converge with every task assigned once; after one closes the other gets all', async () => {
    const logA: string[] = []
    const a = member('app-two', { log: logA })
    const b = member('app-two')
    await a.start()
    await waitFor('a owns every task', () => ids(a.tasks()).length === ALL.length)
    await b.start()
    const disjointAndComplete = () => {
      const x = ids(a.tasks())
      const y = ids(b.tasks())
      return x.length > 0 && y.length > 0 && [...x, ...y].sort().join() === ALL.join()
    }
    await waitFor('a split of every task between a and b', disjointAndComplete)
    assert.equal(ids(a.tasks()).length + ids(b.tasks()).length, ALL.length)
    assert.ok(
      logA.some((l) => l.startsWith('revoked ')),
      'a revoked tasks before b could own them',
    )
    // The broker's view matches once both have acknowledged.
    await waitFor('the group to be stable', () => a.state === 'STABLE' && b.state === 'STABLE')
    await b.close()
    assert.equal(b.state, 'CLOSED')
    await waitFor('a owns every task again', () => ids(a.tasks()).length === ALL.length)
    assert.deepEqual(ids(a.tasks()), ALL)
    const [d] = [...(await admin.describeStreamsGroups(['app-two']).all()).values()]
    assert.deepEqual(
      d!.members.map((m) => m.memberId),
      [a.memberId],
      'the closed member left the group (epoch -1)',
    )
    await a.close()
  })

  it('a static member leaves with -2, stays in the group and gets its tasks back when it rejoins', async () => {
    const first = member('app-static', { instanceId: 'instance-1' })
    await first.start()
    await waitFor('all tasks', () => ids(first.tasks()).length === ALL.length)
    await first.close()
    assert.equal(first.memberEpoch, -2)
    const [away] = [...(await admin.describeStreamsGroups(['app-static']).all()).values()]
    assert.deepEqual(
      away!.members.map((m) => [m.memberId, m.instanceId, m.memberEpoch]),
      [[first.memberId, 'instance-1', -2]],
    )
    const again = member('app-static', { instanceId: 'instance-1' })
    await again.start()
    await waitFor('the tasks back', () => ids(again.tasks()).length === ALL.length)
    const [back] = [...(await admin.describeStreamsGroups(['app-static']).all()).values()]
    assert.deepEqual(
      back!.members.map((m) => [m.memberId, m.instanceId]),
      [[again.memberId, 'instance-1']],
    )
    await again.close()
  })

  it('surfaces MISSING_SOURCE_TOPICS from the broker', async () => {
    const seen: Array<readonly StreamsGroupStatus[]> = []
    const m = new StreamsMember({
      bootstrapServers: `127.0.0.1:${server.port}`,
      applicationId: 'app-missing',
      topology: new Topology().addSource('s', 'no-such-topic').addProcessor('p', ['s']),
    })
    members.push(m)
    m.on('status', (s: readonly StreamsGroupStatus[]) => seen.push(s))
    await m.start()
    await waitFor('a status', () => seen.length > 0)
    assert.ok(
      seen[0]!.some(
        (s) => s.statusName === 'MISSING_SOURCE_TOPICS' && s.statusDetail.includes('no-such-topic'),
      ),
      JSON.stringify(seen),
    )
    assert.deepEqual(ids(m.tasks()), [])
    await m.close()
  })
})
