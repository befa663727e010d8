// Requests per second on one core: ApiVersions, Metadata and OffsetCommit against the Topograph
// server (coordinator.storage=sqlite, the default, and memory for comparison), next to a bare Node
// server written only for this benchmark (it frames requests and answers fixed bytes, the ceiling
// for any server on this runtime), all measured in the same run. The servers run in this process's
// one JavaScript thread (one core); the load comes from a child process over loopback
// (load-worker.ts; started before the servers and kept, see load.ts): 4 connections × 16 requests in
// flight, 1 s warm-up, then `seconds` measured.
//
//   node --import tsx bench/server/requests.ts [seconds=3] [runs=1]
//
// TOPOGRAPH_BENCH_BUILD=dist runs the compiled server from dist/ (after `npm run build`) instead of
// the TypeScript sources (see target.ts).
//
// The OffsetCommit rows also run open loops at half the measured throughput, against Topograph and
// against the bare server (the floor: what the generator, the kernel and a server doing nothing give
// at that rate); after each row a line per such run says what overlapped it (collections on either
// side, waits for a CPU, the SQLite checkpoint rounds that held the writes, the generator's longest
// tick).
//
// With several runs it prints every run and then the medians (throughput, latency and ratio are
// each the median of the per-run figures). BENCH_ENGINES=sqlite (or memory) runs one engine's server
// only, which gives more before/after pairs of that engine in a short quiet window (its rows then
// run without the other engine's runs between its own).
//
// Every half-load run (Topograph's and the bare server's) begins with a full collection of this
// process and of the load process, before its warm-up second: what the runs before it promoted
// does not fall due in it. BENCH_GC_BEFORE=0 leaves them out.
//
// The servers' process runs with the Node options of `topograph start` (the young generation's fixed
// size: runAsTheCli in target.ts runs the script again with them); BENCH_CLI_NODE_OPTIONS=0 leaves
// them out.
//
// What a closed loop's CPU per request may owe to the machine or to the process: each closed loop
// (the bare server's too) runs with the machine's speed probed beside it in the load process
// (`speedProbeUs` of the soak, the fastest of three runs every 250 ms: more µs is a slower machine),
// and the servers' process logs V8's deoptimizations (deopt-log.ts; BENCH_DEOPTS=0 leaves the log
// out). A line per row gives, for each closed loop, the server's CPU a request (its main thread's
// beside), the generator's, the probe's and the deoptimizations during it.
import { type BenchServer, offsetCommitBody, startBenchServer, streamsCommitBody } from './commit-server.js'
import { runAsTheCli, serverBuild } from './target.js'
import { requestFrame, WireClient } from '../../test/server/wire-client.js'
import {
  bareServer,
  closeServer,
  type LoadSpec,
  type Measured,
  median,
  profiled,
  rps,
  runLoad,
  startLoadProcesses,
  withSizePrefix,
} from './load.js'
import { constants, PerformanceObserver } from 'node:perf_hooks'
import { recordCheckpointRounds } from './checkpoint-rounds.js'
import { collectFully } from './gc-events.js'
import { mainThreadStat } from './thread-stat.js'
import { DeoptLog, type Deopts, deoptLogOptions, describeDeopts } from './deopt-log.js'

/** The servers' Node options from the CLI's `#!` line; in a process without them this runs again. */
const cliOptionsInEffect = await runAsTheCli(
  process.env.BENCH_DEOPTS === '0' || process.execArgv.includes('--log-deopt') ? [] : deoptLogOptions(),
)
const deoptLog = DeoptLog.ofThisProcess()
/** Node options the servers' process was given besides the CLI's, tsx and the deoptimization log (e.g. a V8 flag under trial). */
const otherNodeOptions = process.execArgv.filter(
  (o, i, all) =>
    !cliOptionsInEffect.includes(o) &&
    !deoptLogOptions().some((d) => d === o || (d.startsWith('--logfile=') && o.startsWith('--logfile='))) &&
    o !== '--import' &&
    !(o === 'tsx' && all[i - 1] === '--import'),
)

const seconds = Number(process.argv[2] ?? 3)
const runs = Number(process.argv[3] ?? 1)
if (!(seconds > 0) || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: requests.ts [seconds>0] [runs>=1]')
  process.exit(2)
}

