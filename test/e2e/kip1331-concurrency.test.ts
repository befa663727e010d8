// KIP-1331 concurrency against a real server: two members pushing the same epoch; a push racing the
// cleanup cycle (its success finds stored −1 and records −2, still answering NONE) and racing
// DeleteGroups; a plugin that hangs (other groups keep being served: one hung call, then a push, a
// describe and a delete hanging while twenty groups heartbeat, push, describe and delete), and the
// D5 timeout.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  deleteGroups,
  describeTopology,
  descriptionEpochs,
  joinMember,
  type KipServer,
  push,
  startKipServer,
  waitFor,
} from '../helpers/kip1331.js'
import type { StreamsMember } from '../helpers/streams-member.js'
import { WireClient } from '../server/wire-client.js'

let kip: KipServer
const open: { close(): void }[] = []

before(async () => {
  // No automatic cleanup cycle or sweep during these tests: the cycle is run by hand.
  kip = await startKipServer({ overrides: { 'offsets.retention.check.interval.ms': '3600000' } })
})

after(async () => {
  kip?.plugin?.control({})
  for (const c of open) c.close()
  await kip?.stop()
})

async function member(groupId: string, memberId?: string): Promise<StreamsMember> {
  const m = await joinMember(kip.port, groupId, memberId)
  open.push(m)
  await m.heartbeat()
  return m
}

const calls = (op: string, groupId: string) =>
  kip.plugin!.calls().filter((c) => c.op === op && c.groupId === groupId)

test('two members pushing the same epoch at once: both NONE, stored at the epoch, plugin called twice', async () => {
  const a = await member('twin', 'twin-a')
  const b = await member('twin', 'twin-b')
  const [ra, rb] = await Promise.all([
    push(a.client, 'twin', a.memberId, 0),
    push(b.client, 'twin', b.memberId, 0),
  ])
  assert.deepEqual([ra.errorCode, rb.errorCode], [0, 0])
  assert.equal(calls('set', 'twin').length, 2)
  assert.deepEqual(await descriptionEpochs(kip.service, 'twin'), { stored: 0, failed: -1 })
})

test('a push racing the cleanup cycle: the cycle finalizes to -1, the late success records -2 and answers NONE', async () => {
  const m = await member('race-cleanup')
  kip.plugin!.control({ set: { 'race-cleanup': { action: 'hang' } } })
  // Another connection: responses on one connection come back in request order.
  const pusher = await WireClient.connect(kip.port)
  open.push(pusher)
  const pending = push(pusher, 'race-cleanup', m.memberId, 0)
  await waitFor('barrier', async () => (await descriptionEpochs(kip.service, 'race-cleanup'))?.stored === -2)
  await m.leave()
  await kip.service.topologyDescriptions.runCleanupCycle()
  assert.equal(calls('delete', 'race-cleanup').length, 1)
  assert.deepEqual(await descriptionEpochs(kip.service, 'race-cleanup'), { stored: -1, failed: -1 })
  kip.plugin!.control({})
  const r = await pending
  assert.deepEqual([r.errorCode, r.errorMessage], [0, null])
  // The delete may have removed what the push stored: -2 keeps the group reclaimable and re-soliciting.
  assert.deepEqual(await descriptionEpochs(kip.service, 'race-cleanup'), { stored: -2, failed: -1 })
  await kip.service.topologyDescriptions.runCleanupCycle()
  assert.equal(calls('delete', 'race-cleanup').length, 2)
  assert.deepEqual(await descriptionEpochs(kip.service, 'race-cleanup'), { stored: -1, failed: -1 })
})

test('a push racing DeleteGroups: the group is deleted, the late push answers GROUP_ID_NOT_FOUND', async () => {
  const m = await member('race-delete')
  kip.plugin!.control({ set: { 'race-delete': { action: 'hang' } } })
  // Another connection: responses on one connection come back in request order.
  const pusher = await WireClient.connect(kip.port)
  open.push(pusher)
  const pending = push(pusher, 'race-delete', m.memberId, 0)
  await waitFor('barrier', async () => (await descriptionEpochs(kip.service, 'race-delete'))?.stored === -2)
  await m.leave()
  const admin = await WireClient.connect(kip.port)
  open.push(admin)
  assert.equal((await deleteGroups(admin, ['race-delete']))[0].errorCode, 0)
  assert.equal(calls('delete', 'race-delete').length, 1)
  kip.plugin!.control({})
  const r = await pending
  assert.deepEqual([r.errorCode, r.errorMessage], [69, 'Group race-delete not found.'])
  assert.equal(kip.service.topologyDescriptions.backoff.entry('race-delete'), undefined)
})

test('a hanging plugin call does not hold other groups', async () => {
  const slow = await member('hang-slow')
  const fast = await member('hang-fast')
  kip.plugin!.control({ set: { 'hang-slow': { action: 'hang' } } })
  let settled = false
  const pending = push(slow.client, 'hang-slow', slow.memberId, 0).then((r) => {
    settled = true
    return r
  })
  await waitFor('barrier', async () => (await descriptionEpochs(kip.service, 'hang-slow'))?.stored === -2)
  assert.equal((await push(fast.client, 'hang-fast', fast.memberId, 0)).errorCode, 0)
  assert.equal((await fast.heartbeat()).errorCode, 0)
  assert.equal(settled, false)
  kip.plugin!.control({})
  assert.equal((await pending).errorCode, 0)
})

