// The pool of Fetch read buffers: a buffer is lent until its loan is given back, then lent again;
// the pool never owns more than its limit, and beyond it a read gets a fresh buffer.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MAX_POOLED_BYTES, MIN_POOLED_BYTES, ReadBufferPool } from '../../src/log/read-buffers.js'

test('read buffers: a buffer given back is lent again; one still lent is never lent twice', () => {
  const pool = new ReadBufferPool(1 << 20)
  const loans: (() => void)[] = []
  const a = pool.lend(20_000, loans)
  assert.equal(a.byteLength, 20_000)
  assert.equal(a.buffer.byteLength, 32 * 1024, 'the smallest power of two that holds it')
  const b = pool.lend(20_000, loans)
  assert.notEqual(b.buffer, a.buffer, 'a lent buffer is not lent again')
  assert.equal(loans.length, 2)
  assert.equal(pool.lentBytes, 64 * 1024)
  loans[0]()
  loans[0]()
  assert.equal(pool.lentBytes, 32 * 1024, 'giving back twice gives back once')
  const later: (() => void)[] = []
  const c = pool.lend(30_000, later)
  assert.equal(c.buffer, a.buffer, 'the buffer given back is lent again')
  assert.equal(pool.ownedBytes, 64 * 1024)
  loans[1]()
  later[0]()
  assert.equal(pool.lentBytes, 0)
  // Small reads take the smallest size; a read above the largest is a fresh buffer, not the
  // pool's, still counted as outstanding until its loan is given back.
  const small = pool.lend(10, later)
  assert.equal(small.buffer.byteLength, MIN_POOLED_BYTES)
  const huge: (() => void)[] = []
  const big = pool.lend(MAX_POOLED_BYTES + 1, huge)
  assert.equal(big.byteLength, MAX_POOLED_BYTES + 1)
  assert.equal(huge.length, 1)
  assert.equal(pool.lentBytes, MIN_POOLED_BYTES, 'not lent from the pool')
  assert.equal(pool.outstandingBytes, MIN_POOLED_BYTES + MAX_POOLED_BYTES + 1)
  huge[0]()
  huge[0]()
  assert.equal(pool.outstandingBytes, MIN_POOLED_BYTES, 'given back once')
})

test('read buffers: the pool owns at most its limit; beyond it reads get fresh buffers', () => {
  const pool = new ReadBufferPool(256 * 1024)
  const loans: (() => void)[] = []
  for (let i = 0; i < 4; i++) pool.lend(64 * 1024, loans)
  assert.equal(pool.ownedBytes, 256 * 1024)
  const fresh: (() => void)[] = []
  const extra = pool.lend(64 * 1024, fresh)
  assert.equal(fresh.length, 1, 'everything lent: a fresh buffer, with a loan')
  assert.equal(extra.byteLength, 64 * 1024)
  assert.equal(pool.ownedBytes, 256 * 1024)
  assert.equal(pool.outstandingBytes, 320 * 1024)
  fresh[0]()
  // Free buffers of another size are let go to make room for a size the pool has none of.
  for (const giveBack of loans) giveBack()
  const other: (() => void)[] = []
  const x = pool.lend(100_000, other)
  assert.equal(other.length, 1)
  assert.equal(x.buffer.byteLength, 128 * 1024)
  assert.equal(pool.ownedBytes, 256 * 1024, 'two 64 KiB buffers went to make room')
  assert.equal(pool.lentBytes, 128 * 1024)
})

test('read buffers: a reservation counts as outstanding until released; the peak counts what was lent', () => {
  const pool = new ReadBufferPool(1 << 20)
  const release = pool.reserve(3 * 1024 * 1024)
  assert.equal(pool.outstandingBytes, 3 * 1024 * 1024)
  assert.equal(pool.peakLentBytes, 0, 'a reservation holds no buffer')
  const loans: (() => void)[] = []
  pool.lend(20_000, loans)
  pool.lend(MAX_POOLED_BYTES + 1, loans)
  assert.equal(pool.outstandingBytes, 3 * 1024 * 1024 + 32 * 1024 + MAX_POOLED_BYTES + 1)
  release()
  release()
  assert.equal(pool.outstandingBytes, 32 * 1024 + MAX_POOLED_BYTES + 1, 'released once')
  for (const giveBack of loans) giveBack()
  assert.equal(pool.outstandingBytes, 0)
  assert.equal(pool.peakLentBytes, 32 * 1024 + MAX_POOLED_BYTES + 1)
})
