// Steady StreamsGroupHeartbeat throughput on one core, next to a bare framing server answering a
// fixed heartbeat-sized response (the ceiling), measured in the same run; then the heartbeat latency
// at half of the measured throughput.
//
// Shape: 1,000 streams groups × 10 members (10,000 members), one stateless subtopology reading a
// 20-partition topic. The members are joined first and heartbeat (reporting their owned tasks) until
// every group is stable; then the load sends, for every member in a fixed shuffled order, the steady
// heartbeat a Kafka Streams client sends when nothing changed: its current member epoch and
// endpoint epoch, null topology, null task lists, null process id, tags and offsets. Every answer
// is checked for error code 0.
//
// The Topograph server runs in this process's one JavaScript thread (one core), with
// coordinator.storage=sqlite (the default) and then memory; the load comes from a forked child
// process over loopback (bench/server/load-worker.ts): 4 connections × 16 in flight for the
// throughput, an open-loop schedule at half that rate for the latency. Bench-only settings:
// initial rebalance delay and assignment interval 0 (so the join phase is quick) and a 10-minute
// session timeout (so no member expires while another phase runs).
//
//   node --import tsx bench/streams/heartbeat.ts [seconds=5] [runs=1]
//
// TOPOGRAPH_BENCH_BUILD=dist runs the compiled server from dist/ (after `npm run build`) instead of
// the TypeScript sources (see bench/server/target.ts).
import type { StreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import type { WireClient } from '../../test/server/wire-client.js'
import { adoptAnswer, type HeartbeatingMember, heartbeatBody } from '../../test/helpers/streams-member.js'
import { runHeartbeatBench } from '../server/heartbeat-bench.js'
import { statelessTopology } from './member-shape.js'

const seconds = Number(process.argv[2] ?? 5)
const runs = Number(process.argv[3] ?? 1)
if (!(seconds > 0) || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: heartbeat.ts [seconds>0] [runs>=1]')
  process.exit(2)
}
const GROUPS = 1_000
const MEMBERS = 10
const PARTITIONS = 20
const TOPIC = 'hb-input'
/** Response frame offset of ErrorCode: correlation id (4), header tags (1), ThrottleTimeMs (4). */
const ERROR_CODE_AT = 9

interface Member extends HeartbeatingMember {
  readonly processId: string
}

const topology = statelessTopology(TOPIC)

function steadyBody(m: Member) {
  return heartbeatBody(m)
}

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

/** Joins one group's members and heartbeats until they share one epoch and nothing changes. */
async function joinGroup(c: WireClient, g: number): Promise<Member[]> {
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

await runHeartbeatBench<Member, StreamsGroupHeartbeatResponse>(
  {
    name: 'heartbeat',
    groups: GROUPS,
    membersPerGroup: MEMBERS,
    topic: TOPIC,
    partitions: PARTITIONS,
    config: {
      'group.streams.initial.rebalance.delay.ms': '0',
      'group.streams.assignment.interval.ms': '0',
      'group.streams.session.timeout.ms': '600000',
      'group.streams.max.session.timeout.ms': '600000',
    },
    apiKey: 88,
    apiVersion: 1,
    join: joinGroup,
    steadyBody,
    checkSteady(m, body) {
      if (body.errorCode !== 0 || body.memberEpoch !== m.epoch || body.activeTasks !== null) {
        throw new Error(`steady heartbeat of ${m.memberId}: ${JSON.stringify(body)}`)
      }
    },
    errorCodeAt: ERROR_CODE_AT,
  },
  seconds,
  runs,
)
