import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import {
  Admin,
  IllegalStateError,
  KafkaError,
  topologyDescriptionStatusForId,
  UnsupportedVersionError,
} from '../../../src/clients/admin/index.js'
import {
  createStreamsGroupDescribeResponseDescribedGroup,
  type StreamsGroupDescribeResponseDescribedGroup,
  type StreamsGroupDescribeResponseTopologyDescriptionNode,
} from '../../../src/protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { FakeBroker } from '../fake-broker.js'

const open: Array<{ close(): Promise<void> }> = []
async function setup(
  opts?: ConstructorParameters<typeof FakeBroker>[0],
): Promise<{ b: FakeBroker; admin: Admin }> {
  const b = await FakeBroker.start(opts)
  const admin = Admin.create({
    bootstrapServers: `127.0.0.1:${b.port}`,
    retryBackoffMs: 5,
    retryBackoffMaxMs: 20,
  })
  open.push(admin, b)
  return { b, admin }
}
after(async () => {
  for (const o of open) await o.close()
})

function node(
  name: string,
  nodeType: number,
  extra: Partial<StreamsGroupDescribeResponseTopologyDescriptionNode> = {},
): StreamsGroupDescribeResponseTopologyDescriptionNode {
  return { name, nodeType, sourceTopics: [], sinkTopic: null, stores: [], successors: [], ...extra }
}

function group(
  groupId: string,
  init: Partial<StreamsGroupDescribeResponseDescribedGroup> = {},
): StreamsGroupDescribeResponseDescribedGroup {
  return createStreamsGroupDescribeResponseDescribedGroup({
    groupId,
    groupState: 'Stable',
    groupEpoch: 3,
    assignmentEpoch: 3,
    topology: { epoch: 0, subtopologies: [] },
    ...init,
  })
}

