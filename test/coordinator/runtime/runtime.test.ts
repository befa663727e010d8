import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import fc from 'fast-check'
import { ManualClock } from '../../../src/coordinator/runtime/clock.js'
import {
  CoordinatorRuntimeError,
  CoordinatorTimeoutError,
  CoordinatorWriteError,
} from '../../../src/coordinator/runtime/errors.js'
import { CoordinatorRuntime, TIMER_OPERATIONS_PER_TURN } from '../../../src/coordinator/runtime/runtime.js'
import type { TimerOperation, WriteOperation } from '../../../src/coordinator/runtime/types.js'
import { StorageError } from '../../../src/coordinator/storage/errors.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/memory.js'
import { SqliteRecordStore } from '../../../src/coordinator/storage/sqlite.js'
import type { RecordStore } from '../../../src/coordinator/storage/types.js'
import { del, GatedStore, incr, type KvRecord, KvShard, kvSerde } from './fake-shard.js'

interface Setup {
  readonly runtime: CoordinatorRuntime<KvShard, KvRecord>
  readonly shards: Map<number, KvShard>
  readonly clock: ManualClock
}

function setup(
  store: RecordStore,
  numShards = 4,
  extra: {
    compactionIntervalMs?: number
    closeStore?: boolean
    writeTimeoutMs?: number
    readTimeoutMs?: number
    appendLinger?: 'microtask' | 'turn'
  } = {},
): Setup {
  const shards = new Map<number, KvShard>()
  const clock = new ManualClock(1_000_000)
  const runtime = new CoordinatorRuntime<KvShard, KvRecord>({
    store,
    numShards,
    serde: kvSerde,
    clock,
    newShard: (id, timer) => {
      const s = new KvShard(id, timer)
      shards.set(id, s)
      return s
    },
    ...extra,
  })
  return { runtime, shards, clock }
}

async function loaded(store: RecordStore, numShards = 4, extra = {}): Promise<Setup> {
  const s = setup(store, numShards, extra)
  await s.runtime.load()
  return s
}

function runtimeError(code: string, kafkaError: string) {
  return (e: unknown): boolean => {
    assert.ok(e instanceof CoordinatorRuntimeError, `expected a CoordinatorRuntimeError, got ${String(e)}`)
    assert.equal(e.code, code)
    assert.equal(e.kafkaError, kafkaError)
    return true
  }
}

/** Waits until every operation scheduled on the shard so far has finished. */
function drain(s: Setup, shard: number): Promise<void> {
  return s.runtime.scheduleReadOperation('drain', shard, () => undefined)
}

test('operations on one shard run strictly in scheduling order, even with appends of varying latency', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  // Appends that take a random time: ordering must come from the queue, not from luck.
  const slow: RecordStore = {
    open: () => store.open(),
    append: async (shard, records) => {
      await new Promise((r) => setTimeout(r, Math.random() * 3))
      await store.append(shard, records)
    },
    load: (shard, options) => store.load(shard, options),
    compact: (shard) => store.compact(shard),
    close: () => store.close(),
  }
  const s = await loaded(slow)
  const seen: string[] = []
  const ops: Promise<unknown>[] = []
  for (let i = 0; i < 40; i++) {
    ops.push(s.runtime.scheduleWriteOperation(`w${i}`, 0, incr('n')).then((v) => seen.push(`w${v}`)))
    if (i % 10 === 0) {
      ops.push(
        s.runtime
          .scheduleReadOperation(`r${i}`, 0, (shard) => shard.map.get('n'))
          .then((v) => seen.push(`r${v}`)),
      )
    }
  }
  await Promise.all(ops)
  const expected: string[] = []
  for (let i = 0; i < 40; i++) {
    expected.push(`w${i + 1}`)
    if (i % 10 === 0) expected.push(`r${i + 1}`)
  }
  assert.deepEqual(seen, expected)
  assert.deepEqual(s.shards.get(0)!.snapshot(), [['n', 40]])
  await s.runtime.close()
})

test('a stuck append holds no other shard reads; their writes wait for the write in flight', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  store.gate()
  const started = store.nextAppend()
  const stuck = s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  const behind = s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  await started
  // Shard 0's two writes, queued in one turn, are one batch whose write is in flight; shard 1 still
  // reads (no append needed). Its write waits for the next store write.
  assert.equal(await s.runtime.scheduleReadOperation('r', 1, (sh) => sh.map.size), 0)
  const other = s.runtime.scheduleWriteOperation('w', 1, incr('b'))
  await new Promise((r) => setImmediate(r))
  assert.equal(store.waitingAppends, 1, 'one store write at a time')
  store.release()
  assert.deepEqual(await Promise.all([stuck, behind, other]), [1, 2, 1])
  assert.deepEqual(
    store.calls.filter((c) => !c.startsWith('load')),
    ['append:0:2', 'append:1:1'],
  )
  await s.runtime.close()
})

test('group commit: writes of every shard that arrive during a store write go in the next one', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  store.gate()
  const started = store.nextAppend()
  const first = s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  await started
  const next = [1, 2, 3].map((shard) => s.runtime.scheduleWriteOperation('w', shard, incr('k', shard)))
  await new Promise((r) => setImmediate(r))
  // Nothing of the waiting writes is replayed or answered before their write is durable.
  for (const shard of [1, 2, 3]) assert.equal(s.shards.get(shard)!.map.has('k'), false)
  store.release()
  assert.deepEqual(await Promise.all([first, ...next]), [1, 1, 2, 3])
  assert.deepEqual(
    store.calls.filter((c) => !c.startsWith('load')),
    ['append:0:1', 'batches:1:1,2:1,3:1'],
  )
  for (const shard of [1, 2, 3]) assert.equal(s.shards.get(shard)!.map.get('k'), shard)
  // Each shard's log holds exactly its own record.
  for (const shard of [1, 2, 3]) assert.equal((await store.inner.load(shard)).length, 1)
  await s.runtime.close()
})

/**
 * Schedules writes from two callbacks of one turn of the event loop (two immediates run in one
 * check phase, with the microtasks of the first between them, as two connections' reads are two
 * I/O callbacks of one poll phase) and returns the store writes they made.
 */
async function writesOfOneTurn(appendLinger: 'microtask' | 'turn' | undefined): Promise<string[]> {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store, 4, appendLinger === undefined ? {} : { appendLinger })
  const answers = await new Promise<unknown[]>((resolve, reject) => {
    const ops: Promise<unknown>[] = []
    setImmediate(() => {
      ops.push(s.runtime.scheduleWriteOperation('w', 0, incr('a')))
    })
    setImmediate(() => {
      ops.push(s.runtime.scheduleWriteOperation('w', 0, incr('a')))
      ops.push(s.runtime.scheduleWriteOperation('w', 1, incr('b')))
      Promise.all(ops).then(resolve, reject)
    })
  })
  assert.deepEqual(answers, [1, 2, 1])
  assert.deepEqual(s.shards.get(0)!.snapshot(), [['a', 2]])
  await s.runtime.close()
  return store.calls.filter((c) => !c.startsWith('load'))
}

test("appendLinger 'turn': the writes of every callback of one turn share one batch per shard and one store write", async () => {
  assert.deepEqual(await writesOfOneTurn('turn'), ['batches:0:2,1:1'])
  // In microtasks (the default), each callback's writes went to the store on their own.
  const microtask = await writesOfOneTurn(undefined)
  assert.deepEqual(microtask, await writesOfOneTurn('microtask'))
  assert.deepEqual(microtask, ['append:0:1', 'batches:0:1,1:1'])
})

test("appendLinger: anything but 'microtask' or 'turn' is refused", () => {
  assert.throws(
    () => setup(new MemoryRecordStore(), 1, { appendLinger: 'later' as 'turn' }),
    runtimeError('COORDINATOR_INVALID_ARGUMENT', 'COORDINATOR_NOT_AVAILABLE'),
  )
})

