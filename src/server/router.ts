import type { TransactionCoordinatorService } from '../coordinator/service/transaction-coordinator-service.js'
import type { Logger } from 'pino'
import type { GroupCoordinatorService } from '../coordinator/service/group-coordinator-service.js'
import { ApiError, invalidRequest } from '../protocol/api-error.js'
import { DecodeError, EncodeError } from '../protocol/errors-codec.js'
import { ErrorCode } from '../protocol/errors.js'
import { apiDefinition, type ApiDefinition, type ApiMessageTypes } from '../protocol/generated/registry.js'
import { Reader } from '../protocol/reader.js'
import { Writer } from '../protocol/writer.js'
import {
  type AnswerOutput,
  type DispatchResult,
  type LaterAnswer,
  REFERENCE_RECORDS_FROM,
  type Settled,
  WRITTEN,
} from './connection.js'
import type { TopographConfig } from './config.js'
import type { DataPlane } from './data/data-plane.js'
import type { ClientQuotas } from './quotas/client-quotas.js'
import type { ScramCredentialStore } from './auth/scram-store.js'
import { quotasActive, type RequestUsage, recordRequest } from './quotas/throttle.js'
import { RequestLog } from './request-log.js'
import type { TopicCatalog } from './topics/catalog.js'

/**
 * Whether a request may be pipelined on its connection (see `Connection`): OffsetCommit (8) and
 * OffsetFetch (9), whose work is one operation in the queue of their group's coordinator shard, so
 * the shard keeps them in the order they were sent; and Produce (0) without a transactional id,
 * whose appends all start in its dispatch (offsets, producer state) and which waits only for the
 * turn's write of its partitions (`AppendOptions.coalesce`), so the requests of one socket read
 * share that write. A transactional Produce may wait for the transaction coordinator before it
 * appends: it is not pipelined, so no later request of its connection appends before it.
 */
export function pipelinedRequest(frame: Uint8Array): boolean {
  if (frame.byteLength < 2) return false
  const apiKey = (frame[0] << 8) | frame[1]
  return apiKey === 8 || apiKey === 9 || (apiKey === 0 && withoutTransactionalId(frame))
}

/**
 * Whether a Produce frame (v3 up) names no transactional id: the request header (a flexible one
 * from v9, with its tagged fields), then the body's first field. False when it cannot tell.
 */
function withoutTransactionalId(frame: Uint8Array): boolean {
  const version = (frame[2] << 8) | frame[3]
  if (version < 3 || frame.byteLength < 10) return false
  const clientIdLength = (frame[8] << 8) | frame[9]
  const at = 10 + (clientIdLength === 0xffff ? 0 : clientIdLength)
  if (version >= 9) {
    // The header's tagged fields, then a compact nullable string: length + 1, 0 for null.
    varintEnd = at
    const tags = readVarint(frame)
    if (tags < 0) return false
    for (let i = 0; i < tags; i++) {
      const tag = readVarint(frame)
      const size = readVarint(frame)
      if (tag < 0 || size < 0) return false
      varintEnd += size
    }
    return readVarint(frame) === 0
  }
  return at + 2 <= frame.byteLength && frame[at] === 0xff && frame[at + 1] === 0xff
}

/** Where {@link readVarint} reads next (module state: this runs for every Produce, with no closure). */
let varintEnd = 0

/** The unsigned varint of `frame` at `varintEnd`, which it moves past it; -1 when it is cut short. */
function readVarint(frame: Uint8Array): number {
  let v = 0
  for (let shift = 0; shift < 28 && varintEnd < frame.byteLength; shift += 7) {
    const b = frame[varintEnd++]
    v |= (b & 0x7f) << shift
    if ((b & 0x80) === 0) return v
  }
  return -1
}

/**
 * The API router: one handler per API key, registered by the handler modules
 * (`handlers/NNN-api-name.ts`). It decodes the request header and body, calls the handler and
 * encodes the response frame. ApiVersions advertises exactly the registered handlers' ranges.
 *
 * Refusals follow Kafka's socket server: an API key this server does not serve, a version outside
 * the served range (any API but ApiVersions) or a body that cannot be parsed closes the connection
 * without a response. An ApiVersions request of an unknown version is answered in the v0 layout
 * with UNSUPPORTED_VERSION (KIP-511), which the handler builds.
 *
 * A request the codec decodes but the handler cannot serve is answered, never dropped: the
 * handler's error response with INVALID_REQUEST (or the code of the {@link ApiError} a handler
 * throws), the connection staying open. Three paths lead there, all in this file:
 *   1. before the handler, a request string longer than any response field may carry (32767 UTF-8
 *      bytes; see {@link oversizedRequestString}) — such a value could be echoed back;
 *   2. a handler that throws an {@link ApiError} (Kafka's ApiException, e.g. InvalidRequestException);
 *   3. a response the codec cannot encode (a request value echoed where the response version
 *      cannot carry it, as a null name).
 * Only failures outside these are unexpected: logged at ERROR and answered UNKNOWN_SERVER_ERROR.
 */

