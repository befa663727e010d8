// The load generator of the data-plane benchmarks, run as a child process (see load.ts). Unlike
// bench/server/load-worker.ts it reads answers of any size without gathering them: a 1 MiB Fetch
// answer is counted as it streams in, and only small answers (Produce) are kept whole to check their
// error code. Two modes:
//
// - `closed`: `connections` loopback connections, `depth` requests in flight on each, the given
//   request frames sent round-robin (one shared cursor), a new one as each answer arrives; bounded
//   by `seconds` (after `warmupSeconds` not counted) and by `maxRequests`. Measures the most the
//   server answers, in requests and in answer bytes.
// - `e2e`: produce-to-consume latency. `producers` connections send one Produce frame each on a fixed
//   schedule of `rate` requests per second in total (1 ms ticks), every batch stamped with its send
//   time (an 8-byte float in the first record's key, CRC recomputed); one consumer connection long
//   polls Fetch from the log end and reads the stamp of every batch it receives. Latency is from the
//   stamp to the read of the Fetch answer holding the batch, on one clock: process.hrtime's
//   (CLOCK_MONOTONIC, the same in every process on the machine). With `consumer: 'own process'`
//   the consumer runs in a process of its own (a fork of this file), as a consumer application
//   would, instead of on the producers' event loop (where a batch's answer waits for the producers'
//   sends, and their sends for the answers' reads); on two vCPUs that third process waits for a
//   CPU instead (BENCHMARKS.md, "The segment write, and the consumer in its own process").
import { fork } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { loadExecArgv } from '../server/load.js'
import { FetchAnswerReader, FetchPoll } from './fetch-answers.js'
import { StampedCrc } from './stamped-crc.js'
import { bucketOf, consumerBuckets, type LoadBucket, type LoadTimeline } from './timeline.js'

export interface ClosedSpec {
  readonly mode: 'closed'
  readonly port: number
  readonly frames: readonly Uint8Array[]
  readonly seconds: number
  readonly warmupSeconds: number
  readonly connections: number
  readonly depth: number
  readonly maxRequests?: number
  /** Byte offset in each small answer (after the size prefix) of an int16 error code to check. */
  readonly errorCodeAt?: number
}

export interface E2eSpec {
  readonly mode: 'e2e'
  readonly port: number
  /** A Produce request frame (size prefix included) holding one uncompressed batch. */
  readonly produceFrame: Uint8Array
  /** Where in `produceFrame` the batch starts. */
  readonly batchAt: number
  /** Where, from the batch start, the 8-byte stamp (the first record's key) is. */
  readonly stampAt: number
  readonly topic: string
  readonly partition: number
  /** Offset the consumer starts at (the log end before the run). */
  readonly fromOffset: number
  readonly rate: number
  readonly producers: number
  readonly seconds: number
  readonly warmupSeconds: number
  /** Report every measured batch slower than this (ms), with its send time (for traces). */
  readonly slowMs?: number
  /** Report each measured batch's times at every stage of the load (latency-trace.ts). */
  readonly stages?: boolean
  /**
   * Where the consumer runs: in the producers' process (the default) or in a process of its own,
   * so that the producers' sends and its reads do not wait for each other on one event loop.
   */
  readonly consumer?: 'own process' | 'same process'
  /**
   * The first `buckets` × `bucketMs` ms from the schedule's start (warm-up included), bucket by
   * bucket (timeline.ts): the result's `timeline`.
   */
  readonly timeline?: { readonly bucketMs: number; readonly buckets: number }
}

/**
 * Per measured batch (same index in every array), times in this process's performance.now(): the
 * send time the open-loop schedule intended, the actual send (the batch's stamp), when the
 * consumer sent the Fetch that returned it, when the first bytes of that answer were read, when
 * the whole answer was read (where the latency ends) and when its decoding and walk were done.
 * `hrMinusNow` turns these into process.hrtime's clock (CLOCK_MONOTONIC, shared by every process
 * on the machine): add it.
 */
export interface BatchStages {
  readonly hrMinusNow: number
  readonly intended: Float64Array
  readonly sent: Float64Array
  readonly fetchSent: Float64Array
  readonly firstByte: Float64Array
  readonly complete: Float64Array
  readonly parsed: Float64Array
  /** Batches in the answer that held it. */
  readonly perAnswer: Uint16Array
  /** The load process's own collections during the run: count, ms in all, the longest. */
  readonly gc: { readonly n: number; readonly ms: number; readonly max: number; readonly major: number }
  /** The load process's CPU time during the run (user + system), ms. */
  readonly cpuMs: number
}

