/**
 * Per-call cost of the built-in plugins, and how long each call holds the event loop.
 * Run: npx tsx bench/plugin/plugins.bench.ts   (set TOPOGRAPH_TEST_PG_URL to include postgres)
 *
 * "loop-blocking" is the synchronous part of a call (until the promise is returned), which is what
 * other requests on the coordinator wait for; "latency" is until the promise settles.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Bench } from 'tinybench'
import { InMemoryTopologyDescriptionPlugin } from '../../src/plugin/builtin/memory.js'
import { PostgresTopologyDescriptionPlugin } from '../../src/plugin/builtin/postgres.js'
import { SqliteTopologyDescriptionPlugin } from '../../src/plugin/builtin/sqlite.js'
import type { StreamsGroupTopologyDescriptionPlugin } from '../../src/plugin/spi.js'
import { descriptionOfSize, sampleTopologyDescription } from '../../src/plugin/tck/index.js'

const dir = mkdtempSync(join(tmpdir(), 'topograph-plugin-bench-'))
const small = sampleTopologyDescription()
const large = descriptionOfSize(32 * 1024)
const groups = 1000

async function plugins(): Promise<[string, StreamsGroupTopologyDescriptionPlugin][]> {
  const memory = new InMemoryTopologyDescriptionPlugin()
  memory.configure({})
  const sqlite = new SqliteTopologyDescriptionPlugin()
  sqlite.configure({ 'topology.description.sqlite.path': join(dir, 'bench.db') })
  const out: [string, StreamsGroupTopologyDescriptionPlugin][] = [
    ['memory', memory],
    ['sqlite', sqlite],
  ]
  const url = process.env.TOPOGRAPH_TEST_PG_URL
  if (url) {
    const pg = new PostgresTopologyDescriptionPlugin()
    await pg.configure({
      'topology.description.postgres.url': url,
      'topology.description.postgres.table': 'bench_descriptions',
    })
    out.push(['postgres', pg])
  }
  return out
}

/** Median synchronous time (µs) of `n` calls: the part that blocks the event loop. */
async function blocking(n: number, call: (i: number) => Promise<unknown>): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    const p = call(i)
    samples.push((performance.now() - t0) * 1000)
    await p
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(n / 2)]!
}

const all = await plugins()
const rows: Record<string, string>[] = []
for (const [name, p] of all) {
  // Readers use their own groups, so every get finds a description and pays for parsing it.
  for (let i = 0; i < groups; i++) await p.setTopology(`read${i}`, 1, small)
  const bench = new Bench({ time: 500 })
  let i = 0
  bench
    .add(`${name} setTopology (${Buffer.byteLength(JSON.stringify(small))} B)`, async () => {
      await p.setTopology(`g${i++ % groups}`, 1, small)
    })
    .add(`${name} setTopology (32 KiB)`, async () => {
      await p.setTopology(`big${i++ % groups}`, 1, large)
    })
    .add(`${name} getTopology (hit)`, async () => {
      if ((await p.getTopology(`read${i++ % groups}`, 1)) === null) throw new Error('expected a description')
    })
    .add(`${name} deleteTopology (absent)`, async () => {
      await p.deleteTopology(`absent${i++}`)
    })
  await bench.run()
  for (const t of bench.tasks) {
    const r = t.result as
      | { latency?: { p50?: number; mean?: number }; throughput?: { mean?: number } }
      | undefined
    rows.push({
      task: t.name,
      'latency p50 (µs)': ((r?.latency?.p50 ?? Number.NaN) * 1000).toFixed(1),
      'ops/s': Math.round(r?.throughput?.mean ?? Number.NaN).toString(),
    })
  }
  const block = {
    set: await blocking(2000, (k) => p.setTopology(`g${k % groups}`, 1, small)),
    set32k: await blocking(500, (k) => p.setTopology(`big${k % groups}`, 1, large)),
    get: await blocking(2000, (k) => p.getTopology(`read${k % groups}`, 1)),
  }
  rows.push({
    task: `${name} loop-blocking p50 (µs): set ${block.set.toFixed(1)}, set 32 KiB ${block.set32k.toFixed(1)}, get ${block.get.toFixed(1)}`,
    'latency p50 (µs)': '',
    'ops/s': '',
  })
  await p.close()
}
console.table(rows)
rmSync(dir, { recursive: true, force: true })
