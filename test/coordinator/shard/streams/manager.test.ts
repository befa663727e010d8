import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  computeMetadataHash,
  createStreamsGroupHeartbeatResponse,
  STREAMS_GROUP_CONFIG_DEFAULTS,
} from '../../../../src/coordinator/shard/streams/index.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import { Harness, heartbeatRequest, joinRequest, NO_DELAY, newManager, topicsImage } from './harness.js'

const TOPOLOGY_0 = joinRequest().topology!

/** Kafka's defaults exactly: every heartbeat answered with the group's interval. */
const KAFKA_DEFAULTS = { ...STREAMS_GROUP_CONFIG_DEFAULTS, heartbeatSpreadEnable: false }

describe('worked example: one member on a new group with default configs (§3.17)', () => {
  it('joins at epoch 1 with empty tasks, gets tasks after the initial delay, then stays put', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const hash = computeMetadataHash(['foo'], h.image)
    const r1 = await h.heartbeat(joinRequest(), KAFKA_DEFAULTS)

    assert.deepEqual(r1.records, [
      {
        type: 'StreamsGroupMemberMetadata',
        key: { groupId: 'g', memberId: 'm1' },
        value: {
          instanceId: null,
          rackId: null,
          clientId: 'client',
          clientHost: '/127.0.0.1',
          rebalanceTimeoutMs: 30000,
          topologyEpoch: 0,
          processId: 'p1',
          userEndpoint: null,
          clientTags: [],
        },
      },
      { type: 'StreamsGroupTopology', key: { groupId: 'g' }, value: TOPOLOGY_0 },
      {
        type: 'StreamsGroupMetadata',
        key: { groupId: 'g' },
        value: {
          epoch: 2,
          metadataHash: hash,
          validatedTopologyEpoch: 0,
          lastAssignmentConfigs: [{ key: 'num.standby.replicas', value: '0' }],
          storedDescriptionTopologyEpoch: -1,
          failedDescriptionTopologyEpoch: -1,
        },
      },
      {
        type: 'StreamsGroupCurrentMemberAssignment',
        key: { groupId: 'g', memberId: 'm1' },
        value: {
          memberEpoch: 1,
          previousMemberEpoch: 0,
          state: 1,
          activeTasks: [],
          standbyTasks: [],
          warmupTasks: [],
          activeTasksPendingRevocation: [],
          standbyTasksPendingRevocation: [],
          warmupTasksPendingRevocation: [],
        },
      },
    ])
    assert.notEqual(hash, 0n)
    assert.deepEqual(
      r1.response,
      createStreamsGroupHeartbeatResponse({
        memberId: 'm1',
        memberEpoch: 1,
        heartbeatIntervalMs: 5000,
        taskOffsetIntervalMs: 60000,
        acceptableRecoveryLag: 10000n,
        status: [
          {
            statusCode: 5,
            statusDetail: 'Assignment delayed due to the configured initial rebalance delay.',
          },
        ],
        activeTasks: [],
        standbyTasks: [],
        warmupTasks: [],
        endpointInformationEpoch: 0,
        partitionsByUserEndpoint: [],
      }),
    )
    assert.deepEqual(
      r1.timers.schedule!.map((t) => [t.key, t.delayMs]),
      [
        ['initial-rebalance-timeout-g', 3000],
        ['session-timeout-g-m1', 45000],
      ],
    )
    assert.equal(h.manager.group('g')!.state(), 'Assigning')
    await h.assertReplayEquivalent()

    const fired = await h.advance(3000)
    assert.deepEqual(fired, [
      {
        type: 'StreamsGroupTargetAssignmentMember',
        key: { groupId: 'g', memberId: 'm1' },
        value: {
          activeTasks: [{ subtopologyId: '0', partitions: [0, 1] }],
          standbyTasks: [],
          warmupTasks: [],
        },
      },
      {
        type: 'StreamsGroupTargetAssignmentMetadata',
        key: { groupId: 'g' },
        value: { assignmentEpoch: 2, assignmentTimestamp: 3000n },
      },
    ])
    assert.equal(h.manager.group('g')!.state(), 'Reconciling')

    const r2 = await h.heartbeat(heartbeatRequest({ memberEpoch: 1, endpointInformationEpoch: 0 }))
    assert.deepEqual(r2.records, [
      {
        type: 'StreamsGroupCurrentMemberAssignment',
        key: { groupId: 'g', memberId: 'm1' },
        value: {
          memberEpoch: 2,
          previousMemberEpoch: 1,
          state: 1,
          activeTasks: [{ subtopologyId: '0', partitions: [0, 1], assignmentEpochs: [2, 2] }],
          standbyTasks: [],
          warmupTasks: [],
          activeTasksPendingRevocation: [],
          standbyTasksPendingRevocation: [],
          warmupTasksPendingRevocation: [],
        },
      },
    ])
    assert.equal(r2.response.memberEpoch, 2)
    assert.deepEqual(r2.response.activeTasks, [{ subtopologyId: '0', partitions: [0, 1] }])
    assert.deepEqual(r2.response.status, [])
    assert.equal(h.manager.group('g')!.state(), 'Stable')

    const r3 = await h.heartbeat(
      heartbeatRequest({
        memberEpoch: 2,
        endpointInformationEpoch: 0,
        activeTasks: [{ subtopologyId: '0', partitions: [0, 1] }],
        standbyTasks: [],
        warmupTasks: [],
      }),
    )
    assert.deepEqual(r3.records, [])
    assert.equal(r3.response.activeTasks, null)
    assert.equal(r3.response.standbyTasks, null)
    assert.deepEqual(r3.response.status, [])
    assert.equal(r3.response.memberEpoch, 2)
    await h.assertReplayEquivalent()
  })
})

