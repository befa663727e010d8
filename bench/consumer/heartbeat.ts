// Steady ConsumerGroupHeartbeat throughput on one core, next to a bare framing server answering the
// same heartbeat response (the ceiling), measured in the same run; then the heartbeat latency at half
// of the measured throughput. The harness is the streams heartbeat benchmark's
// (bench/server/heartbeat-bench.ts); only the protocol differs.
//
// Shape: 1,000 consumer groups × 10 members (10,000 members), every member subscribed by name to one
// 20-partition topic. The members are joined first and heartbeat (reporting their owned partitions)
// until every group is stable; then the load sends, for every member in a fixed shuffled order, the
// steady heartbeat Kafka's Java consumer sends when nothing changed: its member id and epoch, and
// null for the rebalance timeout (-1), subscription, pattern, assignor and owned partitions. Every
// answer is checked for error code 0. Bench-only settings: assignment interval 0 (so the join phase
// is quick) and a 10-minute session timeout (so no member expires while another phase runs).
//
//   node --import tsx bench/consumer/heartbeat.ts [seconds=5] [runs=1]
//
// TOPOGRAPH_BENCH_BUILD=dist runs the compiled server from dist/ (see bench/server/target.ts).
import type { ConsumerGroupHeartbeatResponse } from '../../src/protocol/generated/messages/ConsumerGroupHeartbeatResponse.js'
import type { WireClient } from '../../test/server/wire-client.js'
import { runHeartbeatBench } from '../server/heartbeat-bench.js'

const seconds = Number(process.argv[2] ?? 5)
const runs = Number(process.argv[3] ?? 1)
if (!(seconds > 0) || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: heartbeat.ts [seconds>0] [runs>=1]')
  process.exit(2)
}
const GROUPS = 1_000
const MEMBERS = 10
const PARTITIONS = 20
const TOPIC = 'chb-input'
/** Response frame offset of ErrorCode: correlation id (4), header tags (1), ThrottleTimeMs (4). */
const ERROR_CODE_AT = 9

type Owned = { topicId: string; partitions: number[] }[]
interface Member {
  readonly groupId: string
  readonly memberId: string
  epoch: number
  owned: Owned
}

function steadyBody(m: Member) {
  return {
    groupId: m.groupId,
    memberId: m.memberId,
    memberEpoch: m.epoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: null,
  }
}

/** A heartbeat while joining: the subscription on the first one, the owned partitions on every one. */
async function joinHeartbeat(c: WireClient, m: Member): Promise<ConsumerGroupHeartbeatResponse> {
  const joining = m.epoch === 0
  const { body } = await c.request<ConsumerGroupHeartbeatResponse>(68, 1, {
    ...steadyBody(m),
    rebalanceTimeoutMs: joining ? 30_000 : -1,
    subscribedTopicNames: joining ? [TOPIC] : null,
    topicPartitions: m.owned,
  })
  if (body.errorCode !== 0) throw new Error(`${m.memberId}: error ${body.errorCode} ${body.errorMessage}`)
  m.epoch = body.memberEpoch
  if (body.assignment !== null) m.owned = body.assignment.topicPartitions
  return body
}

/** Joins one group's members and heartbeats until they share one epoch and nothing changes. */
async function joinGroup(c: WireClient, g: number): Promise<Member[]> {
  const members: Member[] = Array.from({ length: MEMBERS }, (_, i) => ({
    groupId: `chb-group-${g}`,
    memberId: `chb-member-${g}-${i}`,
    epoch: 0,
    owned: [],
  }))
  await Promise.all(members.map((m) => joinHeartbeat(c, m)))
  for (let round = 0; round < 50; round++) {
    const before = members.map((m) => m.epoch)
    const answers = await Promise.all(members.map((m) => joinHeartbeat(c, m)))
    const unchanged = answers.every((r, i) => r.assignment === null && r.memberEpoch === before[i])
    const owned = members.reduce((n, m) => n + m.owned.reduce((k, t) => k + t.partitions.length, 0), 0)
    if (unchanged && members.every((m) => m.epoch === members[0]!.epoch) && owned === PARTITIONS)
      return members
    if (round > 2) await new Promise((r) => setTimeout(r, 5))
  }
  throw new Error(`group ${g} did not become stable`)
}

await runHeartbeatBench<Member, ConsumerGroupHeartbeatResponse>(
  {
    name: 'consumer-heartbeat',
    groups: GROUPS,
    membersPerGroup: MEMBERS,
    topic: TOPIC,
    partitions: PARTITIONS,
    config: {
      'group.consumer.assignment.interval.ms': '0',
      'group.consumer.session.timeout.ms': '600000',
      'group.consumer.max.session.timeout.ms': '600000',
    },
    apiKey: 68,
    apiVersion: 1,
    join: joinGroup,
    steadyBody,
    checkSteady(m, body) {
      if (body.errorCode !== 0 || body.memberEpoch !== m.epoch || body.assignment !== null) {
        throw new Error(`steady heartbeat of ${m.memberId}: ${JSON.stringify(body)}`)
      }
    },
    errorCodeAt: ERROR_CODE_AT,
  },
  seconds,
  runs,
)
