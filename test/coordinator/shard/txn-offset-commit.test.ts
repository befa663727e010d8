// The group checks of a TxnOffsetCommit on the group coordinator shard, per group type (Kafka's
// validateTransactionalOffsetCommit): a consumer group member (unknown member, stale epoch as
// ILLEGAL_GENERATION below v6 and STALE_MEMBER_EPOCH from v6, the member's own epoch), a producer
// outside group management (-1, "", no instance id) into a group with members, an unknown group
// with and without a generation, and the simple group a commit without generation creates.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TxnOffsetCommitInput } from '../../../src/coordinator/shard/offsets/offset-metadata-manager.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { Harness, join } from './consumer/harness.js'

function txn(groupId: string, p: Partial<TxnOffsetCommitInput> = {}): TxnOffsetCommitInput {
  return {
    transactionalId: 't',
    groupId,
    producerId: 7n,
    producerEpoch: 0,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [
      {
        name: 'foo',
        topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        partitions: [
          { partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: null },
        ],
      },
    ],
    ...p,
  }
}

describe('TxnOffsetCommit group checks', () => {
  it('consumer group: member and epoch, STALE_MEMBER_EPOCH only from v6', () => {
    const h = new Harness()
    const joined = h.heartbeat(join('m1'))
    const epoch = joined.response.memberEpoch
    assert.ok(epoch > 0)
    const check = (p: Partial<TxnOffsetCommitInput>, v: number) =>
      h.shard.validateTransactionalOffsetCommit(txn('g', p), v)
    assert.equal(
      check({ memberId: 'nobody', generationIdOrMemberEpoch: epoch }, 5),
      ErrorCode.UNKNOWN_MEMBER_ID,
    )
    assert.equal(
      check({ memberId: 'm1', generationIdOrMemberEpoch: epoch + 1 }, 5),
      ErrorCode.ILLEGAL_GENERATION,
    )
    assert.equal(
      check({ memberId: 'm1', generationIdOrMemberEpoch: epoch + 1 }, 6),
      ErrorCode.STALE_MEMBER_EPOCH,
    )
    assert.equal(check({ memberId: 'm1', generationIdOrMemberEpoch: epoch }, 5), ErrorCode.NONE)
    // A producer outside group management commits into a group with members.
    assert.equal(check({}, 5), ErrorCode.NONE)
  })

  it('unknown group: without a generation the commit creates the simple group', () => {
    const h = new Harness()
    const withGeneration = { generationIdOrMemberEpoch: 2, memberId: 'm' }
    assert.equal(
      h.shard.validateTransactionalOffsetCommit(txn('x', withGeneration), 5),
      ErrorCode.ILLEGAL_GENERATION,
    )
    assert.equal(
      h.shard.validateTransactionalOffsetCommit(txn('x', withGeneration), 6),
      ErrorCode.GROUP_ID_NOT_FOUND,
    )
    const answer = h.apply(
      h.shard.commitTransactionalOffsets({ apiVersion: 5, nowMs: 0, maxMetadataSize: 4096 }, txn('x')),
    )
    assert.equal(answer[0].partitions[0].errorCode, ErrorCode.NONE)
    assert.ok(h.shard.isSimpleGroup('x'))
    assert.equal(
      h.shard.validateTransactionalOffsetCommit(txn('x', withGeneration), 5),
      ErrorCode.UNKNOWN_MEMBER_ID,
    )
    // The pending offset and the simple group come back from the log.
    const again = h.reloaded()
    assert.ok(again.isSimpleGroup('x'))
    assert.equal(again.offsets.hasPendingOffsets('x'), true)
  })
})
