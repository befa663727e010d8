import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import { Harness, heartbeatRequest, joinRequest, NO_DELAY, topicsImage } from './harness.js'

const sub = (
  p: Partial<NonNullable<ReturnType<typeof joinRequest>['topology']>['subtopologies'][number]>,
) => ({
  subtopologyId: '0',
  sourceTopics: ['foo'],
  sourceTopicRegex: [],
  stateChangelogTopics: [],
  repartitionSinkTopics: [],
  repartitionSourceTopics: [],
  copartitionGroups: [],
  ...p,
})

describe('topic configuration statuses', () => {
  it('MISSING_SOURCE_TOPICS: NotReady, epoch 2, no tasks', async () => {
    const h = await Harness.start(topicsImage({}))
    const r = await h.heartbeat(joinRequest(), NO_DELAY)
    assert.deepEqual(r.response.status, [{ statusCode: 1, statusDetail: 'Source topics foo are missing.' }])
    assert.equal(r.response.memberEpoch, 2)
    assert.deepEqual(r.response.activeTasks, [])
    assert.equal(h.manager.group('g')!.state(), 'NotReady')
    await h.assertReplayEquivalent()
  })

  it('INCORRECTLY_PARTITIONED_TOPICS for a co-partition group with different counts', async () => {
    const h = await Harness.start(topicsImage({ a: 3, b: 5 }))
    const topology = {
      epoch: 0,
      subtopologies: [
        sub({
          sourceTopics: ['a', 'b'],
          copartitionGroups: [{ sourceTopics: [0, 1], sourceTopicRegex: [], repartitionSourceTopics: [] }],
        }),
      ],
    }
    const r = await h.heartbeat(joinRequest({ topology }), NO_DELAY)
    assert.deepEqual(r.response.status, [
      {
        statusCode: 2,
        statusDetail: 'Following topics do not have the same number of partitions: [{a=3, b=5}]',
      },
    ])
  })

  it('MISSING_INTERNAL_TOPICS lists the topics to create; they appearing makes the group ready', async () => {
    const h = await Harness.start(topicsImage({ foo: 4 }))
    const changelog = { name: 'app-store-changelog', partitions: 0, replicationFactor: 0, topicConfigs: [] }
    const topology = { epoch: 0, subtopologies: [sub({ stateChangelogTopics: [changelog] })] }
    const r = await h.heartbeat(joinRequest({ topology }), NO_DELAY)
    assert.deepEqual(r.response.status, [
      { statusCode: 3, statusDetail: 'Internal topics are missing: app-store-changelog' },
    ])
    assert.deepEqual(r.internalTopicsToCreate, [
      { name: 'app-store-changelog', numPartitions: 4, replicationFactor: -1, configs: [] },
    ])
    h.image.set('app-store-changelog', 4)
    h.manager.onNewTopicsImage(h.image, ['app-store-changelog'])
    const r2 = await h.heartbeat(heartbeatRequest({ memberEpoch: 2 }), NO_DELAY)
    assert.deepEqual(r2.response.status, [])
    assert.equal(r2.response.memberEpoch, 3)
    assert.equal(r2.response.activeTasks![0]!.partitions.length, 4)
    await h.assertReplayEquivalent()
  })
})

