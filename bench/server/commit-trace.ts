// Where the OffsetCommit latency tail at half load comes from: requests.ts's one-group commit
// (2 topics × 3 partitions; `streams`: the Streams-shaped one; `sixteen`: the same commit from 16
// groups on 16 shards) against one Topograph server, first closed loop for `fill-seconds` (as the
// throughput run before the half-load run of requests.ts fills the store), then open loop at `rate`
// requests a second (`half`: half of what the closed loop reached) while the server process
// records, on one clock with the load's send stamps, every event-loop stall (a 1 ms interval timer
// that fired more than 4 ms late, with the main thread's time on a CPU and waiting for one in it,
// from its schedstat), every garbage collection and every store write that took more than 2 ms.
// The slow requests are grouped into episodes (sent within 5 ms of each other) and each episode is
// printed with what the server was doing from 50 ms before its first send to its last answer.
//
// The load generator reports its own pauses on the same clock (open-loop sends it held back because
// its 1 ms tick came late, which then leave as a burst, and its collections of 1 ms or more): they
// are counted per run and shown in the episodes, so a tail the generator made is not taken for the
// server's.
//
// Each run also reports what the machine's load does not change: the collections by kind, the page
// faults per request, the stalls' own CPU time, the heap a commit leaves behind (the heap after a
// full collection, after the run less before it, per answered request) and, with memory storage,
// the log's compactions.
//
//   node --import tsx bench/server/commit-trace.ts [sqlite|memory] [rate=half] [seconds=4] [runs=3] [fill-seconds=4] [shape=one|streams|sixteen]
//
// TOPOGRAPH_BENCH_BUILD=dist traces the compiled server (see target.ts). The server runs with the
// Node options of `topograph start` (a young generation of fixed size), as requests.ts's do, unless
// BENCH_CLI_NODE_OPTIONS=0. BENCH_TRACE_GC=1 prints
// V8's --trace-gc and --trace-incremental-marking lines of each run (bench/server/gc-reasons.ts
// counts them by kind and reason). BENCH_BESIDE=1 runs the other engine's server in the same process
// too, filled the same way and loaded at half its rate just before each traced run, as requests.ts
// runs its SQLite server's half-load run before its memory server's.
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import v8 from 'node:v8'
import { requestFrame } from '../../test/server/wire-client.js'
import { type CheckpointRounds, recordCheckpointRounds } from './checkpoint-rounds.js'
import { offsetCommitBody, startBenchServer, streamsCommitBody } from './commit-server.js'
import { collectFully, observeGc, type TraceEvent, traceGcDuring } from './gc-events.js'
import { fmt, rps, runLoad, startLoadProcesses } from './load.js'
import { runAsTheCli, serverBuild } from './target.js'
import { mainThreadStat } from './thread-stat.js'

const storage = (process.argv[2] ?? 'memory') as 'sqlite' | 'memory'
const rateArg = process.argv[3] ?? 'half'
const seconds = Number(process.argv[4] ?? 4)
const runs = Number(process.argv[5] ?? 3)
const fillSeconds = Number(process.argv[6] ?? 4)
const shape = process.argv[7] ?? 'one'
if (
  (storage !== 'sqlite' && storage !== 'memory') ||
  !(rateArg === 'half' || Number(rateArg) > 0) ||
  !(seconds > 0)
) {
  console.error(
    'usage: commit-trace.ts [sqlite|memory] [rate] [seconds] [runs] [fill-seconds] [one|streams|sixteen]',
  )
  process.exit(2)
}
const cliOptions = await runAsTheCli()
console.log(`server's Node options: ${cliOptions.join(' ') || "Node's own"}`)
const SLOW_MS = 5
/** The load reports every request slower than this, so that the slowest 1 % is complete. */
const TAIL_FLOOR_MS = 1.5
/** An event-loop tick later than this (ms) is a stall (BENCH_STALL_MS; the generator's too). */
const STALL_MS = Number(process.env.BENCH_STALL_MS ?? 4)
const f1 = (n: number) => n.toFixed(1)

const events: TraceEvent[] = []
const epoch = () => performance.timeOrigin + performance.now()

