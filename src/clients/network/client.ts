/**
 * The cluster view shared by the admin client and the streams member: bootstrap servers, one
 * connection per broker, metadata, coordinator discovery (FindCoordinator, batched from v4) and
 * retries with exponential back-off until a deadline.
 */
import { API_DEFINITIONS } from '../../protocol/generated/registry.js'
import type { MetadataResponse } from '../../protocol/generated/messages/MetadataResponse.js'
import { ExponentialBackoff } from './backoff.js'
import { Connection, type SendOptions } from './connection.js'
import {
  ClientClosedError,
  DisconnectError,
  isCoordinatorError,
  KafkaError,
  kafkaErrorFromCode,
  TimeoutError,
} from './errors.js'
import type { ApiKeyNumber, RequestOf, ResponseOf } from './framing.js'
import { type Logger, silentLogger } from './logger.js'
import { type ResolvedSecurity, resolveSecurity, type SecurityOptions } from './security.js'

export interface BrokerNode {
  readonly nodeId: number
  readonly host: string
  readonly port: number
}

export interface NetworkClientOptions extends SecurityOptions {
  /** `host:port` list, as a comma-separated string or an array */
  readonly bootstrapServers: string | readonly string[]
  readonly clientId?: string
  /** request.timeout.ms (30000) */
  readonly requestTimeoutMs?: number
  /** retry.backoff.ms (100) */
  readonly retryBackoffMs?: number
  /** retry.backoff.max.ms (1000) */
  readonly retryBackoffMaxMs?: number
  /** socket.connection.setup.timeout.ms (10000) */
  readonly connectTimeoutMs?: number
  readonly logger?: Logger
}

/** FindCoordinator key types. */
export const CoordinatorType = { GROUP: 0, TRANSACTION: 1, SHARE: 2 } as const

/** Parses `host:port[,host:port…]`; IPv6 hosts go in brackets. Throws a clear error on bad input. */
export function parseBootstrapServers(
  input: string | readonly string[],
): Array<{ host: string; port: number }> {
  const items = (typeof input === 'string' ? input.split(',') : [...input])
    .map((s) => s.trim())
    .filter((s) => s)
  if (items.length === 0) throw new KafkaError('No bootstrap servers given.', { errorName: 'CONFIG' })
  return items.map((item) => {
    const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(item)
    const port = m === null ? Number.NaN : Number(m[3])
    if (m === null || port < 1 || port > 65535) {
      throw new KafkaError(`Invalid url in bootstrap.servers: ${item}`, {
        errorName: 'CONFIG',
        javaClassName: 'org.apache.kafka.common.config.ConfigException',
      })
    }
    return { host: (m[1] ?? m[2])!, port }
  })
}

export interface RetryOptions {
  /** absolute deadline (Date.now() ms) */
  readonly deadline: number
  /** label used in the timeout message */
  readonly operation: string
}

export class NetworkClient {
  readonly #bootstrap: Array<{ host: string; port: number }>
  readonly #opts: NetworkClientOptions
  readonly #security: ResolvedSecurity
  readonly #logger: Logger
  readonly #backoff: ExponentialBackoff
  readonly #connections = new Map<string, Promise<Connection>>()
  readonly #coordinators = new Map<string, BrokerNode>()
  #brokers = new Map<number, BrokerNode>()
  #bootstrapIndex = 0
  #closed = false
  readonly requestTimeoutMs: number

