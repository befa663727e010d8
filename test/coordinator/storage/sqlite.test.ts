import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import Database from 'better-sqlite3'
import { decompress as zstdDecompress } from 'zstd-napi'
import { createRecordStore } from '../../../src/coordinator/storage/index.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/memory.js'
import { SQLITE_FILE_NAME, SqliteRecordStore } from '../../../src/coordinator/storage/sqlite.js'
import { StorageError } from '../../../src/coordinator/storage/errors.js'
import { ByteSink, decodeRecords, writeRecord } from '../../../src/log/batch.js'
import { laidOut, rec, runRecordStoreContract, show } from './contract.js'

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
  assert.equal(db.prepare('SELECT COUNT(*) AS n FROM coordinator_batches').get()?.constructor, Object)
  assert.equal(db.pragma('user_version', { simple: true }), 3)
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
  const rows = db
    .prepare('SELECT base_offset, last_offset FROM coordinator_batches WHERE shard = 0 ORDER BY base_offset')
    .all()
  assert.deepEqual(rows, [
    { base_offset: 0, last_offset: 0 },
    { base_offset: 1, last_offset: 1 },
  ])
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

test('sqlite: one row per batch, with the offsets of its records; order and tombstones kept', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir)
  await store.open()
  // 21 records, every third a tombstone.
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
  const rows = db
    .prepare(
      'SELECT shard, base_offset AS base, last_offset AS last, record_count AS n FROM coordinator_batches ORDER BY shard, base_offset',
    )
    .all()
  db.close()
  // A group commit writes a row per shard; the failed append left none and burnt no offset.
  assert.deepEqual(rows, [
    { shard: 0, base: 0, last: 20, n: 21 },
    { shard: 0, base: 21, last: 29, n: 9 },
    { shard: 1, base: 0, last: 16, n: 17 },
    { shard: 1, base: 17, last: 17, n: 1 },
  ])
})

/** Six offset-commit-sized records; `n` makes the values differ. */
function commitOf(n: number): ReturnType<typeof rec>[] {
  return Array.from({ length: 6 }, (_, i) => rec(`g/t/${n % 16}/${i}`, `offset-${n}-${'x'.repeat(40)}`))
}

