/**
 * One connection to one broker: correlation ids, pipelined requests (responses arrive in request
 * order), per-request timeouts, TLS (node:tls), ApiVersions negotiation when the connection opens,
 * then SASL authentication (SaslHandshake v1 + SaslAuthenticate) and re-authentication on the same
 * connection before the session the broker granted ends (KIP-368).
 */
import net from 'node:net'
import tls from 'node:tls'
import { API_DEFINITIONS } from '../../protocol/generated/registry.js'
import type { ApiVersionsResponse } from '../../protocol/generated/messages/ApiVersionsResponse.js'
import {
  DisconnectError,
  KafkaError,
  kafkaErrorFromCode,
  SaslAuthenticationError,
  SslAuthenticationError,
  TimeoutError,
  UnsupportedVersionError,
} from './errors.js'
import {
  type ApiKeyNumber,
  decodeResponseFrame,
  encodeRequestFrame,
  FrameDecoder,
  peekCorrelationId,
  type RequestOf,
  type ResponseOf,
} from './framing.js'
import { type Logger, silentLogger } from './logger.js'
import { createSaslMechanism } from './sasl.js'
import {
  type ResolvedSecurity,
  type ResolvedTls,
  resolveSecurity,
  type SaslOptions,
  type SecurityOptions,
  tlsConnectOptions,
} from './security.js'

export interface VersionRange {
  readonly min: number
  readonly max: number
}

export interface ConnectionOptions extends SecurityOptions {
  /** security already resolved (by the network client); the other security options are then unused */
  readonly resolvedSecurity?: ResolvedSecurity
  readonly host: string
  readonly port: number
  readonly clientId?: string | null
  readonly requestTimeoutMs?: number
  readonly connectTimeoutMs?: number
  readonly logger?: Logger
  readonly clientSoftwareName?: string
  readonly clientSoftwareVersion?: string
}

interface Pending {
  readonly apiKey: ApiKeyNumber
  readonly version: number
  readonly resolve: (v: unknown) => void
  readonly reject: (e: unknown) => void
  readonly timer: NodeJS.Timeout
}

export interface SendOptions {
  /** the exact version to send; by default the highest version both sides support */
  readonly version?: number
  /** cap for the negotiated version */
  readonly maxVersion?: number
  readonly timeoutMs?: number
}

/** A connection whose ApiVersions exchange has completed. Create with `Connection.open`. */
export class Connection {
  readonly host: string
  readonly port: number
  readonly #socket: net.Socket
  readonly #clientId: string | null
  readonly #requestTimeoutMs: number
  readonly #logger: Logger
  readonly #decoder = new FrameDecoder()
  readonly #pending = new Map<number, Pending>()
  readonly #closeListeners: Array<(e: KafkaError) => void> = []
  #nextCorrelationId = 0
  #closed: KafkaError | null = null
  #apiVersions = new Map<number, VersionRange>()
  /** set while re-authenticating: other requests wait for it */
  #gate: Promise<void> | null = null
  #drainWaiters: Array<() => void> = []
  #reauthTimer: NodeJS.Timeout | null = null
  #sasl: SaslOptions | null = null
  #sessionExpiresAt: number | null = null

