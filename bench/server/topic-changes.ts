// Topic changes (CreateTopics, DeleteTopics, CreatePartitions) with large partition counts: the
// time to answer each, alone and with several clients at once, next to a Metadata and an
// ApiVersions request answered meanwhile on their own connection (the ceiling: what any request
// costs while the changes run), the event loop's longest stall and the load average. On Linux the
// stall is also given as the server's own: the longest gap between ticks of a 10 ms timer less the
// tick's 10 ms and the time the main thread waited for a CPU meanwhile (its schedstat), which is
// the machine's load and not the server's; what is left the thread spent on a CPU (given next to
// it) or blocked. Then where the time of one partition goes on this disk: its directory and two
// small files, with an fsync per file (what creating a partition costs if each file is made
// durable on its own), without any fsync, and with one fsync per directory.
//
//   node --import tsx bench/server/topic-changes.ts [rounds=1]
//
// TOPOGRAPH_BENCH_BUILD=dist runs the compiled server from dist/ (after `npm run build`).
// The server runs in this process with coordinator.storage=sqlite and the file log engine in a
// fresh data.dir; the clients are connections of this process (a stall of the server delays them
// too, which is what the Metadata probe measures).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import * as fsp from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { FrameConnection, WireClient } from '../../test/server/wire-client.js'
import { median } from './load.js'
import { createLogger, parseConfig, serverBuild, startServer } from './target.js'
import { mainThreadStat } from './thread-stat.js'

const rounds = Number(process.argv[2] ?? 1)
// A change may take minutes on a loaded machine: that is what is measured, not a failure.
FrameConnection.defaultResponseTimeoutMs = 600_000

const dataDir = mkdtempSync(join(tmpdir(), 'topograph-bench-topics-'))
const server = await startServer(
  parseConfig({
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'data.dir': dataDir,
    'console.listener': 'none',
  }),
  { logger: createLogger({ level: 'silent' }) },
)
const port = server.address.port

type Body = {
  topics?: { errorCode: number }[]
  responses?: { errorCode: number }[]
  results?: { errorCode: number }[]
}

function newTopic(name: string, numPartitions: number) {
  return { name, numPartitions, replicationFactor: -1, assignments: [], configs: [] }
}

const clients: WireClient[] = []
for (let i = 0; i < 4; i++) clients.push(await WireClient.connect(port))
const probe = await WireClient.connect(port)
await probe.request(19, 7, { topics: [newTopic('probe', 1)], timeoutMs: 60_000, validateOnly: false })

/** One request; its answer time in ms. Every error code in the answer must be 0. */
async function timed(c: WireClient, apiKey: number, version: number, body: unknown): Promise<number> {
  const t0 = performance.now()
  const r = await c.request<Body>(apiKey, version, body)
  const ms = performance.now() - t0
  const codes = [...(r.body.topics ?? []), ...(r.body.responses ?? []), ...(r.body.results ?? [])].map(
    (x) => x.errorCode,
  )
  if (codes.some((e) => e !== 0)) throw new Error(`api ${apiKey} answered ${codes.join(',')}`)
  return ms
}

const create = (c: WireClient, topics: [string, number][]) =>
  timed(c, 19, 7, { topics: topics.map(([n, p]) => newTopic(n, p)), timeoutMs: 600_000, validateOnly: false })
