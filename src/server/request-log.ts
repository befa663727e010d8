// The request log (`request.log.enable`): one line per answered request, as Kafka's request logger
// (`kafka.request.logger` at DEBUG) writes "Completed request: …" for each. It names the API and
// version, the correlation id, the client, the time from the request's read to its answer, and
// the error codes inside the answer, which a Kafka answer carries per topic, partition, group or
// member rather than in one place, so that an operator can see which clients get which errors
// without capturing traffic.
//
// The line is written at INFO through a logger of its own level: enabling the request log writes
// it whatever `log.level` says. Off (the default), the router does nothing extra per request.

import type { Logger } from 'pino'
import { errorName, isKnownErrorCode } from '../protocol/errors.js'

/** What the request log says of one answered request. */
export interface CompletedRequest {
  readonly api: string
  readonly apiKey: number
  readonly apiVersion: number
  readonly correlationId: number
  readonly clientId: string | null
  readonly listener: string
  readonly principal: string
  readonly remote: string
  /** Milliseconds from the request's decoding to its answer (encoded, or none). */
  readonly ms: number
  /** How the request was settled: an answer, none (Produce acks=0), or the connection closed. */
  readonly outcome: 'answered' | 'no answer' | 'closed'
  /** The close's reason when `outcome` is `closed`. */
  readonly reason?: string
  /** The client-quota throttle the answer carries, when there is one. */
  readonly throttleMs?: number
  /** The answer's response object (walked for error codes), when it was answered. */
  readonly response?: unknown
}

/** At most this many distinct error messages are named on a line. */
const MAX_MESSAGES = 3

/**
 * The non-zero `errorCode` fields anywhere in an answer, counted by Kafka error name (in the order
 * they were first met), and the first few distinct non-null `errorMessage` texts beside them.
 * Record bytes and other binary fields are not walked.
 */
export function answerErrors(response: unknown): { codes: Record<string, number>; messages: string[] } {
  const codes: Record<string, number> = {}
  const messages: string[] = []
  const walk = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return
    if (Array.isArray(value)) {
      for (const item of value) walk(item)
      return
    }
    const fields = value as Record<string, unknown>
    for (const key in fields) {
      const field = fields[key]
      if (key === 'errorCode') {
        if (typeof field === 'number' && field !== 0) {
          const name = isKnownErrorCode(field) ? errorName(field) : `error code ${field}`
          codes[name] = (codes[name] ?? 0) + 1
        }
      } else if (key === 'errorMessage') {
        if (typeof field === 'string' && messages.length < MAX_MESSAGES && !messages.includes(field))
          messages.push(field)
      } else if (typeof field === 'object') {
        walk(field)
      }
    }
  }
  walk(response)
  return { codes, messages }
}

/** `NAME ×n, OTHER` (the count only when above one), or `no error`. */
function describeCodes(codes: Record<string, number>): string {
  const parts = Object.entries(codes).map(([name, n]) => (n > 1 ? `${name} ×${n}` : name))
  return parts.length === 0 ? 'no error' : parts.join(', ')
}

/** Writes the request log's lines; made by the router when `request.log.enable` is true. */
export class RequestLog {
  readonly #logger: Logger
  /** Lines written so far. */
  lines = 0

  constructor(parent: Logger) {
    this.#logger = parent.child(
      { component: 'RequestChannel' },
      { level: 'info', msgPrefix: '[RequestChannel] ' },
    )
  }

  completed(r: CompletedRequest): void {
    const client = r.clientId === null ? 'no client id' : `clientId ${JSON.stringify(r.clientId)}`
    const head = `Completed request: ${r.api} v${r.apiVersion} (correlationId ${r.correlationId}, ${client}) from ${r.remote} in ${r.ms.toFixed(2)} ms`
    const fields: Record<string, unknown> = {
      api: r.api,
      apiKey: r.apiKey,
      apiVersion: r.apiVersion,
      correlationId: r.correlationId,
      clientId: r.clientId,
      listener: r.listener,
      principal: r.principal,
      remote: r.remote,
      ms: Number(r.ms.toFixed(3)),
      outcome: r.outcome,
    }
    if (r.throttleMs !== undefined && r.throttleMs > 0) fields.throttleMs = r.throttleMs
    let tail: string
    if (r.outcome === 'closed') {
      fields.reason = r.reason
      tail = `: connection closed (${r.reason})`
    } else if (r.outcome === 'no answer') {
      tail = ': no answer'
    } else {
      const { codes, messages } = answerErrors(r.response)
      fields.errors = codes
      if (messages.length > 0) fields.errorMessages = messages
      tail = `: ${describeCodes(codes)}`
    }
    if (fields.throttleMs !== undefined) tail += `; throttled ${r.throttleMs} ms`
    this.lines++
    this.#logger.info(fields, head + tail)
  }
}
