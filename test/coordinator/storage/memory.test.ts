import assert from 'node:assert/strict'
import { test } from 'node:test'
import { keyHash as engineKeyHash, MemoryRecordStore } from '../../../src/coordinator/storage/memory.js'
import {
  type CoordinatorRecord as CoordinatorRecordValue,
  encodeCoordinatorRecord,
  encodeCoordinatorRecords,
  releaseEncodedRecords,
  SlabRecord,
} from '../../../src/protocol/records.js'
import { laidOut, rec, runRecordStoreContract, show } from './contract.js'

runRecordStoreContract('memory', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  return { store, cleanup: async () => {} }
})

test('memory: the data belongs to the instance and survives close and open of it', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  await store.append(0, [rec('a', '1')])
  await store.close()
  await store.open()
  assert.deepEqual(show(await store.load(0)), [['a', '1']])
  await store.close()
})

test('memory: a steady rewrite of the same keys keeps the log at about twice its live size', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  // What a group committing 6 offsets over and over writes: 50,000 commits, 300,000 records.
  let most = 0
  for (let i = 0; i < 50_000; i++) {
    await store.append(
      3,
      [0, 1, 2, 3, 4, 5].map((p) => rec(`offset-${p}`, String(i))),
    )
    most = Math.max(most, store.usage(3).records)
  }
  // Compaction runs once 8,192 records (a chunk's worth) are superseded, so the log never holds
  // many more.
  assert.ok(most <= 8192 + 6 + 6, `the log held ${most} records`)
  // `load` may still return superseded records; the latest of every key is the last commit's.
  assert.deepEqual(
    [...new Map(show(await store.load(3)))],
    [0, 1, 2, 3, 4, 5].map((p) => [`offset-${p}`, '49999']),
  )
  assert.equal(store.usage(3).liveKeys, 6)
  await store.close()
})

test('memory: many shards with a few live keys each hold about a chunk of superseded records', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  // What 16 groups on 16 shards committing 6 offsets each, round-robin, write: 3,000 commits a
  // shard, 18,000 records.
  let most = 0
  let chunks = 0
  for (let i = 0; i < 3_000; i++) {
    for (let shard = 0; shard < 16; shard++) {
      await store.append(
        shard,
        [0, 1, 2, 3, 4, 5].map((p) => rec(`g${shard}-offset-${p}`, String(i))),
      )
    }
    for (let shard = 0; shard < 16; shard++) {
      const u = store.usage(shard)
      most = Math.max(most, u.records)
      chunks = Math.max(chunks, u.chunks)
    }
  }
  // Compaction runs once a chunk's worth (8,192) of records is superseded: a log never spans more
  // than two chunks here, 32 of them for the 16 shards (with 65,536 superseded records a shard
  // before compaction, nine chunks each, 144 MiB for 96 live offsets).
  assert.ok(most <= 8192 + 6 + 6, `a log held ${most} records`)
  assert.ok(chunks <= 2, `a log spanned ${chunks} chunks`)
  for (let shard = 0; shard < 16; shard++) {
    assert.deepEqual(
      [...new Map(show(await store.load(shard)))],
      [0, 1, 2, 3, 4, 5].map((p) => [`g${shard}-offset-${p}`, '2999']),
    )
  }
  await store.close()
})

test('memory: compaction on its own drops tombstones with what they superseded and keeps log order', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  await store.append(0, [rec('kept', 'first'), rec('deleted', 'x'), rec('rewritten', '0')])
  await store.append(0, [rec('deleted', null)])
  for (let i = 1; i <= 70_000; i++) await store.append(0, [rec('rewritten', String(i))])
  await store.append(0, [rec('late', 'y')])
  assert.ok(store.usage(0).records < 70_000)
  const loaded = show(await store.load(0))
  assert.deepEqual(loaded[0], ['kept', 'first'])
  assert.deepEqual(loaded[loaded.length - 1], ['late', 'y'])
  assert.ok(!loaded.some(([k]) => k === 'deleted'), 'the tombstone went with the record it superseded')
  assert.deepEqual(
    [...new Map(loaded)],
    [
      ['kept', 'first'],
      ['rewritten', '70000'],
      ['late', 'y'],
    ],
  )
  await store.close()
})

