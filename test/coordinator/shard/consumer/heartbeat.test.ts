import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import { beat, Harness, join, offsetCommit } from './harness.js'

const types = (records: readonly { type: string; value: unknown }[]) =>
  records.map((r) => `${r.type}${r.value === null ? '-' : ''}`)

describe('ConsumerGroupHeartbeat: join, reconcile, leave', () => {
  it('a first member joins: subscription, epoch, target, current assignment; replay gives the same group', () => {
    const h = new Harness({ foo: 4 })
    // Kafka's answer: the group's interval itself (the spreading's answers are tested below).
    h.config = { ...h.config, heartbeatSpreadEnable: false }
    const { result, response } = h.heartbeat(join('a'))
    assert.deepEqual(types(result.records), [
      'ConsumerGroupMemberMetadata',
      'ConsumerGroupMetadata',
      'ConsumerGroupTargetAssignmentMember',
      'ConsumerGroupTargetAssignmentMetadata',
      'ConsumerGroupCurrentMemberAssignment',
    ])
    assert.equal(response.errorCode, 0)
    assert.equal(response.memberId, 'a')
    assert.equal(response.memberEpoch, 1)
    assert.equal(response.heartbeatIntervalMs, 5000)
    assert.deepEqual(response.assignment?.topicPartitions, [
      { topicId: h.topics.id('foo'), partitions: [0, 1, 2, 3] },
    ])
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
    const [row] = h.shard.consumerGroupDescribe(['g'])
    assert.deepEqual(
      [row!.groupState, row!.groupEpoch, row!.assignmentEpoch, row!.assignorName],
      ['Stable', 1, 1, 'uniform'],
    )
  })

  it('a partition is revoked before it is given to another member (never owned by two)', () => {
    const h = new Harness({ foo: 4 })
    const a = h.heartbeat(join('a')).response
    const b = h.heartbeat(join('b'), 10).response
    // b is at the new epoch but gets nothing while a still owns the partitions.
    assert.equal(b.memberEpoch, 2)
    assert.deepEqual(b.assignment?.topicPartitions, [])
    assert.equal(h.shard.consumerGroupDescribe(['g'])[0]!.groupState, 'Reconciling')
    // a keeps epoch 1 and is told to keep only two.
    const a2 = h.heartbeat(beat('a', 1, h.owned(a)), 20).response
    assert.equal(a2.memberEpoch, 1)
    const kept = a2.assignment!.topicPartitions[0]!.partitions
    assert.equal(kept.length, 2)
    // b still gets nothing: a has not acknowledged the revocation.
    assert.deepEqual(h.heartbeat(beat('b', 2, []), 30).response.assignment, null)
    // a acknowledges: it moves to epoch 2; then b gets the other two.
    const a3 = h.heartbeat(beat('a', 1, h.owned(a2)), 40).response
    assert.equal(a3.memberEpoch, 2)
    const b2 = h.heartbeat(beat('b', 2, []), 50).response
    const got = b2.assignment!.topicPartitions[0]!.partitions
    assert.deepEqual([...kept, ...got].sort(), [0, 1, 2, 3])
    assert.equal(h.shard.consumerGroupDescribe(['g'])[0]!.groupState, 'Stable')
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })

  it('a member that leaves (epoch -1) is removed; the group epoch is bumped and the others take over', () => {
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a')).response
    h.heartbeat(join('b'), 10)
    const a2 = h.heartbeat(beat('a', 1, h.owned(a)), 20).response
    h.heartbeat(beat('a', 1, h.owned(a2)), 30)
    h.heartbeat(beat('b', 2, []), 40)
    const left = h.heartbeat(beat('b', -1, null), 50)
    assert.deepEqual([left.response.memberId, left.response.memberEpoch], ['b', -1])
    assert.deepEqual(types(left.result.records), [
      'ConsumerGroupCurrentMemberAssignment-',
      'ConsumerGroupTargetAssignmentMember-',
      'ConsumerGroupMemberMetadata-',
      'ConsumerGroupMetadata',
    ])
    assert.ok(left.result.timers?.cancel?.includes('session-timeout-g-b'))
    const a3 = h.heartbeat(beat('a', 2, [{ topicId: h.topics.id('foo'), partitions: [0] }]), 60).response
    assert.deepEqual(a3.assignment?.topicPartitions[0]?.partitions, [0, 1])
    // The last member leaving sets the target epoch to the group epoch.
    const last = h.heartbeat(beat('a', a3.memberEpoch, null, { memberEpoch: -1 }), 70)
    assert.ok(types(last.result.records).includes('ConsumerGroupTargetAssignmentMetadata'))
    assert.equal(h.shard.consumerGroupDescribe(['g'])[0]!.groupState, 'Empty')
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })
})