function walBytes(dir: string): number {
  return statSync(join(dir, `${SQLITE_FILE_NAME}-wal`), { throwIfNoEntry: false })?.size ?? 0
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

test('sqlite: the checkpoint worker starts when the WAL first passes its threshold, not at open', async () => {
  const dir = tempDir()
  const soft = 256 * 1024
  const events: string[] = []
  const store = new SqliteRecordStore(dir, {
    walCheckpointBytes: soft,
    onCheckpoint: (e) => {
      events.push(e.kind)
    },
  })
  await store.open()
  // Loads and small appends: the WAL stays under the threshold, and no thread is started.
  for (let n = 0; n < 8; n++) await store.append(n % 4, commitOf(n))
  for (let shard = 0; shard < 4; shard++) await store.load(shard)
  assert.ok(walBytes(dir) < soft)
  assert.equal(events.length, 0, `events: ${events.join(', ')}`)
  // Past the threshold: the thread starts once, and its first round comes back.
  let n = 8
  const deadline = Date.now() + 60_000
  while (!events.includes('round-end') && Date.now() < deadline) {
    await store.append(n % 4, commitOf(n))
    n++
    await turn()
  }
  assert.equal(events[0], 'worker-start')
  assert.equal(events.filter((e) => e === 'worker-start').length, 1)
  assert.ok(events.indexOf('round-start') > 0)
  assert.ok(events.includes('round-end'), `events: ${events.join(', ')}`)
  assert.ok(!events.includes('inline'))
  await store.close()
  // A store closed before its thread ever started closes as well.
  const idle = new SqliteRecordStore(tempDir(), {
    onCheckpoint: (e) => {
      events.push(`idle ${e.kind}`)
    },
  })
  await idle.open()
  await idle.append(0, commitOf(0))
  await idle.close()
  assert.ok(!events.some((e) => e.startsWith('idle')))
})

test('sqlite: commits go on, turn after turn, while the worker checkpoints the WAL', async () => {
  const dir = tempDir()
  const soft = 256 * 1024
  const hard = 4 * 1024 * 1024
  let inRound = false
  let roundsWithTurns = 0
  let turnsInRound = 0
  let roundEnds = 0
  const inline: string[] = []
  const store = new SqliteRecordStore(dir, {
    walCheckpointBytes: soft,
    walMaxBytes: hard,
    onCheckpoint: (e) => {
      if (e.kind === 'round-start' && !e.writesHeld) {
        inRound = true
        turnsInRound = 0
      } else if (e.kind === 'round-end') {
        if (inRound && turnsInRound >= 2) roundsWithTurns++
        inRound = false
        roundEnds++
      } else if (e.kind === 'inline') {
        inline.push(e.reason)
      }
    },
  })
  await store.open()
  // Commits, one per event-loop turn, until three checkpoint rounds have each seen commits in at
  // least two turns: a checkpoint that held the event loop (or the commits) for its whole length
  // would see none. The deadline only bounds a hang.
  let n = 0
  let maxWal = 0
  const deadline = Date.now() + 120_000
  while (roundsWithTurns < 3 && Date.now() < deadline) {
    await store.append(n % 4, commitOf(n))
    n++
    if (inRound) turnsInRound++
    maxWal = Math.max(maxWal, walBytes(dir))
    await turn()
  }
  assert.ok(
    roundsWithTurns >= 3,
    `${roundsWithTurns} of ${roundEnds} rounds saw commits in 2 turns (${n} commits)`,
  )
  assert.deepEqual(inline, [], 'the event loop never checkpointed')
  // Bounded by the hard size plus what commits between two reads of the WAL's size add.
  assert.ok(maxWal <= hard + 1024 * 1024, `WAL grew to ${maxWal} bytes`)
  for (let shard = 0; shard < 4; shard++) {
    assert.equal((await store.load(shard)).length, 6 * Math.ceil((n - shard) / 4))
  }
  await store.close()
  assert.ok(!existsSync(join(dir, `${SQLITE_FILE_NAME}-wal`)), 'close copies the WAL back and removes it')
})

test('sqlite: records that tell where their bytes lie are stored from there, as their views would be', async () => {
  const dir = tempDir()
  const long = 'v'.repeat(300)
  const entries: [string, string | null][] = [
    ['g/t/0', 'offset-0'],
    ['g/t/1', null],
    ['g/t/2', ''],
    ['k'.repeat(200), long],
    ['g/t/3', 'x'.repeat(255)],
  ]
  // The store must not read `key` or `value` of these: only where their bytes lie.
  const { records: viewed } = laidOut(entries, 5)
  const blind = viewed.map((r) => ({
    bytes: r.bytes,
    offset: r.offset,
    keyLength: r.keyLength,
    valueLength: r.valueLength,
    get key(): Uint8Array {
      throw new Error('key read')
    },
    get value(): Uint8Array | null {
      throw new Error('value read')
    },
  }))
  const plain = entries.map(([k, v]) => rec(k, v))
  const store = new SqliteRecordStore(dir, { compression: 'none' })
  await store.open()
  await store.append(0, blind)
  await store.append(1, plain)
  await store.appendBatches([
    { shard: 2, records: blind },
    { shard: 3, records: plain },
  ])
  for (const shard of [0, 1, 2, 3]) assert.deepEqual(show(await store.load(shard)), entries)
  await store.close()
  const row = rowsInHex(dir, 4)
  assert.equal(row[0], row[1], 'an append stores the bytes writeRecord writes')
  assert.equal(row[2], row[3], 'a group commit too')
})

test('sqlite: records laid out in two buffers, at odd offsets and of every length mod 4, are stored as their views would be', async () => {
  const dir = tempDir()
  // Keys and values of 0 to 11 bytes (every remainder of a four-byte word), and a 300-byte value.
  const entries: [string, string | null][] = []
  for (let n = 0; n < 12; n++) entries.push([`k${'x'.repeat(n)}`, 'v'.repeat(n)])
  entries.push(['g/t/0', null], ['g/t/1', 'w'.repeat(300)])
  // Two buffers, the second a view at an odd offset of a larger one, records taken in turn.
  const first = laidOut(entries.slice(0, 7), 3).records
  const { bytes: inner } = laidOut(entries.slice(7), 1)
  const outer = new Uint8Array(inner.byteLength + 5)
  outer.set(inner, 5)
  const second = laidOut(entries.slice(7), 1).records.map((r) => ({ ...r, bytes: outer.subarray(5) }))
  const mixed = [...first.slice(0, 3), ...second.slice(0, 4), ...first.slice(3), ...second.slice(4)]
  const expected = [
    ...entries.slice(0, 3),
    ...entries.slice(7, 11),
    ...entries.slice(3, 7),
    ...entries.slice(11),
  ]
  const store = new SqliteRecordStore(dir, { compression: 'none' })
  await store.open()
  await store.append(0, mixed)
  await store.append(
    1,
    expected.map(([k, v]) => rec(k, v)),
  )
  for (const shard of [0, 1]) assert.deepEqual(show(await store.load(shard)), expected)
  await store.close()
  const row = rowsInHex(dir, 2)
  assert.equal(row[0], row[1], 'an append stores the bytes writeRecord writes')
})

/** The records blob of the one batch row of each of shards 0 … `shards`-1, in hex. */
function rowsInHex(dir: string, shards: number): string[] {
  return Array.from({ length: shards }, (_, shard) =>
    Buffer.from(shardRows<{ records: Uint8Array }>(dir, shard, 'records')[0].records).toString('hex'),
  )
}

/** The descriptors this process has open (Linux), or undefined elsewhere. */
/**
 * Files under `dir` this process holds a descriptor on (Linux /proc; undefined elsewhere). Only
 * this test's files: other descriptors of the process come and go with the tests beside it.
 */
function fdsUnder(dir: string): string[] | undefined {
  let fds: string[]
  try {
    fds = readdirSync('/proc/self/fd')
  } catch {
    return undefined
  }
  const held: string[] = []
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (target.startsWith(dir)) held.push(target)
    } catch {
      // closed meanwhile
    }
  }
  return held
}

