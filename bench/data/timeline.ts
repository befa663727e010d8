// A latency run in short buckets, from the start of the load's schedule: what the load
// saw (batches sent, their latency, the consumer's lag and its Fetch answers, the producers' bytes
// not yet handed to the kernel, the load's own timer delay) next to what the server did (its event
// loop's delay, its collections, its threadpool file calls). throughput.ts prints it with
// BENCH_RUN_TRACE=1 (BENCHMARKS.md, "The half-load run's first second, traced").

/** What the load measured in one bucket. */
export interface LoadBucket {
  /** Batches stamped (sent) in the bucket. */
  sent: number
  /** The longest latency of a batch sent in the bucket, ms (0: none). */
  worstMs: number
  /** Batches sent in the bucket whose latency was over the slow mark. */
  slow: number
  /** Batches sent (from the start) and not yet read by the consumer at the bucket's end. */
  lagEnd: number
  /** Fetch answers the consumer finished reading in the bucket, and the most batches one held. */
  answers: number
  answerMaxBatches: number
  /** The most bytes the producers' sockets held in Node (not yet with the kernel), over the bucket's ticks. */
  unsentMax: number
  /** The load's 1 ms tick: the longest gap between two ticks in the bucket, ms. */
  tickGapMs: number
}

export interface LoadTimeline {
  /** The start of the load's schedule (its first send follows within 1/rate s), ms since the epoch. */
  readonly startEpochMs: number
  readonly bucketMs: number
  /** Where the measured part begins (the warm-up's end), ms from the first bucket's start. */
  readonly measureFromMs: number
  readonly buckets: LoadBucket[]
}

export const emptyBucket = (): LoadBucket => ({
  sent: 0,
  worstMs: 0,
  slow: 0,
  lagEnd: 0,
  answers: 0,
  answerMaxBatches: 0,
  unsentMax: 0,
  tickGapMs: 0,
})

/** The bucket index of time `t` (same clock as `start`), or -1 outside the `n` buckets. */
export function bucketOf(t: number, start: number, bucketMs: number, n: number): number {
  const k = Math.floor((t - start) / bucketMs)
  return k >= 0 && k < n ? k : -1
}

/**
 * The consumer's side of `n` buckets from `start`: per batch its stamp (the send) and the time its
 * answer was read (`complete`, the same clock), and per answer its end and how many batches it held.
 * Batches and answers outside the buckets are not counted, but the lag counts every batch sent
 * since `start`.
 */
export function consumerBuckets(
  stamps: readonly number[],
  complete: readonly number[],
  answers: readonly { readonly at: number; readonly batches: number }[],
  start: number,
  bucketMs: number,
  n: number,
  slowMs: number,
): LoadBucket[] {
  const out = Array.from({ length: n }, emptyBucket)
  const sentIn = new Array<number>(n).fill(0)
  const doneIn = new Array<number>(n).fill(0)
  let doneBefore = 0
  for (let i = 0; i < stamps.length; i++) {
    const ms = complete[i] - stamps[i]
    const k = bucketOf(stamps[i], start, bucketMs, n)
    if (k >= 0) {
      const b = out[k]
      b.sent++
      b.worstMs = Math.max(b.worstMs, ms)
      if (ms > slowMs) b.slow++
      sentIn[k]++
    }
    if (stamps[i] < start) continue
    const d = bucketOf(complete[i], start, bucketMs, n)
    if (d >= 0) doneIn[d]++
    else if (complete[i] < start) doneBefore++
  }
  let sent = 0
  let done = doneBefore
  for (let k = 0; k < n; k++) {
    sent += sentIn[k]
    done += doneIn[k]
    out[k].lagEnd = sent - done
  }
  for (const a of answers) {
    const k = bucketOf(a.at, start, bucketMs, n)
    if (k < 0) continue
    out[k].answers++
    out[k].answerMaxBatches = Math.max(out[k].answerMaxBatches, a.batches)
  }
  return out
}

