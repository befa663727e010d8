import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Harness, heartbeatRequest, joinRequest, NO_DELAY, topicsImage } from './harness.js'

const MEMBERS = 40
const steady = (i: number, memberEpoch: number) =>
  heartbeatRequest({
    groupId: `g${i}`,
    memberId: `m${i}`,
    memberEpoch,
    endpointInformationEpoch: 0,
    activeTasks: null,
    standbyTasks: null,
    warmupTasks: null,
  })

/** One member in each of `MEMBERS` groups, joined (with its tasks) at 0, then steady every 5 s to `lastMs`. */
async function together(lastMs: number): Promise<Harness> {
  const h = await Harness.start(topicsImage({ foo: 2 }))
  const epochs: number[] = []
  for (let i = 0; i < MEMBERS; i++) {
    const r = await h.heartbeat(joinRequest({ groupId: `g${i}`, memberId: `m${i}` }), NO_DELAY)
    epochs.push(r.response.memberEpoch)
  }
  for (let t = 5000; t <= lastMs; t += 5000) {
    await h.advance(t - h.nowMs)
    for (let i = 0; i < MEMBERS; i++) {
      const r = await h.heartbeat(steady(i, epochs[i]!), NO_DELAY)
      assert.equal(r.response.errorCode, 0)
      assert.equal(r.records.length, 0)
    }
  }
  return h
}

describe('session timers of members whose sessions started together', () => {
  it('are re-armed onto each member’s own phase, not all for the same deadline', async () => {
    // Every session timer was armed at the same moment (as every member's of a shard loaded after
    // a restart) and fires at the same moment, before the soft deadline the heartbeat at 40 s set.
    const h = await together(40_000)
    const firstFire = h.dueMs('session-timeout-g0-m0')!
    for (let i = 0; i < MEMBERS; i++) assert.equal(h.dueMs(`session-timeout-g${i}-m${i}`), firstFire)
    assert.ok(firstFire < 85_000)
    await h.advance(firstFire - h.nowMs)
    const due = Array.from({ length: MEMBERS }, (_, i) => h.dueMs(`session-timeout-g${i}-m${i}`))
    for (const d of due) {
      assert.ok(d !== undefined && d > firstFire && d <= 85_000, `due ${d}`)
    }
    const spread = Math.max(...(due as number[])) - Math.min(...(due as number[]))
    assert.ok(new Set(due).size >= MEMBERS * 0.6, `${new Set(due).size} distinct due times: ${due.join(' ')}`)
    assert.ok(spread >= 20_000, `due times spread over ${spread} ms`)
    assert.equal(h.manager.group('g0')!.members.size, 1)
    await h.close()
  })

  it('still expire each member one session timeout after its last heartbeat', async () => {
    const h = await together(40_000)
    // No heartbeat after 40 s: every member expires at 85 s, not before and not after.
    await h.advance(84_999 - h.nowMs)
    for (let i = 0; i < MEMBERS; i++)
      assert.equal(h.manager.group(`g${i}`)!.members.size, 1, `g${i} at 84.999 s`)
    await h.advance(1)
    for (let i = 0; i < MEMBERS; i++)
      assert.equal(h.manager.group(`g${i}`)?.members.size ?? 0, 0, `g${i} at 85 s`)
    await h.close()
  })
})
