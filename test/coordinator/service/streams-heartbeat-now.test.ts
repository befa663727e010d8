// The steady StreamsGroupHeartbeat (no records) is answered in the caller's turn when its shard's
// queue is idle, and otherwise waits its turn: these tests pin the ordering guarantees and that the
// answer is the same, byte for byte, either way.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ManualClock } from '../../../src/coordinator/runtime/index.js'
import {
  type CoordinatorNewTopic,
  type CoordinatorTopic,
  GroupCoordinatorService,
} from '../../../src/coordinator/service/index.js'
import type { RecordStore } from '../../../src/coordinator/storage/types.js'
import { apiDefinition } from '../../../src/protocol/generated/registry.js'
import type { StreamsGroupHeartbeatResponse } from '../../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { parseConfig } from '../../../src/server/config.js'
import { encodeResponseFrame } from '../../../src/server/router.js'
import { GatedStore } from '../runtime/fake-shard.js'
import { heartbeatRequest, joinRequest } from '../shard/streams/harness.js'

const topics = {
  list: (): CoordinatorTopic[] => [{ name: 'foo', topicId: 'id-foo', numPartitions: 2 }],
  createTopics: async (ts: readonly CoordinatorNewTopic[]) =>
    ts.map((t) => ({ name: t.name, error: 'NONE', message: null })),
}

function start(store: RecordStore, clock: ManualClock, overrides: Record<string, string> = {}) {
  return GroupCoordinatorService.start({
    store,
    topics,
    clock,
    config: parseConfig({
      // One shard: every group and offset shares one queue.
      'offsets.topic.num.partitions': '1',
      'group.streams.initial.rebalance.delay.ms': '0',
      'group.streams.assignment.interval.ms': '0',
      'group.streams.session.timeout.ms': '1000',
      'group.streams.min.session.timeout.ms': '1000',
      'group.streams.heartbeat.interval.ms': '100',
      'group.streams.min.heartbeat.interval.ms': '100',
      ...overrides,
    }),
  })
}

const hb = { apiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1' }
const commit = (offset: bigint) => ({
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
const frame = (r: StreamsGroupHeartbeatResponse) => encodeResponseFrame(apiDefinition(88)!, 1, 7, r)
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r))
}

/** Joins m1 and heartbeats until it owns its tasks; returns its steady heartbeat request. */
async function stableMember(service: GroupCoordinatorService) {
  const joined = await service.streamsGroupHeartbeat(hb, joinRequest())
  assert.equal(joined.errorCode, 0)
  const owned = await service.streamsGroupHeartbeat(
    hb,
    heartbeatRequest({
      memberEpoch: joined.memberEpoch,
      activeTasks: joined.activeTasks,
      standbyTasks: joined.standbyTasks,
      warmupTasks: joined.warmupTasks,
    }),
  )
  assert.equal(owned.errorCode, 0)
  return heartbeatRequest({
    memberEpoch: owned.memberEpoch,
    endpointInformationEpoch: owned.endpointInformationEpoch,
    activeTasks: null,
    standbyTasks: null,
    warmupTasks: null,
  })
}

