// Where the produce-to-consume latency tail comes from: the latency load of throughput.ts (an
// open-loop producer, a consumer long polling from the log end) while the server process records,
// on one clock with the load's send stamps, every event-loop stall (a 1 ms interval timer that fired
// late), every garbage collection and every segment roll. The slow batches are grouped into
// episodes (sent within 5 ms of each other) and each episode is printed with what the server was
// doing from 50 ms before its first send to its last answer.
//
//   node --import tsx bench/data/latency-trace.ts [rate=4370] [seconds=4] [runs=3] [fill-seconds=10]
//
// `fill-seconds` of closed-loop Produce come first (as the throughput runs before the latency runs
// of throughput.ts fill the log), so that the run sees a log of that size and its page cache.
// BENCH_PROFILE=<dir> writes a CPU profile of each latency run (the fill is not profiled);
// bench/server/profile-turns.ts shows what ran in its long event-loop turns. BENCH_TRACE_GC=1 turns
// V8's --trace-gc and --trace-incremental-marking on during each latency run (a line per collection
// and per start of incremental marking on stdout, with its reason, after "latency run N begins");
// bench/server/gc-reasons.ts counts them. Each run also prints the ArrayBuffer bytes the server
// allocated, by where (socket reads' buffers, Buffers of their own, slices of Node's pool), and
// its three longest stalls with where their time went: on a CPU, waiting for one, or asleep in the
// kernel (the main thread's /proc schedstat), with the page faults and context switches meanwhile.
// BENCH_STAGES=1 also prints where each batch's latency went, stage by stage, with the server and
// the load on one clock (stages.ts), and the load process's own CPU time and collections.
//
// What comes before the latency runs, and between them (throughput-phases.ts):
// - BENCH_BEFORE=throughput[:seconds[:runs]] runs throughput.ts's throughput phases (its warm-up,
//   then per run Produce acks=1 and acks=-1 and Fetch, each against its ceiling; default 4 s and 3
//   runs, as `throughput.ts 4 3`) instead of the fill, on the same server and partition, so that
//   the latency runs start from what throughput.ts leaves for its own at the same rate.
// - BENCH_SETTLE=<run>:<seconds>[:nosync] runs `sync` (not with nosync) and then waits that many
//   seconds before latency run <run> (1-based): runs before it and from it compare the two.
// Each run also prints the server's CPU per batch (main thread and process), its heap, and what
// the kernel did meanwhile (kernel-state.ts): dirty and writeback pages against the thresholds at
// which it throttles writers, pages written, the disks' MB/s, iowait and steal, I/O pressure.
// BENCH_PERF=<dir> records, for each run, the kernel stacks of every switch into uninterruptible
// sleep (D) and the kernel's throttling of dirtying writers (writeback:balance_dirty_pages) on the
// whole machine, with `perf record -a -g`, into <dir>/latency-run<N>.perf.data (`perf script -i`).
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import v8 from 'node:v8'
import { profiled } from '../server/load.js'
import { serverModule } from '../server/target.js'
import { mainThreadStat, type ThreadStat } from '../server/thread-stat.js'
import {
  benchBatch,
  createTopic,
  f1,
  f2,
  latencyLoad,
  loadAverage,
  mb,
  produceFrame,
  startBench,
} from './load.js'
import { type StageStore, type Stages, traceStages } from './stages.js'
import { watchKernel } from './kernel-state.js'
import { beforeLatencyRuns, settleBefore } from './throughput-phases.js'
import { observeGc, type TraceEvent, traceGcDuring } from '../server/gc-events.js'

const rate = Number(process.argv[2] ?? 4370)
const seconds = Number(process.argv[3] ?? 4)
const runs = Number(process.argv[4] ?? 3)
const fillSeconds = Number(process.argv[5] ?? 10)
const TOPIC = 'bench-latency'
const SLOW_MS = 5

const bench = await startBench()
const { server, client } = bench
const port = server.address.port
await createTopic(client, TOPIC, 1)
const { batch, stampAt } = benchBatch()
const { frame, batchAt: recordsAt } = produceFrame(TOPIC, batch)
await beforeLatencyRuns(bench, TOPIC, frame, fillSeconds)
const perfDir = process.env.BENCH_PERF

const events: TraceEvent[] = []
/** BENCH_STAGES=1: each batch's time at every stage, server and load on one clock (stages.ts). */
let stages: Stages | null = null
const epoch = () => performance.timeOrigin + performance.now()