test('sqlite: rounds with the writes flowing write the files out; the held round does not; close closes them', async () => {
  const dir = tempDir()
  const soft = 128 * 1024
  const rounds: { held: boolean; synced: boolean }[] = []
  const store = new SqliteRecordStore(dir, {
    walCheckpointBytes: soft,
    onCheckpoint: (e) => {
      if (e.kind === 'round-end') rounds.push({ held: e.writesHeld, synced: e.synced })
    },
  })
  await store.open()
  // Commits until a round has run with the writes held (the last round of a checkpoint, which
  // follows at least one with the writes flowing). The deadline only bounds a hang.
  let n = 0
  const deadline = Date.now() + 120_000
  while (!rounds.some((r) => r.held) && Date.now() < deadline) {
    await store.append(n % 4, commitOf(n))
    n++
    await turn()
  }
  const held = rounds.filter((r) => r.held)
  const flowing = rounds.filter((r) => !r.held)
  assert.ok(held.length > 0 && flowing.length > 0, `rounds: ${JSON.stringify(rounds)}`)
  assert.ok(
    flowing.every((r) => r.synced),
    `every round with the writes flowing wrote the files out: ${JSON.stringify(rounds)}`,
  )
  assert.ok(
    held.every((r) => !r.synced),
    `a held round leaves the fsyncs to SQLite: ${JSON.stringify(rounds)}`,
  )
  for (let shard = 0; shard < 4; shard++) {
    assert.equal((await store.load(shard)).length, 6 * Math.ceil((n - shard) / 4))
  }
  await store.close()
  const left = fdsUnder(realpathSync(dir))
  if (left !== undefined) assert.deepEqual(left, [], 'close closed every descriptor it opened')
})

test('sqlite: past the WAL size bound, writes wait for the checkpoint and the WAL starts over', async () => {
  const dir = tempDir()
  const soft = 128 * 1024
  const hard = 512 * 1024
  const events: string[] = []
  const store = new SqliteRecordStore(dir, {
    walCheckpointBytes: soft,
    walMaxBytes: hard,
    onCheckpoint: (e) => events.push(e.kind),
  })
  await store.open()
  // A checkpoint that does not come: the writes must stop growing the WAL.
  store.pauseCheckpoints(true)
  // Appends until one finds the writes held (the store is told of every commit before its append
  // settles); that one waits.
  let n = 0
  while (!events.includes('writes-held') && n < 10_000) await store.append(0, commitOf(n++))
  assert.ok(events.includes('writes-held'))
  let done = false
  const pending = store.append(0, commitOf(n++)).then(() => {
    done = true
  })
  for (let i = 0; i < 20; i++) await turn()
  assert.equal(done, false, 'an append waited')
  const held = walBytes(dir)
  assert.ok(held > hard && held <= hard + 1024 * 1024, `WAL at ${held} bytes when writes were held`)
  // Whatever comes next waits behind it, in order, and the WAL does not grow.
  let settled = 0
  const later = [store.append(0, commitOf(n++)), store.append(1, commitOf(n++))].map((p) =>
    p.then(() => settled++),
  )
  const loaded = store.load(0)
  for (let i = 0; i < 20; i++) await turn()
  assert.equal(settled, 0)
  assert.equal(walBytes(dir), held)

  store.pauseCheckpoints(false)
  await pending
  await Promise.all(later)
  assert.equal(settled, 2)
  assert.equal((await loaded).length, 6 * (n - 1), 'the load saw every append made before it')
  assert.ok(events.includes('writes-released'))
  // The write that followed the checkpoint started the WAL over; its file is cut back to the soft size.
  assert.ok(walBytes(dir) <= soft, `WAL at ${walBytes(dir)} bytes after the checkpoint`)
  await store.close()
})

