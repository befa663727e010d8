import { createServer, type Server, type Socket } from 'node:net'
import type { Logger } from 'pino'
import type { Endpoint } from './config.js'
import { Connection, SizePrefixedFrames } from './connection.js'
import type { ApiRouter, ConnectionInfo } from './router.js'

/** Per-connection limits, from the configuration. */
export interface ConnectionLimits {
  /** socket.request.max.bytes */
  readonly maxFrameSize: number
  /** queued.max.requests */
  readonly maxInFlight: number
  /** connections.max.idle.ms */
  readonly idleTimeoutMs: number
}

export interface BoundListener {
  readonly listenerName: string
  readonly host: string
  readonly port: number
}

/** One `listeners` entry: a TCP server whose connections are routed through the API router. */
export class Listener {
  readonly #endpoint: Endpoint
  readonly #router: ApiRouter
  readonly #limits: ConnectionLimits
  readonly #logger: Logger
  readonly #connections = new Set<Connection>()
  #server: Server | undefined
  #bound: BoundListener | undefined
  #nextId = 0

  constructor(endpoint: Endpoint, router: ApiRouter, limits: ConnectionLimits, logger: Logger) {
    this.#endpoint = endpoint
    this.#router = router
    this.#limits = limits
    this.#logger = logger
  }

  get bound(): BoundListener {
    if (this.#bound === undefined) throw new Error('listener not started')
    return this.#bound
  }

  get connectionCount(): number {
    return this.#connections.size
  }

  /** Binds the address; port 0 takes a free port, reported in `bound`. */
  async start(): Promise<BoundListener> {
    // allowHalfOpen: a client that ends its side after sending still gets its answers.
    const server = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.#accept(socket))
    this.#server = server
    const host = this.#endpoint.host === '' ? undefined : this.#endpoint.host
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen({ host, port: this.#endpoint.port }, () => {
        server.off('error', reject)
        resolve()
      })
    })
    server.on('error', (err) => this.#logger.error({ err }, `Listener ${this.#endpoint.listenerName} failed`))
    const addr = server.address()
    if (addr === null || typeof addr === 'string') throw new Error('listener bound to an unexpected address')
    this.#bound = {
      listenerName: this.#endpoint.listenerName,
      host: this.#endpoint.host || addr.address,
      port: addr.port,
    }
    return this.#bound
  }

  #accept(socket: Socket): void {
    const id = this.#nextId++
    const remote = `${socket.remoteAddress}:${socket.remotePort}`
    const info: ConnectionInfo = {
      listenerName: this.#endpoint.listenerName,
      principal: 'User:ANONYMOUS',
      remote,
    }
    const router = this.#router
    const connection = new Connection({
      socket,
      frames: new SizePrefixedFrames(this.#limits.maxFrameSize),
      dispatch: (frame) => router.dispatch(frame, info),
      maxInFlight: this.#limits.maxInFlight,
      idleTimeoutMs: this.#limits.idleTimeoutMs,
      onClose: (reason) => {
        this.#connections.delete(connection)
        this.#logger.debug(
          { connectionId: id, remote, reason },
          `Connection from ${remote} closed: ${reason}`,
        )
      },
    })
    this.#connections.add(connection)
  }

  /** Stops accepting, answers what every connection has read, then closes them all. */
  async close(): Promise<void> {
    const server = this.#server
    if (server === undefined) return
    this.#server = undefined
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    await Promise.all([...this.#connections].map((c) => c.shutdown()))
    await closed
  }
}
