/**
 * One TCP connection to one broker: correlation ids, pipelined requests (responses arrive in
 * request order), per-request timeouts and ApiVersions negotiation when the connection opens.
 */
import net from 'node:net'
import { API_DEFINITIONS } from '../../protocol/generated/registry.js'
import type { ApiVersionsResponse } from '../../protocol/generated/messages/ApiVersionsResponse.js'
import {
  DisconnectError,
  KafkaError,
  TimeoutError,
  UnsupportedVersionError,
  kafkaErrorFromCode,
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

export interface VersionRange {
  readonly min: number
  readonly max: number
}

/** Hooks reserved for transport security; the connection refuses them until they are implemented. */
export interface SecurityOptions {
  readonly ssl?: unknown
  readonly sasl?: unknown
}

export interface ConnectionOptions extends SecurityOptions {
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

  private constructor(socket: net.Socket, opts: ConnectionOptions) {
    this.host = opts.host
    this.port = opts.port
    this.#socket = socket
    this.#clientId = opts.clientId === undefined ? 'topograph' : opts.clientId
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? 30_000
    this.#logger = opts.logger ?? silentLogger
    socket.on('data', (chunk: Buffer) => this.#onData(chunk))
    socket.on('error', (err) =>
      this.#fail(new DisconnectError(`Connection to ${this.address} failed: ${err.message}`, err)),
    )
    socket.on('close', () => this.#fail(new DisconnectError(`Connection to ${this.address} was closed`)))
  }

  /** Opens a TCP connection and negotiates API versions (KIP-511 fallback included). */
  static async open(opts: ConnectionOptions): Promise<Connection> {
    if (opts.ssl !== undefined || opts.sasl !== undefined) {
      throw new KafkaError('TLS and SASL are not supported yet; remove the ssl/sasl options.', {
        errorName: 'UNSUPPORTED_SECURITY',
        javaClassName: 'java.lang.UnsupportedOperationException',
      })
    }
    const socket = await connectSocket(
      opts.host,
      opts.port,
      opts.connectTimeoutMs ?? opts.requestTimeoutMs ?? 30_000,
    )
    const conn = new Connection(socket, opts)
    try {
      await conn.#negotiate(opts)
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
      const res: ApiVersionsResponse = await this.send(18, request, { version })
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