describe('ConsumerGroupHeartbeat: fencing and errors', () => {
  it("answers Kafka's errors with Kafka's messages", () => {
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a')).response
    const err = (req: Parameters<Harness['heartbeat']>[0], apiVersion = 1) => {
      const r = h.shard.consumerGroupHeartbeat(
        {
          nowMs: 5,
          requestApiVersion: apiVersion,
          clientId: 'c',
          clientHost: '/h',
          config: h.config,
          newMemberId: () => 'new',
        },
        req,
      )
      assert.deepEqual(r.records, [])
      return [r.response.errorCode, r.response.errorMessage]
    }
    assert.deepEqual(err(beat('a', 2, [])), [
      ErrorCode.FENCED_MEMBER_EPOCH,
      'The consumer group member has a greater member epoch (2) than the one known by the group coordinator (1). The member must abandon all its partitions and rejoin.',
    ])
    assert.equal(err(beat('zz', 1, []))[0], ErrorCode.UNKNOWN_MEMBER_ID)
    assert.deepEqual(err(beat('zz', 1, [], { groupId: 'other' })), [
      ErrorCode.GROUP_ID_NOT_FOUND,
      'Consumer group other not found.',
    ])
    assert.deepEqual(err(join('')), [ErrorCode.INVALID_REQUEST, "MemberId can't be empty."])
    assert.deepEqual(err(join('x', { rebalanceTimeoutMs: -1 })), [
      ErrorCode.INVALID_REQUEST,
      'RebalanceTimeoutMs must be provided in first request.',
    ])
    assert.deepEqual(err(join('x', { topicPartitions: null })), [
      ErrorCode.INVALID_REQUEST,
      'TopicPartitions must be empty when (re-)joining.',
    ])
    assert.deepEqual(err(join('x', { subscribedTopicNames: null })), [
      ErrorCode.INVALID_REQUEST,
      'Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.',
    ])
    assert.deepEqual(err(beat('a', -2, null)), [ErrorCode.INVALID_REQUEST, "InstanceId can't be null."])
    assert.deepEqual(err(beat('a', -3, null)), [ErrorCode.INVALID_REQUEST, 'MemberEpoch is invalid.'])
    assert.deepEqual(err(join('x', { serverAssignor: 'sticky' })), [
      ErrorCode.UNSUPPORTED_ASSIGNOR,
      'ServerAssignor sticky is not supported. Supported assignors: uniform, range.',
    ])
    assert.equal(
      err(join('x', { subscribedTopicNames: null, subscribedTopicRegex: '(?=x)' }))[0],
      ErrorCode.INVALID_REGULAR_EXPRESSION,
    )
    // The previous epoch with a subset of the partitions is accepted (a lost response).
    h.heartbeat(join('b'), 10)
    const a2 = h.heartbeat(beat('a', 1, h.owned(a)), 20).response
    const a3 = h.heartbeat(beat('a', 1, h.owned(a2)), 30).response
    assert.equal(a3.memberEpoch, 2)
    assert.equal(h.heartbeat(beat('a', 1, h.owned(a2)), 40).response.errorCode, 0)
    assert.equal(err(beat('a', 1, h.owned(a)))[0], ErrorCode.FENCED_MEMBER_EPOCH)
  })

  it('version 0 joins without a member id get one; the group size is bounded', () => {
    const h = new Harness({ foo: 2 })
    h.config = { ...h.config, maxSize: 1 }
    const r = h.heartbeat(join(''), 0, 0).response
    assert.equal(r.memberId, 'generated-member-id')
    const full = h.heartbeat(join('b'), 1).response
    assert.deepEqual(
      [full.errorCode, full.errorMessage],
      [ErrorCode.GROUP_MAX_SIZE_REACHED, 'The consumer group has reached its maximum capacity of 1 members.'],
    )
  })
})

