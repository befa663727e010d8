// Committed offsets against the topics and groups they belong to, as Kafka's group coordinator keeps
// them: a deleted topic's offsets leave every group (GroupCoordinatorService.onMetadataUpdate →
// onTopicsDeleted), and a classic `consumer` group with members is "subscribed" to the topics its
// members' subscriptions name (ClassicGroup.computeSubscribedTopics): OffsetDelete refuses those
// per partition and deletes the rest, and the expiry sweep keeps them.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { GroupCoordinatorService } from '../../../src/coordinator/service/group-coordinator-service.js'
import type {
  CoordinatorNewTopic,
  CoordinatorTopic,
  CoordinatorTopics,
} from '../../../src/coordinator/service/topics-image.js'
import { ManualClock } from '../../../src/coordinator/runtime/index.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/index.js'
import { parseConfig } from '../../../src/server/config.js'
import { encodeSubscription } from '../../../src/protocol/consumer-protocol.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { createJoinGroupRequest } from '../../../src/protocol/generated/messages/JoinGroupRequest.js'
import { createSyncGroupRequest } from '../../../src/protocol/generated/messages/SyncGroupRequest.js'

const NO_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAA'

/** A catalog that tells its listeners of every change, as the server's topic catalog does. */
class Catalog implements CoordinatorTopics {
  readonly topics = new Map<string, CoordinatorTopic>()
  readonly #listeners = new Set<(changed: readonly string[]) => void>()
  #ids = 0
  constructor(names: readonly string[]) {
    for (const name of names) this.create(name)
  }
  list(): CoordinatorTopic[] {
    return [...this.topics.values()]
  }
  async createTopics(topics: readonly CoordinatorNewTopic[]) {
    return topics.map((t) => {
      this.create(t.name)
      return { name: t.name, error: 'NONE', message: null }
    })
  }
  onChange(listener: (changed: readonly string[]) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
  create(name: string): string {
    const topicId = `id-${name}-${++this.#ids}`.padEnd(22, 'x')
    this.topics.set(name, { name, topicId, numPartitions: 2 })
    for (const l of this.#listeners) l([name])
    return topicId
  }
  delete(name: string): void {
    this.topics.delete(name)
    for (const l of this.#listeners) l([name])
  }
}

async function start(store: MemoryRecordStore, clock: ManualClock, catalog: Catalog) {
  return GroupCoordinatorService.start({
    store,
    clock,
    topics: catalog,
    config: parseConfig({
      'offsets.topic.num.partitions': '3',
      'group.initial.rebalance.delay.ms': '0',
      'offsets.retention.minutes': '1',
      'offsets.retention.check.interval.ms': '30000',
    }),
  })
}

const commit = (groupId: string, topic: string, topicId: string, offset: bigint) => ({
  groupId,
  generationIdOrMemberEpoch: -1,
  memberId: '',
  groupInstanceId: null,
  retentionTimeMs: -1n,
  topics: [
    {
      name: topic,
      topicId,
      partitions: [0, 1].map((partitionIndex) => ({
        partitionIndex,
        committedOffset: offset,
        committedLeaderEpoch: -1,
        committedMetadata: null,
      })),
    },
  ],
})

/** The group's committed offsets as `topic-partition=offset`, sorted. */
async function offsets(service: GroupCoordinatorService, groupId: string): Promise<string[]> {
  const r = await service.fetchOffsets({ groupId, memberId: null, memberEpoch: -1, topics: null })
  return r.topics
    .flatMap((t) => t.partitions.map((p) => `${t.name}-${p.partitionIndex}=${p.committedOffset}`))
    .sort()
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r))
}

const jctx = { apiVersion: 9, clientId: 'c', clientHost: '/127.0.0.1' }

/** One member joins group `g` with `protocolType` subscribing to `topics`, and syncs: the group is Stable. */
async function stableGroup(
  service: GroupCoordinatorService,
  clock: ManualClock,
  protocolType: string,
  topics: string[],
) {
  const metadata = encodeSubscription(
    { topics, userData: null, ownedPartitions: [], generationId: -1, rackId: null },
    3,
  )
  const join = (memberId: string) =>
    createJoinGroupRequest({
      groupId: 'g',
      sessionTimeoutMs: 30_000,
      rebalanceTimeoutMs: 30_000,
      memberId,
      protocolType,
      protocols: [{ name: 'range', metadata }],
    })
  const first = await service.classicGroups.joinGroup(jctx, join(''))
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
  // The join completes when the initial rebalance delay's timer fires (0 ms, on the manual clock).
  const joining = service.classicGroups.joinGroup(jctx, join(first.memberId))
  await settle()
  clock.advance(0)
  await settle()
  const joined = await joining
  assert.equal(joined.errorCode, ErrorCode.NONE)
  const synced = await service.classicGroups.syncGroup(
    jctx,
    createSyncGroupRequest({
      groupId: 'g',
      generationId: joined.generationId,
      memberId: joined.memberId,
      protocolType,
      protocolName: 'range',
      assignments: [{ memberId: joined.memberId, assignment: new Uint8Array([0, 3]) }],
    }),
  )
  assert.equal(synced.errorCode, ErrorCode.NONE)
  return { memberId: joined.memberId, generationId: joined.generationId }
}

interface StableGroup {
  readonly service: GroupCoordinatorService
  readonly clock: ManualClock
  readonly member: { readonly memberId: string; readonly generationId: number }
}

/**
 * A service whose group `g` has one member of `protocolType` subscribed to foo, Stable, with offset
 * 3 committed at time 0 for both partitions of each of `committed` (topics foo and bar exist).
 */
async function withStableGroup(
  protocolType: string,
  committed: readonly string[],
  body: (g: StableGroup) => Promise<void>,
): Promise<void> {
  const store = new MemoryRecordStore()
  await store.open()
  const clock = new ManualClock(0)
  const service = await start(store, clock, new Catalog(['foo', 'bar']))
  try {
    const member = await stableGroup(service, clock, protocolType, ['foo'])
    for (const topic of committed) {
      const r = await service.commitOffsets(9, {
        ...commit('g', topic, NO_TOPIC_ID, 3n),
        memberId: member.memberId,
        generationIdOrMemberEpoch: member.generationId,
      })
      assert.deepEqual(
        r[0].partitions.map((p) => p.errorCode),
        [0, 0],
      )
    }
    await body({ service, clock, member })
  } finally {
    await service.close()
  }
}

/** 80 s in steps of 20, past the retention of one minute (sweeps every 30 s), the member heartbeating. */
async function heartbeatPastRetention({ service, clock, member }: StableGroup): Promise<void> {
  for (let t = 0; t < 4; t++) {
    clock.advance(20_000)
    await settle()
    const hb = await service.classicGroups.heartbeat(jctx, {
      groupId: 'g',
      generationId: member.generationId,
      memberId: member.memberId,
      groupInstanceId: null,
    })
    assert.equal(hb.errorCode, ErrorCode.NONE)
  }
}

describe('committed offsets and the topics they belong to', () => {
  it("a deleted topic's offsets leave every group, committed by name or by its id; a restart agrees", async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const clock = new ManualClock(0)
    const catalog = new Catalog(['foo', 'bar'])
    const fooId = catalog.topics.get('foo')!.topicId
    const first = await start(store, clock, catalog)
    for (const groupId of ['a', 'b', 'c']) {
      await first.commitOffsets(9, commit(groupId, 'foo', groupId === 'b' ? fooId : NO_TOPIC_ID, 5n))
      await first.commitOffsets(9, commit(groupId, 'bar', NO_TOPIC_ID, 7n))
    }
    catalog.delete('foo')
    for (const groupId of ['a', 'b', 'c'])
      assert.deepEqual(await offsets(first, groupId), ['bar-0=7', 'bar-1=7'])

    // Created again under the name: the new topic starts without offsets; one committed to it by
    // its new id stays when a refresh meets the old id again.
    const newId = catalog.create('foo')
    assert.deepEqual(await offsets(first, 'a'), ['bar-0=7', 'bar-1=7'])
    await first.commitOffsets(9, commit('a', 'foo', newId, 9n))
    await first.close()

    const second = await start(store, clock, catalog)
    try {
      assert.deepEqual(await offsets(second, 'a'), ['bar-0=7', 'bar-1=7', 'foo-0=9', 'foo-1=9'])
      assert.deepEqual(await offsets(second, 'b'), ['bar-0=7', 'bar-1=7'])
    } finally {
      await second.close()
    }
  })

  it('a topic deleted and created again between two refreshes loses the old topic’s offsets', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const catalog = new Catalog(['foo'])
    const oldId = catalog.topics.get('foo')!.topicId
    const service = await start(store, new ManualClock(0), catalog)
    try {
      await service.commitOffsets(9, commit('a', 'foo', oldId, 5n))
      // Both changes land in the catalog before the coordinator's refresh sees either.
      catalog.topics.delete('foo')
      catalog.create('foo')
      await settle()
      assert.deepEqual(await offsets(service, 'a'), [])
    } finally {
      await service.close()
    }
  })

