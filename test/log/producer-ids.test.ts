import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { ProducerIdManager } from '../../src/log/producer-ids.js'
import { countingLayer } from './fs-probes.js'

test('producer ids: unique within a process and across restarts; blocks reserved before use', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-pid-'))
  try {
    const seen = new Set<number>()
    for (let run = 0; run < 3; run++) {
      const ids = new ProducerIdManager(dir, 10)
      await ids.open()
      const got = await Promise.all(Array.from({ length: 25 }, () => ids.next()))
      for (const id of got) {
        assert.ok(!seen.has(id), `id ${id} handed out twice`)
        seen.add(id)
      }
      // The file already covers every id handed out.
      const reserved = Number(
        /next\.block\.start: (\d+)/.exec(readFileSync(join(dir, 'producer-id-block'), 'utf8'))![1],
      )
      assert.ok(Math.max(...got) < reserved)
      await ids.close()
    }
    assert.equal(seen.size, 75)
    assert.equal(Math.min(...seen), 0)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('producer ids: memory only when there is no directory', async () => {
  const ids = new ProducerIdManager(null)
  await ids.open()
  assert.deepEqual([await ids.next(), await ids.next()], [0, 1])
})

test('producer ids: a block is reserved off the event loop', async () => {
  // The block file was written and fsynced in the caller's turn: the first InitProducerId after a
  // start, and one in a thousand after it, held every connection for an fsync.
  const dir = mkdtempSync(join(tmpdir(), 'topograph-pid-async-'))
  try {
    const { layer, during } = countingLayer()
    const ids = new ProducerIdManager(dir, 10, layer)
    await ids.open()
    let got: number[] = []
    const seen = await during(async () => {
      const asked = Array.from({ length: 35 }, () => ids.next())
      // Nothing of the block's write happened in this turn.
      assert.ok(!existsSync(join(dir, 'producer-id-block')), 'the block file was written in the caller turn')
      got = await Promise.all(asked)
    })
    assert.deepEqual(
      got,
      Array.from({ length: 35 }, (_, i) => i),
    )
    assert.deepEqual(seen.calls, {}, 'no synchronous file call')
    assert.match(readFileSync(join(dir, 'producer-id-block'), 'utf8'), /next\.block\.start: 40\n/)
    await ids.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