describe('describeStreamsGroups', () => {
  it('fails every group of the batch with UnsupportedVersion against a describe-v0-only broker', async () => {
    const { b, admin } = await setup()
    b.apiVersions.set(89, { min: 0, max: 0 })
    b.on(89, (r) => ({ groups: r.request.groupIds.map((g) => group(g)) }))
    const result = admin.describeStreamsGroups(['a', 'b'], { includeTopologyDescription: true })
    for (const g of ['a', 'b']) {
      await assert.rejects(
        result.get(g),
        (e: unknown) =>
          e instanceof UnsupportedVersionError &&
          e.toString() ===
            'org.apache.kafka.common.errors.UnsupportedVersionException: Attempted to write a non-default includeTopologyDescription at version 0',
      )
    }
    await assert.rejects(result.all(), UnsupportedVersionError)
    assert.equal(b.requestsOf(89).length, 0)
    // Without the flag, v0 is sent and the status is NOT_REQUESTED.
    const plain = await admin.describeStreamsGroups(['a']).all()
    assert.equal(plain.get('a')!.topologyDescriptionStatus, 'NOT_REQUESTED')
    assert.equal(plain.get('a')!.topologyDescription, null)
    assert.equal(b.requestsOf(89)[0]!.version, 0)
  })

  it('returns the description with predecessors rebuilt, and every status', async () => {
    const { b, admin } = await setup()
    b.on(89, (r) => {
      assert.equal(r.version, 1)
      assert.equal(r.request.includeTopologyDescription, true)
      return {
        groups: [
          group('avail', {
            topologyDescriptionStatus: 3,
            topologyDescription: {
              subtopologies: [
                {
                  subtopologyId: '0',
                  nodes: [
                    node('p', 2, { stores: ['s', 's'], successors: ['k', 'ghost'] }),
                    node('k', 3, { sinkTopic: null }),
                    node('src', 1, { sourceTopics: ['in'], successors: ['p'] }),
                  ],
                },
              ],
              globalStores: [
                {
                  source: node('gs', 1, { sourceTopics: ['g'], successors: ['gp'] }),
                  processor: node('gp', 2, { stores: ['gst'] }),
                },
              ],
            },
          }),
          group('notstored', { topologyDescriptionStatus: 1 }),
          group('error', { topologyDescriptionStatus: 2 }),
          // a description with a non-AVAILABLE status is dropped
          group('dropped', {
            topologyDescriptionStatus: 1,
            topologyDescription: { subtopologies: [], globalStores: [] },
          }),
        ],
      }
    })
    const all = await admin
      .describeStreamsGroups(['avail', 'notstored', 'error', 'dropped'], { includeTopologyDescription: true })
      .all()
    const d = all.get('avail')!
    assert.equal(d.topologyDescriptionStatus, 'AVAILABLE')
    assert.deepEqual(d.topologyDescription, {
      subtopologies: [
        {
          id: '0',
          nodes: [
            {
              type: 'processor',
              name: 'p',
              stores: ['s'],
              successors: ['k', 'ghost'],
              predecessors: ['src'],
            },
            { type: 'sink', name: 'k', topic: null, successors: [], predecessors: ['p'] },
            { type: 'source', name: 'src', topics: ['in'], successors: ['p'], predecessors: [] },
          ],
        },
      ],
      globalStores: [
        {
          source: { type: 'source', name: 'gs', topics: ['g'], successors: ['gp'], predecessors: [] },
          processor: { type: 'processor', name: 'gp', stores: ['gst'], successors: [], predecessors: ['gs'] },
        },
      ],
    })
    assert.equal(all.get('notstored')!.topologyDescriptionStatus, 'NOT_STORED')
    assert.equal(all.get('error')!.topologyDescriptionStatus, 'ERROR')
    assert.equal(all.get('dropped')!.topologyDescription, null)
    assert.equal(d.coordinator.port, b.port)
  })

  it('fails a group on malformed answers with Kafka messages', async () => {
    const { b, admin } = await setup()
    b.on(89, () => ({
      groups: [
        group('nulltopo', { topology: null }),
        group('badstatus', { topologyDescriptionStatus: 9 }),
        group('missing', { topologyDescriptionStatus: 3 }),
        group('badnode', {
          topologyDescriptionStatus: 3,
          topologyDescription: {
            subtopologies: [{ subtopologyId: '0', nodes: [node('x', 7)] }],
            globalStores: [],
          },
        }),
        group('badglobal', {
          topologyDescriptionStatus: 3,
          topologyDescription: {
            subtopologies: [],
            globalStores: [{ source: node('a', 2), processor: node('b', 2) }],
          },
        }),
        group('notfound', { errorCode: 69, errorMessage: 'Group notfound not found.' }),
      ],
    }))
    const r = admin.describeStreamsGroups(
      ['nulltopo', 'badstatus', 'missing', 'badnode', 'badglobal', 'notfound'],
      {
        includeTopologyDescription: true,
      },
    )
    const expect = async (g: string, msg: string, cls = IllegalStateError as typeof KafkaError) =>
      assert.rejects(r.get(g), (e: unknown) => e instanceof cls && e.message === msg)
    await expect('nulltopo', 'Topology information is missing')
    await expect('badstatus', 'Unknown topology description status 9')
    await expect('missing', 'Topology description is missing despite status AVAILABLE')
    await expect('badnode', 'Unknown topology node type: 7')
    await expect('badglobal', 'Global store must be composed of a source and a processor node.')
    await assert.rejects(
      r.get('notfound'),
      (e: unknown) =>
        e instanceof KafkaError &&
        e.toString() === 'org.apache.kafka.common.errors.GroupIdNotFoundException: Group notfound not found.',
    )
  })

  it('retries COORDINATOR_LOAD_IN_PROGRESS and rediscovers on NOT_COORDINATOR', async () => {
    const { b, admin } = await setup()
    let n = 0
    b.on(89, () => {
      n++
      if (n === 1) return { groups: [group('g', { errorCode: 14 })] }
      if (n === 2) return { groups: [group('g', { errorCode: 16 })] }
      return { groups: [group('g')] }
    })
    const d = await admin.describeStreamsGroups(['g']).get('g')
    assert.equal(d.groupState, 'Stable')
    assert.equal(n, 3)
    assert.equal(b.requestsOf(10).length, 2)
  })

  it('status ids follow Kafka and unknown ids are rejected', () => {
    assert.deepEqual([0, 1, 2, 3].map(topologyDescriptionStatusForId), [
      'NOT_REQUESTED',
      'NOT_STORED',
      'ERROR',
      'AVAILABLE',
    ])
    assert.throws(
      () => topologyDescriptionStatusForId(4),
      /^RangeError: Unknown topology description status id: 4$/,
    )
  })
})

