// The contract every record store engine must meet (test/coordinator/storage/*.test.ts run it
// against each engine). It only relies on what RecordStore and FaultInjection promise.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { StorageError } from '../../../src/coordinator/storage/errors.js'
import type {
  CoordinatorRecord,
  FaultInjection,
  LaidOutRecord,
  RecordStore,
} from '../../../src/coordinator/storage/types.js'

export type ContractStore = RecordStore & FaultInjection

export interface ContractHarness {
  /** A fresh, opened, empty store. */
  readonly store: ContractStore
  /**
   * Closes nothing; returns a new opened store over the same durable data (after the caller closed
   * `store`). Engines without durability leave it out.
   */
  readonly reopen?: () => Promise<ContractStore>
  /** Removes whatever the harness created (files, directories). */
  readonly cleanup: () => Promise<void>
}

const enc = new TextEncoder()
const dec = new TextDecoder()

/**
 * Records laid out one after another in one buffer, as the coordinator's encoder carves them out of
 * its slab: each also tells where its bytes lie, and makes its key and value views when read.
 */
export function laidOut(
  entries: readonly [string, string | null][],
  pad = 0,
): { bytes: Uint8Array; records: LaidOutRecord[] } {
  const parts = entries.map(([k, v]) => [enc.encode(k), v === null ? null : enc.encode(v)] as const)
  const size = parts.reduce((n, [k, v]) => n + k.byteLength + (v?.byteLength ?? 0), pad)
  const bytes = new Uint8Array(size + pad).fill(0xee)
  let at = pad
  const records = parts.map(([k, v]) => {
    const offset = at
    bytes.set(k, at)
    at += k.byteLength
    if (v !== null) bytes.set(v, at)
    at += v?.byteLength ?? 0
    const keyLength = k.byteLength
    const valueLength = v === null ? -1 : v.byteLength
    return {
      bytes,
      offset,
      keyLength,
      valueLength,
      get key() {
        return bytes.subarray(offset, offset + keyLength)
      },
      get value() {
        return valueLength < 0 ? null : bytes.subarray(offset + keyLength, offset + keyLength + valueLength)
      },
    }
  })
  return { bytes, records }
}

export function rec(key: string, value: string | null): CoordinatorRecord {
  return { key: enc.encode(key), value: value === null ? null : enc.encode(value) }
}

/** Records as [key, value] strings, for readable assertions. */
export function show(records: readonly CoordinatorRecord[]): [string, string | null][] {
  return records.map((r) => [dec.decode(r.key), r.value === null ? null : dec.decode(r.value)])
}

/** What compaction must leave of a log: the last record of every key, unless it is a tombstone, in log order. */
function compactModel(log: readonly [string, string | null][]): [string, string | null][] {
  const last = new Map<string, number>()
  for (let i = 0; i < log.length; i++) last.set(log[i][0], i)
  return log.filter(([k, v], i) => v !== null && last.get(k) === i)
}

/**
 * What `load` with `latestOnly` must return of a log: every record of a key `accepts` refuses; of
 * the others the last record of the key, unless it is a tombstone; in log order.
 */
function latestModel(
  log: readonly [string, string | null][],
  accepts: (key: string) => boolean,
): [string, string | null][] {
  const last = new Map<string, number>()
  for (let i = 0; i < log.length; i++) last.set(log[i][0], i)
  return log.filter(([k, v], i) => !accepts(k) || (v !== null && last.get(k) === i))
}

/** A `latestOnly` that accepts the keys `accepts` accepts, reading each where the store holds it. */
function latestOnlyOf(accepts: (key: string) => boolean) {
  return (bytes: Uint8Array, offset: number, length: number): boolean =>
    accepts(dec.decode(bytes.subarray(offset, offset + length)))
}

async function rejectsWithCode(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof StorageError, `expected a StorageError, got ${String(e)}`)
    assert.equal(e.code, code)
    return true
  })
}

