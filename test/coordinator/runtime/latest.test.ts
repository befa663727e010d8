import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { latestRecords } from '../../../src/coordinator/runtime/latest.js'
import type { CoordinatorRecord } from '../../../src/coordinator/storage/types.js'

const enc = new TextEncoder()
const all = () => true

/** The model: a record is replayed when no later record has its key and it is not a tombstone. */
function model(records: readonly CoordinatorRecord[]): number[] {
  const last = new Map<string, number>()
  for (const [i, r] of records.entries()) last.set(Buffer.from(r.key).toString('latin1'), i)
  return records.map((r, i) =>
    r.value !== null && last.get(Buffer.from(r.key).toString('latin1')) === i ? 1 : 0,
  )
}

test('latestRecords: per key only its latest record, none of a key whose latest is a tombstone', () => {
  const r = (key: string, value: string | null): CoordinatorRecord => ({
    key: enc.encode(key),
    value: value === null ? null : enc.encode(value),
  })
  const log = [r('a', '1'), r('b', '1'), r('a', '2'), r('c', '1'), r('b', null), r('a', '3'), r('', '')]
  assert.deepEqual([...latestRecords(log, all)], [0, 0, 0, 1, 0, 1, 1])
  assert.deepEqual([...latestRecords([], all)], [])
})

test('property: latestRecords agrees with the model, over many keys (the table grows) and keys that are prefixes of others', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          key: fc.integer({ min: 0, max: 400 }),
          // Keys of 1–3 repeated parts: "7", "77", "777" share their first bytes.
          parts: fc.integer({ min: 1, max: 3 }),
          tombstone: fc.boolean(),
        }),
        { maxLength: 1500 },
      ),
      (ops) => {
        const records = ops.map((o) => ({
          key: enc.encode(String(o.key).repeat(o.parts)),
          value: o.tombstone ? null : new Uint8Array([o.key & 0xff]),
        }))
        assert.deepEqual([...latestRecords(records, all)], model(records))
      },
    ),
    { numRuns: 60 },
  )
})

test('latestRecords: keys compared by their bytes, wherever their views lie', () => {
  // The same key bytes in views at different offsets of different buffers are one key.
  const shared = enc.encode('xxgroup-1yy')
  const records: CoordinatorRecord[] = [
    { key: shared.subarray(2, 9), value: enc.encode('old') },
    { key: enc.encode('group-2'), value: enc.encode('v') },
    { key: enc.encode('group-1'), value: enc.encode('new') },
    { key: new Uint8Array(0), value: null },
  ]
  assert.deepEqual([...latestRecords(records, all)], [0, 1, 1, 0])
})

test('latestRecords: every record of a key latestOnly refuses is replayed, in place', () => {
  const r = (key: string, value: string | null): CoordinatorRecord => ({
    key: enc.encode(key),
    value: value === null ? null : enc.encode(value),
  })
  const log = [r('!m', '1'), r('o', '1'), r('!m', '2'), r('o', '2'), r('!m', null), r('o', null), r('o', '3')]
  const byKey = (key: Uint8Array) => key[0] !== 0x21
  assert.deepEqual([...latestRecords(log, byKey)], [1, 0, 1, 0, 1, 0, 1])
})
