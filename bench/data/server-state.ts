// What the server process (this one: the benchmarks start the server in their own process) holds
// and did around a latency run, for the question whether a run leaves something behind that makes
// the next one slower (BENCHMARKS.md, "Runs 2–3 at half load: the pages the phases freed"): its
// heap by space, the files it has open, the partition's segments, its page faults, its threads' CPU
// and its collections by kind; and the new pages the machine freed shortly before a run.
import {
  appendFileSync,
  closeSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  unlinkSync,
} from 'node:fs'
import { join } from 'node:path'
import v8 from 'node:v8'
import { describeGcs, observeGc, type TraceEvent } from '../server/gc-events.js'
import { mainThreadStat } from '../server/thread-stat.js'
import { statFields, statTicks } from './kernel-state.js'
import {
  type CallSpan,
  type ClassifiedStall,
  classifyStalls,
  describeStalls,
  describeTimeline,
  type LoadTimeline,
  type LoopStall,
  serverBuckets,
} from './timeline.js'

export interface ServerState {
  readonly at: number
  /** MB used: the whole heap, its new space, old space and large-object space; outside it. */
  readonly heapMb: number
  readonly newMb: number
  /** The new space's size (its two semi-spaces' capacity), which V8 grows while much survives. */
  readonly newSizeMb: number
  readonly oldMb: number
  readonly largeMb: number
  readonly externalMb: number
  readonly arrayBuffersMb: number
  readonly openFiles: number
  /** Segment files (`.log`) in the partition's directory. */
  readonly segments: number
  /** Page faults of the process so far: minor (a new page), major (a read from disk). */
  readonly minorFaults: number
  readonly majorFaults: number
  /** The process's CPU so far (user + system), ms. */
  readonly cpuMs: number
}

const MB = 1024 * 1024

function count(dir: string, filter: (name: string) => boolean = () => true): number {
  try {
    return readdirSync(dir).filter(filter).length
  } catch {
    return -1
  }
}

/** The state now; `partitionDir` is the partition's directory under the log dir. */
export function serverState(partitionDir: string): ServerState {
  const stats = v8.getHeapSpaceStatistics()
  const spaces = new Map(stats.map((s) => [s.space_name, s.space_used_size]))
  const newSize = stats.find((s) => s.space_name === 'new_space')?.space_size ?? 0
  const mem = process.memoryUsage()
  // /proc/self/stat: minflt and majflt are the line's 10th and 12th fields.
  const f = statFields(readFileSync('/proc/self/stat', 'latin1'))
  const cpu = process.cpuUsage()
  return {
    at: performance.now(),
    heapMb: mem.heapUsed / MB,
    newMb: (spaces.get('new_space') ?? 0) / MB,
    newSizeMb: newSize / MB,
    oldMb: (spaces.get('old_space') ?? 0) / MB,
    largeMb: ((spaces.get('large_object_space') ?? 0) + (spaces.get('new_large_object_space') ?? 0)) / MB,
    externalMb: mem.external / MB,
    arrayBuffersMb: mem.arrayBuffers / MB,
    openFiles: count('/proc/self/fd'),
    segments: count(partitionDir, (n) => n.endsWith('.log')),
    minorFaults: Number(f[7]),
    majorFaults: Number(f[9]),
    cpuMs: (cpu.user + cpu.system) / 1000,
  }
}

const f0 = (n: number): string => n.toFixed(0)
const f1 = (n: number): string => n.toFixed(1)

/** One line: the state at a run's start → at its end. */
export function describeStates(a: ServerState, b: ServerState, batches: number): string {
  const heap = (s: ServerState) =>
    `${f1(s.heapMb)} (new ${f1(s.newMb)} of ${f1(s.newSizeMb)}, old ${f1(s.oldMb)}, large ${f1(s.largeMb)})`
  const n = Math.max(1, batches)
  return [
    `heap MB ${heap(a)} → ${heap(b)}`,
    `external ${f1(a.externalMb)} → ${f1(b.externalMb)} MB (array buffers ${f1(a.arrayBuffersMb)} → ${f1(b.arrayBuffersMb)})`,
    `open files ${a.openFiles} → ${b.openFiles}`,
    `segments ${a.segments} → ${b.segments}`,
    `page faults a batch: minor ${f1((b.minorFaults - a.minorFaults) / n)}, major ${f0(b.majorFaults - a.majorFaults)} in all`,
  ].join('; ')
}

