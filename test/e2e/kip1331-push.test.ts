// KIP-1331 test plan §1 (push, solicitation, fencing), §3 (no plugin) and §4 (authorization)
// against a real server over TCP with the controllable test plugin. The back-off is shortened with
// the test-only keys (500 ms → 1 s) so a window can be watched passing.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { FaultInjection, RecordStore } from '../../src/coordinator/storage/types.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import type { Authorizer } from '../../src/server/router.js'
import {
  descriptionEpochs,
  describeTopology,
  deleteGroups,
  joinMember,
  type KipServer,
  push,
  startKipServer,
  waitFor,
  wireDescription,
} from '../helpers/kip1331.js'
import type { StreamsMember } from '../helpers/streams-member.js'
import { WireClient } from '../server/wire-client.js'

const BACKOFF = {
  'topograph.internal.test.topology.description.backoff.initial.ms': '500',
  'topograph.internal.test.topology.description.backoff.max.ms': '1000',
}

let kip: KipServer
let store: (RecordStore & FaultInjection) | undefined
const denied = new Set<string>()
const authorizer: Authorizer = {
  authorize: (_principal, operation, type, name) =>
    !(type === 'GROUP' && operation === 'READ' && denied.has(name)),
}
const open: { close(): void }[] = []

before(async () => {
  kip = await startKipServer({
    overrides: BACKOFF,
    server: {
      authorizer,
      extensions: [
        {
          name: 'capture-store',
          async start(ctx) {
            store = ctx.store as RecordStore & FaultInjection
            return { close: async () => {} }
          },
        },
      ],
    },
  })
})

after(async () => {
  for (const c of open) c.close()
  await kip?.stop()
})

async function member(
  groupId: string,
  memberId?: string,
  options?: { topologyEpoch?: number },
): Promise<StreamsMember> {
  const m = await joinMember(kip.port, groupId, memberId, options)
  open.push(m)
  return m
}

async function client(): Promise<WireClient> {
  const c = await WireClient.connect(kip.port)
  open.push(c)
  return c
}

const setCalls = (groupId: string) =>
  kip.plugin!.calls().filter((c) => c.op === 'set' && c.groupId === groupId)

test('1. happy path: flagged at v1, push stored at the epoch, later heartbeats not flagged', async () => {
  const m = await member('happy')
  const joined = await m.heartbeat()
  assert.equal(joined.errorCode, 0)
  assert.equal(joined.topologyDescriptionRequired, true)
  const r = await push(m.client, 'happy', m.memberId, 0)
  assert.deepEqual([r.errorCode, r.errorMessage], [0, null])
  assert.deepEqual(
    setCalls('happy').map((c) => [c.epoch, c.result]),
    [[0, 'ok']],
  )
  assert.deepEqual(await descriptionEpochs(kip.service, 'happy'), { stored: 0, failed: -1 })
  await new Promise((r) => setTimeout(r, 1100))
  assert.equal((await m.heartbeat()).topologyDescriptionRequired, false)
  const [row] = await describeTopology(m.client, ['happy'])
  assert.equal(row.topologyDescriptionStatus, 3)
  assert.equal(row.topologyDescription?.subtopologies[0].nodes[0].sourceTopics[0], 'input')
})

test('2. permanent failure: 135 with the message, failed epoch recorded, not asked again', async () => {
  kip.plugin!.control({ set: { permanent: { action: 'permanent', message: 'too large' } } })
  try {
    const m = await member('permanent')
    assert.equal((await m.heartbeat()).topologyDescriptionRequired, true)
    const r = await push(m.client, 'permanent', m.memberId, 0)
    assert.deepEqual(
      [r.errorCode, r.errorMessage],
      [ErrorCode.STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED, 'too large'],
    )
    assert.deepEqual(await descriptionEpochs(kip.service, 'permanent'), { stored: -2, failed: 0 })
    await new Promise((r) => setTimeout(r, 1100))
    assert.equal((await m.heartbeat()).topologyDescriptionRequired, false)
  } finally {
    kip.plugin!.control({})
  }
})

