import { lookup } from 'node:dns/promises'
import { isIP, type Socket } from 'node:net'
import type { Logger } from 'pino'
import { ConfigError } from './config-defs.js'
import { type RateConfig, SampledRate } from './quotas/rate.js'

/**
 * The connection limits of the server, as Kafka's ConnectionQuotas enforces them:
 *
 * - `max.connections`, over every listener: at the limit a new connection waits for a slot, as
 *   Kafka's acceptor stops accepting (the client's connection sits in the listen backlog). Node
 *   has accepted the socket already, so a waiting socket is held paused: nothing is read from it
 *   and nothing is written, which is what the client sees of a connection in the backlog. At most
 *   `socket.listen.backlog.size` sockets wait; a connection beyond them is closed at once (a full
 *   backlog drops it).
 * - `max.connection.creation.rate`, over every listener: a connection that takes the rate of new
 *   connections above it is admitted only after the delay that brings the rate back (at most one
 *   quota window), and the connections behind it wait too, as Kafka's acceptor sleeps.
 * - `max.connections.per.ip` with `max.connections.per.ip.overrides`: once a connection has its
 *   slot, one that would exceed its address's limit is closed at once, logged as Kafka logs it.
 * - `connection_creation_rate` quotas of IP entities (client quotas, {@link ConnectionRateCheck}):
 *   a connection above the rate is held, unread, for the throttle time and then closed, as Kafka's
 *   acceptor delays closing a throttled connection.
 *
 * A connection's slot is returned when its socket closes.
 */

/** Decides whether a new connection from an address is over its creation rate: the delay, or 0. */
export type ConnectionRateCheck = (host: string, nowMs: number) => number

export interface ConnectionQuotaSettings {
  /** `max.connections` */
  readonly maxConnections: number
  /** `max.connections.per.ip` */
  readonly maxConnectionsPerIp: number
  /** `max.connections.per.ip.overrides`, hosts resolved to addresses ({@link resolveOverrides}). */
  readonly overrides: ReadonlyMap<string, number>
  /** `socket.listen.backlog.size`: the most connections waiting for a slot. */
  readonly maxWaiting: number
  /** `max.connection.creation.rate` (2147483647: none). */
  readonly maxConnectionCreationRate?: number
  /** How connection rates are measured (`quota.window.num`, `quota.window.size.seconds`). */
  readonly rate?: RateConfig
}

/** Kafka's default of max.connection.creation.rate: no limit. */
const NO_RATE_LIMIT = 2147483647

interface Waiting {
  readonly socket: Socket
  readonly host: string
  readonly admit: (socket: Socket) => void
}

export class ConnectionQuotas {
  readonly #settings: ConnectionQuotaSettings
  readonly #logger: Logger
  readonly #counts = new Map<string, number>()
  #total = 0
  readonly #waiting: Waiting[] = []
  #head = 0
  #rateCheck: ConnectionRateCheck | null = null
  /** Sockets held until their connection-rate throttle ends, then closed. */
  readonly #throttled = new Set<Socket>()
  /** The server's rate of new connections, when max.connection.creation.rate is set. */
  readonly #brokerRate: SampledRate | null
  /** The acceptor waits until then (the rate's delay) before admitting the next connection. */
  #blockedUntil = 0
  #unblock: NodeJS.Timeout | null = null
  /** The head of the queue was counted in the server's rate already (it waits out its delay). */
  #headRecorded = false

  constructor(settings: ConnectionQuotaSettings, logger: Logger) {
    this.#settings = settings
    this.#logger = logger
    const limit = settings.maxConnectionCreationRate ?? NO_RATE_LIMIT
    this.#brokerRate =
      limit !== NO_RATE_LIMIT ? new SampledRate(settings.rate ?? { samples: 11, windowMs: 1000 }) : null
  }

  /** Connections holding a slot. */
  get count(): number {
    return this.#total
  }

  /** Connections waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length - this.#head
  }

  /** Connections from one address holding a slot. */
  countOf(host: string): number {
    return this.#counts.get(host) ?? 0
  }

  /** Installs the connection-creation-rate check (the client quotas own the rates). */
  set rateCheck(check: ConnectionRateCheck | null) {
    this.#rateCheck = check
  }

  /**
   * A socket a listener has just accepted, paused (nothing read yet), from `host` (the client
   * address as {@link normalizeHost} gives it). `admit` runs once the connection may be served;
   * it must start reading the socket. A refused socket is destroyed.
   */
  accept(socket: Socket, host: string, admit: (socket: Socket) => void): void {
    if (this.waiting === 0 && this.#slotFree() && this.#blockedUntil <= Date.now()) {
      if (this.#recordConnection(Date.now())) {
        this.#admit({ socket, host, admit })
        return
      }
      // Over the creation rate: this one waits out the delay at the head of the queue.
      this.#headRecorded = true
    } else if (this.waiting >= this.#settings.maxWaiting) {
      this.#logger.info(
        { remote: host, maxConnections: this.#settings.maxConnections },
        `Closed connection from /${host}: ${this.#settings.maxWaiting} connections already wait for a slot (socket.listen.backlog.size)`,
      )
      socket.destroy()
      return
    }
    this.#waiting.push({ socket, host, admit })
    this.#drain()
  }

