// The latency runs' clock watch: the soak's tick loop (tools/soak/clock-watch.ts) in a small process
// of its own (clock-process.ts), at a real-time priority (`chrt -f 50`) where it may and at nice -10
// where not, beside each latency run of throughput.ts. A thread that does nothing but tick every
// 10 ms at a real-time priority takes a core from any ordinary thread the moment its timer is due;
// when it is still late by more than 5 ms, and its own schedstat shows it did not wait for a core,
// nothing in the guest held it: the host held the virtual CPU its timer was on, or the whole
// virtual machine (one watch cannot tell which; this VM reports no steal time: BENCH_CLOCK_WATCH=
// per-cpu runs one watch pinned to each CPU, and a held gap of one while the other ticked says the
// host held that virtual CPU alone, held gaps of all at once the whole machine). Each run's line
// gives the watch's ticks, its gaps over 5 ms (a tick that late) with their times from the run's
// measured part, and, with BENCH_RUN_TRACE=1, how many of them overlap a loop
// stall of the server over 5 ms or a tick gap of the load over 5 ms (timeline.ts), so that a run
// whose tail the machine made can be told from one the server made.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { setPriority } from 'node:os'
import { fileURLToPath } from 'node:url'
import { statFields } from './kernel-state.js'
import type { LoadTimeline } from './timeline.js'

/** The watch's tick (ms) and how late a tick must be to count as a gap (ms past the tick). */
export const CLOCK_WATCH_TICK_MS = 10
export const CLOCK_WATCH_GAP_MS = 5
/** The load's own timer (load-worker.ts ticks every 1 ms): its gaps count from there. */
const LOAD_TICK_MS = 1

/** What the watch's process sends. */
export type ClockProcessMessage =
  | { readonly type: 'ready' }
  /** A gap: the tick at `atMono` came `ms` after the one before, `waitedMs` of it waiting for a core. */
  | {
      readonly type: 'gap'
      readonly kind: 'gap' | 'wait'
      readonly atMono: number
      readonly ms: number
      readonly waitedMs: number
    }
  | { readonly type: 'count'; readonly ticks: number; readonly atMono: number; readonly cpuMs: number }

export type ClockGapMessage = Extract<ClockProcessMessage, { type: 'gap' }>
export type ClockCount = Extract<ClockProcessMessage, { type: 'count' }>

/** A process's scheduling from its /proc/<pid>/stat: `SCHED_FIFO 50`, `SCHED_RR 10` or `nice -10`. */
export function schedulingOf(stat: string): string {
  const f = statFields(stat)
  // Fields 19 (nice), 40 (rt_priority) and 41 (policy) of proc(5), counted from field 3 here.
  const nice = f[16]
  const rt = f[37]
  const policy = f[38]
  if (policy === '1') return `SCHED_FIFO ${rt}`
  if (policy === '2') return `SCHED_RR ${rt}`
  if (policy === '0') return `nice ${nice}`
  return `policy ${policy}, nice ${nice}`
}

/** A late tick of the watch on the shared monotonic clock (ms): when it was due and how late it came. */
export interface WatchGap {
  readonly dueMono: number
  readonly lateMs: number
  /** How long of the gap the watch waited for a core (ms; NaN unknown). */
  readonly waitedMs: number
  /** Not waiting for a core for half of its lateness: the whole process held although due. */
  readonly held: boolean
}

/** The watch's gaps whose late tick came in (from, to]. */
export function watchGaps(messages: readonly ClockGapMessage[], from: number, to: number): WatchGap[] {
  return messages
    .filter((m) => m.atMono > from && m.atMono <= to)
    .map((m) => ({
      dueMono: m.atMono - m.ms + CLOCK_WATCH_TICK_MS,
      lateMs: m.ms - CLOCK_WATCH_TICK_MS,
      waitedMs: m.waitedMs,
      held: m.kind === 'gap',
    }))
}

/** An interval on the shared monotonic clock (ms). */
export interface Span {
  readonly from: number
  readonly to: number
}

/**
 * The server's loop stalls over `overMs` (the 5 ms timer's firings: due at `at`, `ms` late, on this
 * process's epoch clock) as the spans they were late, on the monotonic clock: `epochToMono` is
 * what to add (process.hrtime's ms minus performance.timeOrigin + performance.now()).
 */
export function serverStallSpans(
  stalls: readonly { readonly at: number; readonly ms: number }[],
  epochToMono: number,
  overMs = CLOCK_WATCH_GAP_MS,
): Span[] {
  return stalls
    .filter((s) => s.ms > overMs)
    .map((s) => ({ from: s.at + epochToMono, to: s.at + s.ms + epochToMono }))
}

