// Streams members that all heartbeat at the same moment (as after a coordinator restart) against a
// real server process, each keeping its heartbeat timer as Kafka's Java client does
// (HeartbeatRequestState: the timer is reset to the held interval when a heartbeat is sent; an
// answer carrying another interval resets it to that one from the answer's arrival). With the
// spreading of phases (the default) their next heartbeats fall apart over the interval and stay
// so; with group.heartbeat.spread.enable=false every answer is the group's interval and they stay
// together, as with Kafka.
import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { test } from 'node:test'
import type { StreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import {
  adoptAnswer,
  type HeartbeatingMember,
  heartbeatBody,
  simpleTopology,
} from '../helpers/streams-member.js'
import { startTopographProcess } from '../helpers/topograph-process.js'
import { WireClient } from '../server/wire-client.js'

const TOPIC = 'phases-in'
const INTERVAL_MS = 2000
const GROUPS = 4
const PER_GROUP = 10
const MEMBERS = GROUPS * PER_GROUP
/** A tenth of the interval: the window the sends are counted in. */
const WINDOW_MS = INTERVAL_MS / 10

interface Member extends HeartbeatingMember {
  /** The interval the member's client holds (0 before its first answer, as the Java client's). */
  held: number
}

/** The most of `times` that fall within one window of WINDOW_MS. */
function busiestWindow(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b)
  let most = 0
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= WINDOW_MS) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}

async function run(spread: boolean) {
  const server = await startTopographProcess({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.heartbeat.interval.ms': String(INTERVAL_MS),
    'group.streams.min.heartbeat.interval.ms': String(INTERVAL_MS),
    'group.heartbeat.spread.enable': String(spread),
  })
  const client = await WireClient.connect(server.port)
  try {
    const { body: created } = await client.request<{ topics: { errorCode: number }[] }>(19, 7, {
      topics: [{ name: TOPIC, numPartitions: 4, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 5000,
    })
    assert.equal(created.topics[0].errorCode, 0)

    const members: Member[] = []
    for (let g = 0; g < GROUPS; g++) {
      for (let i = 0; i < PER_GROUP; i++) {
        members.push({
          groupId: `phases-${g}`,
          memberId: `phases-member-${g}-${i}`,
          epoch: 0,
          endpointEpoch: -1,
          active: [],
          standby: [],
          warmup: [],
          held: 0,
        })
      }
    }
    const answered: number[] = []
    /** One heartbeat; returns when the member's client sends the next (Java's timer rule). */
    const beat = async (m: Member): Promise<{ sentAt: number; nextAt: number }> => {
      const joining = m.epoch === 0
      const sentAt = performance.now()
      const { body } = await client.request<StreamsGroupHeartbeatResponse>(88, 1, {
        ...heartbeatBody(m, joining ? { topology: simpleTopology([TOPIC]), processId: m.memberId } : null),
        activeTasks: m.active,
        standbyTasks: m.standby,
        warmupTasks: m.warmup,
      })
      const receivedAt = performance.now()
      assert.equal(body.errorCode, 0, `${m.memberId}: ${body.errorMessage}`)
      adoptAnswer(m, body)
      answered.push(body.heartbeatIntervalMs)
      const changed = body.heartbeatIntervalMs !== m.held
      m.held = body.heartbeatIntervalMs
      return { sentAt, nextAt: (changed ? receivedAt : sentAt) + m.held }
    }
    // Join, then heartbeat until every group has settled its tasks.
    for (const m of members) await beat(m)
    for (let round = 0; round < 3; round++) await Promise.all(members.map((m) => beat(m)))

    // Every member heartbeats at the same moment; from then on each follows its own timer.
    answered.length = 0
    const rounds: number[][] = [[], []]
    await Promise.all(
      members.map(async (m) => {
        let { nextAt } = await beat(m)
        for (const sends of rounds) {
          await new Promise((r) => setTimeout(r, Math.max(0, nextAt - performance.now())))
          const b = await beat(m)
          sends.push(b.sentAt)
          nextAt = b.nextAt
        }
      }),
    )
    return { answered, rounds }
  } finally {
    client.close()
    await server.stop()
  }
}

test('members heartbeating at the same moment are spread over the interval after one', {
  timeout: 120_000,
}, async () => {
  const { answered, rounds } = await run(true)
  for (const a of answered) assert.ok(2 * a >= INTERVAL_MS && 2 * a <= 3 * INTERVAL_MS, `answered ${a} ms`)
  assert.ok(
    answered.some((a) => a !== INTERVAL_MS),
    'some answers moved a member',
  )
  // Evenly spread, a tenth of the interval would hold 4 of the 40; together, all 40.
  for (const [i, sends] of rounds.entries()) {
    assert.equal(sends.length, MEMBERS)
    const most = busiestWindow(sends)
    assert.ok(
      most <= 12,
      `round ${i + 1} after the common heartbeat: ${most} of ${MEMBERS} sends within ${WINDOW_MS} ms`,
    )
  }
})

test('with group.heartbeat.spread.enable=false they stay together, as with Kafka', {
  timeout: 120_000,
}, async () => {
  const { answered, rounds } = await run(false)
  assert.ok(answered.every((a) => a === INTERVAL_MS))
  for (const [i, sends] of rounds.entries()) {
    const most = busiestWindow(sends)
    assert.ok(most >= 36, `round ${i + 1}: only ${most} of ${MEMBERS} sends within ${WINDOW_MS} ms`)
  }
})
