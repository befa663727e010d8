// ConsoleApi's topics and lag over a ConsoleSource that gives answers a live cluster gives only by
// accident: a topic that cannot be described, a partition whose ListOffsets failed, log directories
// that cannot be described, nothing committed, a committed topic the topology does not read, and a
// source without the offset methods. Classic groups: listed with their type and described with
// DescribeGroups, a group page falling back to it, and an id neither describe knows.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  type ClassicGroupDescription,
  KafkaError,
  type StreamsGroupDescription,
} from '../../src/clients/admin/index.js'
import { ConsoleApi, type ConsoleApiError } from '../../src/console/api.js'
import type { CommittedOffset, ConsoleSource, TopicOffsetsOutcome } from '../../src/console/source.js'
import { group } from './fixtures.js'

const NOW = new Date('2026-01-02T03:04:05.000Z')

function source(opts: {
  readonly topics?: readonly TopicOffsetsOutcome[]
  readonly sizes?: ReadonlyMap<string, number> | Error
  readonly committed?: readonly CommittedOffset[]
  readonly groups?: readonly StreamsGroupDescription[]
  readonly withOffsets?: boolean
}): ConsoleSource & { asked: (readonly string[] | null)[] } {
  const asked: (readonly string[] | null)[] = []
  const base = {
    asked,
    listStreamsGroups: async () => [],
    describeStreamsGroups: async (ids: readonly string[]) =>
      new Map(
        ids.map((id) => {
          const g = (opts.groups ?? []).find((x) => x.groupId === id)
          return [id, g === undefined ? { error: new Error(`no ${id}`) } : { value: g }] as const
        }),
      ),
    close: async () => undefined,
  }
  if (opts.withOffsets === false) return base
  return {
    ...base,
    topicOffsets: async (topics: readonly string[] | null) => {
      asked.push(topics)
      const all = opts.topics ?? []
      return topics === null ? all : all.filter((t) => topics.includes(t.topic))
    },
    logSizes: async () => {
      if (opts.sizes instanceof Error) throw opts.sizes
      return opts.sizes ?? new Map()
    },
    committedOffsets: async () => opts.committed ?? [],
  }
}

const withSources = (
  g: StreamsGroupDescription,
  topics: string[],
  repartition: string[],
): StreamsGroupDescription => ({
  ...g,
  subtopologies: [
    {
      subtopologyId: '0',
      sourceTopics: topics,
      repartitionSinkTopics: [],
      stateChangelogTopics: [],
      repartitionSourceTopics: repartition.map((name) => ({
        name,
        partitions: 2,
        replicationFactor: 1,
        topicConfigs: {},
      })),
    },
  ],
})

describe('console API: topics', () => {
  it('merges offsets and sizes; a failed partition, topic or size reads as null with the reason', async () => {
    const api = new ConsoleApi(
      source({
        topics: [
          {
            topic: 'b',
            partitions: [
              { partition: 1, logStartOffset: 4, logEndOffset: 9 },
              { partition: 0, logStartOffset: null, logEndOffset: null },
            ],
          },
          {
            topic: 'a',
            error: new KafkaError('Not authorized', { errorName: 'TOPIC_AUTHORIZATION_FAILED' }),
          },
        ],
        sizes: new Map([['b-1', 1234]]),
      }),
      { now: () => NOW },
    )
    assert.deepEqual(await api.topics(), {
      topics: [
        {
          name: 'a',
          partitions: [],
          error: { errorName: 'TOPIC_AUTHORIZATION_FAILED', message: 'Not authorized' },
        },
        {
          name: 'b',
          partitions: [
            { partition: 0, logStartOffset: null, logEndOffset: null, size: null },
            { partition: 1, logStartOffset: 4, logEndOffset: 9, size: 1234 },
          ],
          error: null,
        },
      ],
      sizesError: null,
      fetchedAt: NOW.toISOString(),
    })
    const noSizes = new ConsoleApi(
      source({
        topics: [{ topic: 'b', partitions: [{ partition: 0, logStartOffset: 0, logEndOffset: 2 }] }],
        sizes: new KafkaError('The node does not support DESCRIBE_LOG_DIRS', {
          errorName: 'UNSUPPORTED_VERSION',
        }),
      }),
      { now: () => NOW },
    )
    assert.deepEqual(await noSizes.topics(), {
      topics: [
        {
          name: 'b',
          partitions: [{ partition: 0, logStartOffset: 0, logEndOffset: 2, size: null }],
          error: null,
        },
      ],
      sizesError: {
        errorName: 'UNSUPPORTED_VERSION',
        message: 'The node does not support DESCRIBE_LOG_DIRS',
      },
      fetchedAt: NOW.toISOString(),
    })
  })

  it('answers 501 when the source has no topic offsets', async () => {
    const api = new ConsoleApi(source({ withOffsets: false }))
    await assert.rejects(
      api.topics(),
      (e: ConsoleApiError) => e.status === 501 && e.body.errorName === 'NOT_SERVED',
    )
  })
})