test('group commit: a failed write fails exactly the operations whose records were in it', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  store.gate()
  const started = store.nextAppend()
  const first = s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  await started
  const failing = [1, 2].map((shard) => s.runtime.scheduleWriteOperation('w', shard, incr('k')))
  await new Promise((r) => setImmediate(r))
  // The in-flight write (shard 0's) goes through; the next one, holding shards 1 and 2, fails.
  const secondStarted = store.nextAppend()
  store.release()
  store.gate()
  assert.equal(await first, 1)
  await secondStarted
  store.failNextAppend()
  store.release()
  for (const p of failing)
    await assert.rejects(p, runtimeError('COORDINATOR_WRITE_FAILED', 'NOT_COORDINATOR'))
  // Nothing of the failed write was replayed or stored; the shards serve the next writes.
  for (const shard of [1, 2]) {
    assert.equal(s.shards.get(shard)!.map.has('k'), false)
    assert.deepEqual(await store.inner.load(shard), [])
  }
  assert.deepEqual(
    await Promise.all([1, 2].map((shard) => s.runtime.scheduleWriteOperation('w', shard, incr('k')))),
    [1, 1],
  )
  assert.equal(s.shards.get(0)!.map.get('a'), 1)
  await s.runtime.close()
})

test('append, then replay, then the response: the shard is unchanged while its records are in flight', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  const shard = s.shards.get(2)!
  store.gate()
  const appendStarted = store.nextAppend()
  let resolved = false
  const p = s.runtime.scheduleWriteOperation('w', 2, incr('x', 5)).then((v) => {
    resolved = true
    return v
  })
  await appendStarted
  assert.equal(shard.map.has('x'), false, 'nothing replayed before the append completed')
  assert.equal(resolved, false)
  store.release()
  assert.equal(await p, 5)
  assert.deepEqual(shard.snapshot(), [['x', 5]])
  assert.deepEqual(
    store.calls.filter((c) => c.startsWith('append')),
    ['append:2:1'],
  )
  await s.runtime.close()
})

test('the serde gets the records of a write back once the store has settled it, written or failed', async () => {
  const store = new GatedStore()
  await store.open()
  const released: string[] = []
  const serializedBy = new Set<unknown>()
  const runtime = new CoordinatorRuntime<KvShard, KvRecord>({
    store,
    numShards: 2,
    serde: {
      ...kvSerde,
      serializeAll: (records) =>
        records.map((r) => {
          const stored = kvSerde.serialize(r)
          serializedBy.add(stored)
          return stored
        }),
      release: (records) => {
        for (const r of records) {
          assert.ok(serializedBy.delete(r), 'released once, and only what serializeAll returned')
          released.push(new TextDecoder().decode(r.key))
        }
      },
    },
    clock: new ManualClock(1_000_000),
    newShard: (id, timer) => new KvShard(id, timer),
  })
  await runtime.load()
  store.gate()
  const started = store.nextAppend()
  const first = runtime.scheduleWriteOperation('w', 0, incr('a'))
  const second = runtime.scheduleWriteOperation('w', 0, incr('b'))
  await started
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(released, [], 'nothing while the store write is in flight')
  store.release()
  assert.deepEqual(await Promise.all([first, second]), [1, 1])
  assert.deepEqual(released, ['a', 'b'])
  store.failNextAppend()
  await assert.rejects(runtime.scheduleWriteOperation('w', 1, incr('c')), CoordinatorWriteError)
  assert.deepEqual(released, ['a', 'b', 'c'])
  assert.equal(serializedBy.size, 0)
  await runtime.close()
})

test('a failed append rejects with CoordinatorWriteError (NOT_COORDINATOR), replays nothing, and the shard carries on', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store)
  await s.runtime.scheduleWriteOperation('w', 1, incr('k'))
  const before = s.shards.get(1)!.snapshot()
  const replayedBefore = s.shards.get(1)!.replayed
  store.failNextAppend()
  await assert.rejects(
    s.runtime.scheduleWriteOperation('streams-group-heartbeat', 1, incr('k', 10)),
    (e: unknown) => {
      assert.ok(e instanceof CoordinatorWriteError)
      assert.equal(e.code, 'COORDINATOR_WRITE_FAILED')
      assert.equal(e.kafkaError, 'NOT_COORDINATOR')
      assert.equal(e.shardId, 1)
      assert.match(e.message, /write operation streams-group-heartbeat on shard 1 failed/)
      assert.ok(e.cause instanceof StorageError && e.cause.code === 'STORAGE_INJECTED_FAILURE')
      return true
    },
  )
  assert.deepEqual(s.shards.get(1)!.snapshot(), before)
  assert.equal(s.shards.get(1)!.replayed, replayedBefore)
  assert.equal(await s.runtime.scheduleWriteOperation('w', 1, incr('k')), 2)
  // The log agrees: a reload gives the same state, without the failed write.
  await s.runtime.close()
  await store.open()
  const again = await loaded(store)
  assert.deepEqual(again.shards.get(1)!.snapshot(), [['k', 2]])
  await again.runtime.close()
})

test('an operation that throws rejects with its own error and writes nothing', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  const boom = new Error('GROUP_ID_NOT_FOUND')
  await assert.rejects(
    s.runtime.scheduleWriteOperation('w', 0, () => {
      throw boom
    }),
    (e) => e === boom,
  )
  await assert.rejects(
    s.runtime.scheduleReadOperation('r', 0, () => {
      throw boom
    }),
    (e) => e === boom,
  )
  assert.deepEqual(
    store.calls.filter((c) => c.startsWith('append')),
    [],
  )
  // The queue keeps going after a failure.
  assert.equal(await s.runtime.scheduleWriteOperation('w', 0, incr('a')), 1)
  await s.runtime.close()
})

test('a write with no records answers without touching the store', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  assert.equal(await s.runtime.scheduleWriteOperation('w', 3, del('missing')), false)
  assert.deepEqual(
    store.calls.filter((c) => c.startsWith('append')),
    [],
  )
  await s.runtime.close()
})

test('asynchronous or malformed operations are refused with a clear error', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store)
  const asyncOp = (async () => ({ records: [], response: 1 })) as unknown as WriteOperation<
    KvShard,
    KvRecord,
    number
  >
  await assert.rejects(s.runtime.scheduleWriteOperation('w', 0, asyncOp), /returned a promise/)
  await assert.rejects(
    s.runtime.scheduleReadOperation('r', 0, async () => 1),
    /returned a promise/,
  )
  const noRecords = (() => ({ response: 1 })) as unknown as WriteOperation<KvShard, KvRecord, number>
  await assert.rejects(
    s.runtime.scheduleWriteOperation('w', 0, noRecords),
    /must return \{ records: \[\], response \}/,
  )
  await assert.rejects(s.runtime.scheduleWriteOperation('w', 4, incr('a')), /shard 4 is not hosted here/)
  await assert.rejects(s.runtime.scheduleWriteOperation('w', -1, incr('a')), /not hosted here/)
  await assert.rejects(s.runtime.scheduleWriteOperation('w', 0.5, incr('a')), /not hosted here/)
  assert.throws(() => setup(store, 0), /numShards must be a positive 32-bit integer/)
  assert.throws(
    () => setup(store, 2, { compactionIntervalMs: -5 }),
    /compactionIntervalMs must be a positive number/,
  )
  await s.runtime.close()
})

test('operations before the shard is loaded get COORDINATOR_LOAD_IN_PROGRESS', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = setup(store)
  await assert.rejects(
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    runtimeError('COORDINATOR_LOADING', 'COORDINATOR_LOAD_IN_PROGRESS'),
  )
  assert.equal(s.runtime.isActive(0), false)
  await s.runtime.load()
  assert.equal(s.runtime.isActive(0), true)
  assert.equal(await s.runtime.scheduleWriteOperation('w', 0, incr('a')), 1)
  await s.runtime.close()
})