/** The server's CPU between two states (ms, and % of one core over the time between them). */
export function describeIdle(a: ServerState, b: ServerState): string {
  const ms = b.at - a.at
  const cpu = b.cpuMs - a.cpuMs
  return `${f0(ms)} ms, server CPU ${f0(cpu)} ms (${f0((100 * cpu) / Math.max(1, ms))} % of a core)`
}

/** Collections while `work` runs (described, and each), and what it returned. */
export async function withGcs<T>(
  work: () => Promise<T>,
): Promise<{ value: T; gcs: string; events: readonly TraceEvent[] }> {
  const events: TraceEvent[] = []
  const observer = observeGc(events)
  try {
    const value = await work()
    // Entries are delivered asynchronously: let the last ones arrive.
    await new Promise((r) => setImmediate(r))
    return { value, gcs: describeGcs(events), events }
  } finally {
    observer.disconnect()
  }
}

/** The partition's directory under a bench server's data dir. */
export const partitionDir = (dataDir: string, topic: string, partition = 0): string =>
  join(dataDir, 'logs', `${topic}-${partition}`)

/** An interval on the wall clock (performance.timeOrigin + now), ms. */
interface Interval {
  readonly from: number
  readonly to: number
}

/**
 * BENCH_RUN_TRACE=1: the server process's threadpool file calls (node:fs `fsync`, `read`, `write`,
 * replaced in place before the server opens its files) as intervals from call to callback, so a run
 * can tell whether its slow batches were sent while the flush of a rolled segment (its fsync) or
 * reads ran; its synchronous file calls on the event loop (`writeSync`, `writevSync`,
 * `ftruncateSync`: an append's write, the file made longer for a read ahead) from call to return;
 * and the event loop's delay (monitorEventLoopDelay, and a 5 ms timer that reads the main thread's
 * scheduler statistics at every firing). Given the load's timeline of the run (timeline.ts) and the
 * server's collections, the run's record adds, bucket by bucket, the event loop's delay, the
 * collections and the threadpool calls, and every stall of the loop over 5 ms with what overlapped
 * it and its cause (classifyStalls). Returns null without it.
 */
