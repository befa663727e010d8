// ClassicGroupsService around the conversion cleanup (KIP-1331 §7): the finalize step runs after the
// re-join has been written, also when the re-join is refused; a StreamsConversionError answers its own
// code (with or without the member id); without a configured cleanup the join converts in one write.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  type ClassicGroupsHost,
  ClassicGroupsService,
} from '../../../src/coordinator/service/classic-groups.js'
import { StreamsConversionError } from '../../../src/coordinator/service/topology-description-manager.js'
import { type ClassicCompletion, ClassicGroupManager } from '../../../src/coordinator/shard/classic/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import type { CoordinatorRecord } from '../../../src/protocol/generated/coordinator-records.js'
import { createJoinGroupRequest } from '../../../src/protocol/generated/messages/JoinGroupRequest.js'
import { ShardTestContext } from '../../testkit/shard-context.js'

async function setUp(options: {
  cleanup?: ClassicGroupsHost['prepareStreamsConversion']
  configured?: boolean
  /** Runs before the n-th write (1-based), e.g. to revive the streams group. */
  beforeWrite?: (n: number) => void
}) {
  const state = { streams: true, empty: true }
  const events: string[] = []
  let service: ClassicGroupsService | undefined
  // One classic manager as the shard of the real runtime (manual clock).
  const t: ShardTestContext<ClassicGroupManager, CoordinatorRecord, ClassicCompletion> =
    await ShardTestContext.start({
      newShard: () =>
        new ClassicGroupManager({
          otherGroups: {
            typeOf: (id) => (state.streams && id === 'g' ? 'streams' : undefined),
            isEmpty: () => state.empty,
            needsCleanupBeforeConversion: () => true,
            deleteEmptyGroupRecords: (groupId) => [
              { type: 'StreamsGroupMetadata', key: { groupId }, value: null },
            ],
          },
        }),
      onComplete: (completion, failure) => service?.complete(completion, failure),
    })
  let writes = 0
  const host: ClassicGroupsHost = {
    write(name, _groupId, op) {
      options.beforeWrite?.(++writes)
      return t.write(name, (manager, nowMs) => {
        const r = op(manager, nowMs)
        events.push(`${name}:${r.records.map((x) => x.type).join('+') || 'none'}`)
        for (const record of r.records) if (record.type === 'StreamsGroupMetadata') state.streams = false
        return r
      })
    },
    errorCode: () => ErrorCode.UNKNOWN_SERVER_ERROR,
    prepareStreamsConversion: options.cleanup,
    streamsConversionCleanupConfigured:
      options.configured === undefined ? undefined : () => options.configured!,
  }
  service = new ClassicGroupsService(host, () => 'u')
  return {
    state,
    events,
    manager: t.shard,
    service,
    async close() {
      service?.close()
      await t.close()
    },
  }
}

const join = (memberId = '') =>
  createJoinGroupRequest({
    groupId: 'g',
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array([1]) }],
  })
const ctx = { apiVersion: 9, clientId: 'c', clientHost: '/127.0.0.1' }

describe('ClassicGroupsService conversion hooks', () => {
  it('runs the finalize step after the converting re-join', async () => {
    let events: string[] = []
    const t = await setUp({
      cleanup: async () => {
        events.push('cleanup')
        return async () => {
          events.push('finalize')
        }
      },
    })
    events = t.events
    try {
      const r = await t.service.joinGroup(ctx, join())
      assert.equal(r.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      assert.deepEqual(events, [
        'classic-group-join:none',
        'cleanup',
        'classic-group-join:StreamsGroupMetadata+GroupMetadata',
        'finalize',
      ])
    } finally {
      await t.close()
    }
  })

  it('runs the finalize step also when the re-join is refused (a revived streams group)', async () => {
    let finalized = 0
    const t = await setUp({
      cleanup: async () => async () => {
        finalized++
      },
      // The streams group gains a member between the cleanup and the re-join.
      beforeWrite: (n) => {
        if (n === 2) t.state.empty = false
      },
    })
    try {
      const r = await t.service.joinGroup(ctx, join('m-1'))
      assert.deepEqual([r.errorCode, r.memberId], [ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''])
      assert.equal(finalized, 1)
      assert.equal(t.manager.hasGroup('g'), false)
    } finally {
      await t.close()
    }
  })

  it('a StreamsConversionError answers its code; the member id only when it says so', async () => {
    for (const [error, expected] of [
      [StreamsConversionError.retry('throttled'), [ErrorCode.REBALANCE_IN_PROGRESS, 'm-1']],
      [new StreamsConversionError(ErrorCode.NOT_COORDINATOR, false), [ErrorCode.NOT_COORDINATOR, '']],
    ] as const) {
      const t = await setUp({
        cleanup: async () => {
          throw error
        },
      })
      try {
        const r = await t.service.joinGroup(ctx, join('m-1'))
        assert.deepEqual([r.errorCode, r.memberId], expected)
        assert.deepEqual(t.events, ['classic-group-join:none'])
        assert.equal(t.service.parkedCount, 0)
      } finally {
        await t.close()
      }
    }
  })

  it('without a configured cleanup the first join converts: one write, the hook never runs', async () => {
    let called = 0
    const t = await setUp({
      cleanup: async () => {
        called++
      },
      configured: false,
    })
    try {
      const r = await t.service.joinGroup(ctx, join())
      assert.equal(r.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      assert.deepEqual(t.events, ['classic-group-join:StreamsGroupMetadata+GroupMetadata'])
      assert.equal(called, 0)
    } finally {
      await t.close()
    }
  })
})
