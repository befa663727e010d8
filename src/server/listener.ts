import { createServer, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer, type TLSSocket } from 'node:tls'
import type { Logger } from 'pino'
import { SaslAuthenticator } from './auth/authenticator.js'
import { normalizeHost, runWithClientHost } from './auth/request-scope.js'
import { type ListenerSecurity, principalFromCertificate } from './auth/security.js'
import type { Endpoint } from './config.js'
import { type AnswerOutput, Connection, type RequestGate, SizePrefixedFrames } from './connection.js'
import type { ConnectionQuotas } from './connection-quotas.js'
import { READ_BUFFER_BYTES, ReadBufferFrames, readingInto } from './read-buffer.js'
import { type ApiRouter, type ConnectionInfo, pipelinedRequest } from './router.js'

/** Per-connection limits, from the configuration. */
export interface ConnectionLimits {
  /** socket.request.max.bytes */
  readonly maxFrameSize: number
  /** queued.max.requests: the permits every connection of the server shares. */
  readonly gate: RequestGate
  /** connections.max.idle.ms */
  readonly idleTimeoutMs: number
}

/** How connections are secured and what the authorizer needs from them. */
export interface ListenerOptions {
  /** Default: PLAINTEXT. */
  readonly security?: ListenerSecurity
  /** Run every dispatch with the client host in scope, for host-based ACLs (auth/request-scope.ts). */
  readonly clientHostScope?: boolean
  /** The server's connection limits, shared by its listeners (none: unlimited). */
  readonly quotas?: ConnectionQuotas
  /** `socket.listen.backlog.size` (default: Node's). */
  readonly backlog?: number
}

const PLAINTEXT: ListenerSecurity = { protocol: 'PLAINTEXT', tls: null, clientAuth: 'none', sasl: null }

/** Where the reads of a socket that reads into the listener's buffer go, once its connection exists. */
interface ReadTarget {
  connection: Connection | null
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
  readonly #security: ListenerSecurity
  readonly #hostScope: boolean
  readonly #quotas: ConnectionQuotas | undefined
  readonly #backlog: number | undefined
  readonly #connections = new Set<Connection>()
  #server: Server | undefined
  #bound: BoundListener | undefined
  #nextId = 0

