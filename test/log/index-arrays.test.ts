// A segment's sparse offset and time index in memory (IndexArrays in the file engine): entries in
// chunks that are never copied as the index grows, found by floor across the chunks' bounds.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { INDEX_CHUNK_ENTRIES, IndexArrays } from '../../src/log/file.js'

const BASE = 5_000_000_000_000

test('index arrays: entries past 2^32 are found by floor across many chunks', () => {
  const a = new IndexArrays()
  assert.equal(a.length, 0)
  assert.equal(a.floor(BASE), -1)
  const n = 25 * INDEX_CHUNK_ENTRIES + 7
  for (let i = 0; i < n; i++) a.push(BASE + i * 16 + 15, i * 16_717)
  assert.equal(a.length, n)
  assert.equal(a.floor(BASE + 14), -1)
  assert.equal(a.floor(BASE + 15), 0)
  assert.equal(a.floor(BASE + 16 * 777 + 20), 777)
  for (const i of [INDEX_CHUNK_ENTRIES - 1, INDEX_CHUNK_ENTRIES, 2 * INDEX_CHUNK_ENTRIES + 1, n - 1]) {
    assert.equal(a.floor(BASE + 16 * i + 15), i)
    assert.equal(a.floor(BASE + 16 * i + 14), i - 1)
    assert.equal(a.key(i), BASE + 16 * i + 15)
    assert.equal(a.value(i), i * 16_717)
  }
  assert.equal(a.floor(Number.MAX_SAFE_INTEGER), n - 1)
})

test('index arrays: an index as long as a full segment is held in chunks, none longer than a chunk', () => {
  // A 1 GiB segment of 16 KiB batches: an entry a batch.
  const a = new IndexArrays()
  for (let i = 0; i < 65_536; i++) a.push(i, i * 16_448)
  assert.equal(a.length, 65_536)
  assert.equal(a.longestChunk, INDEX_CHUNK_ENTRIES)
})