describe('a second member joins and the group reconciles to Stable', () => {
  it('revokes before assigning and advances epochs', async () => {
    const h = await Harness.start(topicsImage({ foo: 4 }))
    await h.heartbeat(joinRequest(), NO_DELAY)
    const m1 = await h.heartbeat(heartbeatRequest({ memberEpoch: 2 }), NO_DELAY)
    assert.equal(m1.response.memberEpoch, 2)
    assert.deepEqual(
      h.manager.group('g')!.member('m1')!.assignedTasks.active.bySubtopology().get('0')?.length,
      4,
    )
    // A member that holds its target shares one tuple with it (one copy of the task lists).
    assert.equal(
      h.manager.group('g')!.targetAssignment('m1'),
      h.manager.group('g')!.member('m1')!.assignedTasks,
    )

    const j2 = await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2' }), NO_DELAY)
    // Group epoch 3, new target computed at once (no interval): m2 waits for m1 to release tasks.
    assert.equal(h.manager.group('g')!.groupEpoch, 3)
    assert.equal(h.manager.group('g')!.assignmentEpoch, 3)
    assert.equal(j2.response.memberEpoch, 3)
    assert.deepEqual(j2.response.activeTasks, [])
    assert.equal(h.manager.group('g')!.member('m2')!.state, 3) // UNRELEASED_TASKS

    const owned = (ps: number[]) => ({
      activeTasks: [{ subtopologyId: '0', partitions: ps }],
      standbyTasks: [],
      warmupTasks: [],
    })
    const r1 = await h.heartbeat(heartbeatRequest({ memberEpoch: 2, ...owned([0, 1, 2, 3]) }), NO_DELAY)
    assert.equal(r1.response.memberEpoch, 2)
    assert.equal(r1.response.activeTasks!.length, 1)
    const kept = r1.response.activeTasks![0]!.partitions
    assert.equal(kept.length, 2)
    assert.equal(h.manager.group('g')!.member('m1')!.state, 2) // UNREVOKED_TASKS
    assert.deepEqual(r1.timers.schedule!.map((t) => t.key).sort(), [
      'rebalance-timeout-g-m1',
      'session-timeout-g-m1',
    ])

    // m1 still reports the tasks to revoke: nothing changes.
    const again = await h.heartbeat(heartbeatRequest({ memberEpoch: 2, ...owned([0, 1, 2, 3]) }), NO_DELAY)
    assert.deepEqual(again.records, [])
    // m1 released them: it moves to epoch 3.
    const released = await h.heartbeat(heartbeatRequest({ memberEpoch: 2, ...owned(kept) }), NO_DELAY)
    assert.equal(released.response.memberEpoch, 3)
    assert.deepEqual(released.timers.cancel, ['rebalance-timeout-g-m1'])
    const r2 = await h.heartbeat(heartbeatRequest({ memberId: 'm2', memberEpoch: 3, ...owned([]) }), NO_DELAY)
    const got = r2.response.activeTasks![0]!.partitions
    assert.deepEqual([...kept, ...got].sort(), [0, 1, 2, 3])
    assert.equal(h.manager.group('g')!.state(), 'Stable')
    await h.assertReplayEquivalent()
  })
})

