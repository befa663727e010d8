// The console page in headless Chromium. Group states a live cluster cannot be made to show on
// demand (ERROR, a stored description of an older epoch, STALE_TOPOLOGY members, 500+ nodes) come
// from a FixtureSource injected into startConsole; everything else is the real server, HTTP API,
// bundle and browser. Screenshots go to .tmp/console/.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { startConsole, type RunningConsole } from '../../src/console/index.js'
import { topologyGraph } from '../../src/console/model.js'
import { ARTIFACTS, type Browser, launchBrowser } from './browser.js'
import {
  consumerGroup,
  FixtureSource,
  group,
  inventoryDescription,
  largeDescription,
  member,
  ordersDescription,
} from './fixtures.js'

const source = new FixtureSource()
let console_: RunningConsole
let browser: Browser

const orders = ordersDescription()
const inventory = inventoryDescription()

before(async () => {
  source.groups.set(
    'orders-app',
    group('orders-app', {
      description: orders,
      topologyEpoch: 1,
      members: [
        member('member-a', { topologyEpoch: 1, active: { '0': [0, 1], '1': [2] }, standby: { '1': [0] } }),
        member('member-b', { topologyEpoch: 0, active: { '0': [2], '1': [0, 1] } }),
      ],
    }),
  )
  source.groups.set(
    'inventory-app',
    group('inventory-app', { description: inventory, members: [member('m1')] }),
  )
  source.groups.set('errored-app', group('errored-app', { status: 'ERROR' }))
  source.groups.set('fresh-app', group('fresh-app', { status: 'NOT_STORED', state: 'Empty' }))
  source.groups.set('big-app', group('big-app', { description: largeDescription(26, 20) }))
  source.groups.set('lagging-app', group('lagging-app', { description: orders, topologyEpoch: 1 }))
  // Member ids as coordinators make them (22-character base64 UUIDs, one of wide letters) and Kafka
  // Streams' long client ids, with tasks in every role.
  source.groups.set(
    'wide-app',
    group('wide-app', {
      description: orders,
      members: [
        {
          ...member('cKiLh6zTDTMnQx3vRb0a1w', {
            active: { '0': [1], '1': [0, 2] },
            standby: { '0': [0, 2] },
          }),
          clientId: 'wide-app-7d0c9b1e-4f7a-4a55-9d8e-1c2b3a4d5e6f-StreamThread-1-consumer',
        },
        member('WMWmwMWMWQmwKx0pQe9aZw', {
          processId: 'f0d4e2c1-9b8a-4c7d-8e6f-5a4b3c2d1e0f',
          active: { '0': [0, 2], '1': [1] },
          standby: { '1': [0, 2] },
          warmup: { '0': [1] },
        }),
      ],
    }),
  )
  source.consumerGroups.set('shop-consumers', consumerGroup('shop-consumers'))
  source.topics.set('payments', [
    { partition: 0, logStartOffset: 2, logEndOffset: 10 },
    { partition: 1, logStartOffset: 0, logEndOffset: 5 },
  ])
  console_ = await startConsole({
    bootstrapServers: [],
    listener: { host: '127.0.0.1', port: 0 },
    source,
    metricsRegistry: null,
    uiFromSource: true,
  })
  browser = await launchBrowser()
})

after(async () => {
  await browser?.close()
  await console_?.close()
})

async function open(hash: string): Promise<Page> {
  const page = await browser.context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(`${console_.url}/?refresh=300${hash}`)
  return page
}

async function drawn(page: Page): Promise<void> {
  await page.waitForSelector('svg.graph[data-state="drawn"]')
}

const attrs = (page: Page, selector: string, name: string): Promise<string[]> =>
  page.$$eval(selector, (els, n) => els.map((e) => e.getAttribute(n) ?? ''), name)