describe('ConsumerGroupHeartbeat: static members', () => {
  it('a static member leaves with -2, keeps its partitions, and a new member id with its instance id takes them over', () => {
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a', { instanceId: 'i1' })).response
    assert.equal(a.memberEpoch, 1)
    // Another member may not take the instance id while it is held.
    const taken = h.heartbeat(join('a2', { instanceId: 'i1' }), 5).response
    assert.equal(taken.errorCode, ErrorCode.UNRELEASED_INSTANCE_ID)
    assert.equal(
      taken.errorMessage,
      'Static member a2 with instance id i1 cannot join the group because the instance id is owned by a member.',
    )
    assert.equal(
      h.heartbeat(beat('x', 1, [], { instanceId: 'i1' }), 6).response.errorCode,
      ErrorCode.FENCED_INSTANCE_ID,
    )
    assert.equal(
      h.heartbeat(beat('x', 1, [], { instanceId: 'i9' }), 6).response.errorCode,
      ErrorCode.UNKNOWN_MEMBER_ID,
    )
    const left = h.heartbeat(beat('a', -2, null, { instanceId: 'i1' }), 10)
    assert.deepEqual(types(left.result.records), ['ConsumerGroupCurrentMemberAssignment'])
    assert.equal(left.response.memberEpoch, -2)
    const back = h.heartbeat(join('a2', { instanceId: 'i1' }), 20)
    assert.deepEqual(types(back.result.records).slice(0, 6), [
      'ConsumerGroupCurrentMemberAssignment-',
      'ConsumerGroupTargetAssignmentMember-',
      'ConsumerGroupMemberMetadata-',
      'ConsumerGroupMemberMetadata',
      'ConsumerGroupTargetAssignmentMember',
      'ConsumerGroupCurrentMemberAssignment',
    ])
    assert.equal(back.response.memberId, 'a2')
    assert.deepEqual(back.response.assignment?.topicPartitions, [
      { topicId: h.topics.id('foo'), partitions: [0, 1] },
    ])
    assert.deepEqual(
      h.shard.consumerGroupDescribe(['g'])[0]!.members.map((m) => [m.memberId, m.instanceId]),
      [['a2', 'i1']],
    )
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })
})