/** The longest string, in UTF-8 bytes, any Kafka response field can carry (an int16 length). */
export const MAX_STRING_BYTES = 0x7fff
/**
 * A decoded string is at most 3 UTF-8 bytes per UTF-16 unit once re-encoded (a byte that is not
 * valid UTF-8 decodes to U+FFFD), and has at most as many units as it had bytes: a string read from
 * this many bytes or fewer cannot re-encode to more than {@link MAX_STRING_BYTES}.
 */
const BYTES_WITHOUT_LONG_STRINGS = Math.floor(MAX_STRING_BYTES / 3)

/**
 * The first string of a decoded request whose UTF-8 form is longer than a response string may be,
 * or null. Kafka's own decoder refuses such a string (it reads at most 0x7fff bytes per string);
 * Topograph's decodes compact strings of any length, so the router checks before a handler could
 * store or echo one. `longestStringBytes` is the longest string the request's decoding read
 * (`Reader.longestString`): requests without one of more than {@link BYTES_WITHOUT_LONG_STRINGS}
 * bytes (nearly all; a Produce request's records are bytes, not strings) are not walked.
 */
export function oversizedRequestString(request: unknown, longestStringBytes: number): string | null {
  if (longestStringBytes <= BYTES_WITHOUT_LONG_STRINGS) return null
  return findOversized(request, 0)
}

function findOversized(v: unknown, depth: number): string | null {
  if (typeof v === 'string') {
    return v.length > BYTES_WITHOUT_LONG_STRINGS && Buffer.byteLength(v, 'utf8') > MAX_STRING_BYTES ? v : null
  }
  if (v === null || typeof v !== 'object' || depth > 32 || ArrayBuffer.isView(v)) return null
  if (Array.isArray(v)) {
    for (const x of v) {
      const found = findOversized(x, depth + 1)
      if (found !== null) return found
    }
    return null
  }
  // for-in rather than Object.values: this allocates nothing.
  const o = v as Record<string, unknown>
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue
    const found = findOversized(o[k], depth + 1)
    if (found !== null) return found
  }
  return null
}

/**
 * A copy of a decoded request in which every string too long for a response is empty, so that an
 * error response echoing the request's names can be encoded (Kafka's MetadataRequest error answer
 * likewise turns a name the response cannot carry into "").
 */
export function fitForResponse<T>(v: T, depth = 0): T {
  if (typeof v === 'string') {
    return (Buffer.byteLength(v, 'utf8') > MAX_STRING_BYTES ? '' : v) as T
  }
  if (v === null || typeof v !== 'object' || depth > 32 || ArrayBuffer.isView(v)) return v
  if (Array.isArray(v)) return v.map((x) => fitForResponse(x, depth + 1)) as T
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v)) out[k] = fitForResponse(x, depth + 1)
  return out as T
}

/** The node as clients see it, on the listener a request arrived on. */
export interface AdvertisedNode {
  readonly nodeId: number
  readonly host: string
  readonly port: number
}

/** Says whether a principal may perform an operation on a resource (Kafka's Authorizer, reduced). */
export interface Authorizer {
  authorize(
    principal: string,
    operation: AclOperationName,
    resourceType: 'TOPIC' | 'GROUP' | 'CLUSTER' | 'TRANSACTIONAL_ID',
    resourceName: string,
  ): boolean
}

export type AclOperationName =
  | 'READ'
  | 'WRITE'
  | 'CREATE'
  | 'DELETE'
  | 'ALTER'
  | 'DESCRIBE'
  | 'CLUSTER_ACTION'
  | 'DESCRIBE_CONFIGS'
  | 'ALTER_CONFIGS'
  | 'IDEMPOTENT_WRITE'

/** With no authorizer configured, Kafka allows everything; so does this one. */
export const ALLOW_ALL: Authorizer = { authorize: () => true }