// Store writes: the engine's append and group commit, timed around the promise.
/** The longest time one store write held the event loop in the current run. */
const loopHeld = { ms: 0, cpuMs: 0 }
/** Compactions of the memory engine's logs in the current run (a shard's record count fell). */
let compactions = 0
const base = serverBuild === 'dist' ? '../../dist/src/coordinator/storage/' : '../../src/coordinator/storage/'
type Usage = { records: number }
const engine = (
  storage === 'memory'
    ? (await import(`${base}memory.js`)).MemoryRecordStore
    : (await import(`${base}sqlite.js`)).SqliteRecordStore
) as {
  prototype: Record<string, (...a: unknown[]) => Promise<void>> & { usage?: (shard: number) => Usage }
}
const usage = engine.prototype.usage
for (const method of ['append', 'appendBatches']) {
  const original = engine.prototype[method]
  engine.prototype[method] = async function (this: unknown, ...args: unknown[]) {
    const shards =
      method === 'append' ? [args[0] as number] : (args[0] as { shard: number }[]).map((b) => b.shard)
    const added =
      method === 'append'
        ? [(args[1] as unknown[]).length]
        : (args[0] as { records: unknown[] }[]).map((b) => b.records.length)
    const before = usage === undefined ? [] : shards.map((shard) => usage.call(this, shard).records)
    const at = epoch()
    const cpu = process.cpuUsage()
    try {
      const pending = original.apply(this, args)
      // What the write held the event loop for: the synchronous part, up to the returned promise
      // (a commit on the event loop, and a checkpoint when the engine runs it there). The CPU time
      // is the process's: it includes any other thread's (the SQLite checkpoint worker) meanwhile.
      const held = epoch() - at
      const used = process.cpuUsage(cpu)
      const heldCpu = (used.user + used.system) / 1000
      if (held > loopHeld.ms) loopHeld.ms = held
      if (heldCpu > loopHeld.cpuMs) loopHeld.cpuMs = heldCpu
      // The memory engine appends (and compacts) before its promise: a log that holds fewer
      // records than before plus the appended ones was compacted.
      if (usage !== undefined)
        for (let i = 0; i < shards.length; i++)
          if (usage.call(this, shards[i]).records < before[i] + added[i]) compactions++
      return await pending
    } finally {
      const ms = epoch() - at
      if (ms > 2) {
        const n = added.reduce((a, b) => a + b, 0)
        const used = process.cpuUsage(cpu)
        const onCpu = ((used.user + used.system) / 1000).toFixed(1)
        events.push({ at, ms, what: `store ${method} of ${n} records, ${onCpu} ms on CPU` })
      }
    }
  }
}

// The SQLite engine's checkpoint holds: the writes wait in the store's queue for the last round of a
// checkpoint (docs/storage.md). The checkpointer is found through its first `afterCommit`; the 1 ms
// tick below notes when `holding` turns on and off.
let checkpointer: { holding: boolean } | undefined
if (storage === 'sqlite') {
  const { WalCheckpointer } = (await import(`${base}sqlite-checkpoint.js`)) as {
    WalCheckpointer: { prototype: { afterCommit: (this: { holding: boolean }, bytes: number) => void } }
  }
  const original = WalCheckpointer.prototype.afterCommit
  WalCheckpointer.prototype.afterCommit = function (this: { holding: boolean }, bytes: number) {
    checkpointer = this
    original.call(this, bytes)
  }
}
/** Each checkpoint round, posted to answered (checkpoint-rounds.ts). */
const rounds: CheckpointRounds =
  storage === 'sqlite'
    ? recordCheckpointRounds(epoch, (at, ms, held) => {
        // A round with the writes flowing takes a core beside the event loop's: its span is an
        // event (the held ones are noted by the tick below).
        if (!held) events.push({ at, ms, what: 'a checkpoint round with the writes flowing' })
      })
    : { held: [], flowing: [] }
/** The holds of the current run: how many, and how long in all. */
const holds = { n: 0, ms: 0, longest: 0 }
let heldSince: number | undefined

// `sixteen`: the one-group commit from 16 groups (16 shards), round-robin, as requests.ts's
// 16-group row sends it.
const frames =
  shape === 'sixteen'
    ? Array.from({ length: 16 }, (_, g) =>
        requestFrame(8, 9, 1, { ...offsetCommitBody, groupId: `bench-commit-${g}` }),
      )
    : [requestFrame(8, 9, 1, shape === 'streams' ? streamsCommitBody : offsetCommitBody)]
const spec = { frames, warmupSeconds: 1, connections: 4, depth: 16 }

