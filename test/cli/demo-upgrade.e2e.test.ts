// The demo on a data.dir kept from before its members sent Kafka Streams' internal topic configs:
// the groups hold the demo's topologies without configs at topology epoch 0. The demo started again
// on that data.dir must join, get its tasks, push its descriptions and process data, whether the
// old members left their groups or are still in them until their sessions time out.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, describe, it } from 'node:test'
import {
  type DemoApplication,
  inventoryApplication,
  ordersApplication,
  type RunningDemo,
  startDemo,
} from '../../src/cli/demo.js'
import { Admin, OffsetSpec } from '../../src/clients/admin/index.js'
import {
  heartbeatTopology,
  internalTopicDecorator,
  topologyDescriptionToWire,
} from '../../src/clients/streams/index.js'
import type { StreamsGroupHeartbeatRequestTopology } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import type { StreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { eventually } from '../helpers/interop.js'
import { FAST_GROUPS, push } from '../helpers/kip1331.js'
import { heartbeatBody, type HeartbeatingMember } from '../helpers/streams-member.js'
import { startTestServer, type TestServer, tempDataDir } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

/** As `npm start` configures the server, with sessions short enough to time out within the test. */
const GROUPS = {
  ...FAST_GROUPS,
  'group.streams.topology.description.plugin.class': 'sqlite',
  'group.streams.session.timeout.ms': '2000',
  'group.streams.min.session.timeout.ms': '1000',
}

/** The topology the demo's members sent before: epoch 0, no internal topic configs. */
function oldTopology(app: DemoApplication): StreamsGroupHeartbeatRequestTopology {
  const t = heartbeatTopology(app.topology, { applicationId: app.applicationId })
  return {
    epoch: 0,
    subtopologies: t.subtopologies.map((s) => ({
      ...s,
      stateChangelogTopics: s.stateChangelogTopics.map((c) => ({ ...c, topicConfigs: [] })),
      repartitionSourceTopics: s.repartitionSourceTopics.map((r) => ({ ...r, topicConfigs: [] })),
    })),
  }
}

const servers: TestServer[] = []
const clients: Admin[] = []
let demo: RunningDemo | undefined

after(async () => {
  await demo?.close()
  for (const a of clients) await a.close()
  for (const s of servers) await s.stop()
})

/**
 * Runs one old member per demo application on a server over `dataDir` (the demo's topics created as
 * the demo creates them; the member pushes its description), then has it leave, or close its
 * connection and stay in its group.
 */
async function runOldMembers(dataDir: string, leave: boolean): Promise<void> {
  const server = await startTestServer(GROUPS, {}, dataDir)
  const admin = Admin.create({ bootstrapServers: `127.0.0.1:${server.port}`, clientId: 'old-demo' })
  const client = await WireClient.connect(server.port)
  try {
    const apps = [ordersApplication(), inventoryApplication()]
    await admin.createTopics(apps.flatMap((a) => a.topics)).all()
    for (const app of apps) {
      const m: HeartbeatingMember = {
        groupId: app.applicationId,
        memberId: randomUUID(),
        epoch: 0,
        endpointEpoch: -1,
        active: [],
        standby: [],
        warmup: [],
      }
      const joined = await client.request<StreamsGroupHeartbeatResponse>(
        88,
        0,
        heartbeatBody(m, { topology: oldTopology(app), processId: randomUUID() }),
      )
      assert.equal(joined.body.errorCode, 0, joined.body.errorMessage ?? '')
      assert.ok(joined.body.memberEpoch > 0)
      // as the old members did: the description of topology epoch 0
      const description = topologyDescriptionToWire(
        app.topology.describe(),
        internalTopicDecorator(app.topology, app.applicationId),
      )
      const pushed = await push(client, app.applicationId, m.memberId, 0, description)
      assert.equal(pushed.errorCode, 0, pushed.errorMessage ?? '')
      if (leave) {
        m.epoch = -1
        const left = await client.request<StreamsGroupHeartbeatResponse>(88, 0, heartbeatBody(m))
        assert.equal(left.body.errorCode, 0, left.body.errorMessage ?? '')
      }
    }
    const groups = await admin.describeStreamsGroups(apps.map((a) => a.applicationId)).all()
    for (const app of apps) {
      const g = groups.get(app.applicationId)!
      assert.equal(g.topologyEpoch, 0)
      assert.equal(g.members.length, leave ? 0 : 1)
    }
  } finally {
    client.close()
    await admin.close()
    await server.stop(true)
  }
}

async function demoRunsOn(dataDir: string): Promise<void> {
  const server = await startTestServer(GROUPS, {}, dataDir)
  servers.push(server)
  const bootstrap = `127.0.0.1:${server.port}`
  const admin = Admin.create({ bootstrapServers: bootstrap, clientId: 'demo-upgrade-test' })
  clients.push(admin)
  demo = await startDemo({ bootstrapServers: bootstrap, instances: 1, feedIntervalMs: 100 })
  const ids = ['demo-orders', 'demo-inventory']
  let seen = ''
  await eventually(
    async () => {
      const groups = await admin.describeStreamsGroups(ids, { includeTopologyDescription: true }).all()
      seen = JSON.stringify(
        ids.map((id) => {
          const g = groups.get(id)!
          return [id, g.topologyEpoch, g.topologyDescriptionStatus, g.members.map((m) => m.assignment)]
        }),
      )
      return ids.every((id) => {
        const g = groups.get(id)!
        return (
          g.topologyEpoch === 1 &&
          g.topologyDescriptionStatus === 'AVAILABLE' &&
          g.members.length === 1 &&
          g.members[0]!.topologyEpoch === 1 &&
          g.members[0]!.assignment.activeTasks.length > 0
        )
      })
        ? true
        : undefined
    },
    60_000,
    () => seen,
  )
  const written = async (topic: string): Promise<number> =>
    (
      await admin
        .listOffsets([0, 1, 2].map((partition) => ({ topic, partition, spec: OffsetSpec.latest() })))
        .all()
    ).reduce((sum, o) => sum + Number(o.offset), 0)
  await eventually(
    async () => {
      const enriched = await written('enriched-orders')
      const committed = [
        ...(await admin.listStreamsGroupOffsets('demo-orders')),
        ...(await admin.listStreamsGroupOffsets('demo-inventory')),
      ].filter((o) => Number(o.offset) > 0)
      const topics = new Set(committed.map((o) => o.topic))
      seen = `enriched-orders ${enriched}, committed on ${[...topics].join(', ')}`
      return enriched > 0 && topics.has('orders') && [...topics].some((t) => t.startsWith('inventory-'))
        ? true
        : undefined
    },
    120_000,
    () => seen,
  )
  await demo.close()
  demo = undefined
}

describe('the demo on a data.dir from before its internal topic configs', () => {
  it('runs after the old members left their groups', { timeout: 300_000 }, async () => {
    const dataDir = tempDataDir()
    await runOldMembers(dataDir, true)
    await demoRunsOn(dataDir)
  })

  it('runs while the old members are still in their groups', { timeout: 300_000 }, async () => {
    const dataDir = tempDataDir()
    await runOldMembers(dataDir, false)
    await demoRunsOn(dataDir)
  })
})
