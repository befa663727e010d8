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