describe('other admin calls', () => {
  it('deleteGroups surfaces the v3 per-group ErrorMessage', async () => {
    const { b, admin } = await setup()
    b.on(42, (r) => ({
      results: r.request.groupsNames.map((g) =>
        g === 'bad'
          ? { groupId: g, errorCode: 134, errorMessage: 'backend down' }
          : { groupId: g, errorCode: 0, errorMessage: null },
      ),
    }))
    const r = admin.deleteGroups(['ok', 'bad'])
    await r.get('ok')
    await assert.rejects(
      r.get('bad'),
      (e: unknown) =>
        e instanceof KafkaError && e.code === 134 && e.brokerMessage === 'backend down' && !e.retriable,
    )
    assert.equal(b.requestsOf(42)[0]!.version, 3)
  })

  it('listGroups sends the type and state filters', async () => {
    const { b, admin } = await setup()
    b.on(16, (r) => ({
      groups: [{ groupId: 's1', protocolType: 'streams', groupState: 'Stable', groupType: 'streams' }].filter(
        (g) => r.request.typesFilter.length === 0 || r.request.typesFilter.includes(g.groupType),
      ),
    }))
    const gs = await admin.listGroups({ types: ['STREAMS'], states: ['stable'] })
    assert.deepEqual(gs, [
      { groupId: 's1', protocolType: 'streams', groupState: 'Stable', groupType: 'streams' },
    ])
    const req = b.requestsOf(16)[0]!.request as { typesFilter: string[]; statesFilter: string[] }
    assert.deepEqual(req.typesFilter, ['streams'])
    assert.deepEqual(req.statesFilter, ['Stable'])
  })

  it('listStreamsGroupOffsets reads OffsetFetch v8+ group results sorted', async () => {
    const { b, admin } = await setup()
    b.on(9, (r) => ({
      groups: [
        {
          groupId: r.request.groups[0]!.groupId,
          errorCode: 0,
          topics: [
            {
              name: 'b',
              topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
              partitions: [
                {
                  partitionIndex: 1,
                  committedOffset: 5n,
                  committedLeaderEpoch: -1,
                  metadata: '',
                  errorCode: 0,
                },
                {
                  partitionIndex: 0,
                  committedOffset: 7n,
                  committedLeaderEpoch: -1,
                  metadata: '',
                  errorCode: 0,
                },
              ],
            },
          ],
        },
      ],
    }))
    const offs = await admin.listStreamsGroupOffsets('g')
    assert.deepEqual(
      offs.map((o) => [o.topic, o.partition, o.offset]),
      [
        ['b', 0, 7n],
        ['b', 1, 5n],
      ],
    )
    assert.equal(b.requestsOf(9)[0]!.version, 9)
  })

  it('createTopics reports per-topic errors', async () => {
    const { b, admin } = await setup()
    b.on(19, (r) => ({
      topics: r.request.topics.map((t) => ({
        name: t.name,
        topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        errorCode: t.name === 'dup' ? 36 : 0,
        errorMessage: t.name === 'dup' ? "Topic 'dup' already exists." : null,
        topicConfigErrorCode: 0,
        numPartitions: t.numPartitions,
        replicationFactor: t.replicationFactor,
        configs: [],
      })),
    }))
    const r = admin.createTopics([{ name: 'new', numPartitions: 3 }, { name: 'dup' }])
    await r.get('new')
    await assert.rejects(r.get('dup'), /Topic 'dup' already exists./)
  })
})
