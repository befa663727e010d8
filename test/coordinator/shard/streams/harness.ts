/** Test harness: a streams manager driven by the real runtime (test/testkit), plus replay equivalence. */
import assert from 'node:assert/strict'
import { ShardTestContext } from '../../../testkit/shard-context.js'
import { StickyTaskAssignor } from '../../../../src/coordinator/shard/streams/assignor/index.js'
import type { ShardStateMachine } from '../../../../src/coordinator/runtime/types.js'
import type {
  TaskList,
  TasksTuple,
  TasksTupleWithEpochs,
} from '../../../../src/coordinator/shard/streams/tasks.js'
import {
  type ArmedTimers,
  memberValue,
  STREAMS_GROUP_CONFIG_DEFAULTS,
  type StreamsCoordinatorRecord,
  type StreamsGroupConfig,
  type StreamsGroupHeartbeatRequest,
  StreamsGroupManager,
  type StreamsHeartbeatResult,
  type TopicMetadata,
  type TopicsImage,
} from '../../../../src/coordinator/shard/streams/index.js'

export function topicsImage(
  topics: Record<string, number>,
): TopicsImage & { set(name: string, n: number): void } {
  const map = new Map<string, TopicMetadata>(
    Object.entries(topics).map(([name, n]) => [name, { topicId: `id-${name}`, numPartitions: n }]),
  )
  return {
    topic: (name) => map.get(name),
    set: (name, n) => void map.set(name, { topicId: `id-${name}`, numPartitions: n }),
  }
}

export const NO_DELAY: StreamsGroupConfig = {
  ...STREAMS_GROUP_CONFIG_DEFAULTS,
  initialRebalanceDelayMs: 0,
  assignmentIntervalMs: 0,
}

export function joinRequest(p: Partial<StreamsGroupHeartbeatRequest> = {}): StreamsGroupHeartbeatRequest {
  return {
    groupId: 'g',
    memberId: 'm1',
    memberEpoch: 0,
    endpointInformationEpoch: -1,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: 30000,
    topology: {
      epoch: 0,
      subtopologies: [
        {
          subtopologyId: '0',
          sourceTopics: ['foo'],
          sourceTopicRegex: [],
          stateChangelogTopics: [],
          repartitionSinkTopics: [],
          repartitionSourceTopics: [],
          copartitionGroups: [],
        },
      ],
    },
    activeTasks: [],
    standbyTasks: [],
    warmupTasks: [],
    processId: 'p1',
    userEndpoint: null,
    clientTags: null,
    taskOffsets: null,
    taskEndOffsets: null,
    shutdownApplication: false,
    ...p,
  }
}

export function heartbeatRequest(
  p: Partial<StreamsGroupHeartbeatRequest> = {},
): StreamsGroupHeartbeatRequest {
  return joinRequest({ topology: null, rebalanceTimeoutMs: -1, processId: null, ...p })
}

/** The streams manager as the runtime's shard (the manager's own onLoaded takes a config). */
export class StreamsShard implements ShardStateMachine<StreamsCoordinatorRecord> {
  readonly manager: StreamsGroupManager
  constructor(manager: StreamsGroupManager) {
    this.manager = manager
  }
  replay(record: StreamsCoordinatorRecord): void {
    this.manager.replay(record)
  }
}

/**
 * Runs heartbeats as write operations of the REAL runtime (test/testkit), on a manual clock that
 * starts at 0: records are appended and replayed, timers are the runtime's (armed after the append,
 * fired by `advance`), and the manager sees them through the runtime's ShardTimer.
 */
export class Harness {
  readonly t: ShardTestContext<StreamsShard, StreamsCoordinatorRecord>
  readonly image: ReturnType<typeof topicsImage>

  private constructor(
    t: ShardTestContext<StreamsShard, StreamsCoordinatorRecord>,
    image: ReturnType<typeof topicsImage>,
  ) {
    this.t = t
    this.image = image
  }

  static async start(image: ReturnType<typeof topicsImage>): Promise<Harness> {
    const t = await ShardTestContext.start<StreamsShard, StreamsCoordinatorRecord>({
      startMs: 0,
      newShard: (timers) => new StreamsShard(newManager(image, timers)),
    })
    return new Harness(t, image)
  }

  get manager(): StreamsGroupManager {
    return this.t.shard.manager
  }

  get nowMs(): number {
    return this.t.nowMs
  }

  /** Moves the clock to `ms` (timers that fall due are queued; `advance` waits for them). */
  set nowMs(ms: number) {
    this.t.clock.advance(ms - this.t.nowMs)
  }

