// The store's connections bound their page caches. better-sqlite3 builds SQLite with a page cache of
// up to 16,000 KiB a connection, and the connection that appends keeps every page its appends
// create, so a store that set no `cache_size` grew its native memory with its database, about 15 MB
// over the 30,000 appends below (the soak's growing native heap, RELIABILITY.md "Soak"). With the
// store's setting (2,000 KiB) it stays under 1 MB. (The SQLite plugin's test is in a file of its own:
// memory this process freed would hide a cache's growth.)
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { SqliteRecordStore } from '../../../src/coordinator/storage/sqlite.js'
import type { CoordinatorRecord } from '../../../src/coordinator/storage/types.js'
import { nativeAnonymousKiB } from '../../helpers/native-memory.js'

const dir = mkdtempSync(join(tmpdir(), 'topograph-page-cache-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** Growth allowed past the warm-up: the bound's 2 MB and room for the allocator's own. */
const LIMIT_KIB = 6 * 1024

/** 20 records of offset-commit size, each append's values different so rows do not compress away. */
function batch(n: number): CoordinatorRecord[] {
  return Array.from({ length: 20 }, (_, p) => ({
    key: new Uint8Array(Buffer.from(`\u0000\u0001\u0000\u000cgroup-${n % 1000}\u0000\u0007topic-${p}`)),
    value: new Uint8Array(60).map((_, i) => (i * 7 + n * 13 + p) & 255),
  }))
}

/** Native memory grown over `appends` appends made after a warm-up of 10,000, in KiB. */
async function growth(store: SqliteRecordStore, appends: number): Promise<number> {
  let n = 0
  for (; n < 10_000; n++) await store.append(n % 8, batch(n))
  const before = nativeAnonymousKiB()
  for (; n < 10_000 + appends; n++) await store.append(n % 8, batch(n))
  return nativeAnonymousKiB() - before
}

describe('SQLite page caches', () => {
  for (const writeThread of [false, true]) {
    test(`appends ${writeThread ? 'on the writer thread' : 'on the event loop'} keep the page cache bounded`, async () => {
      const store = new SqliteRecordStore(join(dir, `store-${writeThread}`), { writeThread })
      await store.open()
      try {
        assert.equal(store.writesOnThread, writeThread)
        const kib = await growth(store, 30_000)
        assert.ok(kib < LIMIT_KIB, `native memory grew ${kib} KiB over 30,000 appends (limit ${LIMIT_KIB})`)
      } finally {
        await store.close()
      }
    })
  }
})