describe('console page', () => {
  it('lists every group with state, epochs, members and a badge per description status', async () => {
    const page = await open('#/')
    try {
      await page.waitForSelector('tr[data-group-id="orders-app"]')
      assert.deepEqual(await attrs(page, 'tr[data-group-id]', 'data-group-id'), [
        'big-app',
        'errored-app',
        'fresh-app',
        'inventory-app',
        'lagging-app',
        'orders-app',
        'wide-app',
      ])
      const row = (id: string, col: string) =>
        page.textContent(`tr[data-group-id="${id}"] [data-col="${col}"]`)
      assert.equal(await row('orders-app', 'members'), '2')
      assert.equal(await row('orders-app', 'topology-epoch'), '1')
      assert.equal(await row('orders-app', 'group-epoch'), '7')
      assert.equal(await row('fresh-app', 'state'), 'Empty')
      const badge = (id: string) => page.getAttribute(`tr[data-group-id="${id}"] .badge`, 'data-status')
      assert.equal(await badge('orders-app'), 'AVAILABLE')
      assert.equal(await badge('errored-app'), 'ERROR')
      assert.equal(await badge('fresh-app'), 'NOT_STORED')
      await page.screenshot({ path: join(ARTIFACTS, 'groups.png') })
    } finally {
      await page.close()
    }
  })

  it('draws the topology: every node and edge of the description, in its sub-topology box', async () => {
    const page = await open('#/')
    try {
      await page.click('tr[data-group-id="orders-app"] a')
      await drawn(page)
      const expected = topologyGraph(orders)
      assert.deepEqual(
        (await attrs(page, '.tg-node', 'data-id')).sort(),
        expected.nodes.map((n) => n.id).sort(),
      )
      assert.deepEqual(
        (await attrs(page, '.tg-edge', 'data-id')).sort(),
        expected.edges.map((e) => e.id).sort(),
      )
      assert.deepEqual((await attrs(page, '.tg-box', 'data-id')).sort(), ['subtopology:0', 'subtopology:1'])
      // Every successor of the description is an edge between the two drawn nodes.
      for (const s of orders.subtopologies)
        for (const n of s.nodes)
          for (const succ of n.successors) {
            const sel = `.tg-edge[data-source="node:subtopology:${s.id}/${n.name}"][data-target="node:subtopology:${s.id}/${succ}"]`
            assert.equal(await page.locator(sel).count(), 1, sel)
          }
      // Nodes are drawn inside their box.
      const inBox = await page.$$eval('.tg-node[data-id^="node:subtopology:1/"]', (els) => {
        const box = document.querySelector('.tg-box[data-id="subtopology:1"]')!.getBoundingClientRect()
        return els.every((e) => {
          const r = e.getBoundingClientRect()
          return r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom
        })
      })
      assert.ok(inBox)
      // No page reload happened when navigating (hash routing).
      assert.equal(new URL(page.url()).hash, '#/group/orders-app')
      await page.screenshot({ path: join(ARTIFACTS, 'group-orders.png') })
    } finally {
      await page.close()
    }
  })

  it('flags STALE_TOPOLOGY members and shows who runs which partition', async () => {
    const page = await open('#/group/orders-app')
    try {
      await drawn(page)
      assert.equal(await page.locator('[data-flag="stale-topology"]').count(), 1)
      assert.match((await page.textContent('[data-flag="stale-topology"]'))!, /member-b.*epoch 0.*group at 1/)
      assert.equal(
        await page.locator('tr[data-member-id="member-b"] .badge[data-status="STALE_TOPOLOGY"]').count(),
        1,
      )
      assert.equal(await page.locator('tr[data-member-id="member-a"] .badge').count(), 0)
      assert.match((await page.textContent('tr[data-task="1_0"]'))!, /member-b.*member-a/)
      assert.match((await page.textContent('tr[data-task="0_2"]'))!, /member-b/)
    } finally {
      await page.close()
    }
  })

  it('shows a node’s details on click and highlights its edges', async () => {
    const page = await open('#/group/orders-app')
    try {
      await drawn(page)
      const joinNode = 'node:subtopology:1/KSTREAM-JOIN-0000000006'
      await page.click(`.tg-node[data-id="${joinNode}"]`)
      await page.waitForSelector(`.node-details[data-node-id="${joinNode}"]`)
      const text = (await page.textContent('.details'))!
      assert.match(text, /KSTREAM-JOIN-0000000006/)
      assert.match(text, /Storescustomers-store/)
      assert.match(text, /Tasks of sub-topology 1/)
      assert.equal(
        await page.getAttribute(`.tg-node[data-id="${joinNode}"]`, 'class'),
        'tg-node tg-node-processor selected',
      )
      const highlighted = await attrs(page, '.tg-edge.highlight', 'data-id')
      const expected = topologyGraph(orders).edges.filter(
        (e) => e.source === joinNode || e.target === joinNode,
      )
      assert.deepEqual(highlighted.sort(), expected.map((e) => e.id).sort())
      await page.screenshot({ path: join(ARTIFACTS, 'node-click.png') })
    } finally {
      await page.close()
    }
  })

  it('downloads the graph as a standalone SVG and the description as JSON', async () => {
    const page = await open('#/group/inventory-app')
    try {
      await drawn(page)
      const [svgDownload] = await Promise.all([
        page.waitForEvent('download'),
        page.click('[data-action="download-svg"]'),
      ])
      assert.equal(svgDownload.suggestedFilename(), 'inventory-app-topology.svg')
      const svg = await readFile((await svgDownload.path())!, 'utf8')
      assert.match(svg, /^<\?xml/)
      assert.match(svg, /<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/)
      assert.match(svg, /<style>/)
      const graph = topologyGraph(inventory)
      for (const n of graph.nodes) assert.ok(svg.includes(`data-id="${n.id}"`), n.id)
      assert.ok(graph.nodes.some((n) => n.kind === 'topic-pattern') && svg.includes('tg-node-topic-pattern'))
      assert.ok(svg.includes('tg-node-topic-dynamic') && svg.includes('tg-box-global-store'))
      // The download opens as an image on its own.
      const img = await browser.context.newPage()
      try {
        await img.setContent(
          `<img id="i" src="data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}">`,
        )
        const width = await img.$eval('#i', (e) =>
          (e as HTMLImageElement).decode().then(() => (e as HTMLImageElement).naturalWidth),
        )
        assert.ok(width > 100)
      } finally {
        await img.close()
      }
      const [jsonDownload] = await Promise.all([
        page.waitForEvent('download'),
        page.click('[data-action="download-json"]'),
      ])
      assert.equal(jsonDownload.suggestedFilename(), 'inventory-app-topology-description.json')
      const json = JSON.parse(await readFile((await jsonDownload.path())!, 'utf8'))
      assert.deepEqual(json, {
        groupId: 'inventory-app',
        topologyEpoch: 0,
        current: true,
        topologyDescription: JSON.parse(JSON.stringify(inventory)),
      })
      await page.screenshot({ path: join(ARTIFACTS, 'group-inventory.png') })
    } finally {
      await page.close()
    }
  })

  it('explains a missing description for ERROR and NOT_STORED', async () => {
    for (const [id, text] of [
      ['errored-app', /could not fetch the stored topology description/],
      ['fresh-app', /No topology description is stored for topology epoch 0/],
    ] as const) {
      const page = await open(`#/group/${id}`)
      try {
        await page.waitForSelector('.graph-message:not([hidden])')
        assert.match((await page.textContent('.graph-message'))!, text)
        assert.equal(await page.locator('.tg-node').count(), 0)
      } finally {
        await page.close()
      }
    }
  })

  it('refreshes without reloading: new members appear, an older epoch’s drawing is kept and flagged', async () => {
    const page = await open('#/group/lagging-app')
    try {
      await drawn(page)
      await page.evaluate(() => {
        ;(window as unknown as { marker: number }).marker = 42
      })
      source.groups.set(
        'lagging-app',
        group('lagging-app', {
          status: 'NOT_STORED',
          topologyEpoch: 2,
          members: [member('late', { topologyEpoch: 2 })],
        }),
      )
      await page.waitForSelector('[data-flag="description-epoch"]')
      assert.match(
        (await page.textContent('[data-flag="description-epoch"]'))!,
        /topology epoch 1, but the group is at topology epoch 2/,
      )
      assert.equal(await page.textContent('[data-fact="members"]'), '1')
      assert.equal(await page.getAttribute('svg.graph', 'data-epoch'), '1')
      assert.equal(await page.locator('.tg-node').count(), topologyGraph(orders).nodes.length)
      assert.equal(await page.evaluate(() => (window as unknown as { marker: number }).marker), 42)
    } finally {
      await page.close()
    }
  })

  it('fits the members and task tables into the side panel, long member and client ids included', async () => {
    const page = await open('#/group/wide-app')
    try {
      await drawn(page)
      await page.waitForSelector('.members-table tr[data-member-id="cKiLh6zTDTMnQx3vRb0a1w"]')
      const fits = async (): Promise<void> => {
        const fit = await page.$eval('aside.side', (side) => {
          const right = side.getBoundingClientRect().right
          const cells = Array.from(side.querySelectorAll('th, td'))
          return {
            scrollWidth: side.scrollWidth,
            clientWidth: side.clientWidth,
            outside: cells
              .filter((c) => c.getBoundingClientRect().right > right + 0.5)
              .map((c) => c.textContent),
          }
        })
        assert.deepEqual(fit.outside, [])
        assert.ok(
          fit.scrollWidth <= fit.clientWidth,
          `scrolls sideways: ${fit.scrollWidth} > ${fit.clientWidth}`,
        )
      }
      await fits()
      // The tasks of a sub-topology, shown on a click, name members with their process.
      await page.click('.tg-node[data-id="node:subtopology:0/KSTREAM-SOURCE-0000000000"]')
      await page.waitForSelector('.subtopology-tasks table')
      await fits()
      // Nothing is cut: the whole client id and every task list are still there.
      const row = (await page.textContent('tr[data-member-id="cKiLh6zTDTMnQx3vRb0a1w"]'))!
      assert.ok(row.includes('wide-app-7d0c9b1e-4f7a-4a55-9d8e-1c2b3a4d5e6f-StreamThread-1-consumer'))
      assert.ok(row.includes('0: [1]; 1: [0, 2]') && row.includes('0: [0, 2]'))
      await page.screenshot({ path: join(ARTIFACTS, 'group-wide-members.png') })
    } finally {
      await page.close()
    }
  })

  it('draws a 520-node topology and pans, zooms and fits it through the viewBox', async () => {
    const page = await open('#/group/big-app')
    try {
      await page.waitForSelector('svg.graph[data-state="drawn"]', { timeout: 60_000 })
      const expected = topologyGraph(largeDescription(26, 20))
      assert.equal(await page.locator('.tg-node').count(), expected.nodes.length)
      const fitted = await page.getAttribute('svg.graph', 'viewBox')
      await page.click('[data-action="zoom-in"]')
      const zoomed = (await page.getAttribute('svg.graph', 'viewBox'))!.split(' ').map(Number)
      assert.ok(zoomed[2]! < fitted!.split(' ').map(Number)[2]!)
      const box = (await page.locator('svg.graph').boundingBox())!
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
      await page.mouse.down()
      await page.mouse.move(box.x + box.width / 2 + 120, box.y + box.height / 2 + 40, { steps: 5 })
      await page.mouse.up()
      const panned = (await page.getAttribute('svg.graph', 'viewBox'))!.split(' ').map(Number)
      assert.ok(panned[0]! < zoomed[0]!, 'dragging right moves the view left')
      assert.equal(panned[2], zoomed[2])
      await page.click('[data-action="fit"]')
      assert.equal(await page.getAttribute('svg.graph', 'viewBox'), fitted)
      await page.screenshot({ path: join(ARTIFACTS, 'group-500-nodes.png') })
    } finally {
      await page.close()
    }
  })
})

