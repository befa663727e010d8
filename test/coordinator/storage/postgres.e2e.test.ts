// The PostgreSQL record store: the contract suite, then what only a database engine has (a pool
// shared by shards, the lock of one server per store, fencing of a server that lost it, lost
// connections). Every store lives in a schema of its own (search_path through the URL's `options`),
// so test files running at the same time never meet.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import pg from 'pg'
import { CoordinatorWriteError } from '../../../src/coordinator/runtime/errors.js'
import { CoordinatorRuntime } from '../../../src/coordinator/runtime/runtime.js'
import { StorageError } from '../../../src/coordinator/storage/errors.js'
import { createRecordStore } from '../../../src/coordinator/storage/index.js'
import {
  POSTGRES_LOCK_CLASS,
  POSTGRES_META_TABLE,
  POSTGRES_RECORDS_TABLE,
  PostgresRecordStore,
  type PostgresRecordStoreOptions,
  redactPostgresUrl,
} from '../../../src/coordinator/storage/postgres.js'
import { incr, type KvRecord, KvShard, kvSerde } from '../runtime/fake-shard.js'
import {
  createTestSchema,
  dropTestSchema,
  PG_URL,
  requirePostgres,
  type TestSchema,
  withPgClient,
} from '../../testkit/postgres.js'
import { rec, runRecordStoreContract, show } from './contract.js'

const base = PG_URL

const schemas: string[] = []

async function freshSchema(options: { readonly password?: string } = {}): Promise<TestSchema> {
  const t = await createTestSchema('tg_store_', options)
  schemas.push(t.schema)
  return t
}

/** Every store a test made, closed after the file whatever happened (an open pool keeps it running). */
const stores: PostgresRecordStore[] = []

function newStore(url: string, options: PostgresRecordStoreOptions = {}): PostgresRecordStore {
  const s = new PostgresRecordStore(url, options)
  stores.push(s)
  return s
}

async function openStore(
  url: string,
  options: PostgresRecordStoreOptions = {},
): Promise<PostgresRecordStore> {
  const s = newStore(url, options)
  await s.open()
  return s
}

