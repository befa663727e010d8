// A segment's sparse offset and time index in memory (IndexArrays in the file engine): entries in
// Float64Arrays, outside V8's heap, found by floor, exact for offsets and timestamps past 2^32.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { IndexArrays } from '../../src/log/file.js'

const BASE = 5_000_000_000_000

test('index arrays: entries past 2^32 are found by floor through many growths', () => {
  const a = new IndexArrays()
  assert.equal(a.length, 0)
  assert.equal(a.floor(BASE), -1)
  for (let i = 0; i < 100_000; i++) a.push(BASE + i * 16 + 15, i * 16_717)
  assert.equal(a.length, 100_000)
  assert.equal(a.floor(BASE + 14), -1)
  assert.equal(a.floor(BASE + 15), 0)
  assert.equal(a.floor(BASE + 16 * 777 + 20), 777)
  assert.equal(a.values[a.floor(BASE + 16 * 99_999 + 15)], 99_999 * 16_717)
  assert.equal(a.floor(Number.MAX_SAFE_INTEGER), 99_999)
  assert.equal(a.keys[99_999], BASE + 16 * 99_999 + 15)
})

test('index arrays: the entries are held in Float64Arrays, trimmed to their length at a roll', () => {
  const a = new IndexArrays()
  for (let i = 0; i < 1_000; i++) a.push(BASE + i, i)
  assert.ok(a.keys instanceof Float64Array)
  assert.ok(a.values instanceof Float64Array)
  assert.ok(a.keys.length >= 1_000)
  a.trim()
  assert.equal(a.keys.length, 1_000)
  assert.equal(a.values.length, 1_000)
  assert.equal(a.floor(BASE + 500), 500)
  // Entries still go on after a trim.
  a.push(BASE + 1_000, 1_000)
  assert.equal(a.length, 1_001)
  assert.equal(a.floor(BASE + 2_000), 1_000)
  assert.equal(a.values[1_000], 1_000)
})
