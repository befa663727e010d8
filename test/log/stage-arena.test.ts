// The buffers staged batches are copied into (StageArena in the partition log): a turn whose batches
// pass one arena's bytes takes an arena an earlier such turn let go before it makes a new one.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { STAGE_ARENA_BYTES, STAGE_ARENA_SPARES, StageArena } from '../../src/log/partition-log.js'

/** One turn's stage of `batches` quarter-arena batches, written: the buffers its copies went to. */
function turn(batches: number): Set<ArrayBufferLike> {
  const batch = new Uint8Array(STAGE_ARENA_BYTES / 4).fill(7)
  const stage: { arenas: StageArena[] } = { arenas: [] }
  const buffers = new Set<ArrayBufferLike>()
  for (let i = 0; i < batches; i++) {
    const copy = StageArena.copy(batch, stage)
    assert.deepEqual(copy, Buffer.from(batch))
    buffers.add(copy.buffer)
  }
  StageArena.release(stage)
  return buffers
}

test('stage arenas: a turn past one arena reuses the arenas an earlier such turn let go', () => {
  const first = turn(4 * (STAGE_ARENA_SPARES + 1))
  assert.equal(first.size, STAGE_ARENA_SPARES + 1)
  for (let i = 0; i < 3; i++) {
    const again = turn(4 * (STAGE_ARENA_SPARES + 1))
    assert.equal(again.size, STAGE_ARENA_SPARES + 1)
    for (const b of again) assert.ok(first.has(b), 'a new arena where a spare was free')
  }
})

test('stage arenas: no more than STAGE_ARENA_SPARES are kept besides the current one', () => {
  const big = turn(4 * (STAGE_ARENA_SPARES + 3))
  assert.equal(big.size, STAGE_ARENA_SPARES + 3)
  assert.equal(StageArena.spares.length, STAGE_ARENA_SPARES)
  assert.ok(!StageArena.spares.includes(StageArena.current))
})