/** What the server did in one bucket. */
export interface ServerBucket {
  /** The server's event loop: the longest delay of a short timer in the bucket, ms. */
  loopDelayMs: number
  /** Collections that began in the bucket: `scavenge 4.1`, … */
  gcs: string[]
  /** Threadpool file calls that began in the bucket, by kind: count and the longest, ms. */
  calls: Map<string, { n: number; longest: number }>
}

export const emptyServerBucket = (): ServerBucket => ({ loopDelayMs: 0, gcs: [], calls: new Map() })

/**
 * The server's side of the load's buckets (times in ms since the epoch): timer delays, collections
 * and threadpool calls placed by their start.
 */
export function serverBuckets(
  timeline: LoadTimeline,
  delays: readonly { readonly at: number; readonly ms: number }[],
  gcs: readonly { readonly at: number; readonly ms: number; readonly what: string }[],
  calls: readonly { readonly kind: string; readonly from: number; readonly to: number }[],
): ServerBucket[] {
  const { startEpochMs: start, bucketMs } = timeline
  const n = timeline.buckets.length
  const out = Array.from({ length: n }, emptyServerBucket)
  for (const d of delays) {
    const k = bucketOf(d.at, start, bucketMs, n)
    if (k >= 0) out[k].loopDelayMs = Math.max(out[k].loopDelayMs, d.ms)
  }
  for (const g of gcs) {
    const k = bucketOf(g.at, start, bucketMs, n)
    if (k >= 0) out[k].gcs.push(`${g.what.replace(/^GC /, '')} ${g.ms.toFixed(1)}`)
  }
  for (const c of calls) {
    const k = bucketOf(c.from, start, bucketMs, n)
    if (k < 0) continue
    const e = out[k].calls.get(c.kind) ?? { n: 0, longest: 0 }
    e.n++
    e.longest = Math.max(e.longest, c.to - c.from)
    out[k].calls.set(c.kind, e)
  }
  return out
}

/** One line a bucket, the load's columns then the server's; `*` marks the measured part's buckets. */
export function describeTimeline(timeline: LoadTimeline, server: readonly ServerBucket[]): string[] {
  const measureFromMs = timeline.measureFromMs
  const f1 = (x: number) => x.toFixed(1)
  const lines = [
    `  first ${timeline.buckets.length * timeline.bucketMs} ms of the load, by ${timeline.bucketMs} ms (measured from ${measureFromMs.toFixed(0)} ms, marked *): ms | sent | worst ms | slow | consumer lag at end | answers (most batches in one) | producers' unsent KB | load tick gap ms || server loop delay ms | GCs | threadpool calls (n/longest ms)`,
  ]
  timeline.buckets.forEach((b, k) => {
    const s = server[k] ?? emptyServerBucket()
    const calls = [...s.calls].map(([kind, c]) => `${kind} ${c.n}/${c.longest.toFixed(0)}`).join(', ')
    const at = k * timeline.bucketMs
    lines.push(
      `  ${at >= measureFromMs ? '*' : ' '}${String(at).padStart(5)} | ${b.sent} | ${f1(b.worstMs)} | ${b.slow} | ${b.lagEnd} | ${b.answers} (${b.answerMaxBatches}) | ${(b.unsentMax / 1024).toFixed(0)} | ${f1(b.tickGapMs)} || ${f1(s.loopDelayMs)} | ${s.gcs.join(', ') || '-'} | ${calls || '-'}`,
    )
  })
  return lines
}

/**
 * One late firing of the server's 5 ms timer (the loop's delay): when it was due and how late it
 * fired (ms since the epoch), and what the main thread's scheduler statistics (its schedstat,
 * bench/server/thread-stat.ts) say it did from the firing before to this one: ms on a CPU, and
 * ms runnable but waiting for one. The rest of that interval it slept (a system call waiting on a
 * lock, a page or the disk).
 */
export interface LoopStall {
  readonly at: number
  readonly ms: number
  readonly ranMs: number
  readonly waitedMs: number
}