describe('three processes with two members each converge', () => {
  it('assigns every task once and becomes Stable', async () => {
    const h = await Harness.start(topicsImage({ foo: 12 }))
    const ids = ['a1', 'a2', 'b1', 'b2', 'c1', 'c2']
    const epochs = new Map<string, number>()
    const owned = new Map<string, number[]>()
    for (const id of ids) {
      const r = await h.heartbeat(joinRequest({ memberId: id, processId: `p-${id[0]}` }), NO_DELAY)
      epochs.set(id, r.response.memberEpoch)
      owned.set(id, r.response.activeTasks?.[0]?.partitions ?? [])
    }
    for (let round = 0; round < 6; round++) {
      for (const id of ids) {
        const r = await h.heartbeat(
          heartbeatRequest({
            memberId: id,
            memberEpoch: epochs.get(id)!,
            activeTasks: [{ subtopologyId: '0', partitions: owned.get(id)! }],
            standbyTasks: [],
            warmupTasks: [],
          }),
          NO_DELAY,
        )
        assert.equal(r.response.errorCode, 0)
        epochs.set(id, r.response.memberEpoch)
        if (r.response.activeTasks !== null) owned.set(id, r.response.activeTasks[0]?.partitions ?? [])
      }
    }
    const g = h.manager.group('g')!
    assert.equal(g.state(), 'Stable')
    const all = ids.flatMap((id) => owned.get(id)!).sort((a, b) => a - b)
    assert.deepEqual(all, [...Array(12).keys()])
    for (const id of ids) assert.equal(owned.get(id)!.length, 2)
    // A stable group keeps no task → process index; asked, it builds one from the members.
    assert.equal(g.hasOwnershipIndex, false)
    for (const id of ids) {
      for (const p of owned.get(id)!) assert.equal(g.activeTaskProcess('0', p), `p-${id[0]}`)
    }
    assert.equal(g.activeTaskProcess('0', 12), undefined)
    assert.equal(g.hasOwnershipIndex, true)
    await h.assertReplayEquivalent()
  })
})