  private constructor(socket: net.Socket, opts: ConnectionOptions) {
    this.host = opts.host
    this.port = opts.port
    this.#socket = socket
    this.#clientId = opts.clientId === undefined ? 'topograph' : opts.clientId
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? 30_000
    this.#logger = opts.logger ?? silentLogger
    socket.on('data', (chunk: Buffer) => this.#onData(chunk))
    socket.on('error', (err) =>
      this.#fail(
        isTlsFailure(err)
          ? new SslAuthenticationError(`SSL handshake with ${this.address} failed: ${err.message}`, err)
          : new DisconnectError(`Connection to ${this.address} failed: ${err.message}`, err),
      ),
    )
    socket.on('close', () => this.#fail(new DisconnectError(`Connection to ${this.address} was closed`)))
  }

  /**
   * Opens a TCP or TLS connection, negotiates API versions (KIP-511 fallback included) and, on a
   * SASL protocol, authenticates.
   */
  static async open(opts: ConnectionOptions): Promise<Connection> {
    const security = opts.resolvedSecurity ?? resolveSecurity(opts)
    const timeoutMs = opts.connectTimeoutMs ?? opts.requestTimeoutMs ?? 30_000
    const socket =
      security.tls === null
        ? await connectSocket(opts.host, opts.port, timeoutMs)
        : await connectTlsSocket(opts.host, opts.port, timeoutMs, security.tls)
    const conn = new Connection(socket, opts)
    try {
      await conn.#negotiate(opts)
      if (security.sasl !== null) {
        conn.#sasl = security.sasl
        await conn.#authenticate(false)
      }
    } catch (e) {
      conn.close()
      throw e
    }
    return conn
  }

  get address(): string {
    return `${this.host}:${this.port}`
  }

  get closed(): boolean {
    return this.#closed !== null
  }

  /** The broker's version range for `apiKey`, or undefined when it does not offer the API. */
  apiVersionRange(apiKey: number): VersionRange | undefined {
    return this.#apiVersions.get(apiKey)
  }

  /** The highest version both sides support, capped at `maxVersion`. */
  negotiateVersion(apiKey: ApiKeyNumber, maxVersion?: number): number {
    const def = API_DEFINITIONS[apiKey]
    const broker = this.#apiVersions.get(apiKey)
    const ourMax = Math.min(def.maxVersion, maxVersion ?? def.maxVersion)
    if (broker === undefined) {
      throw new UnsupportedVersionError(`The node does not support ${def.name}`)
    }
    const v = Math.min(ourMax, broker.max)
    if (v < Math.max(def.minVersion, broker.min)) {
      throw new UnsupportedVersionError(
        `The node does not support ${def.name} at a version this client supports ` +
          `(broker ${broker.min}-${broker.max}, client ${def.minVersion}-${ourMax})`,
      )
    }
    return v
  }

  onClose(listener: (e: KafkaError) => void): void {
    if (this.#closed !== null) listener(this.#closed)
    else this.#closeListeners.push(listener)
  }

  /** Sends one request and resolves with the decoded response body. */
  send<K extends ApiKeyNumber>(
    apiKey: K,
    request: RequestOf<K>,
    opts: SendOptions = {},
  ): Promise<ResponseOf<K>> {
    if (this.#closed !== null) return Promise.reject(this.#closed)
    // During re-authentication nothing else is sent; the request goes out once it is over.
    if (this.#gate !== null) return this.#gate.then(() => this.send(apiKey, request, opts))
    return this.#sendNow(apiKey, request, opts)
  }

  /** When the SASL session ends (Date.now() ms), or null without a session limit. */
  get sessionExpiresAt(): number | null {
    return this.#sessionExpiresAt
  }

  #sendNow<K extends ApiKeyNumber>(
    apiKey: K,
    request: RequestOf<K>,
    opts: SendOptions = {},
  ): Promise<ResponseOf<K>> {
    if (this.#closed !== null) return Promise.reject(this.#closed)
    let version: number
    let frame: Buffer
    const correlationId = this.#nextCorrelationId
    this.#nextCorrelationId = (this.#nextCorrelationId + 1) | 0
    try {
      version = opts.version ?? this.negotiateVersion(apiKey, opts.maxVersion)
      frame = encodeRequestFrame(apiKey, version, correlationId, this.#clientId, request)
    } catch (e) {
      return Promise.reject(e)
    }
    const timeoutMs = opts.timeoutMs ?? this.#requestTimeoutMs
    return new Promise<ResponseOf<K>>((resolve, reject) => {
      const timer = setTimeout(() => {
        // Kafka disconnects a node whose request timed out; later responses cannot be matched.
        const err = new TimeoutError(
          `Request ${API_DEFINITIONS[apiKey].name} to ${this.address} timed out after ${timeoutMs} ms`,
        )
        this.#pending.delete(correlationId)
        this.#drained()
        reject(err)
        this.#fail(new DisconnectError(`Connection to ${this.address} closed after a request timeout`))
      }, timeoutMs)
      this.#pending.set(correlationId, {
        apiKey,
        version,
        resolve: resolve as (v: unknown) => void,
        reject,
        timer,
      })
      this.#socket.write(frame)
    })
  }

  close(): void {
    this.#fail(new DisconnectError(`Connection to ${this.address} was closed by the client`))
  }

  async #negotiate(opts: ConnectionOptions): Promise<void> {
    const request = {
      clientSoftwareName: opts.clientSoftwareName ?? 'topograph',
      clientSoftwareVersion: opts.clientSoftwareVersion ?? '0.1.0',
      clusterId: null,
      nodeId: -1,
    }
    let version = API_DEFINITIONS[18].maxVersion
    for (let attempt = 0; attempt < 3; attempt++) {
      const res: ApiVersionsResponse = await this.#sendNow(18, request, { version })
      if (res.errorCode === 35) {
        const own = res.apiKeys.find((k) => k.apiKey === 18)
        const next = own === undefined ? 0 : Math.min(own.maxVersion, version - 1)
        this.#logger.debug?.(
          { broker: this.address, version, next },
          'ApiVersions version not supported; retrying',
        )
        if (next < 0 || next >= version) break
        version = next
        continue
      }
      if (res.errorCode !== 0) throw kafkaErrorFromCode(res.errorCode)
      this.#apiVersions = new Map(
        res.apiKeys.map((k) => [k.apiKey, { min: k.minVersion, max: k.maxVersion }]),
      )
      return
    }
    throw new UnsupportedVersionError(`ApiVersions negotiation with ${this.address} failed`)
  }