describe('console page at 400 px wide', () => {
  async function openNarrow(hash: string): Promise<Page> {
    const page = await open(hash)
    await page.setViewportSize({ width: 400, height: 900 })
    return page
  }

  /** The page does not scroll sideways, and the nav's last link is inside the viewport. */
  async function noSidewaysScroll(page: Page): Promise<void> {
    const m = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      navRight: document.querySelector('nav.views a[data-view="transactions"]')!.getBoundingClientRect()
        .right,
    }))
    assert.ok(
      m.scrollWidth <= m.clientWidth,
      `the page scrolls sideways: ${m.scrollWidth} > ${m.clientWidth}`,
    )
    assert.ok(m.navRight <= m.clientWidth, `"Transactions" is cut off at ${m.navRight}`)
  }

  it('draws the topology at full width with the side panel under it and the toolbar usable', async () => {
    const page = await openNarrow('#/group/wide-app')
    try {
      await drawn(page)
      await noSidewaysScroll(page)
      const svg = (await page.locator('svg.graph').boundingBox())!
      assert.ok(svg.width > 300, `drawing width ${svg.width}`)
      assert.ok(svg.height >= 250, `drawing height ${svg.height}`)
      const side = (await page.locator('aside.side').boundingBox())!
      assert.ok(side.y >= svg.y + svg.height, 'the side panel is under the drawing')
      // Every toolbar button is the topmost element at its centre: nothing covers it.
      for (const action of ['fit', 'zoom-in', 'zoom-out', 'download-svg', 'download-json']) {
        const hit = await page.$eval(`[data-action="${action}"]`, (el) => {
          const r = el.getBoundingClientRect()
          return (
            r.width > 0 &&
            r.right <= document.documentElement.clientWidth &&
            document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === el
          )
        })
        assert.ok(hit, `${action} is hidden or covered`)
      }
      await page.screenshot({ path: join(ARTIFACTS, 'group-narrow.png'), fullPage: true })
    } finally {
      await page.close()
    }
  })

  it('scrolls the wide tables of the groups list inside their own box', async () => {
    const page = await openNarrow('#/')
    try {
      await page.waitForSelector('tr[data-group-id="orders-app"]')
      await noSidewaysScroll(page)
      // The last columns are reachable by scrolling the table's box.
      const box = await page.$eval('.streams-groups', (el) => ({
        overflowX: getComputedStyle(el).overflowX,
        right: el.getBoundingClientRect().right,
        fits: el.scrollWidth <= el.clientWidth,
      }))
      assert.ok(box.fits || box.overflowX === 'auto', 'the table neither fits nor scrolls')
      assert.ok(box.right <= 400)
      await page.screenshot({ path: join(ARTIFACTS, 'groups-narrow.png'), fullPage: true })
    } finally {
      await page.close()
    }
  })
})

