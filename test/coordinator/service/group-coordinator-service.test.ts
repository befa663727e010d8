import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ManualClock } from '../../../src/coordinator/runtime/index.js'
import {
  type CoordinatorNewTopic,
  type CoordinatorTopic,
  GroupCoordinatorService,
} from '../../../src/coordinator/service/index.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/index.js'
import { parseConfig } from '../../../src/server/config.js'
import { join as consumerJoin } from '../shard/consumer/harness.js'
import { heartbeatRequest, joinRequest } from '../shard/streams/harness.js'
import { infoMessages } from '../../helpers/info-messages.js'

class FakeTopics {
  readonly topics = new Map<string, CoordinatorTopic>()
  readonly created: string[] = []
  constructor(initial: Record<string, number>) {
    for (const [name, n] of Object.entries(initial))
      this.topics.set(name, { name, topicId: `id-${name}`, numPartitions: n })
  }
  list(): CoordinatorTopic[] {
    return [...this.topics.values()]
  }
  async createTopics(topics: readonly CoordinatorNewTopic[]) {
    return topics.map((t) => {
      this.topics.set(t.name, { name: t.name, topicId: `id-${t.name}`, numPartitions: t.numPartitions })
      this.created.push(t.name)
      return { name: t.name, error: 'NONE', message: null }
    })
  }
}

function config(overrides: Record<string, string> = {}) {
  return parseConfig({
    'offsets.topic.num.partitions': '3',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.session.timeout.ms': '1000',
    'group.streams.min.session.timeout.ms': '1000',
    'group.streams.heartbeat.interval.ms': '100',
    'group.streams.min.heartbeat.interval.ms': '100',
    'offsets.retention.minutes': '1',
    'offsets.retention.check.interval.ms': '600000',
    ...overrides,
  })
}

async function start(
  store: MemoryRecordStore,
  clock: ManualClock,
  overrides: Record<string, string> = {},
  topics = new FakeTopics({ foo: 2 }),
) {
  return GroupCoordinatorService.start({ store, config: config(overrides), topics, clock })
}