  constructor(
    endpoint: Endpoint,
    router: ApiRouter,
    limits: ConnectionLimits,
    logger: Logger,
    options: ListenerOptions = {},
  ) {
    this.#endpoint = endpoint
    this.#router = router
    this.#limits = limits
    this.#logger = logger
    this.#security = options.security ?? PLAINTEXT
    this.#hostScope = options.clientHostScope ?? false
    this.#quotas = options.quotas
    this.#backlog = options.backlog
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
    // allowHalfOpen: a client that ends its side after sending still gets its answers. Sockets are
    // accepted paused, so the connection limits can hold one unread until it has a slot; a TLS
    // listener's handshake starts only then (its sockets are handed to a TLS server that does not
    // listen itself). A TLS connection is half-open only once its handshake is done: one that
    // ends before (a TCP health check) would otherwise be held until the handshake timeout.
    const tls = this.#security.tls
    const tlsServer =
      tls === null
        ? null
        : createTlsServer({ ...tls, allowHalfOpen: false, noDelay: true }, (socket) =>
            this.#acceptTls(socket),
          )
    /** A TLS connection's peer, kept from its accept: a failed handshake's socket may have lost it. */
    const peers = new WeakMap<Socket, { address: string | undefined; port: number | undefined }>()
    const serve = (socket: Socket, target: ReadTarget | null) => {
      if (tlsServer === null) {
        this.#accept(socket, null, target)
        socket.resume()
      } else {
        peers.set(socket, { address: socket.remoteAddress, port: socket.remotePort })
        tlsServer.emit('connection', socket)
      }
    }
    // A plaintext connection reads into the listener's buffer (TLS sockets decrypt into their own).
    const readBuffer = tls === null ? Buffer.allocUnsafeSlow(READ_BUFFER_BYTES) : null
    const server = createServer(
      { allowHalfOpen: tls === null, noDelay: true, pauseOnConnect: true },
      (accepted) => {
        let socket = accepted
        let target: ReadTarget | null = null
        if (readBuffer !== null) {
          const t: ReadTarget = { connection: null }
          const reading = readingInto(accepted, readBuffer, (n, buf) =>
            t.connection?.receive(buf.subarray(0, n)),
          )
          if (reading !== null) {
            socket = reading
            target = t
          }
        }
        const admit = (s: Socket) => serve(s, target)
        const quotas = this.#quotas
        if (quotas === undefined) admit(socket)
        else quotas.accept(socket, normalizeHost(socket.remoteAddress), admit)
      },
    )
    if (tlsServer !== null) {
      // A failed TLS handshake (bad certificate, plaintext client) ends only that connection.
      tlsServer.on('tlsClientError', (err, socket) => {
        // The TLS socket wraps the accepted one (`_parent`, Node's name for it since TLS sockets
        // exist); a socket the peer closed has no address left to read.
        const parent = (socket as TLSSocket & { _parent?: Socket })._parent
        const peer =
          socket.remoteAddress !== undefined
            ? { address: socket.remoteAddress, port: socket.remotePort }
            : ((parent === undefined ? undefined : peers.get(parent)) ?? {
                address: undefined,
                port: undefined,
              })
        const remote = `${peer.address}:${peer.port}`
        if ((err as NodeJS.ErrnoException).code === 'ECONNRESET') {
          // The peer closed before the handshake ended: no failed authentication, as Kafka logs an
          // EOF during the handshake as a disconnection.
          this.#logger.debug(
            { remote, listener: this.#endpoint.listenerName, err: err.message },
            `Connection with ${peer.address} disconnected during the SSL handshake`,
          )
        } else {
          this.#logger.info(
            { remote, listener: this.#endpoint.listenerName, err: err.message },
            `Failed authentication with ${peer.address} (SSL handshake failed)`,
          )
        }
        socket.destroy()
      })
    }
    this.#server = server
    const host = this.#endpoint.host === '' ? undefined : this.#endpoint.host
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen({ host, port: this.#endpoint.port, backlog: this.#backlog }, () => {
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

  #acceptTls(socket: TLSSocket): void {
    // With ssl.client.auth=requested a certificate that does not verify is refused, as Kafka's
    // TLS engine refuses it; no certificate at all is fine.
    const cert = socket.getPeerCertificate(false)
    const presented = cert !== null && Object.keys(cert).length > 0
    if (presented && !socket.authorized) {
      this.#logger.info(
        { remote: `${socket.remoteAddress}:${socket.remotePort}`, listener: this.#endpoint.listenerName },
        `Failed authentication with ${socket.remoteAddress} (SSL handshake failed: ${String(socket.authorizationError)})`,
      )
      socket.destroy()
      return
    }
    // Handshake done: from now on a client that ends its side still gets its answers.
    socket.allowHalfOpen = true
    // With SASL_SSL the principal comes from SASL; with SSL from the client certificate.
    this.#accept(
      socket,
      this.#security.sasl === null && presented ? principalFromCertificate(cert.raw) : null,
    )
  }

  #accept(socket: Socket, tlsPrincipal: string | null = null, target: ReadTarget | null = null): void {
    const id = this.#nextId++
    const remote = `${socket.remoteAddress}:${socket.remotePort}`
    const host = normalizeHost(socket.remoteAddress)
    // The principal changes when SASL authentication completes; the router reads it per request.
    const info: { listenerName: string; principal: string; remote: string } & ConnectionInfo = {
      listenerName: this.#endpoint.listenerName,
      principal: tlsPrincipal ?? 'User:ANONYMOUS',
      remote,
    }
    const router = this.#router
    const frames =
      target === null
        ? new SizePrefixedFrames(this.#limits.maxFrameSize)
        : new ReadBufferFrames(this.#limits.maxFrameSize)
    let dispatch = (frame: Uint8Array, out?: AnswerOutput) => router.dispatch(frame, info, out)
    if (this.#hostScope) {
      const inner = dispatch
      dispatch = (frame, out) => runWithClientHost(host, () => inner(frame, out))
    }
    const sasl = this.#security.sasl
    if (sasl !== null) {
      const authenticator = new SaslAuthenticator(sasl, {
        logger: this.#logger,
        remote,
        listenerName: this.#endpoint.listenerName,
        now: Date.now,
        setPrincipal: (p) => {
          info.principal = p
        },
        setMaxFrameSize: (n) => {
          frames.maxFrameSize = n
        },
        maxFrameSize: this.#limits.maxFrameSize,
      })
      const routed = dispatch
      dispatch = (frame, out) => authenticator.dispatch(frame, routed, out)
    }
    const connection = new Connection({
      socket,
      frames,
      dispatch,
      gate: this.#limits.gate,
      idleTimeoutMs: this.#limits.idleTimeoutMs,
      pipelined: pipelinedRequest,
      reads: target === null ? 'data' : 'onread',
      onClose: (reason, invalidFrame) => {
        this.#connections.delete(connection)
        if (invalidFrame) {
          // Kafka's Selector logs an invalid receive at WARN ("Unexpected error from …").
          this.#logger.warn(
            { connectionId: id, remote, reason },
            `Unexpected error from ${remote} (channelId=${id}); closing connection: ${reason}`,
          )
        } else {
          this.#logger.debug(
            { connectionId: id, remote, reason },
            `Connection from ${remote} closed: ${reason}`,
          )
        }
      },
    })
    this.#connections.add(connection)
    if (target !== null) target.connection = connection
  }

  /** Stops accepting, answers what every connection has read, then closes them all. */
  async close(): Promise<void> {
    const server = this.#server
    if (server === undefined) return
    this.#server = undefined
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    // Connections still waiting for a slot (or throttled) were never served: they just close.
    this.#quotas?.close()
    await Promise.all([...this.#connections].map((c) => c.shutdown()))
    await closed
  }
}
