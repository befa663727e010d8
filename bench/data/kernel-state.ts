// What the kernel holds for the machine while a latency run goes on, for the data-plane benchmarks:
// the page cache's dirty and writeback pages and the thresholds at which the kernel throttles
// writers (/proc/meminfo, /proc/vmstat), what the disks wrote (/proc/diskstats), where the CPUs'
// time went (/proc/stat: iowait, steal), the I/O pressure (/proc/pressure/io) and the free pages
// handed back to the host (free page reporting). Read with a pread of files kept open, through
// node:fs functions taken at load: a benchmark that times node:fs calls by replacing them in place
// (latency-trace.ts) does not count these.
import { openSync, readdirSync, readFileSync, readSync } from 'node:fs'

const pread = readSync
const open = openSync
const list = readdirSync
const slurp = readFileSync
const opened = new Map<string, number | null>()
const buf = Buffer.alloc(64 * 1024)

/** A /proc file's text, or '' where there is none. */
function read(path: string): string {
  let fd = opened.get(path)
  if (fd === undefined) {
    try {
      fd = open(path, 'r')
    } catch {
      fd = null
    }
    opened.set(path, fd)
  }
  if (fd === null) return ''
  const n = pread(fd, buf, 0, buf.length, 0)
  return buf.toString('latin1', 0, n)
}

/** Dirty, Writeback and MemFree in MB. */
export interface PageCache {
  readonly dirty: number
  readonly writeback: number
  readonly free: number
}

/** /proc/meminfo's text as PageCache (NaN for a field it lacks). */
export function parseMeminfo(text: string): PageCache {
  const kb = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)
    return m === null ? Number.NaN : Number(m[1]) / 1024
  }
  return { dirty: kb('Dirty'), writeback: kb('Writeback'), free: kb('MemFree') }
}

/** The page cache now (NaN off Linux). */
export function pageCache(): PageCache {
  return parseMeminfo(read('/proc/meminfo'))
}

/** Cumulative counters of the machine, to be subtracted (see `since`). */
export interface KernelCounters {
  /** /proc/vmstat: pages dirtied and written, and the dirty thresholds (pages, not cumulative). */
  readonly nrDirtied: number
  readonly nrWritten: number
  readonly dirtyThreshold: number
  readonly backgroundThreshold: number
  /** /proc/diskstats, whole disks (vdX, sdX, xvdX, nvmeXnY): sectors written, ms spent writing. */
  readonly sectorsWritten: number
  readonly msWriting: number
  /** /proc/stat's first line: jiffies in all, iowait, steal. */
  readonly jiffies: number
  readonly iowait: number
  readonly steal: number
  /** /proc/pressure/io: µs some task waited on I/O, and all did. */
  readonly ioSome: number
  readonly ioFull: number
}

/** The texts of /proc/vmstat, /proc/diskstats, /proc/stat and /proc/pressure/io as counters. */
export function parseCounters(
  vmstat: string,
  diskstats: string,
  stat: string,
  pressure: string,
): KernelCounters {
  const v = (name: string) => {
    const m = new RegExp(`^${name} (\\d+)`, 'm').exec(vmstat)
    return m === null ? Number.NaN : Number(m[1])
  }
  let sectorsWritten = 0
  let msWriting = 0
  for (const line of diskstats.split('\n')) {
    const f = line.trim().split(/\s+/)
    if (f.length < 11 || !/^(vd[a-z]+|sd[a-z]+|xvd[a-z]+|nvme\d+n\d+)$/.test(f[2])) continue
    sectorsWritten += Number(f[9])
    msWriting += Number(f[10])
  }
  const cpu = (stat.split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number)
  const total = (kind: string) => {
    const m = new RegExp(`^${kind} .*total=(\\d+)`, 'm').exec(pressure)
    return m === null ? Number.NaN : Number(m[1])
  }
  return {
    nrDirtied: v('nr_dirtied'),
    nrWritten: v('nr_written'),
    dirtyThreshold: v('nr_dirty_threshold'),
    backgroundThreshold: v('nr_dirty_background_threshold'),
    sectorsWritten,
    msWriting,
    jiffies: cpu.slice(0, 8).reduce((a, b) => a + b, 0),
    iowait: cpu[4] ?? Number.NaN,
    steal: cpu[7] ?? Number.NaN,
    ioSome: total('some'),
    ioFull: total('full'),
  }
}

