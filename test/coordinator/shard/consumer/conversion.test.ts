// Empty groups of the other protocol give way: a consumer join over an empty classic group (or a
// simple group) tombstones it first; a classic JoinGroup over an empty consumer group deletes the
// consumer group's records in the same write. A non-empty group of the other protocol refuses.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import type { JoinGroupRequest } from '../../../../src/protocol/generated/messages/JoinGroupRequest.js'
import { beat, Harness, join, offsetCommit } from './harness.js'

function classicJoin(memberId = ''): JoinGroupRequest {
  return {
    groupId: 'g',
    sessionTimeoutMs: 10000,
    rebalanceTimeoutMs: 10000,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array([0]) }],
    reason: null,
  }
}

const joinCtx = (nowMs: number) => ({
  nowMs,
  apiVersion: 9,
  clientId: 'c',
  clientHost: '/127.0.0.1',
  token: 1,
  newMemberUuid: 'u',
  conversionReady: true,
})

describe('consumer and classic groups on one id', () => {
  it('a consumer join replaces a simple group; its offsets stay', () => {
    const h = new Harness({ foo: 2 })
    const commit = offsetCommit(h.topics.id('foo'), -1, '', 3n)
    h.apply(h.shard.commitOffsets({ apiVersion: 9, nowMs: 0, maxMetadataSize: 4096 }, commit))
    assert.equal(h.shard.isSimpleGroup('g'), true)
    const { result, response } = h.heartbeat(join('a'), 1)
    assert.equal(response.errorCode, 0)
    assert.deepEqual(result.records[0], { type: 'GroupMetadata', key: { group: 'g' }, value: null })
    assert.equal(h.shard.isSimpleGroup('g'), false)
    assert.equal(h.shard.offsets.offset('g', 'foo', 0)?.offset, 3n)
    assert.deepEqual(
      h.shard.listGroups([], []).map((g) => g.groupType),
      ['consumer'],
    )
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })

  it('a classic join converts an empty consumer group and is refused by a non-empty one', () => {
    const h = new Harness({ foo: 2 })
    const a = h.heartbeat(join('a')).response
    const refused = h.shard.classic.classicGroupJoin(joinCtx(1), classicJoin())
    assert.equal(refused.records.length, 0)
    assert.deepEqual(
      refused.completions?.map((c) => c.response.errorCode),
      [ErrorCode.INCONSISTENT_GROUP_PROTOCOL],
    )
    h.heartbeat(beat('a', a.memberEpoch, null, { memberEpoch: -1 }), 2)
    const converted = h.shard.classic.classicGroupJoin(joinCtx(3), classicJoin())
    const types = converted.records.map((r) => r.type)
    assert.ok(types.includes('ConsumerGroupMetadata'), types.join(','))
    assert.equal(types[types.length - 1], 'GroupMetadata')
    h.apply(converted)
    assert.equal(h.shard.consumer.group('g'), undefined)
    assert.deepEqual(
      h.shard.listGroups([], []).map((g) => g.groupType),
      ['classic'],
    )
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })
})
