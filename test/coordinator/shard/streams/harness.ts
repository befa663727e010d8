/** Test harness: a manager whose handler records are replayed like the runtime does, plus replay equivalence. */
import assert from 'node:assert/strict'
import { StickyTaskAssignor } from '../../../../src/coordinator/shard/streams/assignor/index.js'
import {
  type ArmedTimers,
  STREAMS_GROUP_CONFIG_DEFAULTS,
  type StreamsCoordinatorRecord,
  type StreamsGroupConfig,
  type StreamsGroupHeartbeatRequest,
  StreamsGroupManager,
  type StreamsHeartbeatResult,
  type StreamsTimerIntents,
  type StreamsTimerResult,
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

interface PendingTimer {
  readonly dueMs: number
  readonly op: (nowMs: number) => StreamsTimerResult
  readonly watch: { armed: boolean; dueMs: number } | undefined
}

/** Runs handlers, replays their records, keeps every record and the scheduled timers. */
export class Harness {
  readonly manager: StreamsGroupManager
  readonly log: StreamsCoordinatorRecord[] = []
  readonly timers = new Map<string, PendingTimer>()
  readonly image: ReturnType<typeof topicsImage>
  nowMs = 0

  constructor(image: ReturnType<typeof topicsImage>) {
    this.image = image
    // The manager sees the timers this harness armed, as it sees the runtime's in production.
    this.manager = newManager(image, { isScheduled: (key) => this.timers.has(key) })
  }

  /** Runs a heartbeat whose append fails: nothing is replayed and no timer is armed. */
  failedHeartbeat(
    request: StreamsGroupHeartbeatRequest,
    config: StreamsGroupConfig = STREAMS_GROUP_CONFIG_DEFAULTS,
  ): StreamsHeartbeatResult {
    return this.manager.streamsGroupHeartbeat(
      { nowMs: this.nowMs, requestApiVersion: 1, clientId: 'client', clientHost: '/127.0.0.1', config },
      request,
    )
  }

  heartbeat(
    request: StreamsGroupHeartbeatRequest,
    config: StreamsGroupConfig = STREAMS_GROUP_CONFIG_DEFAULTS,
    requestApiVersion = 1,
  ): StreamsHeartbeatResult {
    const r = this.manager.streamsGroupHeartbeat(
      { nowMs: this.nowMs, requestApiVersion, clientId: 'client', clientHost: '/127.0.0.1', config },
      request,
    )
    this.#apply(r.records, r.timers)
    return r
  }

  #apply(records: readonly StreamsCoordinatorRecord[], timers: StreamsTimerIntents | undefined): void {
    for (const rec of records) {
      this.manager.replay(rec)
      this.log.push(rec)
    }
    for (const k of timers?.cancel ?? []) this.dropTimer(k)
    for (const t of timers?.schedule ?? []) {
      // As the runtime keeps a timer's watch informed (TimerOptions.watch).
      const previous = this.timers.get(t.key)
      if (previous?.watch !== undefined && previous.watch !== t.watch) previous.watch.armed = false
      const dueMs = this.nowMs + t.delayMs
      this.timers.set(t.key, { dueMs, op: t.op, watch: t.watch })
      if (t.watch !== undefined) {
        t.watch.armed = true
        t.watch.dueMs = dueMs
      }
    }
  }

  /** Forgets a timer as the runtime does when it is cancelled (or lost): its watch is told. */
  dropTimer(key: string): void {
    const t = this.timers.get(key)
    if (t === undefined) return
    this.timers.delete(key)
    if (t.watch !== undefined) t.watch.armed = false
  }

  /** Advances time and fires due timers; returns the records they wrote. */
  advance(ms: number): StreamsCoordinatorRecord[] {
    this.nowMs += ms
    const out: StreamsCoordinatorRecord[] = []
    for (const [key, t] of [...this.timers]) {
      if (t.dueMs > this.nowMs || !this.timers.has(key)) continue
      this.dropTimer(key)
      const r = t.op(this.nowMs)
      out.push(...r.records)
      this.#apply(r.records, r.timers)
    }
    return out
  }

  /** Replaying everything written so far into a fresh manager gives the same persisted state. */
  assertReplayEquivalent(): void {
    const fresh = newManager(this.image)
    for (const r of this.log) fresh.replay(r)
    assert.deepEqual(snapshot(fresh), snapshot(this.manager))
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
        ...mb,
        clientTags: [...mb.clientTags],
        assignedTasks: flatten(mb.assignedTasks),
        tasksPendingRevocation: flatten(mb.tasksPendingRevocation),
      })),
      targets: [...g.targetAssignments].map(([k, t]) => [k, flatten(t)]),
    }
  })
}

function flatten(t: {
  active: ReadonlyMap<string, unknown>
  standby: ReadonlyMap<string, unknown>
  warmup: ReadonlyMap<string, unknown>
}) {
  const f = (m: ReadonlyMap<string, unknown>) =>
    [...m]
      .map(([k, v]) => [
        k,
        v instanceof Map ? [...v].sort((a, b) => a[0] - b[0]) : [...(v as Set<number>)].sort((a, b) => a - b),
      ])
      .filter(([, v]) => (v as unknown[]).length > 0)
      .sort()
  return { active: f(t.active), standby: f(t.standby), warmup: f(t.warmup) }
}