export type DataLoadSpec = ClosedSpec | E2eSpec

export interface DataLoadResult {
  /** Answers (closed) or batches consumed (e2e) in the measured window. */
  readonly requests: number
  /** Answers received in the whole run, warm-up included. */
  readonly answered: number
  /** Answer bytes (size prefixes included) received in the measured window (closed). */
  readonly bytes: number
  readonly seconds: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly errors: number
  readonly firstErrorCode: number
  /** e2e with `slowMs`: the slower batches, send time as ms since the epoch, and latency. */
  readonly slow?: readonly { readonly at: number; readonly ms: number }[]
  /** e2e with `stages`. */
  readonly stages?: BatchStages
  /**
   * e2e: the load's own CPU time (user + system, ms) during the run, from the first send to the
   * drain: the producers' process (the consumer's too when it runs there) and the consumer's own
   * process (null when it runs in the producers' one).
   */
  readonly timeline?: LoadTimeline
  /** e2e: the measured part, on the monotonic clock that every process shares (process.hrtime, ms). */
  readonly measuredMono?: { readonly from: number; readonly to: number }
  readonly loadCpuMs?: {
    readonly producers: number
    readonly producersUser: number
    readonly consumer: number | null
    readonly consumerUser: number | null
  }
}

const SMALL = 4096
/** Produce frames the e2e load makes before its run (more are made if the sockets hold more). */
const FRAMES_AHEAD = 64

/**
 * Reads size-prefixed frames from a socket's chunks (the function it returns takes them) without
 * gathering large ones: `onFrame` gets the frame's size and, for frames of at most `keep` bytes (or
 * all when `keep` is Infinity), its bytes. It copies what it keeps: a chunk may be overwritten once
 * the function returns.
 */
function frameReader(
  keep: number,
  onFrame: (size: number, body: Buffer | null) => void,
): (chunk: Buffer) => void {
  const head = Buffer.alloc(4)
  let headGot = 0
  let remaining = -1
  let body: Buffer | null = null
  let bodyGot = 0
  let size = 0
  return (chunk: Buffer) => {
    let i = 0
    while (i < chunk.length) {
      if (remaining < 0) {
        const take = Math.min(4 - headGot, chunk.length - i)
        chunk.copy(head, headGot, i, i + take)
        headGot += take
        i += take
        if (headGot < 4) break
        headGot = 0
        size = head.readInt32BE(0)
        remaining = size
        body = size > keep ? null : Buffer.allocUnsafe(size)
        bodyGot = 0
      }
      const take = Math.min(remaining, chunk.length - i)
      if (body !== null) chunk.copy(body, bodyGot, i, i + take)
      bodyGot += take
      i += take
      remaining -= take
      if (remaining === 0) {
        remaining = -1
        onFrame(size, body)
      }
    }
  }
}

function quantiles(latencies: number[]): { p50: number; p99: number; max: number } {
  latencies.sort((a, b) => a - b)
  const q = (p: number) =>
    latencies.length === 0
      ? Number.NaN
      : latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]
  return {
    p50: q(0.5),
    p99: q(0.99),
    max: latencies.length === 0 ? Number.NaN : latencies[latencies.length - 1],
  }
}

/**
 * The e2e load's sockets read into this one buffer (net.Socket's `onread`), as the server's do:
 * reads are delivered one at a time on the event loop, and every reader copies what it keeps
 * before it returns. Otherwise Node allocates a fresh buffer for every read (the consumer's
 * answers: the whole produce rate in 64 KiB reads), whose collections would pause the load.
 */
const READ_BUFFER = Buffer.allocUnsafeSlow(64 * 1024)

/** A loopback connection; with `reads`, read into READ_BUFFER and handed there, not as 'data'. */
function open(port: number, reads?: (chunk: Buffer) => void): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(
      reads === undefined
        ? { host: '127.0.0.1', port }
        : {
            host: '127.0.0.1',
            port,
            onread: {
              buffer: READ_BUFFER,
              callback: (n: number, buf: Uint8Array) => {
                reads((buf as Buffer).subarray(0, n))
                return true
              },
            },
          },
      () => resolve(s),
    )
    s.setNoDelay(true)
    s.once('error', reject)
  })
}