describe('console page addresses', () => {
  it('says "Page not found" for an address that names no page, with a link to the groups', async () => {
    for (const hash of ['#/foo/bar', '#/group/', '#/group/%E0%A4%A']) {
      const page = await open(hash)
      try {
        await page.waitForSelector('[data-testid="page-not-found"]')
        assert.match((await page.textContent('main'))!, /Page not found/)
        assert.equal(await page.locator('tr[data-group-id]').count(), 0)
        await page.click('[data-testid="page-not-found"] a[href="#/"]')
        await page.waitForSelector('tr[data-group-id="orders-app"]')
      } finally {
        await page.close()
      }
    }
  })

  it('moves a streams group opened as a consumer group to its page, and the reverse', async () => {
    const page = await open('#/consumer-group/orders-app')
    try {
      await drawn(page)
      assert.equal(new URL(page.url()).hash, '#/group/orders-app')
      assert.doesNotMatch((await page.textContent('main'))!, /not a (classic|consumer) group/)
      await page.goto(`${console_.url}/?refresh=300#/group/shop-consumers`)
      await page.waitForSelector('.consumer-group-view [data-field="assignor"]')
      assert.equal(new URL(page.url()).hash, '#/consumer-group/shop-consumers')
      assert.equal(await page.textContent('[data-field="assignor"]'), 'uniform')
    } finally {
      await page.close()
    }
  })
})