test('D5: with plugin.timeout.ms a hung setTopology is a transient failure (135), other groups served', async () => {
  const timed = await startKipServer({
    overrides: { 'group.streams.topology.description.plugin.timeout.ms': '300' },
  })
  try {
    timed.plugin!.control({ set: { 'd5-slow': { action: 'hang' } } })
    const slow = await joinMember(timed.port, 'd5-slow')
    const fast = await joinMember(timed.port, 'd5-fast')
    open.push(slow, fast)
    await slow.heartbeat()
    await fast.heartbeat()
    const started = Date.now()
    const pending = push(slow.client, 'd5-slow', slow.memberId, 0)
    assert.equal((await push(fast.client, 'd5-fast', fast.memberId, 0)).errorCode, 0)
    const r = await pending
    assert.ok(Date.now() - started >= 250)
    assert.deepEqual(
      [r.errorCode, r.errorMessage],
      [135, 'Topology description plugin setTopology did not complete within 300 ms.'],
    )
    assert.deepEqual(await descriptionEpochs(timed.service, 'd5-slow'), { stored: -2, failed: -1 })
    // Describe with a hanging getTopology answers ERROR after the timeout.
    assert.equal((await push(slow.client, 'd5-slow', slow.memberId, 0)).errorCode, 135)
    timed.plugin!.control({ get: { 'd5-fast': { action: 'hang' } } })
    const { body } = await fast.client.request<{
      groups: { errorCode: number; topologyDescriptionStatus: number }[]
    }>(89, 1, { groupIds: ['d5-fast'], includeAuthorizedOperations: false, includeTopologyDescription: true })
    assert.deepEqual([body.groups[0].errorCode, body.groups[0].topologyDescriptionStatus], [0, 2])
  } finally {
    timed.plugin!.control({})
    await timed.stop()
  }
})

async function client(): Promise<WireClient> {
  const c = await WireClient.connect(kip.port)
  open.push(c)
  return c
}

test('other groups are served while one group has a push, a describe and a delete hanging in the plugin', async () => {
  const others: StreamsMember[] = []
  for (let i = 0; i < 20; i++) {
    const m = await joinMember(kip.port, `free-${i}`)
    open.push(m)
    await m.heartbeat()
    others.push(m)
  }
  // `stuck` has its description stored (a describe reads it, a delete deletes it); `stuck-push`
  // has none yet (its push stores it).
  const hung = await joinMember(kip.port, 'stuck')
  const hungPush = await joinMember(kip.port, 'stuck-push')
  open.push(hung, hungPush)
  await hung.heartbeat()
  await hungPush.heartbeat()
  const setup = await client()
  assert.equal((await push(setup, 'stuck', hung.memberId, 0)).errorCode, 0)

  kip.plugin!.control({
    set: { 'stuck-push': { action: 'hang' } },
    get: { stuck: { action: 'hang' } },
    delete: { stuck: { action: 'hang' } },
  })
  let settled = 0
  const track = <T>(p: Promise<T>) =>
    p.then((v) => {
      settled++
      return v
    })
  const pushing = track(push(await client(), 'stuck-push', hungPush.memberId, 0))
  const describing = track(describeTopology(await client(), ['stuck']))
  // Let both reach the plugin.
  await new Promise((r) => setTimeout(r, 200))

  // Every other group: heartbeats, its own push (setTopology) and describe (getTopology), answered.
  const free = await client()
  for (let round = 0; round < 3; round++) {
    for (const m of others) {
      const r = await m.heartbeat()
      assert.equal(r.errorCode, 0, `${m.groupId} heartbeat`)
    }
  }
  for (const m of others.slice(0, 5)) {
    assert.equal((await push(free, m.groupId, m.memberId, 0)).errorCode, 0, `${m.groupId} push`)
  }
  const described = await describeTopology(
    free,
    others.slice(0, 5).map((m) => m.groupId),
  )
  assert.deepEqual(
    described.map((g) => g.errorCode),
    [0, 0, 0, 0, 0],
  )
  assert.equal(settled, 0, 'the hung push and describe are still waiting')

  // A DeleteGroups of the hung group waits for its deleteTopology; deleting another group does not.
  await hung.leave()
  const deleting = track(deleteGroups(await client(), ['stuck']))
  await new Promise((r) => setTimeout(r, 200))
  await others[19].leave()
  assert.deepEqual(
    (await deleteGroups(free, ['free-19'])).map((r) => r.errorCode),
    [0],
  )
  for (const m of others.slice(0, 19)) assert.equal((await m.heartbeat()).errorCode, 0)
  assert.equal(settled, 0)

  // The plugin answers again: the hung requests complete.
  kip.plugin!.control({})
  assert.equal((await pushing).errorCode, 0)
  assert.equal((await describing)[0].errorCode, 0)
  assert.deepEqual(
    (await deleting).map((r) => r.errorCode),
    [0],
  )
})
