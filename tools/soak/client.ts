// A pipelined Kafka connection for the soak's load: many requests in flight at once, matched to
// their answers by correlation id, typed through the generated codec. A closed connection rejects
// everything in flight with ConnectionClosedError and is reopened by `ReconnectingClient`.
import { connect, type Socket } from 'node:net'
import { decodeResponse, encodeRequestFrame } from '../../src/protocol/frames.js'
import type { ApiMessageTypes } from '../../src/protocol/generated/registry.js'

/**
 * The back-off of a Kafka Java client (`ExponentialBackoff` in org.apache.kafka.common.utils.internals):
 * `base × 2^min(attempts, expMax)` with `expMax = log2(max / base)`, times a random factor in
 * [1 − jitter, 1 + jitter), at most `max`. The exponent stops at `expMax`, so the jitter stays past
 * the cap: once at `retry.backoff.max.ms` a retry comes after 0.8–1.0 × max, never after exactly
 * max (a back-off that always came to exactly max would keep every member that reached it on the
 * same cadence). A member's heartbeat and FindCoordinator retries use `retry.backoff.ms` 100 and
 * `retry.backoff.max.ms` 1000 with jitter 0.2 (`HeartbeatRequestState`,
 * `RequestState.RETRY_BACKOFF_JITTER`); reconnecting uses `reconnect.backoff.ms` 50 and
 * `reconnect.backoff.max.ms` 1000 with jitter 0.2 (`ClusterConnectionStates`). Every member has its
 * own: no two retry in step.
 */
export function clientBackoffMs(
  attempts: number,
  baseMs: number,
  maxMs: number,
  random: () => number,
): number {
  const expMax = maxMs > baseMs ? Math.log2(maxMs / Math.max(baseMs, 1)) : 0
  if (expMax === 0) return Math.min(baseMs, maxMs)
  const term = Math.min(baseMs, maxMs) * 2 ** Math.min(attempts, expMax)
  return Math.min(maxMs, Math.floor(term * (0.8 + 0.4 * random())))
}

export class ConnectionClosedError extends Error {
  constructor() {
    super('connection closed')
  }
}

/**
 * Where a request's times are written, on the monotonic clock (`performance.now()`): `sentAt` just
 * before its frame is written to the socket, `receivedAt` when the chunk that completed its answer
 * was read, before any answer read in the same turn of the loop is decoded and handled, on this
 * connection or another of the thread (`#onData` only stamps and matches; `drainAnswers` decodes
 * once the loop has read every socket that was ready). Their difference leaves out what the load
 * process does around the socket (encoding, decoding, the handlers of the answers that came in the
 * same turn and the work they queue); the time an answer waits in the socket while this process's
 * loop is busy stays in it. The caller owns the object and may reuse it from send to send.
 */
export interface Timing {
  sentAt: number
  receivedAt: number
}

interface Pending {
  readonly apiKey: keyof ApiMessageTypes
  readonly version: number
  readonly timing: Timing | undefined
  resolve(body: unknown): void
  reject(e: Error): void
}

/**
 * Answers read and stamped but not yet decoded, over every connection of this thread, in the order
 * they were read. Node runs the handlers a read resolves (the promise reactions) before it calls the
 * next ready socket's read callback of the same poll, so decoding in the read callback would stamp a
 * second connection's answers only after the first connection's answers were decoded and handled.
 * The reads stamp, and one `setImmediate` (after the poll phase) decodes what they left here.
 */
const undecoded: { readonly p: Pending; readonly frame: Buffer }[] = []
let drainScheduled = false

function drainAnswers(): void {
  drainScheduled = false
  // Answers read while these are handled wait for the next drain, after their own reads' poll.
  const batch = undecoded.splice(0, undecoded.length)
  for (const { p, frame } of batch) {
    let body: unknown
    try {
      body = decodeResponse(p.apiKey, p.version, frame).body
    } catch (e) {
      p.reject(e as Error)
      continue
    }
    p.resolve(body)
  }
}

export class PipelinedConnection {
  readonly #socket: Socket
  readonly #inOrder: boolean
  readonly #pending = new Map<number, Pending>()
  #correlation = 1
  #buf: Buffer = Buffer.alloc(0)
  #closed = false
  readonly closed: Promise<void>