describe('console API: lag', () => {
  it('end − committed, or end − log start when nothing is committed; committed topics included', async () => {
    const g = withSources(group('app'), ['in'], ['app-rep'])
    const src = source({
      groups: [g],
      topics: [
        {
          topic: 'in',
          partitions: [
            { partition: 0, logStartOffset: 0, logEndOffset: 10 },
            { partition: 1, logStartOffset: 3, logEndOffset: 7 },
          ],
        },
        { topic: 'app-rep', partitions: [{ partition: 0, logStartOffset: 0, logEndOffset: 5 }] },
        { topic: 'old', error: new KafkaError('gone', { errorName: 'UNKNOWN_TOPIC_OR_PARTITION' }) },
      ],
      committed: [
        { topic: 'in', partition: 0, offset: 6 },
        { topic: 'app-rep', partition: 0, offset: 5 },
        { topic: 'old', partition: 2, offset: 1 },
      ],
    })
    const r = await new ConsoleApi(src, { now: () => NOW }).group('app')
    assert.equal(r.offsetsError, null)
    assert.deepEqual(r.offsets, [
      { topic: 'app-rep', partition: 0, committedOffset: 5, logStartOffset: 0, logEndOffset: 5, lag: 0 },
      { topic: 'in', partition: 0, committedOffset: 6, logStartOffset: 0, logEndOffset: 10, lag: 4 },
      { topic: 'in', partition: 1, committedOffset: null, logStartOffset: 3, logEndOffset: 7, lag: 4 },
      { topic: 'old', partition: 2, committedOffset: 1, logStartOffset: null, logEndOffset: null, lag: null },
    ])
    assert.deepEqual(src.asked, [['app-rep', 'in', 'old']])
  })

  it('reports why offsets are missing, and null without offset methods', async () => {
    const failing: ConsoleSource = {
      ...source({ groups: [group('app')] }),
      committedOffsets: async () => {
        throw new KafkaError('The coordinator is not available.', { errorName: 'COORDINATOR_NOT_AVAILABLE' })
      },
    }
    const r = await new ConsoleApi(failing).group('app')
    assert.equal(r.offsets, null)
    assert.deepEqual(r.offsetsError, {
      errorName: 'COORDINATOR_NOT_AVAILABLE',
      message: 'The coordinator is not available.',
    })
    const bare = await new ConsoleApi(source({ groups: [group('app')], withOffsets: false })).group('app')
    assert.deepEqual([bare.offsets, bare.offsetsError], [null, null])
  })
})

describe('console API: why a NotReady group is not ready', () => {
  const info = (name: string, partitions: number) => ({
    name,
    partitions,
    replicationFactor: 1,
    topicConfigs: {},
  })
  const notReady = (g: StreamsGroupDescription): StreamsGroupDescription => ({
    ...g,
    groupState: 'NotReady',
    subtopologies: [
      {
        subtopologyId: '0',
        sourceTopics: ['in', 'gone'],
        repartitionSinkTopics: ['app-rep'],
        stateChangelogTopics: [info('app-store-changelog', 0)],
        repartitionSourceTopics: [],
      },
      {
        subtopologyId: '1',
        sourceTopics: [],
        repartitionSinkTopics: [],
        stateChangelogTopics: [],
        repartitionSourceTopics: [info('app-rep', 3)],
      },
    ],
  })
  const unknown = (topic: string) => ({
    topic,
    error: new KafkaError('This server does not host this topic-partition.', {
      errorName: 'UNKNOWN_TOPIC_OR_PARTITION',
    }),
  })
  const partitions = (n: number) =>
    Array.from({ length: n }, (_, partition) => ({ partition, logStartOffset: 0, logEndOffset: 0 }))

  it('names the missing source and internal topics and the incorrectly partitioned ones', async () => {
    const src = source({
      groups: [notReady(group('app'))],
      topics: [
        { topic: 'in', partitions: partitions(3) },
        unknown('gone'),
        { topic: 'app-rep', partitions: partitions(2) },
        unknown('app-store-changelog'),
      ],
    })
    const r = await new ConsoleApi(src).group('app')
    assert.deepEqual(r.readiness, {
      missingSourceTopics: ['gone'],
      missingInternalTopics: ['app-store-changelog'],
      incorrectlyPartitionedTopics: [{ topic: 'app-rep', expected: 3, actual: 2 }],
      error: null,
    })
  })

  it('reports a failed check; a group in another state is not checked', async () => {
    const src = source({
      groups: [notReady(group('app'))],
      topics: [
        { topic: 'in', error: new KafkaError('Not authorized', { errorName: 'TOPIC_AUTHORIZATION_FAILED' }) },
      ],
    })
    const r = await new ConsoleApi(src).group('app')
    assert.deepEqual(r.readiness?.error, {
      errorName: 'TOPIC_AUTHORIZATION_FAILED',
      message: 'Not authorized',
    })
    const stable = source({ groups: [withSources(group('app'), ['in'], [])], topics: [] })
    assert.equal((await new ConsoleApi(stable).group('app')).readiness, null)
    assert.deepEqual(stable.asked, [['in']], 'only the lag asked for topics')
  })
})

