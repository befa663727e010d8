// StreamsGroup: its describe row (asDescribedGroup, with its members' rows) and its OffsetCommit /
// OffsetFetch validation, driven through the streams manager as the shard drives them; and the
// manager's ListGroups rows.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError } from '../../../../src/coordinator/shard/api-error.js'
import {
  EMPTY_TASK_SET,
  EMPTY_TASKS,
  memberMetadataRecord,
  memberTombstones,
  newMember,
  targetAssignmentMemberRecord,
  targetAssignmentMetadataRecord,
  targetAssignmentMetadataTombstone,
  taskSetFromList,
  taskSetToList,
  tasksTuple,
} from '../../../../src/coordinator/shard/streams/index.js'
import { Harness, heartbeatRequest, joinRequest, NO_DELAY, newManager, topicsImage } from './harness.js'

async function oneMemberGroup(): Promise<Harness> {
  const h = await Harness.start(topicsImage({ foo: 2 }))
  await h.heartbeat(
    joinRequest({ userEndpoint: { host: 'h1', port: 1 }, clientTags: [{ key: 'zone', value: 'a' }] }),
    NO_DELAY,
  )
  return h
}

function thrown(fn: () => void): { code: number; message: string | null } {
  try {
    fn()
  } catch (e) {
    assert.ok(e instanceof ApiError)
    const err = e as ApiError
    return { code: err.errorCode, message: err.errorMessage }
  }
  assert.fail('expected an error')
}

describe('StreamsGroupDescribe (§5.2)', () => {
  it('fills every field of the group and its members; topology description status without a plugin', async () => {
    const h = await oneMemberGroup()
    await h.heartbeat(
      heartbeatRequest({
        memberEpoch: 2,
        activeTasks: [{ subtopologyId: '0', partitions: [0, 1] }],
        taskOffsets: [{ subtopologyId: '0', partition: 1, offset: 7n }],
        taskEndOffsets: [{ subtopologyId: '0', partition: 1, offset: 9n }],
      }),
      NO_DELAY,
    )
    const [row] = h.manager.streamsGroupDescribe(['g'], { includeTopologyDescription: false })
    assert.deepEqual(row, {
      errorCode: 0,
      errorMessage: null,
      groupId: 'g',
      groupState: 'Stable',
      groupEpoch: 2,
      assignmentEpoch: 2,
      topology: {
        epoch: 0,
        subtopologies: [
          {
            subtopologyId: '0',
            sourceTopics: ['foo'],
            repartitionSinkTopics: [],
            stateChangelogTopics: [],
            repartitionSourceTopics: [],
          },
        ],
      },
      members: [
        {
          memberId: 'm1',
          memberEpoch: 2,
          instanceId: null,
          rackId: null,
          clientId: 'client',
          clientHost: '/127.0.0.1',
          topologyEpoch: 0,
          processId: 'p1',
          userEndpoint: { host: 'h1', port: 1 },
          clientTags: [{ key: 'zone', value: 'a' }],
          taskOffsets: [{ subtopologyId: '0', partition: 1, offset: 7n }],
          taskEndOffsets: [{ subtopologyId: '0', partition: 1, offset: 9n }],
          assignment: {
            activeTasks: [{ subtopologyId: '0', partitions: [0, 1] }],
            standbyTasks: [],
            warmupTasks: [],
          },
          targetAssignment: {
            activeTasks: [{ subtopologyId: '0', partitions: [0, 1] }],
            standbyTasks: [],
            warmupTasks: [],
          },
          isClassic: false,
        },
      ],
      authorizedOperations: -2147483648,
      topologyDescription: null,
      topologyDescriptionStatus: 0,
      assignorName: 'sticky',
    })
    const [asked] = h.manager.streamsGroupDescribe(['g'], { includeTopologyDescription: true })
    // NOT_STORED (1) when asked without a plugin; NOT_REQUESTED (0) otherwise.
    assert.equal(asked.topologyDescriptionStatus, 1)
    assert.equal(asked.topologyDescription, null)
  })

  it('unknown and blank ids get per-row errors', async () => {
    const h = await oneMemberGroup()
    const rows = h.manager.streamsGroupDescribe(['nope', ' ', 'g'], { includeTopologyDescription: false })
    assert.deepEqual(
      rows.map((r) => [r.groupId, r.errorCode, r.errorMessage, r.groupState, r.topologyDescriptionStatus]),
      [
        ['nope', 69, 'Group nope not found.', '', 0],
        ['', 24, null, '', 0],
        ['g', 0, null, 'Stable', 0],
      ],
    )
  })
})

describe('ListGroups (§5.3)', () => {
  it('rows, state filter (trimmed, case-insensitive, Kafka names) and type filter', async () => {
    const h = await oneMemberGroup()
    await h.heartbeat(
      joinRequest({
        groupId: 'missing',
        topology: {
          epoch: 0,
          subtopologies: [{ ...joinRequest().topology!.subtopologies[0], sourceTopics: ['absent'] }],
        },
      }),
      NO_DELAY,
    )
    const row = (groupId: string, groupState: string) => ({
      groupId,
      protocolType: 'streams',
      groupState,
      groupType: 'streams',
    })
    assert.deepEqual(h.manager.listGroups(), [row('g', 'Stable'), row('missing', 'NotReady')])
    assert.deepEqual(h.manager.listGroups([' NOT_READY ']), [row('missing', 'NotReady')])
    assert.deepEqual(h.manager.listGroups(['stable']), [row('g', 'Stable')])
    assert.deepEqual(h.manager.listGroups(['NotReady']), [])
    assert.deepEqual(h.manager.listGroups([], ['Streams']), [row('g', 'Stable'), row('missing', 'NotReady')])
    assert.deepEqual(h.manager.listGroups([], ['consumer']), [])
    assert.deepEqual(h.manager.listGroups([], ['bogus']), [])
  })
})