describe('console page of a group that goes away', () => {
  it('replaces a deleted group with "not found", and shows it again once it is back', async () => {
    source.groups.set('doomed-app', group('doomed-app', { description: orders, members: [member('m1')] }))
    const page = await open('#/group/doomed-app')
    try {
      await drawn(page)
      source.groups.delete('doomed-app')
      await page.waitForSelector('[data-testid="group-not-found"]')
      assert.match((await page.textContent('main'))!, /Group doomed-app not found/)
      assert.equal(await page.locator('.group-view').count(), 0)
      assert.equal(await page.locator('svg.graph').count(), 0)
      assert.equal(await page.locator('.badge').count(), 0)
      assert.equal(await page.getAttribute('#status', 'class'), 'status')
      // The page keeps asking (less often): a group created again under the id is shown.
      source.groups.set('doomed-app', group('doomed-app', { description: orders, members: [member('m2')] }))
      await drawn(page)
      assert.equal(await page.textContent('[data-fact="members"]'), '1')
      assert.equal(await page.locator('[data-testid="group-not-found"]').count(), 0)
    } finally {
      source.groups.delete('doomed-app')
      await page.close()
    }
  })

  it('keeps the last data on a transient failure and recovers by itself', async () => {
    const alive = group('flaky-app', { description: orders, members: [member('m1')] })
    source.groups.set('flaky-app', alive)
    const page = await open('#/group/flaky-app')
    try {
      await drawn(page)
      source.groups.set(
        'flaky-app',
        Object.assign(new Error('The coordinator is loading.'), {
          errorName: 'COORDINATOR_LOAD_IN_PROGRESS',
        }),
      )
      await page.waitForSelector('#status.error')
      assert.match((await page.textContent('#status'))!, /Refresh failed: COORDINATOR_LOAD_IN_PROGRESS/)
      assert.equal(await page.locator('svg.graph[data-state="drawn"]').count(), 1)
      assert.equal(await page.textContent('[data-fact="state"]'), 'Stable')
      source.groups.set('flaky-app', alive)
      await page.waitForSelector('#status:not(.error)')
      assert.match((await page.textContent('#status'))!, /Updated/)
    } finally {
      source.groups.delete('flaky-app')
      await page.close()
    }
  })
})