/** What every handler can reach. Built once per server. */
export interface ServerContext {
  readonly config: TopographConfig
  readonly logger: Logger
  readonly topics: TopicCatalog
  readonly clusterId: string
  readonly nodeId: number
  readonly authorizer: Authorizer
  /** The group coordinator, started by the server's composition root (server.ts). */
  readonly coordinator: GroupCoordinatorService
  /** The partition logs and what serves them (Produce, Fetch, ListOffsets, …). */
  readonly data: DataPlane
  /** The transaction coordinator (docs/transactions.md), started by server.ts. */
  readonly transactions: TransactionCoordinatorService
  /** The finalized `transaction.version` feature level (ApiVersions, the request handlers). */
  readonly transactionVersion: number
  /** The client quotas: stored, described, altered, and applied to every request (quotas/). */
  readonly quotas: ClientQuotas
  /** The SCRAM credentials: `sasl.scram.users` and those stored through the Admin API. */
  readonly scram: ScramCredentialStore
  /** The advertised endpoint of the listener with this name (the listener a request came in on). */
  advertisedNode(listenerName: string): AdvertisedNode
  /** Every API this server serves, with the served version range (what ApiVersions advertises). */
  supportedApis(): readonly SupportedApi[]
}

export interface SupportedApi {
  readonly apiKey: number
  readonly minVersion: number
  readonly maxVersion: number
}

/** One request as a handler sees it. */
export interface RequestContext {
  readonly server: ServerContext
  readonly apiKey: number
  readonly apiVersion: number
  readonly correlationId: number
  readonly clientId: string | null
  readonly listenerName: string
  /** `User:ANONYMOUS` on PLAINTEXT listeners, as in Kafka. */
  readonly principal: string
  /** The client's address and port as the connection sees them ("127.0.0.1:50123", "::1:50123"). */
  readonly remote: string
  /**
   * True for an ApiVersions request whose version this server does not know: its body was not
   * parsed and the answer must be the KIP-511 v0 fallback.
   */
  readonly unsupportedVersion: boolean
  /**
   * Buffers the answer references without copying (a Fetch answer's records, read into the log's
   * pool of read buffers): a handler sets the list the log pushes their give-back functions onto,
   * and the connection calls each once the answer's socket write has completed, or at once when
   * no answer is written. Null when the handler borrowed nothing.
   */
  loans: (() => void)[] | null
  /**
   * `performance.now()` when the request had been decoded, for the request log
   * (`request.log.enable`); 0 when the request log is off.
   */
  receivedMs: number
}

/**
 * What a handler returns instead of a response when the request gets none: Produce with acks=0
 * sends nothing back, or closes the connection when a partition failed (Kafka's way of telling such
 * a producer to refresh its metadata).
 */
export const NO_RESPONSE: unique symbol = Symbol('no response')
export class CloseConnection {
  readonly reason: string
  constructor(reason: string) {
    this.reason = reason
  }
}
export type Unanswered = typeof NO_RESPONSE | CloseConnection

export interface ApiHandler<Req = unknown, Res = unknown> {
  readonly apiKey: number
  /** Versions this handler serves; ApiVersions advertises the overlap with the schema's range. */
  readonly minVersion: number
  readonly maxVersion: number
  /**
   * The lowest version ApiVersions advertises when it is below the lowest served one (Produce:
   * Kafka advertises 0 and still refuses v0-v2 requests). Default: `minVersion`.
   */
  readonly advertisedMinVersion?: number
  /**
   * The handler refers to its RequestContext only until `handle` returns, unless it returns a
   * promise (then until the promise settles): the router may then hand the same context object to a
   * later request once this one is answered. Only for handlers that keep nothing of the context in
   * objects that outlive the call (the streams heartbeat).
   */
  readonly keepsNoContext?: boolean
  /**
   * True when the request, answered later (a promise), reads nothing of its frame once `handle` has
   * returned: the connection may then reuse the frame's bytes for its next frame instead of leaving
   * them to this request (`DispatchResult` `frameFree`). Values decoded from the frame that are views
   * of it (a Produce's records) count as reading it.
   */
  frameFreeWhenPending?(request: Req): boolean
  /** Sync handlers answer without a promise (the fast path); async ones may await storage. */
  handle(request: Req, ctx: RequestContext): Res | Unanswered | Promise<Res | Unanswered>
  /**
   * The response for a request the handler failed on unexpectedly (Kafka's getErrorResponse), with
   * every entry carrying `errorCode`. Without it, such a failure closes the connection.
   */
  errorResponse?(request: Req, errorCode: number, ctx: RequestContext): Res
  /**
   * Writes a response body in place of the schema's generated writer, for a handler that keeps
   * encoded parts of its answers (Metadata's topics). It must write exactly the bytes the generated
   * writer would, for every response and version, errors included (it may hand any part it has not
   * cached to the generated writers).
   */
  writeResponse?(w: Writer, response: Res, version: number): void
}