  private constructor(socket: Socket, inOrder: boolean) {
    this.#socket = socket
    this.#inOrder = inOrder
    socket.setNoDelay(true)
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => undefined)
    socket.on('close', () => {
      this.#closed = true
      const all = [...this.#pending.values()]
      this.#pending.clear()
      for (const p of all) p.reject(new ConnectionClosedError())
    })
    socket.on('data', (chunk: Buffer) => this.#onData(chunk))
  }

  /**
   * `inOrder` takes each answer for the oldest request in flight, whatever its correlation id, as a
   * Kafka broker answers a connection's requests in the order they came: for a server that answers
   * every request with the same bytes (the soak's ceiling, tools/soak/ceiling.ts).
   */
  static open(port: number, inOrder = false): Promise<PipelinedConnection> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port })
      s.once('connect', () => {
        s.off('error', reject)
        resolve(new PipelinedConnection(s, inOrder))
      })
      s.once('error', reject)
    })
  }

  get isClosed(): boolean {
    return this.#closed
  }

  get inFlight(): number {
    return this.#pending.size
  }

  #onData(chunk: Buffer): void {
    const receivedAt = performance.now()
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk])
    let off = 0
    while (this.#buf.length - off >= 4) {
      const size = this.#buf.readInt32BE(off)
      if (this.#buf.length - off < 4 + size) break
      const frame = this.#buf.subarray(off + 4, off + 4 + size)
      off += 4 + size
      const correlationId = this.#inOrder
        ? (this.#pending.keys().next().value as number | undefined)
        : frame.readInt32BE(0)
      const p = correlationId === undefined ? undefined : this.#pending.get(correlationId)
      if (p === undefined) continue
      this.#pending.delete(correlationId as number)
      if (p.timing !== undefined) p.timing.receivedAt = receivedAt
      undecoded.push({ p, frame })
    }
    this.#buf = off === this.#buf.length ? Buffer.alloc(0) : this.#buf.subarray(off)
    if (!drainScheduled && undecoded.length > 0) {
      drainScheduled = true
      setImmediate(drainAnswers)
    }
  }

  request<K extends keyof ApiMessageTypes>(
    apiKey: K,
    version: number,
    body: ApiMessageTypes[K]['request'],
    timing?: Timing,
  ): Promise<ApiMessageTypes[K]['response']> {
    if (this.#closed) return Promise.reject(new ConnectionClosedError())
    const id = this.#correlation++
    const frame = encodeRequestFrame(apiKey, version, id, 'soak', body)
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { apiKey, version, timing, resolve: resolve as (b: unknown) => void, reject })
      if (timing !== undefined) timing.sentAt = performance.now()
      this.#socket.write(frame)
    })
  }

  close(): void {
    this.#socket.destroy()
  }
}

/**
 * One logical connection that is reopened when it closes (the server restarting): a request made
 * while it is down fails at once with ConnectionClosedError and the caller retries as a client
 * would, after its back-off. Reopening backs off as a Kafka Java client's connection does
 * (`ClusterConnectionStates`: `reconnect.backoff.ms` 50 doubling up to `reconnect.backoff.max.ms`
 * 1000, jitter 0.2), so that several connections do not come back in step.
 */
export class ReconnectingClient {
  #conn: PipelinedConnection | null = null
  #opening = false
  #stopped = false
  #failedOpens = 0
  /** How many times the connection was lost. */
  losses = 0

  constructor(
    readonly port: number,
    readonly onLoss: () => void = () => undefined,
    /** Answers matched to requests in order (`PipelinedConnection.open`). */
    readonly inOrder = false,
  ) {}

  async start(): Promise<void> {
    this.#conn = await PipelinedConnection.open(this.port, this.inOrder)
    this.#watch(this.#conn)
  }

  #watch(c: PipelinedConnection): void {
    c.closed.then(() => {
      if (this.#stopped) return
      this.losses++
      this.onLoss()
      this.#conn = null
      this.#reopen()
    })
  }

  #reopen(): void {
    if (this.#opening || this.#stopped) return
    this.#opening = true
    const attempt = () => {
      if (this.#stopped) return
      PipelinedConnection.open(this.port, this.inOrder).then(
        (c) => {
          this.#opening = false
          this.#failedOpens = 0
          this.#conn = c
          this.#watch(c)
        },
        () => {
          const attempts = this.#failedOpens++
          setTimeout(attempt, clientBackoffMs(attempts, 50, 1000, Math.random))
        },
      )
    }
    attempt()
  }

  get connected(): boolean {
    return this.#conn !== null && !this.#conn.isClosed
  }

  request<K extends keyof ApiMessageTypes>(
    apiKey: K,
    version: number,
    body: ApiMessageTypes[K]['request'],
    timing?: Timing,
  ): Promise<ApiMessageTypes[K]['response']> {
    if (this.#conn === null) return Promise.reject(new ConnectionClosedError())
    return this.#conn.request(apiKey, version, body, timing)
  }

  stop(): void {
    this.#stopped = true
    this.#conn?.close()
  }
}
