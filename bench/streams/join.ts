// Joining a streams group over the wire until it is stable, as the server benchmarks of steady
// StreamsGroupHeartbeats do: 10 members a group, one stateless subtopology reading a 20-partition
// topic, each member's first heartbeat carrying the topology, every heartbeat its owned tasks.
import type { StreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { WireClient } from '../../test/server/wire-client.js'
import { adoptAnswer, type HeartbeatingMember, heartbeatBody } from '../../test/helpers/streams-member.js'
import { createLogger, parseConfig, type RunningServer, startServer } from '../server/target.js'
import { statelessTopology } from './member-shape.js'

export const GROUPS = 1_000
export const MEMBERS = 10
export const PARTITIONS = 20
export const TOPIC = 'hb-input'
/** Response frame offset of ErrorCode: correlation id (4), header tags (1), ThrottleTimeMs (4). */
export const ERROR_CODE_AT = 9

/** The benchmarks' settings: quick joins, and no member expires while another phase runs. */
export const JOIN_CONFIG: Readonly<Record<string, string>> = {
  'group.streams.initial.rebalance.delay.ms': '0',
  'group.streams.assignment.interval.ms': '0',
  'group.streams.session.timeout.ms': '600000',
  'group.streams.max.session.timeout.ms': '600000',
}

export interface Member extends HeartbeatingMember {
  readonly processId: string
}

const topology = statelessTopology(TOPIC)

/** A heartbeat while joining: the topology on the first one, the owned tasks on every one. */
async function joinHeartbeat(c: WireClient, m: Member): Promise<StreamsGroupHeartbeatResponse> {
  const joining = m.epoch === 0
  const { body } = await c.request<StreamsGroupHeartbeatResponse>(88, 1, {
    ...heartbeatBody(m, joining ? { topology, processId: m.processId } : null),
    activeTasks: m.active,
    standbyTasks: m.standby,
    warmupTasks: m.warmup,
  })
  if (body.errorCode !== 0) throw new Error(`${m.memberId}: error ${body.errorCode} ${body.errorMessage}`)
  adoptAnswer(m, body)
  return body
}

/** Joins group `g`'s members and heartbeats until they share one epoch and nothing changes. */
export async function joinGroup(c: WireClient, g: number): Promise<Member[]> {
  const members: Member[] = Array.from({ length: MEMBERS }, (_, i) => ({
    groupId: `hb-group-${g}`,
    memberId: `hb-member-${g}-${i}`,
    processId: `hb-process-${g}-${i}`,
    epoch: 0,
    endpointEpoch: 0,
    active: [],
    standby: [],
    warmup: [],
  }))
  await Promise.all(members.map((m) => joinHeartbeat(c, m)))
  for (let round = 0; round < 50; round++) {
    const before = members.map((m) => m.epoch)
    const answers = await Promise.all(members.map((m) => joinHeartbeat(c, m)))
    const unchanged = answers.every(
      (r, i) =>
        r.activeTasks === null &&
        r.standbyTasks === null &&
        r.warmupTasks === null &&
        r.memberEpoch === before[i],
    )
    const owned = members.reduce((n, m) => n + m.active.reduce((k, t) => k + t.partitions.length, 0), 0)
    if (unchanged && members.every((m) => m.epoch === members[0].epoch) && owned === PARTITIONS)
      return members
    if (round > 2) await new Promise((r) => setTimeout(r, 5))
  }
  throw new Error(`group ${g} did not become stable`)
}

/** A server on `dataDir` with coordinator.storage=sqlite, {@link JOIN_CONFIG} and `config`. */
export function serverOn(
  dataDir: string,
  config: Readonly<Record<string, string>> = {},
): Promise<RunningServer> {
  return startServer(
    parseConfig({
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'data.dir': dataDir,
      'coordinator.storage': 'sqlite',
      'console.listener': 'none',
      ...JOIN_CONFIG,
      ...config,
    }),
    { logger: createLogger({ level: 'silent' }) },
  )
}

/** A server on the empty `dataDir` ({@link serverOn}) with the topic and the first `groups` groups joined by requests. */
export async function joinedServer(
  dataDir: string,
  groups = GROUPS,
  config: Readonly<Record<string, string>> = {},
): Promise<{ server: RunningServer; dataDir: string; members: Member[] }> {
  const server = await serverOn(dataDir, config)
  const port = server.address.port
  const admin = await WireClient.connect(port)
  await admin.request(19, 7, {
    topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 1000,
  })
  admin.close()
  const members: Member[] = []
  const clients = await Promise.all(Array.from({ length: 16 }, () => WireClient.connect(port)))
  let next = 0
  await Promise.all(
    clients.map(async (c) => {
      while (next < groups) members.push(...(await joinGroup(c, next++)))
    }),
  )
  for (const c of clients) c.close()
  return { server, dataDir, members }
}