test('sqlite: when the checkpoint worker dies, the event loop checkpoints and the WAL stays bounded', async () => {
  const dir = tempDir()
  const soft = 128 * 1024
  const hard = 512 * 1024
  const inline: string[] = []
  const store = new SqliteRecordStore(dir, {
    walCheckpointBytes: soft,
    walMaxBytes: hard,
    onCheckpoint: (e) => {
      if (e.kind === 'inline') inline.push(e.reason)
    },
  })
  await store.open()
  await store.killCheckpointWorker()
  let maxWal = 0
  for (let n = 0; n < 400; n++) {
    await store.append(n % 3, commitOf(n))
    maxWal = Math.max(maxWal, walBytes(dir))
  }
  assert.ok(inline.length > 0, 'the event loop checkpointed')
  assert.ok(maxWal <= soft + 512 * 1024, `WAL grew to ${maxWal} bytes`)
  assert.equal((await store.load(0)).length, 6 * 134)
  await store.close()
})

test('sqlite: appends of every size keep their order, across a reopen', async () => {
  const dir = tempDir()
  const records = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => rec(`k${from + i}`, `v${from + i}`))
  let store = new SqliteRecordStore(dir)
  await store.open()
  const sizes = [64 * 2 + 8 + 3, 64, 63, 1, 200]
  const expected: [string, string | null][] = []
  let next = 0
  for (const n of sizes.slice(0, 3)) {
    await store.append(2, records(next, n))
    expected.push(...show(records(next, n)))
    next += n
  }
  await store.close()
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

/** `columns` of every row of a shard, in offset order, straight from the file. */
function shardRows<T>(dir: string, shard: number, columns: string): T[] {
  const db = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true })
  try {
    return db
      .prepare(`SELECT ${columns} FROM coordinator_batches WHERE shard = ? ORDER BY base_offset`)
      .all(shard) as T[]
  } finally {
    db.close()
  }
}

/** The rows of a shard as (base offset, last offset, records), straight from the file. */
function batchRows(dir: string, shard: number): { base: number; last: number; n: number }[] {
  return shardRows(dir, shard, 'base_offset AS base, last_offset AS last, record_count AS n')
}

/** Each row of a shard as stored: its record count, codec (`attributes`) and BLOB length. */
function storedRows(dir: string, shard: number): { n: number; attributes: number; bytes: number }[] {
  return shardRows(dir, shard, 'record_count AS n, attributes, length(records) AS bytes')
}

/** Every record's offset in a shard (its row's base offset plus its offset delta), from the file. */
function recordOffsets(dir: string, shard: number): number[] {
  const rows = shardRows<{ base: number; n: number; attributes: number; records: Buffer }>(
    dir,
    shard,
    'base_offset AS base, record_count AS n, attributes, records',
  )
  return rows.flatMap((r) =>
    decodeRecords(r.attributes === 4 ? zstdDecompress(r.records) : r.records, r.n).map(
      (x) => r.base + x.offsetDelta,
    ),
  )
}

