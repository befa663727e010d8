// Classic groups in the console page, in headless Chromium against a real in-process Topograph
// server that starts the console itself: a classic member joins over TCP (JoinGroup, SyncGroup with
// the leader's assignment of both partitions), commits an offset behind records produced for real,
// and a second group has committed offsets only (no member: Empty). The page lists both among the
// consumer groups with their type, and each group's page shows its state, members with their
// assignment, and the committed offset and lag of each partition, as kafka-consumer-groups
// --describe does. A third group, of protocol type `connect`, is neither listed nor described, as
// kafka-consumer-groups does neither. Screenshots go to .tmp/console/.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { ErrorCode } from '../../src/protocol/errors.js'
import { encodeAssignment, encodeSubscription } from '../../src/protocol/consumer-protocol.js'
import type { WireClient } from '../server/wire-client.js'
import {
  ARTIFACTS,
  type Browser,
  type ConsoleServer,
  lagTableRows,
  launchBrowser,
  openConsolePage,
  startConsoleServerWithTopic,
} from './browser.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

let served: ConsoleServer
let browser: Browser
let memberId = ''

async function commit(
  c: WireClient,
  groupId: string,
  generation: number,
  member: string,
  offsets: [number, bigint][],
): Promise<void> {
  const { body } = await c.request<AnyBody>(8, 9, {
    groupId,
    generationIdOrMemberEpoch: generation,
    memberId: member,
    groupInstanceId: null,
    topics: [
      {
        name: 'payments',
        partitions: offsets.map(([partitionIndex, committedOffset]) => ({
          partitionIndex,
          committedOffset,
          committedLeaderEpoch: -1,
          committedMetadata: '',
        })),
      },
    ],
  })
  for (const p of body.topics[0].partitions) assert.equal(p.errorCode, 0)
}

before(async () => {
  served = await startConsoleServerWithTopic(
    'classic',
    { 'group.initial.rebalance.delay.ms': '0' },
    'payments',
    2,
    6,
  )
  const c = served.client
  // A classic member of `ledger`: JoinGroup (MEMBER_ID_REQUIRED, then the join), SyncGroup as the
  // leader with both partitions assigned to itself.
  const m = await served.connect()
  const joinGroup = async (): Promise<AnyBody> =>
    (
      await m.request<AnyBody>(11, 9, {
        groupId: 'ledger',
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 30_000,
        memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [
          {
            name: 'range',
            metadata: encodeSubscription(
              {
                topics: ['payments'],
                userData: null,
                ownedPartitions: [],
                generationId: -1,
                rackId: null,
              },
              0,
            ),
          },
        ],
        reason: null,
      })
    ).body
  const first = await joinGroup()
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
  memberId = first.memberId
  const joined = await joinGroup()
  assert.equal(joined.errorCode, 0)
  assert.equal(joined.leader, memberId)
  const assignment = encodeAssignment(
    { assignedPartitions: [{ topic: 'payments', partitions: [0, 1] }], userData: null },
    0,
  )
  const synced = await m.request<AnyBody>(14, 5, {
    groupId: 'ledger',
    generationId: joined.generationId,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [{ memberId, assignment }],
  })
  assert.equal(synced.body.errorCode, 0)
  await commit(m, 'ledger', joined.generationId, memberId, [[0, 4n]])
  // `workers` is a classic group of another protocol type, as Kafka Connect's workers form: its
  // metadata and assignment bytes are Connect's own, not the consumer protocol's.
  const w = await served.connect()
  const joinWorkers = async (id: string): Promise<AnyBody> =>
    (
      await w.request<AnyBody>(11, 9, {
        groupId: 'workers',
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 30_000,
        memberId: id,
        groupInstanceId: null,
        protocolType: 'connect',
        protocols: [{ name: 'sessioned', metadata: new Uint8Array([0, 1, 2, 3]) }],
        reason: null,
      })
    ).body
  const worker = (await joinWorkers('')).memberId
  const workersJoined = await joinWorkers(worker)
  assert.equal(workersJoined.errorCode, 0)
  const workersSynced = await w.request<AnyBody>(14, 5, {
    groupId: 'workers',
    generationId: workersJoined.generationId,
    memberId: worker,
    groupInstanceId: null,
    protocolType: 'connect',
    protocolName: 'sessioned',
    assignments: [{ memberId: worker, assignment: new Uint8Array([0, 1, 0, 0, 0, 0, 0, 0]) }],
  })
  assert.equal(workersSynced.body.errorCode, 0)
  // `audit` has offsets only: committed outside any generation, as a simple consumer does.
  await commit(c, 'audit', -1, '', [
    [0, 1n],
    [1, 6n],
  ])
  browser = await launchBrowser()
})