test('3. transient failure: 135 with the cause, nothing recorded, asked again after the back-off', async () => {
  kip.plugin!.control({ set: { transient: { action: 'transient', message: 'backend unavailable' } } })
  try {
    const m = await member('transient')
    assert.equal((await m.heartbeat()).topologyDescriptionRequired, true)
    const r = await push(m.client, 'transient', m.memberId, 0)
    assert.deepEqual(
      [r.errorCode, r.errorMessage],
      [ErrorCode.STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED, 'backend unavailable'],
    )
    assert.deepEqual(await descriptionEpochs(kip.service, 'transient'), { stored: -2, failed: -1 })
    // armOrExtend after the failure: attempts 1 → 1 s ± 20 %, capped at 1 s.
    assert.equal((await m.heartbeat()).topologyDescriptionRequired, false)
    await new Promise((r) => setTimeout(r, 400))
    assert.equal((await m.heartbeat()).topologyDescriptionRequired, false)
    await new Promise((r) => setTimeout(r, 700))
    assert.equal((await m.heartbeat()).topologyDescriptionRequired, true)
  } finally {
    kip.plugin!.control({})
  }
})

test('3b. a plain rejection and a rejection without a reason are transient', async () => {
  kip.plugin!.control({
    set: { plain: { action: 'reject-plain', message: 'disk full' }, empty: { action: 'reject-empty' } },
  })
  try {
    const a = await member('plain')
    await a.heartbeat()
    assert.deepEqual(Object.values(await push(a.client, 'plain', a.memberId, 0)).slice(1), [135, 'disk full'])
    const b = await member('empty')
    await b.heartbeat()
    assert.deepEqual(Object.values(await push(b.client, 'empty', b.memberId, 0)).slice(1), [
      135,
      'Plugin failure (no cause).',
    ])
    assert.deepEqual(await descriptionEpochs(kip.service, 'empty'), { stored: -2, failed: -1 })
  } finally {
    kip.plugin!.control({})
  }
})

test('3c. a synchronous throw is permanent with Kafka text', async () => {
  kip.plugin!.control({ set: { thrower: { action: 'throw', message: 'boom' } } })
  try {
    const m = await member('thrower')
    await m.heartbeat()
    const r = await push(m.client, 'thrower', m.memberId, 0)
    assert.deepEqual([r.errorCode, r.errorMessage], [135, 'Topology description plugin failed.'])
    assert.deepEqual(await descriptionEpochs(kip.service, 'thrower'), { stored: -2, failed: 0 })
  } finally {
    kip.plugin!.control({})
  }
})

test('4. gate: v0, leave (-1), static leave (-2) and error responses are never flagged', async () => {
  // v0 join: not flagged, and nothing armed, so the first v1 heartbeat is.
  const v0 = await member('gate-v0')
  const joined = await v0.client.request<{ topologyDescriptionRequired: boolean; memberEpoch: number }>(
    88,
    0,
    {
      groupId: 'gate-v0',
      memberId: v0.memberId,
      memberEpoch: 0,
      endpointInformationEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: 5000,
      topology: v0.topology,
      activeTasks: [],
      standbyTasks: [],
      warmupTasks: [],
      processId: 'p',
      userEndpoint: null,
      clientTags: [],
      taskOffsets: null,
      taskEndOffsets: null,
      shutdownApplication: false,
    },
  )
  assert.equal(joined.body.topologyDescriptionRequired, false)
  v0.epoch = joined.body.memberEpoch
  // An error response (stale member epoch) is not flagged either.
  const fenced = await v0.heartbeat({ memberEpoch: v0.epoch + 5 })
  assert.notEqual(fenced.errorCode, 0)
  assert.equal(fenced.topologyDescriptionRequired, false)
  // A leave is not flagged.
  v0.epoch = joined.body.memberEpoch
  const left = await v0.leave(-1)
  assert.equal(left.errorCode, 0)
  assert.equal(left.topologyDescriptionRequired, false)
  // The group was eligible all along: the next v1 join is flagged.
  const next = await member('gate-v0', 'gate-v0-m2')
  assert.equal((await next.heartbeat()).topologyDescriptionRequired, true)
})

