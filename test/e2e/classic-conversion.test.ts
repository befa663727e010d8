// A classic JoinGroup taking over the id of an empty streams group while a topology description
// plugin is configured (KIP-1331 §7, #22777), against a real server with the controllable plugin over
// its sqlite backend: the plugin delete before the conversion, no plugin call when nothing is stored,
// a failing delete (REBALANCE_IN_PROGRESS, the conversion throttle, the group left a streams group at
// -2, convergence once the plugin recovers), and a streams member reviving the group between the
// barrier and the conversion. The leak/loss checker runs after each scenario.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { TEST_BACKOFF_INITIAL_MS_KEY } from '../../src/coordinator/service/start.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import {
  describeTopology,
  descriptionEpochs,
  joinMember,
  type KipServer,
  push,
  startKipServer,
  waitFor,
} from '../helpers/kip1331.js'
import { checkKip1331Invariants, pluginRows } from '../helpers/kip1331-invariants.js'
import { classicJoin, streamsGroupWithStoredDescription } from '../helpers/kip1331-conversion.js'
import type { StreamsMember } from '../helpers/streams-member.js'
import { WireClient } from '../server/wire-client.js'

let kip: KipServer
const open: { close(): void }[] = []

before(async () => {
  kip = await startKipServer({
    plugin: 'sqlite',
    overrides: {
      // No cleanup cycle or sweep during these tests; a short conversion throttle window.
      'offsets.retention.check.interval.ms': '3600000',
      'group.initial.rebalance.delay.ms': '0',
      [TEST_BACKOFF_INITIAL_MS_KEY]: '1500',
    },
  })
})

after(async () => {
  kip?.plugin?.control({})
  for (const c of open) c.close()
  await kip?.stop()
})

const dbPath = () => kip.plugin!.configs['topology.description.sqlite.path']
const deletes = (groupId: string) =>
  kip.plugin!.calls().filter((c) => c.op === 'delete' && c.groupId === groupId)

async function connect(): Promise<WireClient> {
  const c = await WireClient.connect(kip.port)
  open.push(c)
  return c
}

async function member(groupId: string, memberId?: string): Promise<StreamsMember> {
  const m = await joinMember(kip.port, groupId, memberId)
  open.push(m)
  return m
}

async function assertInvariants(): Promise<void> {
  assert.deepEqual(await checkKip1331Invariants(kip.service, dbPath()), { leaks: [], losses: [] })
}

async function groupType(c: WireClient, groupId: string): Promise<string | undefined> {
  const { body } = await c.request<{ groups: { groupId: string; groupType: string }[] }>(16, 5, {
    statesFilter: [],
    typesFilter: [],
  })
  return body.groups.find((g) => g.groupId === groupId)?.groupType
}

test('with a stored description: plugin delete, then the group is converted and the classic join proceeds', async () => {
  await streamsGroupWithStoredDescription(kip.port, 'conv-stored', open)
  assert.deepEqual(await descriptionEpochs(kip.service, 'conv-stored'), { stored: 0, failed: -1 })
  assert.equal(pluginRows(dbPath()).get('conv-stored'), 0)
  const c = await connect()
  const first = await classicJoin(c, 'conv-stored', '')
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
  assert.deepEqual(
    deletes('conv-stored').map((d) => d.result),
    ['ok'],
  )
  assert.equal(pluginRows(dbPath()).has('conv-stored'), false)
  assert.equal(await descriptionEpochs(kip.service, 'conv-stored'), undefined)
  const joined = await classicJoin(c, 'conv-stored', first.memberId)
  assert.deepEqual([joined.errorCode, joined.leader], [ErrorCode.NONE, first.memberId])
  assert.equal(await groupType(c, 'conv-stored'), 'classic')
  // D3: nothing is left in the back-off for the converted group.
  assert.equal(kip.service.topologyDescriptions.backoff.entry('conv-stored'), undefined)
  await assertInvariants()
})

test('nothing stored (-1) or not a streams group: the join converts or creates without a plugin call', async () => {
  const m = await member('conv-none')
  const hb = await m.heartbeat()
  assert.equal(hb.errorCode, 0)
  assert.equal((await m.leave()).errorCode, 0)
  assert.deepEqual(await descriptionEpochs(kip.service, 'conv-none'), { stored: -1, failed: -1 })
  const c = await connect()
  assert.equal((await classicJoin(c, 'conv-none', '')).errorCode, ErrorCode.MEMBER_ID_REQUIRED)
  assert.equal(await groupType(c, 'conv-none'), 'classic')
  assert.equal(await descriptionEpochs(kip.service, 'conv-none'), undefined)
  assert.equal((await classicJoin(c, 'conv-fresh', '')).errorCode, ErrorCode.MEMBER_ID_REQUIRED)
  assert.deepEqual([...deletes('conv-none'), ...deletes('conv-fresh')], [])
  await assertInvariants()
})