describe('topology epoch upgrades (Topograph D4)', () => {
  it('epoch+1 join replaces the topology; old members see STALE_TOPOLOGY; lower and skipped epochs fail', async () => {
    const h = await Harness.start(topicsImage({ foo: 2, bar: 2 }))
    await h.heartbeat(joinRequest(), NO_DELAY)
    await h.heartbeat(heartbeatRequest({ memberEpoch: 2 }), NO_DELAY)
    const v1 = { epoch: 1, subtopologies: [sub({}), sub({ subtopologyId: '1', sourceTopics: ['bar'] })] }
    const up = await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2', topology: v1 }), NO_DELAY)
    assert.equal(up.response.errorCode, 0)
    assert.deepEqual(up.records[1], { type: 'StreamsGroupTopology', key: { groupId: 'g' }, value: v1 })
    assert.equal(h.manager.group('g')!.topology!.epoch, 1)

    const old = await h.heartbeat(
      heartbeatRequest({
        memberEpoch: 2,
        activeTasks: [{ subtopologyId: '0', partitions: [0, 1] }],
        standbyTasks: [],
        warmupTasks: [],
      }),
      NO_DELAY,
    )
    assert.deepEqual(old.response.status?.[0], {
      statusCode: 0,
      statusDetail: "The member's topology epoch 0 is behind the group's topology epoch 1.",
    })
    const target = h.manager.group('g')!.targetAssignment('m1')
    const m1 = h.manager.group('g')!.member('m1')!
    // Whatever the target holds, the stale member holds nothing it did not already own.
    m1.assignedTasks.active.forEach((id, p) => {
      assert.ok(id === '0' && p <= 1)
    })
    assert.ok(target.active.size > 0 || m1.assignedTasks.active.size === 0)

    const fenced = await h.heartbeat(
      joinRequest({ memberId: 'm3', topology: joinRequest().topology }),
      NO_DELAY,
    )
    assert.equal(fenced.response.errorCode, ErrorCode.STREAMS_TOPOLOGY_FENCED)
    const skipped = await h.heartbeat(
      joinRequest({ memberId: 'm3', topology: { ...v1, epoch: 3 } }),
      NO_DELAY,
    )
    assert.equal(skipped.response.errorCode, ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH)
    const sameEpochDifferent = await h.heartbeat(
      joinRequest({ memberId: 'm3', topology: { epoch: 1, subtopologies: [sub({})] } }),
      NO_DELAY,
    )
    assert.equal(sameEpochDifferent.response.errorCode, ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH)
    assert.deepEqual(sameEpochDifferent.records, [])
    await h.assertReplayEquivalent()
  })
})

describe('internal topic configs in the topology', () => {
  it('are part of the topology: other configs at the same epoch are refused, at the next one taken', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const changelog = (topicConfigs: { key: string; value: string }[]) => ({
      name: 'app-store-changelog',
      partitions: 0,
      replicationFactor: -1,
      topicConfigs,
    })
    const bare = { epoch: 0, subtopologies: [sub({ stateChangelogTopics: [changelog([])] })] }
    const compacted = [
      { key: 'cleanup.policy', value: 'compact' },
      { key: 'message.timestamp.type', value: 'CreateTime' },
    ]
    const first = await h.heartbeat(joinRequest({ topology: bare }), NO_DELAY)
    assert.equal(first.response.errorCode, 0)
    const same = await h.heartbeat(
      joinRequest({
        memberId: 'm2',
        processId: 'p2',
        topology: { epoch: 0, subtopologies: [sub({ stateChangelogTopics: [changelog(compacted)] })] },
      }),
      NO_DELAY,
    )
    assert.equal(same.response.errorCode, ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH)
    assert.equal(
      same.response.errorMessage,
      "The topology differs from the group's topology at the same epoch 0; a changed topology needs epoch 1.",
    )
    assert.deepEqual(same.records, [])
    const next = { epoch: 1, subtopologies: [sub({ stateChangelogTopics: [changelog(compacted)] })] }
    const up = await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2', topology: next }), NO_DELAY)
    assert.equal(up.response.errorCode, 0)
    assert.deepEqual(up.records[1], { type: 'StreamsGroupTopology', key: { groupId: 'g' }, value: next })
    // The topic to create carries the configs.
    assert.deepEqual(up.internalTopicsToCreate, [
      {
        name: 'app-store-changelog',
        numPartitions: 2,
        replicationFactor: -1,
        configs: [
          { name: 'cleanup.policy', value: 'compact' },
          { name: 'message.timestamp.type', value: 'CreateTime' },
        ],
      },
    ])
    await h.assertReplayEquivalent()
  })
})

