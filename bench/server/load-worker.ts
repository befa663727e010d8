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
// Latency is from the write of a request to the read of its complete response.
import { connect, type Socket } from 'node:net'
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks'

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
  /** Report every measured request slower than this (ms), with its send time (for traces). */
  readonly slowMs?: number
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
   * back (its 1 ms tick came more than 4 ms late, so the requests due meanwhile leave at once, as a
   * burst, and are timed from then) and its own garbage collections of 1 ms or more (any mode).
   * A slow request that follows one of these may be the generator's, not the server's.
   */
  readonly pauses?: readonly { readonly at: number; readonly ms: number; readonly what: string }[]
  /** The generator's own CPU time (µs, every thread of its process) from its first send to its end. */
  readonly generatorCpuUs?: number
  /** p99.9 of the measured latencies (ms). */
  readonly p999?: number
}

async function load(spec: LoadSpec): Promise<LoadResult> {
  const frames = spec.frames.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength))
  const maxRequests = spec.maxRequests ?? Number.MAX_SAFE_INTEGER
  const maxInFlight = spec.maxInFlight ?? 10_000
  const latencies: number[] = []
  const slow: { at: number; ms: number }[] = []
  const pauses: { at: number; ms: number; what: string }[] = []
  const gc =
    spec.slowMs === undefined
      ? undefined
      : new PerformanceObserver((list) => {
          for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[])
            if (e.duration >= 1)
              pauses.push({
                at: performance.timeOrigin + e.startTime,
                ms: e.duration,
                what: `GC kind ${e.detail?.kind ?? '?'}`,
              })
        })
  gc?.observe({ entryTypes: ['gc'] })
  let cursor = 0
  let sentTotal = 0
  let counted = 0
  let answeredTotal = 0
  let errors = 0
  let firstErrorCode = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const measureFrom = t0 + spec.warmupSeconds * 1000
  const end = measureFrom + spec.seconds * 1000
  let measureEnd = end

  interface Conn {
    readonly socket: Socket
    readonly sent: number[]
    head: number
  }
  const conns: Conn[] = []
  const inFlight = (c: Conn) => c.sent.length - c.head
  const send = (c: Conn, now: number) => {
    c.sent.push(now)
    sentTotal++
    c.socket.write(frames[cursor])
    cursor = cursor + 1 === frames.length ? 0 : cursor + 1
  }
  const open = spec.rate !== undefined

  let finish: () => void = () => undefined
  const done = new Promise<void>((resolve) => {
    finish = resolve
  })
  let closed = 0
  const closeIfDrained = (c: Conn) => {
    if (inFlight(c) === 0 && (performance.now() >= end || sentTotal >= maxRequests)) {
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
          const c: Conn = { socket, sent: [], head: 0 }
          conns.push(c)
          let buf: Buffer = Buffer.alloc(0)
          socket.once('connect', () => resolve())
          socket.on('error', reject)
          socket.on('data', (chunk: Buffer) => {
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
              const sentAt = c.sent[c.head++]
              if (sentAt >= measureFrom && now <= measureEnd) {
                latencies.push(now - sentAt)
                counted++
                if (spec.slowMs !== undefined && now - sentAt > spec.slowMs)
                  slow.push({ at: performance.timeOrigin + sentAt, ms: now - sentAt })
              }
              answered++
              answeredTotal++
            }
            buf = off === buf.length ? Buffer.alloc(0) : buf.subarray(off)
            if (c.head > 4096) {
              c.sent.splice(0, c.head)
              c.head = 0
            }
            if (!open) {
              for (let i = 0; i < answered && now < end && sentTotal < maxRequests; i++) send(c, now)
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
        if (spec.slowMs !== undefined && now - lastTick > 4)
          pauses.push({ at: performance.timeOrigin + lastTick, ms: now - lastTick, what: 'sends held back' })
        lastTick = now
        if (now >= end || sentTotal >= maxRequests) {
          for (const c of conns) closeIfDrained(c)
          resolve()
          return
        }
        const due = Math.floor(((now - start) / 1000) * rate)
        while (scheduled < due && sentTotal < maxRequests) {
          const c = conns[next]
          next = next + 1 === conns.length ? 0 : next + 1
          scheduled++
          if (inFlight(c) < maxInFlight) send(c, now)
        }
        // A 1 ms timer rather than a spin, so the generator leaves the other core to the server.
        setTimeout(tick, 1)
      }
      tick()
    })
  } else {
    const now = performance.now()
    for (const c of conns) for (let i = 0; i < spec.depth; i++) send(c, now)
  }
  // Stop waiting for stragglers after a grace period; they are not counted anyway.
  const grace = setTimeout(() => {
    measureEnd = 0
    for (const c of conns) c.socket.destroy()
    finish()
  }, 10_000)
  await done
  clearTimeout(grace)
  gc?.disconnect()

  const cpu = process.cpuUsage(cpu0)
  const seconds = (Math.min(performance.now(), end) - measureFrom) / 1000
  latencies.sort((a, b) => a - b)
  const q = (p: number) =>
    latencies.length === 0
      ? Number.NaN
      : latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]
  return {
    requests: counted,
    answered: answeredTotal,
    seconds,
    p50: q(0.5),
    p99: q(0.99),
    p999: q(0.999),
    max: latencies.length === 0 ? Number.NaN : latencies[latencies.length - 1],
    errors,
    firstErrorCode,
    generatorCpuUs: cpu.user + cpu.system,
    ...(spec.slowMs !== undefined ? { slow, pauses } : {}),
  }
}

// One load a message, as long as the parent keeps the channel open (load.ts keeps this process
// between loads, so that the server's process does not fork again); its closing ends this one.
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
