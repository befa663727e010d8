// Produce and Fetch throughput against Topograph (file log engine, the default) next to the
// ceilings (ceilings.ts), measured in the same run; then produce-to-consume latency at half of
// Topograph's measured Produce throughput.
//
// - Produce v12, one partition, one batch of 16 × 1 KiB records per request (no producer id),
//   acks=1 and acks=-1 (one node: both answer after the append), 4 connections × 8 in flight.
//   MB/s counts record-batch bytes appended.
// - Fetch v12 (no session), one partition, partition max bytes 1 MiB (a Java consumer's
//   max.partition.fetch.bytes), offsets spread over the first 256 MiB of the data just produced,
//   4 connections × 2 in flight. MB/s counts record-batch bytes answered.
// - Latency: an open-loop producer at half of the median acks=1 Produce rate, a consumer long
//   polling (MaxWaitMs 500, MinBytes 1); p50/p99/max from the send of a batch to the read of the
//   Fetch answer holding it.
//
// Each measure runs the ceiling and Topograph in the order ceiling, Topograph, Topograph, ceiling
// (half the time each), so that what else the machine runs weighs on both alike; the ratio of a run
// is Topograph's MB/s over the ceiling's, and the report gives the median over the runs. The
// servers run in this process's one JavaScript thread; the load comes from a forked child.
// TOPOGRAPH_BENCH_BUILD=dist runs the compiled server (bench/server/target.ts); BENCH_PROFILE=<dir>
// writes a CPU profile of the server for each measured Topograph phase and each latency run
// (bench/server/profile-turns.ts shows what ran in its long turns; with BENCH_RUN_TRACE=1 the
// run's loop stalls are written beside it for tools/soak/long-turns.ts, and with BENCH_TURNS=<dir>
// without a profile, for the kernel's scheduler trace); BENCH_ACKS=-1,1 swaps the order of the
// two Produce loads in each run; BENCH_PHASES=1 prints the CPU per request of each half-phase
// (ceiling, Topograph, Topograph, ceiling) as it ends.
// Each latency run also prints the CPU a batch cost the server (its process, and its main thread)
// and the load, and what the kernel did meanwhile (kernel-state.ts; the page cache's dirty and
// writeback pages at the end and their peaks during the run; whether free pages are handed back to
// the host, free page reporting, and how much was during the run): the latency's tail at this
// rate follows the server's CPU per batch (BENCHMARKS.md, "The latency runs after the throughput
// phases, traced"). Then the server's collections by kind, its heap by space, open files,
// segments and page faults at the run's start and end, and its threads' CPU a batch
// (server-state.ts); BENCH_RUN_TRACE=1 adds its threadpool file calls (fsync, Fetch reads, pages
// read ahead), its synchronous file calls and the event loop's delay, every stall of the loop over
// 5 ms with what overlapped it and its cause (collections, the loop's file calls, the main thread
// waiting for a CPU or asleep, its own work), and the whole run by 50 ms: the load's sends,
// latencies, consumer lag, Fetch answers and unsent bytes next to the server's loop delay,
// collections and threadpool calls (timeline.ts).
// Before every latency run it takes 16 MiB of new page-cache pages and prints what one cost
// (drainFreedPages in server-state.ts): on this VM a page the machine freed seconds before costs a
// fraction of one its host took back, and the throughput phases delete their ceilings' files.
// BENCH_DRAIN=1 takes such cheap pages until they run out, and holds them to the end, so that
// every run appends into the same kind of page (BENCHMARKS.md, "Runs 2–3 at half load: the
// pages the phases freed", says what it showed).
// The server runs in this process as `topograph start` runs it: started without the Node options
// of the CLI's `#!` line (a young generation fixed at 16 MB a semi-space), the script runs itself
// again with them.
// BENCH_LATENCY_RATE=<batches/s> runs the latency at that rate instead of half the measured
// maximum (printed with the half it replaces), so that two builds can be compared at one rate;
// the throughput phases still run before it, as they leave the log and the page cache as the
// latency runs at half load find them.
// Beside the latency runs a clock watch ticks every 10 ms in a small process of its own, at a
// real-time priority (`chrt -f 50`, as root) or else at nice -10 (clock-gaps.ts, the soak's tick
// loop): each run prints one line `clock watch (…)` with its ticks, its own CPU, its ticks more than
// 5 ms late (when each was due, from the run's measured part; `held` when it was not waiting for a
// core: at that priority nothing in the guest holds it, so the host held its virtual CPU or the
// whole machine), and with BENCH_RUN_TRACE=1 how many of them overlap the server's loop stalls over 5 ms
// or the load's tick gaps over 5 ms. BENCH_CLOCK_WATCH=0 runs without it; BENCH_CLOCK_WATCH=per-cpu
// runs one watch pinned to each CPU (`taskset -c`), a line each, and a line of their held gaps:
// how many came while the other watches ticked (that virtual CPU held alone) and when all were held
// at once (the whole machine).
//
//   node --import tsx bench/data/throughput.ts [seconds=4] [runs=3]
import { appendFileSync, rmSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import {
  createTopic,
  f1,
  f2,
  latencyLoad,
  loadAverage,
  loopbackMBps,
  type Measured,
  mb,
  median,
  pct,
  RECORDS_PER_BATCH,
  startBench,
} from './load.js'
import { fetchedMb, mbps, type Row, throughputPhases } from './throughput-phases.js'
import { describePageReporting, kernelCounters, pageCache, pageReporting, since } from './kernel-state.js'
import {
  type ClockCount,
  type ClockWatchProcess,
  describeClockWatch,
  describeHeldAcross,
  loadStallSpans,
  serverStallSpans,
  startClockWatch,
  watchGaps,
} from './clock-gaps.js'
import type { LoopStall } from './timeline.js'
import { profiled } from '../server/load.js'
import { runAsTheCli } from '../server/target.js'
import { mainThreadStat } from '../server/thread-stat.js'
import {
  describeIdle,
  describeStates,
  describeThreads,
  drainFreedPages,
  partitionDir,
  serverState,
  threadCpu,
  traceFileCalls,
  withGcs,
} from './server-state.js'

// The server runs in this process: with the Node options `topograph start` runs it with.
await runAsTheCli()

const seconds = Number(process.argv[2] ?? 4)
const runs = Number(process.argv[3] ?? 3)
/** BENCH_DATA_ONLY=produce runs the Produce loads only (for profiles). */
const produceOnly = process.env.BENCH_DATA_ONLY === 'produce'
/** BENCH_ACKS=-1,1 runs the Produce loads of each run in that order (default 1,-1). */
const acksOrder = (process.env.BENCH_ACKS ?? '1,-1').split(',').map(Number)
if (acksOrder.some((a) => a !== 1 && a !== -1)) {
  console.error('BENCH_ACKS: a list of 1 and -1')
  process.exit(2)
}
/** BENCH_LATENCY_RATE=<batches/s>: the latency runs' rate (default: half the measured maximum). */
const fixedRate =
  process.env.BENCH_LATENCY_RATE === undefined ? undefined : Number(process.env.BENCH_LATENCY_RATE)
if (fixedRate !== undefined && !(Number.isInteger(fixedRate) && fixedRate > 0)) {
  console.error('BENCH_LATENCY_RATE: batches a second, a whole number above 0')
  process.exit(2)
}
if (!(seconds > 0) || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: throughput.ts [seconds>0] [runs>=1]')
  process.exit(2)
}
const TOPIC = 'bench-data'
/**
 * BENCH_RUN_TRACE=1: each latency run by 50 ms, its 1 s warm-up and all its measured seconds and a
 * half second after them, where the last batches' answers arrive (timeline.ts).
 */
const WHOLE_RUN = { bucketMs: 50, buckets: Math.ceil(((1 + seconds + 0.5) * 1000) / 50) }

const fileCalls = await traceFileCalls()
/**
 * BENCH_PROFILE=<dir> with BENCH_RUN_TRACE=1: each latency run's stalls over 5 ms beside its CPU
 * profile, as long turns (`npx tsx tools/soak/long-turns.ts --turns <dir>/latency-run1.turns.jsonl
 * --profile <dir>/latency-run1.cpuprofile --kinds running` shows what ran in them).
 */
const profileDir = process.env.BENCH_PROFILE || undefined
/**
 * BENCH_TURNS=<dir> with BENCH_RUN_TRACE=1: the same stall files without the CPU profile, to set
 * beside the kernel's scheduler trace of the runs (`npx tsx tools/soak/long-turns.ts --turns
 * <dir>/latency-run1.turns.jsonl --sched <perf script output>`, tools/soak/sched.ts), and each
 * run's span on the monotonic clock and its batches in <dir>/latency-runs.jsonl, to set beside a
 * sampled profile of the server's threads (long-turns.ts `--stacks`, `--runs`).
 */
const turnsDir = process.env.BENCH_TURNS || profileDir
const loads: string[] = [loadAverage()]
const wire = [await loopbackMBps()]
const bench = await startBench()
const { server, dataDir, client } = bench
const port = server.address.port
await createTopic(client, TOPIC, 1)
const phases = await throughputPhases(bench, TOPIC, seconds)
const { frames, recordsAt, stampAt, batchBytes } = phases

const produceRows: Record<string, Row[]> = { '1': [], '-1': [] }
const fetchRows: Row[] = []
const latencyRows: Measured[] = []

await phases.warmUp()
for (let run = 0; run < runs; run++) {
  const rows = await phases.produce(run, acksOrder)
  for (const acks of acksOrder) produceRows[String(acks)].push(rows[String(acks)])
  if (produceOnly) continue
  fetchRows.push(await phases.fetch(run))
  loads.push(loadAverage())
}

if (produceOnly) {
  client.close()
  await server.close()
  rmSync(dataDir, { recursive: true, force: true })
  process.exit(0)
}
// Latency at half of the median acks=1 throughput, or at BENCH_LATENCY_RATE.
const maxRate = median(produceRows['1'].map((r) => r.topograph.requests / r.topograph.seconds))
const rate = fixedRate ?? Math.round(maxRate / 2)
const rateSource =
  fixedRate === undefined
    ? `half of ${Math.round(maxRate)}`
    : `fixed by BENCH_LATENCY_RATE; half of the measured ${Math.round(maxRate)} would be ${Math.round(maxRate / 2)}`
console.log(`latency runs at ${rate} batches/s (${rateSource})`)
const dir = partitionDir(dataDir, TOPIC)
/** BENCH_DRAIN=1: the freed pages taken before every latency run (see drainFreedPages). */
const drain = process.env.BENCH_DRAIN === '1'
const held: (() => void)[] = []
const latency = { port, produceFrame: frames[1], batchAt: recordsAt, stampAt, topic: TOPIC, rate, seconds }
/** BENCH_CLOCK_WATCH=0: no clock watch beside the latency runs; per-cpu: one pinned to each CPU. */
const watchMode = process.env.BENCH_CLOCK_WATCH
const clockWatches: ClockWatchProcess[] = []
if (watchMode === 'per-cpu') {
  for (let cpu = 0; cpu < availableParallelism(); cpu++) {
    const w = await startClockWatch(cpu)
    if (w === null) console.log(`clock watch on CPU ${cpu}: could not start`)
    else clockWatches.push(w)
  }
} else if (watchMode !== '0') {
  const w = await startClockWatch()
  if (w === null) console.log('clock watch: could not start')
  else clockWatches.push(w)
}
let ended = serverState(dir)
for (let run = 0; run < runs; run++) {
  const idle = describeIdle(ended, serverState(dir))
  {
    const d = drain ? drainFreedPages(dataDir) : drainFreedPages(dataDir, 16, 16)
    held.push(d.release)
    console.log(
      `before run ${run + 1}: took ${d.taken} MiB of new pages, the last step at ${f2(d.lastUs)} µs a page (the steps under a host fault's price: ${Number.isNaN(d.cheapUs) ? 'none' : `${f2(d.cheapUs)} µs a page`})`,
    )
  }
  const log = server.context.data.logs.partition(TOPIC, 0)!
  const watch0: ClockCount[] = await Promise.all(clockWatches.map((w) => w.count()))
  const state0 = serverState(dir)
  const thread0 = mainThreadStat()
  const threads0 = threadCpu()
  const kernel0 = kernelCounters()
  const reporting0 = pageReporting()
  const t0 = performance.now()
  const fromUs = Number(process.hrtime.bigint() / 1000n)
  const traced = fileCalls?.run()
  // The page cache's dirty and writeback peaks during the run (what a roll's flush has to write).
  const peak = { dirty: 0, writeback: 0 }
  const sampler = setInterval(() => {
    const c = pageCache()
    peak.dirty = Math.max(peak.dirty, c.dirty)
    peak.writeback = Math.max(peak.writeback, c.writeback)
  }, 50)
  const {
    value: m,
    gcs,
    events,
  } = await withGcs(() =>
    profiled(`latency-run${run + 1}`, () =>
      latencyLoad({
        ...latency,
        fromOffset: log.logEndOffset,
        ...(traced === undefined ? {} : { slowMs: 10, timeline: WHOLE_RUN }),
      }),
    ),
  ).finally(() => clearInterval(sampler))
  const watch1: ClockCount[] = await Promise.all(clockWatches.map((w) => w.count()))
  const thread1 = mainThreadStat()
  const threads1 = threadCpu()
  if (turnsDir !== undefined && traced !== undefined)
    appendFileSync(
      `${turnsDir}/latency-runs.jsonl`,
      `${JSON.stringify({ pid: process.pid, run: run + 1, fromUs, toUs: Number(process.hrtime.bigint() / 1000n), batches: m.answered })}\n`,
    )
  ended = serverState(dir)
  const kernel = `${since(kernel0, kernelCounters(), (performance.now() - t0) / 1000)}; ${describePageReporting(reporting0, pageReporting())}`
  const pages = pageCache()
  if (m.errors > 0) throw new Error(`latency run: ${m.errors} errors, first ${m.firstErrorCode}`)
  latencyRows.push(m)
  const n = Math.max(1, m.answered)
  const mainUs = thread0 !== null && thread1 !== null ? (thread1.onCpu - thread0.onCpu) / 1e3 / n : Number.NaN
  const loadUs =
    m.loadCpuMs === undefined ? Number.NaN : ((m.loadCpuMs.producers + (m.loadCpuMs.consumer ?? 0)) * 1e3) / n
  console.log(
    `run ${run + 1} latency at ${rate} batches/s (${f1(mb(rate * batchBytes))} MB/s): p50 ${f2(m.p50)} ms, p99 ${f2(m.p99)} ms, max ${f2(m.max)} ms over ${m.requests} batches; CPU µs per batch: server ${f1(m.cpuUsPerRequest)} (main thread ${f1(mainUs)}), load ${f1(loadUs)}; load ${loadAverage()}`,
  )
  console.log(
    `  kernel: Dirty ${f1(pages.dirty)} MB, Writeback ${f1(pages.writeback)} MB at the end (peaks ${f1(peak.dirty)} and ${f1(peak.writeback)} MB, sampled every 50 ms); ${kernel}`,
  )
  console.log(`  server GCs: ${gcs}`)
  let stalls: readonly LoopStall[] | undefined
  if (traced !== undefined)
    console.log(
      `  ${traced(m.slow ?? [], {
        ...(m.timeline === undefined ? {} : { timeline: m.timeline }),
        gcs: events,
        onStalls: (s) => {
          stalls = s
        },
        ...(turnsDir === undefined ? {} : { turnsFile: `${turnsDir}/latency-run${run + 1}.turns.jsonl` }),
      })}`,
    )
  console.log(`  server: ${describeStates(state0, ended, m.answered)}; since the last run: ${idle}`)
  console.log(`  server ${describeThreads(threads0, threads1, m.answered)}`)
  // The server's stalls are on this process's epoch clock, the watches and the load on the monotonic one.
  const epochToMono = Number(process.hrtime.bigint()) / 1e6 - (performance.timeOrigin + performance.now())
  const runGaps = clockWatches.map((w, i) => watchGaps(w.gaps, watch0[i].atMono, watch1[i].atMono))
  const measured =
    m.measuredMono ??
    (clockWatches.length === 0 ? undefined : { from: watch0[0].atMono, to: watch1[0].atMono })
  clockWatches.forEach((clockWatch, i) => {
    if (measured === undefined) return
    console.log(
      `  ${describeClockWatch({
        scheduling: clockWatch.scheduling,
        ...(clockWatch.cpu === undefined ? {} : { cpu: clockWatch.cpu }),
        ticks: watch1[i].ticks - watch0[i].ticks,
        cpuMs: watch1[i].cpuMs - watch0[i].cpuMs,
        gaps: runGaps[i],
        measuredFromMono: measured.from,
        ...(stalls === undefined
          ? {}
          : {
              stalls: {
                server: serverStallSpans(stalls, epochToMono),
                load:
                  m.timeline === undefined
                    ? []
                    : loadStallSpans(m.timeline, measured.from - m.timeline.measureFromMs),
              },
            }),
      })}`,
    )
  })
  if (measured !== undefined && clockWatches.length > 1 && clockWatches.every((w) => w.cpu !== undefined))
    console.log(
      `  ${describeHeldAcross({
        cpus: clockWatches.map((w) => w.cpu ?? -1),
        gaps: runGaps,
        measuredFromMono: measured.from,
      })}`,
    )
}
for (const w of clockWatches) w.stop()
for (const release of held) release()
loads.push(loadAverage())
wire.push(await loopbackMBps())

// Report: medians over the runs; ratios are the median of the per-run ratios.
console.log(
  `\nbatch ${batchBytes} B (${RECORDS_PER_BATCH} × 1 KiB values), ${runs} run(s) of ${seconds} s, load average ${loads.join(' → ')}`,
)
console.log(
  `loopback TCP alone (1 MiB writes to a discarding reader, one process): ${wire.map(f1).join(' MB/s before, ')} MB/s after`,
)
console.log(
  '| Measure | ceiling MB/s | p50 / p99 ms | Topograph MB/s | p50 / p99 ms | ratio (runs) | CPU µs/request ceiling / Topograph |',
)
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
const line = (name: string, rows: Row[], rate: (m: Measured) => number) => {
  const m = (pick: (r: Row) => number) => median(rows.map(pick))
  const ratios = rows.map((r) => rate(r.topograph) / rate(r.ceiling))
  console.log(
    `| ${name} | ${f1(m((r) => rate(r.ceiling)))} | ${f2(m((r) => r.ceiling.p50))} / ${f2(m((r) => r.ceiling.p99))} | ${f1(m((r) => rate(r.topograph)))} | ${f2(m((r) => r.topograph.p50))} / ${f2(m((r) => r.topograph.p99))} | **${pct(median(ratios))}** (${ratios.map((x) => Math.round(100 * x)).join(', ')}) | ${f1(m((r) => r.ceiling.cpuUsPerRequest))} / ${f1(m((r) => r.topograph.cpuUsPerRequest))} |`,
  )
}
line('Produce acks=1', produceRows['1'], (x) => mbps(x, batchBytes))
line('Produce acks=-1', produceRows['-1'], (x) => mbps(x, batchBytes))
line('Fetch, 1 MiB per partition', fetchRows, (m) => fetchedMb(m, batchBytes))
console.log(
  `\nProduce-to-consume latency at ${rate} batches/s (${f1(mb(rate * batchBytes))} MB/s, ${rateSource}): p50 ${f2(median(latencyRows.map((r) => r.p50)))} ms, p99 ${f2(median(latencyRows.map((r) => r.p99)))} ms (runs: ${latencyRows.map((r) => f2(r.p99)).join(', ')}), max ${f2(Math.max(...latencyRows.map((r) => r.max)))} ms`,
)

client.close()
await server.close()
rmSync(dataDir, { recursive: true, force: true })
