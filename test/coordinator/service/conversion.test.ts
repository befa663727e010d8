// The classic JoinGroup conversion of an empty streams group through GroupCoordinatorService (KIP-1331
// §7) with an injected clock and jitter: the conversion throttle's exponential windows, the delete
// sensors, a failed barrier write answered with its own code, the leftover stored epoch converted
// directly without a plugin, and the -1 case that never reaches the plugin.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ManualClock } from '../../../src/coordinator/runtime/index.js'
import {
  type CoordinatorNewTopic,
  type CoordinatorTopic,
  GroupCoordinatorService,
} from '../../../src/coordinator/service/index.js'
import type { TopologyDescriptionSensor } from '../../../src/coordinator/service/topology-description-manager.js'
import {
  markTopologyUncertain,
  setStoredTopologyEpoch,
} from '../../../src/coordinator/shard/topology-description.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/index.js'
import { guardPlugin } from '../../../src/plugin/guard.js'
import type { StreamsGroupTopologyDescriptionPlugin } from '../../../src/plugin/spi.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { createJoinGroupRequest } from '../../../src/protocol/generated/messages/JoinGroupRequest.js'
import { parseConfig } from '../../../src/server/config.js'
import { joinRequest } from '../shard/streams/harness.js'

class FakeTopics {
  list(): CoordinatorTopic[] {
    return [{ name: 'foo', topicId: 'id-foo', numPartitions: 2 }]
  }
  async createTopics(topics: readonly CoordinatorNewTopic[]) {
    return topics.map((t) => ({ name: t.name, error: 'NONE', message: null }))
  }
}

/** A plugin whose deleteTopology fails while `failing` is set; it records every delete. */
class FakePlugin implements StreamsGroupTopologyDescriptionPlugin {
  readonly held = new Map<string, number>()
  readonly deletes: string[] = []
  failing = false
  configure(): void {}
  async setTopology(groupId: string, topologyEpoch: number): Promise<void> {
    this.held.set(groupId, topologyEpoch)
  }
  async getTopology(): Promise<null> {
    return null
  }
  async deleteTopology(groupId: string): Promise<void> {
    this.deletes.push(groupId)
    if (this.failing) throw new Error('backend down')
    this.held.delete(groupId)
  }
  async close(): Promise<void> {}
}

const config = parseConfig({
  'offsets.topic.num.partitions': '1',
  'group.streams.initial.rebalance.delay.ms': '0',
  'group.streams.assignment.interval.ms': '0',
  'group.streams.session.timeout.ms': '45000',
  'group.initial.rebalance.delay.ms': '0',
  'offsets.retention.check.interval.ms': '3600000',
})

async function setUp(plugin: FakePlugin | null, store = new MemoryRecordStore()) {
  await store.open()
  const clock = new ManualClock(1_000_000)
  const sensors: [TopologyDescriptionSensor, number][] = []
  const service = await GroupCoordinatorService.start({
    store,
    config,
    topics: new FakeTopics(),
    clock,
    topologyDescriptionPlugin: plugin === null ? null : guardPlugin(plugin),
    // Jitter factor exactly 1: windows are 30 s, 60 s, 120 s, ...
    random: () => 0.5,
    topologyDescriptionSensors: { record: (s, v) => sensors.push([s, v]) },
  })
  return { service, clock, store, sensors }
}

/** An empty streams group "g" whose stored description epoch is `epoch` (and the plugin holds it). */
async function emptyStreamsGroup(service: GroupCoordinatorService, plugin: FakePlugin | null, epoch: number) {
  const ctx = { apiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1' }
  assert.equal((await service.streamsGroupHeartbeat(ctx, joinRequest())).errorCode, 0)
  if (epoch >= 0) {
    // The push path: barrier, plugin, then the stored epoch.
    await service.scheduleWriteOperation('test-mark', 'g', (shard) => markTopologyUncertain(shard, 'g', true))
    await plugin?.setTopology('g', epoch)
    await service.scheduleWriteOperation('test-set-stored', 'g', (shard) =>
      setStoredTopologyEpoch(shard, 'g', epoch),
    )
  }
  const left = await service.streamsGroupHeartbeat(ctx, joinRequest({ memberEpoch: -1, topology: null }))
  assert.equal(left.errorCode, 0)
  assert.equal(await stored(service), epoch >= 0 ? epoch : -1)
}

const join = (memberId = '') =>
  createJoinGroupRequest({
    groupId: 'g',
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array([1]) }],
  })

const jctx = { apiVersion: 9, clientId: 'c', clientHost: '/127.0.0.1' }

function stored(service: GroupCoordinatorService): Promise<number | undefined> {
  return service.scheduleReadOperation(
    'test',
    'g',
    (s) => s.streams.group('g')?.storedDescriptionTopologyEpoch,
  )
}