export function runRecordStoreContract(name: string, factory: () => Promise<ContractHarness>): void {
  describe(`RecordStore contract: ${name}`, () => {
    let h: ContractHarness
    let store: ContractStore
    const fresh = async (): Promise<void> => {
      if (h !== undefined) {
        await h.store.close()
        await h.cleanup()
      }
      h = await factory()
      store = h.store
    }
    before(fresh)
    after(async () => {
      await h.store.close()
      await h.cleanup()
    })

    test('an empty shard loads as an empty list', async () => {
      await fresh()
      assert.deepEqual(await store.load(0), [])
      assert.deepEqual(await store.load(49), [])
    })

    test('load returns the records of a shard in append order, bytes intact', async () => {
      await fresh()
      await store.append(3, [rec('a', '1'), rec('b', '2')])
      await store.append(3, [rec('c', '3')])
      await store.append(3, [])
      await store.append(3, [rec('a', '4')])
      assert.deepEqual(show(await store.load(3)), [
        ['a', '1'],
        ['b', '2'],
        ['c', '3'],
        ['a', '4'],
      ])
      const binary = new Uint8Array(256).map((_, i) => i)
      await store.append(4, [{ key: binary, value: binary.slice().reverse() }])
      const [r] = await store.load(4)
      assert.deepEqual(new Uint8Array(r.key), binary)
      assert.deepEqual(new Uint8Array(r.value!), binary.slice().reverse())
    })

    test('an empty value is a value, not a tombstone', async () => {
      await fresh()
      await store.append(0, [{ key: enc.encode('k'), value: new Uint8Array(0) }])
      await store.compact(0)
      const loaded = await store.load(0)
      assert.equal(loaded.length, 1)
      assert.ok(loaded[0].value instanceof Uint8Array)
      assert.equal(loaded[0].value.byteLength, 0)
    })

    test('a Uint8Array view into a larger buffer stores only its own bytes', async () => {
      await fresh()
      const backing = enc.encode('xxkeyxxvaluexx')
      await store.append(0, [{ key: backing.subarray(2, 5), value: backing.subarray(7, 12) }])
      assert.deepEqual(show(await store.load(0)), [['key', 'value']])
    })

    test('shards are independent logs (many shards, interleaved appends)', async () => {
      await fresh()
      for (let round = 0; round < 3; round++) {
        for (let shard = 0; shard < 50; shard++) {
          await store.append(shard, [rec(`k${round}`, `s${shard}r${round}`)])
        }
      }
      for (let shard = 0; shard < 50; shard++) {
        assert.deepEqual(show(await store.load(shard)), [
          ['k0', `s${shard}r0`],
          ['k1', `s${shard}r1`],
          ['k2', `s${shard}r2`],
        ])
      }
      await store.compact(7)
      assert.equal((await store.load(8)).length, 3)
    })

    test('failNextAppend: the next append rejects, writes nothing, and fires once', async () => {
      await fresh()
      await store.append(1, [rec('a', '1')])
      store.failNextAppend()
      await rejectsWithCode(
        store.append(1, [rec('b', '2'), rec('c', '3'), rec('d', '4')]),
        'STORAGE_INJECTED_FAILURE',
      )
      assert.deepEqual(show(await store.load(1)), [['a', '1']])
      await store.append(1, [rec('e', '5')])
      assert.deepEqual(show(await store.load(1)), [
        ['a', '1'],
        ['e', '5'],
      ])
    })

    test('failNextAppend with a given error rejects with that error, on whichever shard appends next', async () => {
      await fresh()
      const boom = new Error('disk on fire')
      store.failNextAppend(boom)
      await assert.rejects(store.append(9, [rec('x', '1')]), (e) => e === boom)
      assert.deepEqual(await store.load(9), [])
      store.failNextAppend()
      await rejectsWithCode(store.append(2, []), 'STORAGE_INJECTED_FAILURE')
      await store.append(2, [rec('y', '1')])
      assert.deepEqual(show(await store.load(2)), [['y', '1']])
    })

    test('appendBatches (group commit): several shards in one write, in order, all or nothing', async () => {
      await fresh()
      if (store.appendBatches === undefined) return
      await store.append(1, [rec('a', '1')])
      await store.appendBatches([
        { shard: 1, records: [rec('b', '2')] },
        { shard: 3, records: [rec('x', '1'), rec('y', '2')] },
        { shard: 1, records: [rec('c', '3')] },
      ])
      assert.deepEqual(show(await store.load(1)), [
        ['a', '1'],
        ['b', '2'],
        ['c', '3'],
      ])
      assert.deepEqual(show(await store.load(3)), [
        ['x', '1'],
        ['y', '2'],
      ])
      // A failed group write writes nothing of any of its batches; the next appends carry on.
      store.failNextAppend()
      await rejectsWithCode(
        store.appendBatches([
          { shard: 1, records: [rec('d', '4')] },
          { shard: 4, records: [rec('z', '9')] },
        ]),
        'STORAGE_INJECTED_FAILURE',
      )
      assert.equal((await store.load(1)).length, 3)
      assert.deepEqual(await store.load(4), [])
      await store.appendBatches([
        { shard: 1, records: [rec('e', '5')] },
        { shard: 4, records: [rec('z', '9')] },
      ])
      assert.deepEqual(show(await store.load(1)).at(-1), ['e', '5'])
      assert.deepEqual(show(await store.load(4)), [['z', '9']])
    })

    test('records that tell where their bytes lie store those bytes, mixed with others', async () => {
      await fresh()
      // Two runs in one buffer (the first record of the second is not where the first run ends),
      // tombstones among them, a run in another buffer, and plain records in between.
      const a = laidOut([
        ['k1', 'one'],
        ['k2', null],
        ['k3', ''],
        ['k4', 'four'],
      ])
      const b = laidOut(
        [
          ['k5', 'five'],
          ['k6', 'six'],
        ],
        7,
      )
      await store.append(2, [a.records[0], a.records[1], rec('p', 'plain'), a.records[2], a.records[3]])
      await store.append(2, [a.records[3], a.records[0], ...b.records, rec('q', null)])
      await store.appendBatches?.([{ shard: 3, records: [...b.records, a.records[1]] }])
      // The caller may write over its buffers once the append has settled.
      a.bytes.fill(0)
      b.bytes.fill(0)
      assert.deepEqual(show(await store.load(2)), [
        ['k1', 'one'],
        ['k2', null],
        ['p', 'plain'],
        ['k3', ''],
        ['k4', 'four'],
        ['k4', 'four'],
        ['k1', 'one'],
        ['k5', 'five'],
        ['k6', 'six'],
        ['q', null],
      ])
      if (store.appendBatches !== undefined)
        assert.deepEqual(show(await store.load(3)), [
          ['k5', 'five'],
          ['k6', 'six'],
          ['k2', null],
        ])
      await store.compact(2)
      assert.deepEqual(show(await store.load(2)), [
        ['p', 'plain'],
        ['k3', ''],
        ['k4', 'four'],
        ['k1', 'one'],
        ['k5', 'five'],
        ['k6', 'six'],
      ])
    })

    test('a record whose bytes lie beyond its buffer is rejected with the whole batch', async () => {
      await fresh()
      const { records } = laidOut([['k', 'v']])
      const beyond = [
        { ...records[0], keyLength: 1, valueLength: 5, key: enc.encode('k'), value: enc.encode('v') },
      ]
      for (const bad of [
        beyond,
        [{ ...beyond[0], offset: -1 }],
        [{ ...beyond[0], valueLength: -2 }],
        [{ ...beyond[0], bytes: 'text' }],
      ]) {
        await rejectsWithCode(
          store.append(0, [rec('a', '1'), ...(bad as unknown as CoordinatorRecord[])]),
          'STORAGE_INVALID_ARGUMENT',
        )
      }
      assert.deepEqual(await store.load(0), [])
    })

    test('a batch with a bad record midway is rejected whole', async () => {
      await fresh()
      const bad = [
        rec('a', '1'),
        { key: 'not bytes', value: null },
        rec('c', '3'),
      ] as unknown as CoordinatorRecord[]
      await rejectsWithCode(store.append(0, bad), 'STORAGE_INVALID_ARGUMENT')
      const badValue = [
        rec('a', '1'),
        { key: enc.encode('b'), value: 'text' },
      ] as unknown as CoordinatorRecord[]
      await rejectsWithCode(store.append(0, badValue), 'STORAGE_INVALID_ARGUMENT')
      await rejectsWithCode(
        store.append(0, [null] as unknown as CoordinatorRecord[]),
        'STORAGE_INVALID_ARGUMENT',
      )
      assert.deepEqual(await store.load(0), [])
    })

    test('bad shard ids are rejected with a clear error', async () => {
      await fresh()
      for (const shard of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await rejectsWithCode(store.append(shard, [rec('a', '1')]), 'STORAGE_INVALID_ARGUMENT')
        await rejectsWithCode(store.load(shard), 'STORAGE_INVALID_ARGUMENT')
        await rejectsWithCode(store.compact(shard), 'STORAGE_INVALID_ARGUMENT')
      }
    })

    test('buffers are copied: reusing an appended buffer or mutating a loaded one changes nothing', async () => {
      await fresh()
      const key = enc.encode('key')
      const value = enc.encode('value')
      await store.append(0, [{ key, value }])
      key.fill(0)
      value.fill(0)
      const first = await store.load(0)
      assert.deepEqual(show(first), [['key', 'value']])
      first[0].key.fill(0)
      assert.deepEqual(show(await store.load(0)), [['key', 'value']])
    })

    test('tombstones and compaction keep the latest record per key and drop deleted keys', async () => {
      await fresh()
      await store.append(5, [rec('a', '1'), rec('b', '1'), rec('c', '1')])
      await store.append(5, [rec('a', '2'), rec('b', null)])
      await store.append(5, [rec('d', '1'), rec('c', '2')])
      // Before compaction a load holds at least the latest record of every key, in order.
      const before = show(await store.load(5))
      assert.deepEqual(compactModel(before), [
        ['a', '2'],
        ['d', '1'],
        ['c', '2'],
      ])
      await store.compact(5)
      assert.deepEqual(show(await store.load(5)), [
        ['a', '2'],
        ['d', '1'],
        ['c', '2'],
      ])
      // A key deleted and then written again comes back; appends after compaction stay in order.
      await store.append(5, [rec('b', '3'), rec('a', null)])
      await store.compact(5)
      assert.deepEqual(show(await store.load(5)), [
        ['d', '1'],
        ['c', '2'],
        ['b', '3'],
      ])
      await store.compact(5)
      assert.equal((await store.load(5)).length, 3)
      await store.compact(44) // a shard that never had records
    })

    test('property: any mix of appends, tombstones and compactions matches the log model', async () => {
      await fresh()
      let shardSeq = 100
      const op = fc.oneof(
        fc.record({
          kind: fc.constant('append' as const),
          batch: fc.array(
            fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.option(fc.string(), { nil: null })),
            {
              maxLength: 4,
            },
          ),
        }),
        fc.record({ kind: fc.constant('compact' as const) }),
      )
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
          const shard = shardSeq++
          const model: [string, string | null][] = []
          for (const o of ops) {
            if (o.kind === 'append') {
              await store.append(
                shard,
                o.batch.map(([k, v]) => rec(k, v)),
              )
              model.push(...o.batch)
            } else {
              await store.compact(shard)
            }
            const loaded = show(await store.load(shard))
            assert.deepEqual(compactModel(loaded), compactModel(model))
          }
          await store.compact(shard)
          assert.deepEqual(show(await store.load(shard)), compactModel(model))
        }),
        { numRuns: 60 },
      )
    })

    test('load with latestOnly: the latest record of the keys it accepts, every record of the others', async () => {
      await fresh()
      // Keys starting with "!" are refused. A batch of large values (stored compressed by SQLite)
      // sits between small ones; tombstones of both kinds of key.
      const accepts = (k: string) => !k.startsWith('!')
      const seen: string[] = []
      const latestOnly = (bytes: Uint8Array, offset: number, length: number): boolean => {
        const key = dec.decode(bytes.subarray(offset, offset + length))
        seen.push(key)
        return accepts(key)
      }
      const big = 'v'.repeat(700)
      const log: [string, string | null][] = [
        ['a', '1'],
        ['!m', '1'],
        ['b', '1'],
        ['a', '2'],
        ['!m', '2'],
        ['c', big],
        ['b', big],
        ['a', big],
        ['!n', null],
        ['c', null],
        ['b', '3'],
        ['!m', null],
        ['d', '1'],
      ]
      for (const batch of [log.slice(0, 5), log.slice(5, 8), log.slice(8, 10), log.slice(10)])
        await store.append(
          6,
          batch.map(([k, v]) => rec(k, v)),
        )
      const loaded = show(await store.load(6, { latestOnly }))
      assert.deepEqual(loaded, latestModel(log, accepts))
      assert.deepEqual(loaded, [
        ['!m', '1'],
        ['!m', '2'],
        ['a', big],
        ['!n', null],
        ['b', '3'],
        ['!m', null],
        ['d', '1'],
      ])
      assert.deepEqual(seen.sort(), log.map(([k]) => k).sort(), 'latestOnly is asked of every record')
      // Without the option, every record (at least the latest of every key); other shards unaffected.
      assert.deepEqual(compactModel(show(await store.load(6))), compactModel(log))
      assert.deepEqual(await store.load(7, { latestOnly }), [])
      // The returned records are the store's own copies.
      const again = await store.load(6, { latestOnly })
      again[0].key.fill(0)
      assert.deepEqual(show(await store.load(6, { latestOnly })), loaded)
      // After a compaction, the same.
      await store.compact(6)
      assert.deepEqual(show(await store.load(6, { latestOnly })), latestModel(compactModel(log), accepts))
    })

    test('property: load with latestOnly is the log the store holds, filtered by the model', async () => {
      await fresh()
      let shardSeq = 300
      const accepts = (k: string) => k !== 'd'
      const latestOnly = latestOnlyOf(accepts)
      const op = fc.oneof(
        fc.record({
          kind: fc.constant('append' as const),
          batch: fc.array(
            fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'ab'), fc.option(fc.string(), { nil: null })),
            { maxLength: 5 },
          ),
        }),
        fc.record({ kind: fc.constant('compact' as const) }),
      )
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 20 }), async (ops) => {
          const shard = shardSeq++
          for (const o of ops) {
            if (o.kind === 'append')
              await store.append(
                shard,
                o.batch.map(([k, v]) => rec(k, v)),
              )
            else await store.compact(shard)
            const all = show(await store.load(shard))
            assert.deepEqual(show(await store.load(shard, { latestOnly })), latestModel(all, accepts))
          }
        }),
        { numRuns: 40 },
      )
    })

    test('large values round trip (1 MiB and 8 MiB) next to small ones', async () => {
      await fresh()
      const big = new Uint8Array(1 << 20).map((_, i) => (i * 31) & 0xff)
      const huge = new Uint8Array(8 << 20).map((_, i) => (i * 7) & 0xff)
      await store.append(0, [rec('small', 's'), { key: enc.encode('big'), value: big }])
      await store.append(0, [{ key: enc.encode('huge'), value: huge }])
      const loaded = await store.load(0)
      assert.equal(loaded.length, 3)
      assert.deepEqual(new Uint8Array(loaded[1].value!), big)
      assert.deepEqual(new Uint8Array(loaded[2].value!), huge)
    })

    test('a closed store rejects every call; close is idempotent', async () => {
      await fresh()
      await store.close()
      await store.close()
      await rejectsWithCode(store.append(0, [rec('a', '1')]), 'STORAGE_NOT_OPEN')
      await rejectsWithCode(store.load(0), 'STORAGE_NOT_OPEN')
      await rejectsWithCode(store.compact(0), 'STORAGE_NOT_OPEN')
    })

    test('reopen: every appended batch and the compaction result survive close and open', async (t) => {
      await fresh()
      const reopen = h.reopen
      if (reopen === undefined) {
        // Not skipped: a store without durability must still keep its data while it is open.
        await store.append(0, [rec('a', '1')])
        assert.deepEqual(show(await store.load(0)), [['a', '1']])
        t.diagnostic(`${name} is not durable; reopen is not part of its contract`)
        return
      }
      await store.append(0, [rec('a', '1'), rec('b', '1')])
      await store.append(1, [rec('x', '1'), rec('x', null)])
      await store.append(0, [rec('a', '2')])
      await store.compact(1)
      await store.close()
      let again = await reopen()
      assert.deepEqual(show(await again.load(0)), [
        ['a', '1'],
        ['b', '1'],
        ['a', '2'],
      ])
      assert.deepEqual(await again.load(1), [])
      // Offsets continue after the reopen: new records come after the old ones.
      await again.append(0, [rec('c', '1')])
      await again.append(1, [rec('y', '1')])
      await again.close()
      again = await reopen()
      assert.deepEqual(show(await again.load(0)), [
        ['a', '1'],
        ['b', '1'],
        ['a', '2'],
        ['c', '1'],
      ])
      assert.deepEqual(show(await again.load(1)), [['y', '1']])
      await again.close()
    })
  })
}
