// Topic config values refused with Kafka's own texts (LogConfig's validators).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { checkTopicConfig } from '../../../src/server/topics/topic-configs.js'

describe('checkTopicConfig', () => {
  it("cleanup.policy is Kafka's ValidList.in(compact, delete): each entry named once in its message", () => {
    assert.equal(checkTopicConfig('cleanup.policy', 'compact,delete'), null)
    assert.equal(checkTopicConfig('cleanup.policy', ' delete '), null)
    assert.equal(checkTopicConfig('cleanup.policy', ''), null)
    assert.equal(
      checkTopicConfig('cleanup.policy', 'bogus'),
      'Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete',
    )
    assert.equal(
      checkTopicConfig('cleanup.policy', 'compact, nope'),
      'Invalid value nope for configuration cleanup.policy: String must be one of: compact, delete',
    )
    assert.equal(
      checkTopicConfig('cleanup.policy', 'compact,compact'),
      "Configuration 'cleanup.policy' values must not be duplicated.",
    )
    assert.equal(
      checkTopicConfig('cleanup.policy', 'compact,,delete'),
      "Configuration 'cleanup.policy' values must not be empty.",
    )
  })

  it('other values keep the whole value in the message', () => {
    assert.equal(
      checkTopicConfig('retention.ms', 'soon'),
      'Invalid value soon for configuration retention.ms: Not a number of type LONG',
    )
  })
})
