/**
 * Small pieces the data-plane handlers share: the wire's int64 ↔ the log's numbers, and grouping
 * per-partition answers back into topics in the order they were produced.
 */
import type { PartitionLog } from '../../log/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { RequestContext } from '../router.js'
import { ZERO_UUID } from '../topics/catalog.js'

/** A wire int64 as the log's number (offsets and timestamps are exact below 2^53). */
export function toNumber(v: bigint): number {
  return Number(v)
}

/** A log number as a wire int64. */
export function toBigInt(v: number): bigint {
  return BigInt(v)
}

/** The topic a request names, by name (older versions) or by id (newer ones). */
export interface ResolvedTopic {
  /** The topic's name, or null when an id names no topic. */
  readonly name: string | null
  readonly topicId: string
  /** The catalog's partition count, or 0 for an unknown topic. */
  readonly numPartitions: number
}

/** Looks a topic up by id when `byId`, else by name. */
export function resolveTopic(
  ctx: RequestContext,
  byId: boolean,
  name: string,
  topicId: string,
): ResolvedTopic {
  const topics = ctx.server.topics
  if (byId) {
    const t = topics.byId(topicId)
    return { name: t?.name ?? null, topicId, numPartitions: t?.numPartitions ?? 0 }
  }
  const t = topics.byName(name)
  return { name, topicId: t?.topicId ?? ZERO_UUID, numPartitions: t?.numPartitions ?? 0 }
}

/** The log of a partition that exists, or undefined. */
export function partitionLog(ctx: RequestContext, topic: string, index: number): PartitionLog | undefined {
  if (index < 0) return undefined
  return ctx.server.data.partition(topic, index)
}

/** One cached authorization answer per (operation, topic) within a request. */
export class TopicAuthorizations {
  readonly #ctx: RequestContext
  readonly #cache = new Map<string, boolean>()
  constructor(ctx: RequestContext) {
    this.#ctx = ctx
  }
  allowed(operation: 'READ' | 'WRITE' | 'DESCRIBE' | 'DELETE' | 'ALTER', topic: string): boolean {
    const key = `${operation}\u0000${topic}`
    let ok = this.#cache.get(key)
    if (ok === undefined) {
      ok = this.#ctx.server.authorizer.authorize(this.#ctx.principal, operation, 'TOPIC', topic)
      this.#cache.set(key, ok)
    }
    return ok
  }
}

/**
 * Groups per-partition answers into topic entries: consecutive answers of the same topic share an
 * entry, as Kafka's response builders group them.
 */
export function groupByTopic<K, P, T>(
  answers: readonly { readonly topic: K; readonly partition: P }[],
  makeTopic: (topic: K, partitions: P[]) => T,
): T[] {
  const out: T[] = []
  let current: K | undefined
  let partitions: P[] = []
  let started = false
  for (const a of answers) {
    if (!started || a.topic !== current) {
      if (started) out.push(makeTopic(current as K, partitions))
      current = a.topic
      partitions = []
      started = true
    }
    partitions.push(a.partition)
  }
  if (started) out.push(makeTopic(current as K, partitions))
  return out
}

export const NONE = ErrorCode.NONE