export async function traceFileCalls(): Promise<{
  /**
   * Starts a run's record; the function returned ends it with one line, given the run's slow
   * batches, and with its collections (and the load's timeline) the stalls and the buckets.
   */
  run(): (
    slow: readonly { at: number; ms: number }[],
    trace?: {
      readonly timeline?: LoadTimeline
      readonly gcs: readonly TraceEvent[]
      /**
       * Appends each stall over 5 ms to this file as a long turn in the format
       * tools/soak/long-turns.ts reads beside a CPU profile of this process (BENCH_PROFILE): its
       * kind is the stall's cause (`running`, `GC`, `no CPU`, `asleep`, `file call`), its span the
       * interval from the timer's firing before to the late one, on the monotonic clock in µs.
       */
      readonly turnsFile?: string
      /** Gets the run's loop stalls (each firing of the 5 ms timer more than 1 ms late). */
      readonly onStalls?: (stalls: readonly LoopStall[]) => void
    },
  ) => string
} | null> {
  if (process.env.BENCH_RUN_TRACE !== '1') return null
  const fs = (await import('node:fs')).default as unknown as Record<string, (...a: unknown[]) => unknown>
  const { syncBuiltinESMExports } = await import('node:module')
  const { monitorEventLoopDelay } = await import('node:perf_hooks')
  let calls: { kind: string; bytes: number; i: Interval }[] = []
  let syncCalls: CallSpan[] = []
  /** Where each file's data written on the loop ends, and how far past it each read ahead reached (MiB). */
  const dataEnd = new Map<number, number>()
  let reaches: number[] = []
  const wall = () => performance.timeOrigin + performance.now()
  for (const name of ['fsync', 'read', 'write']) {
    const original = fs[name]
    fs[name] = function (this: unknown, ...args: unknown[]) {
      const from = performance.timeOrigin + performance.now()
      const cb = args[args.length - 1] as (...r: unknown[]) => void
      const bytes = name === 'fsync' ? 0 : ((args[3] as number | undefined) ?? 0)
      // The pages read ahead past the active segment's data read into a plain Uint8Array (the
      // file engine's scratch), a Fetch into Buffers.
      const kind = name === 'read' && !Buffer.isBuffer(args[1]) ? 'read ahead' : name
      if (kind === 'read ahead')
        reaches.push(((args[4] as number) + bytes - (dataEnd.get(args[0] as number) ?? 0)) / MB)
      args[args.length - 1] = (...r: unknown[]) => {
        calls.push({ kind, bytes, i: { from, to: performance.timeOrigin + performance.now() } })
        cb(...r)
      }
      return original.apply(this, args)
    }
  }
  // The loop's own file calls: kept when they took 0.5 ms or more (an append's write takes tens of µs).
  for (const name of ['writeSync', 'writevSync', 'ftruncateSync']) {
    const original = fs[name]
    fs[name] = function (this: unknown, ...args: unknown[]) {
      const from = wall()
      try {
        const n = original.apply(this, args)
        // An append's write, at the end of the file's data: where the data now ends.
        const at = name === 'writeSync' ? args[4] : name === 'writevSync' ? args[2] : undefined
        if (typeof at === 'number' && typeof n === 'number') {
          const fd = args[0] as number
          dataEnd.set(fd, at + n)
        }
        return n
      } finally {
        const to = wall()
        if (to - from >= 0.5) {
          const bytes =
            name === 'writeSync'
              ? ((args[2] as number | undefined) ?? 0)
              : name === 'writevSync'
                ? (args[1] as Uint8Array[]).reduce((n, b) => n + b.byteLength, 0)
                : 0
          syncCalls.push({ kind: name, bytes, from, to })
        }
      }
    }
  }
  syncBuiltinESMExports()
  /** The main thread's ms on a CPU and waiting for one so far (its schedstat), or null off Linux. */
  const sched = (): { ran: number; waited: number } | null => {
    const t = mainThreadStat()
    return t === null ? null : { ran: t.onCpu / 1e6, waited: t.waiting / 1e6 }
  }
  return {
    run() {
      calls = []
      syncCalls = []
      reaches = []
      const delay = monitorEventLoopDelay({ resolution: 10 })
      delay.enable()
      const t0 = performance.timeOrigin + performance.now()
      // The loop's delays: a 5 ms timer's lateness, kept when over 1 ms, with the main thread's
      // CPU and wait since the firing before.
      const delays: LoopStall[] = []
      let last = wall()
      let lastSched = sched()
      const timer = setInterval(() => {
        const now = wall()
        const s = sched()
        if (now - last - 5 > 1)
          delays.push({
            at: last + 5,
            ms: now - last - 5,
            ranMs: s === null || lastSched === null ? Number.NaN : s.ran - lastSched.ran,
            waitedMs: s === null || lastSched === null ? Number.NaN : s.waited - lastSched.waited,
          })
        last = now
        lastSched = s
      }, 5)
      return (slow, trace) => {
        delay.disable()
        clearInterval(timer)
        const byKind = new Map<string, { n: number; ms: number; longest: number; bytes: number }>()
        const all = [
          ...calls.map((c) => ({ kind: c.kind, bytes: c.bytes, ms: c.i.to - c.i.from })),
          ...syncCalls.map((c) => ({ kind: `${c.kind} ≥ 0.5 ms`, bytes: c.bytes, ms: c.to - c.from })),
        ]
        for (const c of all) {
          const k = byKind.get(c.kind) ?? { n: 0, ms: 0, longest: 0, bytes: 0 }
          k.n++
          k.ms += c.ms
          k.longest = Math.max(k.longest, c.ms)
          k.bytes += c.bytes
          byKind.set(c.kind, k)
        }
        const fsyncs = calls.filter((c) => c.kind === 'fsync' && c.i.to - c.i.from > 50)
        const during = (at: number) => fsyncs.some((c) => at >= c.i.from && at <= c.i.to)
        const slowDuring = slow.filter((s) => during(s.at)).length
        const list = [...byKind]
          .map(
            ([k, v]) =>
              `${k} ${v.n} (${v.ms.toFixed(0)} ms, longest ${v.longest.toFixed(0)}${v.bytes > 0 ? `, ${(v.bytes / 1e6).toFixed(0)} MB, ${(v.ms / (v.bytes / MB)).toFixed(2)} ms a MiB` : ''})`,
          )
          .join(', ')
        const spans = fsyncs
          .map((c) => `${((c.i.from - t0) / 1000).toFixed(2)}–${((c.i.to - t0) / 1000).toFixed(2)} s`)
          .join(', ')
        const slowAt =
          slow.length === 0 ? '' : `; slow batches sent at ${histogram(slow.map((s) => (s.at - t0) / 1000))}`
        const within = (lo: number, hi: number) => reaches.filter((r) => r > lo && r <= hi).length
        const reach =
          reaches.length === 0
            ? ''
            : `; reads ahead ending past the data by ≤ 4 MiB ${within(Number.NEGATIVE_INFINITY, 4)}, 4–8 MiB ${within(4, 8)}, more ${within(8, Number.POSITIVE_INFINITY)} (furthest ${Math.max(...reaches).toFixed(1)} MiB)`
        const line = `threadpool calls: ${list || 'none'}${reach}; fsyncs over 50 ms at ${spans || 'none'}; batches over 10 ms: ${slow.length}, ${slowDuring} sent during such an fsync${slowAt}; event-loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms`
        if (trace === undefined) return line
        trace.onStalls?.(delays)
        const s = (epochMs: number) => ((epochMs - t0) / 1000).toFixed(2)
        const pool = calls.map((c) => ({ kind: c.kind, bytes: c.bytes, from: c.i.from, to: c.i.to }))
        const timeline = trace.timeline
        const classified = classifyStalls(delays, trace.gcs, syncCalls, pool, timeline)
        if (trace.turnsFile !== undefined) writeTurns(trace.turnsFile, classified, 5)
        const stalls = describeStalls(classified, 5, (epochMs) => (epochMs - t0 < 0 ? '-' : s(epochMs)))
        if (timeline === undefined) return [line, ...stalls].join('\n')
        const { startEpochMs, measureFromMs } = timeline
        const where = `  (on that clock the load's schedule began at ${s(startEpochMs)} s and its measured part at ${s(startEpochMs + measureFromMs)} s)`
        const server = serverBuckets(timeline, delays, trace.gcs, pool)
        return [line, where, ...stalls, ...describeTimeline(timeline, server)].join('\n')
      }
    },
  }
}