describe('StreamsGroupHeartbeat answered now or in its turn', () => {
  it('a steady heartbeat on an idle shard is answered at once, byte-identical to the same heartbeat answered in the queue', async () => {
    const store = new GatedStore()
    await store.open()
    const service = await start(store, new ManualClock(0))
    try {
      const steady = await stableMember(service)
      const now = service.streamsGroupHeartbeat(hb, steady)
      assert.ok(!(now instanceof Promise), 'answered in the caller turn')
      assert.equal(now.errorCode, 0)
      assert.equal(now.activeTasks, null)

      // The same heartbeat while an offset commit on the shard waits for its append.
      store.gate()
      const appendStarted = store.nextAppend()
      const committing = service.commitOffsets(9, commit(5n))
      await appendStarted
      const queued = service.streamsGroupHeartbeat(hb, steady)
      assert.ok(queued instanceof Promise, 'waits behind the pending write')
      assert.deepEqual(frame(await releaseThen(store, queued)), frame(now))
      assert.equal((await committing)[0].partitions[0].errorCode, 0)
    } finally {
      store.release()
      await service.close()
    }
  })

  it('a heartbeat behind a write whose append is in flight is not answered before that write is durable', async () => {
    const store = new GatedStore()
    await store.open()
    const service = await start(store, new ManualClock(0))
    try {
      const steady = await stableMember(service)
      const appends = () => store.calls.filter((c) => c.startsWith('append')).length
      const before = appends()
      store.gate()
      const appendStarted = store.nextAppend()
      const events: string[] = []
      const committing = service.commitOffsets(9, commit(5n)).then((r) => {
        events.push(`commit:${r[0].partitions[0].errorCode}`)
      })
      await appendStarted
      const answered = Promise.resolve(service.streamsGroupHeartbeat(hb, steady)).then((r) => {
        events.push(`heartbeat:${r.errorCode}`)
      })
      await turns(5)
      assert.deepEqual(events, [], 'nothing answered while the commit is in flight')
      assert.equal(appends(), before + 1, 'the commit is the only append; the heartbeat writes nothing')
      store.release()
      await Promise.all([committing, answered])
      assert.deepEqual(events, ['commit:0', 'heartbeat:0'])
      // The queue is idle again: answered at once.
      assert.ok(!(service.streamsGroupHeartbeat(hb, steady) instanceof Promise))
    } finally {
      store.release()
      await service.close()
    }
  })

  it('a heartbeat that writes records is answered only after its append (a promise, even on an idle shard)', async () => {
    const store = new GatedStore()
    await store.open()
    const service = await start(store, new ManualClock(0))
    try {
      store.gate()
      const appendStarted = store.nextAppend()
      const joining = service.streamsGroupHeartbeat(hb, joinRequest())
      assert.ok(joining instanceof Promise)
      let answered = false
      void joining.then(() => {
        answered = true
      })
      await appendStarted
      await turns(5)
      assert.equal(answered, false)
      // A second member's heartbeat waits behind the join.
      const second = service.streamsGroupHeartbeat(hb, joinRequest({ memberId: 'm2', processId: 'p2' }))
      assert.ok(second instanceof Promise)
      store.release()
      assert.equal((await joining).errorCode, 0)
      assert.equal((await second).errorCode, 0)
    } finally {
      store.release()
      await service.close()
    }
  })

  it('a heartbeat queued behind a stuck write still times out with COORDINATOR_NOT_AVAILABLE', async () => {
    const store = new GatedStore()
    await store.open()
    const clock = new ManualClock(0)
    const service = await start(store, clock, { 'offsets.commit.timeout.ms': '100' })
    try {
      const steady = await stableMember(service)
      store.gate()
      const appendStarted = store.nextAppend()
      const committing = service.commitOffsets(9, commit(5n))
      await appendStarted
      const queued = service.streamsGroupHeartbeat(hb, steady)
      assert.ok(queued instanceof Promise)
      clock.advance(100)
      const r = await queued
      assert.equal(r.errorCode, 15)
      assert.equal(r.errorMessage, 'The coordinator is not available.')
      store.release()
      await committing
    } finally {
      store.release()
      await service.close()
    }
  })

  it('a member whose heartbeats write nothing keeps its session; silent, it is fenced one session timeout after its last heartbeat', async () => {
    const store = new GatedStore()
    await store.open()
    const clock = new ManualClock(0)
    const service = await start(store, clock)
    const members = async () => (await service.streamsGroupDescribe(['g'], false))[0].members.length
    try {
      const steady = await stableMember(service)
      for (let t = 0; t < 3_000; t += 500) {
        clock.advance(500)
        await turns(3)
        const r = service.streamsGroupHeartbeat(hb, steady)
        assert.ok(!(r instanceof Promise))
        assert.equal(r.errorCode, 0, `still a member at ${clock.now()} ms`)
      }
      // Last heartbeat at 3,000 ms; the session timeout is 1,000 ms.
      clock.advance(999)
      await turns(5)
      assert.equal(await members(), 1)
      clock.advance(1)
      await turns(5)
      assert.equal(await members(), 0, 'fenced at 4,000 ms')
      const after = await service.streamsGroupHeartbeat(hb, steady)
      assert.equal(after.errorCode, 25, 'UNKNOWN_MEMBER_ID')
    } finally {
      await service.close()
    }
  })

  it('the catalog is listed on every heartbeat unless it tells of its changes; either way a new topic reaches the next heartbeat', async () => {
    for (const notifies of [false, true]) {
      const listed: CoordinatorTopic[] = [{ name: 'bar', topicId: 'id-bar', numPartitions: 2 }]
      const listeners = new Set<(changed: readonly string[]) => void>()
      let lists = 0
      const catalog = {
        list: () => {
          lists++
          return [...listed]
        },
        createTopics: async () => [],
        ...(notifies
          ? {
              onChange: (l: (changed: readonly string[]) => void) => {
                listeners.add(l)
                return () => listeners.delete(l)
              },
            }
          : {}),
      }
      const store = new GatedStore()
      await store.open()
      const service = await GroupCoordinatorService.start({
        store,
        topics: catalog,
        clock: new ManualClock(0),
        config: parseConfig({
          'offsets.topic.num.partitions': '1',
          'group.streams.initial.rebalance.delay.ms': '0',
          'group.streams.assignment.interval.ms': '0',
        }),
      })
      try {
        const joined = await service.streamsGroupHeartbeat(hb, joinRequest())
        assert.equal(joined.status?.[0]?.statusCode, 1, `MISSING_SOURCE_TOPICS (notifies: ${notifies})`)
        const before = lists
        const steady = heartbeatRequest({
          memberEpoch: joined.memberEpoch,
          activeTasks: [],
          standbyTasks: [],
          warmupTasks: [],
        })
        await service.streamsGroupHeartbeat(hb, steady)
        await service.streamsGroupHeartbeat(hb, steady)
        assert.equal(lists - before, notifies ? 0 : 2)
        // The source topic appears.
        listed.push({ name: 'foo', topicId: 'id-foo', numPartitions: 2 })
        for (const l of listeners) l(['foo'])
        const next = await service.streamsGroupHeartbeat(hb, steady)
        assert.equal(next.errorCode, 0)
        assert.deepEqual(next.status, [], `the topic is seen (notifies: ${notifies})`)
        assert.deepEqual(next.activeTasks, [{ subtopologyId: '0', partitions: [0, 1] }])
      } finally {
        await service.close()
      }
    }
  })

  it('failures of an immediate heartbeat are answers, not exceptions', async () => {
    const store = new GatedStore()
    await store.open()
    const service = await start(store, new ManualClock(0))
    try {
      const unknown = service.streamsGroupHeartbeat(hb, heartbeatRequest({ groupId: 'nope', memberEpoch: 3 }))
      assert.ok(!(unknown instanceof Promise), 'an error answer writes no records')
      assert.equal(unknown.errorCode, 69)
    } finally {
      await service.close()
    }
    const closed = await service.streamsGroupHeartbeat(hb, heartbeatRequest({ memberEpoch: 3 }))
    assert.equal(closed.errorCode, 16, 'NOT_COORDINATOR after close')
  })
})

async function releaseThen<T>(store: GatedStore, p: Promise<T>): Promise<T> {
  await turns(3)
  store.release()
  return p
}
