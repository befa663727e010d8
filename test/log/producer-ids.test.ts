import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { ProducerIdManager } from '../../src/log/producer-ids.js'

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
