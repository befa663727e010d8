// The soak's long-lived bookkeeping in fixed-size or typed storage, so that what the load process
// keeps for thirty minutes neither grows its traced heap nor its garbage per minute: a latency
// histogram in place of an array of every sample, and per-producer counts by sequence number in
// place of maps keyed by "p0:123" strings (RELIABILITY.md, "Soak": "The load process's own delay").
// The streams members run on several threads of the load process (tools/soak/load-thread.ts): each
// thread counts its own minute (`ThreadMinute`), and the main thread merges the threads' minutes
// into the row (`mergeThreadMinutes`).
import { appendFileSync, readFileSync } from 'node:fs'
import { monitorEventLoopDelay, PerformanceObserver, constants as perfConstants } from 'node:perf_hooks'
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8'

/** Buckets per doubling: a bucket is 2^(1/64) wide, so a quantile is within 1.1 % of the sample's. */
const PER_DOUBLING = 64
/** Doublings above 1 µs: the last bucket starts at 2^27 µs (134 s) and takes everything longer. */
const DOUBLINGS = 28

/**
 * Latencies in ms, counted in fixed logarithmic buckets from 1 µs. `quantile(q)` picks the sample
 * `quantile()` over the sorted samples would (the one at rank ⌊n·q⌋), to within its bucket, and
 * returns the bucket's geometric middle. Recording allocates nothing.
 */
export class LatencyHistogram {
  readonly #counts = new Uint32Array(PER_DOUBLING * DOUBLINGS)
  #n = 0

  get count(): number {
    return this.#n
  }

  record(ms: number): void {
    const us = ms * 1000
    const i = us <= 1 ? 0 : Math.min(this.#counts.length - 1, Math.floor(Math.log2(us) * PER_DOUBLING))
    this.#counts[i]++
    this.#n++
  }

