import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { StreamsGroupHeartbeatRequest } from '../../../../src/coordinator/shard/streams/index.js'
import { Harness, heartbeatRequest, joinRequest, NO_DELAY, topicsImage } from './harness.js'

type Topology = NonNullable<StreamsGroupHeartbeatRequest['topology']>
type Sub = Topology['subtopologies'][number]
const sub = (p: Partial<Sub> & { subtopologyId: string }): Sub => ({
  sourceTopics: [],
  sourceTopicRegex: [],
  stateChangelogTopics: [],
  repartitionSinkTopics: [],
  repartitionSourceTopics: [],
  copartitionGroups: [],
  ...p,
})
const internal = (name: string, partitions = 0) => ({
  name,
  partitions,
  replicationFactor: 0,
  topicConfigs: [],
})
const topology = (...subtopologies: Sub[]): Topology => ({ epoch: 0, subtopologies })

describe('repartition topic partition counts (§3.5 step 2)', () => {
  it('a repartition topic without a count takes the writer’s source count; it is created and then used', async () => {
    const h = await Harness.start(topicsImage({ foo: 3 }))
    const t = topology(
      sub({ subtopologyId: '0', sourceTopics: ['foo'], repartitionSinkTopics: ['rep'] }),
      sub({ subtopologyId: '1', repartitionSourceTopics: [internal('rep')] }),
    )
    const r = await h.heartbeat(joinRequest({ topology: t }), NO_DELAY)
    assert.deepEqual(r.internalTopicsToCreate, [
      { name: 'rep', numPartitions: 3, replicationFactor: -1, configs: [] },
    ])
    assert.deepEqual(r.response.status, [{ statusCode: 3, statusDetail: 'Internal topics are missing: rep' }])
    h.image.set('rep', 3)
    h.manager.onNewTopicsImage(h.image, ['rep'])
    const r2 = await h.heartbeat(heartbeatRequest({ memberEpoch: r.response.memberEpoch }), NO_DELAY)
    assert.deepEqual(r2.response.status, [])
    assert.deepEqual(r2.response.activeTasks, [
      { subtopologyId: '0', partitions: [0, 1, 2] },
      { subtopologyId: '1', partitions: [0, 1, 2] },
    ])
    await h.assertReplayEquivalent()
  })

  it('a loop of repartition topics without counts cannot be resolved: STREAMS_INVALID_TOPOLOGY, nothing written', async () => {
    const h = await Harness.start(topicsImage({}))
    const t = topology(
      sub({ subtopologyId: '0', repartitionSourceTopics: [internal('a')], repartitionSinkTopics: ['b'] }),
      sub({ subtopologyId: '1', repartitionSourceTopics: [internal('b')], repartitionSinkTopics: ['a'] }),
    )
    const r = await h.heartbeat(joinRequest({ topology: t }), NO_DELAY)
    assert.equal(r.response.errorCode, 130)
    assert.equal(
      r.response.errorMessage,
      'Failed to compute number of partitions for all repartition topics. There may be loops in the topology that cannot be resolved.',
    )
    assert.deepEqual(r.records, [])
    assert.equal(h.manager.group('g'), undefined)
  })

  it('a repartition source topic that is never a sink: STREAMS_INVALID_TOPOLOGY', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const t = topology(
      sub({ subtopologyId: '0', sourceTopics: ['foo'] }),
      sub({ subtopologyId: '1', repartitionSourceTopics: [internal('orphan')] }),
    )
    const r = await h.heartbeat(joinRequest({ topology: t }), NO_DELAY)
    assert.equal(r.response.errorCode, 130)
    assert.equal(
      r.response.errorMessage,
      'Failed to compute number of partitions for all repartition topics, because a repartition source topic is never used as a sink topic.',
    )
  })
})

describe('co-partitioning (§3.5 step 3)', () => {
  it('source topics with different counts: INCORRECTLY_PARTITIONED_TOPICS with the sorted map', async () => {
    const h = await Harness.start(topicsImage({ foo: 2, bar: 5, baz: 3 }))
    const t = topology(
      sub({
        subtopologyId: '0',
        sourceTopics: ['foo', 'bar', 'baz'],
        copartitionGroups: [{ sourceTopics: [0, 1, 2], sourceTopicRegex: [], repartitionSourceTopics: [] }],
      }),
    )
    const r = await h.heartbeat(joinRequest({ topology: t }), NO_DELAY)
    assert.equal(r.response.errorCode, 0)
    assert.deepEqual(r.response.status, [
      {
        statusCode: 2,
        statusDetail: 'Following topics do not have the same number of partitions: [{bar=5, baz=3, foo=2}]',
      },
    ])
    assert.equal(h.manager.group('g')!.state(), 'NotReady')
    await h.assertReplayEquivalent()
  })

  it('a fixed repartition topic that differs from its co-partitioned source', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const t = topology(
      sub({ subtopologyId: '0', sourceTopics: ['foo'], repartitionSinkTopics: ['rep'] }),
      sub({
        subtopologyId: '1',
        sourceTopics: ['foo'],
        repartitionSourceTopics: [internal('rep', 4)],
        copartitionGroups: [{ sourceTopics: [0], sourceTopicRegex: [], repartitionSourceTopics: [0] }],
      }),
    )
    const r = await h.heartbeat(joinRequest({ topology: t }), NO_DELAY)
    assert.deepEqual(r.response.status, [
      {
        statusCode: 2,
        statusDetail:
          "Number of partitions [4] of repartition topic [rep] doesn't match number of partitions [2] of the source topic.",
      },
    ])
  })
})

