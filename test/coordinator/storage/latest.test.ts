import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { latestMask, latestOf, RecordPositions } from '../../../src/coordinator/storage/latest.js'
import type { CoordinatorRecord } from '../../../src/coordinator/storage/types.js'

const enc = new TextEncoder()
const all = () => true

/** 1 for each record of `records` that `latestOf` returns (they are returned as they are). */
function latestRecords(
  records: readonly CoordinatorRecord[],
  latestOnly: (b: Uint8Array, o: number, n: number) => boolean,
): number[] {
  const kept = new Set(latestOf(records, latestOnly))
  return records.map((r) => (kept.has(r) ? 1 : 0))
}

/** The model: a record is replayed when no later record has its key and it is not a tombstone. */
function model(records: readonly CoordinatorRecord[]): number[] {
  const last = new Map<string, number>()
  for (const [i, r] of records.entries()) last.set(Buffer.from(r.key).toString('latin1'), i)
  return records.map((r, i) =>
    r.value !== null && last.get(Buffer.from(r.key).toString('latin1')) === i ? 1 : 0,
  )
}

test('latestOf: per key only its latest record, none of a key whose latest is a tombstone', () => {
  const r = (key: string, value: string | null): CoordinatorRecord => ({
    key: enc.encode(key),
    value: value === null ? null : enc.encode(value),
  })
  const log = [r('a', '1'), r('b', '1'), r('a', '2'), r('c', '1'), r('b', null), r('a', '3'), r('', '')]
  assert.deepEqual([...latestRecords(log, all)], [0, 0, 0, 1, 0, 1, 1])
  assert.deepEqual([...latestRecords([], all)], [])
})

test('property: latestOf agrees with the model, over many keys (the table grows) and keys that are prefixes of others', () => {
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

test('latestOf: keys compared by their bytes, wherever their views lie', () => {
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

test('latestOf: every record of a key latestOnly refuses is replayed, in place', () => {
  const r = (key: string, value: string | null): CoordinatorRecord => ({
    key: enc.encode(key),
    value: value === null ? null : enc.encode(value),
  })
  const log = [r('!m', '1'), r('o', '1'), r('!m', '2'), r('o', '2'), r('!m', null), r('o', null), r('o', '3')]
  const byKey = (bytes: Uint8Array, offset: number, length: number) => length === 0 || bytes[offset] !== 0x21
  assert.deepEqual([...latestRecords(log, byKey)], [1, 0, 1, 0, 1, 0, 1])
})

test('latestMask: keys compared where they lie, one blob holding many records, across blobs', () => {
  // Two blobs: "a1b2a3" and "b4a5" as key/value pairs of one byte each; the second "a" key lies
  // in another blob at another offset. latestOnly sees each key where it lies.
  const p = new RecordPositions()
  p.blobs.push(enc.encode('a1b2a3'), enc.encode('xb4a5'))
  p.add(0, 0, 1, 1, 1)
  p.add(0, 2, 1, 3, 1)
  p.add(0, 4, 1, 5, 1)
  p.add(1, 1, 1, 2, 1)
  p.add(1, 3, 1, 4, -1)
  const seen: string[] = []
  const keep = latestMask(p, (bytes, offset, length) => {
    seen.push(Buffer.from(bytes.subarray(offset, offset + length)).toString())
    return true
  })
  assert.deepEqual([...keep], [0, 0, 0, 1, 0], 'the last "a" is a tombstone: nothing of "a" is kept')
  assert.deepEqual(seen, ['a', 'b', 'a', 'b', 'a'])
  assert.deepEqual(Buffer.from(p.record(3).value ?? []).toString(), '4')
  assert.equal(p.record(4).value, null)
})

test('RecordPositions: grows past its first capacity and keeps every position', () => {
  const p = new RecordPositions(3)
  p.blobs.push(new Uint8Array(2000))
  for (let i = 0; i < 1000; i++) p.add(0, i, 1, i + 1, i % 3 === 0 ? -1 : 1)
  assert.equal(p.count, 1000)
  for (const i of [0, 2, 3, 4, 511, 999]) {
    assert.equal(p.keyStart[i], i)
    assert.equal(p.valueLength[i], i % 3 === 0 ? -1 : 1)
  }
})
