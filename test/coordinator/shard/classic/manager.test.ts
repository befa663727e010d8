import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError } from '../../../../src/coordinator/shard/api-error.js'
import { ClassicGroupManager, ClassicGroupState } from '../../../../src/coordinator/shard/classic/index.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import type { CoordinatorRecord } from '../../../../src/protocol/generated/coordinator-records.js'
import { createHeartbeatRequest } from '../../../../src/protocol/generated/messages/HeartbeatRequest.js'
import { createJoinGroupResponse } from '../../../../src/protocol/generated/messages/JoinGroupResponse.js'
import { createLeaveGroupRequest } from '../../../../src/protocol/generated/messages/LeaveGroupRequest.js'
import { createSyncGroupResponse } from '../../../../src/protocol/generated/messages/SyncGroupResponse.js'
import { enc, Harness, persistedView } from './harness.js'

const T0 = 1_000_000

function heartbeat(
  h: Harness,
  memberId: string,
  generationId: number,
  groupInstanceId: string | null = null,
) {
  const r = h.manager.classicGroupHeartbeat(
    { nowMs: h.nowMs, apiVersion: 4 },
    createHeartbeatRequest({ groupId: 'g', memberId, generationId, groupInstanceId }),
  )
  h.apply(r)
  return r.response.errorCode
}

/** Dynamic member, v9: MEMBER_ID_REQUIRED then the real join. Returns the member id and the parked token. */
function joinDynamic(h: Harness, clientId: string, metadata = 'meta'): { memberId: string; token: number } {
  const first = h.join({ protocols: [{ name: 'range', metadata: enc(metadata) }] }, { clientId })
  const memberId = h.joinResponse(first.token)!.memberId
  const second = h.join({ memberId, protocols: [{ name: 'range', metadata: enc(metadata) }] }, { clientId })
  return { memberId, token: second.token }
}

/** One member through the initial delay and its own SyncGroup: Stable at generation 1. */
function stableGroupOfOne(h: Harness): string {
  const a = joinDynamic(h, 'a')
  h.advance(3000)
  assert.equal(h.joinResponse(a.token)!.generationId, 1)
  const s = h.sync({
    memberId: a.memberId,
    generationId: 1,
    assignments: [{ memberId: a.memberId, assignment: enc('A1') }],
  })
  assert.equal(h.syncResponse(s.token)!.errorCode, 0)
  return a.memberId
}

/** Two members, Stable at generation 2 (A leads). */
function stableGroupOfTwo(h: Harness): { a: string; b: string } {
  const a = stableGroupOfOne(h)
  const b = joinDynamic(h, 'b', 'metaB')
  const ra = h.join({ memberId: a }, { clientId: 'a' })
  assert.equal(h.joinResponse(ra.token)!.generationId, 2)
  const sb = h.sync({ memberId: b.memberId, generationId: 2 })
  const sa = h.sync({
    memberId: a,
    generationId: 2,
    assignments: [
      { memberId: a, assignment: enc('A2') },
      { memberId: b.memberId, assignment: enc('B2') },
    ],
  })
  assert.equal(h.syncResponse(sa.token)!.errorCode, 0)
  assert.equal(h.syncResponse(sb.token)!.errorCode, 0)
  return { a, b: b.memberId }
}

