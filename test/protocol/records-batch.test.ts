import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  type CoordinatorRecord,
  decodeCoordinatorRecord,
  encodeCoordinatorRecord,
  encodeCoordinatorRecords,
  releaseEncodedRecords,
} from '../../src/protocol/records.js'

type OffsetCommit = Extract<CoordinatorRecord, { type: 'OffsetCommit' }>

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.constant(''),
)

const offsetCommit: fc.Arbitrary<OffsetCommit> = fc
  .record({
    group: fc.constantFrom('g', 'bench-streams-commit', 'grüppe', ''),
    topic: fc.constantFrom('t', 'bench-streams', 'tøpic'),
    partition: fc.integer({ min: -2147483648, max: 2147483647 }),
    tombstone: fc.boolean(),
    offset: int64,
    leaderEpoch: fc.integer({ min: -2147483648, max: 2147483647 }),
    metadata: text,
    commitTimestamp: int64,
    expireTimestamp: int64,
    topicId: fc.constantFrom(ZERO_UUID, 'm5KVHiB1SEqsLVI1BxAmzA'),
    valueVersion: fc.constantFrom(undefined, 0, 1, 2, 3, 4),
  })
  .map((r) => ({
    type: 'OffsetCommit',
    key: { group: r.group, topic: r.topic, partition: r.partition },
    value: r.tombstone
      ? null
      : {
          offset: r.offset,
          leaderEpoch: r.leaderEpoch,
          metadata: r.metadata,
          commitTimestamp: r.commitTimestamp,
          expireTimestamp: r.expireTimestamp,
          topicId: r.topicId,
        },
    valueVersion: r.valueVersion,
  }))

const other: fc.Arbitrary<CoordinatorRecord> = fc.oneof(
  fc
    .record({ group: fc.string({ maxLength: 10 }) })
    .map(({ group }): CoordinatorRecord => ({ type: 'GroupMetadata', key: { group }, value: null })),
  fc.record({ producerId: int64, group: fc.string({ maxLength: 10 }), partition: fc.nat() }).map(
    ({ producerId, group, partition }): CoordinatorRecord => ({
      type: 'TxnOffsetCommit',
      key: { producerId, group, topic: 't', partition },
      value: null,
    }),
  ),
)

const hex = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('hex'))