test('memory: the log grows in chunks and a failed append across a chunk boundary leaves nothing', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  // 8,191 records fill all but one slot of the first chunk.
  const many = Array.from({ length: 8191 }, (_, i) => rec(`k${i}`, 'v'))
  await store.append(1, many)
  assert.equal(store.usage(1).chunks, 1)
  // The batch's first record goes into the last slot, the failure comes before the next one.
  store.failNextAppend()
  await assert.rejects(store.append(1, [rec('a', '1'), rec('b', '2'), rec('c', '3')]), {
    code: 'STORAGE_INJECTED_FAILURE',
  })
  assert.equal(store.usage(1).records, 8191)
  await store.append(1, [rec('a', '1'), rec('b', '2'), rec('c', '3')])
  assert.equal(store.usage(1).chunks, 2)
  // A record larger than a chunk gets a chunk of its own size; the chunks before it are kept.
  const big = new Uint8Array(3 << 20).fill(7)
  await store.append(1, [{ key: new TextEncoder().encode('big'), value: big }, rec('d', '4')])
  const usage = store.usage(1)
  assert.equal(usage.chunks, 4)
  assert.equal(usage.bytes, (1 << 20) * 3 + (3 << 20) + 3)
  const loaded = await store.load(1)
  assert.equal(loaded.length, 8191 + 3 + 2)
  assert.deepEqual(show(loaded.slice(8190, 8194)), [
    ['k8190', 'v'],
    ['a', '1'],
    ['b', '2'],
    ['c', '3'],
  ])
  assert.deepEqual(loaded[8194].value, big)
  assert.deepEqual(show(loaded.slice(8195)), [['d', '4']])
  await store.close()
})

test('memory: chunks that compaction empties are reused, and nothing of what they held shows', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  // Three chunks of shard 0: 8,192 records, their tombstones, and 8,192 records of other keys. No
  // more are superseded than live, so the log does not compact on its own; `compact` keeps the
  // last chunk's records.
  await store.append(
    0,
    Array.from({ length: 8192 }, (_, i) => rec(`a${i}`, `${i}`)),
  )
  await store.append(
    0,
    Array.from({ length: 8192 }, (_, i) => rec(`a${i}`, null)),
  )
  const kept = Array.from({ length: 8192 }, (_, i) => rec(`b${i}`, `${i}`))
  await store.append(0, kept)
  assert.equal(store.usage(0).chunks, 3)
  assert.equal(store.pooledChunks, 0)
  await store.compact(0)
  assert.equal(store.usage(0).chunks, 1)
  assert.equal(store.pooledChunks, 3)
  // Shard 1 grows into the kept chunks: its records only, none of shard 0's old ones.
  const many = Array.from({ length: 8192 + 10 }, (_, i) => rec(`k${i}`, `v${i}`))
  await store.append(1, many)
  assert.equal(store.usage(1).chunks, 2)
  assert.equal(store.pooledChunks, 1)
  assert.deepEqual(
    show(await store.load(1)),
    many.map((_, i) => [`k${i}`, `v${i}`]),
  )
  assert.deepEqual(
    show(await store.load(0)),
    kept.map((_, i) => [`b${i}`, `${i}`]),
  )
  // A reused chunk is still compacted like any other.
  await store.append(1, [rec('k0', null)])
  await store.compact(1)
  assert.equal(store.usage(1).records, 8192 + 9)
  assert.deepEqual(show(await store.load(1)).slice(0, 2), [
    ['k1', 'v1'],
    ['k2', 'v2'],
  ])
  await store.close()
})

/** The engine's key hash (30 bits), to pick keys that share one. */
function keyHash(key: string): number {
  const bytes = new TextEncoder().encode(key)
  return engineKeyHash(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), bytes, 0, bytes.length)
}

