// The load generator of the server benchmarks, run as a child process (see load.ts): it opens
// `connections` loopback connections, sends the given request frames round-robin (one shared cursor,
// so with many frames every frame is sent about equally often) and reads the size-prefixed
// responses, which come back in request order per connection.
//
// Two modes, both bounded in time (`seconds`, after `warmupSeconds` that are not counted) and in
// count (`maxRequests`):
// - closed loop (`rate` unset): `depth` requests in flight on each connection, a new one sent as
//   each answer arrives; measures the most the server answers.
// - open loop (`rate` set): requests sent on a fixed schedule of `rate` per second in total,
//   whatever the answers do (at most `maxInFlight` per connection); measures latency at a load.
// Latency is from the write of a request to the read of the chunk that completes its response:
// each request is stamped just before the write that carries it, each answer when the chunk holding
// its end was read, before anything in that chunk is parsed.
//
// The open loop writes the requests one tick sends to one connection in one system call (`writes:
// 'tick'`, corked), all stamped just before it. Written one by one (`writes: 'each'`, as before),
// each request was its own system call and its own TCP segment: about twice the generator's CPU a
// request, answers left unread in its sockets meanwhile, and a segment each counted against the
// connection's congestion window (BBR's, a few dozen segments on loopback), so that after a late
// tick the rest waited in the kernel for acknowledgements (BENCHMARKS.md, "OffsetCommit: the
// ceiling's floor"). The server sees the same requests at the same times; a Kafka client's requests
// to one broker share a connection and leave as the client writes them, several to a write.
//
// Earlier still, the open loop stamped every request of a tick with the tick's start, so a request
// written after others of its tick (a burst after held-back sends: a hundred or more) was charged
// the generator's time spent writing those before it. When tracing (`slowMs`), that measure is
// reported beside (`p99Tick`), and so is the latency from each request's place in the schedule
// (`p99Scheduled`, which also charges a late tick); not otherwise, because keeping them costs the
// generator enough to move the tail it measures (BENCHMARKS.md, "OffsetCommit: the half-load tail's
// slowest 1 %"). What no stamp on this side can remove is an answer that waits in the socket while
// this process is busy or off a CPU (`generatorThread` says how long its thread waited for one).
//
// The bookkeeping per request is a clock read at its write and two stores into typed arrays: a ring
// of send stamps per connection (load-samples.ts) and one list of latencies sized for the run up
// front. No array is spliced, none grows unless the run outlasts its estimate, and no object is made
// per request, so the generator's own collections and copies stay out of the tail it measures.
import { connect, type Socket } from 'node:net'
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { collectFully } from './gc-events.js'
import { KeptArrays, type Stamps } from './load-samples.js'
import { mainThreadStat } from './thread-stat.js'
import { type SpeedProbe, SpeedRounds, speedProbeUs } from '../../tools/soak/measures.js'

export interface LoadSpec {
  readonly port: number
  readonly frames: readonly Uint8Array[]
  readonly seconds: number
  readonly warmupSeconds: number
  readonly connections: number
  readonly depth: number
  readonly rate?: number
  readonly maxInFlight?: number
  readonly maxRequests?: number
  /** Byte offset in each response frame (after the size prefix) of an int16 error code to check. */
  readonly errorCodeAt?: number
  /** A full collection of the load process before the load starts (requests.ts's half loads). */
  readonly collectFirst?: boolean
  /** Report every measured request slower than this (ms), with its send time (for traces). */
  readonly slowMs?: number
  /** With `slowMs`: the generator's tick lateness (ms) reported as sends held back (default 4). */
  readonly pauseMs?: number
  /**
   * Open loop: `tick` (the default) writes the requests a tick sends to one connection in one
   * system call, each stamped just before it; `each` makes a write of every request.
   */
  readonly writes?: 'tick' | 'each'
  /**
   * The machine's speed beside the load: three runs of the soak's fixed integer work
   * (`speedProbeUs`, about 0.3 ms each) every 250 ms of the run, warm-up included, on this process's
   * main thread. For closed loops: an open loop's tail would feel the probe's pauses.
   */
  readonly speedProbe?: boolean
}