test('property: loading is replay: a fresh runtime over the same log reaches the same state (with and without compaction)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          shard: fc.integer({ min: 0, max: 2 }),
          key: fc.constantFrom('a', 'b', 'c'),
          kind: fc.constantFrom('incr', 'incr', 'del', 'compact'),
        }),
        { maxLength: 40 },
      ),
      async (ops) => {
        const store = new MemoryRecordStore()
        await store.open()
        const s = await loaded(store, 3, { closeStore: false })
        await Promise.all(
          ops.map((o) =>
            o.kind === 'incr'
              ? s.runtime.scheduleWriteOperation('incr', o.shard, incr(o.key))
              : o.kind === 'del'
                ? s.runtime.scheduleWriteOperation('del', o.shard, del(o.key))
                : s.runtime.compact(o.shard),
          ),
        )
        await s.runtime.close()
        const again = await loaded(store, 3, { closeStore: false })
        for (let shard = 0; shard < 3; shard++) {
          assert.deepEqual(again.shards.get(shard)!.snapshot(), s.shards.get(shard)!.snapshot())
        }
        await again.runtime.close()
      },
    ),
    { numRuns: 50 },
  )
})

test('loading is replay over SQLite too, across a close and a new process-like reopen', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-runtime-'))
  try {
    let store = new SqliteRecordStore(dir)
    await store.open()
    const s = await loaded(store, 5)
    for (let i = 0; i < 30; i++) await s.runtime.scheduleWriteOperation('w', i % 5, incr(`k${i % 3}`))
    await s.runtime.scheduleWriteOperation('d', 2, del('k1'))
    await s.runtime.close()
    store = new SqliteRecordStore(dir)
    await store.open()
    const again = await loaded(store, 5)
    for (let shard = 0; shard < 5; shard++) {
      assert.deepEqual(again.shards.get(shard)!.snapshot(), s.shards.get(shard)!.snapshot())
    }
    assert.equal(again.shards.get(0)!.loadedAt, 1_000_000, 'onLoaded ran with the clock time')
    await again.runtime.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('loading replays per key only its latest record, and no key whose latest record is a tombstone, where the serde allows it', async () => {
  // The log as compaction would leave it, which a store may hand over at any time: the same state,
  // with a replay for each live key instead of each record. Keys starting with "!" are replayed
  // record by record (kvSerde.latestOnly refuses them).
  const store = new MemoryRecordStore()
  await store.open()
  const write = (key: string, value: number | null) => kvSerde.serialize({ key, value })
  await store.append(0, [write('a', 1), write('b', 1), write('a', 2), write('!m', 1)])
  await store.append(0, [write('c', 1), write('b', null), write('!m', 2)])
  await store.append(0, [write('a', 3), write('!n', 1), write('!n', null)])
  const s = await loaded(store, 1, { closeStore: false })
  const shard = s.shards.get(0)!
  assert.deepEqual(shard.snapshot(), [
    ['!m', 2],
    ['a', 3],
    ['c', 1],
  ])
  assert.equal(
    shard.replayed,
    2 + 4,
    'a=1, b=1, a=2 and b (deleted) are not replayed; !m and !n are, each record',
  )
  await s.runtime.close()
})

test('loading skips records the serde does not know', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 1, { closeStore: false })
  await s.runtime.scheduleWriteOperation('w', 0, () => ({
    records: [
      { key: 'a', value: 1 },
      { key: '?future-record-type', value: 7 },
      { key: 'b', value: 2 },
    ],
    response: undefined,
  }))
  await s.runtime.close()
  const again = await loaded(store, 1)
  assert.deepEqual(again.shards.get(0)!.snapshot(), [
    ['a', 1],
    ['b', 2],
  ])
  await again.runtime.close()
})

test('a shard whose log cannot be replayed fails to load (NOT_COORDINATOR); the others load', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  await store.append(1, [kvSerde.serialize({ key: 'bad', value: 1 })])
  await store.append(0, [kvSerde.serialize({ key: 'good', value: 1 })])
  const s = setup(store, 2)
  const originalNew = s.shards
  const runtime = new CoordinatorRuntime<KvShard, KvRecord>({
    store,
    numShards: 2,
    serde: kvSerde,
    clock: s.clock,
    newShard: (id, timer) => {
      const shard = new KvShard(id, timer)
      shard.poison = 'bad'
      originalNew.set(id, shard)
      return shard
    },
  })
  await assert.rejects(runtime.load(), (e: unknown) => {
    assert.ok(e instanceof AggregateError)
    assert.match(String(e.errors[0]), /shard 1: record 0 of 1 could not be replayed: cannot replay bad/)
    return true
  })
  assert.equal(runtime.isActive(0), true)
  assert.equal(runtime.isActive(1), false)
  await assert.rejects(
    runtime.scheduleWriteOperation('w', 1, incr('a')),
    runtimeError('COORDINATOR_NOT_ACTIVE', 'NOT_COORDINATOR'),
  )
  assert.equal(await runtime.scheduleWriteOperation('w', 0, incr('good')), 2)
  await runtime.close()
})

test('a replay that throws after a durable append stops the shard instead of serving diverged state', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 2)
  s.shards.get(0)!.poison = 'bad'
  await assert.rejects(
    s.runtime.scheduleWriteOperation('w', 0, () => ({ records: [{ key: 'bad', value: 1 }], response: 0 })),
    runtimeError('COORDINATOR_SHARD_FAILED', 'NOT_COORDINATOR'),
  )
  await assert.rejects(
    s.runtime.scheduleReadOperation('r', 0, () => 1),
    runtimeError('COORDINATOR_NOT_ACTIVE', 'NOT_COORDINATOR'),
  )
  assert.equal(await s.runtime.scheduleWriteOperation('w', 1, incr('a')), 1)
  await s.runtime.close()
})

test('servingStarted: timers pending when the server starts serving count from then, later ones as scheduled', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 2)
  const ran: [string, number][] = []
  const op =
    (name: string): TimerOperation<KvRecord> =>
    (now) => {
      ran.push([name, now])
      return { records: [], response: undefined }
    }
  // Armed as the shard loaded (a member's session timer), then start-up takes 80 ms more.
  const watch = { armed: false, dueMs: 0 }
  s.runtime.scheduleTimer(0, 'session', 100, op('session'), { watch })
  assert.equal(watch.dueMs, 1_000_100)
  s.clock.advance(80)
  s.runtime.servingStarted()
  assert.equal(watch.dueMs, 1_000_180, 'the watch follows the new deadline')
  s.runtime.scheduleTimer(1, 'later', 100, op('later'))
  s.runtime.servingStarted()
  s.clock.advance(99)
  await drain(s, 0)
  assert.equal(ran.length, 0, 'nothing is due 99 ms after serving started')
  s.clock.advance(1)
  await Promise.all([drain(s, 0), drain(s, 1)])
  assert.deepEqual(
    [...ran].sort((x, y) => x[0].localeCompare(y[0])),
    [
      ['later', 1_000_180],
      ['session', 1_000_180],
    ],
  )
  // Timers after serving started keep their own delay.
  s.runtime.scheduleTimer(0, 'session', 100, op('again'))
  s.clock.advance(100)
  await drain(s, 0)
  assert.deepEqual(ran.at(-1), ['again', 1_000_280])
  await s.runtime.close()
})

