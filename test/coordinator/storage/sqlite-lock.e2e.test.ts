// The SQLite store belongs to one process: another one that opens the same data.dir fails at once
// while it is held, and succeeds once it was closed.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SqliteRecordStore } from '../../../src/coordinator/storage/sqlite.js'
import { rec, show } from './contract.js'

const openChild = fileURLToPath(new URL('./fixtures/open-child.ts', import.meta.url))

/** Runs the open-child fixture on `dir` and returns what it printed. */
function openInChild(dir: string): string {
  const out = spawnSync(process.execPath, ['--import', 'tsx', openChild, dir], {
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(out.status, 0, `child failed: ${out.stderr}`)
  return out.stdout.trim()
}

test('sqlite: another process cannot open the store while this one holds it, and can after', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-sqlite-lock-'))
  try {
    const store = new SqliteRecordStore(dir)
    await store.open()
    await store.append(0, [rec('a', '1')])
    const line = openInChild(dir)
    assert.match(line, /^failed STORAGE_OPEN_FAILED .*is locked: another process is using data\.dir/)
    // Still ours, and still writable.
    await store.append(0, [rec('b', '1')])
    assert.deepEqual(show(await store.load(0)), [
      ['a', '1'],
      ['b', '1'],
    ])
    await store.close()
    assert.equal(openInChild(dir), 'opened')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