after(async () => {
  await browser?.close()
  await served?.close()
})

const open = (hash: string): Promise<Page> => openConsolePage(browser, served.consoleUrl, hash)

const cells = (page: Page, groupId: string): Promise<(string | null)[]> =>
  page.$$eval(`.consumer-groups tr[data-group-id="${groupId}"] td`, (tds) => tds.map((td) => td.textContent))

describe('console: classic groups against a real server', () => {
  it('lists the classic groups, with and without members, with their type', async () => {
    const page = await open('#/')
    await page.waitForSelector('.consumer-groups tr[data-group-id="audit"]')
    assert.deepEqual(await cells(page, 'ledger'), ['ledger', 'classic', 'Stable', '—', 'range', '1'])
    assert.deepEqual(await cells(page, 'audit'), ['audit', 'classic', 'Empty', '—', '—', '0'])
    assert.deepEqual(
      await page.$$eval('.consumer-groups tr[data-group-id]', (trs) =>
        trs.map((tr) => tr.getAttribute('data-group-id')),
      ),
      ['audit', 'ledger'],
    )
    await page.screenshot({ path: join(ARTIFACTS, 'classic-groups-list.png') })
    await page.click('.consumer-groups tr[data-group-id="ledger"] a.group-link')
    await page.waitForSelector('.consumer-group-view table.members')
    assert.equal(new URL(page.url()).hash, '#/consumer-group/ledger')
    await page.close()
  })

  it('shows a classic group’s members with their assignment and the lag per partition', async () => {
    const page = await open('#/consumer-group/ledger')
    await page.waitForSelector('.consumer-group-view table.lag-table tbody tr')
    assert.equal(await page.textContent('.consumer-group-view .group-type'), 'classic group')
    assert.equal(await page.textContent('[data-field="state"]'), 'Stable')
    assert.equal(await page.textContent('[data-field="protocol-type"]'), 'consumer')
    assert.equal(await page.textContent('[data-field="assignor"]'), 'range')
    const members = await page.$$eval('table.members tbody tr', (trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-member-id'),
        tr.querySelector('[data-col="assignment"]')?.textContent,
      ]),
    )
    assert.deepEqual(members, [[memberId, 'payments 0,1']])
    assert.deepEqual(await lagTableRows(page), [
      ['0', memberId, '4', '6', '2'],
      ['1', memberId, '—', '6', '6'],
    ])
    assert.equal(await page.textContent('[data-testid="total-lag"]'), '8')
    await page.screenshot({ path: join(ARTIFACTS, 'classic-group.png'), fullPage: true })
    await page.close()
  })

  it('shows a classic group with offsets only as Empty, with its lag', async () => {
    const page = await open('#/consumer-group/audit')
    await page.waitForSelector('.consumer-group-view table.lag-table tbody tr')
    assert.equal(await page.textContent('[data-field="state"]'), 'Empty')
    assert.match((await page.textContent('.consumer-group-view')) ?? '', /No members\./)
    assert.deepEqual(await lagTableRows(page), [
      ['0', '—', '1', '6', '5'],
      ['1', '—', '6', '6', '0'],
    ])
    await page.close()
  })

  it('leaves out a classic group of another protocol type, as kafka-consumer-groups does', async () => {
    const page = await open('#/consumer-group/workers')
    await page.waitForSelector('#main p.empty')
    assert.match(
      (await page.textContent('#main p.empty')) ?? '',
      /GroupId workers is not a consumer group \(connect\)\./,
    )
    await page.close()
  })
})
