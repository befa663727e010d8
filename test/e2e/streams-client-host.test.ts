// The member's ClientId and ClientHost come from the request header and the connection: a streams
// member that joined over TCP shows its client id and "/127.0.0.1" in StreamsGroupDescribe (v0 and
// v1), and a static member that rejoins from a new connection keeps showing the connection's host.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { StreamsGroupDescribeResponse } from '../../src/protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

let server: TestServer
let admin: WireClient
const members: StreamsMember[] = []

before(async () => {
  server = await startTestServer({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
  })
  admin = await WireClient.connect(server.port)
  const { body } = await admin.request<{ topics: { errorCode: number }[] }>(19, 7, {
    topics: [{ name: 'hosts-in', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 1000,
  })
  assert.equal(body.topics[0].errorCode, 0)
})

after(async () => {
  for (const m of members) m.close()
  admin?.close()
  await server?.stop()
})

async function describeGroup(version: number, groupId: string, includeTopologyDescription = false) {
  const { body } = await admin.request<StreamsGroupDescribeResponse>(89, version, {
    groupIds: [groupId],
    includeAuthorizedOperations: false,
    includeTopologyDescription,
  })
  return body.groups[0]
}

describe('StreamsGroupHeartbeat carries the connection facts', () => {
  it('describe v0 and v1 show ClientId from the header and ClientHost from the peer address', async () => {
    const m = await StreamsMember.connect(server.port, {
      groupId: 'hosts-app',
      memberId: 'member-a',
      processId: 'p-a',
      topology: simpleTopology(['hosts-in']),
    })
    members.push(m)
    const r = await m.heartbeat()
    assert.equal(r.errorCode, 0)
    for (const version of [0, 1]) {
      const d = await describeGroup(version, 'hosts-app')
      assert.equal(d.errorCode, 0)
      assert.equal(d.members.length, 1)
      assert.equal(d.members[0].memberId, 'member-a')
      // The wire client's header client id.
      assert.equal(d.members[0].clientId, 'test')
      assert.equal(d.members[0].clientHost, '/127.0.0.1')
    }
    // v1 without a topology description plugin: NOT_REQUESTED (0) unless asked, NOT_STORED (1) when asked.
    assert.equal((await describeGroup(1, 'hosts-app', false)).topologyDescriptionStatus, 0)
    assert.equal((await describeGroup(1, 'hosts-app', true)).topologyDescriptionStatus, 1)
  })

  it('a static member that rejoins from a new connection shows that connection host', async () => {
    const first = await StreamsMember.connect(server.port, {
      groupId: 'hosts-static',
      memberId: 'static-1',
      processId: 'p-s',
      instanceId: 'instance-1',
      topology: simpleTopology(['hosts-in']),
    })
    members.push(first)
    assert.equal((await first.heartbeat()).errorCode, 0)
    assert.equal((await first.heartbeat({ memberEpoch: -2 })).errorCode, 0)
    first.close()
    const second = await StreamsMember.connect(server.port, {
      groupId: 'hosts-static',
      memberId: 'static-2',
      processId: 'p-s',
      instanceId: 'instance-1',
      topology: simpleTopology(['hosts-in']),
    })
    members.push(second)
    assert.equal((await second.heartbeat()).errorCode, 0)
    const d = await describeGroup(1, 'hosts-static')
    assert.deepEqual(
      d.members.map((x) => [x.memberId, x.instanceId, x.clientHost]),
      [['static-2', 'instance-1', '/127.0.0.1']],
    )
  })
})