test('timers: a write operation that runs at its due time on the manual clock, replaceable and cancellable', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 2)
  const ran: number[] = []
  const tick: TimerOperation<KvRecord> = (now) => {
    const shard = s.shards.get(0)!
    ran.push(now)
    return { records: [{ key: 'ticks', value: (shard.map.get('ticks') ?? 0) + 1 }], response: undefined }
  }
  s.runtime.scheduleTimer(0, 'session-timeout', 100, tick)
  assert.equal(s.runtime.timer(0).isScheduled('session-timeout'), true)
  s.clock.advance(99)
  await drain(s, 0)
  assert.deepEqual(ran, [])
  s.clock.advance(1)
  await drain(s, 0)
  assert.deepEqual(ran, [1_000_100])
  assert.deepEqual(s.shards.get(0)!.snapshot(), [['ticks', 1]])
  assert.equal(s.runtime.timer(0).isScheduled('session-timeout'), false)
  assert.deepEqual(
    await store.load(0),
    [kvSerde.serialize({ key: 'ticks', value: 1 })],
    'the timer wrote a record',
  )

  // Scheduling the same key replaces it; scheduleIfAbsent keeps the existing one; cancel removes it.
  s.runtime.scheduleTimer(0, 'k', 50, tick)
  s.runtime.scheduleTimer(0, 'k', 200, tick)
  s.runtime.timer(0).scheduleIfAbsent('k', 10, tick)
  s.clock.advance(100)
  await drain(s, 0)
  assert.equal(ran.length, 1)
  s.clock.advance(100)
  await drain(s, 0)
  assert.equal(ran.length, 2)
  s.runtime.scheduleTimer(0, 'k', 10, tick)
  s.runtime.cancelTimer(0, 'k')
  s.clock.advance(1000)
  await drain(s, 0)
  assert.equal(ran.length, 2)
  assert.equal(s.clock.pendingTimers, 0)
  await s.runtime.close()
})

test('timers: of timers that fall due together, at most TIMER_OPERATIONS_PER_TURN start their operations in one turn of the event loop; the rest follow in firing order', async () => {
  // The system clock: Node fires every timer due in one timers phase, so without the bound every
  // operation would run before the check phase's immediate below.
  const store = new MemoryRecordStore()
  await store.open()
  const runtime = new CoordinatorRuntime<KvShard, KvRecord>({
    store,
    numShards: 1,
    serde: kvSerde,
    newShard: (id, timer) => new KvShard(id, timer),
  })
  await runtime.load()
  const n = 3 * TIMER_OPERATIONS_PER_TURN + 5
  const ran: number[] = []
  let afterFirstTurn = -1
  // The runtime's timers are unref'd: this keeps the test's process alive until they have run.
  const alive = setInterval(() => {}, 1000)
  const all = new Promise<void>((resolve) => {
    for (let i = 0; i < n; i++) {
      runtime.scheduleTimer(0, `session-${i}`, 20, () => {
        if (ran.length === 0)
          setImmediate(() => {
            afterFirstTurn = ran.length
          })
        ran.push(i)
        if (ran.length === n) resolve()
        return { records: [], response: undefined }
      })
    }
  })
  // Hold the thread past every deadline, so that all of them are due in the same timers phase
  // however long the loop above took on a busy machine (timers armed a millisecond apart could
  // otherwise fall into different phases).
  const due = Date.now() + 60
  while (Date.now() < due) {
    // busy: nothing else may run until every timer is due
  }
  await all
  clearInterval(alive)
  assert.equal(afterFirstTurn, TIMER_OPERATIONS_PER_TURN)
  assert.deepEqual(
    ran,
    Array.from({ length: n }, (_, i) => i),
  )
  await runtime.close()
})

test('timers: a timer replaced by a later deadline runs once, at the last deadline, with the last operation; one clock timer per key', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 1)
  const ran: string[] = []
  const op =
    (name: string): TimerOperation<KvRecord> =>
    (now) => {
      ran.push(`${name}@${now - 1_000_000}`)
      return { records: [], response: undefined }
    }
  // A session timeout pushed out by heartbeats at t = 0, 30, 60, 90 (delay 100 each time).
  s.runtime.scheduleTimer(0, 'session', 100, op('a'))
  for (const [at, name] of [
    [30, 'b'],
    [60, 'c'],
    [90, 'd'],
  ] as const) {
    s.clock.advance(at - (s.clock.now() - 1_000_000))
    s.runtime.scheduleTimer(0, 'session', 100, op(name))
    assert.equal(s.clock.pendingTimers, 1, 'never more than one clock timer for the key')
  }
  s.clock.advance(99) // t = 189: past the first deadlines, before the last
  await drain(s, 0)
  assert.deepEqual(ran, [])
  assert.equal(s.runtime.timer(0).isScheduled('session'), true)
  s.clock.advance(1) // t = 190
  await drain(s, 0)
  assert.deepEqual(ran, ['d@190'])
  assert.equal(s.runtime.timer(0).isScheduled('session'), false)
  assert.equal(s.clock.pendingTimers, 0)

  // An earlier deadline replaces a later one at once.
  s.runtime.scheduleTimer(0, 'k', 500, op('late'))
  s.runtime.scheduleTimer(0, 'k', 20, op('early'))
  s.clock.advance(20)
  await drain(s, 0)
  assert.deepEqual(ran, ['d@190', 'early@210'])
  s.clock.advance(1000)
  await drain(s, 0)
  assert.deepEqual(ran, ['d@190', 'early@210'], 'the replaced later deadline never runs')

  // Pushed out, then cancelled before the first deadline: nothing runs.
  s.runtime.scheduleTimer(0, 'gone', 50, op('x'))
  s.runtime.scheduleTimer(0, 'gone', 80, op('y'))
  s.runtime.cancelTimer(0, 'gone')
  s.clock.advance(200)
  await drain(s, 0)
  assert.deepEqual(ran, ['d@190', 'early@210'])
  assert.equal(s.clock.pendingTimers, 0)
  await s.runtime.close()
})

test('timers: a timer replaced by a later deadline after it fired but before its turn runs only at the new deadline', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store, 1)
  const ran: number[] = []
  const op: TimerOperation<KvRecord> = (now) => {
    ran.push(now - 1_000_000)
    return { records: [], response: undefined }
  }
  s.runtime.scheduleTimer(0, 't', 10, op)
  store.gate()
  const started = store.nextAppend()
  const blocking = s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  await started
  s.clock.advance(10) // fires now, but waits behind the blocked write
  s.runtime.scheduleTimer(0, 't', 100, op) // a heartbeat pushes it out meanwhile
  store.release()
  await blocking
  await drain(s, 0)
  assert.deepEqual(ran, [], 'the fired but replaced operation is skipped')
  s.clock.advance(100)
  await drain(s, 0)
  assert.deepEqual(ran, [110])
  await s.runtime.close()
})

test('timers: the shard can arm its own timers (handed to newShard), and a timer cancelled after firing but before its turn does not run', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store, 1)
  const shard = s.shards.get(0)!
  let ran = 0
  shard.timer.schedule('t', 10, () => {
    ran++
    return { records: [], response: undefined }
  })
  store.gate()
  const started = store.nextAppend()
  const blocking = s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  await started
  s.clock.advance(10) // fires now, but waits behind the blocked write
  shard.timer.cancel('t')
  store.release()
  await blocking
  await drain(s, 0)
  assert.equal(ran, 0)
  await s.runtime.close()
})

test('timers: a failed timer operation is retried after retryBackoffMs; without it, it is dropped', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 1)
  const seen: number[] = []
  const op: TimerOperation<KvRecord> = (now) => {
    seen.push(now)
    return { records: [{ key: 'expired', value: now }], response: undefined }
  }
  s.runtime.scheduleTimer(0, 'retry', 100, op, { retryBackoffMs: 500 })
  store.failNextAppend()
  s.clock.advance(100)
  await drain(s, 0)
  assert.equal(s.runtime.timer(0).isScheduled('retry'), true, 'rescheduled after the failed append')
  s.clock.advance(500)
  await drain(s, 0)
  assert.deepEqual(seen, [1_000_100, 1_000_600])
  assert.deepEqual(s.shards.get(0)!.snapshot(), [['expired', 1_000_600]])

  s.runtime.scheduleTimer(0, 'once', 10, op)
  store.failNextAppend()
  s.clock.advance(10)
  await drain(s, 0)
  assert.equal(s.runtime.timer(0).isScheduled('once'), false)
  assert.throws(() => s.runtime.scheduleTimer(0, 'bad', -1, op), /delayMs must be >= 0/)
  await s.runtime.close()
})