/**
 * The load's tick gaps over `overMs` past its 1 ms tick, from its timeline whose first bucket
 * starts at `startMono`: a bucket keeps only its longest gap and the gap ended somewhere in it, so
 * each span reaches from the gap's length before the bucket's start to the bucket's end.
 */
export function loadStallSpans(
  timeline: LoadTimeline,
  startMono: number,
  overMs = CLOCK_WATCH_GAP_MS,
): Span[] {
  const spans: Span[] = []
  timeline.buckets.forEach((b, k) => {
    if (b.tickGapMs - LOAD_TICK_MS <= overMs) return
    const from = startMono + k * timeline.bucketMs
    spans.push({ from: from - b.tickGapMs + LOAD_TICK_MS, to: from + timeline.bucketMs })
  })
  return spans
}

const overlaps = (g: WatchGap, spans: readonly Span[]) =>
  spans.some((s) => Math.min(s.to, g.dueMono + g.lateMs) > Math.max(s.from, g.dueMono))

/** The span a gap was late: from when its tick was due to when it came. */
const lateSpan = (g: WatchGap): Span => ({ from: g.dueMono, to: g.dueMono + g.lateMs })

/**
 * Watches pinned one to each CPU: the spans in which every one of them was held at once (the
 * intersections of their held gaps), and each watch's held gaps that overlap no gap of any other
 * watch (its CPU held while the others ticked on time).
 */
export function heldAcross(watches: readonly (readonly WatchGap[])[]): {
  readonly together: Span[]
  readonly alone: number[]
} {
  let together: Span[] | null = null
  for (const gaps of watches) {
    const held = gaps.filter((g) => g.held).map(lateSpan)
    together =
      together === null
        ? held
        : together.flatMap((a) =>
            held
              .map((b) => ({ from: Math.max(a.from, b.from), to: Math.min(a.to, b.to) }))
              .filter((s) => s.to > s.from),
          )
  }
  const alone = watches.map(
    (gaps, i) =>
      gaps.filter((g) => g.held && watches.every((other, j) => j === i || !overlaps(g, other.map(lateSpan))))
        .length,
  )
  return { together: watches.length < 2 ? [] : (together ?? []), alone }
}

/**
 * The line of watches pinned one to each CPU: how many of each one's gaps were held, how many of
 * those while every other watch ticked, and the spans in which all were held at once (how many,
 * the longest, each at s from `measuredFromMono`).
 */
export function describeHeldAcross(o: {
  readonly cpus: readonly number[]
  readonly gaps: readonly (readonly WatchGap[])[]
  readonly measuredFromMono: number
}): string {
  const { together, alone } = heldAcross(o.gaps)
  const cpus = o.cpus.join(', ')
  const perCpu = o.cpus
    .map(
      (cpu, i) =>
        `CPU ${cpu} ${o.gaps[i].filter((g) => g.held).length} (${alone[i]} while the others ticked)`,
    )
    .join(', ')
  const head = `clock watches on CPUs ${cpus}: held gaps ${perCpu}; all held at once`
  if (together.length === 0) return `${head}: never`
  const longest = together.reduce((a, s) => Math.max(a, s.to - s.from), 0)
  const listed = together
    .slice(0, LISTED)
    .map((s) => `${((s.from - o.measuredFromMono) / 1000).toFixed(2)} s (${(s.to - s.from).toFixed(1)} ms)`)
  if (together.length > LISTED) listed.push(`${together.length - LISTED} more`)
  return `${head}: ${together.length}, longest ${longest.toFixed(1)} ms, at ${listed.join(', ')} from the measured part's start`
}

/** The gaps listed in a line at most; the rest are counted. */
const LISTED = 8

/**
 * One run's line: the watch's scheduling, ticks and CPU, its gaps (how many, the longest, each at
 * s from `measuredFromMono`), how many had the whole process held, and how many overlap the
 * server's and the load's stalls (`stalls` undefined: no run trace).
 */