test('4b. gate: a static temporary leave (-2) is not flagged', async () => {
  const m = await joinMember(kip.port, 'gate-static', 'gate-static-m1')
  open.push(m)
  Object.assign(m, { instanceId: 'instance-1' })
  const joined = await m.heartbeat()
  assert.equal(joined.topologyDescriptionRequired, true)
  // The window for epoch 0 is active; let it pass so only the member-epoch rule can suppress.
  await new Promise((r) => setTimeout(r, 1100))
  const left = await m.leave(-2)
  assert.equal(left.errorCode, 0)
  assert.equal(left.topologyDescriptionRequired, false)
})

test('4c. gate: at most one flagged heartbeat per group per window', async () => {
  const a = await member('window', 'window-a')
  const b = await member('window', 'window-b')
  assert.equal((await a.heartbeat()).topologyDescriptionRequired, true)
  assert.equal((await b.heartbeat()).topologyDescriptionRequired, false)
  assert.equal((await a.heartbeat()).topologyDescriptionRequired, false)
})

test('4d. gate (D4): members left on the old topology epoch carry STALE_TOPOLOGY and are never flagged', async () => {
  const old = await member('upgrade', 'upgrade-old')
  assert.equal((await old.heartbeat()).topologyDescriptionRequired, true)
  assert.equal((await push(old.client, 'upgrade', old.memberId, 0)).errorCode, 0)
  // The new member joins with topology epoch 1: the group's topology epoch advances and the joining
  // member, at the new epoch, is asked at once.
  const upgraded = await member('upgrade', 'upgrade-new', { topologyEpoch: 1 })
  const joined = await upgraded.heartbeat()
  assert.equal(joined.errorCode, 0)
  assert.equal(joined.topologyDescriptionRequired, true)
  // Once that window has passed, only STALE_TOPOLOGY can keep the old member from being asked.
  await new Promise((r) => setTimeout(r, 1100))
  const stale = await old.heartbeat()
  assert.ok(stale.status?.some((s) => s.statusCode === 0))
  assert.equal(stale.topologyDescriptionRequired, false)
  // The first member at the new epoch is asked.
  assert.equal((await upgraded.heartbeat()).topologyDescriptionRequired, true)
  assert.equal((await push(upgraded.client, 'upgrade', upgraded.memberId, 1)).errorCode, 0)
  assert.deepEqual(await descriptionEpochs(kip.service, 'upgrade'), { stored: 1, failed: -1 })
})

test('5. a lost bookkeeping write after the plugin stored: re-solicited, re-pushed, converges', async () => {
  kip.plugin!.control({ set: { lost: { action: 'hang' } } })
  const m = await member('lost')
  assert.equal((await m.heartbeat()).topologyDescriptionRequired, true)
  const pending = push(m.client, 'lost', m.memberId, 0)
  await waitFor('barrier', async () => (await descriptionEpochs(kip.service, 'lost'))?.stored === -2)
  assert.ok(store)
  store.failNextAppend()
  kip.plugin!.control({})
  const r = await pending
  assert.notEqual(r.errorCode, 0)
  assert.notEqual(r.errorCode, 135)
  assert.deepEqual(await descriptionEpochs(kip.service, 'lost'), { stored: -2, failed: -1 })
  await waitFor(
    're-solicitation',
    async () => (await m.heartbeat()).topologyDescriptionRequired === true,
    5000,
  )
  assert.equal((await push(m.client, 'lost', m.memberId, 0)).errorCode, 0)
  assert.deepEqual(
    setCalls('lost').map((c) => c.result),
    ['ok', 'ok'],
  )
  assert.deepEqual(await descriptionEpochs(kip.service, 'lost'), { stored: 0, failed: -1 })
})