const hb = { apiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1' }
const commitReq = (offset: bigint) => ({
  groupId: 'simple',
  generationIdOrMemberEpoch: -1,
  memberId: '',
  groupInstanceId: null,
  retentionTimeMs: -1n,
  topics: [
    {
      name: 'foo',
      topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
      partitions: [
        { partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null },
      ],
    },
  ],
})
const fetchAll = (groupId: string) => ({ groupId, memberId: null, memberEpoch: -1, topics: null })

describe('GroupCoordinatorService', () => {
  it('a failed append answers NOT_COORDINATOR and changes nothing; the next commit succeeds', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const service = await start(store, new ManualClock(0))
    try {
      store.failNextAppend()
      const failed = await service.commitOffsets(9, commitReq(5n))
      assert.deepEqual(failed[0].partitions, [{ partitionIndex: 0, errorCode: 16 }])
      assert.deepEqual((await service.fetchOffsets(fetchAll('simple'))).topics, [])
      assert.deepEqual((await service.listGroups([], [])).groups, [])
      store.failNextAppend()
      const hbFailed = await service.streamsGroupHeartbeat(hb, joinRequest())
      assert.equal(hbFailed.errorCode, 16)
      assert.equal(hbFailed.errorMessage, 'This is not the correct coordinator.')
      assert.deepEqual((await service.listGroups([], [])).groups, [])
      const ok = await service.commitOffsets(9, commitReq(6n))
      assert.deepEqual(ok[0].partitions, [{ partitionIndex: 0, errorCode: 0 }])
      assert.equal(
        (await service.fetchOffsets(fetchAll('simple'))).topics[0].partitions[0].committedOffset,
        6n,
      )
    } finally {
      await service.close()
    }
  })

  it('restarting over the same store brings back groups and offsets; loaded members get session timers', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const clock = new ManualClock(0)
    const first = await start(store, clock)
    const joined = await first.streamsGroupHeartbeat(hb, joinRequest())
    assert.equal(joined.errorCode, 0)
    await first.commitOffsets(9, commitReq(7n))
    await first.close()
    const second = await start(store, clock)
    try {
      const listed = (await second.listGroups([], [])).groups
        .map((g) => `${g.groupId}:${g.groupState}`)
        .sort()
      assert.deepEqual(listed, ['g:Stable', 'simple:Empty'])
      const again = await second.streamsGroupHeartbeat(
        hb,
        heartbeatRequest({ memberEpoch: joined.memberEpoch }),
      )
      assert.equal(again.errorCode, 0, 'a member that keeps heartbeating is not fenced')
      clock.advance(1001)
      await new Promise((r) => setImmediate(r))
      const [described] = await second.streamsGroupDescribe(['g'], false)
      assert.equal(
        described.groupState,
        'Empty',
        'the session timeout armed after the restart fenced the silent member',
      )
    } finally {
      await second.close()
    }
  })

  it('a session timeout whose append failed runs again and fences the member once the store is back', async () => {
    // Kafka schedules the modern groups' session timeouts with retry = true (500 ms): a member that
    // went away while the record store was down is still fenced, not left owning its tasks.
    const store = new MemoryRecordStore()
    await store.open()
    const clock = new ManualClock(0)
    const topics = new FakeTopics({})
    topics.topics.set('foo', { name: 'foo', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', numPartitions: 2 })
    const service = await start(
      store,
      clock,
      {
        'group.consumer.session.timeout.ms': '1000',
        'group.consumer.min.session.timeout.ms': '1000',
        'group.consumer.heartbeat.interval.ms': '100',
        'group.consumer.min.heartbeat.interval.ms': '100',
      },
      topics,
    )
    const settle = async () => {
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
    }
    try {
      const streams = await service.streamsGroupHeartbeat(hb, joinRequest())
      assert.equal(streams.errorCode, 0)
      const consumer = await service.consumerGroupHeartbeat(
        hb,
        consumerJoin('consumer-member-1', { groupId: 'c' }),
      )
      assert.equal(consumer.errorCode, 0)
      // Both members go silent; their session timers fire together and their one append fails.
      store.failNextAppend()
      clock.advance(1001)
      await settle()
      const [stillStreams] = await service.streamsGroupDescribe(['g'], false)
      const [stillConsumer] = await service.consumerGroupDescribe(['c'], 1)
      assert.equal(stillStreams.members.length + stillConsumer.members.length, 2, 'nothing fenced yet')
      // The store is back: the timers run again after their backoff and fence both members.
      clock.advance(500)
      await settle()
      const [streamsGroup] = await service.streamsGroupDescribe(['g'], false)
      assert.equal(streamsGroup.groupState, 'Empty', 'the silent streams member was fenced')
      const [consumerGroup] = await service.consumerGroupDescribe(['c'], 1)
      assert.equal(consumerGroup.groupState, 'Empty', 'the silent consumer member was fenced')
    } finally {
      await service.close()
    }
  })

  it('the offsets commits replay equal the offsets loaded from their stored bytes', async () => {
    // Replay takes the records a commit built, not the bytes written for them: a fresh service
    // loading the same store must end with exactly the same offsets, every field of them.
    const store = new MemoryRecordStore()
    await store.open()
    const clock = new ManualClock(1_764_650_000_123)
    const topics = new FakeTopics({ foo: 20, bar: 3, tøpic: 2 })
    const first = await start(store, clock, {}, topics)
    const partitions = (n: number, metadata: (p: number) => string | null, epoch = -1) =>
      Array.from({ length: n }, (_, p) => ({
        partitionIndex: p,
        committedOffset: 1000n * BigInt(p) + 7n,
        committedLeaderEpoch: epoch,
        committedMetadata: metadata(p),
      }))
    const commit = (
      apiVersion: number,
      groupId: string,
      t: { name: string; topicId?: string; partitions: ReturnType<typeof partitions> }[],
      retentionTimeMs = -1n,
    ) =>
      first.commitOffsets(apiVersion, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs,
        topics: t.map((x) => ({ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', ...x })),
      })
    const groups = ['streams-app', 'grüppe', 'ret', 'v10']
    try {
      // Streams-shaped, 32 bytes of metadata per task; then again, later, over it.
      await commit(9, 'streams-app', [
        { name: 'foo', partitions: partitions(20, (p) => `task-${p}`.padEnd(32, '=')) },
      ])
      clock.advance(5)
      await commit(9, 'streams-app', [{ name: 'foo', partitions: partitions(10, () => '', 5) }])
      // Non-ASCII names and metadata, null metadata, metadata near and over the size limit.
      await commit(9, 'grüppe', [
        { name: 'tøpic', partitions: partitions(2, (p) => (p === 0 ? 'ünïcode ✓ 𝄞' : null)) },
        { name: 'bar', partitions: partitions(3, (p) => 'é'.repeat(p === 2 ? 2049 : 1365 + p)) },
      ])
      // A retention time (OffsetCommit v2-v4: value version 1) and a topic id (v10: value version 4).
      await commit(3, 'ret', [{ name: 'bar', partitions: partitions(3, () => 'r') }], 60_000n)
      await commit(10, 'v10', [
        { name: 'foo', topicId: 'm5KVHiB1SEqsLVI1BxAmzA', partitions: partitions(4, () => 'x') },
      ])
      // A deleted offset: a tombstone.
      const deleted = await first.deleteOffsets({
        groupId: 'ret',
        topics: [{ name: 'bar', partitions: [1] }],
      })
      assert.equal(deleted.errorCode, 0)
      const offsetsOf = (service: GroupCoordinatorService) =>
        Promise.all(
          groups.map((g) =>
            service.scheduleReadOperation('test-offsets', g, (shard) => shard.offsets.allOffsets(g)),
          ),
        )
      const live = await offsetsOf(first)
      assert.equal(live[0][0].partitions.length, 20)
      assert.equal(live[0][0].partitions[3][1].leaderEpoch, 5)
      assert.equal(live[1][0].partitions.length, 2, 'the partition over the limit wrote nothing')
      assert.equal(live[2][0].partitions.length, 2)
      assert.equal(live[3][0].partitions[0][1].topicId, 'm5KVHiB1SEqsLVI1BxAmzA')
      await first.close()
      const second = await start(store, clock, {}, topics)
      try {
        assert.deepEqual(await offsetsOf(second), live)
      } finally {
        await second.close()
      }
    } finally {
      await first.close()
    }
  })

  it('creates missing internal topics in the catalog and the group becomes ready', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const topics = new FakeTopics({ foo: 2 })
    const service = await start(store, new ManualClock(0), {}, topics)
    try {
      const topology = {
        epoch: 0,
        subtopologies: [
          {
            subtopologyId: '0',
            sourceTopics: ['foo'],
            sourceTopicRegex: [],
            stateChangelogTopics: [
              { name: 'g-store-changelog', partitions: 0, replicationFactor: 0, topicConfigs: [] },
            ],
            repartitionSinkTopics: [],
            repartitionSourceTopics: [],
            copartitionGroups: [],
          },
        ],
      }
      const joined = await service.streamsGroupHeartbeat(hb, joinRequest({ topology }))
      assert.deepEqual(
        joined.status?.map((s) => s.statusCode),
        [3],
      )
      for (let i = 0; i < 20 && topics.created.length === 0; i++) await new Promise((r) => setImmediate(r))
      assert.deepEqual(topics.created, ['g-store-changelog'])
      assert.equal(topics.topics.get('g-store-changelog')?.numPartitions, 2)
      const next = await service.streamsGroupHeartbeat(
        hb,
        heartbeatRequest({ memberEpoch: joined.memberEpoch }),
      )
      assert.equal(next.errorCode, 0)
      assert.deepEqual(next.activeTasks, [{ subtopologyId: '0', partitions: [0, 1] }])
    } finally {
      await service.close()
    }
  })

  it('the expiry sweep runs every offsets.retention.check.interval.ms', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const clock = new ManualClock(0)
    const service = await start(store, clock, { 'offsets.retention.check.interval.ms': '30000' })
    try {
      await service.commitOffsets(9, commitReq(1n))
      clock.advance(30_000)
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r))
      assert.equal(
        (await service.listGroups([], [])).groups.length,
        1,
        'not expired yet (retention 1 minute)',
      )
      clock.advance(30_000)
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r))
      assert.deepEqual((await service.listGroups([], [])).groups, [])
      assert.deepEqual((await service.fetchOffsets(fetchAll('simple'))).topics, [])
    } finally {
      await service.close()
    }
  })

  it('streams APIs answer UNSUPPORTED_VERSION when the protocol is not enabled', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const service = await start(store, new ManualClock(0), {
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    })
    try {
      const r = await service.streamsGroupHeartbeat(hb, joinRequest())
      assert.deepEqual([r.errorCode, r.errorMessage], [35, null])
      const [d] = await service.streamsGroupDescribe(['g'], false)
      assert.equal(d.errorCode, 35)
    } finally {
      await service.close()
    }
  })

  it('an operation after close is answered NOT_COORDINATOR', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const service = await start(store, new ManualClock(0))
    await service.close()
    const r = await service.commitOffsets(9, commitReq(1n))
    assert.equal(r[0].partitions[0].errorCode, 16)
  })
})