export function describeClockWatch(o: {
  readonly scheduling: string
  /** The CPU the watch was pinned to, if it was. */
  readonly cpu?: number
  readonly ticks: number
  readonly cpuMs: number
  readonly gaps: readonly WatchGap[]
  readonly measuredFromMono: number
  readonly stalls?: { readonly server: readonly Span[]; readonly load: readonly Span[] }
}): string {
  const { gaps } = o
  const on = o.cpu === undefined ? '' : ` on CPU ${o.cpu}`
  const head = `clock watch${on} (${o.scheduling}, a tick every ${CLOCK_WATCH_TICK_MS} ms): ${o.ticks} ticks, its CPU ${o.cpuMs.toFixed(0)} ms`
  if (gaps.length === 0) return `${head}; gaps over ${CLOCK_WATCH_GAP_MS} ms: none`
  const longest = gaps.reduce((a, g) => Math.max(a, g.lateMs), 0)
  const at = (g: WatchGap) => ((g.dueMono - o.measuredFromMono) / 1000).toFixed(2)
  const listed = gaps
    .slice(0, LISTED)
    .map(
      (g) =>
        `${at(g)} s (${g.lateMs.toFixed(1)} ms, ${g.held ? 'held' : `waited ${g.waitedMs.toFixed(1)} ms for a core`})`,
    )
  if (gaps.length > LISTED) listed.push(`${gaps.length - LISTED} more`)
  const held = gaps.filter((g) => g.held).length
  const s = o.stalls
  const withStalls =
    s === undefined
      ? 'overlaps with the run trace only (BENCH_RUN_TRACE=1)'
      : `overlapping the server's loop stalls over ${CLOCK_WATCH_GAP_MS} ms ${gaps.filter((g) => overlaps(g, s.server)).length}, the load's tick gaps over ${CLOCK_WATCH_GAP_MS} ms ${gaps.filter((g) => overlaps(g, s.load)).length}, either ${gaps.filter((g) => overlaps(g, s.server) || overlaps(g, s.load)).length} (held ${gaps.filter((g) => g.held && (overlaps(g, s.server) || overlaps(g, s.load))).length})`
  return `${head}; gaps over ${CLOCK_WATCH_GAP_MS} ms: ${gaps.length}, longest ${longest.toFixed(1)} ms, at ${listed.join(', ')} from the measured part's start; the whole process held (not waiting for a core) in ${held}; ${withStalls}`
}

const PROCESS = fileURLToPath(new URL('./clock-process.ts', import.meta.url))

/** The watch's process, as throughput.ts uses it. */
export interface ClockWatchProcess {
  readonly pid: number
  /** Its main thread's scheduling (`SCHED_FIFO 50`, `nice -10`, …). */
  readonly scheduling: string
  /** The CPU it is pinned to, if it is. */
  readonly cpu?: number
  /** Every gap it sent so far. */
  readonly gaps: readonly ClockGapMessage[]
  /** Its ticks so far, its CPU and the time of the answer. */
  count(): Promise<ClockCount>
  stop(): void
}

/**
 * Puts the watch's main thread, and only it, at a real-time priority (`chrt -f -p 50` names one
 * thread), else at nice -10 (`setpriority` of a thread id is that thread's), where allowed. Started
 * under `chrt -f 50` every thread of the process ran at that priority: V8's helpers and the module
 * loader's thread too, pinned to the watch's CPU; a thread that waits for another by spinning at
 * that priority keeps the CPU from it until the kernel's real-time throttling lets others run, and
 * the watch took 13 s of CPU in a 15-s latency run, its ticks late by up to 69 ms.
 */
function raise(pid: number): void {
  if (spawnSync('chrt', ['-f', '-p', '50', String(pid)], { stdio: 'ignore' }).status === 0) return
  try {
    setPriority(pid, -10)
  } catch {
    // Not allowed: the watch runs at the default priority, and its line says so.
  }
}

/**
 * Starts the watch's process, its main thread at a real-time priority where allowed (raise);
 * given a CPU, pinned to it; null when it cannot start at all.
 */
export function startClockWatch(cpu?: number): Promise<ClockWatchProcess | null> {
  // Pinned (`taskset`, which runs the watch in its own process); V8 without background threads,
  // so that nothing of the watch's own runs beside its tick loop (`--single-threaded`).
  const pin = cpu === undefined ? [] : ['taskset', '-c', String(cpu)]
  const [command, ...args] = [...pin, process.execPath, '--single-threaded', '--import', 'tsx', PROCESS]
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const gaps: ClockGapMessage[] = []
    const waiting: ((c: ClockCount) => void)[] = []
    let ready = false
    child.on('message', (m: ClockProcessMessage) => {
      if (m.type === 'gap') gaps.push(m)
      else if (m.type === 'count') waiting.shift()?.(m)
      else if (child.pid !== undefined) {
        ready = true
        raise(child.pid)
        resolve({
          pid: child.pid,
          scheduling: schedulingOf(readFileSync(`/proc/${child.pid}/stat`, 'utf8')),
          ...(cpu === undefined ? {} : { cpu }),
          gaps,
          count: () =>
            new Promise((r) => {
              waiting.push(r)
              child.send('count')
            }),
          stop: () => {
            if (child.connected) child.disconnect()
          },
        })
      }
    })
    child.once('error', () => resolve(null))
    child.once('exit', () => {
      if (!ready) resolve(null)
    })
  })
}