test('memory: keys that share a hash keep their own latest records', async () => {
  // Find keys whose hashes collide (about one pair in 2^15 keys is expected).
  const seen = new Map<number, string>()
  const colliding: string[] = []
  for (let i = 0; colliding.length < 6; i++) {
    const key = `k${i}`
    const h = keyHash(key)
    const other = seen.get(h)
    if (other !== undefined) colliding.push(other, key)
    else seen.set(h, key)
  }
  const store = new MemoryRecordStore()
  await store.open()
  const [a, b, c, d, e, f] = colliding
  await store.append(0, [rec(a, 'a1'), rec('plain', 'p1'), rec(b, 'b1'), rec(c, 'c1')])
  await store.append(0, [rec(a, 'a2'), rec(d, 'd1'), rec(b, null), rec(e, 'e1'), rec(f, 'f1'), rec(e, 'e2')])
  await store.append(0, [rec(c, 'c2'), rec(b, 'b2'), rec('plain', 'p2')])
  assert.equal(store.usage(0).liveKeys, 7)
  await store.compact(0)
  assert.deepEqual(show(await store.load(0)), [
    [a, 'a2'],
    [d, 'd1'],
    [f, 'f1'],
    [e, 'e2'],
    [c, 'c2'],
    [b, 'b2'],
    ['plain', 'p2'],
  ])
  assert.equal(store.usage(0).liveKeys, 7)
  await store.append(0, [rec(d, null)])
  await store.compact(0)
  assert.deepEqual(
    show(await store.load(0)).map(([k]) => k),
    [a, f, e, c, b, 'plain'],
  )
  await store.close()
})

test('memory: thousands of keys, each rewritten, keep their own latest records', async () => {
  // Far more keys than the first table of latest records holds: it grows many times over.
  const store = new MemoryRecordStore()
  await store.open()
  const keys = Array.from({ length: 5000 }, (_, i) => `offset-${i % 7}-${i}`)
  // Two rounds: fewer superseded records than the log compacts itself at.
  for (let round = 0; round < 2; round++)
    await store.append(
      1,
      keys.map((k, i) => rec(k, round === 1 && i % 5 === 0 ? null : `${k}@${round}`)),
    )
  assert.equal(store.usage(1).liveKeys, 5000)
  assert.equal(store.usage(1).records, 10000)
  await store.compact(1)
  assert.deepEqual(
    show(await store.load(1)),
    keys.filter((_, i) => i % 5 !== 0).map((k) => [k, `${k}@1`]),
  )
  assert.equal(store.usage(1).liveKeys, 4000)
  await store.close()
})

test('memory: keys that come back in another order, or next to new keys, keep their own latest records', async () => {
  // The engine first tries, for each record, the key that followed the previous record's the last
  // time. Sequences that repeat, then change order, then put new keys (of the same length, one byte
  // apart, and keys that share a hash) where known ones followed, and grow the table meanwhile.
  const seen = new Map<number, string>()
  const colliding: string[] = []
  for (let i = 0; colliding.length < 2; i++) {
    const key = `g${i}`
    const other = seen.get(keyHash(key))
    if (other !== undefined) colliding.push(other, key)
    else seen.set(keyHash(key), key)
  }
  const name = (i: number) => `group-a/topic/${String(i).padStart(3, '0')}`
  const ten = Array.from({ length: 10 }, (_, i) => name(i))
  const rounds: string[][] = [
    ten,
    ten,
    ten.slice(5).concat(ten.slice(0, 5)),
    ten.map((_, i) => ten[i ^ 1]),
    // New keys where known ones followed: one byte apart from the keys they replace.
    ten.map((k, i) => (i % 3 === 0 ? name(100 + i) : k)),
    ten,
    [ten[0], colliding[0], ten[1], colliding[1], ten[2]],
    [ten[0], colliding[0], ten[1], colliding[1], ten[2]],
    [ten[0], colliding[1], ten[1], colliding[0], ten[2]],
    // Enough new keys to grow the table several times, with the known ones among them.
    Array.from({ length: 200 }, (_, i) => (i % 20 < 10 ? ten[i % 10] : name(200 + i))),
    ten,
    ten.slice().reverse(),
  ]
  const store = new MemoryRecordStore()
  await store.open()
  const latest = new Map<string, string>()
  for (let r = 0; r < rounds.length; r++) {
    await store.append(
      0,
      rounds[r].map((k, i) => rec(k, `${r}.${i}`)),
    )
    for (let i = 0; i < rounds[r].length; i++) {
      latest.delete(rounds[r][i])
      latest.set(rounds[r][i], `${r}.${i}`)
    }
    assert.equal(store.usage(0).liveKeys, latest.size, `round ${r}`)
  }
  await store.compact(0)
  assert.deepEqual(show(await store.load(0)), [...latest])
  await store.close()
})

