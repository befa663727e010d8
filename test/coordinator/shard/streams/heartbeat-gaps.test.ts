import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  computeMetadataHash,
  MemberState,
  type StreamsGroupHeartbeatRequest,
} from '../../../../src/coordinator/shard/streams/index.js'
import { Harness, heartbeatRequest, joinRequest, NO_DELAY, newManager, topicsImage } from './harness.js'

const tombstones = (memberId: string) => [
  { type: 'StreamsGroupCurrentMemberAssignment', key: { groupId: 'g', memberId }, value: null },
  { type: 'StreamsGroupTargetAssignmentMember', key: { groupId: 'g', memberId }, value: null },
  { type: 'StreamsGroupMemberMetadata', key: { groupId: 'g', memberId }, value: null },
]

/** A Stable group: m1 owns every task of foo (4 partitions). */
async function stableOneMember(): Promise<Harness> {
  const h = await Harness.start(topicsImage({ foo: 4 }))
  const r = await h.heartbeat(joinRequest(), NO_DELAY)
  assert.deepEqual(r.response.activeTasks, [{ subtopologyId: '0', partitions: [0, 1, 2, 3] }])
  await h.heartbeat(
    heartbeatRequest({ memberEpoch: r.response.memberEpoch, activeTasks: r.response.activeTasks }),
    NO_DELAY,
  )
  assert.equal(h.manager.group('g')!.state(), 'Stable')
  return h
}

describe('rebalance timeout (§3.13)', () => {
  it('a member that does not revoke in time is fenced; a member that revoked is not', async () => {
    const h = await stableOneMember()
    const epoch = h.manager.group('g')!.groupEpoch
    await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2' }), NO_DELAY)
    const owned = [{ subtopologyId: '0', partitions: [0, 1, 2, 3] }]
    const r = await h.heartbeat(heartbeatRequest({ memberEpoch: epoch, activeTasks: owned }), NO_DELAY)
    // m1 must give up two tasks first: UNREVOKED_TASKS, epoch unchanged, a rebalance timer.
    assert.equal(r.response.memberEpoch, epoch)
    assert.equal(h.manager.group('g')!.member('m1')!.state, MemberState.UNREVOKED_TASKS)
    assert.deepEqual(
      r.timers.schedule!.map((t) => [t.key, t.delayMs]),
      [
        ['rebalance-timeout-g-m1', 30000],
        ['session-timeout-g-m1', 45000],
      ],
    )
    assert.equal(h.manager.isTimerScheduled('rebalance-timeout-g-m1'), true)

    // m1 keeps heartbeating with every task (it never revokes); after 30 s it is fenced.
    await h.advance(20000)
    await h.heartbeat(heartbeatRequest({ memberEpoch: epoch, activeTasks: owned }), NO_DELAY)
    await h.heartbeat(heartbeatRequest({ memberId: 'm2', memberEpoch: epoch + 1 }), NO_DELAY)
    const fired = await h.advance(10000)
    assert.deepEqual(fired, [
      ...tombstones('m1'),
      {
        type: 'StreamsGroupMetadata',
        key: { groupId: 'g' },
        value: {
          epoch: epoch + 2,
          metadataHash: computeMetadataHash(['foo'], h.image),
          validatedTopologyEpoch: 0,
          lastAssignmentConfigs: [{ key: 'num.standby.replicas', value: '0' }],
          storedDescriptionTopologyEpoch: -1,
          failedDescriptionTopologyEpoch: -1,
        },
      },
    ])
    assert.equal(h.manager.group('g')!.member('m1'), undefined)
    assert.equal(h.manager.isTimerScheduled('session-timeout-g-m1'), false)
    // The fenced member's next heartbeat is unknown.
    const late = await h.heartbeat(heartbeatRequest({ memberEpoch: epoch, activeTasks: owned }), NO_DELAY)
    assert.equal(late.response.errorCode, 25)
    assert.equal(late.response.errorMessage, 'Member m1 is not a member of group g.')
    await h.assertReplayEquivalent()
  })

  it('revoking in time cancels the rebalance timer', async () => {
    const h = await stableOneMember()
    const epoch = h.manager.group('g')!.groupEpoch
    await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2' }), NO_DELAY)
    await h.heartbeat(
      heartbeatRequest({
        memberEpoch: epoch,
        activeTasks: [{ subtopologyId: '0', partitions: [0, 1, 2, 3] }],
      }),
      NO_DELAY,
    )
    const kept = h.manager.group('g')!.member('m1')!.assignedTasks.active.bySubtopology().get('0')!
    const r = await h.heartbeat(
      heartbeatRequest({
        memberEpoch: epoch,
        activeTasks: [{ subtopologyId: '0', partitions: kept }],
      }),
      NO_DELAY,
    )
    assert.equal(r.response.memberEpoch, epoch + 1)
    assert.deepEqual(r.timers.cancel, ['rebalance-timeout-g-m1'])
    assert.deepEqual(await h.advance(30000), [])
    assert.notEqual(h.manager.group('g')!.member('m1'), undefined)
    await h.assertReplayEquivalent()
  })
})