/**
 * The stalls over `overMs` as long turns (tools/soak/long-turns.ts's input, one JSON object a
 * line): `at` in ms since this process started, `hrUs` the interval's start on the monotonic clock
 * (process.hrtime, the CPU profile's clock) in µs.
 */
function writeTurns(file: string, stalls: readonly ClassifiedStall[], overMs: number): void {
  // performance.now() is the monotonic clock since the process's time origin.
  const hrOffsetUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000
  const lines = stalls
    .filter((s) => s.stall.ms > overMs)
    .map((s) => {
      const from = s.stall.at - 5 - performance.timeOrigin
      return JSON.stringify({
        pid: process.pid,
        kind: s.cause,
        at: from,
        hrUs: Math.round(from * 1000 + hrOffsetUs),
        ms: s.intervalMs,
        cpuMs: s.stall.ranMs,
        waitMs: s.stall.waitedMs,
        gcMs: s.gcMs,
      })
    })
  appendFileSync(file, lines.map((l) => `${l}\n`).join(''))
}

/** Seconds, in half-second bins: `1.0:12 1.5:40`. */
function histogram(xs: readonly number[]): string {
  const bins = new Map<number, number>()
  for (const x of xs) {
    const b = Math.floor(x * 2) / 2
    bins.set(b, (bins.get(b) ?? 0) + 1)
  }
  return [...bins]
    .sort((a, b) => a[0] - b[0])
    .map(([k, v]) => `${k.toFixed(1)}:${v}`)
    .join(' ')
}

/** CPU time (ms) of each of this process's threads so far, by thread id (the main thread's is the pid). */
export function threadCpu(): Map<number, number> {
  const out = new Map<number, number>()
  let tids: string[] = []
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return out
  }
  for (const tid of tids) {
    try {
      out.set(Number(tid), statTicks(statFields(readFileSync(`/proc/self/task/${tid}/stat`, 'latin1'))) * 10)
    } catch {
      // the thread ended
    }
  }
  return out
}