test('sqlite: a file of schema version 1 (a row per record) is migrated at open; every record loads, in order', async () => {
  const dir = tempDir()
  // The file as the previous version wrote it: its statements, its pragmas, its offsets (with the
  // gaps its compaction left).
  const old = new Database(join(dir, SQLITE_FILE_NAME))
  old.pragma('journal_mode = WAL')
  old.exec(`
    CREATE TABLE IF NOT EXISTS coordinator_records (
      shard INTEGER NOT NULL,
      offset INTEGER NOT NULL,
      key BLOB NOT NULL,
      value BLOB,
      PRIMARY KEY (shard, offset)
    ) WITHOUT ROWID;
    PRAGMA user_version = 1;
  `)
  const insert = old.prepare(
    'INSERT INTO coordinator_records (shard, offset, key, value) VALUES (?, ?, ?, ?)',
  )
  const written = new Map<number, { offset: number; key: Uint8Array; value: Uint8Array | null }[]>()
  const put = (shard: number, offset: number, r: ReturnType<typeof rec>) => {
    insert.run(shard, offset, r.key, r.value)
    written.set(shard, [...(written.get(shard) ?? []), { offset, ...r }])
  }
  const big = new Uint8Array(1536 * 1024).map((_, i) => (i * 13) & 0xff)
  old.transaction(() => {
    // More records than one migrated row and one page of the migration's reads take, with gaps,
    // tombstones and empty values.
    for (let offset = 0; offset < 9000; offset++) {
      if (offset % 7 === 3) continue
      put(
        0,
        offset,
        rec(`k${offset % 500}`, offset % 11 === 0 ? null : offset % 13 === 0 ? '' : `v${offset}`),
      )
    }
    // A value past the migrated row's byte bound, between small ones.
    put(1, 0, rec('a', '1'))
    put(1, 1, { key: new TextEncoder().encode('big'), value: big })
    put(1, 2, rec('b', '2'))
    put(7, 41, rec('only', 'one'))
    put(2147483647, 3, rec('catalog', 'x'))
  })()
  old.close()

  let store = new SqliteRecordStore(dir)
  await store.open()
  for (const [shard, records] of written) {
    const loaded = await store.load(shard)
    assert.equal(loaded.length, records.length, `shard ${shard}`)
    for (let i = 0; i < records.length; i++) {
      assert.deepEqual(new Uint8Array(loaded[i].key), records[i].key, `shard ${shard}, record ${i}`)
      assert.deepEqual(
        loaded[i].value === null ? null : new Uint8Array(loaded[i].value as Uint8Array),
        records[i].value === null ? null : new Uint8Array(records[i].value as Uint8Array),
        `shard ${shard}, record ${i}`,
      )
    }
  }
  // New records come after the migrated ones, also after a reopen.
  await store.append(0, [rec('new', '1')])
  await store.append(7, [rec('new', '2')])
  await store.close()
  store = new SqliteRecordStore(dir)
  await store.open()
  assert.deepEqual(show(await store.load(7)), [
    ['only', 'one'],
    ['new', '2'],
  ])
  assert.deepEqual(show(await store.load(0)).at(-1), ['new', '1'])
  assert.equal((await store.load(0)).length, (written.get(0)?.length ?? 0) + 1)
  await store.close()

  // Every record kept its offset; the old table is gone and the file has the new version.
  for (const [shard, records] of written) {
    const offsets = recordOffsets(dir, shard)
    assert.deepEqual(
      offsets.slice(0, records.length),
      records.map((r) => r.offset),
      `offsets of shard ${shard}`,
    )
  }
  assert.deepEqual(recordOffsets(dir, 7), [41, 42])
  assert.ok(batchRows(dir, 0).length >= 3, 'shard 0 in several rows')
  assert.deepEqual(
    batchRows(dir, 1).map((r) => r.n),
    [2, 1],
    'a row closed after the large value',
  )
  const db = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true })
  assert.equal(db.pragma('user_version', { simple: true }), 3)
  assert.equal(
    db.prepare("SELECT name FROM sqlite_master WHERE name = 'coordinator_records'").get(),
    undefined,
  )
  db.close()
})

test('sqlite: compaction rewrites a batch without its dropped records; kept records keep their offsets', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir)
  await store.open()
  await store.append(0, [rec('a', '1'), rec('b', '1'), rec('c', '1')])
  await store.append(0, [rec('a', '2'), rec('b', null)])
  await store.append(0, [rec('d', '1')])
  await store.append(3, [rec('x', '1')])
  await store.compact(0)
  assert.deepEqual(show(await store.load(0)), [
    ['c', '1'],
    ['a', '2'],
    ['d', '1'],
  ])
  assert.deepEqual(batchRows(dir, 0), [
    { base: 0, last: 2, n: 1 },
    { base: 3, last: 4, n: 1 },
    { base: 5, last: 5, n: 1 },
  ])
  assert.deepEqual(recordOffsets(dir, 0), [2, 3, 5])
  // A batch whose records were all dropped goes; appends go on after the last offset written.
  await store.append(0, [rec('d', null), rec('c', null)])
  await store.compact(0)
  assert.deepEqual(show(await store.load(0)), [['a', '2']])
  assert.deepEqual(batchRows(dir, 0), [{ base: 3, last: 4, n: 1 }])
  await store.append(0, [rec('e', '1')])
  assert.deepEqual(recordOffsets(dir, 0), [3, 8])
  await store.compact(0)
  assert.deepEqual(show(await store.load(0)), [
    ['a', '2'],
    ['e', '1'],
  ])
  assert.deepEqual(show(await store.load(3)), [['x', '1']])
  await store.close()
})