const remove = (c: WireClient, names: string[]) =>
  timed(c, 20, 6, {
    topics: names.map((name) => ({ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' })),
    timeoutMs: 600_000,
  })
const grow = (c: WireClient, name: string, count: number) =>
  timed(c, 37, 3, { topics: [{ name, count, assignments: null }], timeoutMs: 600_000, validateOnly: false })

interface Phase {
  readonly name: string
  /** Answer times of the phase's requests (ms). */
  readonly answers: number[]
  /** Metadata answered meanwhile (ms each). */
  readonly metadata: number[]
  /** ApiVersions answered meanwhile (ms each). */
  readonly apiVersions: number[]
  /** The event loop's longest delay in the phase (ms). */
  readonly stallMs: number
  /**
   * The longest stall less the main thread's wait for a CPU in it, and the thread's time on a CPU
   * in it (ms); null off Linux.
   */
  readonly ownStall: { ms: number; onCpuMs: number } | null
  /** The one-minute load average at the phase's end. */
  readonly load: number
}

/**
 * The longest gap between ticks of a 10 ms timer less 10 ms and the main thread's wait for a CPU
 * in it, and how much of that the thread spent on a CPU (the rest it was blocked).
 */
function ownStallMonitor(): () => { ms: number; onCpuMs: number } | null {
  let last = performance.now()
  let lastStat = mainThreadStat()
  let most = { ms: 0, onCpuMs: 0 }
  const timer = setInterval(() => {
    const now = performance.now()
    const stat = mainThreadStat()
    if (stat !== null && lastStat !== null) {
      const ms = now - last - 10 - (stat.waiting - lastStat.waiting) / 1e6
      if (ms > most.ms) most = { ms, onCpuMs: (stat.onCpu - lastStat.onCpu) / 1e6 }
    }
    last = now
    lastStat = stat
  }, 10)
  return () => {
    clearInterval(timer)
    return lastStat === null ? null : most
  }
}

/**
 * Runs `work` while a Metadata request of one topic, then an ApiVersions request, go every 20 ms
 * on the probe connection.
 */
async function phase(name: string, work: () => Promise<number[]>): Promise<Phase> {
  const metadata: number[] = []
  const apiVersions: number[] = []
  let running = true
  const probing = (async () => {
    while (running) {
      const t0 = performance.now()
      await probe.request(3, 12, {
        topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'probe' }],
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: false,
      })
      metadata.push(performance.now() - t0)
      const t1 = performance.now()
      await probe.request(18, 3, { clientSoftwareName: 'bench', clientSoftwareVersion: '1' })
      apiVersions.push(performance.now() - t1)
      await new Promise((r) => setTimeout(r, 20))
    }
  })()
  const h = monitorEventLoopDelay({ resolution: 10 })
  h.enable()
  const own = ownStallMonitor()
  const answers = await work()
  const ownStall = own()
  h.disable()
  running = false
  await probing
  return { name, answers, metadata, apiVersions, stallMs: h.max / 1e6, ownStall, load: loadavg()[0] }
}

const topics = (prefix: string, n: number, p: number): [string, number][] =>
  Array.from({ length: n }, (_, i) => [`${prefix}-${i}`, p])

async function scenarios(round: number): Promise<Phase[]> {
  const r = `r${round}`
  const out: Phase[] = []
  out.push(
    await phase('CreateTopics 1 × 1,000, alone', async () => [await create(clients[0], [[`${r}-a`, 1000]])]),
  )
  out.push(await phase('DeleteTopics 1 × 1,000, alone', async () => [await remove(clients[0], [`${r}-a`])]))
  out.push(
    await phase('CreateTopics 10 × 100 (one request), alone', async () => [
      await create(clients[0], topics(`${r}-b`, 10, 100)),
    ]),
  )
  out.push(
    await phase('DeleteTopics 10 × 100 (one request), alone', async () => [
      await remove(
        clients[0],
        topics(`${r}-b`, 10, 100).map(([n]) => n),
      ),
    ]),
  )
  await create(clients[0], [[`${r}-c`, 1]])
  out.push(
    await phase('CreatePartitions 1 → 1,000, alone', async () => [await grow(clients[0], `${r}-c`, 1000)]),
  )
  await remove(clients[0], [`${r}-c`])
  out.push(
    await phase('CreateTopics 1 × 1,000, 4 clients at once', () =>
      Promise.all(clients.map((c, i) => create(c, [[`${r}-d${i}`, 1000]]))),
    ),
  )
  out.push(
    await phase('DeleteTopics 1 × 1,000, 4 clients at once', () =>
      Promise.all(clients.map((c, i) => remove(c, [`${r}-d${i}`]))),
    ),
  )
  out.push(
    await phase('CreateTopics 10 × 100, 4 clients at once', () =>
      Promise.all(clients.map((c, i) => create(c, topics(`${r}-e${i}`, 10, 100)))),
    ),
  )
  out.push(
    await phase('DeleteTopics 10 × 100, 4 clients at once', () =>
      Promise.all(
        clients.map((c, i) =>
          remove(
            c,
            topics(`${r}-e${i}`, 10, 100).map(([n]) => n),
          ),
        ),
      ),
    ),
  )
  for (let i = 0; i < 4; i++) await create(clients[0], [[`${r}-f${i}`, 1]])
  out.push(
    await phase('CreatePartitions 1 → 1,000, 4 clients at once', () =>
      Promise.all(clients.map((c, i) => grow(c, `${r}-f${i}`, 1000))),
    ),
  )
  for (let i = 0; i < 4; i++) await remove(clients[0], [`${r}-f${i}`])
  return out
}

const fmt = (ms: number) => (ms >= 100 ? Math.round(ms).toLocaleString('en') : ms.toFixed(1))

console.log(`Topic changes (build: ${serverBuild}, load average ${loadavg()[0].toFixed(1)} at start)\n`)
console.log(
  '| Change | answered in ms (max of the clients) | Metadata meanwhile p50 / max ms | ApiVersions max ms | event-loop stall max ms | own stall max ms (on CPU) | load |',
)
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (let round = 0; round < rounds; round++) {
  for (const p of await scenarios(round)) {
    const slowest = Math.max(...p.answers)
    const meta = p.metadata.length > 0 ? `${fmt(median(p.metadata))} / ${fmt(Math.max(...p.metadata))}` : '—'
    const api = p.apiVersions.length > 0 ? fmt(Math.max(...p.apiVersions)) : '—'
    console.log(
      `| ${p.name} | ${fmt(slowest)} | ${meta} | ${api} | ${fmt(p.stallMs)} | ${p.ownStall === null ? '—' : `${fmt(p.ownStall.ms)} (${fmt(p.ownStall.onCpuMs)})`} | ${p.load.toFixed(1)} |`,
    )
  }
}
for (const c of clients) c.close()
probe.close()
await server.close()
rmSync(dataDir, { recursive: true, force: true })

// Where the time of creating a partition goes on this disk: 1,000 directories with two small
// files each, 32 at a time on the threadpool, three ways.
const PARTITIONS = 1000
const CONCURRENCY = 32
async function files(mode: 'fsync each file' | 'no fsync' | 'fsync each directory once'): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), 'topograph-bench-dirs-'))
  const t0 = performance.now()
  const one = async (i: number) => {
    const dir = join(root, `t-${i}`)
    mkdirSync(dir)
    for (const name of ['partition.metadata', 'leader-epoch-checkpoint']) {
      const fh = await fsp.open(join(dir, `${name}.tmp`), 'w')
      await fh.write('version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n')
      if (mode === 'fsync each file') await fh.sync()
      await fh.close()
      await fsp.rename(join(dir, `${name}.tmp`), join(dir, name))
    }
    if (mode === 'fsync each directory once') {
      const fh = await fsp.open(dir, 'r')
      await fh.sync()
      await fh.close()
    }
  }
  for (let k = 0; k < PARTITIONS; k += CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, PARTITIONS - k) }, (_, j) => one(k + j)))
  }
  if (mode === 'fsync each directory once') {
    const fh = await fsp.open(root, 'r')
    await fh.sync()
    await fh.close()
  }
  const ms = performance.now() - t0
  rmSync(root, { recursive: true, force: true })
  return ms
}
console.log(`\n1,000 partition directories, two small files each (load average ${loadavg()[0].toFixed(1)})\n`)
console.log('| Way | ms | ms per partition |')
console.log('| --- | ---: | ---: |')
for (const mode of ['fsync each file', 'no fsync', 'fsync each directory once'] as const) {
  const ms = await files(mode)
  console.log(`| ${mode} | ${fmt(ms)} | ${(ms / PARTITIONS).toFixed(2)} |`)
}