describe('classic JoinGroup conversion with a topology description plugin', () => {
  it('throttles failed conversion deletes with growing windows, then converts and drops the entry', async () => {
    const plugin = new FakePlugin()
    const { service, clock, sensors } = await setUp(plugin)
    try {
      await emptyStreamsGroup(service, plugin, 0)
      plugin.failing = true
      const first = await service.classicGroups.joinGroup(jctx, join('m-1'))
      assert.deepEqual([first.errorCode, first.memberId], [ErrorCode.REBALANCE_IN_PROGRESS, 'm-1'])
      assert.deepEqual(plugin.deletes, ['g'])
      assert.equal(await stored(service), -2)
      const tdm = service.topologyDescriptions
      assert.deepEqual(tdm.backoff.entry('g'), { topologyEpoch: -2, attempts: 0, nextAttemptMs: 1_030_000 })
      assert.deepEqual(sensors, [['streams-group-topology-description-delete-error', 1]])

      // One millisecond before the window closes: refused, no plugin call.
      clock.advance(29_999)
      assert.equal(
        (await service.classicGroups.joinGroup(jctx, join())).errorCode,
        ErrorCode.REBALANCE_IN_PROGRESS,
      )
      assert.equal(plugin.deletes.length, 1)

      // Window over, still failing: the next window is twice as long.
      clock.advance(1)
      assert.equal(
        (await service.classicGroups.joinGroup(jctx, join())).errorCode,
        ErrorCode.REBALANCE_IN_PROGRESS,
      )
      assert.equal(plugin.deletes.length, 2)
      assert.deepEqual(tdm.backoff.entry('g'), { topologyEpoch: -2, attempts: 1, nextAttemptMs: 1_090_000 })

      plugin.failing = false
      clock.advance(59_999)
      assert.equal(tdm.isConversionDeleteThrottled('g'), true)
      clock.advance(1)
      const converted = await service.classicGroups.joinGroup(jctx, join())
      assert.equal(converted.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      assert.equal(plugin.deletes.length, 3)
      assert.equal(plugin.held.has('g'), false)
      assert.equal(await stored(service), undefined)
      assert.equal(tdm.backoff.entry('g'), undefined)
      assert.deepEqual(sensors.at(-1), ['streams-group-topology-description-delete-success', 1])
    } finally {
      await service.close()
    }
  })

  it('a group already at -2 gets no second barrier record; a stored -1 never reaches the plugin', async () => {
    const plugin = new FakePlugin()
    const { service, store } = await setUp(plugin)
    try {
      await emptyStreamsGroup(service, plugin, 0)
      plugin.failing = true
      await service.classicGroups.joinGroup(jctx, join())
      const before = (await store.load(0)).length
      service.topologyDescriptions.backoff.clearGroup('g')
      await service.classicGroups.joinGroup(jctx, join())
      assert.equal(plugin.deletes.length, 2)
      assert.equal((await store.load(0)).length, before, 'the second attempt finds -2 and writes nothing')
      // The cleanup cycle reclaims it once the plugin works: -2 -> -1; then the join converts directly.
      plugin.failing = false
      await service.topologyDescriptions.runCleanupCycle()
      assert.equal(await stored(service), -1)
      const converted = await service.classicGroups.joinGroup(jctx, join())
      assert.equal(converted.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      assert.equal(plugin.deletes.length, 3, 'only the cycle deleted')
      assert.equal(await stored(service), undefined)
    } finally {
      await service.close()
    }
  })

  it('a failed barrier write answers its own error without the member id; nothing reaches the plugin', async () => {
    const plugin = new FakePlugin()
    const { service, store } = await setUp(plugin)
    try {
      await emptyStreamsGroup(service, plugin, 0)
      store.failNextAppend()
      const r = await service.classicGroups.joinGroup(jctx, join('m-1'))
      assert.deepEqual([r.errorCode, r.memberId], [ErrorCode.NOT_COORDINATOR, ''])
      assert.deepEqual(plugin.deletes, [])
      assert.equal(await stored(service), 0)
    } finally {
      await service.close()
    }
  })

  it('without a plugin, a leftover stored epoch converts directly (its plugin data is not cleaned)', async () => {
    const plugin = new FakePlugin()
    const store = new MemoryRecordStore()
    const first = await setUp(plugin, store)
    await emptyStreamsGroup(first.service, plugin, 3)
    await first.service.close()
    const { service } = await setUp(null, store)
    try {
      assert.equal(await stored(service), 3)
      const r = await service.classicGroups.joinGroup(jctx, join())
      assert.equal(r.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      assert.equal(await stored(service), undefined)
      assert.deepEqual(plugin.deletes, [])
    } finally {
      await service.close()
    }
  })
})