test('a failing plugin delete: REBALANCE_IN_PROGRESS, throttled retries, -2 meanwhile, converges after recovery', async () => {
  const g = 'conv-fail'
  await streamsGroupWithStoredDescription(kip.port, g, open)
  kip.plugin!.control({ delete: { [g]: { action: 'transient', message: 'store offline' } } })
  const c = await connect()
  const refused = await classicJoin(c, g, 'm-classic')
  assert.deepEqual([refused.errorCode, refused.memberId], [ErrorCode.REBALANCE_IN_PROGRESS, 'm-classic'])
  assert.equal(deletes(g).length, 1)
  assert.deepEqual(await descriptionEpochs(kip.service, g), { stored: -2, failed: -1 })
  assert.equal(kip.service.topologyDescriptions.isConversionDeleteThrottled(g), true)
  assert.equal(kip.service.topologyDescriptions.backoff.entry(g)?.topologyEpoch, -2)

  // Inside the window: refused without calling the plugin (and without a new barrier).
  const again = await classicJoin(c, g, '')
  assert.deepEqual([again.errorCode, again.memberId], [ErrorCode.REBALANCE_IN_PROGRESS, ''])
  assert.equal(deletes(g).length, 1)

  // Still a streams group at -2: describe-able, NOT_STORED, reclaimable.
  const [row] = await describeTopology(c, [g])
  assert.deepEqual([row.errorCode, row.groupState, row.topologyDescriptionStatus], [0, 'Empty', 1])
  assert.equal(await groupType(c, g), 'streams')
  assert.equal(pluginRows(dbPath()).get(g), 0)
  await assertInvariants()

  // The plugin recovers; after the window the next join converts.
  kip.plugin!.control({})
  await waitFor(
    'the throttle window',
    () => !kip.service.topologyDescriptions.isConversionDeleteThrottled(g),
    5000,
  )
  const converted = await classicJoin(c, g, '')
  assert.equal(converted.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
  assert.deepEqual(
    deletes(g).map((d) => d.result),
    ['transient', 'ok'],
  )
  assert.equal(await descriptionEpochs(kip.service, g), undefined)
  assert.equal(await groupType(c, g), 'classic')
  assert.equal(kip.service.topologyDescriptions.backoff.entry(g), undefined)
  assert.equal(pluginRows(dbPath()).has(g), false)
  await assertInvariants()
})

test('a streams member revives the group between the barrier and the conversion: the member wins', async () => {
  const g = 'conv-race'
  await streamsGroupWithStoredDescription(kip.port, g, open)
  kip.plugin!.control({ delete: { [g]: { action: 'hang' } } })
  const c = await connect()
  const pending = classicJoin(c, g, '')
  await waitFor('the barrier', async () => (await descriptionEpochs(kip.service, g))?.stored === -2)

  // A new member joins while the plugin delete is in flight; it is asked for its description and
  // pushes it (stored becomes 0 again, and the plugin holds it until the delete lands).
  const revived = await member(g, `${g}-m2`)
  const hb = await revived.heartbeat()
  assert.deepEqual([hb.errorCode, hb.topologyDescriptionRequired], [0, true])
  assert.equal((await push(revived.client, g, revived.memberId, 0)).errorCode, 0)
  assert.deepEqual(await descriptionEpochs(kip.service, g), { stored: 0, failed: -1 })

  kip.plugin!.control({})
  const r = await pending
  assert.deepEqual([r.errorCode, r.memberId], [ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''])
  assert.equal(await groupType(c, g), 'streams')
  // The delete removed what the push stored; finalize turned the real epoch back into -2.
  assert.equal(pluginRows(dbPath()).has(g), false)
  assert.deepEqual(await descriptionEpochs(kip.service, g), { stored: -2, failed: -1 })
  await assertInvariants()

  // The member is asked again and the group converges.
  const next = await revived.heartbeat()
  assert.deepEqual([next.errorCode, next.topologyDescriptionRequired], [0, true])
  assert.equal((await push(revived.client, g, revived.memberId, 0)).errorCode, 0)
  assert.deepEqual(await descriptionEpochs(kip.service, g), { stored: 0, failed: -1 })
  assert.equal(pluginRows(dbPath()).get(g), 0)
  await assertInvariants()
})

test('a revived member without a push: finalize clears the barrier to -1 (nothing stored, nothing held)', async () => {
  const g = 'conv-race-idle'
  await streamsGroupWithStoredDescription(kip.port, g, open)
  kip.plugin!.control({ delete: { [g]: { action: 'hang' } } })
  const c = await connect()
  const pending = classicJoin(c, g, 'm-classic')
  await waitFor('the barrier', async () => (await descriptionEpochs(kip.service, g))?.stored === -2)
  const revived = await member(g, `${g}-m2`)
  assert.equal((await revived.heartbeat()).errorCode, 0)
  kip.plugin!.control({})
  const r = await pending
  assert.deepEqual([r.errorCode, r.memberId], [ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''])
  assert.deepEqual(await descriptionEpochs(kip.service, g), { stored: -1, failed: -1 })
  assert.equal(pluginRows(dbPath()).has(g), false)
  await assertInvariants()
})