const apiVersions = requestFrame(18, 3, 1, { clientSoftwareName: 'bench', clientSoftwareVersion: '1' })
const metadata = requestFrame(3, 12, 1, { topics: null })
const offsetCommit = requestFrame(8, 9, 1, offsetCommitBody)
// The same commit from 16 groups (on 16 different shards), sent round-robin: what group commit
// across shards batches.
const offsetCommit16 = Array.from({ length: 16 }, (_, g) =>
  requestFrame(8, 9, 1, { ...offsetCommitBody, groupId: `bench-commit-${g}` }),
)

const streamsCommit = requestFrame(8, 9, 1, streamsCommitBody)

// BENCH_ONLY=<text> keeps the requests whose name contains the text.
const only = process.env.BENCH_ONLY
const requests = (
  [
    ['ApiVersions v3', [apiVersions]],
    ['Metadata v12 (10 topics × 3 partitions)', [metadata]],
    ['OffsetCommit v9 (2 topics × 3 partitions)', [offsetCommit]],
    ['OffsetCommit v9, 16 groups (2 topics × 3 partitions)', offsetCommit16],
    ['OffsetCommit v9, Streams-shaped (1 topic × 20 partitions)', [streamsCommit]],
  ] as const
).filter(([name]) => only === undefined || name.includes(only))

type Engine = 'sqlite' | 'memory'
const engines = (process.env.BENCH_ENGINES ?? 'sqlite,memory').split(',') as Engine[]
if (engines.length === 0 || engines.some((e) => e !== 'sqlite' && e !== 'memory')) {
  console.error('BENCH_ENGINES: a comma-separated list of sqlite and memory')
  process.exit(2)
}
// The load process starts before the servers: no fork of this process after they hold anything.
startLoadProcesses()
const servers = new Map<Engine, BenchServer>()
for (const e of engines) servers.set(e, await startBenchServer(e))
/** The port of an engine's server (one that runs). */
const portOf = (k: Engine) => (servers.get(k) as BenchServer).server.address.port

// Every OffsetCommit must succeed: check the answer once before timing.
for (const { server } of servers.values()) {
  const c = await WireClient.connect(server.address.port)
  const { body } = await c.request<{ topics: { partitions: { errorCode: number }[] }[] }>(
    8,
    9,
    offsetCommitBody,
  )
  c.close()
  const codes = body.topics.flatMap((t) => t.partitions.map((p) => p.errorCode))
  if (codes.length !== 6 || codes.some((e) => e !== 0))
    throw new Error(`OffsetCommit answered ${codes.join(',')}`)
  const streams = await WireClient.connect(server.address.port)
  const s = await streams.request<{ topics: { partitions: { errorCode: number }[] }[] }>(
    8,
    9,
    streamsCommitBody,
  )
  streams.close()
  const streamsCodes = s.body.topics.flatMap((t) => t.partitions.map((p) => p.errorCode))
  if (streamsCodes.length !== 20 || streamsCodes.some((e) => e !== 0))
    throw new Error(`the Streams-shaped OffsetCommit answered ${streamsCodes.join(',')}`)
}

/** The bytes Topograph answers to `frame`, as a complete frame for the bare server. */
async function answerOf(frame: Buffer): Promise<Buffer> {
  const probe = await WireClient.connect(portOf(engines[0]))
  probe.write(frame)
  const f = (await probe.nextFrame()) as Buffer
  probe.close()
  return withSizePrefix(f)
}

/**
 * What else happened during one half-load run, for telling a spike's cause: this process's
 * collections (it runs the servers), its main thread's wait for a CPU, and the generator's own
 * pauses. Observing costs nothing between collections (no timer is added to the servers' loop).
 */
interface Overlap {
  readonly serverGcOver1ms: number
  readonly serverGcLongestMs: number
  readonly serverMajor: number
  readonly serverWaitingMs: number
  readonly deopts: Deopts | undefined
  /** ms of each SQLite checkpoint round run with the writes held, warm-up second included. */
  readonly heldRounds: number[]
}
/** The SQLite servers' checkpoint rounds (checkpoint-rounds.ts), for the half-load lines. */
const checkpointRounds = recordCheckpointRounds(() => performance.now())
async function observed(spec: LoadSpec): Promise<Measured & { readonly overlap: Overlap }> {
  // Each half-load run starts without the old-generation garbage of the runs before it (other rows,
  // the other engine's server, the closed loops), in both processes: a full collection it has is
  // then its own.
  const collect = process.env.BENCH_GC_BEFORE !== '0'
  if (collect) collectFully()
  deoptLog?.take()
  const held0 = checkpointRounds.held.length
  const gc = await collectionsDuring(async () => {
    const stat0 = mainThreadStat()
    const m = await runLoad({ ...spec, collectFirst: collect })
    const stat1 = mainThreadStat()
    const waiting = stat0 === null || stat1 === null ? Number.NaN : (stat1.waiting - stat0.waiting) / 1e6
    return { m, waiting }
  })
  const { m, waiting } = gc.result
  return {
    ...m,
    overlap: {
      serverGcOver1ms: gc.over1ms,
      serverGcLongestMs: gc.longestMs,
      serverMajor: gc.major,
      serverWaitingMs: waiting,
      deopts: deoptLog?.take(),
      heldRounds: checkpointRounds.held.slice(held0),
    },
  }
}

