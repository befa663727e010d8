// Online migration between classic and consumer groups (KIP-848, Kafka's GroupMetadataManager):
// a consumer join upgrades a non-empty classic group, its classic members keep working through
// JoinGroup / SyncGroup / Heartbeat / LeaveGroup answered by the consumer group, and the group goes
// back to classic when its last consumer-protocol member leaves. Every step is checked against a
// shard reloaded from the records (replay equivalence).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ConsumerGroupConfig } from '../../../../src/coordinator/shard/consumer/config.js'
import {
  decodeAssignment,
  encodeAssignment,
  encodeSubscription,
} from '../../../../src/protocol/consumer-protocol.js'
import type { GroupCoordinatorShard } from '../../../../src/coordinator/shard/index.js'
import type { GroupCoordinatorResult } from '../../../../src/coordinator/shard/result.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import type { JoinGroupRequest } from '../../../../src/protocol/generated/messages/JoinGroupRequest.js'
import type { JoinGroupResponse } from '../../../../src/protocol/generated/messages/JoinGroupResponse.js'
import type { SyncGroupResponse } from '../../../../src/protocol/generated/messages/SyncGroupResponse.js'
import { beat, CONFIG, Harness, join, offsetCommit } from './harness.js'

const SESSION_MS = 10000

function subscription(owned: { topic: string; partitions: number[] }[] = [], topics = ['foo']): Uint8Array {
  return encodeSubscription(
    { topics, userData: null, ownedPartitions: owned, generationId: -1, rackId: null },
    3,
  )
}

function classicJoinRequest(
  memberId: string,
  metadata: Uint8Array,
  p: Partial<JoinGroupRequest> = {},
): JoinGroupRequest {
  return {
    groupId: 'g',
    sessionTimeoutMs: SESSION_MS,
    rebalanceTimeoutMs: 3000,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata }],
    reason: null,
    ...p,
  }
}

/** Drives the classic APIs through the shard, the way the service does (one token per request). */
class Classic {
  #token = 1
  constructor(readonly h: Harness) {}

  join(nowMs: number, req: JoinGroupRequest, uuid = 'u', apiVersion = 9) {
    const token = this.#token++
    const r = this.h.shard.classicGroupJoin(
      { nowMs, apiVersion, clientId: 'classic', clientHost: '/127.0.0.1', token, newMemberUuid: uuid },
      req,
    )
    this.h.apply(r)
    return { result: r, token, answer: answerOf<JoinGroupResponse>(r, token) }
  }

  sync(
    nowMs: number,
    memberId: string,
    generationId: number,
    assignments: { memberId: string; assignment: Uint8Array }[] = [],
  ) {
    const token = this.#token++
    const r = this.h.shard.classicGroupSync(
      { nowMs, apiVersion: 5, token },
      {
        groupId: 'g',
        generationId,
        memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments,
      },
    )
    this.h.apply(r)
    return { result: r, token, answer: answerOf<SyncGroupResponse>(r, token) }
  }

  heartbeat(nowMs: number, memberId: string, generationId: number) {
    const r = this.h.shard.classicGroupHeartbeat(
      { nowMs, apiVersion: 4 },
      { groupId: 'g', memberId, generationId, groupInstanceId: null },
    )
    return { result: r, response: this.h.apply(r) }
  }

  leave(nowMs: number, memberId: string) {
    const r = this.h.shard.classicGroupLeave(
      { nowMs, apiVersion: 5 },
      { groupId: 'g', memberId: '', members: [{ memberId, groupInstanceId: null, reason: null }] },
    )
    return { result: r, response: this.h.apply(r) }
  }
}

function answerOf<T>(r: GroupCoordinatorResult<unknown>, token: number): T | undefined {
  return r.completions?.find((c) => c.token === token)?.response as T | undefined
}

