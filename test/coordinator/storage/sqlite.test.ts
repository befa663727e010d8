import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import Database from 'better-sqlite3'
import { createRecordStore } from '../../../src/coordinator/storage/index.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/memory.js'
import { SQLITE_FILE_NAME, SqliteRecordStore } from '../../../src/coordinator/storage/sqlite.js'
import { StorageError } from '../../../src/coordinator/storage/errors.js'
import { rec, runRecordStoreContract, show } from './contract.js'

const dirs: string[] = []
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'topograph-sqlite-'))
  dirs.push(d)
  return d
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

runRecordStoreContract('sqlite', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir)
  await store.open()
  return {
    store,
    reopen: async () => {
      const s = new SqliteRecordStore(dir)
      await s.open()
      return s
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
})

runRecordStoreContract('sqlite (synchronous=full)', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir, { synchronous: 'full' })
  await store.open()
  return {
    store,
    reopen: async () => {
      const s = new SqliteRecordStore(dir, { synchronous: 'full' })
      await s.open()
      return s
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
})

test('sqlite: one WAL-mode file named coordinator.db in data.dir, created with missing parents', async () => {
  const dir = join(tempDir(), 'nested', 'data')
  const store = new SqliteRecordStore(dir)
  await store.open()
  await store.append(0, [rec('a', '1')])
  assert.equal(store.path, join(dir, SQLITE_FILE_NAME))
  assert.ok(existsSync(join(dir, 'coordinator.db')))
  await store.close()
  const db = new Database(join(dir, 'coordinator.db'), { readonly: true })
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  assert.equal(db.prepare('SELECT COUNT(*) AS n FROM coordinator_records').get()?.constructor, Object)
  db.close()
})

test('sqlite: a second store on the same data.dir fails at once with a clear error', async () => {
  const dir = tempDir()
  const first = new SqliteRecordStore(dir)
  await first.open()
  const second = new SqliteRecordStore(dir)
  const started = Date.now()
  await assert.rejects(second.open(), (e: unknown) => {
    assert.ok(e instanceof StorageError)
    assert.equal(e.code, 'STORAGE_OPEN_FAILED')
    assert.match(e.message, /locked: another process is using data\.dir/)
    return true
  })
  assert.ok(Date.now() - started < 2000)
  await first.close()
  await second.open() // the lock went away with the first store
  await second.close()
})

test('sqlite: a file written by a newer schema version is refused', async () => {
  const dir = tempDir()
  const db = new Database(join(dir, SQLITE_FILE_NAME))
  db.pragma('user_version = 99')
  db.close()
  const store = new SqliteRecordStore(dir)
  await assert.rejects(store.open(), /schema version 99, newer than/)
})

test('sqlite: a data.dir that cannot be created is reported, not thrown raw', async () => {
  const dir = tempDir()
  const file = join(dir, 'file')
  const store = new SqliteRecordStore(dir)
  await store.open()
  await store.close()
  // A path below the database file cannot be a directory.
  const bad = new SqliteRecordStore(join(dir, SQLITE_FILE_NAME, 'sub'))
  await assert.rejects(
    bad.open(),
    (e: unknown) => e instanceof StorageError && e.code === 'STORAGE_OPEN_FAILED',
  )
  assert.throws(() => new SqliteRecordStore(''), /non-empty path/)
  assert.ok(!existsSync(file))
})

test('sqlite: a failed transaction does not burn offsets or reorder later appends', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir)
  await store.open()
  await store.append(0, [rec('a', '1')])
  store.failNextAppend()
  await assert.rejects(store.append(0, [rec('b', '1'), rec('c', '1')]))
  await store.append(0, [rec('d', '1')])
  await store.close()
  const db = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true })
  const rows = db.prepare('SELECT offset FROM coordinator_records WHERE shard = 0 ORDER BY offset').all()
  assert.deepEqual(rows, [{ offset: 0 }, { offset: 1 }])
  db.close()
})

test('createRecordStore builds either engine and rejects unknown kinds', async () => {
  const dir = tempDir()
  const s = createRecordStore('sqlite', dir)
  assert.ok(s instanceof SqliteRecordStore)
  await s.open()
  await s.append(0, [rec('a', '1')])
  assert.deepEqual(show(await s.load(0)), [['a', '1']])
  await s.close()
  assert.ok(createRecordStore('memory', dir) instanceof MemoryRecordStore)
  assert.throws(
    () => createRecordStore('postgres' as 'memory', dir),
    /coordinator.storage must be 'sqlite', 'memory' or a postgres:\/\/ URL, got "postgres"/,
  )
})

test('sqlite: batches inserted 8 rows a statement keep their order, offsets and tombstones', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir)
  await store.open()
  // 21 records: two statements of 8 rows, then 5 alone; every third a tombstone.
  const batch = Array.from({ length: 21 }, (_, i) => rec(`k${i}`, i % 3 === 2 ? null : `v${i}`))
  await store.append(0, batch)
  // A group commit of 9 and 17 records on two shards, after the 21 on shard 0.
  const nine = Array.from({ length: 9 }, (_, i) => rec(`a${i}`, `x${i}`))
  const seventeen = Array.from({ length: 17 }, (_, i) => rec(`b${i}`, `y${i}`))
  await store.appendBatches([
    { shard: 0, records: nine },
    { shard: 1, records: seventeen },
  ])
  // A failed batch of 16 leaves nothing and burns no offsets.
  store.failNextAppend()
  await assert.rejects(
    store.append(
      1,
      Array.from({ length: 16 }, (_, i) => rec(`z${i}`, 'z')),
    ),
    {
      code: 'STORAGE_INJECTED_FAILURE',
    },
  )
  await store.append(1, [rec('last', '1')])
  assert.deepEqual(show(await store.load(0)), show([...batch, ...nine]))
  assert.deepEqual(show(await store.load(1)), show([...seventeen, rec('last', '1')]))
  await store.close()
  const db = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true })
  const offsets = db
    .prepare('SELECT shard, offset FROM coordinator_records ORDER BY shard, offset')
    .all() as {
    shard: number
    offset: number
  }[]
  db.close()
  assert.deepEqual(
    offsets.filter((r) => r.shard === 0).map((r) => r.offset),
    Array.from({ length: 30 }, (_, i) => i),
  )
  assert.deepEqual(
    offsets.filter((r) => r.shard === 1).map((r) => r.offset),
    Array.from({ length: 18 }, (_, i) => i),
  )
})

test('sqlite: appends of every size keep their order, across wide and narrow inserts and a reopen', async () => {
  const dir = tempDir()
  const records = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => rec(`k${from + i}`, `v${from + i}`))
  let store = new SqliteRecordStore(dir)
  await store.open()
  // 64-row statements, then 8-row ones, then single rows; then a batch of exactly 64 and of 63.
  const sizes = [64 * 2 + 8 + 3, 64, 63, 1, 200]
  const expected: [string, string | null][] = []
  let next = 0
  for (const n of sizes.slice(0, 3)) {
    await store.append(2, records(next, n))
    expected.push(...show(records(next, n)))
    next += n
  }
  await store.close()
  // The wide statement belongs to the database it was prepared on: a reopened store prepares its own.
  store = new SqliteRecordStore(dir)
  await store.open()
  for (const n of sizes.slice(3)) {
    await store.appendBatches([
      { shard: 2, records: records(next, n) },
      { shard: 5, records: records(next, n) },
    ])
    expected.push(...show(records(next, n)))
    next += n
  }
  assert.deepEqual(show(await store.load(2)), expected)
  assert.equal((await store.load(5)).length, 201)
  await store.close()
})