// Event-loop stalls: a 1 ms timer that fires more than 3 ms late. Each stall says where its time
// went (from the main thread's schedstat and the process's rusage, read at every tick): on a CPU
// (the server's own work, or the kernel's in a system call), runnable but waiting for a CPU (the
// machine's), and the rest asleep (blocked in a system call: I/O, a lock, a page fault read from
// disk), with the page faults and context switches in between.
const STALL = 'event loop stalled'
let last = epoch()
let lastStat: ThreadStat | null = mainThreadStat()
let lastUsage = process.resourceUsage()
const tick = setInterval(() => {
  const now = epoch()
  const stat = mainThreadStat()
  const usage = process.resourceUsage()
  if (now - last > 4) {
    let where = ''
    if (stat !== null && lastStat !== null) {
      const onCpu = (stat.onCpu - lastStat.onCpu) / 1e6
      const waiting = (stat.waiting - lastStat.waiting) / 1e6
      where = ` (on CPU ${f1(onCpu)} ms, waiting for a CPU ${f1(waiting)} ms, asleep ${f1(Math.max(0, now - last - onCpu - waiting))} ms; page faults ${usage.majorPageFault - lastUsage.majorPageFault} major, ${usage.minorPageFault - lastUsage.minorPageFault} minor; switches ${usage.voluntaryContextSwitches - lastUsage.voluntaryContextSwitches} voluntary, ${usage.involuntaryContextSwitches - lastUsage.involuntaryContextSwitches} involuntary)`
    }
    events.push({ at: last, ms: now - last, what: `${STALL}${where}` })
  }
  last = now
  lastStat = stat
  lastUsage = usage
}, 1)