/** A classic group of two consumers: a owns foo-0 and foo-1, b owns foo-2 and foo-3 (generation 1). */
function stableClassicGroup(h: Harness): { c: Classic; a: string; b: string } {
  const c = new Classic(h)
  const ja = c.join(0, classicJoinRequest('', subscription()), 'a', 3)
  c.join(0, classicJoinRequest('', subscription()), 'b', 3)
  const timer = ja.result.timers?.schedule?.find((t) => t.key === 'join-g')
  assert.ok(timer)
  const done = timer.op(3000)
  h.apply(done)
  const answers = (done.completions ?? []).map((x) => x.response as JoinGroupResponse)
  const a = answers.find((x) => x.leader === x.memberId)!.memberId
  const b = answers.find((x) => x.leader !== x.memberId)!.memberId
  const assignment = (ps: number[]) =>
    encodeAssignment({ assignedPartitions: [{ topic: 'foo', partitions: ps }], userData: null }, 3)
  c.sync(3001, b, 1)
  const leader = c.sync(3001, a, 1, [
    { memberId: a, assignment: assignment([0, 1]) },
    { memberId: b, assignment: assignment([2, 3]) },
  ])
  assert.equal(leader.answer?.errorCode, 0)
  assert.equal(h.shard.classic.group('g')?.state, 'Stable')
  return { c, a, b }
}

/** Everything the shard shows of group g, consumer and classic, for replay equivalence. */
function snapshot(h: Harness, shard: GroupCoordinatorShard = h.shard) {
  return { ...h.snapshot(shard), classic: shard.describeGroups(['g'], 5) }
}

function assertReplayEquivalent(h: Harness): void {
  assert.deepEqual(snapshot(h, h.reloaded()), snapshot(h))
}

/** No partition owned by two members of the consumer group. */
function assertNoDoubleOwnership(h: Harness): void {
  const seen = new Set<string>()
  for (const m of h.shard.consumer.group('g')!.members.values()) {
    for (const map of [m.assignedPartitions, m.partitionsPendingRevocation]) {
      for (const [t, ps] of map) {
        for (const p of ps.keys()) {
          const key = `${t}-${p}`
          assert.ok(!seen.has(key), `${key} owned twice`)
          seen.add(key)
        }
      }
    }
  }
}

function upgraded(h: Harness) {
  const { c, a, b } = stableClassicGroup(h)
  const up = h.heartbeat(join('n'), 10)
  return { c, a, b, up }
}