/** A file call on the wall clock (ms since the epoch): its kind, bytes, and call to return or callback. */
export interface CallSpan {
  readonly kind: string
  readonly bytes: number
  readonly from: number
  readonly to: number
}

/** What the server was doing while its loop stalled, and the one cause that took the most of it. */
export interface ClassifiedStall {
  readonly stall: LoopStall
  /**
   * `GC` (collections), `file call` (the loop's own synchronous file calls: an append's writeSync,
   * an ftruncate), `no CPU` (the main thread runnable, not running), `asleep` (off the CPU, not
   * runnable, outside a file call) or `running` (on a CPU, neither collecting nor in a file call:
   * the turn's own work).
   */
  readonly cause: 'GC' | 'file call' | 'no CPU' | 'asleep' | 'running'
  /** The interval from the previous firing to this one, and the main thread asleep in it, ms. */
  readonly intervalMs: number
  readonly asleepMs: number
  /** Collections overlapping the interval (`scavenge 8.1`, with flags) and their ms inside it. */
  readonly gcs: string[]
  readonly gcMs: number
  /** The loop's synchronous file calls inside it, ms, and the longest (`writeSync 4.1 (16 KB)`). */
  readonly syncMs: number
  readonly longestSync: string
  /** Threadpool calls in flight during it: kind, duration, bytes, start relative to the interval's. */
  readonly inFlight: string[]
  /** The kinds of those calls (`read ahead`, `fsync`, `read`, …). */
  readonly inFlightKinds: string[]
  /** The load process's longest tick gap in the buckets the interval touches, ms (NaN: no timeline). */
  readonly loadTickGapMs: number
  /** Batches over the slow mark sent from the interval's start to 250 ms after it (NaN: no timeline). */
  readonly slowAfter: number
}

const overlap = (a0: number, a1: number, b0: number, b1: number) =>
  Math.max(0, Math.min(a1, b1) - Math.max(a0, b0))

/**
 * Each stall of the loop with what overlapped it: collections, the loop's synchronous file calls,
 * threadpool calls in flight, the load's own tick, and the main thread's CPU, wait and sleep; the
 * cause is the largest of the collections' time, the file calls' time, the wait for a CPU, the
 * sleep outside file calls and the running outside both.
 */
