// The console page in headless Chromium against a real in-process Topograph server (memory plugin)
// that starts the console itself (console.listener), with the demo applications running as real
// streams members: every description, member and task on screen comes from the coordinator. The
// expected drawing is the admin client's own describeStreamsGroups(includeTopologyDescription).
// Screenshots go to .tmp/console/.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import * as esbuild from 'esbuild'
import type { Page } from 'playwright-core'
import { inventoryApplication, ordersApplication, type RunningDemo, startDemo } from '../../src/cli/demo.js'
import { Admin, type StreamsGroupDescription } from '../../src/clients/admin/index.js'
import type { StreamsMember } from '../../src/clients/streams/member.js'
import { formatTasks } from '../../src/console/assignments.js'
import { loadConsoleAssets, packageRoot } from '../../src/console/assets.js'
import { topologyGraph } from '../../src/console/model.js'
import type { RunningServer } from '../../src/index.js'
import { ARTIFACTS, type Browser, launchBrowser, openConsolePage, startServerWithConsole } from './browser.js'
import { describeApp } from './fixtures.js'

const DEMO_GROUPS = ['demo-inventory', 'demo-orders'] as const
/**
 * Every task of each demo application (3 partitions per topic). In demo-inventory the global store
 * takes sub-topology number 0, as in Kafka Streams, so its one task-carrying sub-topology is 1.
 */
const ALL_TASKS: Readonly<Record<string, readonly string[]>> = {
  'demo-orders': ['0_0', '0_1', '0_2', '1_0', '1_1', '1_2'],
  'demo-inventory': ['1_0', '1_1', '1_2'],
}

let dataDir: string
let server: RunningServer
let consoleUrl: string
let demo: RunningDemo
let admin: Admin
let browser: Browser

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'topograph-console-real-'))
  ;({ server, consoleUrl } = await startServerWithConsole(dataDir, {
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.heartbeat.interval.ms': '200',
    'group.streams.min.heartbeat.interval.ms': '200',
    'group.streams.topology.description.plugin.class': 'memory',
  }))
  const bootstrapServers = `127.0.0.1:${server.address.port}`
  demo = await startDemo({ bootstrapServers, instances: 2 })
  admin = Admin.create({ bootstrapServers, clientId: 'console-browser-test' })
  browser = await launchBrowser()
})

after(async () => {
  await browser?.close()
  await admin?.close()
  await demo?.close()
  await server?.close()
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
})

const open = (hash: string): Promise<Page> => openConsolePage(browser, consoleUrl, hash)

const attrs = (page: Page, selector: string, name: string): Promise<string[]> =>
  page.$$eval(selector, (els, n) => els.map((e) => e.getAttribute(n) ?? ''), name)

const membersOf = (groupId: string): StreamsMember[] => demo.members.filter((m) => m.groupId === groupId)
const label = (memberId: string): string => memberId.slice(0, 12)

async function describeGroup(groupId: string): Promise<StreamsGroupDescription> {
  return admin
    .describeStreamsGroups([groupId], { includeTopologyDescription: true, timeoutMs: 5000 })
    .get(groupId)
}