test('memory: keys of any length that differ in one byte, anywhere, are different keys', async () => {
  // The engine hashes and compares keys four bytes at a time, then the last one to three bytes
  // one by one: every length up to 13 and every position of the difference.
  const store = new MemoryRecordStore()
  await store.open()
  const keys: Uint8Array[] = []
  for (let n = 1; n <= 13; n++) {
    const base = Uint8Array.from({ length: n }, (_, i) => 0x41 + i)
    keys.push(base)
    for (let at = 0; at < n; at++) {
      const other = Uint8Array.from(base)
      other[at] ^= 0x80
      keys.push(other)
    }
  }
  const value = (k: Uint8Array, v: number) => ({ key: k, value: Uint8Array.of(v) })
  await store.append(
    0,
    keys.map((k) => value(k, 1)),
  )
  await store.append(
    0,
    keys.map((k) => value(k, 2)),
  )
  assert.equal(store.usage(0).liveKeys, keys.length)
  await store.compact(0)
  const loaded = await store.load(0)
  assert.equal(loaded.length, keys.length)
  assert.deepEqual(
    loaded.map((r) => [Buffer.from(r.key).toString('hex'), r.value?.[0]]),
    keys.map((k) => [Buffer.from(k).toString('hex'), 2]),
  )
  await store.close()
})

test('memory: records that tell where their bytes lie are copied from there, never through their views', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  // Views that throw: the engine copies the bytes where the record says they lie.
  const blind = (entries: [string, string | null][]) =>
    laidOut(entries).records.map((r) => {
      const { bytes, offset, keyLength, valueLength } = r
      return {
        bytes,
        offset,
        keyLength,
        valueLength,
        get key(): Uint8Array {
          throw new Error('key read')
        },
        get value(): Uint8Array | null {
          throw new Error('value read')
        },
      }
    })
  // 8,190 records leave two slots of the first chunk: the run of five crosses into a second chunk.
  await store.append(
    1,
    Array.from({ length: 8190 }, (_, i) => rec(`k${i}`, 'v')),
  )
  const run = blind([
    ['a', '1'],
    ['b', null],
    ['c', '3'],
    ['d', '4'],
    ['e', '5'],
  ])
  // A failure after part of the run is staged leaves nothing.
  store.failNextAppend()
  await assert.rejects(store.append(1, run), { code: 'STORAGE_INJECTED_FAILURE' })
  assert.equal(store.usage(1).records, 8190)
  await store.append(1, run)
  assert.equal(store.usage(1).chunks, 2)
  assert.deepEqual(show((await store.load(1)).slice(8189)), [
    ['k8189', 'v'],
    ['a', '1'],
    ['b', null],
    ['c', '3'],
    ['d', '4'],
    ['e', '5'],
  ])
  await store.close()
})

test('memory: a Streams-shaped commit encoded into the slab loads byte for byte as encoded alone', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  const commit = (round: number): CoordinatorRecordValue[] =>
    Array.from({ length: 20 }, (_, p) => ({
      type: 'OffsetCommit',
      key: { group: 'app', topic: 'input', partition: p },
      value:
        p === 7 && round === 1
          ? null
          : {
              offset: BigInt(round * 100 + p),
              leaderEpoch: -1,
              metadata: `position-${round}-${p}`,
              commitTimestamp: 5n,
              expireTimestamp: -1n,
              topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
            },
      valueVersion: 3,
    }))
  const rounds = [commit(0), commit(1)]
  for (const records of rounds) {
    const encoded = encodeCoordinatorRecords(records)
    assert.ok(encoded.every((r) => r instanceof SlabRecord))
    await store.append(0, encoded)
    releaseEncodedRecords(encoded)
  }
  // Records encoded (and released) since then write over the slab; the store kept copies.
  for (let i = 0; i < 100; i++) releaseEncodedRecords(encodeCoordinatorRecords(commit(2)))
  const hex = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('hex'))
  const loaded = await store.load(0)
  assert.deepEqual(
    loaded.map((r) => [hex(r.key), hex(r.value)]),
    rounds.flat().map((r) => {
      const one = encodeCoordinatorRecord(r)
      return [hex(one.key), hex(one.value)]
    }),
  )
  await store.close()
})
