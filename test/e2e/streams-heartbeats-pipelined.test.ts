// Many requests sent back to back on one connection, most of them steady StreamsGroupHeartbeats of
// different members: the server answers them in order, each with its own member's contents, while
// it reuses its per-request objects (the request reader, the answer buffer) from one request to the
// next. Between them: joins of new members (their answers wait for a store write), heartbeats of
// unknown members (error answers) and Metadata requests (answers larger than the room an answer
// starts with in the answer buffer).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { MetadataResponse } from '../../src/protocol/generated/messages/MetadataResponse.js'
import type { StreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import {
  adoptAnswer,
  type HeartbeatingMember,
  heartbeatBody,
  simpleTopology,
} from '../helpers/streams-member.js'
import { heartbeatIntervalBounds } from '../../src/coordinator/shard/modern/heartbeat-phase.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { decodeResponse, requestFrame, WireClient } from '../server/wire-client.js'

const TOPIC = 'pipelined-in'
const GROUPS = 6
const MEMBERS = 4
const EXTRA_TOPICS = 40
/** The answered intervals' bounds at the defaults (interval 5 s, session 45 s). */
const BOUNDS = heartbeatIntervalBounds(5000, 45_000)

type Member = HeartbeatingMember

let server: TestServer
let client: WireClient

before(async () => {
  server = await startTestServer({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
  })
  client = await WireClient.connect(server.port)
  const topics = [
    { name: TOPIC, numPartitions: 4, replicationFactor: 1, assignments: [], configs: [] },
    ...Array.from({ length: EXTRA_TOPICS }, (_, i) => ({
      name: `pipelined-topic-with-a-long-name-${i}`,
      numPartitions: 1,
      replicationFactor: 1,
      assignments: [],
      configs: [],
    })),
  ]
  const { body } = await client.request<{ topics: { errorCode: number }[] }>(19, 7, {
    topics,
    timeoutMs: 5000,
  })
  assert.ok(body.topics.every((t) => t.errorCode === 0))
})

after(async () => {
  client?.close()
  await server?.stop()
})

/** A steady heartbeat, or a join's with the topology. */
function requestBody(m: Member, joining: boolean) {
  return heartbeatBody(
    m,
    joining ? { topology: simpleTopology([TOPIC]), processId: `process-${m.memberId}` } : null,
  )
}

/** One heartbeat reporting the member's tasks; takes in what the answer says. */
async function reconcile(m: Member): Promise<StreamsGroupHeartbeatResponse> {
  const joining = m.epoch === 0
  const { body } = await client.request<StreamsGroupHeartbeatResponse>(88, 1, {
    ...requestBody(m, joining),
    activeTasks: m.active,
    standbyTasks: m.standby,
    warmupTasks: m.warmup,
  })
  assert.equal(body.errorCode, 0, `${m.memberId}: ${body.errorMessage}`)
  adoptAnswer(m, body)
  return body
}

async function stableGroup(g: number): Promise<Member[]> {
  const members: Member[] = Array.from({ length: MEMBERS }, (_, i) => ({
    groupId: `pipelined-group-${g}`,
    memberId: `pipelined-member-${g}-${i}`,
    epoch: 0,
    endpointEpoch: 0,
    active: [],
    standby: [],
    warmup: [],
  }))
  for (const m of members) await reconcile(m)
  for (let round = 0; round < 50; round++) {
    const before = members.map((m) => m.epoch)
    const answers = []
    for (const m of members) answers.push(await reconcile(m))
    const owned = members.reduce((n, m) => n + m.active.reduce((k, t) => k + t.partitions.length, 0), 0)
    const unchanged = answers.every((r, i) => r.activeTasks === null && r.memberEpoch === before[i])
    if (unchanged && owned === 4 && members.every((m) => m.epoch === members[0].epoch)) return members
  }
  throw new Error(`group ${g} did not become stable`)
}

test('pipelined heartbeats of many members on one connection are answered in order, each with its own contents', async () => {
  const members: Member[] = []
  for (let g = 0; g < GROUPS; g++) members.push(...(await stableGroup(g)))

  type Expect =
    | { kind: 'steady'; m: Member }
    | { kind: 'join'; m: Member }
    | { kind: 'unknown'; memberId: string }
    | { kind: 'metadata' }
  const expected: { correlationId: number; e: Expect }[] = []
  const frames: Buffer[] = []
  let correlationId = 1000
  let joins = 0
  const add = (apiKey: number, version: number, body: unknown, e: Expect) => {
    correlationId++
    // The client id the members joined with (another would change their metadata).
    frames.push(requestFrame(apiKey, version, correlationId, body))
    expected.push({ correlationId, e })
  }
  for (let round = 0; round < 20; round++) {
    // A different order every round, so neighbouring answers belong to different groups.
    const order = members.map((m, i) => ({ m, k: (i * 7 + round * 13) % members.length }))
    order.sort((a, b) => a.k - b.k)
    for (const { m } of order) {
      add(88, 1, requestBody(m, false), { kind: 'steady', m })
      const n = correlationId
      if (n % 37 === 0) add(3, 12, { topics: null, allowAutoTopicCreation: false }, { kind: 'metadata' })
      if (n % 41 === 0) {
        const memberId = `pipelined-stranger-${n}`
        add(88, 1, { ...requestBody(m, false), memberId, memberEpoch: 5 }, { kind: 'unknown', memberId })
      }
      if (n % 53 === 0) {
        const joiner: Member = {
          groupId: `pipelined-joiner-group-${joins}`,
          memberId: `pipelined-joiner-${joins++}`,
          epoch: 0,
          endpointEpoch: 0,
          active: [],
          standby: [],
          warmup: [],
        }
        add(88, 1, requestBody(joiner, true), { kind: 'join', m: joiner })
      }
    }
  }
  assert.ok(joins > 0)
  client.write(Buffer.concat(frames))

  for (const { correlationId: id, e } of expected) {
    const raw = await client.nextFrame(30_000)
    assert.ok(raw !== null, 'the connection stays open')
    if (e.kind === 'metadata') {
      const { correlationId: got, body } = decodeResponse<MetadataResponse>(3, 12, raw)
      assert.equal(got, id)
      assert.equal(body.topics.length, EXTRA_TOPICS + 1)
      continue
    }
    const { correlationId: got, body } = decodeResponse<StreamsGroupHeartbeatResponse>(88, 1, raw)
    assert.equal(got, id, 'answers in request order')
    if (e.kind === 'unknown') {
      assert.equal(body.errorCode, 25, 'UNKNOWN_MEMBER_ID')
      assert.ok(body.errorMessage?.includes(e.memberId), body.errorMessage ?? '')
      continue
    }
    assert.equal(body.errorCode, 0, body.errorMessage ?? '')
    assert.equal(body.memberId, e.m.memberId)
    if (e.kind === 'join') {
      assert.ok(body.memberEpoch >= 1)
      assert.notEqual(body.activeTasks, null, 'a join gets its task lists')
      continue
    }
    assert.equal(body.memberEpoch, e.m.epoch, `${e.m.memberId}'s own epoch`)
    assert.equal(body.endpointInformationEpoch, e.m.endpointEpoch)
    assert.equal(body.activeTasks, null, 'nothing changed for a steady member')
    // The group's interval, or one the heartbeat phases moved within their bounds of it.
    assert.ok(body.heartbeatIntervalMs >= BOUNDS.minMs && body.heartbeatIntervalMs <= BOUNDS.maxMs)
  }
})
