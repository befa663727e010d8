// Classic groups end to end over real TCP against an in-process server, with raw protocol requests:
// a group of two forms (MEMBER_ID_REQUIRED, rejoin, SyncGroup with the leader's assignment,
// heartbeats, leave), static membership, session timeouts, DescribeGroups/ListGroups, offsets with
// generation checks, the conversion of an empty streams group, and restart durability of a real
// `topograph start` process killed with SIGKILL.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import { startTopographProcess, type TopographProcess } from '../helpers/topograph-process.js'
import { OpenClients, startTestServer, type TestServer, tempDataDir } from '../server/harness.js'
import type { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

const enc = (s: string): Uint8Array => new TextEncoder().encode(s)
const dec = (b: Uint8Array): string => new TextDecoder().decode(b)

/** One classic member on its own connection (JoinGroup and SyncGroup answers are deferred). */
class Member {
  memberId = ''
  generationId = -1
  leader = ''
  members: { memberId: string; metadata: Uint8Array }[] = []
  constructor(
    readonly c: WireClient,
    readonly groupId: string,
    readonly name: string,
    readonly options: { instanceId?: string; sessionTimeoutMs?: number } = {},
  ) {}

  async join(): Promise<AnyBody> {
    const { body } = await this.c.request<AnyBody>(11, 9, {
      groupId: this.groupId,
      sessionTimeoutMs: this.options.sessionTimeoutMs ?? 5000,
      rebalanceTimeoutMs: 5000,
      memberId: this.memberId,
      groupInstanceId: this.options.instanceId ?? null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: enc(`sub-${this.name}`) }],
      reason: null,
    })
    if (body.memberId !== '') this.memberId = body.memberId
    if (body.errorCode === 0) {
      this.generationId = body.generationId
      this.leader = body.leader
      this.members = body.members
    }
    return body
  }

  /** Joins as a new member: MEMBER_ID_REQUIRED (dynamic members), then the real join. */
  async joinNew(): Promise<AnyBody> {
    if (this.options.instanceId === undefined) {
      const first = await this.join()
      assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      assert.match(this.memberId, /^test-[0-9a-f-]{36}$/)
    }
    return this.join()
  }

  async sync(assignments: { memberId: string; assignment: Uint8Array }[] = []): Promise<AnyBody> {
    const { body } = await this.c.request<AnyBody>(14, 5, {
      groupId: this.groupId,
      generationId: this.generationId,
      memberId: this.memberId,
      groupInstanceId: this.options.instanceId ?? null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments,
    })
    return body
  }

  async heartbeat(generationId = this.generationId, memberId = this.memberId): Promise<number> {
    const { body } = await this.c.request<AnyBody>(12, 4, {
      groupId: this.groupId,
      generationId,
      memberId,
      groupInstanceId: this.options.instanceId ?? null,
    })
    return body.errorCode
  }

  async leave(): Promise<AnyBody> {
    const { body } = await this.c.request<AnyBody>(13, 5, {
      groupId: this.groupId,
      members: [{ memberId: this.memberId, groupInstanceId: this.options.instanceId ?? null, reason: null }],
    })
    return body
  }

  get isLeader(): boolean {
    return this.leader === this.memberId
  }
}

/** Every member joins at once; the leader assigns `<name>-<generation>` to each. */
async function formGroup(all: Member[]): Promise<void> {
  const joined = await Promise.all(all.map((m) => (m.memberId === '' ? m.joinNew() : m.join())))
  for (const j of joined) assert.equal(j.errorCode, 0)
  const leader = all.find((m) => m.isLeader)
  assert.ok(leader, 'one member leads')
  assert.equal(leader.members.length, all.length)
  const followers = all.filter((m) => m !== leader)
  for (const f of followers) assert.deepEqual(f.members, [], 'followers get no member list')
  const parked = followers.map((f) => f.sync())
  const assignments = all.map((m) => ({
    memberId: m.memberId,
    assignment: enc(`${m.name}-${m.generationId}`),
  }))
  const mine = await leader.sync(assignments)
  for (const [m, r] of [[leader, mine] as const, ...followers.map((f, i) => [f, parked[i]] as const)]) {
    const body = await r
    assert.equal(body.errorCode, 0)
    assert.equal(body.protocolName, 'range')
    assert.equal(dec(body.assignment), `${m.name}-${m.generationId}`)
  }
}

async function describeGroup(c: WireClient, groupId: string): Promise<AnyBody> {
  const { body } = await c.request<AnyBody>(15, 5, { groups: [groupId], includeAuthorizedOperations: false })
  return body.groups[0]
}

