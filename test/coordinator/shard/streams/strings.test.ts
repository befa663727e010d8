import assert from 'node:assert/strict'
import { test } from 'node:test'
import { kept } from '../../../../src/coordinator/shard/streams/strings.js'

test('kept: the same string value, for short, long, sliced and non-Latin-1 strings (lone surrogates too) and null', () => {
  const window = `${'x'.repeat(50)}hb-member-123-4-${Math.random()}${'y'.repeat(50)}`
  const cases = [
    '',
    'short',
    'exactly13char',
    window.substring(50, 80),
    'héllo wörld ünïcödé 😀 and more text',
    'lone \ud800 surrogate and a long enough tail',
    'x'.repeat(5000),
  ]
  for (const s of cases) assert.equal(kept(s), s)
  assert.equal(kept(null), null)
})
