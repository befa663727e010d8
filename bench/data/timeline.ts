// The first seconds of a latency run in short buckets, from the start of the load's schedule: what the load
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
