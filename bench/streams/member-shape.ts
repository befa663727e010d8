// The members of bench/streams/member-memory.ts and bench/streams/member-heartbeat.ts: one stateless
// subtopology reading a 20-partition topic, the real streams group manager with Kafka's sticky
// assignor, and the id shapes Kafka Streams uses (a 22-character base64 member id, a UUID process
// id, "<application.id>-<process id>-StreamThread-<n>-consumer").
import { StickyTaskAssignor } from '../../src/coordinator/shard/streams/assignor/index.js'
import {
  STREAMS_GROUP_CONFIG_DEFAULTS,
  type StreamsCoordinatorRecord,
  type StreamsGroupConfig,
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

/**
 * The steady heartbeats' benchmarks: the client host, and a config with quick assignments and a
 * session timeout no run reaches.
 */
const HOST = '/10.0.0.7'
const STEADY_CONFIG: StreamsGroupConfig = {
  ...STREAMS_GROUP_CONFIG_DEFAULTS,
  initialRebalanceDelayMs: 0,
  assignmentIntervalMs: 0,
  sessionTimeoutMs: 600_000,
}

/** A member and its group. */
export interface GroupMemberDriver extends MemberDriver {
  readonly groupId: string
}

/**
 * One heartbeat of `d` straight into `manager`, its records replayed as the runtime replays a
 * write's (and pushed to `kept` when given); returns whether the answer changed anything. The
 * steady heartbeat answers endpoint epoch 0 (no member has an endpoint); a join sends -1.
 */
export function managerHeartbeat(
  manager: StreamsGroupManager,
  d: GroupMemberDriver,
  nowMs: number,
  clientId: string,
  kept?: StreamsCoordinatorRecord[],
): boolean {
  const result = manager.streamsGroupHeartbeat(
    { nowMs, requestApiVersion: 1, clientId, clientHost: HOST, config: STEADY_CONFIG },
    memberRequest(d.groupId, d, d.epoch === 0 ? -1 : 0),
  )
  for (const r of result.records) {
    manager.replay(r)
    kept?.push(r)
  }
  const res = result.response
  if (res.errorCode !== 0) throw new Error(`${d.memberId}: error ${res.errorCode} ${res.errorMessage}`)
  const changed = res.activeTasks !== null || res.memberEpoch !== d.epoch || result.records.length > 0
  d.epoch = res.memberEpoch
  if (res.activeTasks !== null) d.active = res.activeTasks
  return changed
}

/**
 * Marks each member's session timer armed, as the runtime marks it on its watch: a steady heartbeat
 * then moves the soft deadline instead of asking for a timer.
 */
export function armSessions(manager: StreamsGroupManager, drivers: readonly GroupMemberDriver[]): void {
  for (const d of drivers) {
    const session = manager.group(d.groupId)!.slot(d.memberId)!
    session.armed = true
    session.dueMs = Number.MAX_SAFE_INTEGER
  }
}

/** Shuffles `xs` in place into a fixed order (from the ids' byte stream). */
export function shuffleInPlace<T>(xs: T[]): void {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = (bytes(4).readUInt32LE(0) % (i + 1)) | 0
    ;[xs[i], xs[j]] = [xs[j]!, xs[i]!]
  }
}

/**
 * `members` stable members in groups of `perGroup` on `manager`, joined and reconciled by their
 * heartbeats from `nowMs` on (one ms each); their records pushed to `kept` when given.
 */
export function stableMembers(
  manager: StreamsGroupManager,
  members: number,
  perGroup: number,
  nowMs: number,
  kept?: StreamsCoordinatorRecord[],
): { drivers: GroupMemberDriver[]; nowMs: number } {
  const drivers: GroupMemberDriver[] = []
  let now = nowMs
  for (let g = 0; g < members / perGroup; g++) {
    const groupId = `${APPLICATION}-g${g}`
    const group: GroupMemberDriver[] = newMembers(perGroup).map((d) => ({ ...d, groupId }))
    untilStable(groupId, group, (d) => managerHeartbeat(manager, d, now++, d.clientId, kept))
    drivers.push(...group)
  }
  return { drivers, nowMs: now }
}

/**
 * The steady heartbeats' benchmarks' arguments (members, group size, heartbeats a sample, samples),
 * each defaulting to `defaults`' own; prints the usage of `script` and exits 2 when one is wrong.
 */
export function steadyArgs(
  script: string,
  defaults: readonly [members: number, perGroup: number, count: number, samples: number],
): [members: number, perGroup: number, count: number, samples: number] {
  const [members, perGroup, count, samples] = defaults.map((d, i) => Number(process.argv[2 + i] ?? d)) as [
    number,
    number,
    number,
    number,
  ]
  if (!(members > 0) || !(perGroup > 0) || members % perGroup !== 0 || !(count > 0) || !(samples > 0)) {
    console.error(`usage: ${script} [members>0] [perGroup>0, divides members] [count>0] [samples>0]`)
    process.exit(2)
  }
  return [members, perGroup, count, samples]
}
