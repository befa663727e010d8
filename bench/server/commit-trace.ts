// Where the OffsetCommit latency tail at half load comes from: requests.ts's one-group commit
// (2 topics × 3 partitions; `streams`: the Streams-shaped one) against one Topograph server, first closed loop for `fill-seconds` (as
// the throughput run before the half-load run of requests.ts fills the store), then open loop at
// `rate` requests a second (`half`: half of what the closed loop reached) while the server process records, on one clock with the load's send
// stamps, every event-loop stall (a 1 ms interval timer that fired more than 4 ms late), every
// garbage collection and every store write that took more than 2 ms. The slow requests are grouped
// into episodes (sent within 5 ms of each other) and each episode is printed with what the server
// was doing from 50 ms before its first send to its last answer. Each run also reports the full
// (mark-sweep-compact) collections and the page faults per request, which the machine's load does
// not change.
//
//   node --import tsx bench/server/commit-trace.ts [sqlite|memory] [rate=half] [seconds=4] [runs=3] [fill-seconds=4] [shape=one|streams]
//
// TOPOGRAPH_BENCH_BUILD=dist traces the compiled server (see target.ts).
import { performance } from 'node:perf_hooks'
import { requestFrame } from '../../test/server/wire-client.js'
import { offsetCommitBody, startBenchServer, streamsCommitBody } from './commit-server.js'
import { fmt, rps, runLoad } from './load.js'
import { serverBuild } from './target.js'
import { observeGc, type TraceEvent } from './gc-events.js'

const storage = process.argv[2] ?? 'memory'
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
  console.error('usage: commit-trace.ts [sqlite|memory] [rate] [seconds] [runs] [fill-seconds] [one|streams]')
  process.exit(2)
}
const SLOW_MS = 5
const f1 = (n: number) => n.toFixed(1)

const events: TraceEvent[] = []
const epoch = () => performance.timeOrigin + performance.now()

// Store writes: the engine's append and group commit, timed around the promise.
/** The longest time one store write held the event loop in the current run. */
const loopHeld = { ms: 0, cpuMs: 0 }
const base = serverBuild === 'dist' ? '../../dist/src/coordinator/storage/' : '../../src/coordinator/storage/'
const engine = (
  storage === 'memory'
    ? (await import(`${base}memory.js`)).MemoryRecordStore
    : (await import(`${base}sqlite.js`)).SqliteRecordStore
) as {
  prototype: Record<string, (...a: unknown[]) => Promise<void>>
}
for (const method of ['append', 'appendBatches']) {
  const original = engine.prototype[method]
  engine.prototype[method] = async function (this: unknown, ...args: unknown[]) {
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
      return await pending
    } finally {
      const ms = epoch() - at
      if (ms > 2) {
        const n =
          method === 'append'
            ? (args[1] as unknown[]).length
            : (args[0] as { records: unknown[] }[]).reduce((a, b) => a + b.records.length, 0)
        const used = process.cpuUsage(cpu)
        const onCpu = ((used.user + used.system) / 1000).toFixed(1)
        events.push({ at, ms, what: `store ${method} of ${n} records, ${onCpu} ms on CPU` })
      }
    }
  }
}

const bench = await startBenchServer(storage)
const port = bench.server.address.port
const frame = requestFrame(8, 9, 1, shape === 'streams' ? streamsCommitBody : offsetCommitBody)
const spec = { port, frames: [frame], warmupSeconds: 1, connections: 4, depth: 16 }

let rate = Number(rateArg)
if (fillSeconds > 0 || rateArg === 'half') {
  const fill = await runLoad({ ...spec, seconds: Math.max(1, fillSeconds) })
  if (rateArg === 'half') rate = rps(fill) / 2
  console.log(
    `fill: ${fmt(rps(fill))} req/s closed loop for ${fillSeconds} s, ${f1(fill.cpuUsPerRequest)} µs CPU/req`,
  )
}

// A stall is either the server's own work (its CPU time grew by about the stall's length) or the
// process waiting for a core (the machine is shared): the CPU time tells them apart.
let last = epoch()
let lastCpu = process.cpuUsage()
const tick = setInterval(() => {
  const now = epoch()
  if (now - last > 4) {
    const cpu = process.cpuUsage(lastCpu)
    const busy = (cpu.user + cpu.system) / 1000
    events.push({ at: last, ms: now - last, what: `event loop stalled, ${busy.toFixed(1)} ms on CPU` })
  }
  last = now
  lastCpu = process.cpuUsage()
}, 1)
const gc = observeGc(events)

const mb = (n: number) => `${Math.round(n / 1048576)} MB`
for (let run = 0; run < runs; run++) {
  events.length = 0
  loopHeld.ms = 0
  loopHeld.cpuMs = 0
  const faults0 = process.resourceUsage().minorPageFault
  const m = await runLoad({ ...spec, seconds, rate, slowMs: SLOW_MS })
  const faults = process.resourceUsage().minorPageFault - faults0
  const slow = [...(m.slow ?? [])].sort((a, b) => a.at - b.at)
  const stalls = events.filter((e) => e.what.startsWith('event loop stalled'))
  const busyMs = (e: TraceEvent) => Number(/, ([\d.]+) ms on CPU/.exec(e.what)?.[1] ?? 0)
  const busy = stalls.filter((e) => busyMs(e) >= 0.8 * e.ms)
  const gcs = events.filter((e) => e.what.startsWith('GC'))
  const fullGcs = gcs.filter((e) => e.what === 'GC mark-sweep-compact')
  const writes = events.filter((e) => e.what.startsWith('store'))
  const mem = process.memoryUsage()
  console.log(
    `run ${run + 1} (${storage}, ${shape}) at ${fmt(rate)} req/s: p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, max ${m.max.toFixed(2)} ms, ${slow.length} of ${m.requests} over ${SLOW_MS} ms, ${f1(m.cpuUsPerRequest)} µs CPU/req, ${(faults / m.answered).toFixed(2)} page faults/req; heap ${mb(mem.heapUsed)}, array buffers ${mb(mem.arrayBuffers)}`,
  )
  const longest = (xs: TraceEvent[]) => f1(Math.max(0, ...xs.map((e) => e.ms)))
  console.log(
    `  server: ${stalls.length} stalls > 4 ms (longest ${longest(stalls)} ms; ${busy.length} of them on CPU for 80 % or more of it, longest ${longest(busy)} ms), ${gcs.length} GCs (${f1(gcs.reduce((a, e) => a + e.ms, 0))} ms in all, longest ${longest(gcs)} ms; ${fullGcs.length} full, longest ${longest(fullGcs)} ms), ${writes.length} store writes > 2 ms (longest ${longest(writes)} ms; longest on the event loop ${f1(loopHeld.ms)} ms, most CPU during one ${f1(loopHeld.cpuMs)} ms)`,
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
    const around = events.filter((x) => x.at + x.ms >= e.from - 50 && x.at <= e.to + e.worst)
    console.log(`  episode: ${e.n} slow requests over ${f1(e.to - e.from)} ms, worst ${f1(e.worst)} ms`)
    for (const x of around.filter((x) => x.ms >= 1 || !x.what.startsWith('GC')).slice(0, 8))
      console.log(`    ${f1(x.at - e.from)} ms: ${x.what}${x.ms > 0 ? ` (${f1(x.ms)} ms)` : ''}`)
    if (around.length === 0) console.log('    (nothing in the server process)')
  }
}
clearInterval(tick)
gc.disconnect()
await bench.close()