type KnownKey = keyof ApiMessageTypes

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * Kafka's client host of a request: "/" and the peer address without the port ("/127.0.0.1"), an
 * IPv4-mapped IPv6 address written as IPv4 (as Java shows it). Group members carry it in describes.
 */
export function clientHostOf(ctx: RequestContext): string {
  const remote = ctx.remote
  let host = clientHosts.get(remote)
  if (host === undefined) {
    const address = remote
      .replace(/:\d+$/, '')
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/^::ffff:(?=\d+\.)/i, '')
    host = address === '' || address === 'undefined' ? '' : `/${address}`
    if (clientHosts.size >= CLIENT_HOSTS_KEPT) clientHosts.clear()
    clientHosts.set(remote, host)
  }
  return host
}

/**
 * The client hosts of recent remotes: every request of a connection carries the same remote string,
 * so its host is worked out once instead of per request (group heartbeats ask for it every time).
 */
const clientHosts = new Map<string, string>()
const CLIENT_HOSTS_KEPT = 1024

/** Types a handler by its API key: request and response are the generated message types. */
export function defineHandler<K extends KnownKey>(
  handler: { readonly apiKey: K } & ApiHandler<ApiMessageTypes[K]['request'], ApiMessageTypes[K]['response']>,
): ApiHandler<ApiMessageTypes[K]['request'], ApiMessageTypes[K]['response']> {
  return handler
}

/** Per-connection facts the router needs. */
export interface ConnectionInfo {
  readonly listenerName: string
  readonly principal: string
  readonly remote: string
}

interface Route {
  readonly handler: ApiHandler
  readonly def: ApiDefinition
  /** The handler's own body writer, or undefined for the schema's. */
  readonly write: BodyWriter | undefined
  readonly minVersion: number
  readonly maxVersion: number
  readonly advertisedMinVersion: number
  /** Requests read, by version (Kafka's RequestsPerSec; the metrics read them at scrape time). */
  readonly requests: Float64Array
}

const API_VERSIONS_KEY = 18

/** The router's steps a {@link PendingAnswer} answers through (set by the router's static block). */
let answerPending: (
  router: ApiRouter,
  p: PendingAnswer,
  value: unknown,
  out: AnswerOutput | undefined,
) => Settled
let failPending: (router: ApiRouter, p: PendingAnswer, err: unknown) => Settled

export class ApiRouter {
  readonly #routes = new Map<number, Route>()
  /**
   * The reader of every request: a request is decoded whole before its handler runs, and nothing
   * decoded refers to the reader, so one serves the requests of every connection in turn.
   */
  readonly #reader = new Reader(new Uint8Array(0))
  #supported: SupportedApi[] | null = null
  #context: ServerContext | undefined
  #logger: Logger | undefined
  /** The request log when `request.log.enable` is set (request-log.ts), else null. */
  #requestLog: RequestLog | null = null
  /** A request context no request refers to any more, for a handler that keeps none (see dispatch). */
  #freeContext: Mutable<RequestContext> | null = null