describe('console API: classic groups', () => {
  const coordinator = { nodeId: 1, host: 'h', port: 9092 }
  const notConsumer = (id: string) =>
    new KafkaError(`Group ${id} is not a consumer group.`, { errorName: 'GROUP_ID_NOT_FOUND' })
  const classic = (id: string, state: string): ClassicGroupDescription => ({
    groupId: id,
    groupState: state,
    protocolType: state === 'Dead' ? '' : 'consumer',
    protocol: state === 'Stable' ? 'range' : '',
    members:
      state === 'Stable'
        ? [
            {
              memberId: 'm1',
              instanceId: null,
              clientId: 'c',
              clientHost: '/h',
              assignment: [{ topic: 't', partition: 1 }],
            },
          ]
        : [],
    coordinator,
  })
  const src = (classicAsked: (readonly string[])[]): ConsoleSource => ({
    ...source({
      topics: [
        {
          topic: 't',
          partitions: [0, 1].map((partition) => ({ partition, logStartOffset: 0, logEndOffset: 9 })),
        },
      ],
      committed: [{ topic: 't', partition: 0, offset: 4 }],
    }),
    listConsumerGroups: async () => [
      { groupId: 'ledger', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' },
      { groupId: 'audit', protocolType: '', groupState: 'Empty', groupType: 'classic' },
    ],
    describeConsumerGroups: async (ids) => new Map(ids.map((id) => [id, { error: notConsumer(id) }])),
    describeClassicGroups: async (ids) => {
      classicAsked.push(ids)
      return new Map(
        ids.map((id) => [
          id,
          { value: classic(id, id === 'ledger' ? 'Stable' : id === 'audit' ? 'Empty' : 'Dead') },
        ]),
      )
    },
  })

  it('lists classic groups with their type, protocol and members, described with DescribeGroups', async () => {
    const asked: (readonly string[])[] = []
    const r = await new ConsoleApi(src(asked), { now: () => NOW }).consumerGroups()
    assert.deepEqual(asked, [['ledger', 'audit']])
    assert.deepEqual(
      r.groups.map((g) => [
        g.groupId,
        g.groupType,
        g.groupState,
        g.groupEpoch,
        g.assignorName,
        g.memberCount,
      ]),
      [
        ['audit', 'classic', 'Empty', null, null, 0],
        ['ledger', 'classic', 'Stable', null, 'range', 1],
      ],
    )
  })

  it('a group page falls back to DescribeGroups; owners come from the assignment; Dead is not found', async () => {
    const api = new ConsoleApi(src([]), { now: () => NOW })
    const r = await api.consumerGroup('ledger')
    assert.equal(r.groupType, 'classic')
    assert.deepEqual(
      r.offsets?.map((o) => [o.partition, o.memberId, o.committedOffset, o.lag]),
      [
        [0, null, 4, 5],
        [1, 'm1', null, 9],
      ],
    )
    const empty = await api.consumerGroup('audit')
    assert.deepEqual([empty.group.groupState, empty.group.members.length], ['Empty', 0])
    await assert.rejects(api.consumerGroup('nope'), (e: ConsoleApiError) => {
      assert.deepEqual(
        [e.status, e.body],
        [404, { errorName: 'GROUP_ID_NOT_FOUND', message: 'Group nope is not a consumer group.' }],
      )
      return true
    })
  })

  // Kafka's kafka-consumer-groups lists classic groups of protocol type `consumer` or none only
  // (ListGroupsOptions.forConsumerGroups), and its describe of another one (Kafka Connect's
  // `connect`) fails with "GroupId … is not a consumer group (connect).": the bytes of such a group's
  // assignments are not the consumer protocol's, so there are no partitions to show.
  it('leaves out classic groups of another protocol type, as kafka-consumer-groups does', async () => {
    const asked: (readonly string[])[] = []
    const workers: ClassicGroupDescription = {
      ...classic('workers', 'Stable'),
      protocolType: 'connect',
      protocol: 'sessioned',
      members: [{ memberId: 'w1', instanceId: null, clientId: 'c', clientHost: '/h', assignment: [] }],
    }
    const base = src(asked)
    const api = new ConsoleApi(
      {
        ...base,
        listConsumerGroups: async () => [
          ...(await base.listConsumerGroups!()),
          { groupId: 'workers', protocolType: 'connect', groupState: 'Stable', groupType: 'classic' },
        ],
        describeClassicGroups: async (ids) => {
          const r = new Map(await base.describeClassicGroups!(ids))
          if (ids.includes('workers')) r.set('workers', { value: workers })
          return r
        },
      },
      { now: () => NOW },
    )
    const listed = await api.consumerGroups()
    assert.deepEqual(
      listed.groups.map((g) => g.groupId),
      ['audit', 'ledger'],
    )
    assert.deepEqual(asked, [['ledger', 'audit']])
    await assert.rejects(api.consumerGroup('workers'), (e: ConsoleApiError) => {
      assert.deepEqual(
        [e.status, e.body],
        [
          404,
          {
            errorName: 'GROUP_ID_NOT_FOUND',
            message: 'GroupId workers is not a consumer group (connect).',
          },
        ],
      )
      return true
    })
  })
})