export function kernelCounters(): KernelCounters {
  return parseCounters(
    read('/proc/vmstat'),
    read('/proc/diskstats'),
    read('/proc/stat'),
    read('/proc/pressure/io'),
  )
}

const PAGE_MB = 4096 / (1024 * 1024)

/**
 * The dirty page count (MB) from which the kernel throttles the processes that dirty pages: half
 * way between the background threshold, where its flushers start writing, and the limit
 * (balance_dirty_pages' "freerun" ceiling, global).
 */
export function throttledFromMb(c: KernelCounters): number {
  return ((c.backgroundThreshold + c.dirtyThreshold) / 2) * PAGE_MB
}

/** One line on what the machine did between two readings `seconds` apart. */
export function since(a: KernelCounters, b: KernelCounters, seconds: number): string {
  const j = Math.max(1, b.jiffies - a.jiffies)
  return [
    `pages dirtied ${((b.nrDirtied - a.nrDirtied) * PAGE_MB).toFixed(0)} MB, written ${((b.nrWritten - a.nrWritten) * PAGE_MB).toFixed(0)} MB`,
    `disks wrote ${((b.sectorsWritten - a.sectorsWritten) / 2048 / seconds).toFixed(1)} MB/s`,
    `CPU iowait ${((100 * (b.iowait - a.iowait)) / j).toFixed(1)} %, steal ${((100 * (b.steal - a.steal)) / j).toFixed(1)} %`,
    `I/O pressure some ${((b.ioSome - a.ioSome) / 1e3).toFixed(0)} ms, full ${((b.ioFull - a.ioFull) / 1e3).toFixed(0)} ms`,
    `dirty thresholds: background ${(b.backgroundThreshold * PAGE_MB).toFixed(0)} MB, throttling from ${throttledFromMb(b).toFixed(0)} MB, limit ${(b.dirtyThreshold * PAGE_MB).toFixed(0)} MB`,
  ].join('; ')
}

/**
 * The guest's free page reporting (virtio-balloon, /sys/module/page_reporting): free blocks of
 * 2^order pages are handed back to the host, and the next touch of such a page is a fault in the
 * host. `order` above the largest block the buddy allocator keeps (/proc/buddyinfo) reports none.
 */
export interface PageReporting {
  readonly order: number
  /** The largest order of a free block (the last column of /proc/buddyinfo). */
  readonly largestOrder: number
  /** How long a block stays free before it is reported (0: at the next pass), where the kernel says. */
  readonly minFreeMs: number
  /** KiB reported since boot. */
  readonly reportedKib: number
}

const REPORTING = '/sys/module/page_reporting/parameters'

/** The texts of page_reporting's parameters and /proc/buddyinfo as PageReporting (null: none). */
export function parsePageReporting(
  order: string,
  minFreeMs: string,
  reportedKib: string,
  buddyinfo: string,
): PageReporting | null {
  if (order.trim() === '') return null
  const columns = (buddyinfo.split('\n')[0] ?? '').trim().split(/\s+/).length - 4
  return {
    order: Number(order),
    largestOrder: columns > 0 ? columns - 1 : Number.NaN,
    minFreeMs: minFreeMs.trim() === '' ? Number.NaN : Number(minFreeMs),
    reportedKib: reportedKib.trim() === '' ? Number.NaN : Number(reportedKib),
  }
}

/** The machine's free page reporting now (null where the kernel has none). */
export function pageReporting(): PageReporting | null {
  return parsePageReporting(
    read(`${REPORTING}/page_reporting_order`),
    read(`${REPORTING}/min_free_ms`),
    read(`${REPORTING}/reported_kib`),
    read('/proc/buddyinfo'),
  )
}

/** Whether the host takes free pages back: `free page reporting on (…)`, `off (…)` or `: none`. */
export function pageReportingSetting(r: PageReporting | null): string {
  if (r === null) return 'free page reporting: none'
  return r.order > r.largestOrder
    ? `free page reporting off (order ${r.order}, above the largest free block's ${r.largestOrder})`
    : `free page reporting on (blocks of order ${r.order}${Number.isNaN(r.minFreeMs) ? '' : `, free ${r.minFreeMs} ms before`})`
}