describe('leave and fencing', () => {
  async function stableGroup(): Promise<Harness> {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    await h.heartbeat(joinRequest(), NO_DELAY)
    await h.heartbeat(heartbeatRequest({ memberEpoch: 2 }), NO_DELAY)
    return h
  }

  it('a leave (-1) writes tombstones, bumps the epoch and catches up the assignment epoch for the last member', async () => {
    const h = await stableGroup()
    const r = await h.heartbeat(heartbeatRequest({ memberEpoch: -1 }), NO_DELAY)
    assert.deepEqual(r.records, [
      { type: 'StreamsGroupCurrentMemberAssignment', key: { groupId: 'g', memberId: 'm1' }, value: null },
      { type: 'StreamsGroupTargetAssignmentMember', key: { groupId: 'g', memberId: 'm1' }, value: null },
      { type: 'StreamsGroupMemberMetadata', key: { groupId: 'g', memberId: 'm1' }, value: null },
      {
        type: 'StreamsGroupMetadata',
        key: { groupId: 'g' },
        value: {
          epoch: 3,
          metadataHash: computeMetadataHash(['foo'], h.image),
          validatedTopologyEpoch: 0,
          lastAssignmentConfigs: [{ key: 'num.standby.replicas', value: '0' }],
          storedDescriptionTopologyEpoch: -1,
          failedDescriptionTopologyEpoch: -1,
        },
      },
      {
        type: 'StreamsGroupTargetAssignmentMetadata',
        key: { groupId: 'g' },
        value: { assignmentEpoch: 3, assignmentTimestamp: 0n },
      },
    ])
    assert.deepEqual(r.response, createStreamsGroupHeartbeatResponse({ memberId: 'm1', memberEpoch: -1 }))
    assert.deepEqual(r.timers.cancel, ['session-timeout-g-m1', 'rebalance-timeout-g-m1'])
    assert.equal(h.manager.group('g')!.state(), 'Empty')
    await h.assertReplayEquivalent()
    // The empty group can be deleted, in Kafka's tombstone order.
    const del = h.manager.deleteGroupRecords('g')
    assert.deepEqual(
      del.records.map((x) => x.type),
      ['StreamsGroupTargetAssignmentMetadata', 'StreamsGroupMetadata', 'StreamsGroupTopology'],
    )
    for (const x of del.records) h.manager.replay(x)
    assert.equal(h.manager.group('g'), undefined)
  })

  it('answers UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH (greater and smaller) with Kafka messages', async () => {
    // Default configs: the member goes from epoch 1 to 2, so its previous epoch is 1.
    const h = await Harness.start(topicsImage({ foo: 2 }))
    await h.heartbeat(joinRequest())
    await h.advance(3000)
    assert.equal((await h.heartbeat(heartbeatRequest({ memberEpoch: 1 }))).response.memberEpoch, 2)
    const unknown = await h.heartbeat(heartbeatRequest({ memberId: 'zz', memberEpoch: 2 }))
    assert.deepEqual(
      unknown.response,
      createStreamsGroupHeartbeatResponse({
        errorCode: ErrorCode.UNKNOWN_MEMBER_ID,
        errorMessage: 'Member zz is not a member of group g.',
      }),
    )
    const greater = await h.heartbeat(heartbeatRequest({ memberEpoch: 5 }))
    assert.equal(greater.response.errorCode, 110)
    assert.equal(
      greater.response.errorMessage,
      'The streams group member has a greater member epoch (5) than the one known by the group coordinator (2). The member must abandon all its partitions and rejoin.',
    )
    const smaller = await h.heartbeat(
      heartbeatRequest({ memberEpoch: 1, activeTasks: null, standbyTasks: null, warmupTasks: null }),
    )
    assert.equal(
      smaller.response.errorMessage,
      'The streams group member has a smaller member epoch (1) than the one known by the group coordinator (2). The member must abandon all its partitions and rejoin.',
    )
    // The previous epoch with a subset of the assignment is accepted (lost response).
    const lost = await h.heartbeat(
      heartbeatRequest({
        memberEpoch: 1,
        activeTasks: [{ subtopologyId: '0', partitions: [0] }],
        standbyTasks: [],
        warmupTasks: [],
      }),
    )
    assert.equal(lost.response.errorCode, 0)
    assert.equal(lost.response.memberEpoch, 2)
    const missing = await h.heartbeat(heartbeatRequest({ groupId: 'nope', memberEpoch: 1 }))
    assert.equal(missing.response.errorMessage, 'Streams group nope not found.')
    const missingLeave = await h.heartbeat(heartbeatRequest({ groupId: 'nope', memberEpoch: -1 }))
    assert.equal(missingLeave.response.errorMessage, 'Group nope not found.')
  })

  it('the session timeout fences the member through the timer op', async () => {
    const h = await stableGroup()
    await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2' }), NO_DELAY)
    const fired = await h.advance(STREAMS_GROUP_CONFIG_DEFAULTS.sessionTimeoutMs)
    // Both sessions expire; each fencing bumps the group epoch.
    assert.deepEqual(
      fired.map((r) => [r.type, r.key]),
      [
        ['StreamsGroupCurrentMemberAssignment', { groupId: 'g', memberId: 'm1' }],
        ['StreamsGroupTargetAssignmentMember', { groupId: 'g', memberId: 'm1' }],
        ['StreamsGroupMemberMetadata', { groupId: 'g', memberId: 'm1' }],
        ['StreamsGroupMetadata', { groupId: 'g' }],
        ['StreamsGroupCurrentMemberAssignment', { groupId: 'g', memberId: 'm2' }],
        ['StreamsGroupTargetAssignmentMember', { groupId: 'g', memberId: 'm2' }],
        ['StreamsGroupMemberMetadata', { groupId: 'g', memberId: 'm2' }],
        ['StreamsGroupMetadata', { groupId: 'g' }],
        ['StreamsGroupTargetAssignmentMetadata', { groupId: 'g' }],
      ],
    )
    assert.equal(h.manager.group('g')!.groupEpoch, 5)
    assert.equal(h.manager.group('g')!.state(), 'Empty')
    const after = await h.heartbeat(heartbeatRequest({ memberEpoch: 2 }))
    assert.equal(after.response.errorCode, ErrorCode.UNKNOWN_MEMBER_ID)
    await h.assertReplayEquivalent()
  })
})