describe('online upgrade: a consumer join converts a non-empty classic group', () => {
  it('keeps the classic members with their metadata and assignments', () => {
    const h = new Harness({ foo: 4 })
    const { a, b, up } = upgraded(h)
    assert.equal(up.response.errorCode, 0)
    const types = up.result.records.map((r) => r.type)
    assert.deepEqual(up.result.records[0], { type: 'GroupMetadata', key: { group: 'g' }, value: null })
    // Kafka's createConsumerGroupRecords: subscriptions, epoch, targets, target epoch, current assignments.
    assert.deepEqual(types.slice(1, 9), [
      'ConsumerGroupMemberMetadata',
      'ConsumerGroupMemberMetadata',
      'ConsumerGroupMetadata',
      'ConsumerGroupTargetAssignmentMember',
      'ConsumerGroupTargetAssignmentMember',
      'ConsumerGroupTargetAssignmentMetadata',
      'ConsumerGroupCurrentMemberAssignment',
      'ConsumerGroupCurrentMemberAssignment',
    ])
    const converted = up.result.records[1]!
    assert.equal(converted.type, 'ConsumerGroupMemberMetadata')
    if (converted.type === 'ConsumerGroupMemberMetadata') {
      assert.equal(converted.value?.classicMemberMetadata?.sessionTimeoutMs, SESSION_MS)
      assert.deepEqual(
        converted.value?.classicMemberMetadata?.supportedProtocols.map((p) => p.name),
        ['range'],
      )
    }
    assert.equal(h.shard.classic.hasGroup('g'), false)
    const g = h.shard.consumer.group('g')!
    assert.equal(g.size, 3)
    assert.equal(g.groupEpoch, 2)
    assert.equal(g.member(a)!.memberEpoch, 1)
    assert.deepEqual(
      [...g.member(a)!.assignedPartitions.values()].map((m) => [...m.keys()]),
      [[0, 1]],
    )
    assert.deepEqual(
      [...g.member(b)!.assignedPartitions.values()].map((m) => [...m.keys()]),
      [[2, 3]],
    )
    const [described] = h.shard.consumerGroupDescribe(['g'])
    assert.deepEqual(
      described!.members.map((m) => [m.memberId, m.memberType]).sort(),
      [
        [a, 0],
        [b, 0],
        ['n', 1],
      ].sort(),
    )
    // The classic members' sessions go on with their classic session timeouts.
    const session = up.result.timers?.schedule?.find((t) => t.key === `session-timeout-g-${a}`)
    assert.equal(session?.delayMs, SESSION_MS)
    assert.ok(up.result.timers?.cancel?.includes(`heartbeat-g-${a}`))
    assertNoDoubleOwnership(h)
    assertReplayEquivalent(h)
  })

  it('answers requests parked in the classic rebalance with REBALANCE_IN_PROGRESS', () => {
    const h = new Harness({ foo: 4 })
    const { c, a } = stableClassicGroup(h)
    // A leader's JoinGroup starts a rebalance; its answer waits for the other member.
    const parked = c.join(5, classicJoinRequest(a, subscription([{ topic: 'foo', partitions: [0, 1] }])))
    assert.equal(parked.answer, undefined)
    const up = h.heartbeat(join('n'), 10)
    assert.equal(up.response.errorCode, 0)
    assert.equal(
      answerOf<JoinGroupResponse>(up.result, parked.token)?.errorCode,
      ErrorCode.REBALANCE_IN_PROGRESS,
    )
    assertReplayEquivalent(h)
  })

  for (const [policy, allowed] of [
    ['bidirectional', true],
    ['upgrade', true],
    ['downgrade', false],
    ['disabled', false],
  ] as const) {
    it(`group.consumer.migration.policy=${policy} ${allowed ? 'allows' : 'refuses'} the upgrade`, () => {
      const h = new Harness({ foo: 4 })
      stableClassicGroup(h)
      h.config = { ...CONFIG, migrationPolicy: policy }
      const { result, response } = h.heartbeat(join('n'), 10)
      if (allowed) {
        assert.equal(response.errorCode, 0)
        assert.ok(h.shard.consumer.group('g'))
      } else {
        assert.equal(response.errorCode, ErrorCode.GROUP_ID_NOT_FOUND)
        assert.equal(
          response.errorMessage,
          'Cannot upgrade classic group g to consumer group because online upgrade is disabled.',
        )
        assert.equal(result.records.length, 0)
        assert.equal(h.shard.classic.group('g')?.members.size, 2)
      }
    })
  }

  it('refuses a group above group.consumer.max.size and a group of another protocol type', () => {
    const h = new Harness({ foo: 4 })
    stableClassicGroup(h)
    h.config = { ...CONFIG, maxSize: 1 }
    assert.equal(
      h.heartbeat(join('n'), 10).response.errorMessage,
      'Cannot upgrade classic group g to consumer group because the group size exceeds the consumer group maximum size.',
    )
    const other = new Harness({ foo: 4 })
    const c = new Classic(other)
    c.join(0, classicJoinRequest('', new Uint8Array([1]), { protocolType: 'connect' }), 'x', 3)
    assert.equal(
      other.heartbeat(join('n'), 10).response.errorMessage,
      'Cannot upgrade classic group g to consumer group because the group does not use the consumer embedded protocol.',
    )
  })

  it('refuses an assignment carrying user data (a custom assignor), as Kafka does', () => {
    const h = new Harness({ foo: 4 })
    const c = new Classic(h)
    const ja = c.join(0, classicJoinRequest('', subscription()), 'a', 3)
    h.apply(ja.result.timers!.schedule!.find((t) => t.key === 'join-g')!.op(3000))
    const a = h.shard.classic.group('g')!.leaderId!
    c.sync(3001, a, 1, [
      {
        memberId: a,
        assignment: encodeAssignment({ assignedPartitions: [], userData: new Uint8Array([7]) }, 3),
      },
    ])
    const { response } = h.heartbeat(join('n'), 10)
    assert.equal(response.errorCode, ErrorCode.GROUP_ID_NOT_FOUND)
    assert.match(response.errorMessage ?? '', /unsupported custom assignor/)
  })
})