async function closed(spec: ClosedSpec): Promise<DataLoadResult> {
  const frames = spec.frames.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength))
  const maxRequests = spec.maxRequests ?? Number.MAX_SAFE_INTEGER
  const latencies: number[] = []
  let cursor = 0
  let sent = 0
  let counted = 0
  let answered = 0
  let bytes = 0
  let errors = 0
  let firstErrorCode = 0
  const t0 = performance.now()
  const measureFrom = t0 + spec.warmupSeconds * 1000
  const end = measureFrom + spec.seconds * 1000
  let stopped = 0
  let finish: () => void = () => undefined
  const done = new Promise<void>((r) => {
    finish = r
  })
  const sockets = await Promise.all(Array.from({ length: spec.connections }, () => open(spec.port)))
  const keep = spec.errorCodeAt === undefined ? -1 : SMALL
  for (const socket of sockets) {
    const sentAt: number[] = []
    let head = 0
    const send = (now: number) => {
      sentAt.push(now)
      sent++
      socket.write(frames[cursor])
      cursor = cursor + 1 === frames.length ? 0 : cursor + 1
    }
    const onData = frameReader(keep, (size, body) => {
      const now = performance.now()
      const at = sentAt[head++]
      if (head > 4096) {
        sentAt.splice(0, head)
        head = 0
      }
      answered++
      if (body !== null && spec.errorCodeAt !== undefined) {
        const code = body.readInt16BE(spec.errorCodeAt)
        if (code !== 0) {
          if (errors === 0) firstErrorCode = code
          errors++
        }
      }
      if (at >= measureFrom && now <= end) {
        latencies.push(now - at)
        counted++
        bytes += 4 + size
      }
      if (now < end && sent < maxRequests) send(now)
      else if (sentAt.length - head === 0 && !socket.destroyed) {
        socket.destroy()
        if (++stopped === sockets.length) finish()
      }
    })
    socket.on('data', onData)
    socket.on('error', () => undefined)
    ;(socket as Socket & { start?: () => void }).start = () => {
      const now = performance.now()
      for (let i = 0; i < spec.depth && sent < maxRequests; i++) send(now)
      if (sentAt.length === 0) {
        // Nothing left to send on this connection (maxRequests reached on the others).
        socket.destroy()
        if (++stopped === sockets.length) finish()
      }
    }
  }
  for (const s of sockets) (s as Socket & { start: () => void }).start()
  const grace = setTimeout(
    () => {
      for (const s of sockets) s.destroy()
      finish()
    },
    (spec.warmupSeconds + spec.seconds) * 1000 + 30_000,
  )
  await done
  clearTimeout(grace)
  const seconds = (Math.min(performance.now(), end) - measureFrom) / 1000
  return { requests: counted, answered, bytes, seconds, ...quantiles(latencies), errors, firstErrorCode }
}

/** This process's collections from now on (count, ms in all, the longest, mark-compacts), when asked. */
function collections(counted: boolean): {
  gc: { n: number; ms: number; max: number; major: number }
  gcObserver: PerformanceObserver | null
} {
  const gc = { n: 0, ms: 0, max: 0, major: 0 }
  if (!counted) return { gc, gcObserver: null }
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.n++
      gc.ms += e.duration
      gc.max = Math.max(gc.max, e.duration)
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++
    }
  })
  gcObserver.observe({ entryTypes: ['gc'] })
  return { gc, gcObserver }
}

/** Milliseconds on process.hrtime's clock (CLOCK_MONOTONIC): one clock for every process here. */
const hrNow = (): number => Number(process.hrtime.bigint()) / 1e6

/** What the consumer measured: its per-batch times are on hrNow's clock. */
interface ConsumerOut {
  readonly consumed: number
  readonly latencies: number[]
  readonly slow: { at: number; ms: number }[]
  readonly errors: number
  readonly firstErrorCode: number
  /** With stages: per measured batch, its stamp and the consumer's times (see BatchStages). */
  readonly st: {
    sent: number[]
    fetchSent: number[]
    firstByte: number[]
    complete: number[]
    parsed: number[]
    perAnswer: number[]
  }
  readonly gc: { n: number; ms: number; max: number; major: number }
  readonly cpuMs: number
  readonly cpuUserMs: number
  /** With spec.timeline: the consumer's side of its buckets. */
  readonly buckets: LoadBucket[] | null
}