test('sqlite: a batch row that does not decode fails the load with STORAGE_READ_FAILED', async () => {
  const dir = tempDir()
  let store = new SqliteRecordStore(dir)
  await store.open()
  await store.append(0, [rec('a', '1'), rec('b', '2')])
  await store.close()
  const db = new Database(join(dir, SQLITE_FILE_NAME))
  db.prepare('UPDATE coordinator_batches SET records = ? WHERE shard = 0').run(Buffer.from([0x7f, 0x01]))
  db.close()
  store = new SqliteRecordStore(dir)
  await store.open()
  await assert.rejects(
    store.load(0),
    (e: unknown) => e instanceof StorageError && e.code === 'STORAGE_READ_FAILED',
  )
  await store.close()
})

runRecordStoreContract('sqlite (writes in a worker thread)', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir, { writeThread: true })
  await store.open()
  return {
    store,
    reopen: async () => {
      const s = new SqliteRecordStore(dir, { writeThread: true })
      await s.open()
      return s
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
})

test('sqlite: appends commit in the writer thread; the event loop turns while one waits for a lock', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir, { writeThread: true })
  await store.open()
  assert.equal(store.writesOnThread, true)
  await store.append(0, [rec('a', '1')])
  // Another connection holds the write lock: the writer thread waits for it, not the event loop.
  const other = new Database(join(dir, SQLITE_FILE_NAME))
  other.exec('BEGIN IMMEDIATE')
  const settled: string[] = []
  const first = store.append(0, [rec('b', '1')]).then(() => settled.push('b'))
  const second = store
    .appendBatches([
      { shard: 0, records: [rec('c', '1')] },
      { shard: 1, records: [rec('x', '1')] },
    ])
    .then(() => settled.push('c'))
  // A load waits for the writes in flight; an append after it waits behind the load.
  const loaded = store.load(0).then((records) => {
    settled.push('load')
    return records
  })
  const third = store.append(0, [rec('d', '1')]).then(() => settled.push('d'))
  for (let i = 0; i < 20; i++) await turn()
  assert.deepEqual(settled, [], 'nothing settled while the lock was held')
  other.exec('ROLLBACK')
  other.close()
  await Promise.all([first, second, third])
  // The first write's answer comes first; the second's and the load settle in one turn; the append
  // made after the load comes last.
  assert.equal(settled[0], 'b')
  assert.deepEqual([...settled.slice(1, 3)].sort(), ['c', 'load'])
  assert.equal(settled[3], 'd')
  assert.deepEqual(show(await loaded), [
    ['a', '1'],
    ['b', '1'],
    ['c', '1'],
  ])
  assert.deepEqual(recordOffsets(dir, 0), [0, 1, 2, 3])
  assert.deepEqual(recordOffsets(dir, 1), [0])
  await store.close()
})

test('sqlite: in the writer thread a failed write fails exactly its operations and burns no offset', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir, { writeThread: true })
  await store.open()
  const injected = new Error('the disk is full')
  store.failNextAppend(injected)
  // Both posted before either is answered: the failure belongs to the first.
  const failed = store.append(0, [rec('a', '1'), rec('b', '1')])
  const written = store.appendBatches([
    { shard: 0, records: [rec('c', '1')] },
    { shard: 1, records: [rec('x', '1')] },
  ])
  await assert.rejects(failed, (e: unknown) => e === injected)
  await written
  assert.deepEqual(show(await store.load(0)), [['c', '1']])
  assert.deepEqual(show(await store.load(1)), [['x', '1']])
  assert.deepEqual(batchRows(dir, 0), [{ base: 0, last: 0, n: 1 }])
  await store.close()
})

test('sqlite: when the writer thread dies, appends commit on the event loop at the right offsets', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir, { writeThread: true })
  await store.open()
  await store.append(0, [rec('a', '1'), rec('b', '1')])
  await store.append(2, [rec('x', '1')])
  await store.killWriterThread()
  assert.equal(store.writesOnThread, false)
  await store.append(0, [rec('c', '1')])
  await store.appendBatches([
    { shard: 2, records: [rec('y', '1')] },
    { shard: 3, records: [rec('z', '1')] },
  ])
  assert.deepEqual(recordOffsets(dir, 0), [0, 1, 2])
  assert.deepEqual(recordOffsets(dir, 2), [0, 1])
  await store.close()
  const reopened = new SqliteRecordStore(dir, { writeThread: true })
  await reopened.open()
  assert.deepEqual(show(await reopened.load(0)), [
    ['a', '1'],
    ['b', '1'],
    ['c', '1'],
  ])
  assert.deepEqual(show(await reopened.load(3)), [['z', '1']])
  await reopened.close()
})

