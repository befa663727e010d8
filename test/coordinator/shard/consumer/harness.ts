/** Shared setup of the consumer group shard tests: a catalog, a shard, a log the records replay from. */
import assert from 'node:assert/strict'
import {
  CONSUMER_GROUP_CONFIG_DEFAULTS,
  type ConsumerGroupConfig,
} from '../../../../src/coordinator/shard/consumer/config.js'
import { CLASSIC_GROUP_CONFIG_DEFAULTS } from '../../../../src/coordinator/shard/classic/manager.js'
import type { ConsumerHeartbeatContext } from '../../../../src/coordinator/shard/consumer/manager.js'
import {
  GroupCoordinatorShard,
  type GroupCoordinatorResult,
} from '../../../../src/coordinator/shard/index.js'
import type { TopicMetadata } from '../../../../src/coordinator/shard/streams/configured-topology.js'
import { StickyTaskAssignor } from '../../../../src/coordinator/shard/streams/assignor/index.js'
import type { CoordinatorRecord } from '../../../../src/protocol/generated/coordinator-records.js'
import type { ConsumerGroupHeartbeatRequest } from '../../../../src/protocol/generated/messages/ConsumerGroupHeartbeatRequest.js'
import { decodeCoordinatorRecord, encodeCoordinatorRecord } from '../../../../src/protocol/records.js'

/** A base64url topic id made from a small number (valid on the wire). */
export function topicId(n: number): string {
  const b = Buffer.alloc(16)
  b.writeUInt32BE(n, 12)
  b[0] = 0x10
  return b.toString('base64url')
}

export interface Catalog {
  topic(name: string): TopicMetadata | undefined
  topicNames(): Iterable<string>
  set(name: string, partitions: number): void
  remove(name: string): void
  id(name: string): string
}

export function catalog(topics: Record<string, number>): Catalog {
  const map = new Map<string, TopicMetadata>()
  let next = 1
  const ids = new Map<string, string>()
  const id = (name: string): string => {
    let v = ids.get(name)
    if (v === undefined) ids.set(name, (v = topicId(next++)))
    return v
  }
  for (const [name, n] of Object.entries(topics)) map.set(name, { topicId: id(name), numPartitions: n })
  return {
    topic: (name) => map.get(name),
    topicNames: () => map.keys(),
    set: (name, n) => void map.set(name, { topicId: id(name), numPartitions: n }),
    remove: (name) => void map.delete(name),
    id,
  }
}

/** Kafka's defaults with assignment on every epoch bump (no interval), so tests see it at once. */
export const CONFIG: ConsumerGroupConfig = { ...CONSUMER_GROUP_CONFIG_DEFAULTS, assignmentIntervalMs: 0 }

export function ctx(
  nowMs: number,
  config: ConsumerGroupConfig = CONFIG,
  apiVersion = 1,
): ConsumerHeartbeatContext {
  return {
    nowMs,
    requestApiVersion: apiVersion,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    config,
    newMemberId: () => 'generated-member-id',
  }
}

export function join(
  memberId: string,
  p: Partial<ConsumerGroupHeartbeatRequest> = {},
): ConsumerGroupHeartbeatRequest {
  return {
    groupId: 'g',
    memberId,
    memberEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: 30000,
    subscribedTopicNames: ['foo'],
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: [],
    ...p,
  }
}

export function beat(
  memberId: string,
  memberEpoch: number,
  owned: { topicId: string; partitions: number[] }[] | null,
  p: Partial<ConsumerGroupHeartbeatRequest> = {},
): ConsumerGroupHeartbeatRequest {
  return {
    groupId: 'g',
    memberId,
    memberEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: owned,
    ...p,
  }
}

export class Harness {
  readonly topics: Catalog
  readonly shard: GroupCoordinatorShard
  readonly log: CoordinatorRecord[] = []
  config: ConsumerGroupConfig = CONFIG

  readonly #classicMaxSize: number | undefined

  /** `classicMaxSize`: group.max.size of the classic groups (default: Kafka's). */
  constructor(topics: Record<string, number> = { foo: 4 }, classicMaxSize?: number) {
    this.topics = catalog(topics)
    this.#classicMaxSize = classicMaxSize
    this.shard = this.newShard()
  }