export interface LoadResult {
  /** Answers received in the measured window. */
  readonly requests: number
  /** Answers received in the whole run, warm-up and stragglers included. */
  readonly answered: number
  readonly seconds: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly errors: number
  readonly firstErrorCode: number
  /** With `slowMs`: the slower requests, send time as ms since the epoch, and latency. */
  readonly slow?: readonly { readonly at: number; readonly ms: number }[]
  /**
   * With `slowMs`: the generator's own pauses, ms since the epoch and length: open-loop sends held
   * back (its 1 ms tick came more than `pauseMs` late, so the requests due meanwhile leave at once,
   * as a burst, each timed from its write) and its own garbage collections of 1 ms or more (any mode).
   * A slow request that follows one of these may be the generator's, not the server's.
   */
  readonly pauses?: readonly { readonly at: number; readonly ms: number; readonly what: string }[]
  /** The generator's own CPU time (µs, every thread of its process) from its first send to its end. */
  readonly generatorCpuUs?: number
  /** p99.9 of the measured latencies (ms). */
  readonly p999?: number
  /** Open loop with `slowMs`: p99 (ms), every request of a tick stamped at the tick's start (the old measure). */
  readonly p99Tick?: number
  /** Open loop with `slowMs`: p99 (ms) from the time the schedule set for each request (a late tick counts). */
  readonly p99Scheduled?: number
  /**
   * The generator's main thread over the run (its schedstat, ms; Linux only): on a CPU, and
   * runnable but waiting for one. Time it waited is time its answers sat unread in its sockets.
   */
  readonly generatorThread?: { readonly onCpuMs: number; readonly waitingMs: number }
  /** The socket writes that carried the requests (one per request, or per connection and tick). */
  readonly writes: number
  /**
   * The socket reads that brought the answers: answers ÷ reads is about how many the server answered
   * with one write, which a closed loop's server CPU a request depends on (its cost per turn shared).
   */
  readonly reads: number
  /** Open loop: the longest time between two of the generator's 1 ms ticks (ms). */
  readonly longestTickMs?: number
  /** The generator's own collections over the run: of 1 ms or more, the longest, and full ones. */
  readonly generatorGc: { readonly over1ms: number; readonly longestMs: number; readonly major: number }
  readonly speedProbe?: SpeedProbe
}

const EMPTY = Buffer.alloc(0)
/** This process's loads run one at a time: each takes the arrays the one before it used. */
const kept = new KeptArrays()