const SHUTDOWN = {
  statusCode: 4,
  statusDetail:
    'Streams group member m1 encountered a fatal error and requested a shutdown for the entire application.',
}

describe('SHUTDOWN_APPLICATION (§3.14)', () => {
  it('the first requester is remembered in memory only; every member sees it until the group is empty', async () => {
    const h = await stableOneMember()
    await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2' }), NO_DELAY)
    const epoch1 = h.manager.group('g')!.member('m1')!.memberEpoch
    const r1 = await h.heartbeat(
      heartbeatRequest({ memberEpoch: epoch1, shutdownApplication: true }),
      NO_DELAY,
    )
    assert.deepEqual(r1.response.status, [SHUTDOWN])
    // Not persisted: no record is about the request.
    assert.ok(r1.records.every((rec) => rec.type !== 'StreamsGroupMetadata'))
    // A later request by another member does not replace the first.
    const m2 = h.manager.group('g')!.member('m2')!
    const r2 = await h.heartbeat(
      heartbeatRequest({ memberId: 'm2', memberEpoch: m2.memberEpoch, shutdownApplication: true }),
      NO_DELAY,
    )
    assert.deepEqual(r2.response.status, [SHUTDOWN])
    assert.equal(h.manager.group('g')!.shutdownRequestMemberId, 'm1')
    // A fresh shard replaying the log does not know of it.
    const fresh = newManager(h.image)
    for (const rec of await h.records()) fresh.replay(rec)
    assert.equal(fresh.group('g')!.shutdownRequestMemberId, null)
    await h.assertReplayEquivalent()

    // The leave response itself carries no status; the group empties and forgets the request.
    const leave1 = await h.heartbeat(heartbeatRequest({ memberEpoch: -1 }), NO_DELAY)
    assert.deepEqual(leave1.response.status, [])
    const stillThere = h.manager.group('g')!.member('m2')!
    const r3 = await h.heartbeat(
      heartbeatRequest({ memberId: 'm2', memberEpoch: stillThere.memberEpoch }),
      NO_DELAY,
    )
    assert.deepEqual(r3.response.status, [SHUTDOWN])
    await h.heartbeat(heartbeatRequest({ memberId: 'm2', memberEpoch: -1 }), NO_DELAY)
    assert.equal(h.manager.group('g')!.state(), 'Empty')
    assert.equal(h.manager.group('g')!.shutdownRequestMemberId, null)
    const r4 = await h.heartbeat(joinRequest({ memberId: 'm3', processId: 'p3' }), NO_DELAY)
    assert.deepEqual(r4.response.status, [])
  })

  it('a request on the heartbeat that creates the group is lost (temporary group object)', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const r = await h.heartbeat(joinRequest({ shutdownApplication: true }), NO_DELAY)
    assert.deepEqual(r.response.status, [{ ...SHUTDOWN }])
    const next = await h.heartbeat(heartbeatRequest({ memberEpoch: r.response.memberEpoch }), NO_DELAY)
    assert.deepEqual(next.response.status, [])
  })

  it('a leave with ShutdownApplication sets it for the members that stay', async () => {
    const h = await stableOneMember()
    await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2' }), NO_DELAY)
    const leave = await h.heartbeat(
      heartbeatRequest({ memberEpoch: -1, shutdownApplication: true }),
      NO_DELAY,
    )
    assert.deepEqual(leave.response.status, [])
    const m2 = h.manager.group('g')!.member('m2')!
    const r = await h.heartbeat(heartbeatRequest({ memberId: 'm2', memberEpoch: m2.memberEpoch }), NO_DELAY)
    assert.deepEqual(r.response.status, [SHUTDOWN])
  })
})