const commit = (
  c: WireClient,
  groupId: string,
  member: { memberId: string; generationId: number },
  offset: bigint,
) =>
  c
    .request<AnyBody>(8, 9, {
      groupId,
      generationIdOrMemberEpoch: member.generationId,
      memberId: member.memberId,
      groupInstanceId: null,
      topics: [
        {
          name: 'orders',
          partitions: [
            { partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null },
          ],
        },
      ],
    })
    .then((r) => r.body.topics[0].partitions[0].errorCode as number)

describe('classic groups over TCP', { timeout: 60_000 }, () => {
  let ts: TestServer
  const clients = new OpenClients()
  const connect = () => clients.connect(ts.port)
  before(async () => {
    ts = await startTestServer({
      'group.initial.rebalance.delay.ms': '100',
      'group.min.session.timeout.ms': '100',
      'group.streams.initial.rebalance.delay.ms': '0',
      'group.streams.min.session.timeout.ms': '1000',
    })
    const c = await connect()
    const created = await c.request<AnyBody>(19, 7, {
      topics: [{ name: 'orders', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)
  })
  after(async () => {
    clients.closeAll()
    await ts.stop()
  })

  test('two members form a group, heartbeat, commit offsets, and one leaves', async () => {
    const admin = await connect()
    const a = new Member(await connect(), 'g2', 'a')
    const b = new Member(await connect(), 'g2', 'b')
    await formGroup([a, b])
    assert.equal(a.generationId, 1)
    assert.equal(b.generationId, 1)
    assert.equal(await a.heartbeat(), 0)
    assert.equal(await b.heartbeat(), 0)

    const d = await describeGroup(admin, 'g2')
    assert.deepEqual(
      [d.errorCode, d.groupState, d.protocolType, d.protocolData],
      [0, 'Stable', 'consumer', 'range'],
    )
    assert.deepEqual(
      d.members
        .map((m: AnyBody) => [
          m.memberId,
          m.clientId,
          m.clientHost,
          dec(m.memberMetadata),
          dec(m.memberAssignment),
        ])
        .sort(),
      [
        [a.memberId, 'test', '/127.0.0.1', 'sub-a', 'a-1'],
        [b.memberId, 'test', '/127.0.0.1', 'sub-b', 'b-1'],
      ].sort(),
    )
    const listed = await admin.request<AnyBody>(16, 5, { statesFilter: ['Stable'], typesFilter: ['classic'] })
    assert.deepEqual(
      listed.body.groups.filter((g: AnyBody) => g.groupId === 'g2'),
      [{ groupId: 'g2', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' }],
    )

    // Offsets: the member's generation is checked.
    assert.equal(await commit(admin, 'g2', a, 42n), 0)
    assert.equal(await commit(admin, 'g2', { ...a, generationId: 7 }, 43n), ErrorCode.ILLEGAL_GENERATION)
    assert.equal(
      await commit(admin, 'g2', { memberId: 'nobody', generationId: 1 }, 44n),
      ErrorCode.UNKNOWN_MEMBER_ID,
    )
    assert.equal(
      await commit(admin, 'g2', { memberId: '', generationId: -1 }, 45n),
      ErrorCode.UNKNOWN_MEMBER_ID,
    )
    const fetched = await admin.request<AnyBody>(9, 8, {
      groups: [{ groupId: 'g2', topics: [{ name: 'orders', partitionIndexes: [0, 1] }] }],
      requireStable: false,
    })
    assert.deepEqual(
      fetched.body.groups[0].topics[0].partitions.map((p: AnyBody) => [p.partitionIndex, p.committedOffset]),
      [
        [0, 42n],
        [1, -1n],
      ],
    )

    // b leaves: a learns of the rebalance from its heartbeat and forms generation 2 alone.
    const left = await b.leave()
    assert.deepEqual([left.errorCode, left.members[0].errorCode], [0, 0])
    assert.equal(await a.heartbeat(), ErrorCode.REBALANCE_IN_PROGRESS)
    await formGroup([a])
    assert.equal(a.generationId, 2)
    assert.equal(await commit(admin, 'g2', { ...a, generationId: 1 }, 46n), ErrorCode.ILLEGAL_GENERATION)
    assert.equal(await commit(admin, 'g2', a, 47n), 0)
    const after = await describeGroup(admin, 'g2')
    assert.deepEqual(
      [after.groupState, after.members.map((m: AnyBody) => m.memberId)],
      ['Stable', [a.memberId]],
    )
    // The last member leaves: the group is Empty and may be deleted.
    assert.equal((await a.leave()).errorCode, 0)
    assert.equal((await describeGroup(admin, 'g2')).groupState, 'Empty')
    const deleted = await admin.request<AnyBody>(42, 2, { groupsNames: ['g2'] })
    assert.equal(deleted.body.results[0].errorCode, 0)
    assert.equal((await describeGroup(admin, 'g2')).groupState, 'Dead')
  })

  test('a static member rejoining with a new connection takes over without a rebalance', async () => {
    const admin = await connect()
    const s1 = new Member(await connect(), 'gs', 's', { instanceId: 'instance-1' })
    const other = new Member(await connect(), 'gs', 'o')
    await formGroup([s1, other])
    const generation = s1.generationId
    const oldId = s1.memberId

    // The same instance restarts: it joins without a member id and gets a new one.
    const s2 = new Member(await connect(), 'gs', 's', { instanceId: 'instance-1' })
    const rejoined = await s2.join()
    assert.equal(rejoined.errorCode, 0)
    assert.notEqual(s2.memberId, oldId)
    assert.equal(rejoined.generationId, generation, 'no new generation')
    const synced = await s2.sync()
    assert.deepEqual([synced.errorCode, dec(synced.assignment)], [0, `s-${generation}`])
    assert.equal(await s1.heartbeat(generation, oldId), ErrorCode.FENCED_INSTANCE_ID)
    assert.equal(await other.heartbeat(), 0)
    const d = await describeGroup(admin, 'gs')
    assert.equal(d.groupState, 'Stable')
    assert.deepEqual(
      d.members.map((m: AnyBody) => [m.memberId, m.groupInstanceId]).sort(),
      [
        [s2.memberId, 'instance-1'],
        [other.memberId, null],
      ].sort(),
    )
  })

  test('a member whose session expires is removed and the group rebalances', async () => {
    const admin = await connect()
    const a = new Member(await connect(), 'gt', 'a', { sessionTimeoutMs: 600 })
    const b = new Member(await connect(), 'gt', 'b', { sessionTimeoutMs: 600 })
    await formGroup([a, b])
    // Only a keeps heartbeating; b's session runs out.
    let code = 0
    const deadline = Date.now() + 5000
    while (code === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
      code = await a.heartbeat()
    }
    assert.equal(code, ErrorCode.REBALANCE_IN_PROGRESS)
    await formGroup([a])
    assert.equal(a.generationId, 2)
    const d = await describeGroup(admin, 'gt')
    assert.deepEqual([d.groupState, d.members.map((m: AnyBody) => m.memberId)], ['Stable', [a.memberId]])
    assert.equal(await b.heartbeat(), ErrorCode.UNKNOWN_MEMBER_ID)
  })

  test('an empty streams group id is taken over by a classic JoinGroup; a non-empty one is refused', async () => {
    const admin = await connect()
    const s = await StreamsMember.connect(ts.port, {
      groupId: 'sg',
      memberId: 'sm',
      processId: 'p',
      topology: simpleTopology(['orders']),
    })
    try {
      assert.equal((await s.heartbeat()).errorCode, 0)
      // Non-empty streams group: INCONSISTENT_GROUP_PROTOCOL with an empty member id.
      const refused = new Member(await connect(), 'sg', 'c')
      refused.memberId = 'some-member'
      const r = await refused.join()
      assert.deepEqual([r.errorCode, r.memberId], [ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''])
      const streamsRow = await describeGroup(admin, 'sg')
      assert.equal(streamsRow.groupState, 'Dead')

      // The streams member leaves: the empty streams group is converted by the classic join.
      assert.equal((await s.leave()).errorCode, 0)
      const c = new Member(await connect(), 'sg', 'c')
      await formGroup([c])
      const described = await admin.request<AnyBody>(89, 1, {
        groupIds: ['sg'],
        includeAuthorizedOperations: false,
        includeTopologyDescription: false,
      })
      assert.equal(described.body.groups[0].errorCode, ErrorCode.GROUP_ID_NOT_FOUND)
      const d = await describeGroup(admin, 'sg')
      assert.deepEqual([d.groupState, d.members.length], ['Stable', 1])
      const listed = await admin.request<AnyBody>(16, 5, { statesFilter: [], typesFilter: [] })
      assert.deepEqual(
        listed.body.groups.filter((g: AnyBody) => g.groupId === 'sg').map((g: AnyBody) => g.groupType),
        ['classic'],
      )
      // A streams member can no longer join the classic group while it has members.
      const back = await s.heartbeat({ memberEpoch: 0 })
      assert.equal(back.errorCode, ErrorCode.GROUP_ID_NOT_FOUND)
    } finally {
      s.client.close()
    }
  })
})

function startProcess(dataDir: string): Promise<TopographProcess> {
  return startTopographProcess({
    'data.dir': dataDir,
    'group.initial.rebalance.delay.ms': '100',
    'group.min.session.timeout.ms': '100',
  })
}

test('kill -9 after a stable classic group committed offsets: the group and its offsets are back', {
  timeout: 90_000,
}, async () => {
  const dataDir = tempDataDir()
  const procs: TopographProcess[] = []
  const clients = new OpenClients()
  const connect = (port: number) => clients.connect(port)
  try {
    const first = await startProcess(dataDir)
    procs.push(first)
    const admin1 = await connect(first.port)
    const created = await admin1.request<AnyBody>(19, 7, {
      topics: [{ name: 'orders', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)
    const a = new Member(await connect(first.port), 'durable', 'a', { sessionTimeoutMs: 20_000 })
    const b = new Member(await connect(first.port), 'durable', 'b', { sessionTimeoutMs: 20_000 })
    await formGroup([a, b])
    assert.equal(await commit(admin1, 'durable', a, 1234n), 0)
    assert.equal(await commit(admin1, 'durable', b, 1235n), 0)
    const before = await describeGroup(admin1, 'durable')
    await first.kill()

    const second = await startProcess(dataDir)
    procs.push(second)
    const admin2 = await connect(second.port)
    const d = await describeGroup(admin2, 'durable')
    assert.deepEqual([d.groupState, d.protocolType, d.protocolData], ['Stable', 'consumer', 'range'])
    const view = (g: AnyBody) =>
      g.members
        .map((m: AnyBody) => [m.memberId, m.clientHost, dec(m.memberMetadata), dec(m.memberAssignment)])
        .sort()
    assert.deepEqual(view(d), view(before))
    assert.deepEqual(
      view(d)
        .map((m: string[]) => m[3])
        .sort(),
      ['a-1', 'b-1'],
    )
    const fetched = await admin2.request<AnyBody>(9, 8, {
      groups: [{ groupId: 'durable', topics: [{ name: 'orders', partitionIndexes: [0] }] }],
      requireStable: false,
    })
    assert.equal(fetched.body.groups[0].topics[0].partitions[0].committedOffset, 1235n)

    // The members carry on against the new process with the same generation.
    for (const m of [a, b]) {
      const again = new Member(await connect(second.port), 'durable', m.name, { sessionTimeoutMs: 20_000 })
      again.memberId = m.memberId
      again.generationId = m.generationId
      assert.equal(await again.heartbeat(), 0)
      assert.equal(await commit(admin2, 'durable', again, 2000n), 0)
    }
  } finally {
    clients.closeAll()
    for (const p of procs) await p.kill()
    rmSync(dataDir, { recursive: true, force: true })
  }
})

// A JoinGroup parked until the other members rejoin waits up to their rebalance timeout, on timers
// that stop with the server: the shutdown answers it NOT_COORDINATOR (Kafka on unload) instead of
// waiting for it, and a join that comes during the shutdown is answered so at once.
describe('classic groups at server shutdown', { timeout: 60_000 }, () => {
  test('a parked JoinGroup is answered NOT_COORDINATOR and the server closes', async () => {
    const ts = await startTestServer({
      'group.initial.rebalance.delay.ms': '0',
      'group.max.session.timeout.ms': '600000',
    })
    const clients = new OpenClients()
    try {
      const a = new Member(await clients.connect(ts.port), 'g-shutdown', 'a', {
        sessionTimeoutMs: 600_000,
      })
      assert.equal((await a.joinNew()).errorCode, ErrorCode.NONE)
      // b's join starts a rebalance that waits for a to rejoin, for up to a's rebalance timeout.
      const b = new Member(await clients.connect(ts.port), 'g-shutdown', 'b', {
        sessionTimeoutMs: 600_000,
      })
      const first = await b.join()
      assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      const parked = b.join()
      const coordinator = ts.server.context.coordinator
      while (coordinator.classicGroups.parkedCount === 0) await new Promise((r) => setTimeout(r, 5))
      let closed = false
      const closing = ts.stop().then(() => {
        closed = true
      })
      const answer = await parked
      assert.equal(answer.errorCode, ErrorCode.NOT_COORDINATOR)
      await closing
      assert.ok(closed)
    } finally {
      clients.closeAll()
    }
  })
})