export async function load(spec: LoadSpec): Promise<LoadResult> {
  if (spec.collectFirst === true) collectFully()
  const frames = spec.frames.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength))
  const maxRequests = spec.maxRequests ?? Number.MAX_SAFE_INTEGER
  const maxInFlight = spec.maxInFlight ?? 10_000
  const open = spec.rate !== undefined
  // Sized for the measured requests up front, so that nothing grows while the load runs: an open
  // loop sends `rate` a second; a closed loop's count is not known, and starts at 2^19 (4 MiB).
  const expected = Math.min(
    maxRequests,
    open ? Math.ceil((spec.rate as number) * spec.seconds * 1.05) + 1024 : 1 << 19,
  )
  /** The other stamps, kept only when tracing (`slowMs`): they cost the generator. */
  const stamps = open && spec.slowMs !== undefined
  const latencies = kept.samples(0, expected)
  const latenciesTick = kept.samples(1, stamps ? expected : 0)
  const latenciesScheduled = kept.samples(2, stamps ? expected : 0)
  const slow: { at: number; ms: number }[] = []
  const pauses: { at: number; ms: number; what: string }[] = []
  const gcs = { over1ms: 0, longestMs: 0, major: 0 }
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
      if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) gcs.major++
      if (e.duration > gcs.longestMs) gcs.longestMs = e.duration
      if (e.duration < 1) continue
      gcs.over1ms++
      if (spec.slowMs !== undefined)
        pauses.push({
          at: performance.timeOrigin + e.startTime,
          ms: e.duration,
          what: `GC kind ${e.detail?.kind ?? '?'}`,
        })
    }
  })
  gc.observe({ entryTypes: ['gc'] })
  let writes = 0
  let reads = 0
  let longestTickMs = 0
  let cursor = 0
  let sentTotal = 0
  let counted = 0
  let answeredTotal = 0
  let errors = 0
  let firstErrorCode = 0
  const probe = spec.speedProbe === true ? startSpeedProbe() : undefined
  const cpu0 = process.cpuUsage()
  const thread0 = mainThreadStat()
  const t0 = performance.now()
  const measureFrom = t0 + spec.warmupSeconds * 1000
  const end = measureFrom + spec.seconds * 1000
  let measureEnd = end

  interface Conn {
    readonly socket: Socket
    /** Per request in flight, in order: stamped at its write. */
    readonly sent: Stamps
    /** Open loop, tracing: … at the start of the tick that sent it (in step with `sent`). */
    readonly tick: Stamps | null
    /** Open loop, tracing: … at its time in the schedule (in step with `sent`). */
    readonly scheduled: Stamps | null
  }
  const conns: Conn[] = []
  // A connection never has more in flight than this: the open loop skips a send beyond
  // `maxInFlight`, the closed loop sends one as each answer arrives.
  const ringSize = open ? Math.min(maxInFlight, 1 << 16) : spec.depth
  const send = (c: Conn, now: number, scheduledAt: number) => {
    if (c.tick !== null && c.scheduled !== null) {
      c.tick.push(now)
      c.scheduled.push(scheduledAt)
    }
    c.sent.push(performance.now())
    sentTotal++
    writes++
    c.socket.write(frames[cursor])
    cursor = cursor + 1 === frames.length ? 0 : cursor + 1
  }
  const batched = open && spec.writes !== 'each'
  /** Open loop, `writes: 'tick'`: how many requests this tick sends to each connection. */
  const due = new Int32Array(spec.connections)
  /** Writes the `n` requests this tick sends to `c` in one system call, all stamped just before it. */
  const writeDue = (c: Conn, n: number) => {
    const at = performance.now()
    c.socket.cork()
    for (let k = 0; k < n; k++) {
      c.sent.push(at)
      c.socket.write(frames[cursor])
      cursor = cursor + 1 === frames.length ? 0 : cursor + 1
    }
    sentTotal += n
    writes++
    c.socket.uncork()
  }

  let finish: () => void = () => undefined
  const done = new Promise<void>((resolve) => {
    finish = resolve
  })
  let closed = 0
  const closeIfDrained = (c: Conn) => {
    if (c.sent.inFlight === 0 && (performance.now() >= end || sentTotal >= maxRequests)) {
      if (!c.socket.destroyed) {
        c.socket.destroy()
        if (++closed === conns.length) finish()
      }
    }
  }

  await Promise.all(
    Array.from(
      { length: spec.connections },
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = connect({ host: '127.0.0.1', port: spec.port })
          socket.setNoDelay(true)
          const i = conns.length
          const c: Conn = {
            socket,
            sent: kept.stamps(3 * i, ringSize),
            tick: stamps ? kept.stamps(3 * i + 1, ringSize) : null,
            scheduled: stamps ? kept.stamps(3 * i + 2, ringSize) : null,
          }
          conns.push(c)
          let buf: Buffer = EMPTY
          socket.once('connect', () => resolve())
          socket.on('error', reject)
          socket.on('data', (chunk: Buffer) => {
            reads++
            buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
            let off = 0
            let answered = 0
            const now = performance.now()
            while (buf.length - off >= 4) {
              const size = buf.readInt32BE(off)
              if (buf.length - off < 4 + size) break
              if (spec.errorCodeAt !== undefined) {
                const code = buf.readInt16BE(off + 4 + spec.errorCodeAt)
                if (code !== 0) {
                  if (errors === 0) firstErrorCode = code
                  errors++
                }
              }
              off += 4 + size
              const sentAt = c.sent.peek()
              if (sentAt >= measureFrom && now <= measureEnd) {
                latencies.push(now - sentAt)
                if (c.tick !== null && c.scheduled !== null) {
                  latenciesTick.push(now - c.tick.peek())
                  latenciesScheduled.push(now - c.scheduled.peek())
                }
                counted++
                if (spec.slowMs !== undefined && now - sentAt > spec.slowMs)
                  slow.push({ at: performance.timeOrigin + sentAt, ms: now - sentAt })
              }
              c.sent.shift()
              c.tick?.shift()
              c.scheduled?.shift()
              answered++
              answeredTotal++
            }
            buf = off === buf.length ? EMPTY : buf.subarray(off)
            if (!open) {
              for (let i = 0; i < answered && now < end && sentTotal < maxRequests; i++) send(c, now, now)
            }
            closeIfDrained(c)
          })
        }),
    ),
  )

  if (open) {
    const rate = spec.rate as number
    let scheduled = 0
    let next = 0
    const start = performance.now()
    let lastTick = start
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now()
        if (now - lastTick > longestTickMs) longestTickMs = now - lastTick
        if (spec.slowMs !== undefined && now - lastTick > (spec.pauseMs ?? 4))
          pauses.push({ at: performance.timeOrigin + lastTick, ms: now - lastTick, what: 'sends held back' })
        lastTick = now
        if (now >= end || sentTotal >= maxRequests) {
          for (const c of conns) closeIfDrained(c)
          resolve()
          return
        }
        const dueNow = Math.floor(((now - start) / 1000) * rate)
        let sending = 0
        while (scheduled < dueNow && sentTotal + sending < maxRequests) {
          const i = next
          const c = conns[i]
          next = next + 1 === conns.length ? 0 : next + 1
          // The time the schedule set for this request: it falls due once `dueNow` passes its index.
          const scheduledAt = start + ((scheduled + 1) * 1000) / rate
          scheduled++
          if (c.sent.inFlight + due[i] >= maxInFlight) continue
          if (!batched) {
            send(c, now, scheduledAt)
            continue
          }
          due[i]++
          sending++
          if (c.tick !== null && c.scheduled !== null) {
            c.tick.push(now)
            c.scheduled.push(scheduledAt)
          }
        }
        if (batched)
          for (let i = 0; i < conns.length; i++)
            if (due[i] > 0) {
              writeDue(conns[i], due[i])
              due[i] = 0
            }
        // A 1 ms timer rather than a spin, so the generator leaves the other core to the server.
        setTimeout(tick, 1)
      }
      tick()
    })
  } else {
    const now = performance.now()
    for (const c of conns) for (let i = 0; i < spec.depth; i++) send(c, now, now)
  }
  // Stop waiting for stragglers after a grace period; they are not counted anyway.
  const grace = setTimeout(() => {
    measureEnd = 0
    for (const c of conns) c.socket.destroy()
    finish()
  }, 10_000)
  await done
  clearTimeout(grace)
  gc.disconnect()
  const speed = probe?.stop()

  const cpu = process.cpuUsage(cpu0)
  const thread1 = thread0 === null ? null : mainThreadStat()
  const seconds = (Math.min(performance.now(), end) - measureFrom) / 1000
  const sorted = latencies.sorted()
  const quantile = (xs: Float64Array, p: number) =>
    xs.length === 0 ? Number.NaN : xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]
  const q = (p: number) => quantile(sorted, p)
  return {
    requests: counted,
    answered: answeredTotal,
    seconds,
    p50: q(0.5),
    p99: q(0.99),
    p999: q(0.999),
    ...(stamps
      ? {
          p99Tick: quantile(latenciesTick.sorted(), 0.99),
          p99Scheduled: quantile(latenciesScheduled.sorted(), 0.99),
        }
      : {}),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1],
    errors,
    firstErrorCode,
    generatorCpuUs: cpu.user + cpu.system,
    writes,
    reads,
    ...(open ? { longestTickMs } : {}),
    generatorGc: gcs,
    ...(speed !== undefined ? { speedProbe: speed } : {}),
    ...(spec.slowMs !== undefined ? { slow, pauses } : {}),
    ...(thread0 !== null && thread1 !== null
      ? {
          generatorThread: {
            onCpuMs: (thread1.onCpu - thread0.onCpu) / 1e6,
            waitingMs: (thread1.waiting - thread0.waiting) / 1e6,
          },
        }
      : {}),
  }
}

/** Runs the speed probe's rounds every 250 ms until stopped (its code optimized first, outside the rounds). */
function startSpeedProbe(): { stop(): SpeedProbe } {
  for (let i = 0; i < 20; i++) speedProbeUs(10_000)
  const rounds = new SpeedRounds()
  const timer = setInterval(() => rounds.round(), 250)
  return {
    stop() {
      clearInterval(timer)
      return rounds.take()
    },
  }
}

// Run as the load process (load.ts forks this file): one load a message, as long as the parent
// keeps the channel open (load.ts keeps this process between loads, so that the server's process
// does not fork again); its closing ends this one. Imported (by tests), it only exports `load`.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.on('message', (spec: LoadSpec) => {
    load(spec).then(
      (r) => process.send?.(r),
      (e: unknown) => {
        console.error(e)
        process.exit(1)
      },
    )
  })
  process.once('disconnect', () => process.exit(0))
}