test('6. pushes from members that are gone, and invalid pushes', async () => {
  const m = await member('gone')
  await m.heartbeat()
  const unknown = await push(m.client, 'gone', 'nobody', 0)
  assert.deepEqual(
    [unknown.errorCode, unknown.errorMessage],
    [25, 'Member nobody is not a member of group gone.'],
  )
  const empty = await push(m.client, 'gone', '  ', 0)
  assert.deepEqual([empty.errorCode, empty.errorMessage], [42, "MemberId can't be empty."])
  const emptyGroup = await push(m.client, '', m.memberId, 0)
  assert.deepEqual([emptyGroup.errorCode, emptyGroup.errorMessage], [42, "GroupId can't be empty."])
  const epoch = await push(m.client, 'gone', m.memberId, 5)
  assert.deepEqual(
    [epoch.errorCode, epoch.errorMessage],
    [42, "Topology epoch 5 does not match the group's current topology epoch 0."],
  )
  const badType = wireDescription()
  badType.subtopologies[0].nodes[0].nodeType = 7
  assert.deepEqual(Object.values(await push(m.client, 'gone', m.memberId, 0, badType)).slice(1), [
    42,
    'Unknown topology node type: 7',
  ])
  const badGlobal = wireDescription()
  badGlobal.globalStores[0].processor.nodeType = 3
  assert.deepEqual(Object.values(await push(m.client, 'gone', m.memberId, 0, badGlobal)).slice(1), [
    42,
    'Global store must be composed of a source and a processor node.',
  ])
  assert.equal(setCalls('gone').length, 0)
  // The group is deleted: GROUP_ID_NOT_FOUND (Kafka's answer, not UNKNOWN_MEMBER_ID).
  await m.leave()
  const c = await client()
  assert.equal((await deleteGroups(c, ['gone']))[0].errorCode, 0)
  const deleted = await push(c, 'gone', m.memberId, 0)
  assert.deepEqual([deleted.errorCode, deleted.errorMessage], [69, 'Group gone not found.'])
})

test('10. authorization: the push needs READ on the group; without it the plugin is not called', async () => {
  const m = await member('secured')
  assert.equal((await m.heartbeat()).topologyDescriptionRequired, true)
  denied.add('secured')
  try {
    const r = await push(m.client, 'secured', m.memberId, 0)
    assert.deepEqual([r.errorCode, r.errorMessage], [ErrorCode.GROUP_AUTHORIZATION_FAILED, null])
    assert.equal(setCalls('secured').length, 0)
    assert.deepEqual(await descriptionEpochs(kip.service, 'secured'), { stored: -1, failed: -1 })
  } finally {
    denied.delete('secured')
  }
  assert.equal((await push(m.client, 'secured', m.memberId, 0)).errorCode, 0)
  assert.equal(setCalls('secured').length, 1)
})

test('9. a server without a plugin: never flags, push UNSUPPORTED_VERSION with the message, describe NOT_STORED', async () => {
  const bare = await startKipServer({ plugin: null })
  const m = await joinMember(bare.port, 'bare')
  try {
    for (let i = 0; i < 3; i++) assert.equal((await m.heartbeat()).topologyDescriptionRequired, false)
    const r = await push(m.client, 'bare', m.memberId, 0)
    assert.deepEqual(
      [r.errorCode, r.errorMessage],
      [
        ErrorCode.UNSUPPORTED_VERSION,
        'The broker has no streams group topology description plugin configured.',
      ],
    )
    const [row] = await describeTopology(m.client, ['bare'])
    assert.deepEqual([row.errorCode, row.topologyDescriptionStatus, row.topologyDescription], [0, 1, null])
    // API 93 is listed in ApiVersions either way.
    const versions = await m.client.request<{ apiKeys: { apiKey: number }[] }>(18, 3, {
      clientSoftwareName: 't',
      clientSoftwareVersion: '1',
    })
    assert.ok(versions.body.apiKeys.some((k) => k.apiKey === 93))
  } finally {
    m.close()
    await bare.stop()
  }
})
