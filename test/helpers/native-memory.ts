// This process's memory outside V8's heap: the anonymous memory Linux counts for it
// (/proc/self/smaps_rollup) less the heap V8 has committed. Native allocations (SQLite's page caches,
// glibc's arenas of every thread) are in it; a collection that shrinks V8's heap does not move it.
import { readFileSync } from 'node:fs'

/**
 * Growth of native memory a bounded SQLite page cache may show after a warm-up: the bound's 2 MB and
 * room for the allocator's own (an unbounded cache grew 14–16 MB in the tests that use this).
 */
export const PAGE_CACHE_GROWTH_LIMIT_KIB = 6 * 1024

export function nativeAnonymousKiB(): number {
  const rollup = readFileSync('/proc/self/smaps_rollup', 'utf8')
  const m = /^Anonymous:\s+(\d+) kB/m.exec(rollup)
  if (m === null) throw new Error('no Anonymous line in /proc/self/smaps_rollup')
  return Number(m[1]) - Math.round(process.memoryUsage().heapTotal / 1024)
}
