import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileTopicRegex, resolveTopicRegex } from '../../../../src/coordinator/shard/consumer/regex.js'
import { ApiError } from '../../../../src/coordinator/shard/api-error.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'

describe('subscription patterns (RE2 syntax)', () => {
  it('match whole topic names only', () => {
    assert.deepEqual(resolveTopicRegex('fo.*', ['foo', 'xfoo', 'fo', 'bar']), ['fo', 'foo'])
    assert.deepEqual(resolveTopicRegex('a|b', ['a', 'b', 'ab']), ['a', 'b'])
  })

  it('translate the RE2 forms JavaScript spells differently', () => {
    assert.ok(compileTopicRegex('(?i)FOO').test('foo'))
    assert.ok(compileTopicRegex('(?P<x>t)[[:digit:]]+').test('t12'))
    assert.ok(compileTopicRegex('\\Qa.b\\E').test('a.b'))
    assert.ok(!compileTopicRegex('\\Qa.b\\E').test('axb'))
    assert.ok(compileTopicRegex('\\Afoo\\z').test('foo'))
  })

  it('refuse what RE2 refuses, with INVALID_REGULAR_EXPRESSION', () => {
    for (const bad of ['(?=a)', '(?!a)', '(?<=a)b', '(a)\\1', '[', 'a**', '(?P<x']) {
      assert.throws(
        () => compileTopicRegex(bad),
        (e) =>
          e instanceof ApiError &&
          e.errorCode === ErrorCode.INVALID_REGULAR_EXPRESSION &&
          e.errorMessage!.startsWith(`SubscribedTopicRegex \`${bad}\` is not a valid regular expression: `),
        bad,
      )
    }
  })
})