describe('ConsumerGroupHeartbeat: subscription patterns', () => {
  it('the first member of a new group subscribed to nothing yet gets epoch 1, and its next plain heartbeat is answered', () => {
    // A pattern that matches no topic yet (the server's or the client's, which subscribes to no
    // name), or no subscription at all: nothing would bump the new group's epoch, and a member at
    // epoch 0 sends its next heartbeat without the join's fields, which is INVALID_REQUEST.
    const subscriptions = [
      { subscribedTopicNames: [], subscribedTopicRegex: 'late-.*' },
      { subscribedTopicNames: [], subscribedTopicRegex: null },
      { subscribedTopicNames: null, subscribedTopicRegex: '' },
    ]
    for (const subscription of subscriptions) {
      const h = new Harness({ foo: 2 })
      const joined = h.heartbeat(join('a', subscription)).response
      assert.equal(joined.errorCode, 0)
      assert.equal(joined.memberEpoch, 1, JSON.stringify(subscription))
      assert.deepEqual(joined.assignment?.topicPartitions, [])
      const next = h.heartbeat(beat('a', 1, null), 5000).response
      assert.deepEqual([next.errorCode, next.memberEpoch], [0, 1])
      assert.equal(h.shard.consumerGroupDescribe(['g'])[0]!.groupState, 'Stable')
      assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
    }
    // A topic the pattern matches appears: the member is given its partitions.
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a', { subscribedTopicNames: [], subscribedTopicRegex: 'late-.*' })).response
    h.topics.set('late-1', 2)
    h.shard.onNewTopicsImage(h.topics, ['late-1'])
    const later = h.heartbeat(beat('a', a.memberEpoch, []), 11_000).response
    assert.equal(later.memberEpoch, 2)
    assert.deepEqual(later.assignment?.topicPartitions, [
      { topicId: h.topics.id('late-1'), partitions: [0, 1] },
    ])
  })

  it('a pattern is matched against the catalog, and again when a topic appears', () => {
    const h = new Harness({ foo: 2, bar: 1 })
    const a = h.heartbeat(join('a', { subscribedTopicNames: null, subscribedTopicRegex: 'fo.*' }))
    assert.ok(types(a.result.records).includes('ConsumerGroupRegularExpression'))
    assert.deepEqual(a.response.assignment?.topicPartitions, [
      { topicId: h.topics.id('foo'), partitions: [0, 1] },
    ])
    h.topics.set('fox', 1)
    h.shard.onNewTopicsImage(h.topics, ['fox'])
    // Within 10 s of the last match nothing is matched again.
    assert.deepEqual(h.heartbeat(beat('a', 1, h.owned(a.response)), 5000).result.records, [])
    const later = h.heartbeat(beat('a', 1, h.owned(a.response)), 11_000).response
    assert.equal(later.memberEpoch, 2)
    assert.deepEqual(
      later.assignment?.topicPartitions.map((t) => t.topicId).sort(),
      [h.topics.id('foo'), h.topics.id('fox')].sort(),
    )
    const [row] = h.shard.consumerGroupDescribe(['g'])
    assert.equal(row!.members[0]!.subscribedTopicRegex, 'fo.*')
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
    // The last member on a pattern leaving tombstones it.
    const left = h.heartbeat(beat('a', 2, null, { memberEpoch: -1 }), 12_000)
    assert.ok(types(left.result.records).includes('ConsumerGroupRegularExpression-'))
  })
})

describe('ConsumerGroupHeartbeat: timers', () => {
  it('the session timeout removes a silent member; a heartbeat that writes nothing moves the deadline', () => {
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a'))
    const key = 'session-timeout-g-a'
    assert.equal(a.result.timers?.schedule?.find((t) => t.key === key)?.delayMs, 45000)
    // The first heartbeat after the join arms the timer on the stored member's session (the join's
    // timer watched a session object made before the member was stored).
    const first = h.heartbeat(beat('a', 1, h.owned(a.response)), 1_000)
    assert.equal(first.result.timers?.schedule?.find((t) => t.key === key)?.delayMs, 45_000)
    // A steady heartbeat at 20 s writes nothing and re-arms nothing: it moves the deadline to 65 s.
    const steady = h.heartbeat(beat('a', 1, h.owned(a.response)), 20_000)
    assert.deepEqual(steady.result.records, [])
    assert.equal(
      steady.result.timers?.schedule?.find((t) => t.key === key),
      undefined,
    )
    // The armed timer fires at 46 s: the member stays, the timer re-arms for the rest.
    const early = h.fire(first.result.timers, key, 46_000)
    assert.deepEqual(early.records, [])
    assert.equal(early.timers?.schedule?.find((t) => t.key === key)?.delayMs, 19_000)
    assert.deepEqual(
      h.shard.consumerGroupDescribe(['g'])[0]!.members.map((m) => m.memberId),
      ['a'],
    )
    // At 65 s, 45 s after the last heartbeat, the member is removed.
    h.fire(early.timers, key, 65_000)
    assert.equal(h.shard.consumerGroupDescribe(['g'])[0]!.members.length, 0)
    assert.equal(h.shard.consumerGroupDescribe(['g'])[0]!.groupState, 'Empty')
  })

  it('the rebalance timeout removes a member that does not revoke in time', () => {
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a')).response
    h.heartbeat(join('b'), 10)
    const revoking = h.heartbeat(beat('a', 1, h.owned(a)), 20)
    const key = 'rebalance-timeout-g-a'
    assert.equal(revoking.result.timers?.schedule?.find((t) => t.key === key)?.delayMs, 30000)
    h.fire(revoking.result.timers, key, 30020)
    assert.deepEqual(
      h.shard.consumerGroupDescribe(['g'])[0]!.members.map((m) => m.memberId),
      ['b'],
    )
    // b now gets every partition.
    const b = h.heartbeat(beat('b', 2, []), 30030).response
    assert.deepEqual(b.assignment?.topicPartitions[0]?.partitions, [0, 1])
  })
})