describe('ClassicGroupManager JoinGroup', () => {
  it('answers a first dynamic join from v4 on with MEMBER_ID_REQUIRED and makes the new group durable', () => {
    const h = new Harness()
    const { token, result } = h.join({}, { apiVersion: 4, clientId: 'c1' })
    assert.deepEqual(result.completions, [
      {
        api: 'JoinGroup',
        token,
        response: createJoinGroupResponse({ memberId: 'c1-uuid1', errorCode: ErrorCode.MEMBER_ID_REQUIRED }),
      },
    ])
    assert.deepEqual(result.records, [
      {
        type: 'GroupMetadata',
        key: { group: 'g' },
        value: {
          protocolType: '',
          generation: 0,
          protocol: null,
          leader: null,
          currentStateTimestamp: BigInt(T0),
          members: [],
        },
        valueVersion: 3,
      },
    ])
    assert.deepEqual(
      result.timers!.schedule!.map((t) => [t.key, t.delayMs]),
      [['heartbeat-g-c1-uuid1', 10000]],
    )
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.EMPTY)
    assert.ok(h.manager.group('g')!.isPendingMember('c1-uuid1'))
  })

  it('parks a v3 join without a member id instead of asking for one', () => {
    const h = new Harness()
    const { token, result } = h.join({}, { apiVersion: 3, clientId: 'c1' })
    assert.deepEqual(result.completions, [])
    assert.equal(h.joinResponse(token), undefined)
    const g = h.manager.group('g')!
    assert.equal(g.state, ClassicGroupState.PREPARING_REBALANCE)
    assert.deepEqual([...g.members.keys()], ['c1-uuid1'])
    assert.equal(h.delayOf('join-g'), 3000)
    assert.equal(
      h.delayOf('heartbeat-g-c1-uuid1'),
      300000,
      'a parked new member has the new-member join timeout',
    )
  })

  it('waits the initial rebalance delay, then the leader assigns and the group becomes Stable', () => {
    const h = new Harness()
    const a = joinDynamic(h, 'a')
    assert.equal(h.joinResponse(a.token), undefined)
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.PREPARING_REBALANCE)
    h.advance(2999)
    assert.equal(h.joinResponse(a.token), undefined)
    h.advance(1)
    assert.deepEqual(
      h.joinResponse(a.token),
      createJoinGroupResponse({
        memberId: a.memberId,
        generationId: 1,
        protocolName: 'range',
        protocolType: 'consumer',
        leader: a.memberId,
        skipAssignment: false,
        members: [{ memberId: a.memberId, groupInstanceId: null, metadata: enc('meta') }],
      }),
    )
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.COMPLETING_REBALANCE)
    assert.equal(h.delayOf('sync-g'), 60000)
    assert.equal(h.delayOf('heartbeat-g-a-uuid1'), 10000)

    const logBefore = h.log.length
    const s = h.sync({
      memberId: a.memberId,
      generationId: 1,
      assignments: [{ memberId: a.memberId, assignment: enc('A1') }],
    })
    assert.deepEqual(h.log.slice(logBefore), [
      {
        type: 'GroupMetadata',
        key: { group: 'g' },
        value: {
          protocolType: 'consumer',
          generation: 1,
          protocol: 'range',
          leader: a.memberId,
          currentStateTimestamp: BigInt(T0 + 3000),
          members: [
            {
              memberId: a.memberId,
              groupInstanceId: null,
              clientId: 'a',
              clientHost: '/127.0.0.1',
              rebalanceTimeout: 60000,
              sessionTimeout: 10000,
              subscription: enc('meta'),
              assignment: enc('A1'),
            },
          ],
        },
        valueVersion: 3,
      },
    ])
    assert.deepEqual(
      h.syncResponse(s.token),
      createSyncGroupResponse({ protocolType: 'consumer', protocolName: 'range', assignment: enc('A1') }),
    )
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.STABLE)
    assert.equal(h.delayOf('sync-g'), undefined)
    assert.equal(heartbeat(h, a.memberId, 1), ErrorCode.NONE)
  })

  it('extends the initial delay when another member joins during it, within the rebalance timeout', () => {
    const h = new Harness()
    const a = joinDynamic(h, 'a')
    h.advance(2000)
    const b = joinDynamic(h, 'b')
    h.advance(1000) // first delay over, but b arrived: wait another delay
    assert.equal(h.joinResponse(a.token), undefined)
    h.advance(3000)
    assert.equal(h.joinResponse(a.token)!.generationId, 1)
    assert.equal(h.joinResponse(b.token)!.generationId, 1)
    assert.equal(h.joinResponse(a.token)!.members.length, 2, 'the leader gets every member')
    assert.deepEqual(h.joinResponse(b.token)!.members, [], 'followers get none')
  })

  it('a second member rebalances a Stable group; heartbeats say REBALANCE_IN_PROGRESS until all rejoined', () => {
    const h = new Harness()
    const a = stableGroupOfOne(h)
    const b = joinDynamic(h, 'b', 'metaB')
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.PREPARING_REBALANCE)
    assert.equal(h.delayOf('join-g'), 60000)
    assert.equal(heartbeat(h, a, 1), ErrorCode.REBALANCE_IN_PROGRESS)
    assert.equal(h.joinResponse(b.token), undefined)

    const ra = h.join({ memberId: a }, { clientId: 'a' })
    const leaderView = h.joinResponse(ra.token)!
    assert.equal(leaderView.generationId, 2)
    assert.equal(leaderView.leader, a)
    assert.deepEqual(leaderView.members, [
      { memberId: a, groupInstanceId: null, metadata: enc('meta') },
      { memberId: b.memberId, groupInstanceId: null, metadata: enc('metaB') },
    ])
    assert.deepEqual(
      h.joinResponse(b.token),
      createJoinGroupResponse({
        memberId: b.memberId,
        generationId: 2,
        protocolName: 'range',
        protocolType: 'consumer',
        leader: a,
        members: [],
      }),
    )
    assert.equal(h.delayOf('join-g'), undefined)

    // The follower's SyncGroup waits for the leader's.
    const sb = h.sync({ memberId: b.memberId, generationId: 2 })
    assert.equal(h.syncResponse(sb.token), undefined)
    assert.equal(heartbeat(h, b.memberId, 2), ErrorCode.NONE, 'CompletingRebalance heartbeats are fine')
    h.sync({
      memberId: a,
      generationId: 2,
      assignments: [
        { memberId: a, assignment: enc('A2') },
        { memberId: b.memberId, assignment: enc('B2') },
      ],
    })
    assert.deepEqual(
      h.syncResponse(sb.token),
      createSyncGroupResponse({ protocolType: 'consumer', protocolName: 'range', assignment: enc('B2') }),
    )
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.STABLE)
  })

  it('a new member arriving during CompletingRebalance answers parked SyncGroups with REBALANCE_IN_PROGRESS', () => {
    const h = new Harness()
    const a = stableGroupOfOne(h)
    const b = joinDynamic(h, 'b')
    h.join({ memberId: a }, { clientId: 'a' })
    const sb = h.sync({ memberId: b.memberId, generationId: 2 })
    joinDynamic(h, 'c')
    assert.deepEqual(
      h.syncResponse(sb.token),
      createSyncGroupResponse({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS }),
    )
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.PREPARING_REBALANCE)
  })

  it('refuses a join with a session timeout outside the broker range, an empty group id, or a group of another type', () => {
    const h = new Harness({
      otherGroups: {
        typeOf: (id) => (id === 's' ? 'streams' : undefined),
        isEmpty: () => false,
        deleteEmptyGroupRecords: () => [],
      },
    })
    const t1 = h.join({ sessionTimeoutMs: 5999 })
    assert.equal(h.joinResponse(t1.token)!.errorCode, ErrorCode.INVALID_SESSION_TIMEOUT)
    const t2 = h.join({ groupId: '' })
    assert.equal(h.joinResponse(t2.token)!.errorCode, ErrorCode.INVALID_GROUP_ID)
    const t3 = h.join({ groupId: 's' })
    assert.deepEqual(
      h.joinResponse(t3.token),
      createJoinGroupResponse({ memberId: '', errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL }),
    )
    const t4 = h.join({ groupId: 'nope', memberId: 'ghost' })
    assert.equal(h.joinResponse(t4.token)!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID)
    assert.deepEqual(h.log, [])
  })

  it('refuses a member whose protocol type or protocols the group cannot take', () => {
    const h = new Harness()
    stableGroupOfOne(h)
    const t1 = h.join({ protocolType: 'connect' })
    assert.equal(h.joinResponse(t1.token)!.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    const t2 = h.join({ protocols: [{ name: 'roundrobin', metadata: enc('x') }] })
    assert.equal(h.joinResponse(t2.token)!.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
  })

  it('asks for conversion of an empty streams group, then converts it when the service says it is ready', () => {
    const tombstone: CoordinatorRecord = { type: 'StreamsGroupMetadata', key: { groupId: 'g' }, value: null }
    let streamsGroupExists = true
    const h = new Harness({
      otherGroups: {
        typeOf: (id) => (id === 'g' && streamsGroupExists ? 'streams' : undefined),
        isEmpty: () => true,
        deleteEmptyGroupRecords: () => [tombstone],
      },
    })
    const first = h.join({})
    assert.equal(first.result.response.conversionRequired, 'streams')
    assert.deepEqual(first.result.completions, [])
    assert.deepEqual(first.result.records, [])
    assert.equal(h.manager.hasGroup('g'), false)

    const second = h.join({}, { conversionReady: true })
    streamsGroupExists = false
    assert.equal(second.result.response.conversionRequired, null)
    assert.deepEqual(
      second.result.records.map((r) => r.type),
      ['StreamsGroupMetadata', 'GroupMetadata'],
    )
    assert.equal(second.result.records[0], tombstone)
    assert.equal(h.joinResponse(second.token)!.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
  })

  it('turns away new members past group.max.size', () => {
    const h = new Harness({
      config: {
        minSessionTimeoutMs: 6000,
        maxSessionTimeoutMs: 1800000,
        initialRebalanceDelayMs: 3000,
        maxSize: 1,
        newMemberJoinTimeoutMs: 300000,
      },
    })
    stableGroupOfOne(h)
    const b = joinDynamic(h, 'b')
    assert.deepEqual(
      h.joinResponse(b.token),
      createJoinGroupResponse({ memberId: '', errorCode: ErrorCode.GROUP_MAX_SIZE_REACHED }),
    )
    assert.equal(h.manager.group('g')!.members.size, 1)
  })
})

describe('ClassicGroupManager generation and member checks', () => {
  it('answers ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID to Heartbeat and SyncGroup', () => {
    const h = new Harness()
    const a = stableGroupOfOne(h)
    assert.equal(heartbeat(h, a, 0), ErrorCode.ILLEGAL_GENERATION)
    assert.equal(heartbeat(h, 'ghost', 1), ErrorCode.UNKNOWN_MEMBER_ID)
    const wrongGen = h.sync({ memberId: a, generationId: 7 })
    assert.deepEqual(
      h.syncResponse(wrongGen.token),
      createSyncGroupResponse({ errorCode: ErrorCode.ILLEGAL_GENERATION }),
    )
    const ghost = h.sync({ memberId: 'ghost', generationId: 1 })
    assert.equal(h.syncResponse(ghost.token)!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID)
    const noGroup = h.manager.classicGroupHeartbeat(
      { nowMs: h.nowMs, apiVersion: 4 },
      createHeartbeatRequest({ groupId: 'other', memberId: a, generationId: 1 }),
    )
    assert.equal(noGroup.response.errorCode, ErrorCode.UNKNOWN_MEMBER_ID)
    const wrongProtocol = h.sync({ memberId: a, generationId: 1, protocolName: 'roundrobin' })
    assert.equal(h.syncResponse(wrongProtocol.token)!.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    const missingType = h.sync({ memberId: a, generationId: 1, protocolType: null })
    assert.equal(h.syncResponse(missingType.token)!.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
  })

  it('answers SyncGroup with REBALANCE_IN_PROGRESS while the group prepares a rebalance', () => {
    const h = new Harness()
    const a = stableGroupOfOne(h)
    joinDynamic(h, 'b')
    const s = h.sync({ memberId: a, generationId: 1 })
    assert.deepEqual(
      h.syncResponse(s.token),
      createSyncGroupResponse({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS }),
    )
  })

  it('checks offset commits as Kafka: generation, member, CompletingRebalance', () => {
    const h = new Harness()
    const a = stableGroupOfOne(h)
    const commit =
      (memberId: string, generation: number, isTransactional = false) =>
      () =>
        h.manager.validateOffsetCommit('g', {
          memberId,
          groupInstanceId: null,
          generationIdOrMemberEpoch: generation,
          isTransactional,
        })
    assert.doesNotThrow(commit(a, 1))
    assert.throws(commit(a, 0), (e) => e instanceof ApiError && e.errorCode === ErrorCode.ILLEGAL_GENERATION)
    assert.throws(
      commit('ghost', 1),
      (e) => e instanceof ApiError && e.errorCode === ErrorCode.UNKNOWN_MEMBER_ID,
    )
    assert.throws(commit('', -1), (e) => e instanceof ApiError && e.errorCode === ErrorCode.UNKNOWN_MEMBER_ID)
    assert.doesNotThrow(commit('', -1, true))
    // A new member makes the group rebalance; once everyone rejoined it is CompletingRebalance.
    joinDynamic(h, 'b')
    h.join({ memberId: a }, { clientId: 'a' })
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.COMPLETING_REBALANCE)
    assert.throws(
      commit(a, 2),
      (e) => e instanceof ApiError && e.errorCode === ErrorCode.REBALANCE_IN_PROGRESS,
    )
    assert.doesNotThrow(commit(a, 2, true))
    assert.doesNotThrow(() => h.manager.validateOffsetFetch('g'))
  })
})

describe('ClassicGroupManager session timeout and leave', () => {
  it('removes a member whose session expires and rebalances the rest', () => {
    const h = new Harness()
    const { a, b } = stableGroupOfTwo(h)
    h.advance(5000)
    assert.equal(heartbeat(h, b, 2), ErrorCode.NONE)
    h.advance(5000) // a's session (10 s) is over
    const g = h.manager.group('g')!
    assert.deepEqual([...g.members.keys()], [b])
    assert.equal(g.state, ClassicGroupState.PREPARING_REBALANCE)
    assert.equal(g.leaderId, b)
    assert.equal(heartbeat(h, a, 2), ErrorCode.UNKNOWN_MEMBER_ID)
    assert.equal(heartbeat(h, b, 2), ErrorCode.REBALANCE_IN_PROGRESS)
    const rb = h.join({ memberId: b }, { clientId: 'b' })
    assert.equal(h.joinResponse(rb.token)!.generationId, 3)
    assert.equal(h.joinResponse(rb.token)!.leader, b)
  })

  it('drops a pending member (MEMBER_ID_REQUIRED, never came back) when its session expires', () => {
    const h = new Harness()
    const first = h.join({}, { clientId: 'c' })
    const id = h.joinResponse(first.token)!.memberId
    h.advance(10000)
    assert.equal(h.manager.group('g')!.isPendingMember(id), false)
  })

  it('removes a member on LeaveGroup; the last one leaving empties the group and writes it', () => {
    const h = new Harness()
    const a = stableGroupOfOne(h)
    const before = h.log.length
    const r = h.manager.classicGroupLeave(
      { nowMs: h.nowMs, apiVersion: 5 },
      createLeaveGroupRequest({
        groupId: 'g',
        members: [{ memberId: a, groupInstanceId: null, reason: 'bye' }],
      }),
    )
    h.apply(r)
    assert.deepEqual(r.response.members, [{ memberId: a, groupInstanceId: null, errorCode: 0 }])
    assert.equal(r.response.errorCode, 0)
    assert.deepEqual(h.log.slice(before), [
      {
        type: 'GroupMetadata',
        key: { group: 'g' },
        value: {
          protocolType: 'consumer',
          generation: 2,
          protocol: null,
          leader: null,
          currentStateTimestamp: BigInt(h.nowMs),
          members: [],
        },
        valueVersion: 3,
      },
    ])
    assert.ok(r.timers!.cancel!.includes(`heartbeat-g-${a}`))
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.EMPTY)
    assert.equal(h.manager.isEmpty('g'), true)
    assert.equal(h.manager.shouldExpire('g'), true)
  })

  it('LeaveGroup v0–2 reports the member error at the top level; v3+ per member', () => {
    const h = new Harness()
    stableGroupOfOne(h)
    const v1 = h.manager.classicGroupLeave(
      { nowMs: h.nowMs, apiVersion: 1 },
      createLeaveGroupRequest({ groupId: 'g', memberId: 'ghost' }),
    )
    assert.equal(v1.response.errorCode, ErrorCode.UNKNOWN_MEMBER_ID)
    assert.deepEqual(v1.response.members, [])
    const v3 = h.manager.classicGroupLeave(
      { nowMs: h.nowMs, apiVersion: 3 },
      createLeaveGroupRequest({
        groupId: 'g',
        members: [{ memberId: 'ghost', groupInstanceId: null, reason: null }],
      }),
    )
    assert.equal(v3.response.errorCode, 0)
    assert.deepEqual(v3.response.members, [
      { memberId: 'ghost', groupInstanceId: null, errorCode: ErrorCode.UNKNOWN_MEMBER_ID },
    ])
  })

  it('a leaving member during PreparingRebalance lets the join phase complete', () => {
    const h = new Harness()
    const { a, b } = stableGroupOfTwo(h)
    const ra = h.join({ memberId: a }, { clientId: 'a' }) // leader rejoins: rebalance, waits for b
    assert.equal(h.joinResponse(ra.token), undefined)
    h.apply(
      h.manager.classicGroupLeave(
        { nowMs: h.nowMs, apiVersion: 5 },
        createLeaveGroupRequest({
          groupId: 'g',
          members: [{ memberId: b, groupInstanceId: null, reason: null }],
        }),
      ),
    )
    assert.equal(h.joinResponse(ra.token)!.generationId, 3)
    assert.deepEqual(
      h.joinResponse(ra.token)!.members.map((m) => m.memberId),
      [a],
    )
  })
})

describe('ClassicGroupManager static membership', () => {
  function stableStatic(h: Harness): string {
    const j = h.join({ groupInstanceId: 'i1' }, { clientId: 'c' })
    assert.deepEqual(h.completions.get(j.token), undefined, 'static members get no MEMBER_ID_REQUIRED')
    h.advance(3000)
    const id = h.joinResponse(j.token)!.memberId
    assert.equal(id, 'i1-uuid1')
    h.sync({
      memberId: id,
      groupInstanceId: 'i1',
      generationId: 1,
      assignments: [{ memberId: id, assignment: enc('S1') }],
    })
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.STABLE)
    return id
  }

  it('a static member rejoining with a new member id replaces the old one without a rebalance', () => {
    const h = new Harness()
    const old = stableStatic(h)
    const before = h.log.length
    const r = h.join({ groupInstanceId: 'i1' }, { clientId: 'c' })
    const response = h.joinResponse(r.token)!
    assert.deepEqual(
      response,
      createJoinGroupResponse({
        memberId: 'i1-uuid2',
        generationId: 1,
        protocolName: 'range',
        protocolType: 'consumer',
        leader: 'i1-uuid2',
        skipAssignment: true,
        members: [{ memberId: 'i1-uuid2', groupInstanceId: 'i1', metadata: enc('meta') }],
      }),
    )
    const written = h.log.slice(before)
    assert.equal(written.length, 1)
    const v = written[0]!.type === 'GroupMetadata' ? written[0]!.value : null
    assert.equal(v?.generation, 1)
    assert.deepEqual(
      v?.members.map((m) => [m.memberId, m.groupInstanceId, [...m.assignment]]),
      [['i1-uuid2', 'i1', [...enc('S1')]]],
    )
    const g = h.manager.group('g')!
    assert.equal(g.state, ClassicGroupState.STABLE)
    assert.equal(g.staticMemberId('i1'), 'i1-uuid2')
    // The old instance is fenced.
    assert.equal(heartbeat(h, old, 1, 'i1'), ErrorCode.FENCED_INSTANCE_ID)
    assert.equal(heartbeat(h, old, 1), ErrorCode.UNKNOWN_MEMBER_ID)
    assert.equal(heartbeat(h, 'i1-uuid2', 1, 'i1'), ErrorCode.NONE)
    const s = h.sync({ memberId: 'i1-uuid2', groupInstanceId: 'i1', generationId: 1 })
    assert.deepEqual([...h.syncResponse(s.token)!.assignment], [...enc('S1')])
  })

  it('before v9 the replacement answer carries no member list and no skipAssignment', () => {
    const h = new Harness()
    stableStatic(h)
    const r = h.join({ groupInstanceId: 'i1' }, { clientId: 'c', apiVersion: 8 })
    assert.deepEqual(
      h.joinResponse(r.token),
      createJoinGroupResponse({
        memberId: 'i1-uuid2',
        generationId: 1,
        protocolName: 'range',
        protocolType: 'consumer',
        leader: 'i1-uuid1',
      }),
    )
  })

  it('fences the old member id’s parked SyncGroup when the instance rejoins during CompletingRebalance', () => {
    const h = new Harness()
    const b = joinDynamic(h, 'b') // b leads
    const s = h.join({ groupInstanceId: 'i1' }, { clientId: 'c' })
    h.advance(6000) // i1 arrived during the initial delay, which is extended once
    const old = h.joinResponse(s.token)!.memberId
    assert.equal(h.joinResponse(b.token)!.leader, b.memberId)
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.COMPLETING_REBALANCE)
    const parked = h.sync({ memberId: old, groupInstanceId: 'i1', generationId: 1 })
    assert.equal(h.syncResponse(parked.token), undefined)

    const replaced = h.join({ groupInstanceId: 'i1' }, { clientId: 'c' })
    assert.deepEqual(
      h.syncResponse(parked.token),
      createSyncGroupResponse({ errorCode: ErrorCode.FENCED_INSTANCE_ID }),
    )
    // The leader may be assigning to the old id: the replacement rebalances.
    assert.equal(h.manager.group('g')!.state, ClassicGroupState.PREPARING_REBALANCE)
    assert.equal(h.joinResponse(replaced.token), undefined)
    assert.equal(heartbeat(h, old, 1, 'i1'), ErrorCode.FENCED_INSTANCE_ID)
    const rb = h.join({ memberId: b.memberId }, { clientId: 'b' })
    assert.equal(h.joinResponse(rb.token)!.generationId, 2)
    assert.equal(h.joinResponse(replaced.token)!.memberId, 'i1-uuid4')
  })
})

