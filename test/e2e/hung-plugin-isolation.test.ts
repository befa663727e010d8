// While one group's topology-description plugin calls hang (setTopology for its push, getTopology for
// a describe, deleteTopology for a DeleteGroups), every other group keeps being served: twenty
// groups heartbeat, push and describe throughout, each answered, and the hung requests complete
// once the plugin answers again. Timing is not asserted (the figures are bench/isolation's, in
// RELIABILITY.md); only that nothing else waits for the hung calls.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  deleteGroups,
  describeTopology,
  joinMember,
  type KipServer,
  push,
  startKipServer,
} from '../helpers/kip1331.js'
import type { StreamsMember } from '../helpers/streams-member.js'
import { WireClient } from '../server/wire-client.js'

let kip: KipServer
const open: { close(): void }[] = []

before(async () => {
  kip = await startKipServer({ overrides: { 'offsets.retention.check.interval.ms': '3600000' } })
})
after(async () => {
  kip?.plugin?.control({})
  for (const c of open) c.close()
  await kip?.stop()
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