  quantile(q: number): number {
    if (this.#n === 0) return Number.NaN
    const rank = Math.min(this.#n - 1, Math.floor(this.#n * q))
    let seen = 0
    for (let i = 0; i < this.#counts.length; i++) {
      seen += this.#counts[i]
      if (seen > rank) return 2 ** ((i + 0.5) / PER_DOUBLING) / 1000
    }
    return Number.NaN
  }

  reset(): void {
    this.#counts.fill(0)
    this.#n = 0
  }

  /** A copy of the bucket counts, to send to another thread. */
  counts(): Uint32Array {
    return this.#counts.slice()
  }

  /** Adds another histogram's bucket counts (`counts()`), as if its samples had been recorded here. */
  addCounts(counts: Uint32Array): void {
    if (counts.length !== this.#counts.length)
      throw new RangeError(`histogram of ${counts.length} buckets, expected ${this.#counts.length}`)
    for (let i = 0; i < counts.length; i++) {
      this.#counts[i] += counts[i]
      this.#n += counts[i]
    }
  }
}

/**
 * The slow heartbeats one by one, for setting them beside the server's own records of the same
 * moments (its page faults, its collections, its long turns). With SOAK_SLOW_HEARTBEATS_FILE=FILE,
 * every heartbeat (a member's or a ceiling member's) that took SOAK_SLOW_HEARTBEAT_MS or more
 * (default 0.4) is kept as one JSON line `{"at": wall-clock ms when sent, "ms": latency, "c": 1 for
 * a ceiling member's}`, appended at each `flush` (a load thread's minute) or every 1,000 of them;
 * without it `note` does nothing.
 */
export class SlowHeartbeats {
  readonly #file: string | undefined
  readonly #atLeastMs: number
  #lines: string[] = []

  constructor(
    file = process.env.SOAK_SLOW_HEARTBEATS_FILE,
    atLeastMs = Number(process.env.SOAK_SLOW_HEARTBEAT_MS ?? '0.4'),
  ) {
    this.#file = file === '' ? undefined : file
    this.#atLeastMs = atLeastMs
  }

  /** A heartbeat sent at `sentAt` (performance.now()) that took `ms`. */
  note(sentAt: number, ms: number, ceiling: boolean): void {
    if (this.#file === undefined || !(ms >= this.#atLeastMs)) return
    const at = (performance.timeOrigin + sentAt).toFixed(3)
    this.#lines.push(`{"at":${at},"ms":${ms.toFixed(3)}${ceiling ? ',"c":1' : ''}}`)
    if (this.#lines.length >= 1000) this.flush()
  }

  flush(): void {
    if (this.#file === undefined || this.#lines.length === 0) return
    appendFileSync(this.#file, `${this.#lines.join('\n')}\n`)
    this.#lines = []
  }
}

/**
 * The calling thread's time on a CPU and its time runnable but waiting for one, in ms since the
 * thread started (Linux's /proc/thread-self/schedstat, in ns there); undefined where there is none.
 * The wait is the machine's contention as this thread meets it: other threads of this process or of
 * the server, or anything else, holding both cores when it had work.
 */
export function threadSchedstat(): { cpuMs: number; waitMs: number } | undefined {
  let text: string
  try {
    text = readFileSync('/proc/thread-self/schedstat', 'utf8')
  } catch {
    return undefined
  }
  const [cpu, wait] = text.split(' ')
  const cpuMs = Number(cpu) / 1e6
  const waitMs = Number(wait) / 1e6
  return Number.isFinite(cpuMs) && Number.isFinite(waitMs) ? { cpuMs, waitMs } : undefined
}

let probeSink = 0

/**
 * The time (µs, monotonic clock) this thread takes for a fixed piece of integer work: how fast the
 * machine runs it just now. A guest without steal-time accounting (this machine's /proc/stat shows
 * none) counts the time the host took its virtual CPU away as CPU time of the thread that was
 * running, so a slower machine (the host preempting it, neighbours sharing its caches) reads as more
 * CPU for the same work: the unit of the server's CPU per heartbeat. Taken a few times in a row, the
 * fastest is the machine's speed, the others add the waits for a core.
 */
export function speedProbeUs(iterations = 100_000): number {
  const from = performance.now()
  let x = probeSink | 1
  for (let i = 0; i < iterations; i++) {
    x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d)
    x = Math.imul(x ^ (x >>> 12), 0x297a2d39) ^ i
  }
  probeSink = x
  return 1000 * (performance.now() - from)
}

/** The sample at rank ⌊n·q⌋ of ascending `sorted` (NaN when empty). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]
}

/** {@link SpeedRounds}' figures: the median of each round's fastest run (the machine's speed) and the 90th percentile of every run (µs). */
export interface SpeedProbe {
  readonly fastestUs: number
  readonly p90Us: number
  readonly rounds: number
}

/**
 * Rounds of {@link speedProbeUs}, three runs a round, taken on a timer beside a load: the median of
 * the rounds' fastest runs is the machine's speed over them, the 90th percentile of every run adds
 * the waits for a core.
 */
export class SpeedRounds {
  #fastest: number[] = []
  #every: number[] = []

  round(): void {
    const runs = [speedProbeUs(), speedProbeUs(), speedProbeUs()]
    this.#fastest.push(Math.min(...runs))
    this.#every.push(...runs)
  }

  /** The rounds since the last call (µs; NaN without any), which start again. */
  take(): SpeedProbe {
    const r = {
      fastestUs: quantile(
        this.#fastest.sort((a, b) => a - b),
        0.5,
      ),
      p90Us: quantile(
        this.#every.sort((a, b) => a - b),
        0.9,
      ),
      rounds: this.#fastest.length,
    }
    this.#fastest = []
    this.#every = []
    return r
  }
}

/** Timer period of a thread's event-loop delay histogram. */
export const LOOP_RESOLUTION_MS = 10

/**
 * One thread's own event loop and garbage collection in a minute: its loop delay (99th percentile
 * and longest, net of the histogram's period), its longest GC pause, its scavenges and
 * mark-compacts, and its heap used just after the minute's last mark-compact (NaN without one).
 */
export interface LoopMinute {
  readonly p99Ms: number
  readonly maxMs: number
  readonly gcMaxMs: number
  readonly scavenges: number
  readonly markCompacts: number
  readonly heapAfterMarkCompactMb: number
  /** The young generation's committed size at the minute's end: a smaller one scavenges more often. */
  readonly newSpaceMb: number
  /** The thread's time on a CPU in the minute, and runnable but waiting for one (`threadSchedstat`; NaN without). */
  readonly cpuMs: number
  readonly runWaitMs: number
}

/** Watches the event loop and the GC of the thread it is made on (each thread has its own heap). */
export class LoopMonitor {
  readonly #loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
  readonly #gc: PerformanceObserver
  #gcMaxMs = 0
  #scavenges = 0
  #markCompacts = 0
  #heapAfterMarkCompact = Number.NaN
  #sched = threadSchedstat()

  constructor() {
    this.#loop.enable()
    this.#gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.duration > this.#gcMaxMs) this.#gcMaxMs = e.duration
        const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind
        if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) this.#scavenges++
        else if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) {
          this.#markCompacts++
          // The observer runs soon after the collection: little is allocated in between.
          this.#heapAfterMarkCompact = getHeapStatistics().used_heap_size
        }
      }
    })
    this.#gc.observe({ entryTypes: ['gc'] })
  }

  /** The minute since the last call, and starts the next. */
  take(): LoopMinute {
    const sched = threadSchedstat()
    const before = this.#sched
    this.#sched = sched
    const minute: LoopMinute = {
      // The histogram records the time between two firings of its timer: the delay is past that.
      p99Ms: Math.max(0, this.#loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
      maxMs: Math.max(0, this.#loop.max / 1e6 - LOOP_RESOLUTION_MS),
      gcMaxMs: this.#gcMaxMs,
      scavenges: this.#scavenges,
      markCompacts: this.#markCompacts,
      heapAfterMarkCompactMb: this.#heapAfterMarkCompact / 1048576,
      newSpaceMb:
        (getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.space_size ?? Number.NaN) /
        1048576,
      cpuMs: sched === undefined || before === undefined ? Number.NaN : sched.cpuMs - before.cpuMs,
      runWaitMs: sched === undefined || before === undefined ? Number.NaN : sched.waitMs - before.waitMs,
    }
    this.#loop.reset()
    this.#gcMaxMs = 0
    this.#scavenges = 0
    this.#markCompacts = 0
    this.#heapAfterMarkCompact = Number.NaN
    return minute
  }

  stop(): void {
    this.#loop.disable()
    this.#gc.disconnect()
  }
}

/**
 * What a thread's streams members count in a minute, adding up across threads: heartbeats
 * answered; fences of members that kept heartbeating, of members fenced across the restart before
 * their first answer after it, and after the load itself sent nothing for longer than the session;
 * old-version members refused on rejoining an upgraded group (STREAMS_TOPOLOGY_FENCED); retriable
 * and other errors; joins, leaves and pushes; answers whose heartbeat interval differed from the
 * one the member held (the server moving it toward its heartbeat phase; a member's first answer
 * not counted).
 */
export const THREAD_COUNTS = [
  'heartbeats',
  'fenced',
  'fencedInFlight',
  'fencedAfterGap',
  'topologyFenced',
  'retriable',
  'otherErrors',
  'joins',
  'leaves',
  'pushesOk',
  'pushesFailed',
  'intervalsMoved',
  /** Heartbeats a member's timer sent at the end of an interval its last answer left unchanged. */
  'steadySends',
  /** Of those, the ones whose timer fired before the member's due time. */
  'earlyTimers',
  /** Over those, the send times' moves against the interval (µs, added): the load's phase creep. */
  'phaseCreepUs',
  /** Heartbeats of the ceiling members answered by the ceiling (tools/soak/ceiling.ts), and failed. */
  'ceilingHeartbeats',
  'ceilingFailures',
  /**
   * The thread's heartbeat sends (members' and ceiling members') by how many of them went out in
   * their millisecond: alone, with one other, with two others, with three or more (`SendBursts`).
   */
  'sendsMs1',
  'sendsMs2',
  'sendsMs3',
  'sendsMs4Plus',
] as const

export type ThreadCounts = Record<(typeof THREAD_COUNTS)[number], number>

/** What one thread's streams members counted in a minute, as it is posted to the main thread. */
export interface ThreadMinute extends ThreadCounts {
  /** Bucket counts of the latency stamped at the socket, and at the handler (`LatencyHistogram.counts`). */
  latency: Uint32Array
  handled: Uint32Array
  /** Bucket counts of the ceiling members' latency, stamped at the socket as the members' is. */
  ceiling: Uint32Array
  /**
   * The members' latency (stamped at the socket) split by the heartbeat's place in its millisecond
   * of the thread's sends (`SendBursts.note`): the first, or after others of the same millisecond.
   */
  firstInMs: Uint32Array
  laterInMs: Uint32Array
  /**
   * The members' latency (stamped at the socket) of the heartbeats that changed state: a join, a
   * leave, a report of tasks, an answer with an assignment or asking for a description, an error.
   * The others, a steady member's plain heartbeats, write nothing on the server.
   */
  changed: Uint32Array
  /** Heartbeats sent, by 100-ms bucket of the wall clock (ms since the epoch ÷ 100), common to every thread. */
  sendBuckets: [number, number][]
  loop: LoopMinute
}

/** The minute of every thread as one: counts added, histograms merged, sends added bucket by bucket. */
export interface MergedMinute extends ThreadCounts {
  readonly latency: LatencyHistogram
  readonly handled: LatencyHistogram
  readonly ceiling: LatencyHistogram
  readonly firstInMs: LatencyHistogram
  readonly laterInMs: LatencyHistogram
  readonly changed: LatencyHistogram
  readonly sendBuckets: Map<number, number>
  /** The members' threads' loops: the worst thread's p99, longest delay and GC pause; scavenges,
   * mark-compacts, heap after the last mark-compact, CPU and waits for a core added up (the threads'
   * heaps are apart). */
  readonly loop: LoopMinute
}

export function mergeThreadMinutes(parts: readonly ThreadMinute[]): MergedMinute {
  const latency = new LatencyHistogram()
  const handled = new LatencyHistogram()
  const ceiling = new LatencyHistogram()
  const firstInMs = new LatencyHistogram()
  const laterInMs = new LatencyHistogram()
  const changed = new LatencyHistogram()
  const sendBuckets = new Map<number, number>()
  const counts = Object.fromEntries(THREAD_COUNTS.map((k) => [k, 0])) as ThreadCounts
  for (const part of parts) {
    for (const k of THREAD_COUNTS) counts[k] += part[k]
    latency.addCounts(part.latency)
    handled.addCounts(part.handled)
    ceiling.addCounts(part.ceiling)
    firstInMs.addCounts(part.firstInMs)
    laterInMs.addCounts(part.laterInMs)
    changed.addCounts(part.changed)
    for (const [bucket, n] of part.sendBuckets) sendBuckets.set(bucket, (sendBuckets.get(bucket) ?? 0) + n)
  }
  const loops = parts.map((x) => x.loop)
  const max = (pick: (l: LoopMinute) => number) =>
    loops.length === 0 ? Number.NaN : Math.max(...loops.map(pick))
  const heaps = loops.map((l) => l.heapAfterMarkCompactMb).filter((x) => Number.isFinite(x))
  return {
    ...counts,
    latency,
    handled,
    ceiling,
    firstInMs,
    laterInMs,
    changed,
    sendBuckets,
    loop: {
      p99Ms: max((l) => l.p99Ms),
      maxMs: max((l) => l.maxMs),
      gcMaxMs: max((l) => l.gcMaxMs),
      scavenges: loops.reduce((a, l) => a + l.scavenges, 0),
      markCompacts: loops.reduce((a, l) => a + l.markCompacts, 0),
      heapAfterMarkCompactMb: heaps.length === 0 ? Number.NaN : heaps.reduce((a, b) => a + b, 0),
      newSpaceMb: max((l) => l.newSpaceMb),
      cpuMs: loops.reduce((a, l) => a + l.cpuMs, 0),
      runWaitMs: loops.reduce((a, l) => a + l.runWaitMs, 0),
    },
  }
}

/**
 * How bunched a minute's sends are: the most sent in one 100-ms bucket, and the share of the
 * minute's sends in its busiest tenth of buckets (0.1 for an even load). Buckets in which nothing
 * was sent count too: the minute has minuteMs / 100 of them.
 */
export function bunching(
  sendBuckets: ReadonlyMap<number, number>,
  minuteMs: number,
): { max100ms: number; topTenthShare: number } {
  const buckets = [...sendBuckets.values()].sort((a, b) => b - a)
  if (buckets.length === 0) return { max100ms: Number.NaN, topTenthShare: Number.NaN }
  const tenth = Math.max(1, Math.round(minuteMs / 1000))
  const sent = buckets.reduce((a, b) => a + b, 0)
  return { max100ms: buckets[0], topTenthShare: buckets.slice(0, tenth).reduce((a, b) => a + b, 0) / sent }
}

/**
 * How the streams members are split over the load's threads, as separate application instances:
 * group g runs on thread g mod threads (a group's members on one thread, so its rolling upgrades
 * are that thread's), and the connections are shared out, at least one a thread.
 */
export function splitLoad(
  groups: number,
  connections: number,
  threads: number,
): { groups: number[]; connections: number }[] {
  if (threads < 1 || threads > groups) throw new RangeError(`${threads} threads for ${groups} groups`)
  return Array.from({ length: threads }, (_, t) => ({
    groups: Array.from({ length: Math.ceil((groups - t) / threads) }, (_, i) => t + i * threads),
    connections: Math.max(1, Math.floor(connections / threads) + (t < connections % threads ? 1 : 0)),
  }))
}

/**
 * How many times each record of each producer was seen (acked, consumed, found in the log),
 * by producer index and sequence number: one growable Uint16Array a producer (saturating at
 * 65,535), so half an hour of records is a few hundred KB that the garbage collector never traces.
 */
export class SeqCounts {
  readonly #byProducer: Uint16Array[] = []
  /** Records seen at least once. */
  size = 0

  add(producer: number, seq: number): void {
    let a = this.#byProducer[producer]
    if (a === undefined) {
      a = new Uint16Array(1024)
      this.#byProducer[producer] = a
    }
    if (seq >= a.length) {
      let length = a.length
      while (seq >= length) length *= 2
      const grown = new Uint16Array(length)
      grown.set(a)
      a = grown
      this.#byProducer[producer] = a
    }
    if (a[seq] === 0) this.size++
    if (a[seq] < 0xffff) a[seq]++
  }

  /** Adds a record by the soak's key and value (`p<producer>` and the sequence number); false if they are not the soak's. */
  addRecord(key: string | null, value: string | null): boolean {
    if (key === null || value === null || key[0] !== 'p') return false
    const producer = Number(key.slice(1))
    const seq = Number(value)
    if (!Number.isInteger(producer) || producer < 0 || !Number.isInteger(seq) || seq < 0) return false
    this.add(producer, seq)
    return true
  }

  get(producer: number, seq: number): number {
    const a = this.#byProducer[producer]
    return a === undefined || seq >= a.length ? 0 : a[seq]
  }

  /** The records seen here that `other` has not seen. */
  missingFrom(other: SeqCounts): number {
    let missing = 0
    this.#byProducer.forEach((a, producer) => {
      for (let seq = 0; seq < a.length; seq++) if (a[seq] > 0 && other.get(producer, seq) === 0) missing++
    })
    return missing
  }

  /** Copies beyond the first, over every record. */
  extra(): number {
    let extra = 0
    for (const a of this.#byProducer) {
      if (a === undefined) continue
      for (let seq = 0; seq < a.length; seq++) if (a[seq] > 1) extra += a[seq] - 1
    }
    return extra
  }
}
