/**
 * The group coordinator shard's log of group events: members joining, leaving and fenced, epoch
 * bumps and target assignments, classic rebalances, deletions, a streams group NOT_READY, with
 * Kafka's texts and the ids in structured fields. The shard runs on the REAL runtime (testkit), so
 * timers fire as in production; a restart (replaying the log) must log nothing.
 */
import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import type { RuntimeLogger } from '../../../src/coordinator/runtime/types.js'
import { CLASSIC_GROUP_CONFIG_DEFAULTS } from '../../../src/coordinator/shard/classic/manager.js'
import type { ClassicCompletion } from '../../../src/coordinator/shard/classic/types.js'
import { GroupCoordinatorShard } from '../../../src/coordinator/shard/index.js'
import { StickyTaskAssignor } from '../../../src/coordinator/shard/streams/assignor/index.js'
import type { StreamsGroupHeartbeatRequest } from '../../../src/coordinator/shard/streams/wire.js'
import type { CoordinatorRecord } from '../../../src/protocol/generated/coordinator-records.js'
import type { ConsumerGroupHeartbeatRequest } from '../../../src/protocol/generated/messages/ConsumerGroupHeartbeatRequest.js'
import { encodeSubscription } from '../../../src/protocol/consumer-protocol.js'
import { createJoinGroupRequest } from '../../../src/protocol/generated/messages/JoinGroupRequest.js'
import { createLeaveGroupRequest } from '../../../src/protocol/generated/messages/LeaveGroupRequest.js'
import { ShardTestContext } from '../../testkit/shard-context.js'
import { beat, CONFIG, catalog, ctx as consumerCtx, join as consumerJoin } from './consumer/harness.js'
import { heartbeatRequest, joinRequest, NO_DELAY } from './streams/harness.js'

interface Line {
  readonly level: 'debug' | 'info' | 'warn' | 'error'
  readonly obj: Record<string, unknown>
  readonly msg: string
}

/** A logger that keeps every line. */
class Capture implements RuntimeLogger {
  lines: Line[] = []
  isLevelEnabled?: (level: 'debug') => boolean
  debug(obj: object, msg: string): void {
    this.lines.push({ level: 'debug', obj: obj as Record<string, unknown>, msg })
  }
  info(obj: object, msg: string): void {
    this.lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg })
  }
  warn(obj: object, msg: string): void {
    this.lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg })
  }
  error(obj: object, msg: string): void {
    this.lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg })
  }
  /** The lines logged since the last call, at INFO or above. */
  take(): Line[] {
    const out = this.lines.filter((l) => l.level !== 'debug')
    this.lines = []
    return out
  }
}

type Ctx = ShardTestContext<GroupCoordinatorShard, CoordinatorRecord, ClassicCompletion>

const topics = catalog({ foo: 2 })
let log: Capture
let t: Ctx

function newShard(timers: ConstructorParameters<typeof GroupCoordinatorShard>[0]['timers']) {
  return new GroupCoordinatorShard({
    topics,
    assignors: { select: () => new StickyTaskAssignor() },
    timers,
    consumerConfig: () => CONFIG,
    classic: CLASSIC_GROUP_CONFIG_DEFAULTS,
    // Read at construction: a reload builds its shard with the capture of that moment.
    logger: log,
  })
}

async function start(): Promise<Ctx> {
  return ShardTestContext.start<GroupCoordinatorShard, CoordinatorRecord, ClassicCompletion>({
    newShard: (timers) => newShard(timers),
  })
}

function streamsHeartbeat(req: StreamsGroupHeartbeatRequest) {
  return t.write('streams-group-heartbeat', (shard, nowMs) => {
    const r = shard.streamsGroupHeartbeat(
      { nowMs, requestApiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1', config: NO_DELAY },
      req,
    )
    return { records: r.records, response: r.response, timers: r.timers }
  })
}

function consumerHeartbeat(req: ConsumerGroupHeartbeatRequest, groupId = 'cg') {
  return t.write('consumer-group-heartbeat', (shard, nowMs) =>
    shard.consumerGroupHeartbeat(consumerCtx(nowMs), { ...req, groupId }),
  )
}

let nextToken = 1
/** A JoinGroup; with no member id, returns the id the coordinator gives (MEMBER_ID_REQUIRED). */
async function classicJoin(memberId: string): Promise<string> {
  const token = nextToken++
  await t.write('classic-group-join', (shard, nowMs) =>
    shard.classicGroupJoin(
      {
        nowMs,
        apiVersion: 9,
        clientId: 'client',
        clientHost: '/127.0.0.1',
        token,
        newMemberUuid: `uuid${token}`,
      },
      createJoinGroupRequest({
        groupId: 'kg',
        memberId,
        sessionTimeoutMs: 10000,
        rebalanceTimeoutMs: 60000,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: new Uint8Array([1]) }],
      }),
    ),
  )
  if (memberId !== '') return memberId // parked until the rebalance completes
  const c = t.delivered.find((d) => d.completion.token === token)?.completion
  assert.ok(c !== undefined && c.api === 'JoinGroup', 'the first join is answered')
  return c.response.memberId
}

