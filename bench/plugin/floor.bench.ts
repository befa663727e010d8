/**
 * setTopology / getTopology of a 1,000-node description on each built-in plugin, next to "the floor"
 * measured in the same run: the encoding (JSON.stringify of the same description; JSON.parse for a
 * read) plus the bare storage operation on the same bytes —
 *   memory:   nothing more (a Map set / get);
 *   sqlite:   a prepared `INSERT OR REPLACE` (read: a prepared SELECT) with better-sqlite3 on its own
 *             file in WAL mode, synchronous=NORMAL as the plugin uses; and, as a stricter floor, the
 *             plugin's own statement shape (`INSERT … ON CONFLICT DO UPDATE`): for a row of 100 KiB
 *             or more, REPLACE deletes and re-inserts the row's overflow pages and costs far more;
 *   postgres: one upsert (read: one SELECT) over a single pg.Client, into a table of the same shape.
 * Calls run one at a time (each awaited), alternating plugin and floor in rounds so that both see the
 * same machine. Goal: plugin ≤ 2× the floor (p50 and throughput).
 *
 * Run: npx tsx bench/plugin/floor.bench.ts   (set TOPOGRAPH_TEST_PG_URL to include postgres)
 *      --json prints the rows as JSON as well (for combining runs).
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { InMemoryTopologyDescriptionPlugin } from '../../src/plugin/builtin/memory.js'
import { PostgresTopologyDescriptionPlugin } from '../../src/plugin/builtin/postgres.js'
import { SqliteTopologyDescriptionPlugin } from '../../src/plugin/builtin/sqlite.js'
import type {
  StreamsGroupTopologyDescription,
  StreamsGroupTopologyDescriptionPlugin,
  TopologyNode,
} from '../../src/plugin/spi.js'

/** A description with `nodes` nodes: sub-topologies of 100 (source → processors → sink) and 2 global stores. */
export function descriptionWithNodes(nodes: number): StreamsGroupTopologyDescription {
  const perSub = 100
  const subtopologies: StreamsGroupTopologyDescription['subtopologies'] = []
  let n = 0
  const name = (kind: string) => `KSTREAM-${kind}-${String(n++).padStart(10, '0')}`
  const globals = 2
  let left = nodes - globals * 2
  for (let s = 0; left > 0; s++) {
    const count = Math.min(perSub, left)
    left -= count
    const names: string[] = []
    for (let i = 0; i < count; i++)
      names.push(name(i === 0 ? 'SOURCE' : i === count - 1 ? 'SINK' : 'PROCESSOR'))
    const list: TopologyNode[] = names.map((nm, i): TopologyNode => {
      const successors = i + 1 < count ? [names[i + 1]!] : []
      if (i === 0)
        return { type: 'source', name: nm, topics: [`app-input-${s}`, `app-side-${s}`], successors }
      if (i === count - 1) return { type: 'sink', name: nm, topic: `app-output-${s}`, successors: [] }
      return { type: 'processor', name: nm, stores: i % 10 === 0 ? [`store-${s}-${i}`] : [], successors }
    })
    subtopologies.push({ id: String(s), nodes: list })
  }
  const globalStores: StreamsGroupTopologyDescription['globalStores'] = []
  for (let g = 0; g < globals; g++) {
    const src = name('SOURCE')
    const proc = name('KTABLE-SOURCE')
    globalStores.push({
      source: { type: 'source', name: src, topics: [`global-${g}`], successors: [proc] },
      processor: { type: 'processor', name: proc, stores: [`global-store-${g}`], successors: [] },
    })
  }
  return { subtopologies, globalStores }
}

function nodeCount(d: StreamsGroupTopologyDescription): number {
  return d.subtopologies.reduce((a, s) => a + s.nodes.length, 0) + d.globalStores.length * 2
}

interface Side {
  readonly set: (group: string) => Promise<unknown>
  readonly get: (group: string) => Promise<unknown>
  readonly close: () => Promise<void>
}

