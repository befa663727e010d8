// Consumer groups (KIP-848) in the console page, in headless Chromium against a real in-process
// Topograph server that starts the console itself: two members driven over TCP share a topic, one
// commits offsets behind records produced for real, and the page lists the group next to the streams
// groups, then shows its epochs, members with assignment and target, and the lag of each partition
// with the member owning it. The expected values come from the admin client. Screenshots go to
// .tmp/console/.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { Admin } from '../../src/clients/admin/index.js'
import { ConsumerMember } from '../helpers/consumer-member.js'
import {
  ARTIFACTS,
  type Browser,
  type ConsoleServer,
  lagTableRows,
  launchBrowser,
  openConsolePage,
  startConsoleServerWithTopic,
} from './browser.js'

let served: ConsoleServer
let admin: Admin
let browser: Browser
let a: ConsumerMember
let b: ConsumerMember

before(async () => {
  served = await startConsoleServerWithTopic(
    'consumer',
    { 'group.consumer.assignment.interval.ms': '0' },
    'orders',
    4,
    5,
  )
  const member = async (id: string) =>
    new ConsumerMember(await served.connect(), 'billing-app', id, ['orders'])
  a = await member('member-a')
  b = await member('member-b')
  await a.heartbeat()
  await b.heartbeat()
  for (let i = 0; i < 10 && (a.partitions().length !== 2 || b.partitions().length !== 2); i++) {
    await a.heartbeat()
    await b.heartbeat()
  }
  // member-a commits offset 3 on its first partition, with its member epoch.
  const commit = await a.client.request<{ topics: { partitions: { errorCode: number }[] }[] }>(8, 9, {
    groupId: 'billing-app',
    generationIdOrMemberEpoch: a.epoch,
    memberId: 'member-a',
    groupInstanceId: null,
    topics: [
      {
        name: 'orders',
        partitions: [
          {
            partitionIndex: a.partitions()[0],
            committedOffset: 3n,
            committedLeaderEpoch: -1,
            committedMetadata: '',
          },
        ],
      },
    ],
  })
  assert.equal(commit.body.topics[0]!.partitions[0]!.errorCode, 0)
  admin = Admin.create({
    bootstrapServers: `127.0.0.1:${served.server.address.port}`,
    clientId: 'console-consumer-test',
  })
  browser = await launchBrowser()
})

after(async () => {
  await browser?.close()
  await admin?.close()
  await served?.close()
})

const open = (hash: string): Promise<Page> => openConsolePage(browser, served.consoleUrl, hash)

describe('console: consumer groups against a real server', () => {
  it('lists the consumer group next to the streams groups', async () => {
    const page = await open('#/')
    await page.waitForSelector('.consumer-groups tr[data-group-id="billing-app"]')
    const cells = await page.$$eval('.consumer-groups tr[data-group-id="billing-app"] td', (tds) =>
      tds.map((td) => td.textContent),
    )
    assert.deepEqual(cells, ['billing-app', 'consumer', 'Stable', '2', 'uniform', '2'])
    // The streams section is still there, empty.
    assert.match((await page.textContent('.groups-view > .streams-groups')) ?? '', /No streams groups yet/)
    await page.screenshot({ path: join(ARTIFACTS, 'consumer-groups-list.png') })
    await page.click('.consumer-groups a.group-link')
    await page.waitForSelector('.consumer-group-view table.members')
    assert.equal(new URL(page.url()).hash, '#/consumer-group/billing-app')
    await page.close()
  })

  it('shows the members with assignment and target, and the lag per partition with its owner', async () => {
    const d = await admin.describeConsumerGroups(['billing-app']).get('billing-app')
    const page = await open('#/consumer-group/billing-app')
    await page.waitForSelector('.consumer-group-view table.lag-table tbody tr')
    assert.equal(await page.textContent('[data-field="state"]'), 'Stable')
    assert.equal(await page.textContent('[data-field="group-epoch"]'), String(d.groupEpoch))
    assert.equal(await page.textContent('[data-field="assignment-epoch"]'), String(d.targetAssignmentEpoch))
    assert.equal(await page.textContent('[data-field="assignor"]'), 'uniform')
    const members = await page.$$eval('table.members tbody tr', (trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-member-id'),
        tr.querySelector('[data-col="member-epoch"]')?.textContent,
        tr.querySelector('[data-col="assignment"]')?.textContent,
        tr.querySelector('[data-col="target"]')?.textContent,
      ]),
    )
    const expected = d.members.map((m) => {
      const text = `orders ${m.assignment.map((p) => p.partition).join(',')}`
      return [m.memberId, String(m.memberEpoch), text, text]
    })
    assert.deepEqual(
      members.sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      expected.sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    )
    const owner = new Map(d.members.flatMap((m) => m.assignment.map((p) => [p.partition, m.memberId])))
    const committedPartition = a.partitions()[0]!
    const lag = await lagTableRows(page)
    assert.deepEqual(
      lag,
      [0, 1, 2, 3].map((p) => [
        String(p),
        owner.get(p),
        p === committedPartition ? '3' : '—',
        '5',
        p === committedPartition ? '2' : '5',
      ]),
    )
    assert.equal(await page.textContent('[data-testid="total-lag"]'), '17')
    await page.screenshot({ path: join(ARTIFACTS, 'consumer-group.png'), fullPage: true })
    await page.close()
  })

  it('an unknown consumer group shows the coordinator’s answer', async () => {
    const page = await open('#/consumer-group/nope')
    await page.waitForSelector('#main p.empty')
    assert.match(
      (await page.textContent('#main p.empty')) ?? '',
      /GROUP_ID_NOT_FOUND: Group nope not found\./,
    )
    await page.close()
  })
})