/** Whether the host takes free pages back, and how much it took between two readings. */
export function describePageReporting(a: PageReporting | null, b: PageReporting | null): string {
  if (a === null || b === null) return pageReportingSetting(null)
  const taken = Number.isNaN(b.reportedKib - a.reportedKib)
    ? ''
    : `, ${((b.reportedKib - a.reportedKib) / 1024).toFixed(0)} MiB handed to the host`
  return `${pageReportingSetting(b)}${taken}`
}

/**
 * The page cache sampled every `everyMs` until the returned function is called, which tells the
 * first, the largest and the last Dirty and Writeback, and the least free memory, in MB.
 */
export function samplePageCache(everyMs = 100): () => string {
  const first = pageCache()
  const peak = { ...first }
  let last = first
  const take = () => {
    last = pageCache()
    peak.dirty = Math.max(peak.dirty, last.dirty)
    peak.writeback = Math.max(peak.writeback, last.writeback)
    peak.free = Math.min(peak.free, last.free)
  }
  const timer = setInterval(take, everyMs)
  return () => {
    clearInterval(timer)
    take()
    const f = (x: number) => x.toFixed(0)
    return `Dirty ${f(first.dirty)} → max ${f(peak.dirty)} → ${f(last.dirty)} MB, Writeback ${f(first.writeback)} → max ${f(peak.writeback)} → ${f(last.writeback)} MB, free memory at least ${f(peak.free)} MB`
  }
}

/**
 * The fields of a /proc/<pid>/stat (or task) line after the command name, which may itself hold
 * spaces and parentheses: index 0 is the state (the line's 3rd field), so the line's field n is
 * index n - 3.
 */
export function statFields(text: string): string[] {
  return text.slice(text.lastIndexOf(')') + 2).split(' ')
}

/** utime + stime (the line's 14th and 15th fields), in clock ticks (100 a second). */
export function statTicks(fields: readonly string[]): number {
  return Number(fields[11]) + Number(fields[12])
}

/** The kernel threads whose CPU time a run reports, by the start of their names. */
const KERNEL_THREADS = ['kdamond', 'kswapd', 'jbd2', 'kworker', 'ksoftirqd'] as const

/**
 * CPU time (user + system, in clock ticks) of the kernel threads named in KERNEL_THREADS, summed
 * by that name: the page reclaim (kswapd, and kdamond where DAMON pages cold memory out), the
 * journal, the flushers and deferred work. One read of /proc/<pid>/stat each; call it at the
 * start and end of a run, not during one.
 */
export function kernelThreadTicks(): Map<string, number> {
  const out = new Map<string, number>(KERNEL_THREADS.map((k) => [k, 0]))
  let pids: string[] = []
  try {
    pids = list('/proc').filter((p) => /^\d+$/.test(p))
  } catch {
    return out
  }
  for (const pid of pids) {
    let text: string
    try {
      text = slurp(`/proc/${pid}/stat`, 'latin1')
    } catch {
      continue
    }
    const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'))
    const kind = KERNEL_THREADS.find((k) => name.startsWith(k))
    if (kind === undefined) continue
    out.set(kind, (out.get(kind) ?? 0) + statTicks(statFields(text)))
  }
  return out
}

/** What kernelThreadTicks grew by, as milliseconds (100 ticks a second). */
export function kernelThreadsSince(a: Map<string, number>, b: Map<string, number>): string {
  return [...b].map(([k, v]) => `${k} ${((v - (a.get(k) ?? 0)) * 10).toFixed(0)} ms`).join(', ')
}

/**
 * Everything above for one run: call at its start; the function returned, called at its end,
 * tells the page cache as sampled meanwhile, the counters' growth and the kernel threads' CPU.
 */
export function watchKernel(): () => { pages: string; kernel: string; threads: string } {
  const t0 = performance.now()
  const counters = kernelCounters()
  const threads = kernelThreadTicks()
  const stopPages = samplePageCache()
  return () => {
    const pages = stopPages()
    const kernel = since(counters, kernelCounters(), (performance.now() - t0) / 1000)
    return { pages, kernel, threads: kernelThreadsSince(threads, kernelThreadTicks()) }
  }
}