describe('ClassicGroupManager replay', () => {
  it('replaying the written records into a fresh manager reproduces the Stable group', () => {
    const h = new Harness()
    stableGroupOfTwo(h)
    const fresh = new ClassicGroupManager()
    for (const r of h.log) fresh.replay(r)
    assert.deepEqual(persistedView(fresh, 'g'), persistedView(h.manager, 'g'))
    assert.equal(fresh.group('g')!.state, ClassicGroupState.STABLE)
  })

  it('reproduces a static replacement and an emptied group, and a tombstone removes the group', () => {
    const h = new Harness()
    h.join({ groupInstanceId: 'i1' }, { clientId: 'c' })
    h.advance(3000)
    h.sync({ memberId: 'i1-uuid1', groupInstanceId: 'i1', generationId: 1, assignments: [] })
    h.join({ groupInstanceId: 'i1' }, { clientId: 'c' })
    let fresh = new ClassicGroupManager()
    for (const r of h.log) fresh.replay(r)
    assert.deepEqual(persistedView(fresh, 'g'), persistedView(h.manager, 'g'))
    assert.equal(fresh.group('g')!.staticMemberId('i1'), 'i1-uuid2')

    h.apply(
      h.manager.classicGroupLeave(
        { nowMs: h.nowMs, apiVersion: 5 },
        createLeaveGroupRequest({
          groupId: 'g',
          members: [{ memberId: '', groupInstanceId: 'i1', reason: null }],
        }),
      ),
    )
    fresh = new ClassicGroupManager()
    for (const r of h.log) fresh.replay(r)
    assert.deepEqual(persistedView(fresh, 'g'), persistedView(h.manager, 'g'))
    assert.equal(fresh.group('g')!.state, ClassicGroupState.EMPTY)

    const del = h.manager.deleteGroupRecords('g')
    assert.deepEqual(del.records, [{ type: 'GroupMetadata', key: { group: 'g' }, value: null }])
    h.apply({ records: del.records, response: undefined, completions: [], timers: del.timers })
    assert.equal(h.manager.hasGroup('g'), false)
  })

  it('a loaded group serves its members: onLoaded arms their sessions, heartbeats and syncs work', () => {
    const h = new Harness()
    const { a, b } = stableGroupOfTwo(h)
    const loaded = new Harness()
    for (const r of h.log) loaded.manager.replay(r)
    loaded.nowMs = h.nowMs
    loaded.apply(loaded.manager.onLoaded(loaded.nowMs))
    assert.equal(loaded.delayOf(`heartbeat-g-${a}`), 10000)
    assert.equal(loaded.delayOf(`heartbeat-g-${b}`), 10000)
    assert.equal(heartbeat(loaded, b, 2), ErrorCode.NONE)
    const s = loaded.sync({ memberId: b, generationId: 2 })
    assert.deepEqual([...loaded.syncResponse(s.token)!.assignment], [...enc('B2')])
  })

  it('refuses to delete a group with members', () => {
    const h = new Harness()
    stableGroupOfOne(h)
    assert.throws(
      () => h.manager.deleteGroupRecords('g'),
      (e) => e instanceof ApiError && e.errorCode === ErrorCode.NON_EMPTY_GROUP,
    )
    assert.throws(
      () => h.manager.deleteGroupRecords('nope'),
      (e) => e instanceof ApiError && e.errorCode === ErrorCode.GROUP_ID_NOT_FOUND,
    )
  })
})

