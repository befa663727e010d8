import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  type ClassicGroupsHost,
  ClassicGroupsService,
} from '../../../src/coordinator/service/classic-groups.js'
import {
  type ClassicCompletion,
  ClassicGroupManager,
  ClassicGroupState,
} from '../../../src/coordinator/shard/classic/index.js'
import type { CoordinatorRecord } from '../../../src/protocol/generated/coordinator-records.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { createJoinGroupRequest } from '../../../src/protocol/generated/messages/JoinGroupRequest.js'
import { createSyncGroupRequest } from '../../../src/protocol/generated/messages/SyncGroupRequest.js'
import { ShardTestContext } from '../../testkit/shard-context.js'

const enc = (s: string): Uint8Array => new TextEncoder().encode(s)

type Context = ShardTestContext<ClassicGroupManager, CoordinatorRecord, ClassicCompletion>

/**
 * One classic manager as the shard of the real runtime (manual clock), behind a host whose writes
 * fail while `failing(name)` says so.
 */
async function setUp(failing: (name: string) => boolean) {
  let service: ClassicGroupsService | undefined
  const t: Context = await ShardTestContext.start({
    newShard: () =>
      new ClassicGroupManager({
        config: {
          minSessionTimeoutMs: 10,
          maxSessionTimeoutMs: 60_000,
          initialRebalanceDelayMs: 20,
          maxSize: 10,
          newMemberJoinTimeoutMs: 60_000,
        },
      }),
    onComplete: (completion, failure) => service?.complete(completion, failure),
  })
  t.failAppendsOf(failing)
  const writes: string[] = []
  const host: ClassicGroupsHost = {
    write(name, _groupId, op) {
      writes.push(name)
      return t.write(name, (manager, nowMs) => op(manager, nowMs))
    },
    errorCode: () => ErrorCode.COORDINATOR_NOT_AVAILABLE,
  }
  let n = 0
  service = new ClassicGroupsService(host, () => `uuid-${++n}`)
  return { t, manager: t.shard, service, writes }
}

/** Two members join; the initial rebalance delay passes on the manual clock (twice: b joined during it). */
async function joinTwo(t: Context, service: ClassicGroupsService) {
  const joins = Promise.all([service.joinGroup(ctx('a'), join('a')), service.joinGroup(ctx('b'), join('b'))])
  await t.advance(40)
  return joins
}

const ctx = (clientId: string) => ({ apiVersion: 3, clientId, clientHost: '/127.0.0.1' })

const join = (clientId: string) =>
  createJoinGroupRequest({
    groupId: 'g',
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId: '',
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: enc(clientId) }],
  })

describe('ClassicGroupsService', () => {
  it('a reloaded shard answers its parked requests NOT_COORDINATOR; other shards keep theirs', async () => {
    const { t, service } = await setUp(() => false)
    try {
      // During the initial rebalance delay the join is parked.
      const parked = service.joinGroup(ctx('a'), join('a'))
      while (service.parkedCount === 0) await new Promise((r) => setImmediate(r))
      service.shardReloaded((groupId) => groupId === 'another')
      assert.equal(service.parkedCount, 1, 'a group on another shard keeps waiting')
      service.shardReloaded((groupId) => groupId === 'g')
      assert.equal((await parked).errorCode, ErrorCode.NOT_COORDINATOR)
      assert.equal(service.parkedCount, 0)
    } finally {
      service.close()
      await t.close()
    }
  })

  it('a leader SyncGroup whose assignment cannot be stored starts a new rebalance at once', async () => {
    const { t, manager, service, writes } = await setUp((name) => name === 'classic-group-sync')
    try {
      const [a, b] = await joinTwo(t, service)
      assert.deepEqual([a.errorCode, b.errorCode, a.generationId], [0, 0, 1])
      const leader = a.leader
      const follower = leader === a.memberId ? b.memberId : a.memberId
      const synced = await service.syncGroup(
        ctx('a'),
        createSyncGroupRequest({
          groupId: 'g',
          memberId: leader,
          generationId: 1,
          assignments: [
            { memberId: leader, assignment: enc('L') },
            { memberId: follower, assignment: enc('F') },
          ],
        }),
      )
      assert.equal(synced.errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE)
      assert.ok(writes.includes('classic-group-sync-write-failed'))
      assert.equal(manager.group('g')!.state, ClassicGroupState.PREPARING_REBALANCE)
      const late = await service.syncGroup(
        ctx('b'),
        createSyncGroupRequest({ groupId: 'g', memberId: follower, generationId: 1 }),
      )
      assert.equal(late.errorCode, ErrorCode.REBALANCE_IN_PROGRESS)
      assert.equal(service.parkedCount, 0)
    } finally {
      service.close()
      await t.close()
    }
  })

  it('a stored leader assignment answers the parked follower and makes the group Stable', async () => {
    const { t, manager, service } = await setUp(() => false)
    try {
      const [a, b] = await joinTwo(t, service)
      const leader = a.leader
      const follower = leader === a.memberId ? b.memberId : a.memberId
      const parked = service.syncGroup(
        ctx('b'),
        createSyncGroupRequest({ groupId: 'g', memberId: follower, generationId: 1 }),
      )
      const synced = await service.syncGroup(
        ctx('a'),
        createSyncGroupRequest({
          groupId: 'g',
          memberId: leader,
          generationId: 1,
          assignments: [
            { memberId: leader, assignment: enc('L') },
            { memberId: follower, assignment: enc('F') },
          ],
        }),
      )
      assert.deepEqual([synced.errorCode, [...synced.assignment]], [0, [...enc('L')]])
      const f = await parked
      assert.deepEqual([f.errorCode, [...f.assignment]], [0, [...enc('F')]])
      assert.equal(manager.group('g')!.state, ClassicGroupState.STABLE)
    } finally {
      service.close()
      await t.close()
    }
  })

  it('a join that created its group while appends failed leaves no group behind', async () => {
    let down = true
    const { t, manager, service } = await setUp(() => down)
    try {
      const failed = await service.joinGroup(ctx('a'), join('a'))
      assert.equal(failed.errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE)
      assert.equal(manager.group('g'), undefined, 'the group is gone, as its record is')
      down = false
      // The store is back: the next member forms the group after the initial delay, alone.
      let answered = false
      const b = service.joinGroup(ctx('b'), join('b')).finally(() => {
        answered = true
      })
      await t.advance(1000)
      assert.ok(answered, 'the join phase ended')
      const joined = await b
      assert.deepEqual([joined.errorCode, joined.generationId, joined.members.length], [0, 1, 1])
      assert.equal(service.parkedCount, 0)
    } finally {
      service.close()
      await t.close()
    }
  })

  it('a static member rejoining while appends failed keeps its old member id', async () => {
    let down = false
    const { t, manager, service } = await setUp(() => down)
    const v9 = { apiVersion: 9, clientId: 's', clientHost: '/127.0.0.1' }
    const staticJoin = createJoinGroupRequest({
      groupId: 'g',
      sessionTimeoutMs: 1000,
      rebalanceTimeoutMs: 1000,
      memberId: '',
      groupInstanceId: 'instance-1',
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: enc('s') }],
    })
    try {
      const joining = service.joinGroup(v9, staticJoin)
      await t.advance(20)
      const joined = await joining
      assert.equal(joined.errorCode, 0)
      const oldId = joined.memberId
      const synced = await service.syncGroup(
        v9,
        createSyncGroupRequest({
          groupId: 'g',
          memberId: oldId,
          groupInstanceId: 'instance-1',
          generationId: 1,
          protocolType: 'consumer',
          protocolName: 'range',
          assignments: [{ memberId: oldId, assignment: enc('S') }],
        }),
      )
      assert.equal(synced.errorCode, 0)

      // The instance restarts while the store is down: its new member id cannot be stored.
      down = true
      const rejoined = await service.joinGroup(v9, staticJoin)
      assert.equal(rejoined.errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE)
      down = false
      const g = manager.group('g')!
      assert.deepEqual([...g.members.keys()], [oldId], 'the stored member id is the member again')
      assert.equal(g.leaderId, oldId)
      assert.equal(g.staticMemberId('instance-1'), oldId)
      const hb = await service.heartbeat(v9, {
        groupId: 'g',
        memberId: oldId,
        generationId: 1,
        groupInstanceId: 'instance-1',
      })
      assert.equal(hb.errorCode, ErrorCode.NONE)
      // Its session runs as any member's: without heartbeats it expires and the group empties.
      await t.advance(1500)
      assert.equal(manager.group('g')!.state, ClassicGroupState.EMPTY)
    } finally {
      service.close()
      await t.close()
    }
  })
})