  /** Adds a handler; a second handler for the same API key is a programming error. */
  register(handler: ApiHandler): void {
    const def = apiDefinition(handler.apiKey)
    if (def === undefined) throw new Error(`no schema for API key ${handler.apiKey}`)
    if (this.#routes.has(handler.apiKey))
      throw new Error(`API key ${handler.apiKey} (${def.name}) is registered twice`)
    const minVersion = Math.max(handler.minVersion, def.minVersion)
    const maxVersion = Math.min(handler.maxVersion, def.maxVersion)
    if (minVersion > maxVersion) {
      throw new Error(
        `${def.name} handler serves ${handler.minVersion}-${handler.maxVersion}, outside the schema's ${def.minVersion}-${def.maxVersion}`,
      )
    }
    const advertisedMinVersion = Math.min(minVersion, handler.advertisedMinVersion ?? minVersion)
    const write = handler.writeResponse?.bind(handler)
    const requests = new Float64Array(maxVersion + 1)
    this.#routes.set(handler.apiKey, {
      handler,
      def,
      write,
      minVersion,
      maxVersion,
      advertisedMinVersion,
      requests,
    })
    this.#supported = null
  }

  has(apiKey: number): boolean {
    return this.#routes.has(apiKey)
  }

  /** The requests read so far per API and version (only those with at least one). */
  requestCounts(): { request: string; version: number; count: number }[] {
    const out: { request: string; version: number; count: number }[] = []
    for (const r of this.#routes.values()) {
      for (let v = 0; v < r.requests.length; v++) {
        if (r.requests[v] > 0) out.push({ request: r.def.name, version: v, count: r.requests[v] })
      }
    }
    return out
  }

  supportedApis(): readonly SupportedApi[] {
    if (this.#supported === null) {
      this.#supported = [...this.#routes.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([apiKey, r]) => ({ apiKey, minVersion: r.advertisedMinVersion, maxVersion: r.maxVersion }))
    }
    return this.#supported
  }

  /** Binds the server context; called once before the listener accepts connections. */
  bind(context: ServerContext): void {
    this.#context = context
    this.#logger = context.logger
    this.#requestLog = context.config.requestLogEnable ? new RequestLog(context.logger) : null
    this.#freeContext = null
  }

  /**
   * Handles one frame (size prefix removed) from a connection. An answer ready at once is encoded
   * into `out` when the connection offers it (and no quota or borrowed buffer is involved): the
   * result is then {@link WRITTEN}. A handler's promise comes back as a {@link PendingAnswer}, which
   * the connection encodes the same way once the answer's turn to be written has come.
   */
  dispatch(frame: Uint8Array, conn: ConnectionInfo, out?: AnswerOutput): DispatchResult {
    const context = this.#context
    if (context === undefined) throw new Error('router used before bind()')
    if (frame.byteLength < 8)
      return this.#undecodable(conn, `request header truncated (${frame.byteLength} bytes)`)
    const r = this.#reader.reset(frame)
    let apiKey: number
    let apiVersion: number
    let correlationId: number
    let clientId: string | null
    let route: Route | undefined
    let unsupportedVersion = false
    try {
      apiKey = r.readInt16()
      apiVersion = r.readInt16()
      correlationId = r.readInt32()
      route = this.#routes.get(apiKey)
      if (route === undefined) {
        return this.#undecodable(conn, `unknown or unserved API key ${apiKey}`)
      }
      if (apiVersion < route.minVersion || apiVersion > route.maxVersion) {
        if (apiKey !== API_VERSIONS_KEY) {
          return this.#undecodable(
            conn,
            `Received request api key ${route.def.name} with version ${apiVersion} which is not enabled`,
          )
        }
        unsupportedVersion = true
      } else route.requests[apiVersion]++
      clientId = r.readNullableString()
      // Header v2 (flexible versions) ends with a tagged-field section. For an ApiVersions version
      // this server does not know, Kafka still reads the header as v2 from version 3 up.
      const first = route.def.firstFlexibleVersion
      if (first !== null && apiVersion >= first) skipTaggedFields(r)
    } catch (err) {
      if (err instanceof DecodeError)
        return this.#undecodable(conn, `request header malformed: ${err.message}`)
      throw err
    }

    let request: unknown
    if (unsupportedVersion) {
      request = route.def.createRequest()
    } else {
      try {
        request = route.def.readRequest(r, apiVersion)
      } catch (err) {
        if (err instanceof DecodeError) {
          return this.#undecodable(
            conn,
            `Error getting request for apiKey: ${route.def.name}, apiVersion: ${apiVersion}: ${err.message}`,
          )
        }
        throw err
      }
    }

    // A handler that keeps no context gets the one the previous such request left, when it is free.
    const reused = route.handler.keepsNoContext === true ? this.#freeContext : null
    let ctx: RequestContext
    if (reused !== null) {
      this.#freeContext = null
      reused.apiKey = apiKey
      reused.apiVersion = apiVersion
      reused.correlationId = correlationId
      reused.clientId = clientId
      reused.listenerName = conn.listenerName
      reused.principal = conn.principal
      reused.remote = conn.remote
      reused.unsupportedVersion = unsupportedVersion
      reused.loans = null
      reused.receivedMs = this.#requestLog === null ? 0 : performance.now()
      ctx = reused
    } else {
      ctx = {
        server: context,
        apiKey,
        apiVersion,
        correlationId,
        clientId,
        listenerName: conn.listenerName,
        principal: conn.principal,
        remote: conn.remote,
        unsupportedVersion,
        loans: null,
        receivedMs: this.#requestLog === null ? 0 : performance.now(),
      }
    }
    const answer = this.#answer(route, request, ctx, frame.byteLength, r.longestString, conn, out)
    // Free again once the request is answered, unless its answer comes later (a promise refers to
    // the context until then).
    if (route.handler.keepsNoContext === true && answer.kind !== 'pending') this.#freeContext = ctx
    return answer
  }

  /** Runs the handler on a decoded request and encodes what it answers (see `dispatch`). */
  #answer(
    route: Route,
    request: unknown,
    ctx: RequestContext,
    frameBytes: number,
    longestStringBytes: number,
    conn: ConnectionInfo,
    out: AnswerOutput | undefined,
  ): DispatchResult {
    const unsupportedVersion = ctx.unsupportedVersion
    // The KIP-511 fallback is written in the v0 layout.
    const responseVersion = unsupportedVersion ? 0 : ctx.apiVersion
    if (!unsupportedVersion && oversizedRequestString(request, longestStringBytes) !== null) {
      return this.#refused(
        route,
        request,
        ctx,
        invalidRequest(`a string of the request is longer than ${MAX_STRING_BYTES} bytes`),
        conn,
      )
    }
    let result: unknown
    const started = performance.now()
    try {
      result = route.handler.handle(request, ctx)
    } catch (err) {
      return withLoans(ctx, this.#failed(route, request, ctx, err, conn))
    }
    // Client quotas measure the request only when some quota is set.
    const usage: RequestUsage | undefined = quotasActive(ctx.server.quotas)
      ? {
          apiKey: ctx.apiKey,
          principal: conn.principal,
          clientId: ctx.clientId,
          requestBytes: frameBytes + 4,
          handlerMs: performance.now() - started,
          unanswered: ctx.apiKey === 0 && (request as { acks?: number }).acks === 0,
        }
      : undefined
    if (result instanceof Promise) {
      const frameFree = route.handler.frameFreeWhenPending?.(request) === true
      return new PendingAnswer(this, result, frameFree, route, request, ctx, responseVersion, conn, usage)
    }
    return withLoans(ctx, this.#encode(route, request, ctx, responseVersion, result, conn, usage, out))
  }

  static {
    // PendingAnswer answers through the router's own steps, as the synchronous path does.
    answerPending = (router, p, value, out) =>
      withLoans(p.ctx, router.#encode(p.route, p.request, p.ctx, p.version, value, p.conn, p.usage, out))
    failPending = (router, p, err) => withLoans(p.ctx, router.#failed(p.route, p.request, p.ctx, err, p.conn))
  }

  #encode(
    route: Route,
    request: unknown,
    ctx: RequestContext,
    version: number,
    response: unknown,
    conn: ConnectionInfo,
    usage?: RequestUsage,
    out?: AnswerOutput,
  ): Settled {
    const log = this.#requestLog
    if (log === null) return this.#encodeAnswer(route, request, ctx, version, response, conn, usage, out)
    const lines = log.lines
    const settled = this.#encodeAnswer(route, request, ctx, version, response, conn, usage, out)
    // An answer that could not be encoded is refused with another (#refused → #encode), which
    // logged what was sent instead: this request has its line already.
    if (log.lines === lines) {
      log.completed({
        api: route.def.name,
        apiKey: ctx.apiKey,
        apiVersion: ctx.apiVersion,
        correlationId: ctx.correlationId,
        clientId: ctx.clientId,
        listener: ctx.listenerName,
        principal: ctx.principal,
        remote: conn.remote,
        ms: performance.now() - ctx.receivedMs,
        outcome: settled.kind === 'close' ? 'closed' : settled.kind === 'none' ? 'no answer' : 'answered',
        reason: settled.kind === 'close' ? settled.reason : undefined,
        throttleMs: settled.kind === 'response' || settled.kind === 'none' ? settled.throttleMs : undefined,
        response: settled.kind === 'response' || settled.kind === 'written' ? response : undefined,
      })
    }
    return settled
  }

  #encodeAnswer(
    route: Route,
    request: unknown,
    ctx: RequestContext,
    version: number,
    response: unknown,
    conn: ConnectionInfo,
    usage?: RequestUsage,
    out?: AnswerOutput,
  ): Settled {
    // Into `out` when it is offered (and no quota or borrowed buffer is involved).
    if (out !== undefined && usage === undefined && ctx.loans === null) {
      if (encodeInPlace(out, route, version, ctx.correlationId, response)) return WRITTEN
    }
    if (response === NO_RESPONSE) {
      if (usage === undefined) return { kind: 'none' }
      return { kind: 'none', throttleMs: recordRequest(this.#context!.quotas, usage, null, Date.now()) }
    }
    if (response instanceof CloseConnection) return { kind: 'close', reason: response.reason }
    try {
      const started = performance.now()
      let [bytes, length] = encodeResponseChunks(route.def, version, ctx.correlationId, response, route.write)
      if (usage === undefined) return { kind: 'response', bytes }
      usage.handlerMs += performance.now() - started
      const throttleMs = recordRequest(this.#context!.quotas, usage, length, Date.now())
      if (throttleMs <= 0) return { kind: 'response', bytes }
      // The answer carries the throttle time (a copy: handlers may share response objects).
      const own = (response as { throttleTimeMs?: unknown }).throttleTimeMs
      if (typeof own === 'number') {
        const throttled = { ...(response as object), throttleTimeMs: Math.max(own, throttleMs) }
        ;[bytes] = encodeResponseChunks(route.def, version, ctx.correlationId, throttled, route.write)
      }
      return { kind: 'response', bytes, throttleMs }
    } catch (err) {
      // A value of the request echoed where the response cannot carry it (path 3).
      if (err instanceof EncodeError && request !== undefined) {
        return this.#refused(
          route,
          request,
          ctx,
          invalidRequest(`the response cannot carry a value of the request: ${err.message}`),
          conn,
        )
      }
      this.#logger?.error(
        { err, apiKey: ctx.apiKey, apiVersion: version, clientId: ctx.clientId, remote: conn.remote },
        `Failed to encode the ${route.def.name} response; closing the connection`,
      )
      return { kind: 'close', reason: `response encoding failed: ${(err as Error).message}` }
    }
  }

  /**
   * A request the handler cannot serve: the handler's error response with the error's code, built
   * from a copy of the request whose strings fit a response, and encoded without a second chance.
   */
  #refused(
    route: Route,
    request: unknown,
    ctx: RequestContext,
    err: ApiError,
    conn: ConnectionInfo,
  ): Settled {
    this.#logger?.debug(
      { apiKey: ctx.apiKey, apiVersion: ctx.apiVersion, clientId: ctx.clientId, remote: conn.remote },
      `Invalid ${route.def.name} v${ctx.apiVersion} request (correlationId ${ctx.correlationId}): ${err.message}`,
    )
    const build = route.handler.errorResponse
    if (build === undefined) return { kind: 'close', reason: `invalid request: ${err.message}` }
    let response: unknown
    try {
      response = build.call(route.handler, fitForResponse(request), err.errorCode, ctx)
    } catch (e) {
      return this.#failed(route, undefined, ctx, e, conn)
    }
    return this.#encode(route, undefined, ctx, ctx.apiVersion, response, conn)
  }

  /**
   * A frame that is not a request this server can read: the connection closes, logged at WARN once
   * (Kafka logs "Closing socket for … because of error" when a request cannot be parsed).
   */
  #undecodable(conn: ConnectionInfo, reason: string): Settled {
    this.#logger?.warn(
      { remote: conn.remote, reason },
      `Closing socket for ${conn.remote} because of error: ${reason}`,
    )
    return { kind: 'close', reason }
  }

  #failed(route: Route, request: unknown, ctx: RequestContext, err: unknown, conn: ConnectionInfo): Settled {
    if (err instanceof ApiError && request !== undefined) {
      return this.#refused(route, request, ctx, err, conn)
    }
    this.#logger?.error(
      { err, apiKey: ctx.apiKey, apiVersion: ctx.apiVersion, clientId: ctx.clientId, remote: conn.remote },
      `Unexpected error handling request ${route.def.name} v${ctx.apiVersion} (correlationId ${ctx.correlationId})`,
    )
    const build = route.handler.errorResponse
    if (build === undefined || request === undefined)
      return { kind: 'close', reason: `handler failed: ${(err as Error)?.message}` }
    // UNKNOWN_SERVER_ERROR, as Kafka answers an unexpected exception.
    let response: unknown
    try {
      response = build.call(route.handler, fitForResponse(request), ErrorCode.UNKNOWN_SERVER_ERROR, ctx)
    } catch (e) {
      return { kind: 'close', reason: `handler failed: ${(e as Error)?.message}` }
    }
    return this.#encode(route, undefined, ctx, ctx.apiVersion, response, conn)
  }
}