  /**
   * SaslHandshake v1 then SaslAuthenticate rounds until the mechanism is complete. A refusal is a
   * SaslAuthenticationError with the broker's message (the broker closes the connection after it).
   */
  async #authenticate(reauthentication: boolean): Promise<void> {
    const sasl = this.#sasl!
    const handshake = this.#apiVersions.get(17)
    if (handshake === undefined || handshake.max < 1 || this.#apiVersions.get(36) === undefined) {
      throw new UnsupportedVersionError(
        `${this.address} does not offer SaslHandshake v1 and SaslAuthenticate; check security.protocol`,
      )
    }
    const hs = await this.#sendNow(17, { mechanism: sasl.mechanism }, { version: 1 })
    if (hs.errorCode === 33) {
      throw new KafkaError(
        `Client SASL mechanism ${sasl.mechanism} is not enabled on ${this.address}; enabled mechanisms: ${hs.mechanisms.join(', ')}`,
        { code: 33, errorName: 'UNSUPPORTED_SASL_MECHANISM' },
      )
    }
    if (hs.errorCode === 34) {
      throw new KafkaError(
        `${this.address} refused SaslHandshake (ILLEGAL_SASL_STATE): the listener does not use SASL, check security.protocol`,
        { code: 34, errorName: 'ILLEGAL_SASL_STATE' },
      )
    }
    if (hs.errorCode !== 0) throw kafkaErrorFromCode(hs.errorCode)
    const version = this.negotiateVersion(36)
    const mechanism = createSaslMechanism(sasl)
    let token: Buffer | null = mechanism.initial()
    let lifetimeMs = 0n
    const started = Date.now()
    while (token !== null) {
      const res = await this.#sendNow(36, { authBytes: token }, { version })
      if (res.errorCode !== 0) {
        const known = res.errorCode === 58 || res.errorCode === 33 || res.errorCode === 34
        const message = res.errorMessage ?? kafkaErrorFromCode(res.errorCode).message
        if (!known) throw kafkaErrorFromCode(res.errorCode, res.errorMessage)
        throw new SaslAuthenticationError(message, res.errorMessage)
      }
      lifetimeMs = res.sessionLifetimeMs
      token = await mechanism.next(Buffer.from(res.authBytes))
    }
    if (!mechanism.complete) {
      throw new SaslAuthenticationError(`${sasl.mechanism} exchange with ${this.address} ended early`)
    }
    this.#logger.debug?.(
      {
        broker: this.address,
        mechanism: sasl.mechanism,
        user: sasl.username,
        sessionLifetimeMs: Number(lifetimeMs),
      },
      reauthentication ? 'SASL re-authentication succeeded' : 'SASL authentication succeeded',
    )
    this.#scheduleReauthentication(started, Number(lifetimeMs))
  }

  /**
   * Re-authenticates at 85–95% of the session lifetime, measured from when the exchange started
   * (as Kafka's client does); the broker closes a connection used after its session ended.
   */
  #scheduleReauthentication(startedAt: number, lifetimeMs: number): void {
    if (this.#reauthTimer !== null) clearTimeout(this.#reauthTimer)
    this.#reauthTimer = null
    if (lifetimeMs <= 0) {
      this.#sessionExpiresAt = null
      return
    }
    this.#sessionExpiresAt = startedAt + lifetimeMs
    const at = startedAt + Math.floor(lifetimeMs * (0.85 + Math.random() * 0.1))
    this.#reauthTimer = setTimeout(() => this.#reauthenticate(), Math.max(0, at - Date.now()))
    this.#reauthTimer.unref()
  }

  #reauthenticate(): void {
    this.#reauthTimer = null
    if (this.#closed !== null || this.#gate !== null) return
    const run = (async () => {
      await this.#whenDrained()
      if (this.#closed !== null) return
      await this.#authenticate(true)
    })()
    this.#gate = run.then(
      () => {
        this.#gate = null
      },
      (e: unknown) => {
        this.#gate = null
        const message = e instanceof Error ? e.message : String(e)
        this.#logger.warn?.({ broker: this.address, error: message }, 'SASL re-authentication failed')
        // A retriable close: the next use opens a new connection, which authenticates afresh.
        this.#fail(new DisconnectError(`Re-authentication with ${this.address} failed: ${message}`, e))
      },
    )
  }

  #whenDrained(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.#drainWaiters.push(resolve))
  }

  #drained(): void {
    if (this.#pending.size === 0 && this.#drainWaiters.length > 0) {
      for (const w of this.#drainWaiters.splice(0)) w()
    }
  }

  #onData(chunk: Buffer): void {
    let frames: Buffer[]
    try {
      frames = this.#decoder.push(chunk)
    } catch (e) {
      this.#fail(new DisconnectError(`Bad frame from ${this.address}: ${(e as Error).message}`, e))
      return
    }
    for (const frame of frames) {
      let id: number
      try {
        id = peekCorrelationId(frame)
      } catch (e) {
        this.#fail(new DisconnectError(`Bad frame from ${this.address}: ${(e as Error).message}`, e))
        return
      }
      const p = this.#pending.get(id)
      if (p === undefined) {
        this.#fail(new DisconnectError(`Unexpected correlation id ${id} from ${this.address}`))
        return
      }
      this.#pending.delete(id)
      clearTimeout(p.timer)
      this.#drained()
      try {
        p.resolve(decodeResponseFrame(p.apiKey, p.version, frame))
      } catch (e) {
        p.reject(
          new KafkaError(`Could not decode the response from ${this.address}: ${(e as Error).message}`, {
            cause: e,
          }),
        )
      }
    }
  }

  #fail(err: KafkaError): void {
    if (this.#closed !== null) return
    this.#closed = err
    for (const p of this.#pending.values()) {
      clearTimeout(p.timer)
      p.reject(err)
    }
    this.#pending.clear()
    if (this.#reauthTimer !== null) clearTimeout(this.#reauthTimer)
    this.#reauthTimer = null
    for (const w of this.#drainWaiters.splice(0)) w()
    this.#socket.destroy()
    for (const l of this.#closeListeners.splice(0)) l(err)
  }
}

function connectSocket(host: string, port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port })
    socket.setNoDelay(true)
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new DisconnectError(`Connection to ${host}:${port} timed out after ${timeoutMs} ms`))
    }, timeoutMs)
    socket.once('connect', () => {
      clearTimeout(timer)
      socket.removeAllListeners('error')
      resolve(socket)
    })
    socket.once('error', (err) => {
      clearTimeout(timer)
      socket.destroy()
      reject(new DisconnectError(`Connection to ${host}:${port} failed: ${err.message}`, err))
    })
  })
}

