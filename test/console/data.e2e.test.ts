// The console with data, against a real Topograph process: GET /api/topics gives each partition's
// log start and end offsets and size; with the demo running (feeder and processing members), a
// group's lag per partition is end − committed, matches kafka-streams-groups --describe --offsets,
// and reaches zero once the feeder stops; the demo's join output is exact. Screenshots of the
// Topics view and of a group's Lag table go to .tmp/console/ to be checked by eye.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { CUSTOMERS } from '../../src/cli/demo-data.js'
import { type RunningDemo, startDemo } from '../../src/cli/demo.js'
import { execute } from '../../src/cli/kafka-streams-groups.js'
import { Admin } from '../../src/clients/admin/index.js'
import { Fetcher } from '../../src/clients/dataplane/fetcher.js'
import { Producer } from '../../src/clients/dataplane/producer.js'
import { encodeBatch } from '../../src/clients/dataplane/records.js'
import type { GroupResponse, PartitionLag, TopicsResponse } from '../../src/console/api-types.js'
import { type RunningConsole, startConsole } from '../../src/console/index.js'
import { eventually, InteropServer, killAll } from '../helpers/interop.js'
import { ARTIFACTS, type Browser, launchBrowser } from './browser.js'

const enc = new TextEncoder()
const dec = new TextDecoder()
const T0 = Math.floor(Date.now() / 1000) * 1000 - 60_000

let server: InteropServer
let console_: RunningConsole
let admin: Admin
let demo: RunningDemo | undefined
let browser: Browser | undefined

async function get<T>(path: string): Promise<T> {
  const res = await fetch(`${console_.url}${path}`, { signal: AbortSignal.timeout(30_000) })
  assert.equal(res.status, 200, `${path}: ${res.status} ${await res.clone().text()}`)
  return (await res.json()) as T
}

async function streamsGroups(
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await execute(['--bootstrap-server', server.bootstrap, ...args], {
    out: (s) => {
      stdout += s
    },
    err: (s) => {
      stderr += s
    },
  })
  return { code, stdout, stderr }
}

before(async () => {
  server = await InteropServer.start({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.heartbeat.interval.ms': '500',
    'group.streams.min.heartbeat.interval.ms': '500',
    'group.streams.topology.description.plugin.class': 'memory',
  })
  admin = Admin.create({ bootstrapServers: server.bootstrap, clientId: 'console-data-test' })
  console_ = await startConsole({
    bootstrapServers: [server.bootstrap],
    listener: { host: '127.0.0.1', port: 0 },
    metricsRegistry: null,
    uiFromSource: true,
  })
})

after(async () => {
  try {
    await browser?.close()
    await demo?.close()
    await console_?.close()
    await admin?.close()
    await server?.close()
  } finally {
    await killAll()
  }
})