/**
 * The CPU the process's threads other than the main one used between two readings, per thread id
 * in the order the threads were made (V8's platform workers first, libuv's threadpool threads when
 * first used), a batch: `14828:1.2 14829:0.8 …` µs, and their sum.
 */
export function describeThreads(a: Map<number, number>, b: Map<number, number>, batches: number): string {
  const n = Math.max(1, batches)
  let sum = 0
  const parts: string[] = []
  for (const [tid, ms] of [...b].sort((x, y) => x[0] - y[0])) {
    if (tid === process.pid) continue
    const d = ms - (a.get(tid) ?? 0)
    sum += d
    if (d > 0) parts.push(`${tid}:${((d * 1e3) / n).toFixed(1)}`)
  }
  const main = (b.get(process.pid) ?? 0) - (a.get(process.pid) ?? 0)
  return `threads' CPU µs a batch: main ${((main * 1e3) / n).toFixed(1)}, the others ${((sum * 1e3) / n).toFixed(1)} (${parts.join(' ')})`
}

/** The system CPU one new page-cache page cost, in µs a 4 KiB page, and the MiB it took. */
interface PageCost {
  readonly mib: number
  readonly usPerPage: number
}

/**
 * Takes `mib` MiB of new page-cache pages by reading a hole of `fd` at `at` (the kernel allocates
 * and zeroes each page; no disk block is written), and tells their system CPU a page.
 */
function takePages(fd: number, at: number, mib: number, buf: Buffer): PageCost {
  ftruncateSync(fd, at + mib * MB)
  const c0 = process.cpuUsage()
  for (let i = 0; i < mib; i++) readSync(fd, buf, 0, MB, at + i * MB)
  return { mib, usPerPage: process.cpuUsage(c0).system / ((mib * MB) / 4096) }
}

/**
 * A new page costs what the machine freed shortly before decides. On a VM whose host takes free
 * guest memory back (virtio-balloon free page reporting), a page the guest freed a few seconds ago
 * (a deleted file's page cache) is still the host's memory and costs about half a µs to zero; a
 * page the host took back costs a host fault, 7 µs and more a 4 KiB page, which a 16.7 KB batch
 * pays four times. The throughput phases delete their ceilings' files (gigabytes each), so a
 * latency run soon after them may append into cheap pages.
 *
 * `drainFreedPages` takes those cheap pages before a run, in `step` MiB steps of a scratch file in
 * `dir`, until a step costs what a page the host took back does (or `maxMib` is reached), and keeps
 * them until `release` (the scratch file is unlinked at once, its pages held by the open file), so
 * that every latency run appends into the same kind of page. Returns what it took and what a page
 * cost; one small step is a probe of what a new page costs now.
 */
export function drainFreedPages(
  dir: string,
  maxMib = 8192,
  step = 64,
): { taken: number; cheapUs: number; lastUs: number; release(): void } {
  const STEP = Math.min(step, maxMib)
  /**
   * Above this, a page is one the host took back (cheap ones cost 0.2–1.4 µs here, host faults
   * 3.5–8). A step of both kinds costs between: 3.73 µs before a run whose read ahead cost 2.1 ms a
   * MiB, against 6.8–7.6 µs and 2.7–3.1 ms after it, in the quiet window.
   */
  const HOST_FAULT_US = 3
  const path = join(dir, `freed-pages-${process.pid}-${Date.now()}`)
  const fd = openSync(path, 'w+')
  unlinkSync(path)
  const buf = Buffer.allocUnsafeSlow(MB)
  let taken = 0
  let cheap = 0
  let cheapMib = 0
  let last: PageCost = { mib: 0, usPerPage: Number.NaN }
  while (taken < maxMib) {
    last = takePages(fd, taken * MB, STEP, buf)
    taken += STEP
    if (last.usPerPage >= HOST_FAULT_US) break
    cheap += last.usPerPage * last.mib
    cheapMib += last.mib
  }
  return {
    taken,
    cheapUs: cheapMib === 0 ? Number.NaN : cheap / cheapMib,
    lastUs: last.usPerPage,
    release: () => closeSync(fd),
  }
}
