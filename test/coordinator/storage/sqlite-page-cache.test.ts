// The store's connections bound their page caches. better-sqlite3 builds SQLite with a page cache of
// up to 16,000 KiB a connection, and the connection that appends keeps every page its appends
// create, so a store that set no `cache_size` grew its native memory with its database, about 15 MB
// over the 30,000 appends below (the soak's growing native heap, RELIABILITY.md "Soak"). With the
// store's setting (2,000 KiB) it stays under 1 MB. (The SQLite plugin's test is in a file of its own:
// memory this process freed would hide a cache's growth.)
//
// The writer thread's connection is checked by the setting it reads back, not by memory: the
// thread's own V8 heap is in this process's native memory too, and it grows and shrinks with that
// thread's collections by more than the bound.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { PAGE_CACHE_SIZE, SqliteRecordStore } from '../../../src/coordinator/storage/sqlite.js'
import { SqliteWriter } from '../../../src/coordinator/storage/sqlite-writer.js'
import type { CoordinatorRecord } from '../../../src/coordinator/storage/types.js'
import { PAGE_CACHE_GROWTH_LIMIT_KIB as LIMIT_KIB, nativeAnonymousKiB } from '../../helpers/native-memory.js'

const dir = mkdtempSync(join(tmpdir(), 'topograph-page-cache-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** 20 records of offset-commit size, each append's values different so rows do not compress away. */
function batch(n: number): CoordinatorRecord[] {
  return Array.from({ length: 20 }, (_, p) => ({
    key: new Uint8Array(Buffer.from(`\u0000\u0001\u0000\u000cgroup-${n % 1000}\u0000\u0007topic-${p}`)),
    value: new Uint8Array(60).map((_, i) => (i * 7 + n * 13 + p) & 255),
  }))
}

describe('SQLite page caches', () => {
  test('appends on the event loop keep the page cache bounded', async () => {
    const store = new SqliteRecordStore(join(dir, 'event-loop'))
    await store.open()
    try {
      assert.equal(store.writesOnThread, false)
      let n = 0
      for (; n < 10_000; n++) await store.append(n % 8, batch(n))
      const before = nativeAnonymousKiB()
      for (; n < 40_000; n++) await store.append(n % 8, batch(n))
      const kib = nativeAnonymousKiB() - before
      assert.ok(kib < LIMIT_KIB, `native memory grew ${kib} KiB over 30,000 appends (limit ${LIMIT_KIB})`)
    } finally {
      await store.close()
    }
  })

  test("the writer thread's connection takes the store's cache_size", async () => {
    // The store makes the file and its table; the writer is started as the store starts its own
    // (`writeThread: true`) and tells what its connection read back (better-sqlite3's build
    // default would read −16000).
    const store = new SqliteRecordStore(join(dir, 'writer'))
    await store.open()
    try {
      assert.equal(PAGE_CACHE_SIZE, -2000)
      const writer = await SqliteWriter.start({
        file: store.path,
        synchronous: 'NORMAL',
        journalSizeLimit: 16 * 1024 * 1024,
        cacheSize: PAGE_CACHE_SIZE,
        onLost: () => {},
      })
      try {
        assert.equal(writer.cacheSize, PAGE_CACHE_SIZE)
      } finally {
        await writer.close()
      }
    } finally {
      await store.close()
    }
  })
})