test('sqlite: a stored record with headers loads as readRecord reads it; a malformed one fails the load', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir)
  await store.open()
  await store.append(0, [rec('k0', 'v0')])
  await store.close()
  const enc = new TextEncoder()
  const sink = new ByteSink()
  writeRecord(sink, {
    timestampDelta: 0,
    offsetDelta: 0,
    key: enc.encode('k1'),
    value: enc.encode('v1'),
    headers: [{ key: 'h', value: enc.encode('x') }],
  })
  writeRecord(sink, { timestampDelta: 0, offsetDelta: 1, key: enc.encode('k2'), value: null })
  const withHeaders = sink.finish().slice()
  const noKey = new ByteSink()
  writeRecord(noKey, { timestampDelta: 0, offsetDelta: 0, key: null, value: enc.encode('v') })
  const noKeyBytes = noKey.finish().slice()
  const db = new Database(join(dir, SQLITE_FILE_NAME))
  const insert = db.prepare(
    'INSERT INTO coordinator_batches (shard, base_offset, last_offset, record_count, records) VALUES (?, ?, ?, ?, ?)',
  )
  insert.run(1, 0, 1, 2, withHeaders)
  insert.run(2, 0, 0, 1, noKeyBytes)
  // Bytes after the last record, and a record cut short.
  insert.run(3, 0, 0, 1, Buffer.concat([withHeaders, Buffer.from([0])]))
  insert.run(4, 0, 1, 2, withHeaders.subarray(0, withHeaders.length - 1))
  db.close()
  const s = new SqliteRecordStore(dir)
  await s.open()
  try {
    assert.deepEqual(show(await s.load(0)), show([rec('k0', 'v0')]))
    assert.deepEqual(show(await s.load(1)), show([rec('k1', 'v1'), rec('k2', null)]))
    await assert.rejects(
      s.load(2),
      (e: StorageError) => e.code === 'STORAGE_READ_FAILED' && /without a key/.test(e.message),
    )
    await assert.rejects(
      s.load(3),
      (e: StorageError) => e.code === 'STORAGE_READ_FAILED' && /after the last record/.test(e.message),
    )
    await assert.rejects(
      s.load(4),
      (e: StorageError) => e.code === 'STORAGE_READ_FAILED' && /record payload reached EOF/.test(e.message),
    )
  } finally {
    await s.close()
  }
})

/** `n` records of an offset commit's sizes, keys repeating as a group's partitions do. */
function commitRecords(n: number, from = 0): ReturnType<typeof rec>[] {
  return Array.from({ length: n }, (_, i) =>
    rec(`group/topic/${(from + i) % 20}`, `offset-${from + i}-metadata-${'='.repeat(32)}`),
  )
}

test('sqlite: a row of 512 bytes or more is stored compressed with zstd; it loads, compacts and reopens', async () => {
  const dir = tempDir()
  let store = new SqliteRecordStore(dir)
  await store.open()
  const large = commitRecords(40)
  const small = [rec('a', '1'), rec('b', null)]
  await store.append(0, large)
  await store.append(0, small)
  await store.appendBatches([
    { shard: 0, records: commitRecords(30, 40) },
    { shard: 1, records: commitRecords(25) },
  ])
  const rows = storedRows(dir, 0)
  assert.deepEqual(
    rows.map((r) => [r.n, r.attributes]),
    [
      [40, 4],
      [2, 0],
      [30, 4],
    ],
  )
  // Compressed rows are smaller than their records (each record here takes over 50 bytes).
  assert.ok(rows[0].bytes < 40 * 50, `${rows[0].bytes} bytes`)
  assert.deepEqual(
    storedRows(dir, 1).map((r) => r.attributes),
    [4],
  )
  assert.deepEqual(show(await store.load(0)), show([...large, ...small, ...commitRecords(30, 40)]))
  assert.deepEqual(
    recordOffsets(dir, 0),
    Array.from({ length: 72 }, (_, i) => i),
  )
  // Compaction keeps the last record of each of the 20 keys (and `a`), each at its offset.
  await store.compact(0)
  const kept = [rec('a', '1'), ...commitRecords(20, 50)]
  assert.deepEqual(show(await store.load(0)), show(kept))
  assert.deepEqual(recordOffsets(dir, 0), [40, ...Array.from({ length: 20 }, (_, i) => 52 + i)])
  assert.deepEqual(
    storedRows(dir, 0).map((r) => [r.n, r.attributes]),
    [
      [1, 0],
      [20, 4],
    ],
  )
  await store.close()
  // A store that does not compress reads the compressed rows, and writes rows as they are.
  store = new SqliteRecordStore(dir, { compression: 'none' })
  await store.open()
  await store.append(0, commitRecords(40, 100))
  assert.deepEqual(show(await store.load(0)), show([...kept, ...commitRecords(40, 100)]))
  assert.deepEqual(
    storedRows(dir, 0).map((r) => r.attributes),
    [0, 4, 0],
  )
  await store.close()
  store = new SqliteRecordStore(dir)
  await store.open()
  assert.deepEqual(show(await store.load(0)), show([...kept, ...commitRecords(40, 100)]))
  assert.deepEqual(show(await store.load(1)), show(commitRecords(25)))
  await store.close()
  assert.throws(
    () => new SqliteRecordStore(dir, { compression: 'gzip' as 'zstd' }),
    (e: unknown) => e instanceof StorageError && e.code === 'STORAGE_INVALID_ARGUMENT',
  )
})

