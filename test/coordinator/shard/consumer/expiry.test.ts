// Offset expiry of consumer groups (Kafka's cleanupGroupMetadata with ConsumerGroup's expiration
// condition): an offset expires `offsets.retention.minutes` after its commit unless a member of the
// group subscribes to its topic, by name or through a pattern; an empty consumer group whose offsets
// are all gone is deleted with its records. Replaying the log gives the same groups.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { beat, Harness, join, offsetCommit } from './harness.js'

const RETENTION = { retentionMs: 1000, pluginConfigured: false }

const types = (records: readonly { type: string; value: unknown }[]) =>
  records.map((r) => `${r.type}${r.value === null ? '-' : ''}`)

/** Commits offset 5 of partition 0 of `topic` as member `memberId` at `memberEpoch`. */
function commit(h: Harness, topic: string, memberEpoch: number, memberId: string, nowMs: number) {
  const req = offsetCommit(h.topics.id(topic), memberEpoch, memberId, 5n)
  const r = h.shard.commitOffsets(
    { apiVersion: 9, nowMs, maxMetadataSize: 4096 },
    { ...req, topics: [{ ...req.topics[0]!, name: topic }] },
  )
  assert.equal(r.response[0]!.partitions[0]!.errorCode, 0)
  h.apply(r)
}

describe('consumer group offsets expire as Kafka’s', () => {
  it('an unsubscribed topic’s offset expires; a subscribed one stays until the group is empty', () => {
    const h = new Harness({ foo: 1, bar: 1 })
    const a = h.heartbeat(join('a')).response
    // An offset of bar, committed by an administrator while the group was empty, then foo's.
    h.heartbeat(beat('a', a.memberEpoch, null, { memberEpoch: -1 }), 1)
    commit(h, 'bar', -1, '', 0)
    const a2 = h.heartbeat(join('a'), 2).response
    commit(h, 'foo', a2.memberEpoch, 'a', 0)

    assert.deepEqual(h.shard.cleanupGroupMetadata(999, RETENTION).records, [], 'not yet due')
    const first = h.shard.cleanupGroupMetadata(5000, RETENTION)
    assert.deepEqual(first.records, [
      { type: 'OffsetCommit', key: { group: 'g', topic: 'bar', partition: 0 }, value: null },
    ])
    assert.deepEqual(first.response, { expiredOffsets: 1, deletedGroups: [] })
    h.apply(first)
    assert.deepEqual(h.shard.cleanupGroupMetadata(6000, RETENTION).records, [], 'foo is subscribed')

    // The member leaves: foo is no longer subscribed; its offset goes, then the group.
    h.heartbeat(beat('a', a2.memberEpoch, null, { memberEpoch: -1 }), 7000)
    const second = h.shard.cleanupGroupMetadata(7000, RETENTION)
    assert.deepEqual(second.response, { expiredOffsets: 1, deletedGroups: ['g'] })
    assert.deepEqual(types(second.records), [
      'OffsetCommit-',
      'ConsumerGroupTargetAssignmentMetadata-',
      'ConsumerGroupPartitionMetadata-',
      'ConsumerGroupMetadata-',
    ])
    h.apply(second)
    assert.equal(h.shard.consumer.group('g'), undefined)
    assert.deepEqual(h.shard.listGroups([], []), [])
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })

  it('a topic a member’s pattern matches is subscribed: its offset does not expire', () => {
    const h = new Harness({ foo: 1, fox: 1 })
    const a = h.heartbeat(join('a', { subscribedTopicNames: null, subscribedTopicRegex: 'fo.*' })).response
    commit(h, 'fox', a.memberEpoch, 'a', 0)
    assert.deepEqual(h.shard.cleanupGroupMetadata(10_000, RETENTION).records, [])
    assert.equal(h.shard.isSubscribedToTopic('g', 'fox'), true)
    assert.equal(h.shard.isSubscribedToTopic('g', 'bar'), false)
  })

  it('an empty consumer group without offsets is deleted by the sweep; a non-empty one is kept', () => {
    const h = new Harness({ foo: 1 })
    const a = h.heartbeat(join('a')).response
    assert.deepEqual(h.shard.cleanupGroupMetadata(10_000, RETENTION).records, [], 'a member remains')
    h.heartbeat(beat('a', a.memberEpoch, null, { memberEpoch: -1 }), 1)
    const sweep = h.shard.cleanupGroupMetadata(10_000, RETENTION)
    assert.deepEqual(sweep.response, { expiredOffsets: 0, deletedGroups: ['g'] })
    h.apply(sweep)
    assert.equal(h.shard.consumer.group('g'), undefined)
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())
  })
})