test('timers: a shard reports the failed operations it retries once per interval, with a count', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const lines: { level: string; msg: string; unreported?: number }[] = []
  const logAt = (level: string) => (obj: object, msg: string) => {
    if (msg.startsWith('Timer operation failed')) {
      lines.push({ level, msg, unreported: (obj as { unreported?: number }).unreported })
    }
  }
  const logger = { debug: logAt('debug'), info: logAt('info'), warn: logAt('warn'), error: logAt('error') }
  const s = await loaded(store, 1, { logger })
  const op: TimerOperation<KvRecord> = (now) => ({
    records: [{ key: 'expired', value: now }],
    response: undefined,
  })
  s.runtime.scheduleTimer(0, 'session', 100, op, { retryBackoffMs: 500 })
  const failOnce = async (advanceMs: number) => {
    store.failNextAppend()
    s.clock.advance(advanceMs)
    await drain(s, 0)
  }
  await failOnce(100)
  assert.deepEqual(lines, [{ level: 'info', msg: 'Timer operation failed; retrying', unreported: 0 }])
  // Retried every 500 ms: the failures of the next 10 s go to DEBUG.
  for (let i = 0; i < 19; i++) await failOnce(500)
  assert.equal(lines.length, 20)
  assert.deepEqual(new Set(lines.slice(1).map((l) => l.level)), new Set(['debug']))
  // 10 s after the last report: reported again, with the count of those in between.
  await failOnce(500)
  assert.deepEqual(lines.at(-1), {
    level: 'info',
    msg: 'Timer operation failed; retrying (19 more failed and were retried since the last report)',
    unreported: 19,
  })
  // The store is back: the retry succeeds, and nothing more is logged.
  s.clock.advance(500)
  await drain(s, 0)
  assert.equal(s.runtime.timer(0).isScheduled('session'), false)
  assert.deepEqual(s.shards.get(0)!.snapshot(), [['expired', 1_010_600]])
  assert.equal(lines.length, 21)
  await s.runtime.close()
})

test('a failed store write is logged once, with the number of its operations', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const warnings: { msg: string; operations?: number }[] = []
  const quiet = () => {}
  const logger = {
    debug: quiet,
    info: quiet,
    error: quiet,
    warn: (obj: object, msg: string) =>
      warnings.push({ msg, operations: (obj as { operations?: number }).operations }),
  }
  const s = await loaded(store, 1, { logger })
  const op: TimerOperation<KvRecord> = (now) => ({
    records: [{ key: 'expired', value: now }],
    response: undefined,
  })
  // Three timers fall due together: their operations share one store write.
  for (let i = 0; i < 3; i++) s.runtime.scheduleTimer(0, `member-${i}`, 100, op)
  store.failNextAppend()
  s.clock.advance(100)
  await drain(s, 0)
  assert.deepEqual(
    warnings.filter((w) => w.msg.startsWith('Failed to write')),
    [{ msg: 'Failed to write records of 3 coordinator operations', operations: 3 }],
  )
  await s.runtime.close()
})

test('periodic compaction runs on every active shard at the interval, through the shard queues', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store, 3, { compactionIntervalMs: 60_000 })
  for (let i = 0; i < 5; i++) await s.runtime.scheduleWriteOperation('w', 1, incr('a'))
  assert.equal((await store.inner.load(1)).length, 5)
  s.clock.advance(60_000)
  for (let shard = 0; shard < 3; shard++) await drain(s, shard)
  assert.deepEqual(
    store.calls.filter((c) => c.startsWith('compact')),
    ['compact:0', 'compact:1', 'compact:2'],
  )
  assert.equal((await store.inner.load(1)).length, 1)
  s.clock.advance(60_000)
  for (let shard = 0; shard < 3; shard++) await drain(s, shard)
  assert.equal(store.calls.filter((c) => c.startsWith('compact')).length, 6)
  await s.runtime.close()
  assert.equal(s.clock.pendingTimers, 0)
})

test('close drains queued operations, stops timers, refuses new work (NOT_COORDINATOR) and closes the store', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store, 2)
  s.runtime.scheduleTimer(1, 't', 10, () => ({ records: [], response: undefined }))
  store.gate()
  const started = store.nextAppend()
  const inFlight = [
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    s.runtime.scheduleReadOperation('r', 0, (sh) => sh.map.get('a')),
  ]
  await started
  const closing = s.runtime.close()
  assert.equal(s.clock.pendingTimers, 0, 'timers stopped at once')
  await assert.rejects(
    s.runtime.scheduleWriteOperation('w', 1, incr('b')),
    runtimeError('COORDINATOR_NOT_ACTIVE', 'NOT_COORDINATOR'),
  )
  let closed = false
  void closing.then(() => {
    closed = true
  })
  await new Promise((r) => setImmediate(r))
  assert.equal(closed, false, 'close waits for the in-flight append')
  store.release()
  assert.deepEqual(await Promise.all(inFlight), [1, 2, 2])
  await closing
  assert.equal(store.closed, true)
  await s.runtime.close() // twice is fine
})

test('closeStore: false leaves a shared store open', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 1, { closeStore: false })
  await s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  await s.runtime.close()
  assert.equal((await store.load(0)).length, 1)
  await store.close()
})

test('timer intents in a write result are applied after the append and replay, and dropped when the append fails', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 1)
  assert.equal(s.runtime.timer(0), s.shards.get(0)!.timer, 'one ShardTimer per shard')
  const fired: string[] = []
  const expire =
    (key: string): TimerOperation<KvRecord> =>
    (now) => {
      fired.push(`${key}@${now}`)
      return { records: [{ key, value: null }], response: undefined }
    }
  const join =
    (member: string): WriteOperation<KvShard, KvRecord, string> =>
    () => ({
      records: [{ key: member, value: 1 }],
      response: member,
      timers: {
        cancel: [`session-${member}`],
        schedule: [{ key: `session-${member}`, delayMs: 45_000, op: expire(member) }],
      },
    })
  assert.equal(await s.runtime.scheduleWriteOperation('join', 0, join('m1')), 'm1')
  assert.equal(s.runtime.timer(0).isScheduled('session-m1'), true)

  store.failNextAppend()
  await assert.rejects(s.runtime.scheduleWriteOperation('join', 0, join('m2')), CoordinatorWriteError)
  assert.equal(
    s.runtime.timer(0).isScheduled('session-m2'),
    false,
    'no timer for a write that did not happen',
  )

  // A write without records may still cancel timers.
  await s.runtime.scheduleWriteOperation('leave', 0, () => ({
    records: [],
    response: undefined,
    timers: { cancel: ['session-m1', 'unknown-key'] },
  }))
  assert.equal(s.runtime.timer(0).isScheduled('session-m1'), false)
  await s.runtime.scheduleWriteOperation('join', 0, join('m3'))
  s.clock.advance(45_000)
  await drain(s, 0)
  assert.deepEqual(fired, ['m3@1045000'])
  assert.deepEqual(s.shards.get(0)!.snapshot(), [['m1', 1]])

  // Malformed intents are refused before anything is written.
  const before = (await store.load(0)).length
  await assert.rejects(
    s.runtime.scheduleWriteOperation('bad', 0, () => ({
      records: [{ key: 'x', value: 1 }],
      response: undefined,
      timers: { schedule: [{ key: 't', delayMs: -1, op: expire('x') }] },
    })),
    /timer t: delayMs must be >= 0/,
  )
  assert.equal((await store.load(0)).length, before)
  await s.runtime.close()
})

// ---- writeOperationNowOrLater: record-less writes on an idle queue complete in the caller's turn ----

