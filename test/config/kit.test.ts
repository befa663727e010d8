// The config kit: one reading and one message per value, whichever table (broker, topic, group)
// parses it; and the one redaction of PostgreSQL URLs that the storage and the plugin share.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  checkBounds,
  checkOneOf,
  InvalidValue,
  intKey,
  invalidValueMessage,
  longKey,
  optionalKey,
  parseBoolean,
  parseDouble,
  parseInt32,
  parseInt64,
  parseSafeLong,
  redactPostgresUrl,
  splitList,
} from '../../src/config/index.js'

const reason = (f: () => unknown): string => {
  try {
    f()
  } catch (e) {
    assert.ok(e instanceof InvalidValue)
    return e.message
  }
  assert.fail('no InvalidValue thrown')
}

describe('values', () => {
  it('INT and LONG as Java parses them, trimmed', () => {
    assert.equal(parseInt32(' +42 '), 42)
    assert.equal(parseInt32('-2147483648'), -2147483648)
    assert.equal(
      reason(() => parseInt32('2147483648')),
      'Not a number of type INT',
    )
    assert.equal(
      reason(() => parseInt32('1.0')),
      'Not a number of type INT',
    )
    assert.equal(parseInt64('9223372036854775807'), 9223372036854775807n)
    assert.equal(
      reason(() => parseInt64('9223372036854775808')),
      'Not a number of type LONG',
    )
    assert.equal(parseSafeLong('9007199254740991'), Number.MAX_SAFE_INTEGER)
    assert.equal(
      reason(() => parseSafeLong('9007199254740992')),
      'Not a number of type LONG',
    )
  })

  it('DOUBLE, BOOLEAN and lists', () => {
    assert.equal(parseDouble(' 0.5 '), 0.5)
    assert.equal(
      reason(() => parseDouble('')),
      'Not a number of type DOUBLE',
    )
    assert.equal(parseBoolean(' TRUE '), true)
    assert.equal(
      reason(() => parseBoolean('yes')),
      'Expected value to be either true or false',
    )
    assert.deepEqual(splitList(' a , b ,, c '), ['a', 'b', '', 'c'])
    assert.deepEqual(splitList('  '), [])
  })

  it('validators and the message of a bad value', () => {
    assert.equal(
      reason(() => checkBounds(0, { min: 1 })),
      'Value must be at least 1',
    )
    assert.equal(
      reason(() => checkBounds(5n, { max: 4 })),
      'Value must be no more than 4',
    )
    assert.equal(
      reason(() => checkOneOf('x', ['a', 'b'])),
      'String must be one of: a, b',
    )
    assert.equal(invalidValueMessage('k', 'v', 'why'), 'Invalid value v for configuration k: why')
  })
})

describe('key definitions', () => {
  it('int and long keys carry their bounds into the reference table and the parser', () => {
    const i = intKey('a.b', 3, { min: 1, max: 9 }, 'low', 'doc')
    assert.equal(i.validValues, '[1, ..., 9]')
    assert.equal(i.parse('9'), 9)
    assert.equal(
      reason(() => i.parse('10')),
      'Value must be no more than 9',
    )
    const l = longKey('c.d', 5, {}, 'low', 'doc')
    assert.equal(l.type, 'long')
    assert.equal(l.parse('123456789012'), 123456789012)
  })

  it('a password key has no default and keeps its value', () => {
    const p = optionalKey('x.password', 'password', 'any', 'high', 'doc')
    assert.deepEqual([p.type, p.default, p.absent, p.parse('s3cret')], ['password', null, null, 's3cret'])
  })
})

describe('redactPostgresUrl (the storage and the topology description plugin)', () => {
  it('hides a user-info password and a password parameter', () => {
    assert.equal(redactPostgresUrl('postgres://u:pw@db/x'), 'postgres://u:***@db/x')
    assert.equal(
      redactPostgresUrl('postgresql://u@db:5432/x?password=pw&sslmode=require'),
      'postgresql://u@db:5432/x?password=***&sslmode=require',
    )
    assert.equal(redactPostgresUrl('postgres://db/x'), 'postgres://db/x')
    assert.equal(redactPostgresUrl('not a url'), '(unparsable URL)')
  })
})