/** A server filled closed loop for `fillSeconds`; its half-load rate is half of what that reached. */
async function filled(kind: 'sqlite' | 'memory') {
  const bench = await startBenchServer(kind)
  const port = bench.server.address.port
  let half = 0
  if (fillSeconds > 0 || rateArg === 'half') {
    const fill = await runLoad({ ...spec, port, seconds: Math.max(1, fillSeconds) })
    half = rps(fill) / 2
    console.log(
      `fill (${kind}): ${fmt(rps(fill))} req/s closed loop for ${fillSeconds} s, ${f1(fill.cpuUsPerRequest)} µs CPU/req`,
    )
  }
  return { bench, port, half }
}

// The load process starts before the servers: no fork of this process after they hold anything.
startLoadProcesses()
const other =
  process.env.BENCH_BESIDE === '1' ? await filled(storage === 'memory' ? 'sqlite' : 'memory') : undefined
const traced = await filled(storage)
const port = traced.port
const rate = rateArg === 'half' ? traced.half : Number(rateArg)

// Event-loop stalls. The main thread's schedstat tells its own work (on a CPU) from the machine
// taking the core away (waiting for a CPU); the rest of a stall it was blocked (a page fault's I/O,
// a lock, a GC helper thread it waited for).
let last = epoch()
let lastStat = mainThreadStat()
interface Stall {
  readonly at: number
  readonly ms: number
  readonly onCpuMs: number
  readonly waitingMs: number
}
const stalls: Stall[] = []
const tick = setInterval(() => {
  const now = epoch()
  const stat = mainThreadStat()
  if (now - last > STALL_MS) {
    const onCpuMs = stat === null || lastStat === null ? Number.NaN : (stat.onCpu - lastStat.onCpu) / 1e6
    const waitingMs =
      stat === null || lastStat === null ? Number.NaN : (stat.waiting - lastStat.waiting) / 1e6
    stalls.push({ at: last, ms: now - last, onCpuMs, waitingMs })
    events.push({
      at: last,
      ms: now - last,
      what: `event loop stalled, ${f1(onCpuMs)} ms on CPU, ${f1(waitingMs)} ms waiting for a CPU`,
    })
  }
  last = now
  lastStat = stat
  const holding = checkpointer?.holding === true
  if (holding && heldSince === undefined) heldSince = now
  else if (!holding && heldSince !== undefined) {
    const ms = now - heldSince
    events.push({ at: heldSince, ms, what: 'checkpoint: the writes were held for its last round' })
    holds.n++
    holds.ms += ms
    holds.longest = Math.max(holds.longest, ms)
    heldSince = undefined
  }
}, 1)
const gc = observeGc(events)

// A full collection on demand, outside the measured runs: the heap that is left is what the server
// keeps.
const heapAfterFullGc = () => {
  collectFully()
  return v8.getHeapStatistics().used_heap_size
}