/** Reads a key, writes nothing, and (optionally) asks for a timer. */
function peek(key: string, timer?: string): WriteOperation<KvShard, KvRecord, number | undefined> {
  return (shard) => ({
    records: [],
    response: shard.map.get(key),
    timers:
      timer === undefined
        ? undefined
        : { schedule: [{ key: timer, delayMs: 10_000, op: () => ({ records: [], response: undefined }) }] },
  })
}

test('writeOperationNowOrLater: on an idle shard, a write without records answers at once (no promise) and arms its timers', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  await s.runtime.scheduleWriteOperation('w', 0, incr('a', 7))
  const answer = s.runtime.writeOperationNowOrLater('peek', 0, peek('a', 'session-a'))
  assert.equal(answer, 7, 'the response itself, not a promise')
  assert.equal(s.runtime.timer(0).isScheduled('session-a'), true, 'timer intents applied at once')
  // Repeatedly, and on other shards.
  assert.equal(s.runtime.writeOperationNowOrLater('peek', 0, peek('a')), 7)
  assert.equal(s.runtime.writeOperationNowOrLater('peek', 1, peek('a')), undefined)
  assert.deepEqual(
    store.calls.filter((c) => c.startsWith('append')),
    ['append:0:1'],
  )
  await s.runtime.close()
})

test('writeOperationNowOrLater: behind a write whose append is in flight, a write without records waits until that write is durable and replayed', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  store.gate()
  const appendStarted = store.nextAppend()
  const first = s.runtime.scheduleWriteOperation('w', 0, incr('a', 3))
  await appendStarted
  const events: string[] = []
  void first.then(() => events.push('first'))
  const later = s.runtime.writeOperationNowOrLater('peek', 0, peek('a', 'session-a'))
  assert.ok(later instanceof Promise, 'queued behind the pending write')
  void later.then((v) => events.push(`peek=${String(v)}`))
  // Another shard is not held up.
  assert.equal(s.runtime.writeOperationNowOrLater('peek', 1, peek('a')), undefined)
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
  assert.deepEqual(events, [], 'nothing answered while the append is in flight')
  assert.equal(s.runtime.timer(0).isScheduled('session-a'), false, 'no timer armed before its turn')
  store.release()
  assert.equal(await later, 3, 'the queued write sees the earlier write replayed')
  assert.deepEqual(events, ['first', 'peek=3'])
  assert.equal(s.runtime.timer(0).isScheduled('session-a'), true)
  // Once the queue has drained, writes without records answer at once again.
  assert.equal(s.runtime.writeOperationNowOrLater('peek', 0, peek('a')), 3)
  await s.runtime.close()
})

test('writeOperationNowOrLater: behind queued reads and writes without records, it still keeps the queue order', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 1)
  const order: string[] = []
  const read = s.runtime.scheduleReadOperation('r', 0, () => order.push('read'))
  const op: WriteOperation<KvShard, KvRecord, string> = () => {
    order.push('write')
    return { records: [], response: 'done' }
  }
  const write = s.runtime.writeOperationNowOrLater('w', 0, op)
  assert.ok(write instanceof Promise)
  assert.deepEqual(order, [], 'the operation did not run ahead of the queued read')
  await Promise.all([read, write])
  assert.deepEqual(order, ['read', 'write'])
  assert.equal(s.runtime.writeOperationNowOrLater('w', 0, op), 'done')
  await s.runtime.close()
})

test('writeOperationNowOrLater: a write with records on an idle shard runs at once, commits in the queue, and later operations wait for it', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  store.gate()
  const appendStarted = store.nextAppend()
  let ran = 0
  const op: WriteOperation<KvShard, KvRecord, number> = (shard, now) => {
    ran++
    return incr('a', 5)(shard, now)
  }
  const write = s.runtime.writeOperationNowOrLater('w', 2, op)
  assert.equal(ran, 1, 'the operation ran in the caller turn')
  assert.ok(write instanceof Promise)
  await appendStarted
  const behind = s.runtime.writeOperationNowOrLater('peek', 2, peek('a'))
  assert.ok(behind instanceof Promise, 'queued behind the commit')
  const read = s.runtime.scheduleReadOperation('r', 2, (shard) => shard.map.get('a'))
  assert.equal(s.shards.get(2)!.map.has('a'), false, 'nothing replayed before the append completed')
  store.release()
  assert.deepEqual(await Promise.all([write, behind, read]), [5, 5, 5])
  assert.equal(ran, 1, 'the operation ran once')
  assert.deepEqual(
    store.calls.filter((c) => c.startsWith('append')),
    ['append:2:1'],
  )
  // A failed append rejects as scheduleWriteOperation does and replays nothing.
  store.failNextAppend()
  const failed = s.runtime.writeOperationNowOrLater('w', 2, incr('a'))
  await assert.rejects(Promise.resolve(failed), CoordinatorWriteError)
  assert.equal(s.runtime.writeOperationNowOrLater('peek', 2, peek('a')), 5)
  await s.runtime.close()
})

test('writeOperationNowOrLater: failures come as rejected promises (operation error, malformed result, shard not active)', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = setup(store)
  const early = s.runtime.writeOperationNowOrLater('w', 0, peek('a'))
  assert.ok(early instanceof Promise)
  await assert.rejects(early, runtimeError('COORDINATOR_LOADING', 'COORDINATOR_LOAD_IN_PROGRESS'))
  await s.runtime.load()
  const boom = new Error('boom')
  const thrown = s.runtime.writeOperationNowOrLater('w', 0, () => {
    throw boom
  })
  assert.ok(thrown instanceof Promise)
  await assert.rejects(thrown, (e) => e === boom)
  const malformed = s.runtime.writeOperationNowOrLater('w', 0, () => ({
    records: [],
    response: undefined,
    timers: { schedule: [{ key: 't', delayMs: -1, op: () => ({ records: [], response: undefined }) }] },
  }))
  await assert.rejects(Promise.resolve(malformed), /timer t: delayMs must be >= 0/)
  assert.equal(s.runtime.timer(0).isScheduled('t'), false)
  await assert.rejects(
    Promise.resolve(s.runtime.writeOperationNowOrLater('w', 9, peek('a'))),
    /not hosted here/,
  )
  await s.runtime.close()
  await assert.rejects(
    Promise.resolve(s.runtime.writeOperationNowOrLater('w', 0, peek('a'))),
    runtimeError('COORDINATOR_NOT_ACTIVE', 'NOT_COORDINATOR'),
  )
})

test('writeOperationNowOrLater: a timer that fired is in the queue, and a write without records waits behind it', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store, 1)
  s.runtime.scheduleTimer(0, 'expire', 100, () => ({
    records: [{ key: 'expired', value: 1 }],
    response: undefined,
  }))
  store.gate()
  const appendStarted = store.nextAppend()
  s.clock.advance(100)
  await appendStarted
  const later = s.runtime.writeOperationNowOrLater('peek', 0, peek('expired'))
  assert.ok(later instanceof Promise)
  store.release()
  assert.equal(await later, 1)
  assert.equal(s.runtime.writeOperationNowOrLater('peek', 0, peek('expired')), 1)
  await s.runtime.close()
})