test('sqlite: the writer thread stores rows compressed as the event loop does', async () => {
  const dir = tempDir()
  const store = new SqliteRecordStore(dir, { writeThread: true })
  await store.open()
  assert.equal(store.writesOnThread, true)
  await store.appendBatches([
    { shard: 0, records: commitRecords(40) },
    { shard: 1, records: [rec('a', '1')] },
    { shard: 0, records: commitRecords(30, 40) },
  ])
  assert.deepEqual(
    storedRows(dir, 0).map((r) => [r.n, r.attributes]),
    [
      [40, 4],
      [30, 4],
    ],
  )
  assert.deepEqual(
    storedRows(dir, 1).map((r) => [r.n, r.attributes]),
    [[1, 0]],
  )
  assert.deepEqual(show(await store.load(0)), show(commitRecords(70)))
  assert.deepEqual(show(await store.load(1)), [['a', '1']])
  await store.close()
})

test('sqlite: a file of schema version 2 (rows without attributes) is migrated at open', async () => {
  const dir = tempDir()
  // The file as the previous version wrote it: a row of records as they are, no `attributes`
  // column, version 2.
  const written = commitRecords(40)
  const first = new SqliteRecordStore(dir, { compression: 'none' })
  await first.open()
  await first.append(0, written)
  await first.close()
  const old = new Database(join(dir, SQLITE_FILE_NAME))
  old.exec('ALTER TABLE coordinator_batches DROP COLUMN attributes; PRAGMA user_version = 2;')
  const columns = old.prepare<[], { name: string }>('PRAGMA table_info(coordinator_batches)').all()
  assert.deepEqual(
    columns.map((c) => c.name),
    ['shard', 'base_offset', 'last_offset', 'record_count', 'records'],
  )
  old.close()

  const store = new SqliteRecordStore(dir)
  await store.open()
  assert.deepEqual(show(await store.load(0)), show(written))
  await store.append(0, commitRecords(40, 40))
  assert.deepEqual(show(await store.load(0)), show(commitRecords(80)))
  await store.close()
  assert.deepEqual(
    storedRows(dir, 0).map((r) => [r.n, r.attributes]),
    [
      [40, 0],
      [40, 4],
    ],
  )
  assert.deepEqual(
    recordOffsets(dir, 0),
    Array.from({ length: 80 }, (_, i) => i),
  )
  assert.deepEqual(shardRows(dir, 0, 'COUNT(*) AS n'), [{ n: 2 }])
  const version = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true })
  assert.equal(version.pragma('user_version', { simple: true }), 3)
  version.close()
})

test('sqlite: a compressed row that does not decompress, or an unknown codec, fails the load', async () => {
  const dir = tempDir()
  let store = new SqliteRecordStore(dir)
  await store.open()
  await store.append(0, commitRecords(40))
  await store.append(1, commitRecords(40))
  await store.append(2, [rec('a', '1')])
  await store.close()
  const db = new Database(join(dir, SQLITE_FILE_NAME))
  // A zstd frame cut short; rows whose attributes name gzip, or bits besides a codec.
  db.prepare('UPDATE coordinator_batches SET records = substr(records, 1, 20) WHERE shard = 0').run()
  db.prepare('UPDATE coordinator_batches SET attributes = 1 WHERE shard = 1').run()
  db.prepare('UPDATE coordinator_batches SET attributes = 16 WHERE shard = 2').run()
  db.close()
  store = new SqliteRecordStore(dir)
  await store.open()
  try {
    await assert.rejects(
      store.load(0),
      (e: StorageError) => e.code === 'STORAGE_READ_FAILED' && /does not decompress/.test(e.message),
    )
    for (const shard of [1, 2]) {
      await assert.rejects(
        store.load(shard),
        (e: StorageError) => e.code === 'STORAGE_READ_FAILED' && /with attributes/.test(e.message),
      )
    }
  } finally {
    await store.close()
  }
})