/**
 * The consumer: one connection long polling Fetch from `spec.fromOffset`, reading the stamp of
 * every batch it receives. Started, it polls until `drain` has seen `scheduled` batches (or 10 s
 * passed), then stops after its current poll and returns what it measured of the batches stamped
 * within [measureFrom, end].
 */
async function consumer(spec: E2eSpec): Promise<{ drain: (d: Drain) => Promise<ConsumerOut> }> {
  let onChunk: (chunk: Buffer) => void = () => undefined
  const socket = await open(spec.port, (chunk) => onChunk(chunk))
  socket.on('error', () => undefined)
  const stages = spec.stages === true
  const epochMinusHr = performance.timeOrigin + performance.now() - hrNow()
  let consumed = 0
  let errors = 0
  let firstErrorCode = 0
  let offset = spec.fromOffset
  let correlation = 0
  let stopping = false
  // Every batch received, in order (the measured window is known only at the end).
  const all = {
    sent: [] as number[],
    complete: [] as number[],
    fetchSent: [] as number[],
    firstByte: [] as number[],
    parsed: [] as number[],
    perAnswer: [] as number[],
  }
  let fetchSentAt = 0
  let firstByteAt = 0
  // With a timeline: each answer's end and the batches it held.
  const answers: { at: number; batches: number }[] | null = spec.timeline === undefined ? null : []
  const { gc, gcObserver } = collections(stages)
  let cpu0 = process.cpuUsage()
  let stopped: () => void = () => undefined
  const whenStopped = new Promise<void>((r) => {
    stopped = r
  })
  // The Fetch encoded once (offset and correlation id patched per poll), and its answers walked
  // as they arrive, batch headers only (fetch-answers.ts): the consumer measures the server, not
  // its own decoding.
  const request = new FetchPoll(spec.topic, spec.partition, 1 << 20, 500, 1)
  const poll = () => {
    fetchSentAt = hrNow()
    socket.write(request.frame(++correlation, offset))
  }
  let answerFrom = 0
  const reader = new FetchAnswerReader(spec.stampAt, {
    start: () => {
      firstByteAt = hrNow()
      answerFrom = all.sent.length
    },
    batch: (base, lastOffsetDelta, stamp) => {
      consumed++
      all.sent.push(stamp)
      offset = base + lastOffsetDelta + 1
    },
    end: (code) => {
      const t = hrNow()
      if (code !== 0) {
        if (errors === 0) firstErrorCode = code
        errors++
      }
      const n = all.sent.length
      for (let i = answerFrom; i < n; i++) all.complete.push(t)
      answers?.push({ at: t, batches: n - answerFrom })
      if (stages) {
        const parsed = hrNow()
        for (let i = answerFrom; i < n; i++) {
          all.fetchSent.push(fetchSentAt)
          all.firstByte.push(firstByteAt)
          all.parsed.push(parsed)
          all.perAnswer.push(n - answerFrom)
        }
      }
      if (stopping) stopped()
      else poll()
    },
  })
  onChunk = (chunk) => reader.push(chunk)
  poll()
  return {
    drain: async ({ scheduled, measureFrom, end, start }) => {
      // Let the last batches be consumed (at most 10 s), then stop after the current poll.
      const drainUntil = hrNow() + 10_000
      while (consumed < scheduled && hrNow() < drainUntil) await new Promise((r) => setTimeout(r, 10))
      stopping = true
      await Promise.race([whenStopped, new Promise((r) => setTimeout(r, 2000))])
      socket.destroy()
      gcObserver?.disconnect()
      const cpu = process.cpuUsage(cpu0)
      cpu0 = process.cpuUsage()
      const latencies: number[] = []
      const slow: { at: number; ms: number }[] = []
      const st = {
        sent: [] as number[],
        fetchSent: [] as number[],
        firstByte: [] as number[],
        complete: [] as number[],
        parsed: [] as number[],
        perAnswer: [] as number[],
      }
      for (let i = 0; i < all.sent.length; i++) {
        const stamp = all.sent[i]
        if (stamp < measureFrom || stamp > end) continue
        const ms = all.complete[i] - stamp
        latencies.push(ms)
        if (spec.slowMs !== undefined && ms > spec.slowMs) slow.push({ at: epochMinusHr + stamp, ms })
        if (stages) for (const k of Object.keys(st) as (keyof typeof st)[]) st[k].push(all[k][i])
      }
      return {
        consumed,
        latencies,
        slow,
        errors,
        firstErrorCode,
        st,
        gc,
        cpuMs: (cpu.user + cpu.system) / 1000,
        cpuUserMs: cpu.user / 1000,
        buckets:
          spec.timeline === undefined || answers === null
            ? null
            : consumerBuckets(
                all.sent,
                all.complete,
                answers,
                start,
                spec.timeline.bucketMs,
                spec.timeline.buckets,
                spec.slowMs ?? 10,
              ),
      }
    },
  }
}