const NOTHING_TO_WRITE: Settled = Object.freeze({ kind: 'none' })

/**
 * A request whose handler returned a promise. The connection takes it as a {@link LaterAnswer} and
 * encodes the answer once the answer's turn to be written has come, in place next to the answers
 * around it; `promise` gives the encoded answer to any other caller. Either way the answer is the
 * one the router would have made at once: the same encoding, refusals, quotas and loans.
 */
class PendingAnswer implements LaterAnswer {
  readonly kind = 'pending'
  readonly value: Promise<unknown>
  readonly frameFree: boolean
  readonly router: ApiRouter
  readonly route: Route
  readonly request: unknown
  readonly ctx: RequestContext
  readonly version: number
  readonly conn: ConnectionInfo
  readonly usage: RequestUsage | undefined

  constructor(
    router: ApiRouter,
    value: Promise<unknown>,
    frameFree: boolean,
    route: Route,
    request: unknown,
    ctx: RequestContext,
    version: number,
    conn: ConnectionInfo,
    usage: RequestUsage | undefined,
  ) {
    this.router = router
    this.value = value
    this.frameFree = frameFree
    this.route = route
    this.request = request
    this.ctx = ctx
    this.version = version
    this.conn = conn
    this.usage = usage
  }

  get later(): LaterAnswer {
    return this
  }