describe('ClassicGroupManager describe and list', () => {
  it('describes a Stable group with metadata and assignments, others without metadata', () => {
    const h = new Harness()
    const { a, b } = stableGroupOfTwo(h)
    const row = h.manager.describeGroup('g')!
    assert.equal(row.groupState, 'Stable')
    assert.equal(row.protocolType, 'consumer')
    assert.equal(row.protocolData, 'range')
    assert.deepEqual(
      row.members.map((m) => [
        m.memberId,
        m.clientId,
        m.clientHost,
        [...m.memberMetadata],
        [...m.memberAssignment],
      ]),
      [
        [a, 'a', '/127.0.0.1', [...enc('meta')], [...enc('A2')]],
        [b, 'b', '/127.0.0.1', [...enc('metaB')], [...enc('B2')]],
      ],
    )
    h.join({ memberId: a }, { clientId: 'a' })
    const preparing = h.manager.describeGroup('g')!
    assert.equal(preparing.groupState, 'PreparingRebalance')
    assert.equal(preparing.protocolData, '')
    assert.deepEqual([...preparing.members[0]!.memberMetadata], [])
    assert.deepEqual(ClassicGroupManager.describeMissing('x', 5).errorCode, 0)
    assert.deepEqual(ClassicGroupManager.describeMissing('x', 6), {
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      errorMessage: 'Group x not found.',
      groupId: 'x',
      groupState: 'Dead',
      protocolType: '',
      protocolData: '',
      members: [],
      authorizedOperations: -2147483648,
    })
  })

  it('lists groups with state and type filters', () => {
    const h = new Harness()
    stableGroupOfOne(h)
    assert.deepEqual(h.manager.listGroups(), [
      { groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' },
    ])
    assert.deepEqual(h.manager.listGroups(['stable']).length, 1)
    assert.deepEqual(h.manager.listGroups(['Empty']), [])
    assert.deepEqual(h.manager.listGroups([], ['streams']), [])
    assert.deepEqual(h.manager.listGroups([], ['Classic']).length, 1)
  })
})