const mb = (n: number) => `${Math.round(n / 1048576)} MB`
for (let run = 0; run < runs; run++) {
  if (other !== undefined) await runLoad({ ...spec, port: other.port, seconds, rate: other.half })
  const heap0 = heapAfterFullGc()
  events.length = 0
  stalls.length = 0
  loopHeld.ms = 0
  loopHeld.cpuMs = 0
  compactions = 0
  holds.n = 0
  holds.ms = 0
  holds.longest = 0
  rounds.held.length = 0
  rounds.flowing.length = 0
  const from = epoch()
  const load0 = loadavg()[0]
  const faults0 = process.resourceUsage().minorPageFault
  const cpu0 = process.cpuUsage()
  const main0 = mainThreadStat()
  const m = await traceGcDuring(run + 1, () =>
    runLoad({ ...spec, port, seconds, rate, slowMs: TAIL_FLOOR_MS, pauseMs: STALL_MS }),
  )
  const faults = process.resourceUsage().minorPageFault - faults0
  // The process's CPU time in the run, the main thread's and the other threads' (V8's helpers,
  // libuv's threadpool, a SQLite checkpoint worker).
  const cpu = process.cpuUsage(cpu0)
  const main1 = mainThreadStat()
  const processMs = (cpu.user + cpu.system) / 1000
  const mainMs = main0 === null || main1 === null ? Number.NaN : (main1.onCpu - main0.onCpu) / 1e6
  const to = epoch()
  // Collections observed after the run (the forced one below) are not the run's.
  const inRun: TraceEvent[] = events.filter((e) => e.at >= from && e.at <= to)
  const over = [...(m.slow ?? [])].sort((a, b) => a.at - b.at)
  const slow = over.filter((s) => s.ms > SLOW_MS)
  // The load generator's own pauses (its held-back sends and its collections), on the same clock.
  const pauses = m.pauses ?? []
  for (const x of pauses) inRun.push({ at: x.at, ms: x.ms, what: `load generator: ${x.what}` })
  inRun.sort((a, b) => a.at - b.at)
  const busy = stalls.filter((e) => e.onCpuMs >= 0.8 * e.ms)
  const gcs = inRun.filter((e) => e.what.startsWith('GC'))
  const byKind = new Map<string, { n: number; ms: number; longest: number }>()
  for (const e of gcs) {
    const k = byKind.get(e.what) ?? { n: 0, ms: 0, longest: 0 }
    k.n++
    k.ms += e.ms
    k.longest = Math.max(k.longest, e.ms)
    byKind.set(e.what, k)
  }
  const writes = inRun.filter((e) => e.what.startsWith('store'))
  const held = pauses.filter((x) => x.what === 'sends held back')
  const generatorGcs = pauses.filter((x) => x.what !== 'sends held back')
  const mem = process.memoryUsage()
  const heap1 = heapAfterFullGc()
  console.log(
    `run ${run + 1} (${storage}, ${shape}) at ${fmt(rate)} req/s, load average ${load0.toFixed(1)}–${loadavg()[0].toFixed(1)}: p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms (stamped at the tick ${(m.p99Tick ?? Number.NaN).toFixed(2)}, from the schedule ${(m.p99Scheduled ?? Number.NaN).toFixed(2)}), max ${m.max.toFixed(2)} ms, ${slow.length} of ${m.requests} over ${SLOW_MS} ms, ${f1(m.cpuUsPerRequest)} µs CPU/req, ${(faults / m.answered).toFixed(2)} page faults/req; heap ${mb(mem.heapUsed)}, array buffers ${mb(mem.arrayBuffers)}; heap left per request ${f1((heap1 - heap0) / m.answered)} B (${mb(heap0)} → ${mb(heap1)} after full collections)`,
  )
  const longest = (xs: readonly { ms: number }[]) => f1(Math.max(0, ...xs.map((e) => e.ms)))
  const sum = (xs: readonly Stall[], pick: (s: Stall) => number) => f1(xs.reduce((a, e) => a + pick(e), 0))
  console.log(
    `  CPU: ${f1(processMs)} ms in the run, ${f1(mainMs)} ms of it the main thread's, ${f1(processMs - mainMs)} ms other threads'`,
  )
  console.log(
    `  server: ${stalls.length} stalls > ${STALL_MS} ms, ${sum(stalls, (e) => e.ms)} ms in all (longest ${longest(stalls)} ms): ${sum(stalls, (e) => e.onCpuMs)} ms on CPU, ${sum(stalls, (e) => e.waitingMs)} ms waiting for a CPU; ${busy.length} on CPU for 80 % or more of it (longest ${longest(busy)} ms)`,
  )
  console.log(
    `  load generator: ${held.length} times sends held back > ${STALL_MS} ms (longest ${longest(held)} ms), ${generatorGcs.length} of its collections ≥ 1 ms (longest ${longest(generatorGcs)} ms)${m.generatorThread === undefined ? '' : `; its main thread ${f1(m.generatorThread.onCpuMs)} ms on a CPU, ${f1(m.generatorThread.waitingMs)} ms waiting for one`}`,
  )
  if (main0 !== null && main1 !== null)
    console.log(
      `  server main thread: ${f1((main1.waiting - main0.waiting) / 1e6)} ms waiting for a CPU in the run`,
    )
  printTail(
    over.filter((s) => s.ms >= m.p99),
    inRun,
    stalls,
  )
  console.log(
    `  collections: ${[...byKind].map(([k, v]) => `${v.n} ${k.replace(/^GC /, '')} (${f1(v.ms)} ms, longest ${f1(v.longest)})`).join(', ') || 'none'}`,
  )
  console.log(
    `  store: ${writes.length} writes > 2 ms (longest ${longest(writes)} ms; longest on the event loop ${f1(loopHeld.ms)} ms, most CPU during one ${f1(loopHeld.cpuMs)} ms)${usage === undefined ? '' : `, ${compactions} compactions of a log`}${storage === 'sqlite' ? `; writes held for a checkpoint ${holds.n} times, ${f1(holds.ms)} ms in all (longest ${f1(holds.longest)} ms); held rounds posted to answered ${rounds.held.map(f1).join(', ') || 'none'} ms; rounds with the writes flowing ${rounds.flowing.length} (longest ${longest(rounds.flowing.map((ms) => ({ ms })))} ms)` : ''}`,
  )
  const episodes: { from: number; to: number; n: number; worst: number }[] = []
  for (const s of slow) {
    const e = episodes[episodes.length - 1]
    if (e !== undefined && s.at - e.to <= 5) {
      e.to = s.at
      e.n++
      e.worst = Math.max(e.worst, s.ms)
    } else episodes.push({ from: s.at, to: s.at, n: 1, worst: s.ms })
  }
  episodes.sort((a, b) => b.n - a.n)
  for (const e of episodes.slice(0, 6)) {
    const around = inRun.filter((x) => x.at + x.ms >= e.from - 50 && x.at <= e.to + e.worst)
    // The episode's start by the wall clock, to set beside a system-call trace (strace -tt).
    const clock = new Date(e.from).toISOString().slice(11, 23)
    console.log(
      `  episode at ${clock}: ${e.n} slow requests over ${f1(e.to - e.from)} ms, worst ${f1(e.worst)} ms`,
    )
    for (const x of around.filter((x) => x.ms >= 1 || !x.what.startsWith('GC')).slice(0, 8))
      console.log(`    ${f1(x.at - e.from)} ms: ${x.what}${x.ms > 0 ? ` (${f1(x.ms)} ms)` : ''}`)
    if (around.length === 0) console.log('    (nothing in the server process)')
  }
}
/**
 * What the slowest 1 % of a run's requests (those at or above its p99) overlapped, from the send
 * stamp to the answer's read: how many overlapped each kind of event (a request can overlap several),
 * and each request once, by the first of the kinds in this order that it overlapped.
 */