// Server-side probes. The file engine calls node:fs through the module's namespace, so the
// synchronous calls are timed by replacing them in place; a call over 1 ms is an event. Every read
// of a server socket (a 'data' event of a socket the listener accepted) is timed with its bytes:
// the frames in it are decoded and served synchronously in that call (the microtasks after it, a
// parked Fetch answered by an append among them, are not in the time). Writes to server sockets
// are counted by size and timed (the answers of one run leave in one `writev`).
interface Calls {
  n: number
  ms: number
  max: number
  bytes: number
}
const calls = new Map<string, Calls>()
const count = (name: string, ms: number, bytes: number) => {
  let c = calls.get(name)
  if (c === undefined) calls.set(name, (c = { n: 0, ms: 0, max: 0, bytes: 0 }))
  c.n++
  c.ms += ms
  c.bytes += bytes
  if (ms > c.max) c.max = ms
}
const fsMutable = fs as unknown as Record<string, (...a: unknown[]) => unknown>
for (const name of [
  'writeSync',
  'readSync',
  'fsyncSync',
  'openSync',
  'closeSync',
  'renameSync',
  'ftruncateSync',
  'unlinkSync',
  'existsSync',
  'readdirSync',
  'statSync',
  'fstatSync',
]) {
  const original = fsMutable[name]
  fsMutable[name] = function (this: unknown, ...args: unknown[]) {
    const t0 = performance.now()
    try {
      return original.apply(this, args)
    } finally {
      const ms = performance.now() - t0
      const b = args[1] instanceof Uint8Array ? ((args[3] as number | undefined) ?? args[1].byteLength) : 0
      count(name, ms, b)
      if (ms > 1) events.push({ at: performance.timeOrigin + t0, ms, what: `${name} ${b} B` })
    }
  }
}
// Reads on libuv's threadpool (the file engine's large Fetch reads): counted with their bytes and
// the time from the call to its callback (the event loop is free meanwhile). The active segment's
// pages read ahead (READ_AHEAD_BYTES in src/log/file.ts) are counted apart: they read into a plain
// Uint8Array, Fetch reads into Buffers.
const readAsync = fsMutable.read
fsMutable.read = function (this: unknown, ...args: unknown[]) {
  const t0 = performance.now()
  const cb = args[args.length - 1] as (...r: unknown[]) => void
  const what = Buffer.isBuffer(args[1])
    ? 'read (threadpool, call to callback)'
    : 'pages read ahead (threadpool)'
  args[args.length - 1] = (...r: unknown[]) => {
    count(what, performance.now() - t0, (r[1] as number) ?? 0)
    cb(...r)
  }
  return readAsync.apply(this, args)
}
syncBuiltinESMExports()
// ArrayBuffer bytes allocated per run (V8 counts ArrayBuffer bytes allocated outside its heap
// towards starting its next full collection): Node's Buffer.allocUnsafe, allocUnsafeSlow and alloc,
// replaced in place, and every read of a server socket, whose buffer Node allocates in C++. The
// load runs in a child process, so what this process allocates during a run is the server's.
// Buffer.allocUnsafe below 4 KiB slices Node's shared 8 KiB pool (counted apart, as its bytes);
// typed arrays made with `new Uint8Array(n)` are not counted.
const allocated = { own: 0, ownN: 0, pooled: 0, socketReads: 0, socketReadsN: 0 }
const buffers = Buffer as unknown as Record<string, (size: number, ...rest: unknown[]) => Buffer>
for (const name of ['allocUnsafe', 'allocUnsafeSlow', 'alloc']) {
  const original = buffers[name]
  buffers[name] = function (this: unknown, size: number, ...rest: unknown[]) {
    if (name === 'allocUnsafe' && size < Buffer.poolSize >>> 1) allocated.pooled += size
    else {
      allocated.own += size
      allocated.ownN++
    }
    return original.call(this, size, ...rest)
  }
}
type ServerSocket = Socket & { server?: unknown }
const sockets = Socket.prototype as unknown as {
  emit: (this: ServerSocket, event: string | symbol, ...args: unknown[]) => boolean
  _writev: (this: ServerSocket, chunks: ({ chunk: Buffer } | Buffer)[], cb: (e?: Error) => void) => void
  _write: (this: ServerSocket, chunk: Buffer, enc: string, cb: (e?: Error) => void) => void
}
const readSizes = [4096, 16384, 65536, 262144]
const readHistogram = new Array<number>(readSizes.length + 1).fill(0)
/** A socket read's buffer counts once: Node's own are fresh per read, a reused one is seen again. */
const readBuffers = new WeakSet<ArrayBufferLike>()
const socketRead = (chunk: Buffer, t0: number) => {
  const ms = performance.now() - t0
  const b = chunk.byteLength
  if (!readBuffers.has(chunk.buffer)) {
    readBuffers.add(chunk.buffer)
    allocated.socketReads += chunk.buffer.byteLength
    allocated.socketReadsN++
  }
  count('socket read', ms, b)
  const k = readSizes.findIndex((x) => b <= x)
  readHistogram[k < 0 ? readSizes.length : k]++
  if (ms > 2) events.push({ at: performance.timeOrigin + t0, ms, what: `socket read of ${b} B served` })
}
// Every read reaches the connection's `receive` (a socket that reads into a buffer of the
// listener's emits no 'data'); a build without it is timed at the socket's 'data' event.
const connections = (await serverModule('connection.js')).Connection.prototype as {
  receive?: (this: unknown, chunk: Buffer) => void
}
const receive = connections.receive
if (receive !== undefined) {
  connections.receive = function (chunk) {
    const t0 = performance.now()
    if (stages !== null) stages.received(chunk)
    try {
      receive.call(this, chunk)
    } finally {
      if (stages !== null) stages.receiving = Number.NaN
      socketRead(chunk, t0)
    }
  }
} else {
  const emit = sockets.emit
  sockets.emit = function (event, ...args) {
    if (event !== 'data' || this.server === undefined) return emit.call(this, event, ...args)
    const t0 = performance.now()
    try {
      return emit.call(this, event, ...args)
    } finally {
      socketRead(args[0] as Buffer, t0)
    }
  }
}
const writev = sockets._writev
sockets._writev = function (chunks, cb) {
  const t0 = performance.now()
  writev.call(this, chunks, cb)
  if (this.server === undefined) return
  const ms = performance.now() - t0
  // Buffers as such when every chunk is one (the stream's allBuffers), else { chunk }.
  if (stages !== null) for (const c of chunks) stages.written(Buffer.isBuffer(c) ? c : c.chunk)
  const b = chunks.reduce((a, c) => a + (Buffer.isBuffer(c) ? c : c.chunk).byteLength, 0)
  count(`socket writev (${chunks.length > 4 ? '> 4' : chunks.length} chunks)`, ms, b)
  if (ms > 1) events.push({ at: performance.timeOrigin + t0, ms, what: `writev of ${b} B` })
}
const write = sockets._write
sockets._write = function (chunk, enc, cb) {
  const t0 = performance.now()
  write.call(this, chunk, enc, cb)
  if (this.server === undefined) return
  if (stages !== null) stages.written(chunk)
  const ms = performance.now() - t0
  count(chunk.byteLength > 65536 ? 'socket write > 64 KiB' : 'socket write ≤ 64 KiB', ms, chunk.byteLength)
  if (ms > 1) events.push({ at: performance.timeOrigin + t0, ms, what: `write of ${chunk.byteLength} B` })
}