describe('static membership', () => {
  it('a -2 leave keeps the member; a rejoin with a new member id takes over its tasks', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    await h.heartbeat(joinRequest({ instanceId: 'i1' }), NO_DELAY)
    await h.heartbeat(heartbeatRequest({ memberEpoch: 2, instanceId: 'i1' }), NO_DELAY)
    const left = await h.heartbeat(heartbeatRequest({ memberEpoch: -2, instanceId: 'i1' }), NO_DELAY)
    assert.deepEqual(left.records, [
      {
        type: 'StreamsGroupCurrentMemberAssignment',
        key: { groupId: 'g', memberId: 'm1' },
        value: {
          memberEpoch: -2,
          previousMemberEpoch: 0,
          state: 1,
          activeTasks: [{ subtopologyId: '0', partitions: [0, 1], assignmentEpochs: [0, 0] }],
          standbyTasks: [],
          warmupTasks: [],
          activeTasksPendingRevocation: [],
          standbyTasksPendingRevocation: [],
          warmupTasksPendingRevocation: [],
        },
      },
    ])
    assert.deepEqual(left.response, createStreamsGroupHeartbeatResponse({ memberId: 'm1', memberEpoch: -2 }))
    assert.equal(h.manager.group('g')!.state(), 'Reconciling')

    const clash = await h.heartbeat(joinRequest({ memberId: 'x', instanceId: 'i1' }), NO_DELAY)
    assert.equal(clash.response.errorCode, 0)
    assert.deepEqual(
      clash.records.slice(0, 6).map((r) => [r.type, r.key, r.value === null]),
      [
        ['StreamsGroupCurrentMemberAssignment', { groupId: 'g', memberId: 'm1' }, true],
        ['StreamsGroupTargetAssignmentMember', { groupId: 'g', memberId: 'm1' }, true],
        ['StreamsGroupMemberMetadata', { groupId: 'g', memberId: 'm1' }, true],
        ['StreamsGroupMemberMetadata', { groupId: 'g', memberId: 'x' }, false],
        ['StreamsGroupTargetAssignmentMember', { groupId: 'g', memberId: 'x' }, false],
        ['StreamsGroupCurrentMemberAssignment', { groupId: 'g', memberId: 'x' }, false],
      ],
    )
    // No bump: only client metadata of a static member changed.
    assert.equal(h.manager.group('g')!.groupEpoch, 2)
    assert.equal(clash.response.memberEpoch, 2)
    assert.deepEqual(clash.response.activeTasks, [{ subtopologyId: '0', partitions: [0, 1] }])
    assert.equal(h.manager.group('g')!.member('m1'), undefined)
    assert.equal(h.manager.group('g')!.state(), 'Stable')

    const unreleased = await h.heartbeat(joinRequest({ memberId: 'y', instanceId: 'i1' }), NO_DELAY)
    assert.deepEqual(
      unreleased.response,
      createStreamsGroupHeartbeatResponse({
        errorCode: ErrorCode.UNRELEASED_INSTANCE_ID,
        errorMessage:
          'Static member y with instance id i1 cannot join the group because the instance id is owned by x member.',
      }),
    )
    const fenced = await h.heartbeat(
      heartbeatRequest({ memberId: 'y', memberEpoch: 2, instanceId: 'i1' }),
      NO_DELAY,
    )
    assert.equal(fenced.response.errorMessage, 'Static member y with instance id i1 was fenced by member x.')
    const unknownInstance = await h.heartbeat(
      heartbeatRequest({ memberId: 'y', memberEpoch: 2, instanceId: 'i9' }),
    )
    assert.equal(unknownInstance.response.errorMessage, 'Instance id i9 is unknown.')
    await h.assertReplayEquivalent()
  })
})