describe('console topics and lag with data', () => {
  it('GET /api/topics: log start and end offsets and the size of every partition', {
    timeout: 120_000,
  }, async () => {
    await admin.createTopics([{ name: 'console-data', numPartitions: 3 }]).all()
    const records = (n: number, partition: number) =>
      Array.from({ length: n }, (_, i) => ({
        topic: 'console-data',
        partition,
        key: enc.encode(`k${i}`),
        value: enc.encode(`value ${partition}/${i}`),
        timestamp: T0 + i,
      }))
    const producer = Producer.create({ bootstrapServers: server.bootstrap })
    try {
      const acks = await producer.send([...records(3, 0), ...records(5, 1)])
      assert.deepEqual(
        acks.map((a) => [a.partition, a.offset]),
        [
          [0, 0],
          [0, 1],
          [0, 2],
          [1, 0],
          [1, 1],
          [1, 2],
          [1, 3],
          [1, 4],
        ],
      )
    } finally {
      await producer.close()
    }
    assert.equal(
      await admin.deleteRecords([{ topic: 'console-data', partition: 1, offset: 2 }]).get('console-data-1'),
      2,
    )
    const data = await get<TopicsResponse>('/api/topics')
    assert.equal(data.sizesError, null)
    // Each partition's log is the one batch the producer sent (stored as sent, offsets aside);
    // deleting records moves the log start, not the size.
    assert.deepEqual(
      data.topics.find((t) => t.name === 'console-data'),
      {
        name: 'console-data',
        partitions: [
          { partition: 0, logStartOffset: 0, logEndOffset: 3, size: encodeBatch(records(3, 0)).byteLength },
          { partition: 1, logStartOffset: 2, logEndOffset: 5, size: encodeBatch(records(5, 1)).byteLength },
          { partition: 2, logStartOffset: 0, logEndOffset: 0, size: 0 },
        ],
        error: null,
      },
    )
  })

  it('the demo moves data: lag per partition, as kafka-streams-groups shows it, down to zero', {
    timeout: 300_000,
  }, async () => {
    demo = await startDemo({ bootstrapServers: server.bootstrap, instances: 2, feedIntervalMs: 300 })
    const lagOf = async (groupId: string): Promise<readonly PartitionLag[]> => {
      const g = await get<GroupResponse>(`/api/groups/${groupId}`)
      assert.equal(g.offsetsError, null)
      return g.offsets!
    }
    // Data flows: every orders partition has records and a commit.
    let last: readonly PartitionLag[] = []
    await eventually(
      async () => {
        last = await lagOf('demo-orders')
        const orders = last.filter((o) => o.topic === 'orders')
        return orders.length === 3 && orders.every((o) => (o.committedOffset ?? 0) > 0) ? true : undefined
      },
      120_000,
      () => JSON.stringify(last),
    )
    const repartition = 'demo-orders-orders-by-customer-repartition'
    assert.deepEqual(
      last.map((o) => [o.topic, o.partition]),
      ['customers', repartition, 'orders'].flatMap((t) => [0, 1, 2].map((p) => [t, p])),
    )
    for (const o of last)
      assert.equal(o.lag, o.logEndOffset! - (o.committedOffset ?? o.logStartOffset!), JSON.stringify(o))

    // Once the feeder stops, the members catch up and commit: every lag is zero.
    await demo.feeder!.stop()
    for (const groupId of ['demo-orders', 'demo-inventory']) {
      await eventually(
        async () => {
          last = await lagOf(groupId)
          return last.length > 0 &&
            last.every((o) => o.lag === 0 && (o.logEndOffset === 0 || o.committedOffset === o.logEndOffset))
            ? true
            : undefined
        },
        120_000,
        () => `${groupId}: ${JSON.stringify(last)}`,
      )
    }
    const settled = await lagOf('demo-orders')
    assert.ok(settled.some((o) => o.topic === 'orders' && o.logEndOffset! > 0))

    // kafka-streams-groups --describe --offsets --verbose prints the same end offsets and lag.
    const described = await streamsGroups(['--describe', '--offsets', '--verbose', '--group', 'demo-orders'])
    assert.equal(described.code, 0, described.stderr)
    const rows = described.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/))
      .map(([, topic, partition, current, , end, lag]) => ({
        topic,
        partition: Number(partition),
        current,
        end,
        lag,
      }))
      .sort((a, b) => (a.topic! < b.topic! ? -1 : a.topic! > b.topic! ? 1 : a.partition - b.partition))
    assert.deepEqual(
      rows,
      settled.map((o) => ({
        topic: o.topic,
        partition: o.partition,
        current: o.committedOffset === null ? '-' : String(o.committedOffset),
        end: String(o.logEndOffset),
        lag: '0',
      })),
    )

    // The join wrote one enriched order per order, naming the order's customer.
    const ends = new Map(settled.map((o) => [`${o.topic}-${o.partition}`, o.logEndOffset!]))
    const orders = [0, 1, 2].reduce((a, p) => a + ends.get(`orders-${p}`)!, 0)
    const fetcher = new Fetcher({ bootstrapServers: server.bootstrap })
    try {
      const fetched = await fetcher.fetch(
        [0, 1, 2].map((partition) => ({ topic: 'enriched-orders', partition, offset: 0 })),
        { maxWaitMs: 0 },
      )
      const enriched = fetched.flatMap((f) => f.records)
      assert.equal(enriched.length, orders)
      const names = new Map(CUSTOMERS)
      for (const r of enriched) {
        const customer = dec.decode(r.key!)
        assert.match(dec.decode(r.value!), new RegExp(`^${names.get(customer)} ordered [1-4] × [a-z]+$`))
      }
    } finally {
      await fetcher.close()
    }
  })

  it('draws the Topics view and a group’s Lag table (screenshots)', { timeout: 180_000 }, async () => {
    browser = await launchBrowser()
    const page = await browser.context.newPage()
    page.setDefaultTimeout(30_000)
    const topics = await get<TopicsResponse>('/api/topics')
    await page.goto(`${console_.url}/?refresh=500#/topics`)
    await page.waitForSelector('tr.partition-row[data-topic="orders"][data-partition="2"]')
    for (const t of topics.topics.filter((x) => x.name === 'console-data'))
      for (const p of t.partitions) {
        const row = `tr.partition-row[data-topic="${t.name}"][data-partition="${p.partition}"]`
        assert.equal(await page.textContent(`${row} [data-col="log-start"]`), String(p.logStartOffset))
        assert.equal(await page.textContent(`${row} [data-col="log-end"]`), String(p.logEndOffset))
        assert.equal(await page.getAttribute(`${row} [data-col="size"]`, 'title'), `${p.size} bytes`)
      }
    await page.screenshot({ path: join(ARTIFACTS, 'topics.png'), fullPage: true })

    const group = await get<GroupResponse>('/api/groups/demo-orders')
    await page.goto(`${console_.url}/?refresh=500#/group/demo-orders`)
    await page.waitForSelector('.lag-table tr[data-topic="orders"][data-partition="0"]')
    const total = group.offsets!.reduce((a, o) => a + (o.lag ?? 0), 0)
    assert.equal(await page.textContent('[data-testid="total-lag"]'), String(total))
    for (const o of group.offsets!) {
      const row = `.lag-table tr[data-topic="${o.topic}"][data-partition="${o.partition}"]`
      assert.equal(await page.textContent(`${row} [data-col="log-end"]`), String(o.logEndOffset))
      assert.equal(await page.textContent(`${row} [data-col="lag"]`), String(o.lag))
    }
    await page.screenshot({ path: join(ARTIFACTS, 'group-lag.png') })
    await page.close()
  })
})