function printTail(
  tail: readonly { at: number; ms: number }[],
  inRun: readonly TraceEvent[],
  serverStalls: readonly Stall[],
): void {
  const kinds: [string, { at: number; ms: number }[]][] = [
    ['writes held for a checkpoint round', inRun.filter((e) => e.what.startsWith('checkpoint'))],
    ['a store write > 2 ms', inRun.filter((e) => e.what.startsWith('store'))],
    ['a checkpoint round with the writes flowing', inRun.filter((e) => e.what.startsWith('a checkpoint'))],
    ['a server stall, mostly on a CPU', serverStalls.filter((e) => e.onCpuMs >= e.waitingMs)],
    ['a server stall, mostly waiting for a CPU', serverStalls.filter((e) => e.onCpuMs < e.waitingMs)],
    ['a server collection ≥ 1 ms', inRun.filter((e) => e.what.startsWith('GC') && e.ms >= 1)],
    ['a generator collection ≥ 1 ms', inRun.filter((e) => e.what.startsWith('load generator: GC'))],
    ['the generator holding sends back', inRun.filter((e) => e.what.endsWith('sends held back'))],
  ]
  const overlaps = (r: { at: number; ms: number }, e: { at: number; ms: number }) =>
    e.at <= r.at + r.ms && e.at + e.ms >= r.at
  const any = kinds.map(() => 0)
  const first = kinds.map(() => 0)
  let none = 0
  for (const r of tail) {
    let found = false
    kinds.forEach(([, events], i) => {
      if (!events.some((e) => overlaps(r, e))) return
      any[i]++
      if (!found) first[i]++
      found = true
    })
    if (!found) none++
  }
  const pct = (n: number) => `${Math.round((100 * n) / Math.max(1, tail.length))} %`
  const mean = tail.reduce((a, r) => a + r.ms, 0) / Math.max(1, tail.length)
  console.log(`  the slowest 1 % (${tail.length} requests, mean ${f1(mean)} ms) overlapped:`)
  kinds.forEach(([name], i) => {
    console.log(`    ${name}: ${pct(any[i])} (first in this order: ${pct(first[i])})`)
  })
  console.log(`    none of these: ${pct(none)}`)
}

clearInterval(tick)
gc.disconnect()
await traced.bench.close()
await other?.bench.close()