/** True for errors of the TLS layer itself (certificate checks, TLS alerts), not of the network. */
function isTlsFailure(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code ?? ''
  return /^ERR_(SSL|TLS)_/.test(code) || /CERT|SIGNATURE|ISSUER/.test(code)
}

function connectTlsSocket(
  host: string,
  port: number,
  timeoutMs: number,
  options: ResolvedTls,
): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(tlsConnectOptions(options, host, port))
    socket.setNoDelay(true)
    const done = (err: KafkaError | null): void => {
      clearTimeout(timer)
      socket.removeAllListeners('error')
      socket.removeAllListeners('close')
      socket.removeAllListeners('secureConnect')
      if (err === null) resolve(socket)
      else {
        socket.on('error', () => undefined)
        socket.destroy()
        reject(err)
      }
    }
    const timer = setTimeout(
      () => done(new DisconnectError(`Connection to ${host}:${port} timed out after ${timeoutMs} ms`)),
      timeoutMs,
    )
    socket.once('secureConnect', () => done(null))
    socket.once('error', (err) =>
      done(
        isTlsFailure(err)
          ? new SslAuthenticationError(`SSL handshake with ${host}:${port} failed: ${err.message}`, err)
          : new DisconnectError(`Connection to ${host}:${port} failed: ${err.message}`, err),
      ),
    )
    socket.once('close', () =>
      done(new DisconnectError(`Connection to ${host}:${port} was closed during the TLS handshake`)),
    )
  })
}