/** This process's collections while `work` runs: how many took 1 ms or more, the longest, the full ones. */
async function collectionsDuring<T>(
  work: () => Promise<T>,
): Promise<{ result: T; over1ms: number; longestMs: number; major: number }> {
  const gc = { over1ms: 0, longestMs: 0, major: 0 }
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++
      if (e.duration >= 1) gc.over1ms++
      if (e.duration > gc.longestMs) gc.longestMs = e.duration
    }
  })
  observer.observe({ entryTypes: ['gc'] })
  try {
    const result = await work()
    return { result, ...gc }
  } finally {
    observer.disconnect()
  }
}

/** A closed loop with what tells the machine from the process: its collections, the main thread's CPU, the deoptimizations. */
interface ClosedLoop {
  readonly m: Measured
  readonly gc: { over1ms: number; longestMs: number; major: number }
  /** The servers' main thread on a CPU, µs a request (schedstat; NaN off Linux). */
  readonly mainCpuUsPerRequest: number
  readonly deopts: Deopts | undefined
}
async function closedLoop(work: () => Promise<Measured>): Promise<ClosedLoop> {
  deoptLog?.take()
  const stat0 = mainThreadStat()
  const gc = await collectionsDuring(work)
  const stat1 = mainThreadStat()
  const m = gc.result
  return {
    m,
    gc,
    mainCpuUsPerRequest:
      stat0 === null || stat1 === null
        ? Number.NaN
        : (stat1.onCpu - stat0.onCpu) / 1000 / Math.max(1, m.answered),
    deopts: deoptLog?.take(),
  }
}
/** `18.2 µs CPU/req (main thread 15.1), 9.3 answers a read, generator 4.1, speed probe 266 µs (p90 281), 0 deopts`. */
function describeClosed(c: ClosedLoop): string {
  const p = c.m.speedProbe
  return `${c.m.cpuUsPerRequest.toFixed(1)} µs CPU/req (main thread ${c.mainCpuUsPerRequest.toFixed(1)}), ${(c.m.answered / Math.max(1, c.m.reads)).toFixed(1)} answers a read, generator ${((c.m.generatorCpuUs ?? Number.NaN) / Math.max(1, c.m.answered)).toFixed(1)}, speed probe ${(p?.fastestUs ?? Number.NaN).toFixed(0)} µs (p90 ${(p?.p90Us ?? Number.NaN).toFixed(0)}), ${c.deopts === undefined ? 'deopts not logged' : describeDeopts(c.deopts)}`
}

/** One line per half-load run of a row: its p99 and what overlapped it. */
function printOverlaps(name: string, row: Row): void {
  const line = (what: string, m: (Measured & { overlap?: Overlap }) | undefined) => {
    if (m?.overlap === undefined) return
    const o = m.overlap
    const g = m.generatorGc
    console.log(
      `  ${name}, ${what}: p99 ${m.p99.toFixed(2)} ms, max ${m.max.toFixed(2)}; server: ${o.serverGcOver1ms} collections ≥ 1 ms (longest ${o.serverGcLongestMs.toFixed(1)}), ${o.serverMajor} full, main thread waited ${o.serverWaitingMs.toFixed(0)} ms for a CPU, ${o.heldRounds.length} checkpoint rounds with the writes held${o.heldRounds.length === 0 ? '' : ` (${o.heldRounds.map((ms) => ms.toFixed(1)).join(', ')} ms)`}, ${o.deopts === undefined ? 'deopts not logged' : describeDeopts(o.deopts)}; generator: longest tick ${(m.longestTickMs ?? Number.NaN).toFixed(1)} ms, ${g.over1ms} collections ≥ 1 ms (longest ${g.longestMs.toFixed(1)}), ${g.major} full, waited ${(m.generatorThread?.waitingMs ?? Number.NaN).toFixed(0)} ms, ${(m.answered / Math.max(1, m.writes)).toFixed(1)} requests a write`,
    )
  }
  for (const k of engines) {
    line(`${k} half load`, row.half?.[k])
    line(`bare server at the ${k} half rate`, row.floor?.[k])
  }
}