test('timers: a watch is told whether its timer is armed (scheduled, replaced in place, replaced by another watch, cancelled, run, stopped)', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store, 1)
  const timer = s.runtime.timer(0)
  const noop: TimerOperation<KvRecord> = () => ({ records: [], response: undefined })
  const t0 = s.clock.now()
  const a = { armed: false, dueMs: 0 }
  const b = { armed: false, dueMs: 0 }
  timer.schedule('t', 100, noop, { watch: a })
  assert.deepEqual(a, { armed: true, dueMs: t0 + 100 })
  // A later deadline with the same watch keeps it armed; another watch takes over.
  timer.schedule('t', 200, noop, { watch: a })
  assert.deepEqual(a, { armed: true, dueMs: t0 + 200 })
  timer.schedule('t', 300, noop, { watch: b })
  assert.deepEqual([a.armed, b], [false, { armed: true, dueMs: t0 + 300 }])
  // An earlier deadline makes a new entry: the old watch is told, the new one armed.
  timer.schedule('t', 50, noop, { watch: a })
  assert.deepEqual([a, b.armed], [{ armed: true, dueMs: t0 + 50 }, false])
  timer.cancel('t')
  assert.equal(a.armed, false)
  // Through a write's timer intents, then run: disarmed when its operation runs.
  await s.runtime.scheduleWriteOperation('w', 0, () => ({
    records: [],
    response: undefined,
    timers: { schedule: [{ key: 't', delayMs: 100, op: noop, watch: a }] },
  }))
  assert.equal(a.armed, true)
  s.clock.advance(100)
  await drain(s, 0)
  assert.equal(a.armed, false)
  // A timer whose operation schedules itself again (same watch) stays armed.
  const again: TimerOperation<KvRecord> = () => ({
    records: [],
    response: undefined,
    timers: { schedule: [{ key: 't', delayMs: 100, op: noop, watch: a }] },
  })
  timer.schedule('t', 100, again, { watch: a })
  s.clock.advance(100)
  await drain(s, 0)
  assert.equal(a.armed, true)
  // A malformed watch is refused before anything is written.
  await assert.rejects(
    Promise.resolve(
      s.runtime.writeOperationNowOrLater('bad', 0, () => ({
        records: [],
        response: undefined,
        timers: {
          schedule: [
            { key: 'u', delayMs: 1, op: noop, watch: 7 as unknown as { armed: boolean; dueMs: number } },
          ],
        },
      })),
    ),
    /timer u: watch must be an object/,
  )
  // Closing stops every timer.
  await s.runtime.close()
  assert.equal(a.armed, false)
})

test('timers: a shard that stops after a failed replay tells its watches', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const s = await loaded(store, 1)
  const w = { armed: false, dueMs: 0 }
  s.runtime.timer(0).schedule('t', 100, () => ({ records: [], response: undefined }), { watch: w })
  s.shards.get(0)!.poison = 'bad'
  await assert.rejects(
    s.runtime.scheduleWriteOperation('w', 0, () => ({ records: [{ key: 'bad', value: 1 }], response: 1 })),
    runtimeError('COORDINATOR_SHARD_FAILED', 'NOT_COORDINATOR'),
  )
  assert.equal(w.armed, false)
  await s.runtime.close()
})

test('completions: delivered once the records are durable, or with the failure when the append fails', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const delivered: [number, string, string][] = []
  const shards = new Map<number, KvShard>()
  const clock = new ManualClock(1_000_000)
  const runtime = new CoordinatorRuntime<KvShard, KvRecord, string>({
    store,
    numShards: 1,
    serde: kvSerde,
    clock,
    newShard: (id, timer) => {
      const s = new KvShard(id, timer as never)
      shards.set(id, s)
      return s
    },
    complete: (shardId, completion, failure) =>
      delivered.push([shardId, completion, failure === undefined ? 'ok' : (failure as Error).name]),
  })
  await runtime.load()
  await runtime.scheduleWriteOperation('a', 0, () => ({
    records: [{ key: 'a', value: 1 }],
    response: undefined,
    completions: ['first', 'second'],
  }))
  store.failNextAppend()
  await assert.rejects(
    runtime.scheduleWriteOperation('b', 0, () => ({
      records: [{ key: 'b', value: 1 }],
      response: undefined,
      completions: ['lost'],
    })),
    CoordinatorWriteError,
  )
  // Without records: delivered at once; a timer's completions too.
  runtime.scheduleTimer(0, 't', 10, () => ({ records: [], response: undefined, completions: ['timer'] }))
  clock.advance(10)
  await runtime.scheduleReadOperation('drain', 0, () => undefined)
  assert.deepEqual(delivered, [
    [0, 'first', 'ok'],
    [0, 'second', 'ok'],
    [0, 'lost', 'CoordinatorWriteError'],
    [0, 'timer', 'ok'],
  ])
  await runtime.close()
})

test('write timeout: a write not answered within writeTimeoutMs rejects with CoordinatorTimeoutError and still completes', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store, 1, { writeTimeoutMs: 100 })
  store.gate()
  const started = store.nextAppend()
  const slow = s.runtime.scheduleWriteOperation('slow', 0, incr('a'))
  const other = s.runtime.scheduleWriteOperation('other', 0, incr('b'), 1_000)
  await started
  s.clock.advance(100)
  await assert.rejects(
    slow,
    (e: unknown) => e instanceof CoordinatorTimeoutError && e.kafkaError === 'COORDINATOR_NOT_AVAILABLE',
  )
  store.release()
  assert.equal(await other, 1, 'a longer timeout of its own')
  assert.deepEqual(s.shards.get(0)!.snapshot(), [
    ['a', 1],
    ['b', 1],
  ])
  assert.equal(s.clock.pendingTimers, 0, 'no timeout timer left')
  await s.runtime.close()
})

test('batching: writes of one shard queued together share one store write, each seeing the last', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  const answers = await Promise.all([
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    s.runtime.scheduleWriteOperation('w', 0, incr('b', 5)),
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
  ])
  assert.deepEqual(answers, [1, 2, 5, 3])
  assert.deepEqual(
    store.calls.filter((c) => !c.startsWith('load')),
    ['append:0:4'],
  )
  assert.deepEqual(s.shards.get(0)!.snapshot(), [
    ['a', 3],
    ['b', 5],
  ])
  // Replaying the log into a fresh shard gives the same state.
  const fresh = await loaded(store.inner, 4, { closeStore: false })
  assert.deepEqual(fresh.shards.get(0)!.snapshot(), s.shards.get(0)!.snapshot())
  await fresh.runtime.close()
  await s.runtime.close()
})

test('batching: writes queued while a write is in flight go together in the next, answered once durable', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  store.gate()
  const started = store.nextAppend()
  const first = s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  await started
  const events: string[] = []
  const next = [1, 2, 3].map((i) =>
    s.runtime.scheduleWriteOperation('w', 0, incr('a')).then((v) => {
      events.push(`w${i}=${v}`)
      return v
    }),
  )
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
  assert.deepEqual(events, [], 'nothing answered before its write')
  assert.equal(store.waitingAppends, 1)
  const secondStarted = store.nextAppend()
  store.release()
  store.gate()
  assert.equal(await first, 1)
  await secondStarted
  assert.deepEqual(events, [], 'the batch is not answered while its write is in flight')
  assert.equal(s.runtime.hasUnwrittenRecords(0), true, 'memory is ahead of the log')
  assert.equal(s.runtime.hasUnwrittenRecords(1), false)
  store.release()
  assert.deepEqual(await Promise.all(next), [2, 3, 4])
  assert.equal(s.runtime.hasUnwrittenRecords(0), false)
  assert.deepEqual(events, ['w1=2', 'w2=3', 'w3=4'], 'answered in queue order')
  assert.deepEqual(
    store.calls.filter((c) => !c.startsWith('load')),
    ['append:0:1', 'append:0:3'],
  )
  await s.runtime.close()
})

test('batching: a write that throws fails alone; a read splits the batch and sees durable state', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  const boom: WriteOperation<KvShard, KvRecord, number> = () => {
    throw new Error('boom')
  }
  const results = await Promise.allSettled([
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    s.runtime.scheduleWriteOperation('boom', 0, boom),
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    s.runtime.scheduleReadOperation('r', 0, (sh) => sh.map.get('a')),
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
  ])
  assert.deepEqual(
    results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
    [1, 'boom', 2, 2, 3],
  )
  assert.deepEqual(
    store.calls.filter((c) => !c.startsWith('load')),
    ['append:0:2', 'append:0:1'],
  )
  await s.runtime.close()
})