describe('consumer groups in the other group APIs', () => {
  it('ListGroups, DescribeGroups, DeleteGroups and the offset checks', () => {
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a')).response
    assert.deepEqual(h.shard.listGroups([], []), [
      { groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' },
    ])
    assert.deepEqual(h.shard.listGroups(['empty'], []), [])
    assert.deepEqual(h.shard.listGroups([], ['classic']), [])
    const [d] = h.shard.describeGroups(['g'], 6)
    assert.deepEqual(
      [d!.groupState, d!.errorCode, d!.errorMessage],
      ['Dead', ErrorCode.GROUP_ID_NOT_FOUND, 'Group g is not a classic group.'],
    )
    assert.equal(h.shard.deleteGroups(['g']).response[0]!.errorCode, ErrorCode.NON_EMPTY_GROUP)
    const commit = (memberEpoch: number, memberId = 'a', apiVersion = 9) =>
      h.shard.commitOffsets(
        { apiVersion, nowMs: 1, maxMetadataSize: 4096 },
        offsetCommit(h.topics.id('foo'), memberEpoch, memberId, 5n),
      ).response[0]!.partitions[0]!.errorCode
    assert.equal(commit(1), ErrorCode.NONE)
    assert.equal(commit(2), ErrorCode.STALE_MEMBER_EPOCH)
    assert.equal(commit(1, 'zz'), ErrorCode.UNKNOWN_MEMBER_ID)
    assert.equal(commit(1, 'a', 8), ErrorCode.UNSUPPORTED_VERSION)
    const fetch = (memberId: string | null, memberEpoch: number) =>
      h.shard.fetchOffsets({ groupId: 'g', memberId, memberEpoch, topics: null }).errorCode
    assert.equal(fetch('a', 1), ErrorCode.NONE)
    assert.equal(fetch('a', 0), ErrorCode.STALE_MEMBER_EPOCH)
    assert.equal(fetch(null, -1), ErrorCode.NONE)
    // Once the member left, the empty group is deleted with its offsets.
    h.heartbeat(beat('a', a.memberEpoch, null, { memberEpoch: -1 }), 10)
    const del = h.shard.deleteGroups(['g'])
    assert.equal(del.response[0]!.errorCode, ErrorCode.NONE)
    h.apply(del)
    assert.deepEqual(h.shard.listGroups([], []), [])
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })
})

describe('ConsumerGroupHeartbeat: racks, assignors, limits, deleted topics', () => {
  it('a member’s rack is stored, replayed and described; changing it bumps no epoch', () => {
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a', { rackId: 'rack-1' })).response
    const described = () => h.shard.consumerGroupDescribe(['g'])[0]!
    assert.equal(described().members[0]!.rackId, 'rack-1')
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
    const moved = h.heartbeat(beat('a', a.memberEpoch, h.owned(a), { rackId: 'rack-2' }), 10)
    assert.deepEqual(types(moved.result.records), ['ConsumerGroupMemberMetadata'])
    assert.equal(moved.response.memberEpoch, a.memberEpoch)
    assert.deepEqual([described().members[0]!.rackId, described().groupEpoch], ['rack-2', 1])
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })

  it('the assignor is the one members name in ServerAssignor, else the first of group.consumer.assignors', () => {
    const h = new Harness({ foo: 4 })
    h.heartbeat(join('a', { serverAssignor: 'range' }))
    assert.equal(h.shard.consumerGroupDescribe(['g'])[0]!.assignorName, 'range')
    // range gives contiguous ranges by member id: a 0-1, b 2-3 (uniform would keep a's 0-3 sticky).
    const b = h.heartbeat(join('b', { serverAssignor: 'range' }), 10).response
    assert.equal(b.memberEpoch, 2)
    const target = h.shard
      .consumerGroupDescribe(['g'])[0]!
      .members.map((m) => [m.memberId, m.targetAssignment.topicPartitions[0]?.partitions])
    assert.deepEqual(target, [
      ['a', [0, 1]],
      ['b', [2, 3]],
    ])

    const other = new Harness({ foo: 4 })
    other.config = { ...other.config, assignors: ['range', 'uniform'] }
    other.heartbeat(join('a'))
    assert.equal(other.shard.consumerGroupDescribe(['g'])[0]!.assignorName, 'range')
    other.heartbeat(join('b', { serverAssignor: 'uniform' }), 10)
    other.heartbeat(join('c', { serverAssignor: 'uniform' }), 20)
    assert.equal(other.shard.consumerGroupDescribe(['g'])[0]!.assignorName, 'uniform')
  })

  it('group.consumer.max.size does not refuse a static member rejoining with its instance id', () => {
    const h = new Harness({ foo: 2 })
    h.config = { ...h.config, maxSize: 1 }
    h.heartbeat(join('a', { instanceId: 'i1' }))
    h.heartbeat(beat('a', -2, null, { instanceId: 'i1' }), 10)
    const back = h.heartbeat(join('a2', { instanceId: 'i1' }), 20).response
    assert.equal(back.errorCode, ErrorCode.NONE)
    assert.deepEqual(back.assignment?.topicPartitions[0]?.partitions, [0, 1])
    assert.equal(h.heartbeat(join('b'), 30).response.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED)
  })

  it('a deleted topic leaves a pattern’s match and the members’ assignments', () => {
    const h = new Harness({ foo: 2, fox: 2 })
    const a = h.heartbeat(join('a', { subscribedTopicNames: null, subscribedTopicRegex: 'fo.*' })).response
    assert.equal(a.assignment?.topicPartitions.length, 2)
    h.topics.remove('fox')
    h.shard.onNewTopicsImage(h.topics, ['fox'])
    const later = h.heartbeat(beat('a', a.memberEpoch, h.owned(a)), 11_000)
    assert.ok(types(later.result.records).includes('ConsumerGroupRegularExpression'))
    // fox's partitions are revoked first (same epoch), then the member moves to the new epoch.
    assert.equal(later.response.memberEpoch, 1)
    assert.deepEqual(later.response.assignment?.topicPartitions, [
      { topicId: h.topics.id('foo'), partitions: [0, 1] },
    ])
    const acked = h.heartbeat(beat('a', 1, h.owned(later.response)), 11_010).response
    assert.equal(acked.memberEpoch, 2)
    assert.equal(h.shard.consumerGroupDescribe(['g'])[0]!.groupState, 'Stable')
    assert.equal(h.shard.isSubscribedToTopic('g', 'fox'), false)
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })
})

describe('OffsetCommit from a consumer member with an older epoch', () => {
  it('passes for a partition assigned at or before that epoch; fails with Kafka’s messages otherwise', () => {
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a')).response
    h.heartbeat(join('b'), 10)
    const a2 = h.heartbeat(beat('a', 1, h.owned(a)), 20).response
    const kept = a2.assignment!.topicPartitions[0]!.partitions[0]!
    const a3 = h.heartbeat(beat('a', 1, h.owned(a2)), 30).response
    assert.equal(a3.memberEpoch, 2)
    const given = h.heartbeat(beat('b', 2, []), 40).response.assignment!.topicPartitions[0]!.partitions[0]!
    const commit = (memberId: string, memberEpoch: number, partition: number) => {
      const req = offsetCommit(h.topics.id('foo'), memberEpoch, memberId, 5n)
      const t = req.topics[0]!
      const r = h.shard.commitOffsets(
        { apiVersion: 9, nowMs: 50, maxMetadataSize: 4096 },
        { ...req, topics: [{ ...t, partitions: [{ ...t.partitions[0]!, partitionIndex: partition }] }] },
      )
      const p = r.response[0]!.partitions[0]!
      return p.errorCode
    }
    // a is at epoch 2 and kept `kept` since epoch 1: a commit at epoch 1 is a late one, accepted.
    assert.equal(commit('a', 1, kept), ErrorCode.NONE)
    // b got `given` at epoch 2: a commit at epoch 1 for it is refused.
    assert.equal(commit('b', 1, given), ErrorCode.STALE_MEMBER_EPOCH)
    // a does not own `given`.
    assert.equal(commit('a', 1, given), ErrorCode.STALE_MEMBER_EPOCH)
    const msg = (memberId: string, memberEpoch: number, partition: number) => {
      try {
        h.shard.consumer.validateOffsetCommit('g', {
          memberId,
          memberEpoch,
          apiVersion: 9,
          isTransactional: false,
          groupInstanceId: null,
          topics: [{ name: 'foo', partitions: [partition] }],
        })
        return null
      } catch (e) {
        return (e as Error).message
      }
    }
    assert.equal(
      msg('b', 1, given),
      `Received member epoch 1 is older than assignment epoch 2 for partition foo-${given}.`,
    )
    assert.equal(
      msg('a', 1, given),
      `Partition foo-${given} is not assigned or pending revocation for member.`,
    )
    assert.equal(msg('a', 3, kept), 'Received member epoch 3 is newer than current member epoch 2.')
  })
})

describe('ConsumerGroupHeartbeat: subscribed names and catalog changes', () => {
  it('a subscribed topic created later, or given more partitions, is assigned at the next heartbeat', () => {
    const h = new Harness({ foo: 1 })
    const a = h.heartbeat(join('a', { subscribedTopicNames: ['foo', 'later'] })).response
    assert.deepEqual(a.assignment?.topicPartitions, [{ topicId: h.topics.id('foo'), partitions: [0] }])
    // An unrelated topic changes nothing.
    h.topics.set('other', 3)
    h.shard.onNewTopicsImage(h.topics, ['other'])
    const quiet = h.heartbeat(beat('a', 1, h.owned(a)), 10)
    assert.deepEqual([quiet.result.records, quiet.response.memberEpoch], [[], 1])
    h.topics.set('later', 2)
    h.shard.onNewTopicsImage(h.topics, ['later'])
    const created = h.heartbeat(beat('a', 1, h.owned(a)), 20).response
    assert.equal(created.memberEpoch, 2)
    assert.deepEqual(
      created.assignment?.topicPartitions.map((t) => [t.topicId, t.partitions]),
      [
        [h.topics.id('foo'), [0]],
        [h.topics.id('later'), [0, 1]],
      ].sort((x, y) => ((x[0] as string) < (y[0] as string) ? -1 : 1)),
    )
    h.topics.set('foo', 3)
    h.shard.onNewTopicsImage(h.topics, ['foo'])
    const grown = h.heartbeat(beat('a', 2, h.owned(created)), 30).response
    assert.equal(grown.memberEpoch, 3)
    assert.deepEqual(
      grown.assignment?.topicPartitions.find((t) => t.topicId === h.topics.id('foo'))?.partitions,
      [0, 1, 2],
    )
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })
})