describe('MISSING_CLIENT_TAGS (§3.15)', () => {
  const TAGS = { ...NO_DELAY, rackAwareAssignmentTags: ['zone', 'rack'] }
  const join = (clientTags: StreamsGroupHeartbeatRequest['clientTags']) => joinRequest({ clientTags })

  it('v1 lists the missing configured tags; v0 never does', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const v1 = await h.heartbeat(join([{ key: 'zone', value: 'a' }]), TAGS, 1)
    assert.deepEqual(v1.response.status, [
      {
        statusCode: 6,
        statusDetail:
          "Missing required client tags for rack-aware standby assignment: [rack]. Configure them via 'client.tag.<tagKey>' in your Streams config.",
      },
    ])
    const none = await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2', clientTags: [] }), TAGS, 1)
    assert.deepEqual(none.response.status, [
      {
        statusCode: 6,
        statusDetail:
          "Missing required client tags for rack-aware standby assignment: [zone, rack]. Configure them via 'client.tag.<tagKey>' in your Streams config.",
      },
    ])
    const v0 = await h.heartbeat(joinRequest({ memberId: 'm3', processId: 'p3' }), TAGS, 0)
    assert.deepEqual(v0.response.status, [])
    const all = await h.heartbeat(
      joinRequest({
        memberId: 'm4',
        processId: 'p4',
        clientTags: [
          { key: 'rack', value: 'r1' },
          { key: 'zone', value: 'a' },
        ],
      }),
      TAGS,
      1,
    )
    assert.deepEqual(all.response.status, [])
  })

  it('no configured tags: never sent', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    assert.deepEqual((await h.heartbeat(joinRequest(), NO_DELAY, 1)).response.status, [])
  })
})

describe('ASSIGNMENT_DELAYED (§3.10, §3.11)', () => {
  it('the assignment interval holds back a new target; the member keeps its current target meanwhile', async () => {
    const cfg = { ...NO_DELAY, assignmentIntervalMs: 1000 }
    const h = await Harness.start(topicsImage({ foo: 2 }))
    h.nowMs = 10
    const r1 = await h.heartbeat(joinRequest(), cfg)
    assert.deepEqual(r1.response.status, [])
    assert.equal(h.manager.group('g')!.assignmentEpoch, 2)
    h.nowMs = 500
    const r2 = await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2' }), cfg)
    assert.deepEqual(r2.response.status, [
      { statusCode: 5, statusDetail: 'Assignment delayed due to the configured assignment interval.' },
    ])
    assert.deepEqual(r2.response.activeTasks, [])
    assert.ok(r2.records.every((rec) => !rec.type.startsWith('StreamsGroupTargetAssignment')))
    assert.equal(h.manager.group('g')!.assignmentEpoch, 2)
    assert.equal(h.manager.group('g')!.groupEpoch, 3)
    h.nowMs = 1010
    const r3 = await h.heartbeat(heartbeatRequest({ memberId: 'm2', memberEpoch: 2 }), cfg)
    assert.deepEqual(r3.response.status, [])
    assert.deepEqual(
      r3.records.find((rec) => rec.type === 'StreamsGroupTargetAssignmentMetadata'),
      {
        type: 'StreamsGroupTargetAssignmentMetadata',
        key: { groupId: 'g' },
        value: { assignmentEpoch: 3, assignmentTimestamp: 1010n },
      },
    )
    await h.assertReplayEquivalent()
  })
})