describe('encodeCoordinatorRecords', () => {
  it('writes every record byte for byte as encodeCoordinatorRecord does', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(offsetCommit, offsetCommit, other), { maxLength: 30 }), (records) => {
        const batch = encodeCoordinatorRecords(records)
        assert.equal(batch.length, records.length)
        for (let i = 0; i < records.length; i++) {
          const one = encodeCoordinatorRecord(records[i])
          assert.equal(hex(batch[i].key), hex(one.key))
          assert.equal(hex(batch[i].value), hex(one.value))
          assert.deepEqual(
            decodeCoordinatorRecord(batch[i].key, batch[i].value),
            decodeCoordinatorRecord(one.key, one.value),
          )
        }
      }),
      { numRuns: 500 },
    )
  })

  it('leaves the bytes of records never handed back alone across many batches', () => {
    const commit = (partition: number): OffsetCommit => ({
      type: 'OffsetCommit',
      key: { group: 'g', topic: 't', partition },
      value: {
        offset: BigInt(partition),
        leaderEpoch: -1,
        metadata: 'm'.repeat(partition % 200),
        commitTimestamp: 1n,
        expireTimestamp: -1n,
        topicId: ZERO_UUID,
      },
      valueVersion: 3,
    })
    const kept: {
      record: OffsetCommit
      key: string | null
      value: string | null
      enc: ReturnType<typeof encodeCoordinatorRecords>[number]
    }[] = []
    // About 20 MB of records: hundreds of slabs.
    for (let b = 0; b < 2000; b++) {
      const records = Array.from({ length: 50 }, (_, i) => commit(b * 50 + i))
      const encoded = encodeCoordinatorRecords(records)
      if (b % 97 === 0) {
        for (let i = 0; i < records.length; i++) {
          kept.push({
            record: records[i],
            key: hex(encoded[i].key),
            value: hex(encoded[i].value),
            enc: encoded[i],
          })
        }
      }
    }
    for (const k of kept) {
      assert.equal(hex(k.enc.key), k.key)
      assert.equal(hex(k.enc.value), k.value)
      const one = encodeCoordinatorRecord(k.record)
      assert.equal(k.key, hex(one.key))
      assert.equal(k.value, hex(one.value))
    }
  })

  it('writes a slab again only once every record carved from it is handed back', () => {
    const commit = (partition: number, metadata: string): OffsetCommit => ({
      type: 'OffsetCommit',
      key: { group: 'g', topic: 't', partition },
      value: {
        offset: BigInt(partition),
        leaderEpoch: -1,
        metadata,
        commitTimestamp: 1n,
        expireTimestamp: -1n,
        topicId: ZERO_UUID,
      },
      valueVersion: 3,
    })
    const big = 'm'.repeat(1000)
    // A batch held back (a store write still in flight), then many handed back as they settle.
    const held = encodeCoordinatorRecords(Array.from({ length: 20 }, (_, i) => commit(i, big)))
    const heldBytes = held.map((r) => [hex(r.key), hex(r.value)])
    const buffers = new Set<ArrayBufferLike>()
    let reused = false
    for (let b = 0; b < 400; b++) {
      const encoded = encodeCoordinatorRecords(Array.from({ length: 20 }, (_, i) => commit(i, big)))
      for (const r of encoded) {
        if (buffers.has(r.key.buffer)) reused = true
        buffers.add(r.key.buffer)
      }
      releaseEncodedRecords(encoded)
    }
    assert.ok(reused, 'slabs handed back were written again')
    assert.ok(buffers.size < 20, `${buffers.size} slabs for 400 batches`)
    assert.deepEqual(
      held.map((r) => [hex(r.key), hex(r.value)]),
      heldBytes,
    )
    releaseEncodedRecords(held)
  })

  it('writes metadata of every length around the copied ones, with a non-ASCII character anywhere', () => {
    const commit = (metadata: string): OffsetCommit => ({
      type: 'OffsetCommit',
      key: { group: 'bench-streams-commit', topic: 'bench-streams', partition: 3 },
      value: {
        offset: 5003n,
        leaderEpoch: -1,
        metadata,
        commitTimestamp: 1_700_000_000_000n,
        expireTimestamp: -1n,
        topicId: ZERO_UUID,
      },
      valueVersion: 3,
    })
    const metadatas: string[] = []
    for (let n = 0; n <= 70; n++) {
      const ascii = 'AQAAAY_streams_task_position_x='.repeat(3).slice(0, n)
      metadatas.push(ascii)
      // One character past ASCII (one byte of Latin-1, or three of UTF-8) at every place: each of
      // the four of a store, and each of the last one to three copied one by one.
      for (let at = 0; at < n; at++)
        for (const c of ['é', '\u20ac', '\x7f']) metadatas.push(ascii.slice(0, at) + c + ascii.slice(at + 1))
    }
    const batch = encodeCoordinatorRecords(metadatas.map(commit))
    for (let i = 0; i < metadatas.length; i++) {
      const one = encodeCoordinatorRecord(commit(metadatas[i]))
      assert.equal(hex(batch[i].value), hex(one.value), JSON.stringify(metadatas[i]))
    }
    releaseEncodedRecords(batch)
  })

  it('writes timestamps shared by a run of records, and ones that change from record to record', () => {
    const commit = (partition: number, commitTimestamp: bigint, expireTimestamp: bigint): OffsetCommit => ({
      type: 'OffsetCommit',
      key: { group: 'g', topic: 't', partition },
      value: {
        offset: BigInt(partition),
        leaderEpoch: -1,
        metadata: 'm',
        commitTimestamp,
        expireTimestamp,
        topicId: ZERO_UUID,
      },
      valueVersion: expireTimestamp >= 0n ? 1 : 3,
    })
    const stamps = [1_700_000_000_000n, -1n, 0n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 32n, 2n ** 32n - 1n]
    const records: OffsetCommit[] = []
    for (const a of stamps)
      for (const b of stamps) {
        // A run sharing one timestamp, then one of another, then the first again.
        for (let i = 0; i < 3; i++) records.push(commit(i, a, -1n))
        records.push(commit(3, b, -1n), commit(4, a, -1n))
        // Retention (value version 1): commit and expire timestamps alternate within each record.
        if (b >= 0n) records.push(commit(5, a, b), commit(6, a, b), commit(7, b, a < 0n ? 0n : a))
      }
    const batch = encodeCoordinatorRecords(records)
    for (let i = 0; i < records.length; i++) {
      const one = encodeCoordinatorRecord(records[i])
      assert.equal(hex(batch[i].value), hex(one.value), `record ${i}`)
    }
    releaseEncodedRecords(batch)
    // A timestamp out of range after an equal-looking one in range is still refused.
    encodeCoordinatorRecords([commit(0, 2n ** 63n - 1n, -1n)])
    assert.throws(() => encodeCoordinatorRecords([commit(0, 2n ** 63n, -1n)]), /int64 out of range/)
  })

  it('refuses what encodeCoordinatorRecord refuses, with the same error', () => {
    const base: OffsetCommit = {
      type: 'OffsetCommit',
      key: { group: 'g', topic: 't', partition: 0 },
      value: {
        offset: 0n,
        leaderEpoch: -1,
        metadata: '',
        commitTimestamp: 0n,
        expireTimestamp: -1n,
        topicId: ZERO_UUID,
      },
      valueVersion: 3,
    }
    const bad: OffsetCommit[] = [
      { ...base, value: { ...base.value!, offset: 2n ** 63n } },
      { ...base, value: { ...base.value!, commitTimestamp: -(2n ** 63n) - 1n } },
      { ...base, value: { ...base.value!, leaderEpoch: 2 ** 31 } },
      { ...base, value: { ...base.value!, metadata: 'x'.repeat(0x8000) } },
      { ...base, value: { ...base.value!, metadata: null as unknown as string } },
      { ...base, key: { ...base.key, partition: 1.5 } },
      { ...base, key: { ...base.key, group: null as unknown as string } },
      { ...base, valueVersion: 5 },
    ]
    for (const rec of bad) {
      let expected: unknown
      try {
        encodeCoordinatorRecord(rec)
      } catch (e) {
        expected = e
      }
      assert.ok(
        expected instanceof Error,
        `encodeCoordinatorRecord accepted ${JSON.stringify(rec, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`,
      )
      assert.throws(
        () => encodeCoordinatorRecords([base, rec]),
        (e: unknown) =>
          e instanceof Error &&
          e.constructor === (expected as Error).constructor &&
          e.message === (expected as Error).message,
      )
    }
  })
})
