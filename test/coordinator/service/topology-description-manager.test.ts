// Direct tests of the TopologyDescriptionManager (KIP-1331 on the coordinator, Kafka's
// StreamsGroupTopologyDescriptionManager): the heartbeat solicitation gate and its back-off, the
// push's checks before the shard, and a push that stores a description. Its host runs the named
// operations on a group coordinator shard of the real runtime (test/testkit, manual clock).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TopologyDescriptionManager } from '../../../src/coordinator/service/topology-description-manager.js'
import type { ClassicCompletion } from '../../../src/coordinator/shard/classic/types.js'
import { GroupCoordinatorShard } from '../../../src/coordinator/shard/group-coordinator-shard.js'
import { StickyTaskAssignor } from '../../../src/coordinator/shard/streams/assignor/index.js'
import { STREAMS_GROUP_CONFIG_DEFAULTS } from '../../../src/coordinator/shard/streams/config.js'
import { createStreamsGroupHeartbeatResponse } from '../../../src/coordinator/shard/streams/wire.js'
import { guardPlugin } from '../../../src/plugin/guard.js'
import { InMemoryTopologyDescriptionPlugin } from '../../../src/plugin/builtin/memory.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import type { CoordinatorRecord } from '../../../src/protocol/generated/coordinator-records.js'
import { joinRequest, topicsImage } from '../shard/streams/harness.js'
import { ShardTestContext } from '../../testkit/shard-context.js'

type Context = ShardTestContext<GroupCoordinatorShard, CoordinatorRecord, ClassicCompletion>

const NO_DELAY = { ...STREAMS_GROUP_CONFIG_DEFAULTS, initialRebalanceDelayMs: 0, assignmentIntervalMs: 0 }
const GATE = {
  currentTopologyEpoch: 0,
  storedDescriptionTopologyEpoch: -1,
  failedDescriptionTopologyEpoch: -1,
}

async function setUp(withPlugin: boolean) {
  const sticky = new StickyTaskAssignor()
  const t: Context = await ShardTestContext.start({
    newShard: (timers) =>
      new GroupCoordinatorShard({
        topics: topicsImage({ foo: 2 }),
        assignors: { select: () => sticky },
        timers,
      }),
  })
  const plugin = withPlugin ? new InMemoryTopologyDescriptionPlugin() : null
  const manager = new TopologyDescriptionManager({
    plugin: plugin === null ? null : guardPlugin(plugin),
    host: {
      numShards: 1,
      shardFor: () => 0,
      write: (name, _shardId, op) => t.write(name, (shard) => op(shard)),
      read: (name, _shardId, op) => t.read(name, (shard) => op(shard)),
      errorCode: () => ErrorCode.UNKNOWN_SERVER_ERROR,
      isActive: () => true,
    },
    clock: t.clock,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    random: () => 0.5,
    cleanupIntervalMs: 600_000,
  })
  return { t, manager, plugin }
}

/** One member joined group g (topology epoch 0). */
async function joined(t: Context): Promise<void> {
  const r = await t.write('streams-group-heartbeat', (shard, nowMs) =>
    shard.streamsGroupHeartbeat(
      { nowMs, requestApiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1', config: NO_DELAY },
      joinRequest(),
    ),
  )
  assert.equal(r.errorCode, 0)
}

const push = (memberId: string, topologyEpoch = 0) => ({
  groupId: 'g',
  memberId,
  memberEpoch: 1,
  topologyEpoch,
  topologyDescription: { subtopologies: [], globalStores: [] },
})

describe('TopologyDescriptionManager', () => {
  it('without a plugin: never solicits, and a push is UNSUPPORTED_VERSION with the no-plugin message', async () => {
    const { t, manager } = await setUp(false)
    assert.equal(manager.pluginConfigured, false)
    const response = createStreamsGroupHeartbeatResponse()
    manager.maybeSetTopologyDescriptionRequired('g', 1, 0, response, GATE)
    assert.equal(response.topologyDescriptionRequired, false)
    assert.deepEqual(await manager.topologyDescriptionUpdate(push('m1') as never), {
      errorCode: ErrorCode.UNSUPPORTED_VERSION,
      errorMessage: 'The broker has no streams group topology description plugin configured.',
    })
    await t.close()
  })

  it('solicits once per back-off window, only from v1, for a live member, without a stored or failed epoch', async () => {
    const { t, manager } = await setUp(true)
    const ask = (version: number, memberEpoch: number, gate = GATE) => {
      const response = createStreamsGroupHeartbeatResponse()
      manager.maybeSetTopologyDescriptionRequired('g', version, memberEpoch, response, gate)
      return response.topologyDescriptionRequired
    }
    assert.equal(ask(0, 0), false, 'v0 has no such field')
    assert.equal(ask(1, -1), false, 'a leave')
    assert.equal(ask(1, 0, { ...GATE, storedDescriptionTopologyEpoch: 0 }), false, 'already stored')
    assert.equal(ask(1, 0, { ...GATE, failedDescriptionTopologyEpoch: 0 }), false, 'failed for good')
    assert.equal(ask(1, 0), true)
    assert.equal(ask(1, 0), false, 'within the back-off window')
    // Topograph D3: the window leaves with the group.
    manager.onGroupRemoved('g')
    assert.equal(ask(1, 0), true)
    await t.close()
  })

  it('a push is checked before the shard: member id, group id and description must be given', async () => {
    const { t, manager } = await setUp(true)
    const check = (request: object) => manager.topologyDescriptionUpdate(request as never)
    assert.deepEqual(await check(push('')), {
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: "MemberId can't be empty.",
    })
    assert.deepEqual(await check({ ...push('m1'), groupId: ' ' }), {
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: "GroupId can't be empty.",
    })
    assert.deepEqual(await check({ ...push('m1'), topologyDescription: null }), {
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: "TopologyDescription can't be null.",
    })
    await t.close()
  })

  it('a push from a member of the group stores the description and records the stored epoch', async () => {
    const { t, manager, plugin } = await setUp(true)
    await joined(t)
    assert.deepEqual(await manager.topologyDescriptionUpdate(push('m1') as never), {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
    })
    assert.equal(plugin!.usage.groups, 1)
    assert.equal(t.shard.streams.group('g')!.storedDescriptionTopologyEpoch, 0)
    const metadata = (await t.log()).filter((r) => r.type === 'StreamsGroupMetadata')
    // The −2 barrier first, then the stored epoch.
    assert.deepEqual(
      metadata.map(
        (r) => (r.value as { storedDescriptionTopologyEpoch: number }).storedDescriptionTopologyEpoch,
      ),
      [-1, -2, 0],
    )
    await t.close()
  })
})