describe('classic members inside a consumer group', () => {
  it('rejoin on REBALANCE_IN_PROGRESS, revoke before the new partitions, sync their assignment', () => {
    const h = new Harness({ foo: 4 })
    const { c, a, b } = upgraded(h)
    // The target moved on (epoch 2): the classic members hear it from their heartbeat.
    assert.equal(c.heartbeat(11, a, 1).response.errorCode, ErrorCode.REBALANCE_IN_PROGRESS)
    assert.equal(c.heartbeat(11, b, 1).response.errorCode, ErrorCode.REBALANCE_IN_PROGRESS)
    // A stale SyncGroup is told to rejoin as well.
    assert.equal(c.sync(11, a, 1).answer?.errorCode, ErrorCode.REBALANCE_IN_PROGRESS)
    // An eager client revoked everything before rejoining: it reaches the new epoch at once.
    for (const id of [a, b]) {
      const j = c.join(12, classicJoinRequest(id, subscription()))
      assert.equal(j.answer?.errorCode, 0)
      assert.equal(j.answer?.generationId, 2)
      assert.equal(j.answer?.protocolName, 'range')
      assert.equal(j.answer?.leader, '')
      assert.deepEqual(j.answer?.members, [])
      const s = c.sync(13, id, 2)
      assert.equal(s.answer?.errorCode, 0)
      const got = decodeAssignment(s.answer!.assignment)
      const member = h.shard.consumer.group('g')!.member(id)!
      assert.deepEqual(
        got.assignedPartitions.flatMap((t) => t.partitions),
        [...member.assignedPartitions.values()].flatMap((m) => [...m.keys()]),
      )
      assert.equal(c.heartbeat(14, id, 2).response.errorCode, 0)
      assertNoDoubleOwnership(h)
    }
    // The consumer member gets the partitions the classic members released.
    const n = h.heartbeat(beat('n', 2, []), 15).response
    assert.equal(n.errorCode, 0)
    assert.equal(h.shard.consumer.group('g')!.state(), 'Stable')
    const owned = [...h.shard.consumer.group('g')!.members.values()].flatMap((m) =>
      [...m.assignedPartitions.values()].flatMap((x) => [...x.keys()]),
    )
    assert.deepEqual(owned.sort(), [0, 1, 2, 3])
    assertReplayEquivalent(h)
  })

  it('a cooperative client keeps its partitions until it reports them revoked', () => {
    const h = new Harness({ foo: 4 })
    const { c, a } = upgraded(h)
    const target = h.shard.consumer.group('g')!.targetAssignment(a)
    const kept = [...target.values()].flatMap((s) => [...s])
    // Rejoining with everything it owns: it must revoke first, at its old epoch.
    const j = c.join(12, classicJoinRequest(a, subscription([{ topic: 'foo', partitions: [0, 1] }])))
    const member = h.shard.consumer.group('g')!.member(a)!
    if (kept.length < 2) {
      assert.equal(member.state, 2 /* UNREVOKED_PARTITIONS */)
      assert.equal(j.answer?.generationId, 1)
      // Its heartbeat tells it to rejoin once more after revoking.
      assert.equal(c.heartbeat(13, a, 1).response.errorCode, ErrorCode.REBALANCE_IN_PROGRESS)
      const again = c.join(14, classicJoinRequest(a, subscription([{ topic: 'foo', partitions: kept }])))
      assert.equal(again.answer?.generationId, 2)
    } else {
      assert.equal(j.answer?.generationId, 2)
    }
    assertNoDoubleOwnership(h)
    assertReplayEquivalent(h)
  })

  it('a JoinGroup with policy disabled gets INCONSISTENT_GROUP_PROTOCOL', () => {
    const h = new Harness({ foo: 4 })
    const { c, a } = upgraded(h)
    h.config = { ...CONFIG, migrationPolicy: 'disabled' }
    assert.equal(
      c.join(12, classicJoinRequest(a, subscription())).answer?.errorCode,
      ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    )
  })

  it('a new classic member joins a consumer group (MEMBER_ID_REQUIRED first)', () => {
    const h = new Harness({ foo: 4 })
    const n = h.heartbeat(join('n'), 0).response
    assert.equal(n.errorCode, 0)
    const c = new Classic(h)
    const first = c.join(1, classicJoinRequest('', subscription()), 'fresh')
    assert.equal(first.answer?.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
    assert.equal(first.answer?.memberId, 'fresh')
    assert.equal(first.result.records.length, 0)
    const second = c.join(2, classicJoinRequest('fresh', subscription()))
    assert.equal(second.answer?.errorCode, 0)
    assert.equal(
      h.shard.consumer.group('g')!.member('fresh')?.classicMemberMetadata?.sessionTimeoutMs,
      SESSION_MS,
    )
    // Another protocol name than the classic members offer is refused.
    const other = c.join(
      3,
      classicJoinRequest('', subscription(), { protocols: [{ name: 'sticky', metadata: subscription() }] }),
      'x',
    )
    assert.equal(other.answer?.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    assertReplayEquivalent(h)
  })

  it('a JoinGroup whose session timeout is out of bounds gets INVALID_SESSION_TIMEOUT, not a member', () => {
    // Kafka's service checks the session timeout before it routes the join to any group; a
    // consumer group must not arm a session timer from it (a negative delay failed the operation).
    const h = new Harness({ foo: 4 })
    assert.equal(h.heartbeat(join('n'), 0).response.errorCode, 0)
    const c = new Classic(h)
    const first = c.join(1, classicJoinRequest('', subscription()), 'fresh')
    assert.equal(first.answer?.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
    for (const sessionTimeoutMs of [-1, 0, 2_147_483_647]) {
      const r = c.join(2, classicJoinRequest('fresh', subscription(), { sessionTimeoutMs }))
      assert.equal(r.answer?.errorCode, ErrorCode.INVALID_SESSION_TIMEOUT, String(sessionTimeoutMs))
      assert.equal(r.answer?.memberId, 'fresh')
      assert.equal(r.result.records.length, 0)
    }
    assert.equal(h.shard.consumer.group('g')!.member('fresh'), undefined)
    assert.equal(c.join(3, classicJoinRequest('fresh', subscription())).answer?.errorCode, 0)
    assertReplayEquivalent(h)
  })

  it('a new classic member is refused past group.consumer.max.size; a known one rejoins', () => {
    const h = new Harness({ foo: 4 })
    h.config = { ...CONFIG, maxSize: 2 }
    h.heartbeat(join('n'), 0)
    const c = new Classic(h)
    assert.equal(c.join(1, classicJoinRequest('k', subscription())).answer?.errorCode, 0)
    // (JoinGroup answers carry no error message.)
    const full = c.join(2, classicJoinRequest('', subscription()), 'fresh')
    assert.equal(full.answer?.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED)
    assert.deepEqual(full.result.records, [])
    assert.equal(c.join(3, classicJoinRequest('k', subscription())).answer?.errorCode, 0)
    assertReplayEquivalent(h)
  })

  it('a classic member whose session ends is fenced; its heartbeats then fail', () => {
    const h = new Harness({ foo: 4 })
    h.config = { ...CONFIG, migrationPolicy: 'upgrade' }
    const { c, a, up } = upgraded(h)
    h.fire(up.result.timers, `session-timeout-g-${a}`, 10 + SESSION_MS)
    assert.equal(h.shard.consumer.group('g')!.member(a), undefined)
    assert.equal(c.heartbeat(20000, a, 1).response.errorCode, ErrorCode.UNKNOWN_MEMBER_ID)
    assertReplayEquivalent(h)
  })

  it('a classic member told to rejoin that does not is fenced at its rebalance timeout', () => {
    const h = new Harness({ foo: 4 })
    h.config = { ...CONFIG, migrationPolicy: 'upgrade' }
    const { c, a } = upgraded(h)
    const hb = c.heartbeat(11, a, 1)
    assert.equal(hb.response.errorCode, ErrorCode.REBALANCE_IN_PROGRESS)
    const timer = hb.result.timers?.schedule?.find((t) => t.key === `join-g-${a}`)
    assert.equal(timer?.delayMs, 3000)
    h.fire(hb.result.timers, `join-g-${a}`, 3011)
    assert.equal(h.shard.consumer.group('g')!.member(a), undefined)
    assertReplayEquivalent(h)
  })

  it('a classic member that joined but never syncs is fenced at its sync deadline', () => {
    const h = new Harness({ foo: 4 })
    h.config = { ...CONFIG, migrationPolicy: 'upgrade' }
    const { c, b } = upgraded(h)
    const j = c.join(12, classicJoinRequest(b, subscription()))
    assert.equal(j.answer?.errorCode, 0)
    h.fire(j.result.timers, `sync-g-${b}`, 3012)
    assert.equal(h.shard.consumer.group('g')!.member(b), undefined)
  })

  it('OffsetCommit from a classic member: its generation is its member epoch', () => {
    const h = new Harness({ foo: 4 })
    const { a } = upgraded(h)
    const topicId = h.topics.id('foo')
    const commit = (generation: number) => {
      const r = h.shard.commitOffsets(
        { apiVersion: 8, nowMs: 12, maxMetadataSize: 4096 },
        offsetCommit(topicId, generation, a, 5n),
      )
      h.apply(r)
      return r.response[0]!.partitions[0]!.errorCode
    }
    // a owns foo-0 at epoch 1 (its epoch); a newer generation is refused.
    assert.equal(commit(1), 0)
    assert.equal(commit(2), ErrorCode.ILLEGAL_GENERATION)
    assert.equal(h.shard.offsets.offset('g', 'foo', 0)?.offset, 5n)
  })

  it('LeaveGroup removes a classic member (and an unknown one gets UNKNOWN_MEMBER_ID)', () => {
    const h = new Harness({ foo: 4 })
    const { c, a } = upgraded(h)
    const left = c.leave(12, a)
    assert.deepEqual(
      left.response.members.map((m) => m.errorCode),
      [0],
    )
    assert.equal(h.shard.consumer.group('g')!.member(a), undefined)
    assert.equal(c.leave(13, 'nobody').response.members[0]!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID)
    assertReplayEquivalent(h)
  })
})

describe('online downgrade: the last consumer-protocol member leaves', () => {
  function downgradeWith(config: Partial<ConsumerGroupConfig>) {
    const h = new Harness({ foo: 4 })
    const { c, a, b } = upgraded(h)
    h.config = { ...CONFIG, ...config }
    const left = h.heartbeat(beat('n', 2, null, { memberEpoch: -1 }), 20)
    return { h, c, a, b, left }
  }

  it('converts the group back to a classic group whose members rejoin', () => {
    const { h, c, a, b, left } = downgradeWith({})
    const types = left.result.records.map((r) => r.type)
    assert.equal(types[types.length - 1], 'GroupMetadata')
    assert.ok(types.includes('ConsumerGroupMetadata'))
    assert.equal(h.shard.consumer.group('g'), undefined)
    const g = h.shard.classic.group('g')!
    assert.equal(g.state, 'Stable')
    assert.equal(g.generationId, 2)
    assert.deepEqual([...g.members.keys()].sort(), [a, b].sort())
    assert.equal(g.protocolName, 'range')
    // Each member's assignment is its target in the consumer group.
    for (const id of [a, b]) {
      const got = decodeAssignment(g.member(id)!.assignment).assignedPartitions.flatMap((t) => t.partitions)
      assert.ok(got.length >= 1)
    }
    // Restart here gives the same group.
    assertReplayEquivalent(h)
    // The classic group rebalances at once: members learn it from their heartbeat, then rejoin.
    const rebalance = left.result.timers?.schedule?.find((t) => t.key === 'join-g')
    assert.equal(rebalance?.delayMs, 0)
    h.fire(left.result.timers, 'join-g', 21)
    assert.equal(h.shard.classic.group('g')!.state, 'PreparingRebalance')
    assert.equal(c.heartbeat(22, a, 2).response.errorCode, ErrorCode.REBALANCE_IN_PROGRESS)
    assert.ok(left.result.timers?.schedule?.some((t) => t.key === `heartbeat-g-${b}`))
    const ja = c.join(23, classicJoinRequest(a, subscription()))
    const jb = c.join(23, classicJoinRequest(b, subscription()))
    const answers = [...(ja.result.completions ?? []), ...(jb.result.completions ?? [])]
    assert.deepEqual(
      answers.map((x) => (x.response as JoinGroupResponse).generationId),
      [3, 3],
    )
  })

  it('a classic static member replacing the last consumer member downgrades the group', () => {
    const h = new Harness({ foo: 4 })
    const { c, a, b } = stableClassicGroup(h)
    assert.equal(h.heartbeat(join('n', { instanceId: 'i1' }), 10).response.errorCode, 0)
    const target = h.shard.consumer.group('g')!.targetAssignment('n')
    // The same instance comes back speaking the classic protocol.
    const j = c.join(20, classicJoinRequest('', subscription(), { groupInstanceId: 'i1' }), 'back')
    assert.equal(j.answer?.errorCode, 0)
    assert.equal(j.answer?.memberId, 'back')
    assert.equal(h.shard.consumer.group('g'), undefined)
    const g = h.shard.classic.group('g')!
    assert.deepEqual([...g.members.keys()].sort(), [a, b, 'back'].sort())
    assert.equal(g.member('back')!.groupInstanceId, 'i1')
    const given = decodeAssignment(g.member('back')!.assignment).assignedPartitions.flatMap(
      (t) => t.partitions,
    )
    assert.deepEqual(given, [...target.values()].flatMap((p) => [...p]).sort())
    // The tombstones name the joining member in place of the one it replaced.
    const tombstoned = j.result.records
      .filter((r) => r.type === 'ConsumerGroupMemberMetadata' && r.value === null)
      .map((r) => (r.key as { memberId: string }).memberId)
    assert.ok(tombstoned.includes('back'))
    assertReplayEquivalent(h)
  })

  for (const policy of ['upgrade', 'disabled'] as const) {
    it(`policy ${policy}: the group stays a consumer group of classic members`, () => {
      const { h, left } = downgradeWith({ migrationPolicy: policy })
      assert.ok(!left.result.records.some((r) => r.type === 'GroupMetadata'))
      assert.equal(h.shard.consumer.group('g')?.size, 2)
      assert.equal(h.shard.classic.hasGroup('g'), false)
      assertReplayEquivalent(h)
    })
  }

  it('a group above group.max.size stays a consumer group', () => {
    const h = new Harness({ foo: 4 }, 2)
    const { c } = upgraded(h)
    // A third classic member joins the consumer group: three classic members, two allowed.
    c.join(11, classicJoinRequest('', subscription()), 'third', 3)
    assert.equal(h.shard.consumer.group('g')?.size, 4)
    const left = h.heartbeat(beat('n', 2, null, { memberEpoch: -1 }), 20)
    assert.ok(!left.result.records.some((r) => r.type === 'GroupMetadata'))
    assert.equal(h.shard.consumer.group('g')?.size, 3)
    assertReplayEquivalent(h)
  })

  it('a consumer member whose session ends downgrades the group too', () => {
    const h = new Harness({ foo: 4 })
    const { up } = upgraded(h)
    const r = h.fire(up.result.timers, 'session-timeout-g-n', 10 + CONFIG.sessionTimeoutMs)
    void r
    assert.equal(h.shard.consumer.group('g'), undefined)
    assert.equal(h.shard.classic.group('g')?.members.size, 2)
    assertReplayEquivalent(h)
  })

  it('the last classic member leaving an all-classic consumer group empties it (nothing to convert)', () => {
    const { h, c, a, b } = downgradeWith({ migrationPolicy: 'upgrade' })
    c.leave(30, a)
    c.leave(31, b)
    assert.equal(h.shard.consumer.group('g')?.state(), 'Empty')
    assert.equal(h.shard.classic.hasGroup('g'), false)
    assertReplayEquivalent(h)
  })
})

describe('consumer and streams groups on one id (no conversion, as in Kafka)', () => {
  it('a streams heartbeat on an empty or non-empty consumer group gets GROUP_ID_NOT_FOUND', () => {
    const h = new Harness({ foo: 4 })
    const n = h.heartbeat(join('n'), 0).response
    const streamsJoin = {
      groupId: 'g',
      memberId: 's',
      memberEpoch: 0,
      endpointInformationEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: 30000,
      topology: { epoch: 0, subtopologies: [] },
      activeTasks: [],
      standbyTasks: [],
      warmupTasks: [],
      processId: 'p',
      userEndpoint: null,
      clientTags: [],
      taskOffsets: [],
      taskEndOffsets: [],
      shutdownApplication: false,
    }
    const streamsCtx = {
      nowMs: 1,
      requestApiVersion: 0,
      clientId: 'c',
      clientHost: '/127.0.0.1',
      config: undefined,
    }
    const call = () =>
      h.shard.streamsGroupHeartbeat(streamsCtx as never, streamsJoin as never).response as {
        errorCode: number
        errorMessage: string | null
      }
    assert.equal(call().errorCode, ErrorCode.GROUP_ID_NOT_FOUND)
    assert.equal(call().errorMessage, 'Group g is not a streams group.')
    h.heartbeat(beat('n', n.memberEpoch, null, { memberEpoch: -1 }), 2)
    assert.equal(h.shard.consumer.group('g')?.state(), 'Empty')
    assert.equal(call().errorMessage, 'Group g is not a streams group.')
  })
})