/** The end of an e2e load, as the consumer needs it. */
interface Drain {
  readonly scheduled: number
  readonly measureFrom: number
  readonly end: number
  /** The schedule's start (the timeline's origin). */
  readonly start: number
}

/** The consumer in a process of its own (a forked copy of this file), driven by messages. */
function consumerProcess(spec: E2eSpec): Promise<{ drain: (d: Drain) => Promise<ConsumerOut> }> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: loadExecArgv(),
    serialization: 'advanced',
  })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('message', () =>
      resolve({
        drain: (d) =>
          new Promise<ConsumerOut>((done, failed) => {
            child.once('message', (out: ConsumerOut) => done(out))
            child.once('exit', (code: number | null) => failed(new Error(`consumer exited with ${code}`)))
            child.send(d)
          }),
      }),
    )
    child.send({ mode: 'consume', spec })
  })
}

async function e2e(spec: E2eSpec): Promise<DataLoadResult> {
  const template = Buffer.from(spec.produceFrame)
  const batchAt = spec.batchAt
  const batchLength = template.readInt32BE(batchAt + 8)
  const batchEnd = batchAt + 12 + batchLength
  let producedAnswers = 0
  const producers = await Promise.all(
    Array.from({ length: spec.producers }, () =>
      // Answers are counted, not kept.
      open(
        spec.port,
        frameReader(-1, () => {
          producedAnswers++
        }),
      ),
    ),
  )
  for (const p of producers) p.on('error', () => undefined)
  // The consumer polls before the first send. Every time below is on hrNow's clock, the
  // consumer's too (in its own process or in this one).
  const ownProcess = spec.consumer === 'own process'
  const consuming = await (ownProcess ? consumerProcess : consumer)(spec)
  const t0 = hrNow()
  const measureFrom = t0 + spec.warmupSeconds * 1000
  const end = measureFrom + spec.seconds * 1000
  // Stages (spec.stages): the schedule's intended send time of each batch, by its stamp.
  const intendedOf = spec.stages === true ? new Map<number, number>() : null
  const { gc, gcObserver } = collections(intendedOf !== null)
  const cpu0 = process.cpuUsage()

  // The producers: an open-loop schedule; each send is the template with a fresh stamp and CRC.
  // Frames come from a free list that each socket write's callback refills: the load makes no
  // garbage of 16 KiB a batch, whose collections would delay its sends and its reads. A frame
  // given back still holds the template but for its stamp and CRC, which are all a send rewrites.
  // The first FRAMES_AHEAD are made before the run: fresh memory is a host fault a page on this VM.
  const crc = new StampedCrc(template.subarray(batchAt + 21, batchEnd), spec.stampAt - 21)
  const stampAt = batchAt + spec.stampAt
  const fresh = (): Buffer => {
    const frame = Buffer.allocUnsafeSlow(template.length)
    template.copy(frame)
    return frame
  }
  const free: Buffer[] = Array.from({ length: FRAMES_AHEAD }, fresh)
  let scheduled = 0
  let next = 0
  const start = hrNow()
  // With a timeline, what each tick saw: the producers' unsent bytes and the gap since the last tick.
  const tl = spec.timeline
  const ticks = tl === undefined ? null : Array.from({ length: tl.buckets }, () => ({ unsent: 0, gap: 0 }))
  let lastTick = start
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = hrNow()
      if (now >= end) {
        resolve()
        return
      }
      if (ticks !== null && tl !== undefined) {
        const k = bucketOf(now, start, tl.bucketMs, tl.buckets)
        if (k >= 0) {
          let unsent = 0
          for (const p of producers) unsent += p.writableLength
          ticks[k].unsent = Math.max(ticks[k].unsent, unsent)
          ticks[k].gap = Math.max(ticks[k].gap, now - lastTick)
        }
        lastTick = now
      }
      const due = Math.floor(((now - start) / 1000) * spec.rate)
      while (scheduled < due) {
        const frame = free.pop() ?? fresh()
        const stamp = hrNow()
        frame.writeDoubleLE(stamp, stampAt)
        // Batch `scheduled` fell due once (now - start) reached (scheduled + 1) / rate.
        intendedOf?.set(stamp, start + ((scheduled + 1) * 1000) / spec.rate)
        frame.writeUInt32BE(crc.of(frame, stampAt), batchAt + 17)
        producers[next].write(frame, () => free.push(frame))
        next = next + 1 === producers.length ? 0 : next + 1
        scheduled++
      }
      setTimeout(tick, 1)
    }
    tick()
  })
  // Let the last batches be answered (at most 10 s), then the consumer drains.
  const drainUntil = hrNow() + 10_000
  while (producedAnswers < scheduled && hrNow() < drainUntil) await new Promise((r) => setTimeout(r, 10))
  const c = await consuming.drain({ scheduled, measureFrom, end, start })
  for (const s of producers) s.destroy()
  gcObserver?.disconnect()
  const cpu = process.cpuUsage(cpu0)
  let errors = c.errors
  let firstErrorCode = c.firstErrorCode
  if (c.consumed < scheduled) {
    console.error(`consumed ${c.consumed} of ${scheduled} batches sent (${producedAnswers} answered)`)
    errors++
    if (firstErrorCode === 0) firstErrorCode = -2
  }
  return {
    requests: c.latencies.length,
    answered: c.consumed,
    bytes: 0,
    seconds: spec.seconds,
    ...quantiles(c.latencies),
    errors,
    firstErrorCode,
    loadCpuMs: {
      producers: (cpu.user + cpu.system) / 1000,
      producersUser: cpu.user / 1000,
      consumer: ownProcess ? c.cpuMs : null,
      consumerUser: ownProcess ? c.cpuUserMs : null,
    },
    ...(spec.slowMs !== undefined ? { slow: c.slow } : {}),
    measuredMono: { from: measureFrom, to: end },
    ...(tl !== undefined && ticks !== null && c.buckets !== null
      ? {
          timeline: {
            startEpochMs: performance.timeOrigin + performance.now() - hrNow() + start,
            bucketMs: tl.bucketMs,
            measureFromMs: measureFrom - start,
            buckets: c.buckets.map((b, k) => ({ ...b, unsentMax: ticks[k].unsent, tickGapMs: ticks[k].gap })),
          },
        }
      : {}),
    ...(intendedOf !== null
      ? {
          stages: {
            hrMinusNow: 0,
            intended: Float64Array.from(c.st.sent, (s) => intendedOf.get(s) ?? Number.NaN),
            sent: Float64Array.from(c.st.sent),
            fetchSent: Float64Array.from(c.st.fetchSent),
            firstByte: Float64Array.from(c.st.firstByte),
            complete: Float64Array.from(c.st.complete),
            parsed: Float64Array.from(c.st.parsed),
            perAnswer: Uint16Array.from(c.st.perAnswer),
            // The load's own collections and CPU: the producers' process and the consumer's.
            gc: {
              n: gc.n + c.gc.n,
              ms: gc.ms + c.gc.ms,
              max: Math.max(gc.max, c.gc.max),
              major: gc.major + c.gc.major,
            },
            cpuMs: (cpu.user + cpu.system) / 1000 + (ownProcess ? c.cpuMs : 0),
          },
        }
      : {}),
  }
}

process.once('message', (m: DataLoadSpec | { readonly mode: 'consume'; readonly spec: E2eSpec }) => {
  if (m.mode === 'consume') {
    // A consumer process of an e2e load: ready once polling, then drained on the parent's word.
    consumer(m.spec).then((c) => {
      process.once('message', (d: Drain) =>
        c.drain(d).then((out) => process.send?.(out, () => process.exit(0))),
      )
      process.send?.({ ready: true })
    })
    return
  }
  ;(m.mode === 'closed' ? closed(m) : e2e(m)).then(
    (r) => process.send?.(r, () => process.exit(0)),
    (e: unknown) => {
      console.error(e)
      process.exit(1)
    },
  )
})