describe('request validation messages (§2.1)', () => {
  const cases: [string, Parameters<typeof joinRequest>[0], number, string][] = [
    [
      'regex',
      { topology: { epoch: 0, subtopologies: [sub({ sourceTopicRegex: ['x.*'] })] } },
      42,
      'Regular expressions for source topics are not supported yet.',
    ],
    ['member id', { memberId: '  ' }, 42, "MemberId can't be empty."],
    ['group id', { groupId: '' }, 42, "GroupId can't be empty."],
    ['instance id', { instanceId: ' ' }, 42, "InstanceId can't be empty."],
    ['rack id', { rackId: '' }, 42, "RackId can't be empty."],
    [
      'rebalance timeout',
      { rebalanceTimeoutMs: -1 },
      42,
      'RebalanceTimeoutMs must be provided in first request.',
    ],
    ['active', { activeTasks: null }, 42, 'ActiveTasks must be empty when (re-)joining.'],
    [
      'standby',
      { standbyTasks: [{ subtopologyId: '0', partitions: [0] }] },
      42,
      'StandbyTasks must be empty when (re-)joining.',
    ],
    ['warmup', { warmupTasks: null }, 42, 'WarmupTasks must be empty when (re-)joining.'],
    ['topology', { topology: null }, 42, 'Topology must be non-null when (re-)joining.'],
    [
      'changelog count',
      {
        topology: {
          epoch: 0,
          subtopologies: [
            sub({
              stateChangelogTopics: [{ name: 'c', partitions: 3, replicationFactor: 0, topicConfigs: [] }],
            }),
          ],
        },
      },
      130,
      'Changelog topic c must have an undefined partition count, but it is set to 3.',
    ],
    ['static leave', { memberEpoch: -2, topology: null }, 42, "InstanceId can't be null."],
    [
      'epoch',
      { memberEpoch: -3, topology: null },
      42,
      'MemberEpoch is -3, but must be greater than or equal to -2.',
    ],
    [
      'partial lists',
      { memberEpoch: 1, topology: null, standbyTasks: null },
      42,
      'If one task-type is non-null, all must be non-null.',
    ],
    ['topology on heartbeat', { memberEpoch: 1 }, 42, 'Topology can only be provided when (re-)joining.'],
    [
      'internal topic',
      { topology: { epoch: 0, subtopologies: [sub({ sourceTopics: ['__consumer_offsets'] })] } },
      130,
      'Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is prohibited.',
    ],
    [
      'invalid name',
      { topology: { epoch: 0, subtopologies: [sub({ sourceTopics: ['a b'] })] } },
      130,
      'Topic names a b are not valid topic names.',
    ],
  ]
  for (const [name, p, code, message] of cases) {
    it(name, async () => {
      const h = await Harness.start(topicsImage({ foo: 1 }))
      const r = await h.heartbeat(joinRequest(p))
      assert.equal(r.response.errorCode, code)
      assert.equal(r.response.errorMessage, message)
      assert.deepEqual(r.records, [])
    })
  }

  it('owned tasks outside the configured topology', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    await h.heartbeat(joinRequest(), NO_DELAY)
    const bad = async (activeTasks: { subtopologyId: string; partitions: number[] }[]) =>
      (
        await h.heartbeat(
          heartbeatRequest({ memberEpoch: 2, activeTasks, standbyTasks: [], warmupTasks: [] }),
          NO_DELAY,
        )
      ).response.errorMessage
    assert.equal(
      await bad([{ subtopologyId: 'x', partitions: [0] }]),
      'Subtopology x does not exist in the topology.',
    )
    assert.equal(
      await bad([{ subtopologyId: '0', partitions: [2] }]),
      'Task 2 for subtopology 0 is invalid. Number of tasks for this subtopology: 2',
    )
  })
})
