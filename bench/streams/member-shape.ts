// The members of bench/streams/member-memory.ts and bench/streams/member-heartbeat.ts: one stateless
// subtopology reading a 20-partition topic, the real streams group manager with Kafka's sticky
// assignor, and the id shapes Kafka Streams uses (a 22-character base64 member id, a UUID process
// id, "<application.id>-<process id>-StreamThread-<n>-consumer").
import { StickyTaskAssignor } from '../../src/coordinator/shard/streams/assignor/index.js'
import {
  type StreamsGroupHeartbeatRequest,
  StreamsGroupManager,
  type TaskIds,
} from '../../src/coordinator/shard/streams/index.js'

export const PARTITIONS = 20
export const TOPIC = 'orders'
export const APPLICATION = 'order-enricher'
/** A stateless topology of one subtopology reading `topic` (the streams benchmarks' shape). */
export function statelessTopology(topic: string) {
  return {
    epoch: 0,
    subtopologies: [
      {
        subtopologyId: '0',
        sourceTopics: [topic],
        sourceTopicRegex: [],
        stateChangelogTopics: [],
        repartitionSinkTopics: [],
        repartitionSourceTopics: [],
        copartitionGroups: [],
      },
    ],
  }
}
export const topology = statelessTopology(TOPIC)

/** A deterministic stream of bytes for ids (the figures do not depend on the values). */
let seed = 0x2545f491
export function bytes(n: number): Buffer {
  const b = Buffer.alloc(n)
  for (let i = 0; i < n; i++) {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    b[i] = seed & 0xff
  }
  return b
}
export const uuid = () => {
  const h = bytes(16).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** A string as a request decoder makes it: flat, of its own (not a concatenation). */
export const flat = (s: string) => Buffer.from(s, 'latin1').toString('latin1')

export function newManager(): StreamsGroupManager {
  const sticky = new StickyTaskAssignor()
  return new StreamsGroupManager({
    topics: {
      topic: (name) =>
        name === TOPIC ? { topicId: 'b3JkZXJzLXRvcGljLWlkMQ', numPartitions: PARTITIONS } : undefined,
    },
    assignors: { select: () => sticky },
  })
}

/**
 * A member's StreamsGroupHeartbeat as Kafka Streams sends it: on a join (epoch 0) with its
 * topology, process id, tags and rebalance timeout; then member id, epoch and owned tasks only.
 */
export function memberRequest(
  groupId: string,
  d: {
    readonly memberId: string
    readonly processId: string
    readonly epoch: number
    readonly active: TaskIds[]
  },
  endpointInformationEpoch: number,
): StreamsGroupHeartbeatRequest {
  const joining = d.epoch === 0
  return {
    groupId,
    memberId: d.memberId,
    memberEpoch: d.epoch,
    endpointInformationEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: joining ? 300_000 : -1,
    topology: joining ? topology : null,
    activeTasks: d.active,
    standbyTasks: [],
    warmupTasks: [],
    processId: joining ? d.processId : null,
    userEndpoint: null,
    clientTags: joining ? [] : null,
    taskOffsets: null,
    taskEndOffsets: null,
    shutdownApplication: false,
  }
}

/** A member of a group in the making: its ids, and its epoch and tasks as the answers leave them. */
export interface MemberDriver {
  readonly memberId: string
  readonly processId: string
  readonly clientId: string
  epoch: number
  active: TaskIds[]
}

/** `perGroup` new members with Kafka Streams' id shapes, one process each (thread n of its process). */
export function newMembers(perGroup: number): MemberDriver[] {
  return Array.from({ length: perGroup }, (_, i) => {
    const processId = flat(uuid())
    return {
      memberId: flat(bytes(16).toString('base64url')),
      processId,
      clientId: flat(`${APPLICATION}-${processId}-StreamThread-${i + 1}-consumer`),
      epoch: 0,
      active: [],
    }
  })
}

/**
 * Heartbeats every member in turn (`beat` returns whether its answer changed anything) until a
 * round changes nothing and the group's tasks are all owned.
 */
export function untilStable<D extends MemberDriver>(
  groupId: string,
  members: readonly D[],
  beat: (d: D) => boolean,
): void {
  for (let round = 0; ; round++) {
    if (round === 50) throw new Error(`group ${groupId} did not become stable`)
    let changed = false
    for (const d of members) changed = beat(d) || changed
    const owned = members.reduce((n, d) => n + d.active.reduce((k, t) => k + t.partitions.length, 0), 0)
    if (round > 0 && !changed && owned === PARTITIONS) break
  }
}