type Row = {
  bare: Measured
  sqlite?: Measured
  memory?: Measured
  /** OffsetCommit rows: the latency at half the throughput just measured (open loop). */
  half?: { sqlite?: Measured & { overlap?: Overlap }; memory?: Measured & { overlap?: Overlap } }
  /** OffsetCommit rows: the bare server under the same open loops (the load's own latency). */
  floor?: { sqlite?: Measured & { overlap?: Overlap }; memory?: Measured & { overlap?: Overlap } }
}
const results = new Map<string, Row[]>()
// BENCH_LOAD_WRITES=each: the open loops write every request on its own (load-worker.ts), as
// before they wrote a tick's requests to a connection together.
const writes = process.env.BENCH_LOAD_WRITES === 'each' ? ('each' as const) : ('tick' as const)
const spec = { seconds, warmupSeconds: 1, connections: 4, depth: 16, writes }
for (let run = 0; run < runs; run++) {
  for (const [name, frames] of requests) {
    // The bare server answers every frame with the answer to the first (the same bytes for each).
    const bare = await bareServer(await answerOf(frames[0]))
    const bareLoop = await closedLoop(() =>
      runLoad({ ...spec, frames: [...frames], port: bare.port, speedProbe: true }),
    )
    const row: Row = { bare: bareLoop.m }
    // The closed loops are not preceded by a full collection: what the runs before left in this
    // process's heap may fall due in them. Their collections (the warm-up second's included) are
    // counted, for telling a slow closed loop's cause.
    const closed: string[] = []
    const machine: string[] = [`bare ${describeClosed(bareLoop)}`]
    for (const k of engines) {
      const loop = await closedLoop(() =>
        profiled(`${name}-${k}-run${run + 1}`, () =>
          runLoad({ ...spec, frames: [...frames], port: portOf(k), speedProbe: true }),
        ),
      )
      row[k] = loop.m
      closed.push(
        `${k} ${loop.m.cpuUsPerRequest.toFixed(1)} µs CPU/req, ${loop.gc.major} full collections (${loop.gc.over1ms} ≥ 1 ms, longest ${loop.gc.longestMs.toFixed(1)})`,
      )
      machine.push(`${k} ${describeClosed(loop)}`)
    }
    console.log(`  ${name}, closed loops: ${closed.join('; ')}`)
    console.log(`  ${name}, closed loops' machine and code: ${machine.join('; ')}`)
    if (name.startsWith('OffsetCommit')) {
      const measured = (k: Engine) => row[k] as Measured
      row.half = {}
      for (const k of engines)
        row.half[k] = await observed({
          ...spec,
          frames: [...frames],
          port: portOf(k),
          rate: rps(measured(k)) / 2,
        })
      // The same open loop against the bare server, at each engine's half rate: the latency the load
      // generator, the kernel and a server that does nothing give at that rate on this machine.
      row.floor = {}
      for (const k of engines)
        row.floor[k] = await observed({
          ...spec,
          frames: [...frames],
          port: bare.port,
          rate: rps(measured(k)) / 2,
        })
    }
    await closeServer(bare.server)
    if (row.half !== undefined) printOverlaps(name, row)
    if (!results.has(name)) results.set(name, [])
    results.get(name)?.push(row)
  }
  if (runs > 1) {
    console.log(`run ${run + 1}:`)
    print(new Map([...results].map(([k, v]) => [k, [v[run]]])))
  }
}
if (runs > 1) console.log(`medians of ${runs} runs:`)
console.log(
  `server build: ${serverBuild}; servers' Node options: ${cliOptionsInEffect.join(' ') || "Node's own"}${otherNodeOptions.length > 0 ? `, and ${otherNodeOptions.join(' ')}` : ''}; open-loop writes: ${writes}; deoptimizations: ${deoptLog === undefined ? 'not logged' : (process.execArgv.find((o) => o.startsWith('--logfile=')) ?? '').slice('--logfile='.length)}`,
)
print(results)

