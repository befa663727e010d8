// Group commit across shards, measured on the runtime alone: `writers` concurrent writers, each on
// its own shard, run write operations of 6 records back to back for `seconds`, over each engine
// with `appendBatches` (group commit) and without it (every batch its own store write), alternating.
// PostgreSQL is measured when TOPOGRAPH_TEST_PG_URL is set (in a schema of its own).
//
//   node --import tsx bench/server/group-commit.ts [seconds=2] [writers=16] [rounds=2]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { CoordinatorRuntime } from '../../src/coordinator/runtime/runtime.js'
import { createRecordStore } from '../../src/coordinator/storage/index.js'
import type { RecordStore } from '../../src/coordinator/storage/types.js'
import { KvShard, type KvRecord, kvSerde } from '../../test/coordinator/runtime/fake-shard.js'

const seconds = Number(process.argv[2] ?? 2)
const writers = Number(process.argv[3] ?? 16)
const rounds = Number(process.argv[4] ?? 2)

const six = (shard: KvShard) => ({
  records: Array.from({ length: 6 }, (_, i): KvRecord => ({ key: `p${i}`, value: shard.replayed + i })),
  response: undefined,
})

async function measure(store: RecordStore, grouped: boolean): Promise<number> {
  await store.open()
  // Without group commit: the runtime finds no appendBatches and writes every batch on its own.
  const view: RecordStore = grouped
    ? store
    : {
        open: () => store.open(),
        append: (s, r) => store.append(s, r),
        load: (s, o) => store.load(s, o),
        compact: (s) => store.compact(s),
        close: () => store.close(),
      }
  const runtime = new CoordinatorRuntime({
    store: view,
    numShards: writers,
    newShard: (id, timer) => new KvShard(id, timer),
    serde: kvSerde,
    closeStore: false,
  })
  await runtime.load()
  let done = 0
  const until = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: writers }, async (_, shard) => {
      while (performance.now() < until) {
        await runtime.scheduleWriteOperation('w', shard, six)
        done++
      }
    }),
  )
  await runtime.close()
  return done / seconds
}

const engines: [string, () => Promise<{ store: RecordStore; cleanup: () => Promise<void> }>][] = [
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'topograph-gc-'))
      const store = createRecordStore('sqlite', dir)
      return { store, cleanup: async () => rmSync(dir, { recursive: true, force: true }) }
    },
  ],
  ['memory', async () => ({ store: createRecordStore('memory', ''), cleanup: async () => {} })],
]
const pgUrl = process.env.TOPOGRAPH_TEST_PG_URL
if (pgUrl !== undefined) {
  engines.push([
    'postgres',
    async () => {
      const schema = `tg_gc_${Math.random().toString(16).slice(2, 10)}`
      const admin = new pg.Client({ connectionString: pgUrl })
      await admin.connect()
      await admin.query(`CREATE SCHEMA ${schema}`)
      const u = new URL(pgUrl)
      u.searchParams.set('options', `-c search_path=${schema}`)
      const store = createRecordStore(u.toString() as `postgres://${string}`, '')
      return {
        store,
        cleanup: async () => {
          await admin.query(`DROP SCHEMA ${schema} CASCADE`)
          await admin.end()
        },
      }
    },
  ])
}

console.log(`${writers} writers (one per shard), 6 records per write, ${seconds} s, ${rounds} rounds`)
console.log('| Engine | writes/s, one store write per batch | writes/s, group commit | ratio |')
console.log('| --- | ---: | ---: | ---: |')
for (const [name, make] of engines) {
  const single: number[] = []
  const grouped: number[] = []
  for (let r = 0; r < rounds; r++) {
    for (const g of [false, true]) {
      const { store, cleanup } = await make()
      ;(g ? grouped : single).push(await measure(store, g))
      await store.close()
      await cleanup()
    }
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
  const f = (n: number) => Math.round(n).toLocaleString('en')
  console.log(
    `| ${name} | ${f(med(single))} | ${f(med(grouped))} | ${(med(grouped) / med(single)).toFixed(2)}× |`,
  )
}