  newShard(): GroupCoordinatorShard {
    return new GroupCoordinatorShard({
      topics: this.topics,
      assignors: { select: () => new StickyTaskAssignor() },
      consumerConfig: () => this.config,
      classic:
        this.#classicMaxSize === undefined
          ? undefined
          : { ...CLASSIC_GROUP_CONFIG_DEFAULTS, maxSize: this.#classicMaxSize },
    })
  }

  /** Applies a write result as the runtime does: records through their wire encoding, then replay. */
  apply<T>(r: GroupCoordinatorResult<T>): T {
    for (const rec of r.records) {
      const enc = encodeCoordinatorRecord(rec)
      const dec = decodeCoordinatorRecord(enc.key, enc.value)
      this.log.push(dec)
      this.shard.replay(dec)
    }
    return r.response
  }

  heartbeat(req: ConsumerGroupHeartbeatRequest, nowMs = 0, apiVersion = 1) {
    const r = this.shard.consumerGroupHeartbeat(ctx(nowMs, this.config, apiVersion), req)
    const response = this.apply(r)
    this.arm(r.timers, nowMs)
    return { result: r, response }
  }

  /**
   * What the runtime does with a result's timers once its records are durable: a cancelled or
   * replaced timer's watch is no longer armed; a scheduled one's is, due `delayMs` from now.
   */
  arm(timers: GroupCoordinatorResult<unknown>['timers'], nowMs: number): void {
    for (const key of timers?.cancel ?? []) {
      const w = this.#watches.get(key)
      if (w) w.armed = false
      this.#watches.delete(key)
    }
    for (const t of timers?.schedule ?? []) {
      const old = this.#watches.get(t.key)
      if (old && old !== t.watch) old.armed = false
      if (t.watch) {
        t.watch.armed = true
        t.watch.dueMs = nowMs + t.delayMs
        this.#watches.set(t.key, t.watch)
      } else this.#watches.delete(t.key)
    }
  }
  readonly #watches = new Map<string, { armed: boolean; dueMs: number }>()

  /** Runs a timer the last results asked for, by key; returns the timer's result once applied. */
  fire(timers: GroupCoordinatorResult<unknown>['timers'], key: string, nowMs: number) {
    const t = timers?.schedule?.find((s) => s.key === key)
    assert.ok(t, `timer ${key} scheduled`)
    if (t.watch) t.watch.armed = false
    this.#watches.delete(key)
    const r = t.op(nowMs)
    this.apply(r)
    this.arm(r.timers, nowMs)
    return r
  }

  /** Partitions of `name` in a response's assignment. */
  owned(response: { assignment: { topicPartitions: { topicId: string; partitions: number[] }[] } | null }) {
    return response.assignment?.topicPartitions ?? []
  }

  /**
   * Everything the shard shows of its consumer groups, and every persisted field of each (what the
   * records carry: epochs, metadata hash, assignment time, members with their classic metadata,
   * targets, matched patterns), for replay equivalence. Soft state (refresh deadlines, sessions) is
   * left out.
   */
  snapshot(shard: GroupCoordinatorShard = this.shard) {
    const groups = shard.listGroups([], []).sort((a, b) => (a.groupId < b.groupId ? -1 : 1))
    const byKey = <V>(m: ReadonlyMap<string, V>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const persisted = shard.consumer
      .groupIds()
      .sort()
      .map((id) => {
        const g = shard.consumer.group(id)!
        return {
          id,
          groupEpoch: g.groupEpoch,
          metadataHash: g.metadataHash,
          assignmentEpoch: g.assignmentEpoch,
          assignmentTimestamp: g.assignmentTimestamp,
          hasSubscriptionMetadataRecord: g.hasSubscriptionMetadataRecord,
          members: byKey(g.members),
          targets: byKey(g.targetAssignments),
          regexes: byKey(g.resolvedRegularExpressions),
          regexCounts: byKey(g.subscribedRegularExpressions),
        }
      })
    return { groups, describe: shard.consumerGroupDescribe(groups.map((g) => g.groupId)), persisted }
  }

  /** A new shard loaded from the log (what a restart does). */
  reloaded(): GroupCoordinatorShard {
    const s = this.newShard()
    for (const r of this.log) s.replay(r)
    return s
  }
}

/** An OffsetCommit of one offset of partition 0 of `foo` into group g. */
export function offsetCommit(topicId: string, memberEpoch: number, memberId: string, offset: bigint) {
  const partition = {
    partitionIndex: 0,
    committedOffset: offset,
    committedLeaderEpoch: -1,
    committedMetadata: '',
  }
  return {
    groupId: 'g',
    generationIdOrMemberEpoch: memberEpoch,
    memberId,
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [{ name: 'foo', topicId, partitions: [partition] }],
  }
}
