// Restart replay rate of the coordinator: how fast CoordinatorRuntime.load() (SQLite load, decode,
// replay into shards) gets through a data.dir, next to a raw better-sqlite3 scan of the same rows,
// measured in the same run. Goal: replay >= 50% of the raw scan's rate.
//
//   npx tsx bench/server/replay.ts [records=200000] [shards=50] [valueBytes=120]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { CoordinatorRuntime } from '../../src/coordinator/runtime/runtime.js'
import type { RecordSerde, ShardStateMachine } from '../../src/coordinator/runtime/types.js'
import { SQLITE_FILE_NAME, SqliteRecordStore } from '../../src/coordinator/storage/sqlite.js'
import type { CoordinatorRecord } from '../../src/coordinator/storage/types.js'

const N = Number(process.argv[2] ?? 200_000)
const SHARDS = Number(process.argv[3] ?? 50)
const VALUE_BYTES = Number(process.argv[4] ?? 120)
const ROUNDS = 7
if (![N, SHARDS, VALUE_BYTES].every((x) => Number.isInteger(x) && x > 0)) {
  console.error('usage: replay.ts [records>0] [shards>0] [valueBytes>0]')
  process.exit(2)
}

/** A record shaped like a coordinator record: int16 type + id in the key, int16 version + payload in the value. */
interface BenchRecord {
  readonly type: number
  readonly id: string
  readonly version: number
  readonly payload: Uint8Array | null
}

const enc = new TextEncoder()
const dec = new TextDecoder()

const serde: RecordSerde<BenchRecord> = {
  serialize(r) {
    const id = enc.encode(r.id)
    const key = new Uint8Array(2 + id.length)
    new DataView(key.buffer).setInt16(0, r.type)
    key.set(id, 2)
    if (r.payload === null) return { key, value: null }
    const value = new Uint8Array(2 + r.payload.length)
    new DataView(value.buffer).setInt16(0, r.version)
    value.set(r.payload, 2)
    return { key, value }
  },
  deserialize(c: CoordinatorRecord) {
    const kv = new DataView(c.key.buffer, c.key.byteOffset, c.key.byteLength)
    const type = kv.getInt16(0)
    const id = dec.decode(c.key.subarray(2))
    if (c.value === null) return { type, id, version: -1, payload: null }
    const vv = new DataView(c.value.buffer, c.value.byteOffset, c.value.byteLength)
    return { type, id, version: vv.getInt16(0), payload: c.value.subarray(2) }
  },
}

class BenchShard implements ShardStateMachine<BenchRecord> {
  readonly state = new Map<string, BenchRecord>()
  replay(r: BenchRecord): void {
    if (r.payload === null) this.state.delete(r.id)
    else this.state.set(r.id, r)
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-replay-bench-'))
  try {
    // 1. Write N records across the shards, in batches of 10 (like a busy heartbeat load).
    const store = new SqliteRecordStore(dir)
    await store.open()
    const payload = new Uint8Array(VALUE_BYTES).map((_, i) => i & 0xff)
    let written = 0
    const writeStart = process.hrtime.bigint()
    while (written < N) {
      const shard = written % SHARDS
      const batch: CoordinatorRecord[] = []
      for (let i = 0; i < 10 && written < N; i++, written++) {
        batch.push(serde.serialize({ type: 17, id: `group-${shard}/member-${written}`, version: 0, payload }))
      }
      await store.append(shard, batch)
    }
    const writeMs = Number(process.hrtime.bigint() - writeStart) / 1e6
    await store.close()

    // 2. Alternate the two measurements so both see the same file-cache state.
    const replayMs: number[] = []
    const rawMs: number[] = []
    let checksum = 0
    for (let round = 0; round < ROUNDS; round++) {
      {
        const t0 = process.hrtime.bigint()
        const s = new SqliteRecordStore(dir)
        await s.open()
        const shards: BenchShard[] = []
        const runtime = new CoordinatorRuntime<BenchShard, BenchRecord>({
          store: s,
          numShards: SHARDS,
          serde,
          newShard: () => {
            const b = new BenchShard()
            shards.push(b)
            return b
          },
        })
        await runtime.load()
        await runtime.close()
        replayMs.push(Number(process.hrtime.bigint() - t0) / 1e6)
        const live = shards.reduce((n, b) => n + b.state.size, 0)
        if (live !== N) throw new Error(`replay found ${live} records, expected ${N}`)
      }
      {
        // The raw scan: the same rows, the same query, straight from better-sqlite3, bytes touched.
        const t0 = process.hrtime.bigint()
        const db = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true })
        const stmt = db.prepare<[number], { key: Buffer; value: Buffer | null }>(
          'SELECT key, value FROM coordinator_records WHERE shard = ? ORDER BY offset',
        )
        let rows = 0
        for (let shard = 0; shard < SHARDS; shard++) {
          for (const row of stmt.all(shard)) {
            rows++
            checksum += row.key.length + (row.value?.length ?? 0)
          }
        }
        db.close()
        rawMs.push(Number(process.hrtime.bigint() - t0) / 1e6)
        if (rows !== N) throw new Error(`raw scan found ${rows} rows, expected ${N}`)
      }
    }
    const replayRate = N / (median(replayMs) / 1000)
    const rawRate = N / (median(rawMs) / 1000)
    const ratio = replayRate / rawRate
    console.log(`records ${N}, shards ${SHARDS}, value ${VALUE_BYTES} B, rounds ${ROUNDS} (medians)`)
    console.log(`write (batches of 10):  ${Math.round(N / (writeMs / 1000)).toLocaleString('en')} records/s`)
    console.log(
      `raw SQLite scan:        ${Math.round(rawRate).toLocaleString('en')} records/s (${median(rawMs).toFixed(1)} ms)`,
    )
    console.log(
      `load + replay:          ${Math.round(replayRate).toLocaleString('en')} records/s (${median(replayMs).toFixed(1)} ms)`,
    )
    console.log(
      `replay / raw scan:      ${(ratio * 100).toFixed(1)}% (goal >= 50%) ${ratio >= 0.5 ? 'OK' : 'BELOW GOAL'}`,
    )
    if (checksum < 0) console.log(checksum) // keeps the raw scan's reads observable
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