  constructor(opts: NetworkClientOptions) {
    this.#bootstrap = parseBootstrapServers(opts.bootstrapServers)
    this.#opts = opts
    this.#security = resolveSecurity(opts)
    this.#logger = opts.logger ?? silentLogger
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000
    this.#backoff = new ExponentialBackoff({
      initialMs: opts.retryBackoffMs ?? 100,
      maxMs: opts.retryBackoffMaxMs ?? 1000,
    })
  }

  /** The security protocol connections use. */
  get securityProtocol(): ResolvedSecurity['protocol'] {
    return this.#security.protocol
  }

  get logger(): Logger {
    return this.#logger
  }

  /** The connection to `host:port`, opened (and version-negotiated) on first use. */
  connect(host: string, port: number): Promise<Connection> {
    if (this.#closed) return Promise.reject(new ClientClosedError())
    const key = `${host}:${port}`
    const existing = this.#connections.get(key)
    if (existing !== undefined) return existing
    const p = Connection.open({
      host,
      port,
      clientId: this.#opts.clientId ?? 'topograph',
      requestTimeoutMs: this.requestTimeoutMs,
      connectTimeoutMs: this.#opts.connectTimeoutMs ?? 10_000,
      logger: this.#logger,
      resolvedSecurity: this.#security,
    }).then(
      (conn) => {
        conn.onClose(() => {
          if (this.#connections.get(key) === p) this.#connections.delete(key)
        })
        if (this.#closed) conn.close()
        return conn
      },
      (e: unknown) => {
        if (this.#connections.get(key) === p) this.#connections.delete(key)
        throw e
      },
    )
    this.#connections.set(key, p)
    return p
  }

  /** A connection to any broker: a known one, else the bootstrap servers in turn. */
  async anyConnection(): Promise<Connection> {
    const known = [...this.#brokers.values()]
    const candidates = [...known, ...this.#bootstrap.map((b) => ({ nodeId: -1, ...b }))]
    let last: unknown
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[(this.#bootstrapIndex + i) % candidates.length]!
      try {
        return await this.connect(c.host, c.port)
      } catch (e) {
        last = e
      }
    }
    this.#bootstrapIndex++
    throw last instanceof KafkaError ? last : new DisconnectError('No broker is reachable', last)
  }

  /** Sends to any broker. */
  async sendAny<K extends ApiKeyNumber>(
    apiKey: K,
    request: RequestOf<K>,
    opts?: SendOptions,
  ): Promise<ResponseOf<K>> {
    const conn = await this.anyConnection()
    return conn.send(apiKey, request, opts)
  }

  /** Sends to `node`. */
  async sendTo<K extends ApiKeyNumber>(
    node: BrokerNode,
    apiKey: K,
    request: RequestOf<K>,
    opts?: SendOptions,
  ): Promise<ResponseOf<K>> {
    const conn = await this.connect(node.host, node.port)
    return conn.send(apiKey, request, opts)
  }

  /** Fetches metadata (`topics` null = all topics) and refreshes the broker list. */
  async metadata(topics: readonly string[] | null = null): Promise<MetadataResponse> {
    const conn = await this.anyConnection()
    const version = conn.negotiateVersion(3)
    const res = await conn.send(
      3,
      {
        topics:
          topics === null
            ? version === 0
              ? []
              : null
            : topics.map((name) => ({ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name })),
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      },
      { version },
    )
    this.#brokers = new Map(
      res.brokers.map((b) => [b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port }]),
    )
    return res
  }

  /** Known brokers from the last metadata response. */
  get brokers(): readonly BrokerNode[] {
    return [...this.#brokers.values()]
  }

  /** The cached coordinator of `key`, if any. */
  cachedCoordinator(key: string, keyType = 0): BrokerNode | undefined {
    return this.#coordinators.get(`${keyType}:${key}`)
  }

  /** Forgets the coordinator of `key` so the next call looks it up again. */
  markCoordinatorUnknown(key: string, keyType = 0): void {
    this.#coordinators.delete(`${keyType}:${key}`)
  }

  /**
   * Looks up the coordinators of several keys (one FindCoordinator v4+ request, or one request per
   * key before v4). Each key maps to a node or to the error the broker gave for it.
   */
  async findCoordinators(
    keys: readonly string[],
    keyType = 0,
  ): Promise<Map<string, BrokerNode | KafkaError>> {
    const out = new Map<string, BrokerNode | KafkaError>()
    const missing: string[] = []
    for (const k of keys) {
      const c = this.#coordinators.get(`${keyType}:${k}`)
      if (c !== undefined) out.set(k, c)
      else if (!missing.includes(k)) missing.push(k)
    }
    if (missing.length === 0) return out
    const conn = await this.anyConnection()
    const version = conn.negotiateVersion(10)
    const record = (k: string, code: number, msg: string | null, node: BrokerNode): void => {
      if (code !== 0) out.set(k, kafkaErrorFromCode(code, msg))
      else {
        this.#coordinators.set(`${keyType}:${k}`, node)
        out.set(k, node)
      }
    }
    if (version >= 4) {
      const res = await conn.send(10, { key: '', keyType, coordinatorKeys: missing }, { version })
      for (const c of res.coordinators) {
        record(c.key, c.errorCode, c.errorMessage, { nodeId: c.nodeId, host: c.host, port: c.port })
      }
      for (const k of missing) {
        if (!out.has(k))
          out.set(
            k,
            new KafkaError(`No coordinator returned for ${k}`, {
              errorName: 'COORDINATOR_NOT_AVAILABLE',
              code: 15,
              retriable: true,
            }),
          )
      }
    } else {
      for (const k of missing) {
        const res = await conn.send(10, { key: k, keyType, coordinatorKeys: [] }, { version })
        record(k, res.errorCode, res.errorMessage, { nodeId: res.nodeId, host: res.host, port: res.port })
      }
    }
    return out
  }

  /** The coordinator of one key; throws the broker's error for it. */
  async findCoordinator(key: string, keyType = 0): Promise<BrokerNode> {
    const r = (await this.findCoordinators([key], keyType)).get(key)!
    if (r instanceof KafkaError) throw r
    return r
  }

  /** The back-off before attempt `attempts + 1`. */
  backoffMs(attempts: number): number {
    return this.#backoff.backoff(attempts)
  }

  /**
   * Runs `fn` until it succeeds, a non-retriable error occurs or the deadline passes. Coordinator
   * errors clear the cached coordinator of `coordinatorKey` before the next attempt.
   */
  async withRetries<T>(
    fn: (attempt: number) => Promise<T>,
    opts: RetryOptions & { readonly coordinatorKey?: string },
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.#closed) throw new ClientClosedError()
      try {
        return await fn(attempt)
      } catch (e) {
        if (!(e instanceof KafkaError) || !e.retriable) throw e
        if (isCoordinatorError(e) && opts.coordinatorKey !== undefined)
          this.markCoordinatorUnknown(opts.coordinatorKey)
        if (e instanceof DisconnectError && opts.coordinatorKey !== undefined)
          this.markCoordinatorUnknown(opts.coordinatorKey)
        const wait = this.backoffMs(attempt)
        if (Date.now() + wait >= opts.deadline) {
          throw new TimeoutError(
            `Timed out waiting for ${opts.operation} after ${attempt + 1} attempt(s): ${e.message}`,
            e,
          )
        }
        this.#logger.debug?.({ operation: opts.operation, attempt, wait, error: e.message }, 'retrying')
        await sleep(wait)
      }
    }
  }

  /** Closes every connection; pending calls fail with a ClientClosedError or DisconnectError. */
  async close(): Promise<void> {
    this.#closed = true
    const all = [...this.#connections.values()]
    this.#connections.clear()
    await Promise.all(
      all.map((p) =>
        p.then(
          (c) => c.close(),
          () => undefined,
        ),
      ),
    )
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms))
}

/** Kafka's name of an API key (`StreamsGroupDescribe`). */
export function apiName(apiKey: ApiKeyNumber): string {
  return API_DEFINITIONS[apiKey].name
}