  #slotFree(): boolean {
    return this.#total < this.#settings.maxConnections
  }

  /**
   * Counts a new connection in the server's creation rate; false when that takes the rate above
   * max.connection.creation.rate (the acceptor then waits the delay, at most one window).
   */
  #recordConnection(nowMs: number): boolean {
    const rate = this.#brokerRate
    if (rate === null) return true
    const bound = this.#settings.maxConnectionCreationRate ?? NO_RATE_LIMIT
    const windowMs = (this.#settings.rate ?? { windowMs: 1000 }).windowMs
    const delay = Math.min(rate.recordAndThrottleMs(1, bound, nowMs), windowMs)
    if (delay <= 0) return true
    this.#blockedUntil = nowMs + delay
    return false
  }

  /** Admits waiting connections while slots are free and the acceptor is not waiting out a delay. */
  #drain(): void {
    while (this.waiting > 0 && this.#slotFree()) {
      const now = Date.now()
      if (this.#blockedUntil > now) {
        if (this.#unblock === null) {
          this.#unblock = setTimeout(() => {
            this.#unblock = null
            this.#drain()
          }, this.#blockedUntil - now)
          this.#unblock.unref()
        }
        return
      }
      if (!this.#headRecorded && !this.#recordConnection(now)) {
        this.#headRecorded = true
        continue
      }
      this.#headRecorded = false
      const next = this.#waiting[this.#head++]
      if (this.#head === this.#waiting.length) {
        this.#waiting.length = 0
        this.#head = 0
      }
      this.#admit(next)
    }
  }

  /** Closes the sockets still waiting or throttled (server shutdown). */
  close(): void {
    for (let i = this.#head; i < this.#waiting.length; i++) this.#waiting[i].socket.destroy()
    this.#waiting.length = 0
    this.#head = 0
    for (const s of this.#throttled) s.destroy()
    this.#throttled.clear()
    if (this.#unblock !== null) clearTimeout(this.#unblock)
    this.#unblock = null
  }

  #admit(w: Waiting): void {
    const { socket, host } = w
    if (socket.destroyed) return
    const throttleMs = this.#rateCheck?.(host, Date.now()) ?? 0
    if (throttleMs > 0) {
      // Kafka accepts the connection, does not serve it and closes it when the throttle ends; it
      // no longer counts in the server's rate.
      this.#brokerRate?.record(-1, Date.now())
      this.#logger.debug(
        { remote: host, throttleMs },
        `Delaying closing of connection from /${host} for ${throttleMs} ms`,
      )
      this.#throttled.add(socket)
      const timer = setTimeout(() => {
        this.#throttled.delete(socket)
        socket.destroy()
      }, throttleMs)
      timer.unref()
      socket.once('close', () => {
        clearTimeout(timer)
        this.#throttled.delete(socket)
      })
      return
    }
    const count = this.#counts.get(host) ?? 0
    this.#counts.set(host, count + 1)
    this.#total++
    socket.once('close', () => this.#release(host))
    const max = this.#settings.overrides.get(host) ?? this.#settings.maxConnectionsPerIp
    if (count >= max) {
      this.#logger.info(
        { remote: host, max },
        `Rejected connection from /${host}, address already has the configured maximum of ${max} connections.`,
      )
      socket.destroy()
      return
    }
    w.admit(socket)
  }

  #release(host: string): void {
    const count = this.#counts.get(host) ?? 0
    if (count <= 1) this.#counts.delete(host)
    else this.#counts.set(host, count - 1)
    this.#total--
    this.#drain()
  }
}

/**
 * The overrides with every host name resolved to its (first) address, as Kafka resolves them once
 * at start-up; an address is kept as written. A name that does not resolve stops the start.
 */
export async function resolveOverrides(
  overrides: ReadonlyMap<string, number>,
): Promise<ReadonlyMap<string, number>> {
  const out = new Map<string, number>()
  for (const [host, count] of overrides) {
    if (isIP(host) !== 0) {
      out.set(host, count)
      continue
    }
    try {
      const { address } = await lookup(host)
      out.set(address, count)
    } catch (err) {
      throw new ConfigError(
        `Invalid value for configuration max.connections.per.ip.overrides: ${host} cannot be resolved (${(err as Error).message})`,
        'max.connections.per.ip.overrides',
        { cause: err },
      )
    }
  }
  return out
}
