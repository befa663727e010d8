// Garbage collections as trace events, for the benchmarks that trace what the server does while a
// load runs (bench/data/latency-trace.ts, bench/server/commit-trace.ts).
import { constants, type PerformanceEntry, PerformanceObserver, performance } from 'node:perf_hooks'
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'

/** One thing the server did, on the wall clock: when it started, how long it took, what it was. */
export interface TraceEvent {
  readonly at: number
  readonly ms: number
  readonly what: string
  /** A collection's flags (Node's NODE_PERFORMANCE_GC_FLAGS_*), named: `forced`, `all external memory`, … */
  readonly flags?: string
}

/** The `kind` of a gc performance entry (Node's NODE_PERFORMANCE_GC_* constants). */
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-sweep-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
}

/** The flags of a gc performance entry (Node's NODE_PERFORMANCE_GC_FLAGS_*), by bit. */
const GC_FLAGS: [number, string][] = [
  [constants.NODE_PERFORMANCE_GC_FLAGS_CONSTRUCT_RETAINED, 'construct retained'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_FORCED, 'forced'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_SYNCHRONOUS_PHANTOM_PROCESSING, 'synchronous phantom processing'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_ALL_AVAILABLE_GARBAGE, 'all available garbage'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY, 'all external memory'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_SCHEDULE_IDLE, 'schedule idle'],
]

/** A gc entry's flags by name, `+`-joined (`forced+all external memory`), or undefined when none is set. */
export function gcFlags(flags: number): string | undefined {
  const names = GC_FLAGS.filter(([bit]) => (flags & bit) !== 0).map(([, name]) => name)
  return names.length === 0 ? undefined : names.join('+')
}

/** Pushes every collection into `events` until the returned observer is disconnected. */
export function observeGc(events: TraceEvent[]): PerformanceObserver {
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as PerformanceEntry & { detail?: { kind?: number; flags?: number } }).detail
      const kind = (detail?.kind ?? 0) as number
      const flags = gcFlags(detail?.flags ?? 0)
      events.push({
        at: performance.timeOrigin + e.startTime,
        ms: e.duration,
        what: `GC ${GC_KINDS[kind] ?? kind}`,
        ...(flags === undefined ? {} : { flags }),
      })
    }
  })
  gc.observe({ entryTypes: ['gc'] })
  return gc
}

/** Collections by kind, e.g. `35 scavenge (150.6 ms, longest 9.1)`, or `none`. */
export function describeGcs(events: readonly TraceEvent[]): string {
  const byKind = new Map<string, { n: number; ms: number; longest: number }>()
  for (const e of events) {
    if (!e.what.startsWith('GC ')) continue
    const k = byKind.get(e.what) ?? { n: 0, ms: 0, longest: 0 }
    k.n++
    k.ms += e.ms
    k.longest = Math.max(k.longest, e.ms)
    byKind.set(e.what, k)
  }
  const parts = [...byKind].map(
    ([k, v]) => `${v.n} ${k.slice(3)} (${v.ms.toFixed(1)} ms, longest ${v.longest.toFixed(1)})`,
  )
  return parts.join(', ') || 'none'
}

/**
 * With BENCH_TRACE_GC=1, V8's --trace-gc and --trace-incremental-marking lines go to stdout while
 * `work` runs (one line per collection and per start of incremental marking, with V8's reason),
 * after a line "latency run <run> begins" that bench/server/gc-reasons.ts splits them by. Without
 * it, just runs `work`.
 */
export async function traceGcDuring<T>(run: number, work: () => Promise<T>): Promise<T> {
  if (process.env.BENCH_TRACE_GC !== '1') return work()
  console.log(`latency run ${run} begins`)
  v8.setFlagsFromString('--trace-gc')
  v8.setFlagsFromString('--trace-incremental-marking')
  try {
    return await work()
  } finally {
    v8.setFlagsFromString('--no-trace-gc')
    v8.setFlagsFromString('--no-trace-incremental-marking')
  }
}

let gc: (() => void) | undefined
/**
 * A full collection now (V8's `gc`, exposed on first use), outside a measured run: what earlier
 * loads of the process left in the old generation is gone before the next one starts.
 */
export function collectFully(): void {
  if (gc === undefined) {
    v8.setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as () => void
  }
  gc()
}