interface Stats {
  p50: number
  p99: number
  opsPerSec: number
}

function stats(samplesMs: number[]): Stats {
  const s = [...samplesMs].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 1000
  const total = samplesMs.reduce((a, b) => a + b, 0)
  return { p50: at(0.5), p99: at(0.99), opsPerSec: samplesMs.length / (total / 1000) }
}

const description = descriptionWithNodes(1000)
const json = JSON.stringify(description)
const bytes = Buffer.byteLength(json, 'utf8')
const groups = 200
const epoch = 1
const dir = mkdtempSync(join(tmpdir(), 'topograph-plugin-floor-'))

function pluginSide(p: StreamsGroupTopologyDescriptionPlugin): Side {
  return {
    set: (g) => p.setTopology(g, epoch, description),
    get: async (g) => {
      if ((await p.getTopology(g, epoch)) === null) throw new Error('expected a description')
    },
    close: () => p.close(),
  }
}

function memoryFloor(): Side {
  const m = new Map<string, string>()
  return {
    set: async (g) => {
      m.set(g, JSON.stringify(description))
    },
    get: async (g) => JSON.parse(m.get(g)!),
    close: async () => m.clear(),
  }
}

/** `replace`: the floor as specified; `upsert`: the plugin's own statement shape, a stricter floor. */
function sqliteFloor(kind: 'replace' | 'upsert'): Side {
  const db = new Database(join(dir, `floor-${kind}.db`))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY NOT NULL, e INTEGER NOT NULL, v TEXT NOT NULL)')
  const put = db.prepare<[string, number, string]>(
    kind === 'replace'
      ? 'INSERT OR REPLACE INTO t (k, e, v) VALUES (?, ?, ?)'
      : 'INSERT INTO t (k, e, v) VALUES (?, ?, ?) ON CONFLICT (k) DO UPDATE SET e = excluded.e, v = excluded.v',
  )
  const read = db.prepare<[string], { v: string }>('SELECT v FROM t WHERE k = ?')
  return {
    set: async (g) => {
      put.run(g, epoch, JSON.stringify(description))
    },
    get: async (g) => JSON.parse(read.get(g)!.v),
    close: async () => {
      db.close()
    },
  }
}

async function postgresFloor(url: string, table: string): Promise<Side> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  await c.query(`CREATE TABLE "${table}" (k text PRIMARY KEY, e integer NOT NULL, v text NOT NULL)`)
  return {
    set: (g) =>
      c.query(
        `INSERT INTO "${table}" (k, e, v) VALUES ($1, $2, $3) ON CONFLICT (k) DO UPDATE SET e = EXCLUDED.e, v = EXCLUDED.v`,
        [g, epoch, JSON.stringify(description)],
      ),
    get: async (g) => {
      const r = await c.query<{ v: string }>(`SELECT v FROM "${table}" WHERE k = $1`, [g])
      return JSON.parse(r.rows[0]!.v)
    },
    close: async () => {
      await c.query(`DROP TABLE IF EXISTS "${table}"`)
      await c.end()
    },
  }
}

/** Alternating rounds of `perRound` calls on each side; per-call latencies (ms). */
async function measure(
  sides: readonly [Side, Side],
  op: 'set' | 'get',
  rounds: number,
  perRound: number,
): Promise<[number[], number[]]> {
  const out: [number[], number[]] = [[], []]
  let k = 0
  for (let r = 0; r < rounds; r++) {
    for (let s = 0; s < 2; s++) {
      const side = sides[(r + s) % 2]!
      const samples = out[(r + s) % 2]!
      for (let i = 0; i < perRound; i++) {
        const g = `g${k++ % groups}`
        const t0 = performance.now()
        await side[op](g)
        samples.push(performance.now() - t0)
      }
    }
  }
  return out
}