describe('offset commit and fetch validation (§5.6)', () => {
  const commit = (p: Partial<Parameters<Harness['manager']['validateOffsetCommit']>[1]>) => ({
    memberId: 'm1',
    memberEpoch: 2,
    apiVersion: 9,
    isTransactional: false,
    topics: [{ name: 'foo', partitions: [0] }],
    ...p,
  })

  it('epoch checks with Kafka messages', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    await h.heartbeat(joinRequest(), NO_DELAY)
    await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2' }), NO_DELAY)
    // m1 at epoch 2 owns both tasks at assignment epoch 2; the group is at epoch 3.
    const v = (p: Parameters<typeof commit>[0]) => () => h.manager.validateOffsetCommit('g', commit(p))
    v({})()
    assert.deepEqual(thrown(v({ memberId: 'x' })), {
      code: 25,
      message: 'Member x is not a member of group g.',
    })
    assert.deepEqual(thrown(v({ memberId: '', memberEpoch: -1 })), {
      code: 25,
      message: 'Member  is not a member of group g.',
    })
    assert.deepEqual(thrown(v({ apiVersion: 8 })), {
      code: 35,
      message: 'OffsetCommit version 9 or above must be used by members using the streams group protocol',
    })
    // Transactional commits are not subject to the version rule.
    v({ apiVersion: 3, isTransactional: true })()
    assert.deepEqual(thrown(v({ memberEpoch: 5 })), {
      code: 113,
      message: 'Received member epoch 5 is newer than current member epoch 2.',
    })
    assert.deepEqual(thrown(v({ memberEpoch: 1, topics: [{ name: 'bar', partitions: [0] }] })), {
      code: 113,
      message: 'Topic bar is not in the topology.',
    })
    assert.deepEqual(thrown(v({ memberEpoch: 1 })), {
      code: 113,
      message: 'Received member epoch 1 is older than assignment epoch 2 for task 0-0.',
    })
    assert.deepEqual(thrown(v({ memberEpoch: 1, topics: [{ name: 'foo', partitions: [5] }] })), {
      code: 113,
      message: 'Task 0-5 is not assigned or pending revocation for member.',
    })
    assert.deepEqual(
      thrown(() => h.manager.validateOffsetCommit('nope', commit({}))),
      {
        code: 69,
        message: 'Group nope not found.',
      },
    )

    h.manager.validateOffsetFetch('g', null, -1)
    h.manager.validateOffsetFetch('g', 'm1', 2)
    assert.deepEqual(
      thrown(() => h.manager.validateOffsetFetch('g', 'm1', 1)),
      {
        code: 113,
        message: 'The received member epoch 1 does not match the expected member epoch 2.',
      },
    )
    assert.deepEqual(
      thrown(() => h.manager.validateOffsetFetch('g', 'zz', 1)),
      {
        code: 25,
        message: 'Member zz is not a member of group g.',
      },
    )
  })

  it('an empty group accepts a commit with member epoch < 0 (admin / simple commit)', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    await h.heartbeat(joinRequest(), NO_DELAY)
    await h.heartbeat(heartbeatRequest({ memberEpoch: -1 }), NO_DELAY)
    assert.equal(h.manager.group('g')!.state(), 'Empty')
    h.manager.validateOffsetCommit('g', commit({ memberId: '', memberEpoch: -1, apiVersion: 2 }))
    assert.deepEqual(
      thrown(() => h.manager.validateOffsetCommit('g', commit({ memberId: '', memberEpoch: 0 }))),
      {
        code: 25,
        message: 'Member  is not a member of group g.',
      },
    )
  })
})

describe('targets kept with the members', () => {
  it('a target recorded before its member moves into its slot; tombstones remove both', () => {
    const m = newManager(topicsImage({ foo: 2 }))
    const target = tasksTuple(
      taskSetFromList([{ subtopologyId: '0', partitions: [1] }]),
      EMPTY_TASK_SET,
      EMPTY_TASK_SET,
    )
    m.replay(targetAssignmentMetadataRecord('g', 1, 0n))
    m.replay(targetAssignmentMemberRecord('g', 'm1', target))
    const g = m.group('g')!
    const targets = () => [...g.targetAssignments].map(([id, t]) => [id, taskSetToList(t.active)])
    assert.deepEqual(targets(), [['m1', [{ subtopologyId: '0', partitions: [1] }]]])
    m.replay(memberMetadataRecord('g', { ...newMember('m1'), processId: 'p1' }))
    m.replay(memberMetadataRecord('g', { ...newMember('m2'), processId: 'p2' }))
    m.replay(targetAssignmentMemberRecord('g', 'm2', EMPTY_TASKS))
    assert.deepEqual(targets(), [
      ['m1', [{ subtopologyId: '0', partitions: [1] }]],
      ['m2', []],
    ])
    assert.equal(g.targetAssignments.size, 2)
    for (const id of ['m1', 'm2']) for (const r of memberTombstones('g', id)) m.replay(r)
    assert.deepEqual([g.targetAssignments.size, g.hasTarget('m1'), g.hasTarget('m2')], [0, false, false])
    m.replay(targetAssignmentMetadataTombstone('g'))
    assert.ok(g.canBeRemoved())
  })
})