/** Ends every backend of one store (its pool and its lock connection); returns how many. */
async function terminateBackends(app: string, where = 'true'): Promise<number> {
  return withPgClient(async (c) => {
    const r = await c.query<{ ok: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
       WHERE application_name = $1 AND pid <> pg_backend_pid() AND ${where}`,
      [app],
    )
    return r.rows.filter((x) => x.ok).length
  })
}

/** The backend holding a schema's store lock, or undefined. */
async function lockHolder(schema: string): Promise<number | undefined> {
  return withPgClient(async (c) => {
    const r = await c.query<{ pid: number }>(
      `SELECT l.pid FROM pg_locks l
       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
         AND l.classid = $1::bigint::oid AND l.objid = $2::regclass::oid`,
      [POSTGRES_LOCK_CLASS, `${schema}.${POSTGRES_RECORDS_TABLE}`],
    )
    return r.rows[0]?.pid
  })
}

async function until(what: string, f: () => Promise<boolean>, attempts = 200): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await f()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  assert.fail(`${what} did not happen`)
}

function isStorageError(code: string, message?: RegExp): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof StorageError, `expected a StorageError, got ${String(e)}`)
    assert.equal(e.code, code, e.message)
    if (message !== undefined) assert.match(e.message, message)
    return true
  }
}

function recordingLogger(): { logger: PostgresRecordStoreOptions['logger']; lines: string[] } {
  const lines: string[] = []
  const log = (_obj: object, msg: string) => {
    lines.push(msg)
  }
  return { logger: { info: log, warn: log, error: log }, lines }
}

test('createRecordStore builds the PostgreSQL engine from a postgres:// or postgresql:// URL', () => {
  for (const url of ['postgres://u:pw@db:5432/topograph', 'postgresql://u@db/topograph']) {
    const s = createRecordStore(url as `postgres://${string}`, '')
    assert.ok(s instanceof PostgresRecordStore)
    assert.doesNotMatch(s.url, /pw/)
  }
  assert.equal(redactPostgresUrl('postgres://u:pw@db/x'), 'postgres://u:***@db/x')
  assert.throws(() => new PostgresRecordStore('mysql://db/x'), isStorageError('STORAGE_INVALID_ARGUMENT'))
  assert.throws(
    () => new PostgresRecordStore('postgres://db/x', { poolSize: 0 }),
    isStorageError('STORAGE_INVALID_ARGUMENT', /poolSize must be a positive integer/),
  )
})

if (!base) {
  // The test command always starts a database; without one this file must fail, not pass quietly.
  test('postgres record store tests need a database', () => {
    requirePostgres()
  })
} else {
  after(async () => {
    for (const s of stores) await s.close().catch(() => undefined)
    for (const s of schemas) await dropTestSchema(s).catch(() => undefined)
  })

  const harness = (options: PostgresRecordStoreOptions) => async () => {
    const { url, schema } = await freshSchema()
    const store = await openStore(url, options)
    return {
      store,
      reopen: () => openStore(url, options),
      cleanup: () => dropTestSchema(schema),
    }
  }
  runRecordStoreContract('postgres', harness({}))
  // Loads in pages of two rows and one connection for every shard: paging and a saturated pool.
  runRecordStoreContract(
    'postgres (pool of 1, load pages of 2 rows)',
    harness({ poolSize: 1, loadBatchRows: 2 }),
  )

  describe('postgres record store', () => {
    test('tables in the search_path schema; offsets per shard without gaps after a failed append', async () => {
      const { url, schema } = await freshSchema()
      const store = await openStore(url)
      await store.append(0, [rec('a', '1')])
      store.failNextAppend()
      await assert.rejects(
        store.append(0, [rec('b', '1'), rec('c', '1')]),
        isStorageError('STORAGE_INJECTED_FAILURE'),
      )
      await store.append(0, [rec('d', '1'), rec('e', null)])
      await store.append(7, [rec('x', '1')])
      await store.close()
      const rows = await withPgClient(
        async (c) =>
          (
            await c.query<{ shard: string; record_offset: string }>(
              `SELECT shard, record_offset FROM ${schema}.${POSTGRES_RECORDS_TABLE} ORDER BY shard, record_offset`,
            )
          ).rows,
      )
      assert.deepEqual(
        rows.map((r) => [Number(r.shard), Number(r.record_offset)]),
        [
          [0, 0],
          [0, 1],
          [0, 2],
          [7, 0],
        ],
      )
      const meta = await withPgClient(
        async (c) => (await c.query(`SELECT id, schema_version FROM ${schema}.${POSTGRES_META_TABLE}`)).rows,
      )
      assert.deepEqual(meta, [{ id: 1, schema_version: 1 }])
    })

    test('concurrent appends on many shards over a small pool keep each shard in call order', async () => {
      const { url } = await freshSchema()
      const store = await openStore(url, { poolSize: 3 })
      const shards = 40
      const rounds = 25
      const pending: Promise<unknown>[] = []
      const failed = new Set<string>()
      for (let round = 0; round < rounds; round++) {
        for (let shard = 0; shard < shards; shard++) {
          // Batches of 1 to 3 records; one injected failure in the middle of the burst.
          if (round === 12 && shard === 17) store.failNextAppend()
          const size = 1 + ((round + shard) % 3)
          const batch = Array.from({ length: size }, (_, i) => rec(`r${round}.${i}`, `s${shard}`))
          const p = store.append(shard, batch)
          if (round === 12 && shard === 17) {
            failed.add(`${shard}/${round}`)
            pending.push(assert.rejects(p, isStorageError('STORAGE_INJECTED_FAILURE')))
          } else pending.push(p)
        }
        // A load queued behind this round's appends sees exactly the rounds before it.
        if (round === 5) {
          pending.push(
            store.load(3).then((loaded) => {
              assert.equal(
                loaded.length,
                [0, 1, 2, 3, 4, 5].reduce((n, r) => n + 1 + ((r + 3) % 3), 0),
              )
            }),
          )
        }
      }
      await Promise.all(pending)
      for (let shard = 0; shard < shards; shard++) {
        const expected: [string, string][] = []
        for (let round = 0; round < rounds; round++) {
          if (failed.has(`${shard}/${round}`)) continue
          const size = 1 + ((round + shard) % 3)
          for (let i = 0; i < size; i++) expected.push([`r${round}.${i}`, `s${shard}`])
        }
        assert.deepEqual(show(await store.load(shard)), expected, `shard ${shard}`)
      }
      await store.close()
    })

    test('a batch longer than one INSERT is split inside one transaction, and rolled back whole', async () => {
      const { url } = await freshSchema()
      const store = await openStore(url, { loadBatchRows: 999 })
      const long = Array.from({ length: 2_500 }, (_, i) => rec(`k${i}`, `v${i}`))
      await store.append(1, long)
      store.failNextAppend()
      await assert.rejects(store.append(1, long), isStorageError('STORAGE_INJECTED_FAILURE'))
      await store.append(1, [rec('last', '1')])
      const loaded = show(await store.load(1))
      assert.equal(loaded.length, 2_501)
      assert.deepEqual(loaded.slice(0, 2), [
        ['k0', 'v0'],
        ['k1', 'v1'],
      ])
      assert.deepEqual(loaded.slice(-2), [
        ['k2499', 'v2499'],
        ['last', '1'],
      ])
      await store.close()
    })

    test('a second store on the same schema is refused while the first holds the lock', async () => {
      const { url, schema, app } = await freshSchema({ password: 's3cret' })
      const first = await openStore(url)
      await first.append(0, [rec('a', '1')])
      const second = newStore(url, { lockWaitMs: 300 })
      await assert.rejects(
        second.open(),
        isStorageError(
          'STORAGE_OPEN_FAILED',
          new RegExp(
            `^the PostgreSQL coordinator storage at postgres://[^:/]+:\\*\\*\\*@.* is locked: another Topograph server is using it \\(held by backend \\d+ of ${app}(?: from \\S+)? since `,
          ),
        ),
      )
      await assert.rejects(second.open(), (e: Error) => !e.message.includes('s3cret'))
      await assert.rejects(second.append(0, [rec('b', '1')]), isStorageError('STORAGE_NOT_OPEN'))
      // The lock is per schema: a store on another schema of the same database opens meanwhile.
      const other = await openStore((await freshSchema()).url)
      await other.close()
      assert.ok((await lockHolder(schema)) !== undefined)
      // Released on close: the second store opens at once and finds the first one's records.
      await first.close()
      assert.equal(await lockHolder(schema), undefined)
      await second.open()
      assert.deepEqual(show(await second.load(0)), [['a', '1']])
      await second.close()
    })

    test('a store whose generation is no longer current writes nothing and keeps failing', async () => {
      const { url, schema } = await freshSchema()
      const store = await openStore(url)
      await store.append(0, [rec('a', '1'), rec('a', '2')])
      // What a server taking the store over does in open(), after the lock.
      await withPgClient((c) =>
        c.query(`UPDATE ${schema}.${POSTGRES_META_TABLE} SET generation = generation + 1`),
      )
      const fenced = /was taken over by another Topograph server/
      await assert.rejects(store.append(0, [rec('b', '1')]), isStorageError('STORAGE_WRITE_FAILED', fenced))
      await assert.rejects(store.compact(0), isStorageError('STORAGE_WRITE_FAILED', fenced))
      await assert.rejects(store.append(5, [rec('c', '1')]), isStorageError('STORAGE_WRITE_FAILED', fenced))
      assert.deepEqual(show(await store.load(0)), [
        ['a', '1'],
        ['a', '2'],
      ])
      await store.close()
      const again = await openStore(url)
      assert.deepEqual(show(await again.load(0)), [
        ['a', '1'],
        ['a', '2'],
      ])
      assert.deepEqual(await again.load(5), [])
      await again.close()
    })

    test('a lost lock connection: another server takes over, the first one is fenced for good', async () => {
      const { url, schema } = await freshSchema()
      const log = recordingLogger()
      const first = await openStore(url, { logger: log.logger })
      await first.append(0, [rec('first', '1')])
      const holder = await lockHolder(schema)
      assert.ok(holder !== undefined)
      await withPgClient((c) => c.query('SELECT pg_terminate_backend($1)', [holder]))
      await until('the lock is free', async () => (await lockHolder(schema)) === undefined)
      const second = await openStore(url)
      await second.append(0, [rec('second', '1')])
      // The first store cannot take its lock back while the second holds it.
      await assert.rejects(
        first.append(0, [rec('first', '2')]),
        isStorageError('STORAGE_WRITE_FAILED', /cannot take the lock .* again: .* is locked/),
      )
      await second.close()
      // Free again, but the store was someone else's in between: the first store stays fenced.
      await assert.rejects(
        first.append(0, [rec('first', '3')]),
        isStorageError('STORAGE_WRITE_FAILED', /was taken over by another Topograph server/),
      )
      await assert.rejects(first.append(0, [rec('first', '4')]), isStorageError('STORAGE_WRITE_FAILED'))
      await first.close()
      assert.ok(
        log.lines.some((l) =>
          l.startsWith('Lost the PostgreSQL connection holding the coordinator storage lock'),
        ),
      )
      const third = await openStore(url)
      assert.deepEqual(show(await third.load(0)), [
        ['first', '1'],
        ['second', '1'],
      ])
      await third.close()
    })

    test('a connection dropped during an append: that write fails as NOT_COORDINATOR, later ones succeed', async () => {
      const { url, schema, app } = await freshSchema()
      const log = recordingLogger()
      const store = await openStore(url, { logger: log.logger })
      const runtime = new CoordinatorRuntime<KvShard, KvRecord>({
        store,
        numShards: 2,
        newShard: (id, timer) => new KvShard(id, timer),
        serde: kvSerde,
        closeStore: false,
      })
      await runtime.load()
      assert.equal(await runtime.scheduleWriteOperation('incr', 1, incr('a')), 1)
      const locker = new pg.Client({ connectionString: base })
      await locker.connect()
      try {
        await locker.query('BEGIN')
        await locker.query(`LOCK TABLE ${schema}.${POSTGRES_RECORDS_TABLE} IN ACCESS EXCLUSIVE MODE`)
        const write = runtime.scheduleWriteOperation('incr', 1, incr('a'))
        const settled = write.then(
          () => undefined,
          (e: unknown) => e,
        )
        await until('the append waits for the table lock', async () =>
          withPgClient(async (c) => {
            const r = await c.query(
              `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
              [app],
            )
            return r.rowCount === 1
          }),
        )
        // Every connection of the store: the one in the append, the lock's, any idle one.
        assert.ok((await terminateBackends(app)) >= 2)
        const e = await settled
        assert.ok(e instanceof CoordinatorWriteError, String(e))
        assert.equal(e.kafkaError, 'NOT_COORDINATOR')
        assert.ok(e.cause instanceof StorageError)
        assert.equal(e.cause.code, 'STORAGE_WRITE_FAILED')
        assert.match(e.cause.message, /^append to shard 1 failed: /)
        await locker.query('ROLLBACK')
      } finally {
        await locker.end()
      }
      // Nothing of the failed write was applied; the next writes succeed on new connections, and
      // the lock is held again (a second store is refused).
      assert.equal(await runtime.scheduleWriteOperation('incr', 1, incr('a')), 2)
      assert.equal(await runtime.scheduleWriteOperation('incr', 0, incr('b')), 1)
      assert.ok(log.lines.includes('Took the PostgreSQL coordinator storage lock again'))
      await assert.rejects(
        openStore(url, { lockWaitMs: 200 }),
        isStorageError('STORAGE_OPEN_FAILED', /is locked/),
      )
      await runtime.close()
      assert.deepEqual(show(await store.load(1)), [
        ['a', '1'],
        ['a', '2'],
      ])
      await store.close()
    })

    test('idle connections dropped (pool and lock): the process survives, writes recover, the lock is back', async () => {
      const { url, app } = await freshSchema()
      const store = await openStore(url, { poolSize: 4 })
      // Several pooled connections, idle afterwards.
      await Promise.all([0, 1, 2, 3].map((shard) => store.append(shard, [rec('a', String(shard))])))
      assert.ok((await terminateBackends(app)) >= 2)
      let ok = false
      for (let attempt = 0; attempt < 5 && !ok; attempt++) {
        ok = await store.append(0, [rec('b', String(attempt))]).then(
          () => true,
          (e: unknown) => isStorageError('STORAGE_WRITE_FAILED')(e) && false,
        )
      }
      assert.ok(ok, 'no append succeeded after the connections were dropped')
      for (const shard of [1, 2, 3]) await store.append(shard, [rec('c', '1')])
      await assert.rejects(
        openStore(url, { lockWaitMs: 200 }),
        isStorageError('STORAGE_OPEN_FAILED', /is locked/),
      )
      await store.close()
    })

    test('open fails clearly: no database there, no schema, a newer schema version', async () => {
      await assert.rejects(
        openStore('postgres://nobody:secret@127.0.0.1:1/none', { connectTimeoutMs: 1_000 }),
        isStorageError(
          'STORAGE_OPEN_FAILED',
          /^cannot open the PostgreSQL coordinator storage at postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none: /,
        ),
      )
      const missing = new URL(base)
      missing.searchParams.set('options', '-c search_path=tg_no_such_schema')
      await assert.rejects(
        openStore(missing.toString()),
        isStorageError('STORAGE_OPEN_FAILED', /no schema of the search_path exists/),
      )
      const { url, schema } = await freshSchema()
      await (await openStore(url)).close()
      await withPgClient((c) => c.query(`UPDATE ${schema}.${POSTGRES_META_TABLE} SET schema_version = 99`))
      await assert.rejects(
        openStore(url),
        isStorageError(
          'STORAGE_OPEN_FAILED',
          /has schema version 99, newer than this version of topograph understands \(1\)/,
        ),
      )
      // The refused open keeps nothing: the lock is free again.
      await until('the lock is released', async () => (await lockHolder(schema)) === undefined)
    })
  })
}