describe('GroupCoordinatorService write timeout', () => {
  it('a write that outlasts offsets.commit.timeout.ms is answered COORDINATOR_NOT_AVAILABLE', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const clock = new ManualClock(0)
    const service = await start(store, clock, { 'offsets.commit.timeout.ms': '100' })
    let release: () => void = () => undefined
    let started = false
    const append = store.append.bind(store)
    store.append = async (shard, records) => {
      started = true
      await new Promise<void>((r) => {
        release = r
      })
      return append(shard, records)
    }
    try {
      const pending = service.commitOffsets(9, commitReq(3n))
      // The store write starts once the runtime flushes its queued writes.
      while (!started) await new Promise((r) => setImmediate(r))
      clock.advance(100)
      const r = await pending
      assert.equal(r[0].partitions[0].errorCode, 15)
      release()
    } finally {
      release()
      await service.close()
    }
  })
  it('each write times out at its own deadline; one answered in time is not timed out', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const clock = new ManualClock(0)
    const service = await start(store, clock, { 'offsets.commit.timeout.ms': '100' })
    const gates: (() => void)[] = []
    let stuck = true
    const append = store.append.bind(store)
    store.append = async (shard, records) => {
      if (stuck) await new Promise<void>((r) => gates.push(r))
      return append(shard, records)
    }
    const codeOf = async (p: ReturnType<typeof service.commitOffsets>) => (await p)[0].partitions[0].errorCode
    const settled = (p: Promise<unknown>) =>
      Promise.race([p.then(() => true), new Promise((r) => setImmediate(() => r(false)))])
    try {
      // Written alone (nothing stuck), answered before its deadline: never a timeout afterwards.
      stuck = false
      assert.equal(await codeOf(service.commitOffsets(9, commitReq(1n))), 0)
      stuck = true
      const first = service.commitOffsets(9, commitReq(2n)) // deadline 100
      while (gates.length === 0) await new Promise((r) => setImmediate(r))
      clock.advance(50)
      const second = service.commitOffsets(9, commitReq(3n)) // deadline 150, queued behind first
      await new Promise((r) => setImmediate(r))
      clock.advance(49) // t = 99
      assert.equal(await settled(first), false, 'not before its deadline')
      clock.advance(1) // t = 100
      assert.equal(await codeOf(first), 15)
      assert.equal(await settled(second), false, 'the later write still waits')
      clock.advance(49) // t = 149
      assert.equal(await settled(second), false)
      clock.advance(1) // t = 150
      assert.equal(await codeOf(second), 15)
      // A write started after the others timed out gets its own full timeout.
      const third = service.commitOffsets(9, commitReq(4n)) // deadline 250
      await new Promise((r) => setImmediate(r))
      clock.advance(99)
      assert.equal(await settled(third), false)
      clock.advance(1)
      assert.equal(await codeOf(third), 15)
    } finally {
      stuck = false
      for (const g of gates) g()
      await service.close()
    }
  })
})

describe('loading', () => {
  it("names each loaded shard as its partition of __consumer_offsets, as Kafka's log does", async () => {
    const { logger, messages } = infoMessages()
    const store = new MemoryRecordStore()
    await store.open()
    const topics = new FakeTopics({ foo: 2 })
    const service = await GroupCoordinatorService.start({
      store,
      config: config(),
      topics,
      clock: new ManualClock(0),
      logger,
    })
    try {
      assert.deepEqual(
        messages.filter((m) => m.startsWith('Finished loading')),
        [0, 1, 2].map((p) => `Finished loading of metadata from __consumer_offsets-${p}`),
      )
    } finally {
      await service.close()
    }
  })
})
