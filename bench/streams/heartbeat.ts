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
import { heartbeatBody } from '../../test/helpers/streams-member.js'
import { runHeartbeatBench } from '../server/heartbeat-bench.js'
import {
  ERROR_CODE_AT,
  GROUPS,
  JOIN_CONFIG,
  joinGroup,
  MEMBERS,
  type Member,
  PARTITIONS,
  TOPIC,
} from './join.js'

const seconds = Number(process.argv[2] ?? 5)
const runs = Number(process.argv[3] ?? 1)
if (!(seconds > 0) || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: heartbeat.ts [seconds>0] [runs>=1]')
  process.exit(2)
}

function steadyBody(m: Member) {
  return heartbeatBody(m)
}

await runHeartbeatBench<Member, StreamsGroupHeartbeatResponse>(
  {
    name: 'heartbeat',
    groups: GROUPS,
    membersPerGroup: MEMBERS,
    topic: TOPIC,
    partitions: PARTITIONS,
    config: JOIN_CONFIG,
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