interface Row {
  plugin: string
  op: 'set' | 'get'
  plugin_p50_us: number
  plugin_p99_us: number
  plugin_ops: number
  floor_p50_us: number
  floor_p99_us: number
  floor_ops: number
  ratio_p50: number
  ratio_ops: number
}

const candidates: { name: string; open: () => Promise<[Side, Side]> }[] = [
  {
    name: 'memory',
    open: async () => {
      const p = new InMemoryTopologyDescriptionPlugin()
      p.configure({})
      return [pluginSide(p), memoryFloor()]
    },
  },
  {
    name: 'sqlite',
    open: async () => {
      const p = new SqliteTopologyDescriptionPlugin()
      p.configure({ 'topology.description.sqlite.path': join(dir, 'plugin.db') })
      return [pluginSide(p), sqliteFloor('replace')]
    },
  },
  {
    name: 'sqlite (upsert floor)',
    open: async () => {
      const p = new SqliteTopologyDescriptionPlugin()
      p.configure({ 'topology.description.sqlite.path': join(dir, 'plugin-2.db') })
      return [pluginSide(p), sqliteFloor('upsert')]
    },
  },
]
const url = process.env.TOPOGRAPH_TEST_PG_URL
const id = randomUUID().replaceAll('-', '').slice(0, 10)
if (url) {
  candidates.push({
    name: 'postgres',
    open: async () => {
      const p = new PostgresTopologyDescriptionPlugin()
      await p.configure({
        'topology.description.postgres.url': url,
        'topology.description.postgres.table': `bench_plugin_${id}`,
      })
      return [pluginSide(p), await postgresFloor(url, `bench_floor_${id}`)]
    },
  })
}

const rows: Row[] = []
try {
  for (const c of candidates) {
    const sides = await c.open()
    try {
      const remote = c.name === 'postgres'
      const rounds = 20
      const perRound = remote ? 50 : 100
      // Warm-up, and every group stored on both sides so that each read hits.
      for (let i = 0; i < groups; i++) {
        await sides[0].set(`g${i}`)
        await sides[1].set(`g${i}`)
      }
      await measure(sides, 'get', 2, perRound)
      for (const op of ['set', 'get'] as const) {
        const [pl, fl] = await measure(sides, op, rounds, perRound)
        const a = stats(pl)
        const b = stats(fl)
        rows.push({
          plugin: c.name,
          op,
          plugin_p50_us: a.p50,
          plugin_p99_us: a.p99,
          plugin_ops: a.opsPerSec,
          floor_p50_us: b.p50,
          floor_p99_us: b.p99,
          floor_ops: b.opsPerSec,
          ratio_p50: a.p50 / b.p50,
          ratio_ops: b.opsPerSec / a.opsPerSec,
        })
      }
    } finally {
      await sides[0].close()
      await sides[1].close()
      if (c.name === 'postgres' && url) {
        // The plugin creates its table; drop it too.
        const cl = new pg.Client({ connectionString: url })
        await cl.connect()
        await cl.query(`DROP TABLE IF EXISTS "bench_plugin_${id}"`).catch(() => undefined)
        await cl.end()
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}

console.log(`1,000-node description: ${nodeCount(description)} nodes, ${bytes} bytes of JSON`)
console.table(
  rows.map((r) => ({
    call: `${r.plugin} ${r.op}Topology`,
    'plugin p50 µs': r.plugin_p50_us.toFixed(1),
    'plugin p99 µs': r.plugin_p99_us.toFixed(1),
    'plugin ops/s': Math.round(r.plugin_ops),
    'floor p50 µs': r.floor_p50_us.toFixed(1),
    'floor p99 µs': r.floor_p99_us.toFixed(1),
    'floor ops/s': Math.round(r.floor_ops),
    'p50 ÷ floor': r.ratio_p50.toFixed(2),
    'floor ops ÷ ops': r.ratio_ops.toFixed(2),
  })),
)
if (process.argv.includes('--json')) console.log(JSON.stringify(rows))
