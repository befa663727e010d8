// KIP-1331 end to end with the project's own clients (test plan §6, §7.18, §8.19/20): a StreamsMember
// with default settings pushes when asked and the admin client describes AVAILABLE with the pushed
// description; `kafka-streams-groups --describe --topology` prints it; a member with
// topology.description.push.enabled=false never pushes and describe says NOT_STORED. The server runs
// the built-in `memory` plugin.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, test } from 'node:test'
import { Admin } from '../../src/clients/admin/index.js'
import { StreamsMember, Topology } from '../../src/clients/streams/index.js'
import { descriptionEpochs, FAST_GROUPS, waitFor } from '../helpers/kip1331.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { coordinatorFrom } from '../../src/coordinator/service/index.js'

let server: TestServer
let admin: Admin
const members: StreamsMember[] = []

before(async () => {
  server = await startTestServer({
    ...FAST_GROUPS,
    'coordinator.storage': 'memory',
    'group.streams.topology.description.plugin.class': 'memory',
  })
  admin = Admin.create({ bootstrapServers: `127.0.0.1:${server.port}` })
  await admin.createTopics([{ name: 'orders', numPartitions: 2 }]).all()
})

after(async () => {
  for (const m of members) await m.close()
  await admin?.close()
  await server?.stop()
})

function topology(): Topology {
  return new Topology()
    .addSource('orders-source', 'orders')
    .addProcessor('orders-proc', ['orders-source'])
    .addSink('orders-sink', 'orders-out', 'orders-proc')
}

function member(applicationId: string, pushEnabled = true): StreamsMember {
  const m = new StreamsMember({
    bootstrapServers: `127.0.0.1:${server.port}`,
    applicationId,
    topology: topology(),
    rebalanceTimeoutMs: 5000,
    retryBackoffMs: 20,
    'topology.description.push.enabled': pushEnabled,
  })
  members.push(m)
  return m
}

const service = () => coordinatorFrom(server.server.context.coordinator)

test('13/14. a default member pushes when asked; admin describe shows AVAILABLE with its topology', async () => {
  const m = member('client-app')
  await m.start()
  await waitFor(
    'stored description',
    async () => (await descriptionEpochs(service(), 'client-app'))?.stored === 0,
  )
  const d = await admin.describeStreamsGroups(['client-app'], { includeTopologyDescription: true }).all()
  const g = d.get('client-app')!
  assert.equal(g.topologyDescriptionStatus, 'AVAILABLE')
  assert.ok(g.topologyDescription !== null)
  const text = JSON.stringify(g.topologyDescription)
  for (const name of ['orders-source', 'orders-proc', 'orders-sink', 'orders-out'])
    assert.ok(text.includes(name), name)
  const plain = await admin.describeStreamsGroups(['client-app']).all()
  assert.equal(plain.get('client-app')!.topologyDescriptionStatus, 'NOT_REQUESTED')
  assert.equal(plain.get('client-app')!.topologyDescription, null)
})

test('18/19. kafka-streams-groups --describe --topology prints the running group', {
  timeout: 60_000,
}, async () => {
  await waitFor(
    'stored description',
    async () => (await descriptionEpochs(service(), 'client-app'))?.stored === 0,
  )
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli/kafka-streams-groups.ts',
      '--bootstrap-server',
      `127.0.0.1:${server.port}`,
      '--describe',
      '--topology',
      '--group',
      'client-app',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let out = ''
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString()
  })
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString()
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  assert.equal(code, 0, out)
  assert.match(out, /Topologies:/)
  assert.match(out, /Sub-topology: 0/)
  assert.match(out, /orders/)
})

test('15/20. with topology.description.push.enabled=false nothing is pushed and describe says NOT_STORED', async () => {
  const m = member('opt-out-app', false)
  await m.start()
  await waitFor('a member', async () => (await descriptionEpochs(service(), 'opt-out-app')) !== undefined)
  // Several heartbeats later (one flagged), still nothing stored and no push in flight.
  await new Promise((r) => setTimeout(r, 500))
  assert.equal(m.pushManager.inFlight ?? null, null)
  assert.deepEqual(await descriptionEpochs(service(), 'opt-out-app'), { stored: -1, failed: -1 })
  const d = await admin.describeStreamsGroups(['opt-out-app'], { includeTopologyDescription: true }).all()
  assert.equal(d.get('opt-out-app')!.topologyDescriptionStatus, 'NOT_STORED')
  assert.equal(d.get('opt-out-app')!.topologyDescription, null)
})