/** Polls the admin client until the group is settled: every task running, on its target member. */
async function settled(
  groupId: string,
  members: number,
  timeoutMs = 20_000,
): Promise<StreamsGroupDescription> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const g = await describeGroup(groupId)
    const tasks = g.members
      .flatMap((m) =>
        m.assignment.activeTasks.flatMap((t) => t.partitions.map((p) => `${t.subtopologyId}_${p}`)),
      )
      .sort()
    const reconciled = g.members.every(
      (m) => JSON.stringify(m.assignment) === JSON.stringify(m.targetAssignment),
    )
    if (
      g.groupState === 'Stable' &&
      g.members.length === members &&
      g.topologyDescriptionStatus === 'AVAILABLE' &&
      reconciled &&
      JSON.stringify(tasks) === JSON.stringify(ALL_TASKS[groupId])
    )
      return g
    if (Date.now() > end) throw new Error(`${groupId} did not settle: ${JSON.stringify(g)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Waits until the members table shows exactly these rows: member id → active tasks text. */
async function waitForMembersTable(page: Page, expected: Record<string, string>): Promise<void> {
  await page.waitForFunction((want) => {
    const rows = Array.from(document.querySelectorAll('.members-table tbody tr[data-member-id]'))
    const got: Record<string, string> = {}
    for (const r of rows) got[r.getAttribute('data-member-id')!] = r.children[3]?.textContent ?? ''
    return JSON.stringify(Object.entries(got).sort()) === JSON.stringify(Object.entries(want).sort())
  }, expected)
}

const activeTasksByMember = (g: StreamsGroupDescription): Record<string, string> =>
  Object.fromEntries(g.members.map((m) => [m.memberId, formatTasks(m.assignment.activeTasks)]))

describe('console page against a real server with the demo applications', () => {
  it('serves the bundle of the current sources', async () => {
    // The server's console serves dist/console/ when it exists: a stale build would hide changes
    // to src/console/ui from every other test here.
    const served = await (await fetch(`${consoleUrl}/app.js`, { signal: AbortSignal.timeout(30_000) })).text()
    const root = packageRoot()
    const built = await esbuild.build({
      // The options of scripts/build-console.mjs, without writing.
      absWorkingDir: root,
      entryPoints: ['src/console/ui/main.ts'],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      outfile: join(root, 'dist', 'console', 'app.js'),
      minify: true,
      sourcemap: false,
      legalComments: 'linked',
      logLevel: 'silent',
      write: false,
    })
    const minified = built.outputFiles.find((f) => f.path.endsWith('app.js'))?.text
    const fromSource = await loadConsoleAssets({ fromSource: true })
    const stale = 'dist/console/ is not built from the current sources: run `node scripts/build-console.mjs`'
    assert.ok(served === minified || served === fromSource['app.js'], stale)
    for (const name of ['app.css', 'index.html'] as const) {
      const res = await fetch(`${consoleUrl}/${name}`, { signal: AbortSignal.timeout(10_000) })
      assert.ok((await res.text()) === fromSource[name], `${name}: ${stale}`)
    }
  })

  it('lists both demo groups with AVAILABLE badges once the members have pushed', async () => {
    const page = await open('#/')
    try {
      for (const id of DEMO_GROUPS) {
        // A bounded poll: the page refreshes every 300 ms until the badge turns AVAILABLE.
        await page.waitForSelector(`tr[data-group-id="${id}"] .badge[data-status="AVAILABLE"]`, {
          timeout: 30_000,
        })
      }
      assert.deepEqual(await attrs(page, 'tr[data-group-id]', 'data-group-id'), [...DEMO_GROUPS])
      for (const id of DEMO_GROUPS) {
        const g = await settled(id, 2)
        const cell = (col: string) => page.textContent(`tr[data-group-id="${id}"] [data-col="${col}"]`)
        await page.waitForFunction(
          (sel) => document.querySelector(sel)?.textContent === 'Stable',
          `tr[data-group-id="${id}"] [data-col="state"]`,
        )
        assert.equal(await cell('members'), '2')
        assert.equal(await cell('topology-epoch'), String(g.topologyEpoch))
      }
      await page.screenshot({ path: join(ARTIFACTS, 'real-groups.png') })
    } finally {
      await page.close()
    }
  })

  for (const [groupId, app] of [
    ['demo-orders', ordersApplication],
    ['demo-inventory', inventoryApplication],
  ] as const) {
    it(`draws exactly the description the coordinator returns for ${groupId}, with its real members`, async () => {
      const g = await settled(groupId, 2)
      // What the admin client gets is what the members pushed.
      assert.deepEqual(g.topologyDescription, describeApp(app()))
      const expected = topologyGraph(g.topologyDescription!)
      const page = await open(`#/group/${groupId}`)
      try {
        await page.waitForSelector('svg.graph[data-state="drawn"]')
        assert.deepEqual(
          (await attrs(page, '.tg-node', 'data-id')).sort(),
          expected.nodes.map((n) => n.id).sort(),
        )
        assert.deepEqual(
          (await attrs(page, '.tg-edge', 'data-id')).sort(),
          expected.edges.map((e) => e.id).sort(),
        )
        assert.deepEqual(
          (await attrs(page, '.tg-box', 'data-id')).sort(),
          expected.boxes.map((b) => b.id).sort(),
        )
        assert.equal(await page.getAttribute('svg.graph', 'data-epoch'), String(g.topologyEpoch))
        assert.equal(await page.locator('.flag').count(), 0)
        assert.equal(await page.getAttribute('.facts .badge', 'data-status'), 'AVAILABLE')
        assert.ok(
          await page.$eval('aside.side', (e) => e.scrollWidth <= e.clientWidth),
          'the side panel scrolls sideways',
        )
        // The members table: the demo's members of this application, each with its active tasks.
        const ids = membersOf(groupId).map((m) => m.memberId)
        assert.deepEqual(g.members.map((m) => m.memberId).sort(), [...ids].sort())
        await waitForMembersTable(page, activeTasksByMember(g))
        for (const m of g.members) {
          const row = page.locator(`.members-table tr[data-member-id="${m.memberId}"]`)
          assert.match((await row.textContent())!, new RegExp(`^${label(m.memberId)}${m.clientId}`))
        }
        // Who runs what: every task, on the member the coordinator assigned it to.
        assert.deepEqual(await attrs(page, 'tr[data-task]', 'data-task'), [...ALL_TASKS[groupId]!])
        for (const m of g.members)
          for (const t of m.assignment.activeTasks)
            for (const p of t.partitions) {
              const cells = page.locator(`tr[data-task="${t.subtopologyId}_${p}"] td`)
              assert.equal(await cells.nth(1).textContent(), label(m.memberId))
            }
        await page.screenshot({ path: join(ARTIFACTS, `real-group-${groupId}.png`) })
      } finally {
        await page.close()
      }
    })
  }

  it('shows a member leaving on the next refresh, without reloading the page', async () => {
    const initial = await settled('demo-orders', 2)
    const [leaving, staying] = membersOf('demo-orders')
    const page = await open('#/group/demo-orders')
    const list = await open('#/')
    try {
      await page.waitForSelector('svg.graph[data-state="drawn"]')
      await waitForMembersTable(page, activeTasksByMember(initial))
      await list.waitForSelector('tr[data-group-id="demo-orders"] [data-col="members"]')
      assert.equal(await list.textContent('tr[data-group-id="demo-orders"] [data-col="members"]'), '2')
      for (const p of [page, list])
        await p.evaluate(() => {
          ;(window as unknown as { marker: number }).marker = 42
        })
      const nodesBefore = await attrs(page, '.tg-node', 'data-id')

      await leaving!.close()

      const afterLeave = await settled('demo-orders', 1)
      assert.equal(afterLeave.members[0]!.memberId, staying!.memberId)
      await waitForMembersTable(page, { [staying!.memberId]: '0: [0, 1, 2]; 1: [0, 1, 2]' })
      await page.waitForFunction(() => document.querySelector('[data-fact="members"]')?.textContent === '1')
      assert.equal(await page.locator(`tr[data-member-id="${leaving!.memberId}"]`).count(), 0)
      for (const task of ALL_TASKS['demo-orders']!) {
        const cells = page.locator(`tr[data-task="${task}"] td`)
        assert.equal(await cells.nth(1).textContent(), label(staying!.memberId), task)
      }
      // The drawing is the same description, still current.
      assert.deepEqual(await attrs(page, '.tg-node', 'data-id'), nodesBefore)
      assert.equal(await page.locator('.flag').count(), 0)
      await list.waitForFunction(
        () =>
          document.querySelector('tr[data-group-id="demo-orders"] [data-col="members"]')?.textContent === '1',
      )
      assert.equal(
        await list.getAttribute('tr[data-group-id="demo-orders"] .badge', 'data-status'),
        'AVAILABLE',
      )
      assert.equal(await list.textContent('tr[data-group-id="demo-inventory"] [data-col="members"]'), '2')
      for (const p of [page, list])
        assert.equal(await p.evaluate(() => (window as unknown as { marker: number }).marker), 42)
      await page.screenshot({ path: join(ARTIFACTS, 'real-group-demo-orders-after-leave.png') })
    } finally {
      await page.close()
      await list.close()
    }
  })
})