  it('OffsetDelete on a Stable consumer group: subscribed topics refused per partition, others deleted', async () => {
    await withStableGroup('consumer', ['foo', 'bar'], async ({ service }) => {
      const deleted = await service.deleteOffsets({
        groupId: 'g',
        topics: [
          { name: 'foo', partitions: [0] },
          { name: 'bar', partitions: [0, 1] },
        ],
      })
      assert.equal(deleted.errorCode, ErrorCode.NONE)
      assert.deepEqual(
        deleted.topics.map((t) => [t.name, t.partitions.map((p) => p.errorCode)]),
        [
          ['foo', [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC]],
          ['bar', [ErrorCode.NONE, ErrorCode.NONE]],
        ],
      )
      assert.deepEqual(await offsets(service, 'g'), ['foo-0=3', 'foo-1=3'])
    })
  })

  it('OffsetDelete on a group of another protocol type with members: NON_EMPTY_GROUP', async () => {
    await withStableGroup('connect', [], async ({ service }) => {
      const r = await service.deleteOffsets({ groupId: 'g', topics: [{ name: 'bar', partitions: [0] }] })
      assert.equal(r.errorCode, ErrorCode.NON_EMPTY_GROUP)
    })
  })

  it('the expiry sweep keeps a Stable consumer group’s subscribed offsets and expires the others', async () => {
    await withStableGroup('consumer', ['foo', 'bar'], async (g) => {
      await heartbeatPastRetention(g)
      assert.deepEqual(await offsets(g.service, 'g'), ['foo-0=3', 'foo-1=3'])
    })
  })

  it('the expiry sweep keeps every offset of a group of another protocol type while it has members', async () => {
    await withStableGroup('connect', ['bar'], async (g) => {
      await heartbeatPastRetention(g)
      assert.deepEqual(await offsets(g.service, 'g'), ['bar-0=3', 'bar-1=3'])
    })
  })

  it('the expiry sweep counts an empty classic group’s offsets from when it became empty', async () => {
    await withStableGroup('consumer', ['foo'], async ({ service, clock, member }) => {
      // Committed at 0; the group becomes empty at 50 s.
      clock.advance(50_000)
      await settle()
      const left = await service.classicGroups.leaveGroup(jctx, {
        groupId: 'g',
        memberId: member.memberId,
        members: [],
      })
      assert.equal(left.errorCode, ErrorCode.NONE)
      // The sweep at 60 s and at 90 s: a minute since the commit, not yet since the group emptied.
      clock.advance(40_000)
      await settle()
      assert.deepEqual(await offsets(service, 'g'), ['foo-0=3', 'foo-1=3'])
      // At 120 s: more than a minute since it emptied.
      clock.advance(30_000)
      await settle()
      assert.deepEqual(await offsets(service, 'g'), [])
    })
  })
})
