import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ClassicGroupState } from '../../../../src/coordinator/shard/classic/index.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import {
  createJoinGroupRequest,
  type JoinGroupRequest,
} from '../../../../src/protocol/generated/messages/JoinGroupRequest.js'
import { enc, Harness } from './harness.js'

/** A JoinGroup (v9) of group g whose append fails; returns its token. */
async function joinNotStored(h: Harness, init: Partial<JoinGroupRequest>, uuid: string): Promise<number> {
  const token = h.token()
  const r = await h.failing((m, nowMs) =>
    m.classicGroupJoin(
      { nowMs, apiVersion: 9, clientId: 'a', clientHost: '/127.0.0.1', token, newMemberUuid: uuid },
      createJoinGroupRequest({
        groupId: 'g',
        sessionTimeoutMs: 10000,
        rebalanceTimeoutMs: 60000,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: enc('meta') }],
        ...init,
      }),
    ),
  )
  assert.equal(r.records.length, 1, 'the join writes a GroupMetadata record')
  return token
}

describe('ClassicGroupManager: a JoinGroup whose append failed', () => {
  it('removes the group the join created, answering what is parked in it', async () => {
    const h = await Harness.start()
    await joinNotStored(h, { groupInstanceId: 'instance-1' }, 'u1')
    const g = h.manager.group('g')!
    assert.equal(g.stored, false)
    assert.equal(g.state, ClassicGroupState.PREPARING_REBALANCE, 'the join started the first rebalance')
    assert.ok(!h.isScheduled('join-g'), 'whose timer the failed append never armed')
    // A request that parked in the group meanwhile is answered with the storage error.
    const parked = h.token()
    g.member('instance-1-u1')!.awaitingJoin = parked

    await h.apply(h.manager.classicGroupJoinWriteFailed('g', ErrorCode.NOT_COORDINATOR))
    assert.equal(h.manager.group('g'), undefined)
    assert.equal(h.joinResponse(parked)?.errorCode, ErrorCode.NOT_COORDINATOR)

    // The next join creates the group again and forms it.
    const joined = await h.join({ groupInstanceId: 'instance-1' })
    await h.advance(3000)
    assert.deepEqual(
      [h.joinResponse(joined.token)?.errorCode, h.joinResponse(joined.token)?.generationId],
      [ErrorCode.NONE, 1],
    )
    await h.close()
  })

  it('leaves a stored group alone', async () => {
    const h = await Harness.start()
    const first = await h.join({})
    assert.equal(h.joinResponse(first.token)!.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
    assert.equal(h.manager.group('g')!.stored, true)
    const r = await h.apply(h.manager.classicGroupJoinWriteFailed('g', ErrorCode.NOT_COORDINATOR))
    assert.equal(r, undefined)
    assert.ok(h.manager.group('g'))
    assert.ok(h.manager.group('g')!.isPendingMember(h.joinResponse(first.token)!.memberId))
    await h.close()
  })

  it("gives a static member's old id back when its new one could not be stored", async () => {
    const h = await Harness.start()
    const joined = await h.join({ groupInstanceId: 'instance-1' })
    await h.advance(3000)
    const oldId = h.joinResponse(joined.token)!.memberId
    await h.sync({ memberId: oldId, groupInstanceId: 'instance-1', generationId: 1, assignments: [] })
    const g = h.manager.group('g')!
    assert.equal(g.state, ClassicGroupState.STABLE)

    await joinNotStored(h, { groupInstanceId: 'instance-1' }, 'u2')
    assert.equal(g.staticMemberId('instance-1'), 'instance-1-u2')
    await h.apply(h.manager.classicGroupJoinWriteFailed('g', ErrorCode.NOT_COORDINATOR))
    assert.deepEqual([...g.members.keys()], [oldId])
    assert.deepEqual([g.leaderId, g.staticMemberId('instance-1'), g.state], [oldId, oldId, 'Stable'])
    assert.ok(h.isScheduled(`heartbeat-g-${oldId}`))
    assert.ok(!h.isScheduled('heartbeat-g-instance-1-u2'))
    await h.close()
  })
})