export function classifyStalls(
  stalls: readonly LoopStall[],
  gcs: readonly {
    readonly at: number
    readonly ms: number
    readonly what: string
    readonly flags?: string
  }[],
  sync: readonly CallSpan[],
  pool: readonly CallSpan[],
  timeline?: LoadTimeline,
): ClassifiedStall[] {
  const TIMER_MS = 5
  return stalls.map((stall) => {
    const from = stall.at - TIMER_MS
    const to = stall.at + stall.ms
    const intervalMs = to - from
    let gcMs = 0
    const gcList: string[] = []
    for (const g of gcs) {
      const o = overlap(from, to, g.at, g.at + g.ms)
      if (o <= 0) continue
      gcMs += o
      gcList.push(
        `${g.what.replace(/^GC /, '')} ${g.ms.toFixed(1)}${g.flags === undefined ? '' : ` [${g.flags}]`}`,
      )
    }
    let syncMs = 0
    let longest: CallSpan | null = null
    for (const c of sync) {
      const o = overlap(from, to, c.from, c.to)
      if (o <= 0) continue
      syncMs += o
      if (longest === null || c.to - c.from > longest.to - longest.from) longest = c
    }
    const flying = pool.filter((c) => c.from < to && c.to > from)
    const inFlight = flying.map(
      (c) =>
        `${c.kind} ${(c.to - c.from).toFixed(1)} ms${c.bytes > 0 ? ` (${(c.bytes / 1048576).toFixed(1)} MiB)` : ''} from ${(c.from - from).toFixed(1)}`,
    )
    const asleepMs = Math.max(0, intervalMs - stall.ranMs - stall.waitedMs)
    const shares: [ClassifiedStall['cause'], number][] = [
      ['GC', gcMs],
      ['file call', syncMs],
      ['no CPU', stall.waitedMs],
      ['asleep', Math.max(0, asleepMs - syncMs)],
      ['running', Math.max(0, stall.ranMs - gcMs - syncMs)],
    ]
    const cause = shares.reduce((a, b) => (b[1] > a[1] ? b : a))[0]
    let loadTickGapMs = Number.NaN
    let slowAfter = Number.NaN
    if (timeline !== undefined) {
      const { startEpochMs: start, bucketMs, buckets } = timeline
      const n = buckets.length
      const first = Math.max(0, Math.floor((from - start) / bucketMs))
      const last = Math.min(n - 1, Math.floor((to - start) / bucketMs))
      loadTickGapMs = 0
      for (let k = first; k <= last; k++) loadTickGapMs = Math.max(loadTickGapMs, buckets[k].tickGapMs)
      slowAfter = 0
      const end = Math.min(n - 1, Math.floor((from + 250 - start) / bucketMs))
      for (let k = first; k <= end; k++) slowAfter += buckets[k].slow
    }
    return {
      stall,
      cause,
      intervalMs,
      asleepMs,
      gcs: gcList,
      gcMs,
      syncMs,
      longestSync:
        longest === null
          ? '-'
          : `${longest.kind} ${(longest.to - longest.from).toFixed(1)}${longest.bytes > 0 ? ` (${(longest.bytes / 1024).toFixed(0)} KB)` : ''}`,
      inFlight,
      inFlightKinds: flying.map((c) => c.kind),
      loadTickGapMs,
      slowAfter,
    }
  })
}

/**
 * The stalls over `overMs`: a summary line (how many, and their lateness, by cause; how many had a
 * read ahead or an fsync in flight), then one line each; `at` gives a time on the run's clock.
 */
export function describeStalls(
  stalls: readonly ClassifiedStall[],
  overMs: number,
  at: (epochMs: number) => string,
): string[] {
  const over = stalls.filter((s) => s.stall.ms > overMs)
  const byCause = new Map<string, { n: number; ms: number; longest: number }>()
  for (const s of over) {
    const c = byCause.get(s.cause) ?? { n: 0, ms: 0, longest: 0 }
    c.n++
    c.ms += s.stall.ms
    c.longest = Math.max(c.longest, s.stall.ms)
    byCause.set(s.cause, c)
  }
  const withKind = (kind: string) => over.filter((s) => s.inFlightKinds.includes(kind)).length
  const f1 = (x: number) => x.toFixed(1)
  const causes = [...byCause]
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([k, c]) => `${k} ${c.n} (${f1(c.ms)} ms late in all, longest ${f1(c.longest)})`)
    .join(', ')
  const lines = [
    `  loop stalls over ${overMs} ms: ${over.length}${over.length === 0 ? '' : ` by cause: ${causes}`}; with a read ahead in flight ${withKind('read ahead')}, an fsync ${withKind('fsync')}, a Fetch read ${withKind('read')}`,
  ]
  if (over.length > 0)
    lines.push(
      '  stall at s | late ms | cause | main thread ran / waited / asleep of the interval ms | GCs | sync file calls ms (longest) | threadpool calls in flight (ms, from ms) | load tick gap ms | slow batches sent in the next 250 ms',
    )
  for (const s of over)
    lines.push(
      `  ${at(s.stall.at)} | ${f1(s.stall.ms)} | ${s.cause} | ${f1(s.stall.ranMs)} / ${f1(s.stall.waitedMs)} / ${f1(s.asleepMs)} of ${f1(s.intervalMs)} | ${s.gcs.join(', ') || '-'} | ${f1(s.syncMs)} (${s.longestSync}) | ${s.inFlight.join(', ') || '-'} | ${f1(s.loadTickGapMs)} | ${s.slowAfter}`,
    )
  return lines
}