describe('ClassicGroupsService streams conversion', () => {
  async function withStreamsGroup(cleanup: (groupId: string) => Promise<void>) {
    let streamsGroup = true
    const written: string[] = []
    let service: ClassicGroupsService | undefined
    const t: Context = await ShardTestContext.start({
      newShard: () =>
        new ClassicGroupManager({
          otherGroups: {
            typeOf: (id) => (streamsGroup && id === 'g' ? 'streams' : undefined),
            isEmpty: () => true,
            deleteEmptyGroupRecords: (groupId) => [
              { type: 'StreamsGroupMetadata', key: { groupId }, value: null },
            ],
          },
        }),
      onComplete: (completion, failure) => service?.complete(completion, failure),
    })
    const host: ClassicGroupsHost = {
      write: (name, _groupId, op) =>
        t.write(name, (manager, nowMs) => {
          const r = op(manager, nowMs)
          for (const record of r.records) {
            written.push(record.type)
            // The streams group is gone once its tombstone is written (here: produced and stored).
            if (record.type === 'StreamsGroupMetadata') streamsGroup = false
          }
          return r
        }),
      errorCode: () => ErrorCode.UNKNOWN_SERVER_ERROR,
      prepareStreamsConversion: cleanup,
    }
    service = new ClassicGroupsService(host, () => 'u')
    return { t, manager: t.shard, service, written }
  }

  it('runs the cleanup hook, then writes the streams tombstones before the classic group', async () => {
    const cleaned: string[] = []
    const { t, manager, service, written } = await withStreamsGroup(async (id) => {
      cleaned.push(id)
    })
    try {
      const r = await service.joinGroup({ ...ctx('a'), apiVersion: 9 }, join('a'))
      assert.equal(r.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      assert.deepEqual(cleaned, ['g'])
      assert.deepEqual(written, ['StreamsGroupMetadata', 'GroupMetadata'])
      assert.ok(manager.hasGroup('g'))
    } finally {
      service.close()
      await t.close()
    }
  })

  it('answers REBALANCE_IN_PROGRESS with the request member id when the cleanup fails', async () => {
    const { t, manager, service, written } = await withStreamsGroup(async () => {
      throw new Error('plugin down')
    })
    try {
      const r = await service.joinGroup({ ...ctx('a'), apiVersion: 9 }, { ...join('a'), memberId: 'm-1' })
      assert.deepEqual([r.errorCode, r.memberId], [ErrorCode.REBALANCE_IN_PROGRESS, 'm-1'])
      assert.deepEqual(written, [])
      assert.equal(manager.hasGroup('g'), false)
      assert.equal(service.parkedCount, 0)
    } finally {
      service.close()
      await t.close()
    }
  })
})