const messages = (lines: readonly Line[]) => lines.map((l) => l.msg)

/** An OffsetCommit without a generation (a simple group's, or an offset reset) of foo's partitions. */
function adminCommit(
  groupId: string,
  partitions: {
    partitionIndex: number
    committedOffset: bigint
    committedLeaderEpoch: number
    committedMetadata: string
  }[],
) {
  return t.write('offset-commit', (shard, nowMs) =>
    shard.commitOffsets(
      { apiVersion: 9, nowMs, maxMetadataSize: 4096 },
      {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [{ name: 'foo', topicId: topics.id('foo'), partitions }],
      },
    ),
  )
}

beforeEach(async () => {
  log = new Capture()
  t = await start()
})

afterEach(async () => {
  await t.close()
})

describe('group events in the log', () => {
  it('streams: a join, the epoch bump and the target assignment; a steady heartbeat logs nothing', async () => {
    const r = await streamsHeartbeat(joinRequest({ memberId: 'm1' }))
    // The member's assignment state is a DEBUG line, with Kafka's state name.
    assert.deepEqual(
      log.lines.filter((l) => l.level === 'debug').map((l) => l.msg),
      [`[GroupId g][MemberId m1] Member's new assignment state: epoch=2, previousEpoch=0, state=stable.`],
    )
    const lines = log.take()
    assert.deepEqual(messages(lines), [
      '[GroupId g][MemberId m1] Member joins the streams group.',
      '[GroupId g][MemberId m1] Valid topic configuration found, topology epoch 0 is now initialized.',
      // A streams group starts at epoch 1; the first join bumps it to 2.
      `[GroupId g][MemberId m1] Bumped streams group epoch to 2 with metadata hash ${lines[2]!.obj.metadataHash} and validated topic epoch 0.`,
      "[GroupId g] Computed a new target assignment for epoch 2 with 'sticky' assignor.",
    ])
    assert.ok(lines.every((l) => l.level === 'info'))
    assert.deepEqual(lines[0]!.obj, { groupId: 'g', memberId: 'm1' })
    assert.equal(lines[2]!.obj.groupEpoch, 2)
    // Heartbeats until nothing changes, then one more: at INFO, nothing.
    let epoch = r.memberEpoch
    let active = r.activeTasks ?? []
    for (let i = 0; i < 3; i++) {
      const next = await streamsHeartbeat(
        heartbeatRequest({ memberId: 'm1', memberEpoch: epoch, activeTasks: active }),
      )
      epoch = next.memberEpoch
      active = next.activeTasks ?? active
    }
    log.take()
    log.lines = []
    await streamsHeartbeat(heartbeatRequest({ memberId: 'm1', memberEpoch: epoch, activeTasks: active }))
    assert.deepEqual(log.lines, [], 'an unchanged heartbeat logs nothing at any level')
  })

  it('streams: a second member bumps the epoch; a leave and a session timeout are logged', async () => {
    await streamsHeartbeat(joinRequest({ memberId: 'm1' }))
    log.take()
    await streamsHeartbeat(joinRequest({ memberId: 'm2' }))
    const joined = log.take()
    assert.equal(joined[0]!.msg, '[GroupId g][MemberId m2] Member joins the streams group.')
    assert.ok(
      joined.some(
        (l) =>
          l.msg.startsWith('[GroupId g][MemberId m2] Bumped streams group epoch to 3 with metadata hash') &&
          l.obj.groupEpoch === 3,
      ),
    )

    await streamsHeartbeat(heartbeatRequest({ memberId: 'm1', memberEpoch: -1 }))
    const left = log.take()
    assert.equal(left[0]!.msg, '[GroupId g][MemberId m1] Member m1 left the streams group.')
    assert.deepEqual(left[0]!.obj, { groupId: 'g', memberId: 'm1', memberEpoch: -1 })
    assert.match(left[1]!.msg, /^\[GroupId g\] Bumped group epoch to 4 with metadata hash -?\d+\.$/)

    // m2 never heartbeats again: its session (45 s) expires.
    await t.advance(46_000)
    const expired = log.take()
    assert.equal(
      expired[0]!.msg,
      '[GroupId g] Streams member m2 fenced from the group because the member session expired.',
    )
    assert.equal(expired[0]!.obj.memberId, 'm2')
    assert.equal(expired[0]!.obj.reason, 'the member session expired')
  })

  it('streams: a static member joins, leaves for a while and comes back in its place', async () => {
    await streamsHeartbeat(joinRequest({ memberId: 's1', instanceId: 'i1' }))
    assert.equal(
      log.take()[0]!.msg,
      '[GroupId g][MemberId s1] Static member s1 with instance id i1 joins the streams group.',
    )
    await streamsHeartbeat(heartbeatRequest({ memberId: 's1', memberEpoch: -2, instanceId: 'i1' }))
    const left = log.take()
    assert.deepEqual(messages(left), [
      '[GroupId g][MemberId s1] Static member s1 with instance id i1 temporarily left the streams group.',
    ])
    assert.deepEqual(left[0]!.obj, { groupId: 'g', memberId: 's1', instanceId: 'i1', memberEpoch: -2 })
    await streamsHeartbeat(joinRequest({ memberId: 's2', instanceId: 'i1' }))
    assert.equal(
      log.take()[0]!.msg,
      '[GroupId g][MemberId s2] Static member with instance id i1 re-joins the streams group using the streams protocol. Created a new member s2 to replace the existing member s1.',
    )
  })

  it('streams: a missing source topic leaves the group NOT_READY, logged with the topic', async () => {
    const req = joinRequest({ memberId: 'm1' })
    const topology = {
      ...req.topology!,
      subtopologies: [{ ...req.topology!.subtopologies[0]!, sourceTopics: ['nope'] }],
    }
    await streamsHeartbeat({ ...req, topology })
    const lines = log.take()
    const notReady = lines.find((l) => l.level === 'warn')
    assert.ok(notReady, 'a warning')
    assert.equal(
      notReady.msg,
      '[GroupId g][MemberId m1] Topic configuration failed for topology epoch 0: Source topics nope are missing.',
    )
    assert.equal(notReady.obj.state, 'NotReady')
    assert.equal(notReady.obj.groupId, 'g')
    assert.equal(t.shard.streams.group('g')?.state(), 'NotReady')
  })

  it('consumer: a join, a leave and a session timeout', async () => {
    await consumerHeartbeat(consumerJoin('c1'))
    const joined = log.take()
    assert.equal(
      joined[0]!.msg,
      '[GroupId cg] Member c1 joins the consumer group using the consumer protocol.',
    )
    assert.deepEqual(joined[0]!.obj, { groupId: 'cg', memberId: 'c1', protocol: 'consumer' })
    assert.match(joined[1]!.msg, /^\[GroupId cg\] Bumped group epoch to 1 with metadata hash -?\d+\.$/)
    assert.match(
      joined[2]!.msg,
      /^\[GroupId cg\] Computed a new target assignment for epoch 1 with '\w+' assignor\.$/,
    )

    await consumerHeartbeat(consumerJoin('c2'))
    log.take()
    await consumerHeartbeat(beat('c1', -1, null))
    const left = log.take()
    assert.equal(left[0]!.msg, '[GroupId cg] Member c1 left the consumer group.')
    assert.equal(left[0]!.obj.memberId, 'c1')

    await t.advance(46_000)
    const expired = log.take()
    assert.equal(
      expired[0]!.msg,
      '[GroupId cg] Member c2 fenced from the group because the member session expired.',
    )
    assert.equal(expired[0]!.obj.reason, 'the member session expired')
  })

  it('consumer: a member speaking the classic protocol joins and leaves', async () => {
    await consumerHeartbeat(consumerJoin('c1'))
    log.take()
    const metadata = encodeSubscription(
      { topics: ['foo'], userData: null, ownedPartitions: [], generationId: -1, rackId: null },
      3,
    )
    const classicJoinCg = (memberId: string) =>
      t.write('classic-group-join', (shard, nowMs) =>
        shard.classicGroupJoin(
          {
            nowMs,
            apiVersion: 9,
            clientId: 'classic',
            clientHost: '/127.0.0.1',
            token: nextToken++,
            newMemberUuid: 'k1',
          },
          createJoinGroupRequest({
            groupId: 'cg',
            memberId,
            sessionTimeoutMs: 10000,
            rebalanceTimeoutMs: 3000,
            protocolType: 'consumer',
            protocols: [{ name: 'range', metadata }],
          }),
        ),
      )
    await classicJoinCg('')
    assert.deepEqual(messages(log.take()), [
      '[GroupId cg] Dynamic member with unknown member id joins the consumer group. Created a new member id k1 and requesting the member to rejoin with this id.',
    ])
    await classicJoinCg('k1')
    assert.equal(
      log.take()[0]!.msg,
      '[GroupId cg] Member k1 joins the consumer group using the classic protocol.',
    )
    await t.write('classic-group-leave', (shard, nowMs) =>
      shard.classicGroupLeave(
        { nowMs, apiVersion: 5 },
        createLeaveGroupRequest({
          groupId: 'cg',
          members: [{ memberId: 'k1', groupInstanceId: null, reason: 'bye' }],
        }),
      ),
    )
    const left = log.take()
    assert.equal(
      left[0]!.msg,
      '[GroupId cg] Dynamic member k1 has left group through explicit `LeaveGroup` request; client reason: bye',
    )
    assert.deepEqual(left[0]!.obj, { groupId: 'cg', memberId: 'k1', reason: 'bye' })
  })

  it('classic: a two-step join, the rebalance, the stable generation, a leave, a session timeout', async () => {
    const memberId = await classicJoin('')
    assert.deepEqual(messages(log.take()), [
      `Dynamic member with unknown member id joins group kg in Empty state. Created a new member id ${memberId} and requesting the member to rejoin with this id.`,
    ])
    await classicJoin(memberId)
    const joined = log.take()
    assert.deepEqual(messages(joined), [
      `Pending dynamic member with id ${memberId} joins group kg in Empty state. Adding to the group now.`,
      `Preparing to rebalance group kg in state PreparingRebalance with old generation 0 (reason: Adding new member ${memberId} with group instance id null; client reason: not provided).`,
    ])
    assert.equal(joined[1]!.obj.groupId, 'kg')
    await t.advance(3_000)
    assert.deepEqual(messages(log.take()), ['Stabilized group kg generation 1 with 1 members.'])

    await t.write('classic-group-leave', (shard, nowMs) =>
      shard.classicGroupLeave(
        { nowMs, apiVersion: 3 },
        createLeaveGroupRequest({
          groupId: 'kg',
          members: [{ memberId, groupInstanceId: null, reason: 'bye' }],
        }),
      ),
    )
    assert.deepEqual(messages(log.take()), [
      `[Group kg] Member ${memberId} has left group through explicit \`LeaveGroup\` request; client reason: bye`,
      `Preparing to rebalance group kg in state PreparingRebalance with old generation 1 (reason: explicit \`LeaveGroup\` request for (${memberId}) members.).`,
      'Group kg with generation 2 is now empty.',
    ])

    // A member that stops heartbeating (10 s session) is removed.
    const second = await classicJoin(await classicJoin(''))
    await t.advance(3_000)
    log.take()
    await t.advance(11_000)
    const expired = log.take()
    assert.equal(expired[0]!.msg, `Member ${second} in group kg has failed, removing it from the group.`)
    assert.equal(expired[0]!.obj.memberId, second)
    assert.match(
      expired[1]!.msg,
      /^Preparing to rebalance group kg .*reason: removing member .* on heartbeat expiration\.\)\.$/,
    )
  })

  it('a join that converts an empty classic group logs the conversion first', async () => {
    const memberId = await classicJoin(await classicJoin(''))
    await t.advance(3_000)
    await t.write('classic-group-leave', (shard, nowMs) =>
      shard.classicGroupLeave(
        { nowMs, apiVersion: 3 },
        createLeaveGroupRequest({
          groupId: 'kg',
          members: [{ memberId, groupInstanceId: null, reason: null }],
        }),
      ),
    )
    assert.equal(t.shard.classic.isEmpty('kg'), true)
    log.take()
    await consumerHeartbeat(consumerJoin('c1'), 'kg')
    const lines = messages(log.take())
    assert.deepEqual(lines.slice(0, 2), [
      '[GroupId kg] Converted the empty classic group to a consumer group.',
      '[GroupId kg] Member c1 joins the consumer group using the consumer protocol.',
    ])
    assert.ok(t.shard.consumer.group('kg') !== undefined)
  })

  it('deleting groups names them and counts their offsets', async () => {
    await adminCommit('simple', [
      { partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' },
      { partitionIndex: 1, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' },
    ])
    assert.deepEqual(messages(log.take()), [
      '[GroupId simple] Creating a simple consumer group via manual offset commit.',
    ])
    await t.write('offset-delete', (shard) =>
      shard.offsetDelete({ groupId: 'simple', topics: [{ name: 'foo', partitions: [1] }] }),
    )
    const deleted = log.take()
    assert.deepEqual(messages(deleted), ['[GroupId simple] Deleted 1 offsets.'])
    assert.deepEqual(deleted[0]!.obj, { groupId: 'simple', offsets: 1, topics: ['foo'] })
    await consumerHeartbeat(consumerJoin('c1'))
    await consumerHeartbeat(beat('c1', -1, null))
    log.take()
    // An offset reset: a commit without a generation into the empty consumer group.
    await adminCommit('cg', [
      { partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: '' },
    ])
    assert.deepEqual(messages(log.take()), [
      '[GroupId cg] Committed 1 offsets without a generation (offset reset).',
    ])
    await t.write('delete-groups', (shard) => shard.deleteGroups(['simple', 'cg', 'unknown']))
    const lines = log.take()
    assert.deepEqual(messages(lines), [
      'The following groups were deleted: simple, cg. A total of 2 offsets were removed.',
    ])
    assert.deepEqual(lines[0]!.obj, { groupIds: ['simple', 'cg'], offsets: 2 })
  })

  it('offset commits, plain and transactional, at DEBUG per partition; nothing when DEBUG is off', async () => {
    const partitions = [
      { partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: 3, committedMetadata: '' },
      { partitionIndex: 1, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: '' },
    ]
    const commit = () => adminCommit('simple', partitions)
    await commit()
    const id = topics.id('foo')
    assert.deepEqual(
      log.lines.filter((l) => l.level === 'debug').map((l) => l.msg),
      [
        `[GroupId simple] Committing offsets 5 for partition ${id}-foo-0 from member  with leader epoch 3.`,
        `[GroupId simple] Committing offsets 7 for partition ${id}-foo-1 from member  with leader epoch -1.`,
      ],
    )
    log.lines = []
    await t.write('txn-offset-commit', (shard, nowMs) =>
      shard.commitTransactionalOffsets(
        { apiVersion: 4, nowMs, maxMetadataSize: 4096 },
        {
          transactionalId: 'tx',
          groupId: 'simple',
          producerId: 9n,
          producerEpoch: 0,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          topics: [{ name: 'foo', topicId: id, partitions: partitions.slice(0, 1) }],
        },
      ),
    )
    assert.deepEqual(
      log.lines.map((l) => [l.level, l.msg]),
      [
        [
          'debug',
          `[GroupId simple] Committing transactional offsets 5 for partition ${id}-foo-0 from member  with leader epoch 3.`,
        ],
      ],
    )
    assert.deepEqual(log.lines[0]!.obj, {
      groupId: 'simple',
      memberId: '',
      topic: 'foo',
      partition: 0,
      offset: '5',
    })

    // With DEBUG off (pino's isLevelEnabled), no line is made.
    const asked: string[] = []
    log.lines = []
    log.isLevelEnabled = (level: string) => {
      asked.push(level)
      return false
    }
    await commit()
    assert.deepEqual([log.lines, asked], [[], ['debug']])
  })

  it('a restart replays the log and logs none of it, only the groups it loaded', async () => {
    await streamsHeartbeat(joinRequest({ memberId: 'm1' }))
    await streamsHeartbeat(heartbeatRequest({ memberId: 'm1', memberEpoch: -1 }))
    await consumerHeartbeat(consumerJoin('c1'))
    const memberId = await classicJoin(await classicJoin(''))
    await t.advance(3_000)
    await t.write('delete-groups', (shard) => shard.deleteGroups(['g']))
    assert.ok(log.take().length > 5, 'the run itself logged')
    assert.ok(t.shard.classic.group('kg')?.members.has(memberId))

    // Replaying the records into a fresh shard logs nothing.
    const records = await t.log()
    const fresh = new Capture()
    const shard = new GroupCoordinatorShard({
      topics,
      assignors: { select: () => new StickyTaskAssignor() },
      logger: fresh,
    })
    for (const r of records) shard.replay(r)
    assert.deepEqual(fresh.lines, [])
    assert.ok(shard.consumer.group('cg') !== undefined, 'the replay rebuilt the groups')

    // Nor does a reload (replay, then the on-loaded operation) log the history: only Kafka's
    // lines for each group loaded, with its members at DEBUG.
    log = new Capture()
    const reloaded = await t.reload()
    try {
      assert.deepEqual(
        log.lines.map((l) => [l.level, l.msg]),
        [
          // Its members are written with the leader's SyncGroup, which this group never had.
          ['info', 'Loaded classic group kg with 0 members.'],
          ['info', 'Loaded consumer group cg with 1 members.'],
          ['debug', 'Loaded member c1 in consumer group cg.'],
        ],
      )
      assert.deepEqual(log.lines[1]!.obj, { groupId: 'cg', members: 1 })
    } finally {
      await reloaded.close()
    }
  })
})
