import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  type ClassicGroupsHost,
  ClassicGroupsService,
} from '../../../src/coordinator/service/classic-groups.js'
import { ClassicGroupManager, ClassicGroupState } from '../../../src/coordinator/shard/classic/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { createJoinGroupRequest } from '../../../src/protocol/generated/messages/JoinGroupRequest.js'
import { createSyncGroupRequest } from '../../../src/protocol/generated/messages/SyncGroupRequest.js'

const enc = (s: string): Uint8Array => new TextEncoder().encode(s)

/** One manager behind a host whose writes fail while `failing(name)` says so. */
function setUp(failing: (name: string) => boolean) {
  const manager = new ClassicGroupManager({
    config: {
      minSessionTimeoutMs: 10,
      maxSessionTimeoutMs: 60_000,
      initialRebalanceDelayMs: 20,
      maxSize: 10,
      newMemberJoinTimeoutMs: 60_000,
    },
  })
  const writes: string[] = []
  const host: ClassicGroupsHost = {
    async write(name, _groupId, op) {
      const r = op(manager, Date.now())
      writes.push(name)
      if (r.records.length > 0 && failing(name)) throw new Error(`store down (${name})`)
      for (const record of r.records) manager.replay(record)
      return r.response
    },
    errorCode: () => ErrorCode.COORDINATOR_NOT_AVAILABLE,
    setTimer: (fn, delayMs) => setTimeout(fn, delayMs),
    clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
  }
  let n = 0
  const service = new ClassicGroupsService(host, () => `uuid-${++n}`)
  return { manager, service, writes }
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
  it('a leader SyncGroup whose assignment cannot be stored starts a new rebalance at once', async () => {
    const { manager, service, writes } = setUp((name) => name === 'classic-group-sync')
    try {
      const [a, b] = await Promise.all([
        service.joinGroup(ctx('a'), join('a')),
        service.joinGroup(ctx('b'), join('b')),
      ])
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
    }
  })

  it('a stored leader assignment answers the parked follower and makes the group Stable', async () => {
    const { manager, service } = setUp(() => false)
    try {
      const [a, b] = await Promise.all([
        service.joinGroup(ctx('a'), join('a')),
        service.joinGroup(ctx('b'), join('b')),
      ])
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
    }
  })
})

describe('ClassicGroupsService streams conversion', () => {
  function withStreamsGroup(cleanup: (groupId: string) => Promise<void>) {
    let streamsGroup = true
    const manager = new ClassicGroupManager({
      otherGroups: {
        typeOf: (id) => (streamsGroup && id === 'g' ? 'streams' : undefined),
        isEmpty: () => true,
        deleteEmptyGroupRecords: (groupId) => [
          { type: 'StreamsGroupMetadata', key: { groupId }, value: null } as never,
        ],
      },
    })
    const written: string[] = []
    const host: ClassicGroupsHost = {
      async write(_name, _groupId, op) {
        const r = op(manager, Date.now())
        for (const record of r.records) {
          written.push(record.type)
          if (record.type === 'StreamsGroupMetadata') streamsGroup = false
          manager.replay(record)
        }
        return r.response
      },
      errorCode: () => ErrorCode.UNKNOWN_SERVER_ERROR,
      prepareStreamsConversion: cleanup,
      setTimer: (fn, delayMs) => setTimeout(fn, delayMs),
      clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
    }
    return { manager, service: new ClassicGroupsService(host, () => 'u'), written }
  }

  it('runs the cleanup hook, then writes the streams tombstones before the classic group', async () => {
    const cleaned: string[] = []
    const { manager, service, written } = withStreamsGroup(async (id) => {
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
    }
  })

  it('answers REBALANCE_IN_PROGRESS with the request member id when the cleanup fails', async () => {
    const { manager, service, written } = withStreamsGroup(async () => {
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
    }
  })
})