const gc = observeGc(events)
const log = server.context.data.logs.partition(TOPIC, 0)!
// The partition's store (PartitionLogImpl's, not on the PartitionLog interface) counts segments.
const store = (log as unknown as { store: { segmentCount: number } }).store
let segments = store.segmentCount
if (process.env.BENCH_STAGES === '1') stages = traceStages(log, store as unknown as StageStore, stampAt)
const rolls = setInterval(() => {
  const n = store.segmentCount
  if (n !== segments) events.push({ at: epoch(), ms: 0, what: `segments ${segments} → ${n}` })
  segments = n
}, 5)

for (let run = 0; run < runs; run++) {
  events.length = 0
  calls.clear()
  readHistogram.fill(0)
  for (const k of Object.keys(allocated) as (keyof typeof allocated)[]) allocated[k] = 0
  await settleBefore(run + 1)
  const perf = await startPerf(run + 1)
  const heap = v8.getHeapStatistics()
  const arrayBuffers = process.memoryUsage().arrayBuffers
  const oldSpace = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'old_space')
  const thread0 = mainThreadStat()
  const stopKernel = watchKernel()
  const runStart = epoch()
  const m = await traceGcDuring(run + 1, () =>
    profiled(`latency-run${run + 1}`, () =>
      latencyLoad({
        port,
        produceFrame: frame,
        batchAt: recordsAt,
        stampAt,
        topic: TOPIC,
        fromOffset: log.logEndOffset,
        rate,
        seconds,
        slowMs: SLOW_MS,
        stages: stages !== null,
      }),
    ),
  )
  const kernel = stopKernel()
  const thread1 = mainThreadStat()
  await stopPerf(perf)
  if (stages !== null && m.stages !== undefined) stages.report(m.stages, SLOW_MS)
  stages?.clear()
  const slow = [...(m.slow ?? [])].sort((a, b) => a.at - b.at)
  const stalls = events.filter((e) => e.what.startsWith(STALL))
  const gcs = events.filter((e) => e.what.startsWith('GC'))
  console.log(
    `run ${run + 1} at ${rate} batches/s (${f1(mb(rate * batch.byteLength))} MB/s): p50 ${f2(m.p50)} ms, p99 ${f2(m.p99)} ms, max ${f2(m.max)} ms, ${slow.length} of ${m.requests} batches over ${SLOW_MS} ms; load ${loadAverage()}`,
  )
  const perBatch = Math.max(1, m.answered)
  const mainUs =
    thread0 !== null && thread1 !== null ? (thread1.onCpu - thread0.onCpu) / 1e3 / perBatch : Number.NaN
  const lc = m.loadCpuMs
  console.log(
    `  server CPU µs per batch: main thread ${f1(mainUs)}, process ${f1(m.cpuUsPerRequest)}; load's ${lc === undefined ? '?' : f1(((lc.producers + (lc.consumer ?? 0)) * 1e3) / perBatch)}; heap at the start ${f1(mb(heap.used_heap_size))} MB used of ${f1(mb(heap.total_heap_size))} (old space ${f1(mb(oldSpace?.space_used_size ?? 0))} MB), ArrayBuffers ${f1(mb(arrayBuffers))} MB; log ${f1(mb(log.sizeInBytes))} MB in ${store.segmentCount} segments`,
  )
  console.log(`  kernel: ${kernel.pages}; ${kernel.kernel}`)
  console.log(`  kernel threads' CPU: ${kernel.threads}`)
  const slowWrites = events.filter((e) => e.what.startsWith('writeSync '))
  console.log(
    `  segment writeSync over 1 ms: ${slowWrites.length} (${f1(slowWrites.reduce((a, e) => a + e.ms, 0))} ms in all)`,
  )
  const byKind = new Map<string, { n: number; ms: number }>()
  for (const g of gcs) {
    const k = byKind.get(g.what) ?? { n: 0, ms: 0 }
    k.n++
    k.ms += g.ms
    byKind.set(g.what, k)
  }
  console.log(
    `  server: ${stalls.length} stalls > 4 ms (longest ${f1(Math.max(0, ...stalls.map((e) => e.ms)))} ms), ${gcs.length} GCs (${f1(gcs.reduce((a, e) => a + e.ms, 0))} ms in all, longest ${f1(Math.max(0, ...gcs.map((e) => e.ms)))} ms)`,
  )
  for (const e of [...stalls].sort((a, b) => b.ms - a.ms).slice(0, 3))
    console.log(
      `  stall at ${f1(e.at - runStart)} ms into the run (${new Date(e.at).toISOString().slice(11, 23)} UTC): ${f1(e.ms)} ms${e.what.slice(STALL.length)}`,
    )
  console.log(
    `  GCs by kind: ${[...byKind].map(([what, k]) => `${what.slice(3)} ${k.n} (${f1(k.ms)} ms)`).join(', ')}`,
  )
  for (const e of events.filter((x) => x.what.startsWith('segments ')))
    console.log(
      `  segment roll at ${f1(e.at - runStart)} ms into the run (${new Date(e.at).toISOString().slice(11, 23)} UTC): ${e.what}`,
    )
  const a = allocated
  console.log(
    `  ArrayBuffer bytes allocated: ${f1(mb(a.own + a.pooled + a.socketReads))} MB in all; socket reads' buffers ${f1(mb(a.socketReads))} MB (${a.socketReadsN}), Buffers of their own ${f1(mb(a.own))} MB (${a.ownN}, mean ${Math.round(a.own / Math.max(1, a.ownN))} B), slices of Node's pool ${f1(mb(a.pooled))} MB`,
  )
  for (const [name, c] of [...calls].sort((a, b) => b[1].ms - a[1].ms))
    console.log(
      `  ${name}: ${c.n} calls, ${f1(c.ms)} ms in all, mean ${((1000 * c.ms) / c.n).toFixed(0)} µs, longest ${f1(c.max)} ms${c.bytes > 0 ? `, mean ${Math.round(c.bytes / c.n)} B` : ''}`,
    )
  console.log(
    `  socket reads by size: ${readHistogram.map((k, i) => `${i < readSizes.length ? `≤ ${readSizes[i] / 1024} KiB` : 'more'} ${k}`).join(', ')}`,
  )
  // Episodes of slow batches and the server events around them.
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
  for (const e of episodes.slice(0, 8)) {
    const around = events.filter((x) => x.at + x.ms >= e.from - 50 && x.at <= e.to + e.worst)
    console.log(`  episode: ${e.n} slow batches over ${f1(e.to - e.from)} ms, worst ${f1(e.worst)} ms`)
    for (const x of around.slice(0, 8))
      console.log(`    ${f1(x.at - e.from)} ms: ${x.what}${x.ms > 0 ? ` (${f1(x.ms)} ms)` : ''}`)
    if (around.length === 0) console.log('    (nothing in the server process)')
  }
}
clearInterval(tick)
clearInterval(rolls)
gc.disconnect()
client.close()
await server.close()

/**
 * BENCH_PERF=<dir>: `perf record` on the whole machine for one run, of every switch into
 * uninterruptible sleep (prev_state D) and every writeback:balance_dirty_pages, with kernel
 * stacks; null without BENCH_PERF.
 */
async function startPerf(run: number): Promise<ChildProcess | null> {
  if (perfDir === undefined) return null
  fs.mkdirSync(perfDir, { recursive: true })
  const child = spawn(
    'perf',
    [
      'record',
      '-q',
      '-a',
      '-g',
      '-o',
      `${perfDir}/latency-run${run}.perf.data`,
      '-e',
      'sched:sched_switch',
      '--filter',
      'prev_state == 2',
      '-e',
      'writeback:balance_dirty_pages',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  )
  console.log(`  perf: recording latency run ${run} into ${perfDir} (the server is pid ${process.pid})`)
  // perf needs a moment to open its events on every CPU.
  await new Promise((r) => setTimeout(r, 500))
  return child
}

async function stopPerf(child: ChildProcess | null): Promise<void> {
  if (child === null || child.exitCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGINT')
  await exited
}