test('batching: a failed batch fails exactly its writes and reloads the shard from its log', async () => {
  const store = new GatedStore()
  await store.open()
  const reloaded: number[] = []
  const s = await loaded(store, 4, { onReload: (id: number) => reloaded.push(id) })
  await s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  const before = s.shards.get(0)!
  s.runtime.timer(0).schedule('t', 60_000, () => ({ records: [], response: undefined }))
  store.failNextAppend()
  const failing = [
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    s.runtime.scheduleWriteOperation('w', 0, incr('c')),
  ]
  // Another shard's write in the same group commit fails with it; that shard needs no reload.
  const other = s.runtime.scheduleWriteOperation('w', 1, incr('b'))
  for (const p of [...failing, other]) {
    await assert.rejects(
      p,
      (e: unknown) => e instanceof CoordinatorWriteError && e.kafkaError === 'NOT_COORDINATOR',
    )
  }
  // Written again after the failure: runs on the reloaded shard, which holds exactly the log.
  assert.equal(await s.runtime.scheduleWriteOperation('w', 0, incr('a')), 2)
  const after = s.shards.get(0)!
  assert.notEqual(after, before, 'a fresh shard replayed the log')
  assert.deepEqual(after.snapshot(), [['a', 2]])
  assert.equal(after.loadedAt, s.clock.now(), 'onLoaded ran again')
  assert.equal(s.runtime.timer(0).isScheduled('t'), false, "the discarded shard's timers are gone")
  assert.equal(s.shards.get(1), s.shards.get(1), 'shard 1 kept')
  assert.equal(await s.runtime.scheduleWriteOperation('w', 1, incr('b')), 1)
  assert.deepEqual((await store.inner.load(0)).length, 2)
  assert.deepEqual(reloaded, [0], 'the reload hook is told, for the reloaded shard only')
  await s.runtime.close()
})

test('batching: a lone write that fails leaves the shard as it was (no reload)', async () => {
  const store = new GatedStore()
  await store.open()
  const reloaded: number[] = []
  const s = await loaded(store, 4, { onReload: (id: number) => reloaded.push(id) })
  await s.runtime.scheduleWriteOperation('w', 0, incr('a'))
  const before = s.shards.get(0)!
  store.failNextAppend()
  await assert.rejects(s.runtime.scheduleWriteOperation('w', 0, incr('a')), CoordinatorWriteError)
  assert.deepEqual(reloaded, [])
  assert.equal(s.shards.get(0), before)
  assert.deepEqual(before.snapshot(), [['a', 1]])
  assert.equal(store.calls.filter((c) => c === 'load:0').length, 1, 'loaded once, at start')
  await s.runtime.close()
})

test('batching: a replay that throws before the batch is written stops the shard and writes nothing', async () => {
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store)
  s.shards.get(0)!.poison = 'bad'
  const results = await Promise.allSettled([
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
    s.runtime.scheduleWriteOperation('w', 0, incr('bad')),
    s.runtime.scheduleWriteOperation('w', 0, incr('a')),
  ])
  for (const r of results) {
    assert.equal(r.status, 'rejected')
    assert.ok(r.reason instanceof CoordinatorRuntimeError)
    assert.equal((r.reason as CoordinatorRuntimeError).kafkaError, 'NOT_COORDINATOR')
  }
  assert.equal((await store.inner.load(0)).length, 0, 'nothing of the batch was written')
  assert.equal(s.runtime.isActive(0), false)
  await s.runtime.close()
})

test('loading holds the records of one shard at a time: a shard is replayed before the next is read', async () => {
  // Loading every shard at once read every shard's records before any was replayed (the SQLite
  // store reads a shard in one synchronous call): after a restart the whole log was in memory at
  // once, and the process kept that peak in its RSS (RELIABILITY.md, "Soak").
  const store = new MemoryRecordStore()
  await store.open()
  for (let shard = 0; shard < 6; shard++) {
    await store.append(shard, [kvSerde.serialize({ key: `k${shard}`, value: shard + 1 })])
  }
  const events: string[] = []
  let unreplayed = 0
  let mostUnreplayed = 0
  const counting: RecordStore = {
    open: () => store.open(),
    append: (shard, records) => store.append(shard, records),
    load: async (shard) => {
      const records = await store.load(shard)
      unreplayed += records.length
      mostUnreplayed = Math.max(mostUnreplayed, unreplayed)
      events.push(`read ${shard}`)
      return records
    },
    compact: (shard) => store.compact(shard),
    close: () => store.close(),
  }
  const runtime = new CoordinatorRuntime<KvShard, KvRecord>({
    store: counting,
    numShards: 6,
    serde: kvSerde,
    clock: new ManualClock(1_000_000),
    newShard: (id, timer) => new KvShard(id, timer),
    onShardReplayed: (id, shard) => {
      unreplayed -= shard.map.size
      events.push(`replayed ${id}`)
    },
  })
  await runtime.load()
  assert.equal(mostUnreplayed, 1, "one shard's records at most were waiting for their replay")
  assert.deepEqual(
    events,
    [0, 1, 2, 3, 4, 5].flatMap((id) => [`read ${id}`, `replayed ${id}`]),
  )
  for (let shard = 0; shard < 6; shard++)
    assert.equal(runtime.peekShard(shard)?.map.get(`k${shard}`), shard + 1)
  await runtime.close()
})

test('onShardReplayed sees each shard as loading rebuilt it, before on-loaded; peekShard reads it', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const first = await loaded(store, 2, { closeStore: false })
  await first.runtime.scheduleWriteOperation('w', 1, incr('k', 5))
  assert.equal(first.runtime.peekShard(1)?.map.get('k'), 5)
  await first.runtime.close()
  const seen: [number, number | undefined, number | undefined][] = []
  const clock = new ManualClock(1_000_000)
  const runtime = new CoordinatorRuntime<KvShard, KvRecord>({
    store,
    numShards: 2,
    serde: kvSerde,
    clock,
    closeStore: false,
    newShard: (id, timer) => new KvShard(id, timer),
    onShardReplayed: (id, shard) => seen.push([id, shard.map.get('k'), shard.loadedAt]),
  })
  assert.equal(runtime.peekShard(0), undefined, 'nothing before loading')
  await runtime.load()
  assert.deepEqual(
    seen.sort((a, b) => a[0] - b[0]),
    [
      [0, undefined, undefined],
      [1, 5, undefined],
    ],
    'replayed, on-loaded not yet run',
  )
  assert.equal(runtime.peekShard(1)?.loadedAt, 1_000_000)
  await runtime.close()
})

test('a read queued behind a stalled append times out after readTimeoutMs; the queue goes on after', async () => {
  // Found by the simulation (seed 5069): a store that stalls held DescribeGroups and the other
  // reads behind the stalled write with no deadline, while the write itself timed out.
  const store = new GatedStore()
  await store.open()
  const s = await loaded(store, 1, { writeTimeoutMs: 5000, readTimeoutMs: 5000 })
  store.gate()
  const write = s.runtime.scheduleWriteOperation('w', 0, incr('k'))
  const read = s.runtime.scheduleReadOperation('r', 0, (shard) => shard.map.get('k'))
  let settled = false
  read.then(
    () => {
      settled = true
    },
    () => {
      settled = true
    },
  )
  s.clock.advance(4999)
  await new Promise((r) => setImmediate(r))
  assert.equal(settled, false, 'not before its deadline')
  s.clock.advance(1)
  await assert.rejects(read, (e) => e instanceof CoordinatorTimeoutError)
  await assert.rejects(write, (e) => e instanceof CoordinatorTimeoutError)
  store.release()
  // The write still completes (as in Kafka) and a later read sees it.
  assert.equal(await s.runtime.scheduleReadOperation('r2', 0, (shard) => shard.map.get('k')), 1)
  await s.runtime.close()
})
