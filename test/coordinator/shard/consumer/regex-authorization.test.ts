// Subscription patterns and DESCRIBE rights: the topics a pattern matches count only where the
// heartbeat's principal may DESCRIBE them (Kafka's TopicRegexResolver), the filtered match is what the
// ConsumerGroupRegularExpression record stores, and replay gives the same group without asking again.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { beat, ctx, Harness, join } from './harness.js'

describe('ConsumerGroupHeartbeat: patterns filtered by DESCRIBE', () => {
  it('a pattern assigns only the matched topics the member may describe', () => {
    const h = new Harness({ 'ev-open': 2, 'ev-secret': 1, other: 1 })
    const asked: string[][] = []
    const describable = (topics: readonly string[]) => {
      asked.push([...topics])
      return topics.filter((t) => t !== 'ev-secret')
    }
    const r = h.shard.consumerGroupHeartbeat(
      { ...ctx(0, h.config), describableTopics: describable },
      join('a', { subscribedTopicNames: null, subscribedTopicRegex: 'ev-.*' }),
    )
    const response = h.apply(r)
    assert.equal(response.errorCode, 0)
    // Only the pattern's matches are checked, not the whole catalog.
    assert.deepEqual(asked, [['ev-open', 'ev-secret']])
    const stored = r.records.find((x) => x.type === 'ConsumerGroupRegularExpression')
    assert.ok(stored && stored.value !== null)
    assert.deepEqual((stored.value as { topics: string[] }).topics, ['ev-open'])
    assert.deepEqual(response.assignment?.topicPartitions, [
      { topicId: h.topics.id('ev-open'), partitions: [0, 1] },
    ])
    // Replay rebuilds the same group from the record, without the filter.
    assert.deepEqual(h.snapshot(h.reloaded()), h.snapshot())

    // Without the filter (no authorizer), a later match of the group's pattern takes every topic.
    const owned = [{ topicId: h.topics.id('ev-open'), partitions: [0, 1] }]
    h.topics.set('ev-new', 1)
    h.shard.onNewTopicsImage(h.topics, ['ev-new'])
    const later = h.heartbeat(beat('a', 1, owned), 11_000).response
    assert.deepEqual(
      later.assignment?.topicPartitions.map((t) => t.topicId).sort(),
      [h.topics.id('ev-new'), h.topics.id('ev-open'), h.topics.id('ev-secret')].sort(),
    )
  })

  it('a pattern whose every match is denied subscribes to nothing', () => {
    const h = new Harness({ 'ev-secret': 1 })
    const r = h.shard.consumerGroupHeartbeat(
      { ...ctx(0, h.config), describableTopics: () => [] },
      join('a', { subscribedTopicNames: null, subscribedTopicRegex: 'ev-.*' }),
    )
    const response = h.apply(r)
    assert.equal(response.errorCode, 0)
    assert.deepEqual(response.assignment?.topicPartitions, [])
  })
})
