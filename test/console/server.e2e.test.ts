// The console's HTTP API on the real admin client against a real Topograph server with the demo
// applications running as real streams members; /metrics; the UI bundle; error answers.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Registry } from 'prom-client'
import {
  inventoryApplication,
  ordersApplication,
  type RunningDemo,
  startDemo,
  TOPOLOGY_EPOCH,
} from '../../src/cli/demo.js'
import {
  startConsole,
  type GroupResponse,
  type GroupsResponse,
  type RunningConsole,
} from '../../src/console/index.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { describeApp } from './fixtures.js'

let server: TestServer
let demo: RunningDemo
let console_: RunningConsole
const registry = new Registry()

async function get(path: string): Promise<{ status: number; type: string; body: string; headers: Headers }> {
  const res = await fetch(`${console_.url}${path}`, { signal: AbortSignal.timeout(15_000) })
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    body: await res.text(),
    headers: res.headers,
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

before(async () => {
  server = await startTestServer({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.heartbeat.interval.ms': '200',
    'group.streams.min.heartbeat.interval.ms': '200',
    'group.streams.topology.description.plugin.class': 'memory',
  })
  demo = await startDemo({ bootstrapServers: `127.0.0.1:${server.port}`, instances: 2 })
  registry.registerMetric(
    new (await import('prom-client')).Counter({
      name: 'console_test_total',
      help: 'a test counter',
      registers: [],
    }),
  )
  console_ = await startConsole({
    bootstrapServers: [`127.0.0.1:${server.port}`],
    listener: { host: '127.0.0.1', port: 0 },
    metricsRegistry: registry,
    uiFromSource: true,
  })
})

after(async () => {
  await console_?.close()
  await demo?.close()
  await server?.stop()
})

describe('console HTTP API against a real server', () => {
  it('lists both demo groups with state, epochs, member count and description status', async () => {
    // The members push their descriptions when the coordinator asks (KIP-1331): both groups reach
    // AVAILABLE, and stay there.
    const data = await waitFor('two stable demo groups with 2 members and a stored description', async () => {
      const r = await get('/api/groups')
      assert.equal(r.status, 200)
      const d = JSON.parse(r.body) as GroupsResponse
      const ready = d.groups.filter(
        (g) =>
          g.groupState === 'Stable' && g.memberCount === 2 && g.topologyDescriptionStatus === 'AVAILABLE',
      )
      return ready.length === 2 ? d : undefined
    })
    assert.deepEqual(
      data.groups.map((g) => g.groupId),
      ['demo-inventory', 'demo-orders'],
    )
    for (const g of data.groups) {
      assert.equal(g.error, null)
      assert.equal(g.topologyEpoch, TOPOLOGY_EPOCH)
      assert.ok((g.groupEpoch ?? 0) >= 1)
      assert.equal(g.topologyDescriptionStatus, 'AVAILABLE')
    }
    assert.ok(!Number.isNaN(Date.parse(data.fetchedAt)))
  })

  it('describes a group with its members, every task of the topology assigned once', async () => {
    // Once every task is running (the members reconcile after the group is Stable).
    const { group, shownDescription } = await waitFor('every task of demo-orders running', async () => {
      const r = await get('/api/groups/demo-orders')
      assert.equal(r.status, 200)
      const d = JSON.parse(r.body) as GroupResponse
      const running = d.group.members.flatMap((m) => m.assignment.activeTasks.flatMap((t) => t.partitions))
      return running.length === 6 ? d : undefined
    })
    assert.equal(group.members.length, 2)
    assert.deepEqual(
      group.subtopologies.map((s) => s.subtopologyId),
      ['0', '1'],
    )
    const tasks = group.members
      .flatMap((m) =>
        m.assignment.activeTasks.flatMap((t) => t.partitions.map((p) => `${t.subtopologyId}_${p}`)),
      )
      .sort()
    assert.deepEqual(tasks, ['0_0', '0_1', '0_2', '1_0', '1_1', '1_2'])
    // The coordinator stores what the members pushed; the drawing is of exactly that, for the
    // group's current topology epoch.
    assert.equal(group.topologyDescriptionStatus, 'AVAILABLE')
    assert.deepEqual(group.topologyDescription, describeApp(ordersApplication()))
    assert.deepEqual(shownDescription, {
      topologyEpoch: group.topologyEpoch,
      current: true,
      description: describeApp(ordersApplication()),
    })
  })

  it('downloads the description each demo application pushed', async () => {
    for (const [groupId, app] of [
      ['demo-orders', ordersApplication()],
      ['demo-inventory', inventoryApplication()],
    ] as const) {
      const r = await get(`/api/groups/${groupId}/topology-description.json`)
      assert.equal(r.status, 200)
      assert.equal(
        r.headers.get('content-disposition'),
        `attachment; filename="${groupId}-topology-description.json"`,
      )
      assert.deepEqual(JSON.parse(r.body), {
        groupId,
        topologyEpoch: TOPOLOGY_EPOCH,
        current: true,
        topologyDescription: JSON.parse(JSON.stringify(describeApp(app))),
      })
    }
  })

  it('answers 404 GROUP_ID_NOT_FOUND for an unknown group, and 404 for the description download', async () => {
    const r = await get('/api/groups/no-such-group')
    assert.equal(r.status, 404)
    assert.equal((JSON.parse(r.body) as { errorName: string }).errorName, 'GROUP_ID_NOT_FOUND')
    const d = await get('/api/groups/no-such-group/topology-description.json')
    assert.equal(d.status, 404)
  })

  it('serves /metrics from the given registry in Prometheus text format', async () => {
    const r = await get('/metrics')
    assert.equal(r.status, 200)
    assert.match(r.type, /^text\/plain/)
    assert.match(r.body, /# TYPE console_test_total counter/)
  })

  it('serves the page, its script and its styles, and 404/405 for anything else', async () => {
    const page = await get('/')
    assert.equal(page.status, 200)
    assert.match(page.type, /text\/html/)
    assert.match(page.body, /<script type="module" src="app.js">/)
    // A page without an icon of its own makes every browser ask for /favicon.ico, a 404 in the
    // browser's console on each load.
    assert.match(page.body, /<link rel="icon" href="data:[^"]*" \/>/)
    const js = await get('/app.js')
    assert.equal(js.status, 200)
    assert.match(js.type, /text\/javascript/)
    assert.ok(js.body.length > 100_000, 'the bundle includes elkjs')
    const css = await get('/app.css')
    assert.match(css.type, /text\/css/)
    assert.equal((await get('/nothing')).status, 404)
    const post = await fetch(`${console_.url}/api/groups`, {
      method: 'POST',
      signal: AbortSignal.timeout(5000),
    })
    assert.equal(post.status, 405)
    await post.text()
  })
})