  get promise(): Promise<DispatchResult> {
    return this.value.then(
      (v) => this.answer(v, undefined),
      (err) => this.fail(err),
    )
  }

  answer(value: unknown, out: AnswerOutput | undefined): Settled {
    return answerPending(this.router, this, value, out)
  }

  fail(err: unknown): Settled {
    return failPending(this.router, this, err)
  }

  drop(): void {
    withLoans(this.ctx, NOTHING_TO_WRITE)
  }
}

/**
 * Encodes a handler's answer into the connection's answer buffer; false (nothing written) when there
 * is no room, when it is not an answer to write, when it refers to records fields instead of copying
 * them, or when it cannot be encoded: the caller then takes the usual path, which answers each of
 * those as before.
 */
function encodeInPlace(
  out: AnswerOutput,
  route: Route,
  version: number,
  correlationId: number,
  response: unknown,
): boolean {
  if (response === NO_RESPONSE || response instanceof CloseConnection) return false
  const w = out.begin()
  if (w === null) return false
  try {
    writeResponseFrame(w, route.def, version, correlationId, response, route.write)
  } catch {
    out.abort()
    return false
  }
  if (w.refersToRecords) {
    out.abort()
    return false
  }
  w.patchInt32(w.start, w.length - 4)
  out.commit()
  return true
}