function print(res: Map<string, Row[]>): void {
  const f = (n: number) => Math.round(n).toLocaleString('en')
  const ms = (n: number) => n.toFixed(2)
  console.log(
    '| Request | bare server req/s | p50 / p99 ms | Topograph sqlite req/s | p50 / p99 ms | ratio | Topograph memory req/s | p50 / p99 ms | ratio |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const [name, rows] of res) {
    const m = (pick: (r: Row) => number) => median(rows.map(pick))
    const cell = (k: 'bare' | Engine) => {
      const at = (r: Row) => r[k] as Measured
      return `${f(m((r) => rps(at(r))))} | ${ms(m((r) => at(r).p50))} / ${ms(m((r) => at(r).p99))}`
    }
    // An engine whose server did not run (BENCH_ENGINES) shows dashes.
    const engine = (k: Engine) =>
      engines.includes(k)
        ? `${cell(k)} | ${(100 * m((r) => rps(r[k] as Measured) / rps(r.bare))).toFixed(0)} %`
        : '– | – | –'
    console.log(`| ${name} | ${cell('bare')} | ${engine('sqlite')} | ${engine('memory')} |`)
  }
  const halves = [...res].filter(([, rows]) => rows.every((r) => r.half !== undefined))
  if (halves.length > 0) {
    console.log(
      '\n| Request, at half the measured throughput | sqlite req/s | p50 / p99 ms | CPU µs/req | bare server at that rate, p50 / p99 ms | memory req/s | p50 / p99 ms | CPU µs/req | bare server at that rate, p50 / p99 ms |',
    )
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    // The load generator's own CPU at those half loads, printed after: it shares the two cores with
    // the server, and what it spends shows in the tail it measures.
    const generator: string[] = []
    for (const [name, rows] of halves) {
      const m = (pick: (r: Row) => number) => median(rows.map(pick))
      const half = (k: Engine) => (r: Row) => r.half?.[k] as Measured
      const cell = (k: Engine) => {
        if (!engines.includes(k)) return '– | – | – | –'
        const floor = (r: Row) => r.floor?.[k] as Measured
        const at = half(k)
        return `${f(m((r) => rps(at(r))))} | ${ms(m((r) => at(r).p50))} / ${ms(m((r) => at(r).p99))} | ${m((r) => at(r).cpuUsPerRequest).toFixed(1)} | ${
          rows.every((r) => r.floor !== undefined)
            ? `${ms(m((r) => floor(r).p50))} / ${ms(m((r) => floor(r).p99))}`
            : '–'
        }`
      }
      const generatorCell = (k: Engine) => {
        if (!engines.includes(k)) return '–'
        const at = half(k)
        const all = m((r) => (at(r).generatorCpuUs ?? Number.NaN) / at(r).answered)
        const main = m((r) => (1000 * (at(r).generatorThread?.onCpuMs ?? Number.NaN)) / at(r).answered)
        return `${all.toFixed(1)} (${main.toFixed(1)})`
      }
      console.log(`| ${name} | ${cell('sqlite')} | ${cell('memory')} |`)
      generator.push(`| ${name} | ${generatorCell('sqlite')} | ${generatorCell('memory')} |`)
    }
    console.log(
      '\n| Request, at half the measured throughput | load generator CPU µs/req (main thread): sqlite | memory |',
    )
    console.log('| --- | ---: | ---: |')
    for (const line of generator) console.log(line)
  }
  // Server CPU time per answered request; bare ÷ Topograph is the ratio the machine's load hardly moves.
  console.log(
    '\n| Request | bare CPU µs/req | sqlite CPU µs/req | bare ÷ sqlite | memory CPU µs/req | bare ÷ memory |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |')
  for (const [name, rows] of res) {
    const m = (pick: (r: Row) => number) => median(rows.map(pick))
    const us = (k: 'bare' | Engine) => m((r) => (r[k] as Measured).cpuUsPerRequest).toFixed(1)
    const ratio = (k: Engine) =>
      `${(100 * m((r) => r.bare.cpuUsPerRequest / (r[k] as Measured).cpuUsPerRequest)).toFixed(0)} %`
    const engine = (k: Engine) => (engines.includes(k) ? `${us(k)} | ${ratio(k)}` : '– | –')
    console.log(`| ${name} | ${us('bare')} | ${engine('sqlite')} | ${engine('memory')} |`)
  }
}

for (const s of servers.values()) await s.close()