describe('a steady heartbeat (nothing but nulls)', () => {
  it('writes nothing and keeps the member as it is; a new client id or host still writes member metadata', async () => {
    const h = await Harness.start(topicsImage({ foo: 4 }))
    await h.heartbeat(joinRequest(), NO_DELAY)
    await h.heartbeat(heartbeatRequest({ memberEpoch: 2 }), NO_DELAY)
    const owned = h.manager.group('g')!.member('m1')!.assignedTasks.active.bySubtopology().get('0')!
    const stable = await h.heartbeat(
      heartbeatRequest({
        memberEpoch: 2,
        activeTasks: [{ subtopologyId: '0', partitions: owned }],
        standbyTasks: [],
        warmupTasks: [],
      }),
      NO_DELAY,
    )
    assert.equal(h.manager.group('g')!.state(), 'Stable')
    const endpointEpoch = stable.response.endpointInformationEpoch
    const before = h.manager.group('g')!.member('m1')!
    const steady = heartbeatRequest({
      memberEpoch: 2,
      endpointInformationEpoch: endpointEpoch,
      activeTasks: null,
      standbyTasks: null,
      warmupTasks: null,
    })
    const r = await h.heartbeat(steady, NO_DELAY)
    assert.deepEqual(r.records, [])
    assert.equal(r.response.errorCode, 0)
    assert.equal(r.response.memberEpoch, 2)
    assert.equal(r.response.activeTasks, null)
    assert.equal(r.response.partitionsByUserEndpoint, null)
    // The armed session timer is not asked for again: its deadline moves in soft state.
    assert.deepEqual(r.timers, { schedule: [], cancel: [] })
    assert.equal(h.manager.isTimerScheduled('session-timeout-g-m1'), true)
    assert.equal(h.manager.group('g')!.slot('m1')!.deadlineMs, h.nowMs + NO_DELAY.sessionTimeoutMs)
    assert.equal(h.manager.group('g')!.member('m1'), before, 'the member object is kept')

    // The same request from another client id, then another host: the member metadata changes.
    // (The group epoch moves on, so the member's own epoch is not checked here.)
    let epoch = 2
    for (const [clientId, clientHost] of [
      ['client-2', '/127.0.0.1'],
      ['client-2', '/127.0.0.2'],
    ]) {
      const moved = h.manager.streamsGroupHeartbeat(
        { nowMs: h.nowMs, requestApiVersion: 1, clientId, clientHost, config: NO_DELAY },
        { ...steady, memberEpoch: epoch },
      )
      assert.equal(moved.response.errorCode, 0)
      epoch = moved.response.memberEpoch
      // A dynamic member's metadata change also bumps the group epoch, as in Kafka.
      assert.equal(moved.records[0]?.type, 'StreamsGroupMemberMetadata')
      for (const rec of moved.records) h.manager.replay(rec)
      const m = h.manager.group('g')!.member('m1')!
      assert.equal(m.clientId, clientId)
      assert.equal(m.clientHost, clientHost)
    }
  })
})

describe('after a reload (the group replayed from its records)', () => {
  it('configures the topology and hashes the metadata once, not on every heartbeat', async () => {
    // The refresh deadline is soft state: a reloaded group starts with it expired. The first
    // heartbeat recomputes the metadata hash (the same as before) and the configured topology; it
    // used to leave the deadline expired when the hash had not changed (no epoch bump), so every
    // heartbeat of every group did both again until the group's epoch next moved: after a restart
    // the server spent several times a heartbeat's own cost on it (RELIABILITY.md, "Soak").
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const joined = await h.heartbeat(joinRequest(), NO_DELAY)
    const steady = await h.heartbeat(
      heartbeatRequest({
        memberEpoch: joined.response.memberEpoch,
        activeTasks: null,
        standbyTasks: null,
        warmupTasks: null,
      }),
      NO_DELAY,
    )
    const epoch = steady.response.memberEpoch
    const reloaded = newManager(h.image)
    for (const r of await h.t.log()) reloaded.replay(r)
    const group = reloaded.group('g')!
    assert.equal(group.hasMetadataExpired(1000), true, 'a reloaded group starts expired')
    const context = (nowMs: number) => ({
      nowMs,
      requestApiVersion: 1,
      clientId: 'client',
      clientHost: '/127.0.0.1',
      config: NO_DELAY,
    })
    const beat = heartbeatRequest({
      memberEpoch: epoch,
      activeTasks: null,
      standbyTasks: null,
      warmupTasks: null,
    })
    const first = reloaded.streamsGroupHeartbeat(context(1000), beat)
    assert.equal(first.response.errorCode, 0)
    assert.deepEqual(first.records, [], 'the same metadata hash: no epoch bump')
    const configured = group.configuredTopology
    assert.notEqual(configured, null)
    assert.equal(group.hasMetadataExpired(1000), false, 'the recomputation moved the deadline')
    const second = reloaded.streamsGroupHeartbeat(context(6000), beat)
    assert.equal(second.response.errorCode, 0)
    assert.equal(group.configuredTopology, configured, 'not configured again')
    await h.close()
  })
})