/**
 * The answer with the give-back of what its handler borrowed (ctx.loans), which the connection calls
 * once the answer is written. When nothing is written (a close, no answer), it is called at once.
 */
function withLoans(ctx: RequestContext, result: Settled): Settled {
  const loans = ctx.loans
  if (loans === null) return result
  ctx.loans = null
  if (loans.length === 0) return result
  const release = () => {
    for (const giveBack of loans) giveBack()
  }
  if (result.kind === 'response') return { ...result, release }
  release()
  return result
}

function skipTaggedFields(r: Reader): void {
  const n = r.readUVarint()
  for (let i = 0; i < n; i++) {
    r.readUVarint()
    const size = r.readTaggedSize()
    r.readRaw(size)
  }
}

/** Writes a response body (a handler's `writeResponse`). */
type BodyWriter = (w: Writer, body: unknown, version: number) => void

export { REFERENCE_RECORDS_FROM }

function writeResponseFrame(
  w: Writer,
  def: ApiDefinition,
  version: number,
  correlationId: number,
  body: unknown,
  write?: BodyWriter,
) {
  w.writeInt32(0)
  w.writeInt32(correlationId)
  const first = def.firstFlexibleVersion
  if (def.apiKey !== API_VERSIONS_KEY && first !== null && version >= first) w.writeUVarint(0)
  if (write !== undefined) write(w, body, version)
  else def.writeResponse(w, body, version)
}

/**
 * Size prefix, response header (v0: correlation id; v1 adds an empty tagged-field section;
 * ApiVersions always v0), body (by `write` when given, else the schema's writer). The size is
 * back-patched once the body is written.
 */
export function encodeResponseFrame(
  def: ApiDefinition,
  version: number,
  correlationId: number,
  body: unknown,
  write?: BodyWriter,
): Buffer {
  const w = new Writer(128)
  writeResponseFrame(w, def, version, correlationId, body, write)
  const out = w.finish()
  out.writeInt32BE(out.length - 4, 0)
  return out
}

/**
 * The same frame as {@link encodeResponseFrame}, byte for byte, as one buffer or, when it holds
 * records fields of at least {@link REFERENCE_RECORDS_FROM} bytes, as chunks to write in order:
 * those fields are the log's buffers themselves, not copies. The second member is the frame's size.
 */
export function encodeResponseChunks(
  def: ApiDefinition,
  version: number,
  correlationId: number,
  body: unknown,
  write?: BodyWriter,
): [Buffer | Buffer[], number] {
  const w = new Writer(128, REFERENCE_RECORDS_FROM)
  writeResponseFrame(w, def, version, correlationId, body, write)
  const chunks = w.finishChunks()
  const length = w.length
  chunks[0].writeInt32BE(length - 4, 0)
  return [chunks.length === 1 ? chunks[0] : chunks, length]
}