  /** Runs a heartbeat whose append fails: nothing is replayed and no timer is armed. */
  async failedHeartbeat(
    request: StreamsGroupHeartbeatRequest,
    config: StreamsGroupConfig = STREAMS_GROUP_CONFIG_DEFAULTS,
  ): Promise<StreamsHeartbeatResult> {
    let produced: StreamsHeartbeatResult | undefined
    await this.t
      .write('streams-group-heartbeat', (shard, nowMs) => {
        produced = shard.manager.streamsGroupHeartbeat(
          { nowMs, requestApiVersion: 1, clientId: 'client', clientHost: '/127.0.0.1', config },
          request,
        )
        if (produced.records.length > 0) this.t.failNextAppend()
        return produced
      })
      .catch(() => undefined)
    return produced!
  }

  async heartbeat(
    request: StreamsGroupHeartbeatRequest,
    config: StreamsGroupConfig = STREAMS_GROUP_CONFIG_DEFAULTS,
    requestApiVersion = 1,
  ): Promise<StreamsHeartbeatResult> {
    let produced: StreamsHeartbeatResult | undefined
    await this.t.write('streams-group-heartbeat', (shard, nowMs) => {
      produced = shard.manager.streamsGroupHeartbeat(
        { nowMs, requestApiVersion, clientId: 'client', clientHost: '/127.0.0.1', config },
        request,
      )
      return produced
    })
    return produced!
  }

  /** Whether the runtime has the timer armed. */
  isScheduled(key: string): boolean {
    return this.t.isScheduled(key)
  }

  /** When the runtime's timer is due (undefined when not armed). */
  dueMs(key: string): number | undefined {
    return this.t.runtime.timer(0).dueMs(key)
  }

  /** Loses a timer (the runtime cancels it; its watch is told). */
  dropTimer(key: string): void {
    this.t.runtime.cancelTimer(0, key)
  }

  /**
   * Every record written so far, in log order, as the store gives them back (decoded; the decoder's
   * value version 0, which a handler leaves unset, is left out so they compare with what handlers
   * return).
   */
  async records(): Promise<StreamsCoordinatorRecord[]> {
    return (await this.t.log()).map((r) => {
      if (r.valueVersion !== 0) return r
      const { valueVersion: _, ...rest } = r
      return rest as StreamsCoordinatorRecord
    })
  }

  /** Advances time, firing due timers through the runtime; returns the records they wrote. */
  async advance(ms: number): Promise<StreamsCoordinatorRecord[]> {
    const before = (await this.t.log()).length
    await this.t.advance(ms)
    return (await this.records()).slice(before)
  }

  /** Replaying everything written so far into a fresh manager gives the same persisted state. */
  async assertReplayEquivalent(): Promise<void> {
    const fresh = newManager(this.image)
    for (const r of await this.t.log()) fresh.replay(r)
    assert.deepEqual(snapshot(fresh), snapshot(this.manager))
  }

  async close(): Promise<void> {
    await this.t.close()
  }
}

export function newManager(image: TopicsImage, timers?: ArmedTimers): StreamsGroupManager {
  const sticky = new StickyTaskAssignor()
  return new StreamsGroupManager({ topics: image, assignors: { select: () => sticky }, timers })
}

/** Every persisted field of every group (soft state excluded). */
export function snapshot(m: StreamsGroupManager): unknown {
  return m.groupIds().map((id) => {
    const g = m.group(id)!
    return {
      id,
      state: g.state(),
      groupEpoch: g.groupEpoch,
      metadataHash: g.metadataHash,
      validated: g.validatedTopologyEpoch,
      configs: [...g.lastAssignmentConfigs],
      stored: g.storedDescriptionTopologyEpoch,
      failed: g.failedDescriptionTopologyEpoch,
      assignmentEpoch: g.assignmentEpoch,
      assignmentTimestamp: g.assignmentTimestamp,
      topology: g.topology?.value ?? null,
      members: [...g.members.values()].map((mb) => ({
        ...memberValue(mb),
        clientTags: [...mb.clientTags],
        assignedTasks: flatten(mb.assignedTasks),
        tasksPendingRevocation: flatten(mb.tasksPendingRevocation),
      })),
      targets: [...g.targetAssignments].map(([k, t]) => [k, flatten(t, false)]),
    }
  })
}

function flatten(t: TasksTuple | TasksTupleWithEpochs, withEpochs = true) {
  // (subtopology id, partition[, epoch]) in sorted order; only a current assignment's active tasks
  // carry epochs.
  const f = (l: TaskList, epochs = false) => {
    const out: (string | number)[][] = []
    l.forEach((id, p, e) => {
      out.push(epochs ? [id, p, e] : [id, p])
    })
    return out
  }
  return { active: f(t.active, withEpochs), standby: f(t.standby), warmup: f(t.warmup) }
}