describe('endpoint information for interactive queries (§3.16) and response fields (§3.15)', () => {
  const ep1 = { host: 'h1', port: 1 }
  const ep2 = { host: 'h2', port: 2 }

  it('lists every member with an endpoint (the caller last) when the client epoch differs; bumps on endpoint or task changes', async () => {
    const h = await Harness.start(topicsImage({ foo: 2, bar: 1 }))
    const t = topology(sub({ subtopologyId: '0', sourceTopics: ['foo', 'bar'] }))
    const j1 = await h.heartbeat(joinRequest({ topology: t, userEndpoint: ep1 }), NO_DELAY)
    // A brand-new group answers epoch 0; the client (-1) gets the list.
    assert.equal(j1.response.endpointInformationEpoch, 0)
    assert.deepEqual(j1.response.partitionsByUserEndpoint, [
      {
        userEndpoint: ep1,
        activePartitions: [
          { topic: 'bar', partitions: [0] },
          { topic: 'foo', partitions: [0, 1] },
        ],
        standbyPartitions: [],
      },
    ])
    const g = h.manager.group('g')!
    assert.equal(g.endpointEpoch, 0, 'the bump on the creating heartbeat went to the temporary group')

    // m2 joins with an endpoint: +1 on the group.
    const j2 = await h.heartbeat(
      joinRequest({ memberId: 'm2', processId: 'p2', topology: t, userEndpoint: ep2 }),
      NO_DELAY,
    )
    assert.equal(j2.response.endpointInformationEpoch, 1)
    assert.deepEqual(
      j2.response.partitionsByUserEndpoint?.map((e) => e.userEndpoint),
      [ep1, ep2],
    )
    // Same epoch as the group's: no list.
    const same = await h.heartbeat(
      heartbeatRequest({ memberId: 'm2', memberEpoch: j2.response.memberEpoch, endpointInformationEpoch: 1 }),
      NO_DELAY,
    )
    assert.equal(same.response.partitionsByUserEndpoint, null)
    // m1 revokes what the new target takes away: its tasks change and it has an endpoint, so +1.
    const before = g.endpointEpoch
    const m1 = g.member('m1')!
    const r = await h.heartbeat(
      heartbeatRequest({
        memberEpoch: m1.memberEpoch,
        endpointInformationEpoch: before,
        activeTasks: [{ subtopologyId: '0', partitions: [0, 1] }],
      }),
      NO_DELAY,
    )
    assert.notEqual(r.response.activeTasks, null, 'tasks changed: all three lists are sent')
    assert.deepEqual(r.response.standbyTasks, [])
    assert.equal(g.endpointEpoch, before + 1)
    assert.equal(r.response.endpointInformationEpoch, before + 1)
    assert.deepEqual(
      r.response.partitionsByUserEndpoint?.map((e) => e.userEndpoint),
      [ep2, ep1],
    )
    // Nothing changed: no tasks, no endpoint list.
    const quiet = await h.heartbeat(
      heartbeatRequest({
        memberEpoch: r.response.memberEpoch,
        endpointInformationEpoch: g.endpointEpoch,
        activeTasks: r.response.activeTasks,
      }),
      NO_DELAY,
    )
    assert.equal(quiet.response.activeTasks, null)
    assert.equal(quiet.response.standbyTasks, null)
    assert.equal(quiet.response.warmupTasks, null)
    assert.equal(quiet.response.partitionsByUserEndpoint, null)
    assert.deepEqual(quiet.response.status, [])
    await h.assertReplayEquivalent()
  })

  it('fencing another member does not bump the endpoint epoch', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    await h.heartbeat(joinRequest({ userEndpoint: ep1 }), NO_DELAY)
    await h.heartbeat(joinRequest({ memberId: 'm2', processId: 'p2', userEndpoint: ep2 }), NO_DELAY)
    const g = h.manager.group('g')!
    const before = g.endpointEpoch
    await h.heartbeat(heartbeatRequest({ memberId: 'm2', memberEpoch: -1 }), NO_DELAY)
    assert.equal(g.endpointEpoch, before)
  })
})