describe('console topics page', () => {
  it('calls end − start "Offsets", not records, and says why in the tooltip', async () => {
    const page = await open('#/topics')
    try {
      await page.waitForSelector('tr[data-topic="payments"][data-partition="1"]')
      const headers = await page.$$eval('table.topics th', (ths) => ths.map((th) => th.textContent?.trim()))
      assert.ok(!headers.some((x) => /record/i.test(x ?? '')), headers.join(', '))
      assert.match((await page.textContent('th[data-col="offsets"]'))!, /^Offsets/)
      assert.match((await page.getAttribute('th[data-col="offsets"]', 'title'))!, /transaction/)
      const cell = (sel: string) => page.textContent(`${sel} [data-col="offsets"]`)
      assert.equal(await cell('tr.topic-row[data-topic="payments"]'), '13')
      assert.equal(await cell('tr[data-topic="payments"][data-partition="0"]'), '8')
    } finally {
      await page.close()
    }
  })
})

describe('console page of a NotReady group', () => {
  it('says which source topic is missing and draws it as missing', async () => {
    const topicInfo = (name: string) => ({ name, partitions: 3, replicationFactor: 1, topicConfigs: {} })
    source.topics.set(
      'customers',
      [0, 1, 2].map((partition) => ({ partition, logStartOffset: 0, logEndOffset: 4 })),
    )
    source.topics.set(
      'demo-orders-orders-by-customer-repartition',
      [0, 1, 2].map((partition) => ({ partition, logStartOffset: 0, logEndOffset: 0 })),
    )
    source.groups.set('stalled-app', {
      ...group('stalled-app', { description: orders, members: [member('m1')], state: 'NotReady' }),
      subtopologies: [
        {
          subtopologyId: '0',
          sourceTopics: ['orders'],
          repartitionSinkTopics: ['demo-orders-orders-by-customer-repartition'],
          stateChangelogTopics: [],
          repartitionSourceTopics: [],
        },
        {
          subtopologyId: '1',
          sourceTopics: ['customers'],
          repartitionSinkTopics: [],
          stateChangelogTopics: [],
          repartitionSourceTopics: [topicInfo('demo-orders-orders-by-customer-repartition')],
        },
      ],
    })
    const page = await open('#/group/stalled-app')
    try {
      await drawn(page)
      await page.waitForSelector('[data-flag="not-ready"]')
      const flags = await page.$$eval('[data-flag="not-ready"]', (els) => els.map((e) => e.textContent))
      assert.equal(flags.length, 1, flags.join(' | '))
      assert.match(flags[0]!, /source topic orders is missing/)
      await page.waitForSelector('.tg-node[data-id="topic:orders"].tg-node-missing')
      assert.deepEqual(await attrs(page, '.tg-node-missing', 'data-id'), ['topic:orders'])
      await page.screenshot({ path: join(ARTIFACTS, 'group-not-ready.png') })
      // Once the topic is back and the group ready, the flag and the mark go.
      source.topics.set('orders', [{ partition: 0, logStartOffset: 0, logEndOffset: 0 }])
      source.groups.set('stalled-app', {
        ...source.groups.get('stalled-app')!,
        groupState: 'Stable',
      } as never)
      await page.waitForSelector('[data-flag="not-ready"]', { state: 'detached' })
      assert.equal(await page.locator('.tg-node-missing').count(), 0)
    } finally {
      source.groups.delete('stalled-app')
      for (const t of ['orders', 'customers', 'demo-orders-orders-by-customer-repartition'])
        source.topics.delete(t)
      await page.close()
    }
  })
})
