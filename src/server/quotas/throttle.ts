/**
 * Where the client quotas meet the request path (Kafka's KafkaApis and RequestHandlerHelper):
 *
 * - every request records its handling time against `request_percentage` (as a percentage of one
 *   second: 10 ms of work is 1), except a Produce with acks=0, as in Kafka;
 * - a Produce records its request size against `producer_byte_rate`;
 * - a Fetch records its response size against `consumer_byte_rate`.
 *
 * The answer carries the longest of the throttle times in ThrottleTimeMs, and the connection reads
 * nothing more for that long (Kafka mutes the channel). Handling time is the synchronous work of
 * the handler and of encoding the answer, the part of a request that holds the event loop (what
 * Kafka measures as request handler thread time); time a request spends awaiting storage or a
 * long poll is not work.
 *
 * Unlike Kafka, a Fetch whose answer takes the client over its byte rate is still answered with
 * its records (Kafka answers it empty and discards what it read); the client is throttled the same,
 * and no fetch session state is lost.
 */
import type { ClientQuotas } from './client-quotas.js'

const PRODUCE = 0
const FETCH = 1

/** The user a principal stands for: its name (`User:alice` → `alice`). */
export function quotaUser(principal: string): string {
  const at = principal.indexOf(':')
  return at < 0 ? principal : principal.slice(at + 1)
}

export interface RequestUsage {
  readonly apiKey: number
  readonly principal: string
  readonly clientId: string | null
  /** Request frame size in bytes. */
  readonly requestBytes: number
  /** Synchronous handling time so far, in ms. */
  handlerMs: number
  /** Produce acks=0: no request-time quota. */
  readonly unanswered: boolean
}

/** Whether any client quota is set, so the request path needs to measure. */
export function quotasActive(quotas: ClientQuotas): boolean {
  return quotas.enabled('request') || quotas.enabled('produce') || quotas.enabled('fetch')
}

/**
 * Records the request and returns its throttle time in ms. `responseBytes` is the encoded answer's
 * size (Fetch), or null when there is none yet.
 */
export function recordRequest(
  quotas: ClientQuotas,
  u: RequestUsage,
  responseBytes: number | null,
  nowMs: number,
): number {
  const user = quotaUser(u.principal)
  const clientId = u.clientId ?? ''
  let throttle = 0
  if (u.apiKey === PRODUCE) {
    throttle = quotas.recordAndThrottleMs('produce', user, clientId, u.requestBytes, nowMs)
  } else if (u.apiKey === FETCH && responseBytes !== null) {
    throttle = quotas.recordAndThrottleMs('fetch', user, clientId, responseBytes, nowMs)
  }
  if (!u.unanswered) {
    throttle = Math.max(
      throttle,
      quotas.recordAndThrottleMs('request', user, clientId, u.handlerMs / 10, nowMs),
    )
  }
  return throttle
}
