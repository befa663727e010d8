import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ClassicGroupState } from '../../../../src/coordinator/shard/classic/index.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import { createSyncGroupRequest } from '../../../../src/protocol/generated/messages/SyncGroupRequest.js'
import { enc, Harness } from './harness.js'

/** Two dynamic members joined and the join phase completed: CompletingRebalance at generation 1. */
async function completingGroupOfTwo(h: Harness): Promise<{ leader: string; follower: string }> {
  const ids: string[] = []
  const tokens: number[] = []
  for (const clientId of ['a', 'b']) {
    const first = await h.join({}, { clientId })
    const memberId = h.joinResponse(first.token)!.memberId
    ids.push(memberId)
    tokens.push((await h.join({ memberId }, { clientId })).token)
  }
  // The initial delay, extended once because the second member arrived during it.
  await h.advance(6000)
  const responses = tokens.map((t) => h.joinResponse(t)!)
  assert.deepEqual(
    responses.map((r) => [r.errorCode, r.generationId]),
    [
      [0, 1],
      [0, 1],
    ],
  )
  assert.equal(h.manager.group('g')!.state, ClassicGroupState.COMPLETING_REBALANCE)
  const leader = responses[0].leader
  return { leader, follower: ids.find((id) => id !== leader)! }
}

/** The leader's SyncGroup of generation 1 with these assignments. */
function leaderSync(leader: string, assignments: { memberId: string; assignment: Uint8Array }[]) {
  return createSyncGroupRequest({
    groupId: 'g',
    memberId: leader,
    generationId: 1,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments,
  })
}

/** The leader's SyncGroup whose append fails: its records are never replayed, its completions fail. */
async function leaderSyncNotStored(h: Harness, leader: string, follower: string): Promise<void> {
  const token = h.token()
  const r = await h.failing((m, nowMs) =>
    m.classicGroupSync(
      { nowMs, apiVersion: 5, token },
      leaderSync(leader, [
        { memberId: leader, assignment: enc('L') },
        { memberId: follower, assignment: enc('F') },
      ]),
    ),
  )
  assert.equal(r.records.length, 1, 'the leader sync writes the assignment')
  assert.equal(h.failed.get(token)?.api, 'SyncGroup', 'its own answer was delivered with the failure')
  assert.equal(h.syncResponse(token), undefined)
}

describe('ClassicGroupManager: the leader assignment could not be stored', () => {
  it('starts a new rebalance at once; a follower syncing afterwards gets REBALANCE_IN_PROGRESS', async () => {
    const h = await Harness.start()
    const { leader, follower } = await completingGroupOfTwo(h)
    await leaderSyncNotStored(h, leader, follower)
    await h.apply(h.manager.classicGroupSyncWriteFailed('g', 1, ErrorCode.COORDINATOR_NOT_AVAILABLE, h.nowMs))

    const g = h.manager.group('g')!
    assert.equal(g.state, ClassicGroupState.PREPARING_REBALANCE)
    assert.deepEqual(
      [...g.members.values()].map((m) => m.assignment.length),
      [0, 0],
    )
    assert.ok(h.isScheduled('join-g'), 'the join phase has a deadline')
    assert.ok(!h.isScheduled('sync-g'), 'no pending-sync expiration is left')

    const late = await h.sync({ memberId: follower, generationId: 1 })
    assert.equal(h.syncResponse(late.token)!.errorCode, ErrorCode.REBALANCE_IN_PROGRESS)

    // Both rejoin: the next generation forms without waiting for the rebalance timeout.
    const ja = await h.join({ memberId: leader }, { clientId: 'a' })
    const jb = await h.join({ memberId: follower }, { clientId: 'b' })
    assert.equal(h.joinResponse(ja.token)!.generationId, 2)
    assert.equal(h.joinResponse(jb.token)!.generationId, 2)
  })

  it('answers a follower parked in SyncGroup with the storage error', async () => {
    const h = await Harness.start()
    const { leader, follower } = await completingGroupOfTwo(h)
    const parked = await h.sync({ memberId: follower, generationId: 1 })
    assert.equal(h.syncResponse(parked.token), undefined)
    // The follower was answered by the failed write's own completions (which the service turns into
    // the storage error); a follower that synced after the leader is parked again here.
    const r = h.manager.classicGroupSync(
      { nowMs: h.nowMs, apiVersion: 5, token: h.token() },
      leaderSync(leader, [{ memberId: leader, assignment: enc('L') }]),
    )
    assert.deepEqual(r.completions!.map((c) => c.token).sort(), [parked.token, parked.token + 1].sort())
    const again = h.token()
    h.manager.group('g')!.member(follower)!.awaitingSync = again
    await h.apply(h.manager.classicGroupSyncWriteFailed('g', 1, ErrorCode.NOT_COORDINATOR, h.nowMs))
    assert.equal(h.syncResponse(again)!.errorCode, ErrorCode.NOT_COORDINATOR)
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.PREPARING_REBALANCE)
  })

  it('does nothing when the group has moved on to another generation or state', async () => {
    const h = await Harness.start()
    const { leader, follower } = await completingGroupOfTwo(h)
    await leaderSyncNotStored(h, leader, follower)
    const stale = h.manager.classicGroupSyncWriteFailed('g', 0, ErrorCode.COORDINATOR_NOT_AVAILABLE, h.nowMs)
    assert.deepEqual([stale.records, stale.completions, stale.timers!.schedule], [[], [], []])
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.COMPLETING_REBALANCE)
    const unknown = h.manager.classicGroupSyncWriteFailed(
      'x',
      1,
      ErrorCode.COORDINATOR_NOT_AVAILABLE,
      h.nowMs,
    )
    assert.deepEqual([unknown.records, unknown.completions], [[], []])
  })
})
