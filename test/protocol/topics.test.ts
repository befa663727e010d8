import assert from 'node:assert/strict'
import { test } from 'node:test'
import { invalidTopicNameReason, isInternalTopic, isValidTopicName } from '../../src/protocol/topics.js'

test("Kafka's topic name rule, with Kafka's reasons", () => {
  assert.equal(invalidTopicNameReason('ok.name_1-x'), null)
  assert.equal(invalidTopicNameReason(''), 'the empty string is not allowed')
  assert.equal(invalidTopicNameReason('.'), "'.' is not allowed")
  assert.equal(invalidTopicNameReason('..'), "'..' is not allowed")
  assert.equal(invalidTopicNameReason('a'.repeat(249)), null)
  assert.equal(
    invalidTopicNameReason('a'.repeat(250)),
    `the length of '${'a'.repeat(250)}' is longer than the max allowed length 249`,
  )
  assert.equal(
    invalidTopicNameReason('a b'),
    "'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'",
  )
  assert.match(invalidTopicNameReason('é') ?? '', /characters other than/)
  // The whole name must match: no line end passes after a legal name.
  assert.match(invalidTopicNameReason('topic\n') ?? '', /characters other than/)
})

test('a topic name is valid exactly when the rule gives no reason', () => {
  for (const name of ['a', '...', 'a.b', '_-.', 'A'.repeat(249), '__consumer_offsets']) {
    assert.equal(isValidTopicName(name), true, name)
  }
  for (const name of ['', '.', '..', 'A'.repeat(250), 'a/b', 'a b', 'é', 'topic\n']) {
    assert.equal(isValidTopicName(name), false, JSON.stringify(name))
  }
})

test("Kafka's internal topics", () => {
  for (const name of ['__consumer_offsets', '__transaction_state', '__share_group_state']) {
    assert.equal(isInternalTopic(name), true, name)
  }
  for (const name of ['__cluster_metadata', 'consumer_offsets', '__consumer_offsets-x']) {
    assert.equal(isInternalTopic(name), false, name)
  }
})
