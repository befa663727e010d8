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

/**
 * One cached authorization answer per (operation, topic) within a request. Most requests name one
 * topic (a Produce of one batch, a consumer's Fetch): the first answer is kept in fields, and a map
 * is made only for a second pair.
 */
export class TopicAuthorizations {
  readonly #ctx: RequestContext
  #operation: string | null = null
  #topic = ''
  #ok = false
  #more: Map<string, boolean> | null = null
  constructor(ctx: RequestContext) {
    this.#ctx = ctx
  }
  allowed(operation: 'READ' | 'WRITE' | 'DESCRIBE' | 'DELETE' | 'ALTER', topic: string): boolean {
    if (this.#operation === null) {
      this.#operation = operation
      this.#topic = topic
      this.#ok = this.#authorize(operation, topic)
      return this.#ok
    }
    if (operation === this.#operation && topic === this.#topic) return this.#ok
    const key = `${operation}\u0000${topic}`
    this.#more ??= new Map()
    let ok = this.#more.get(key)
    if (ok === undefined) {
      ok = this.#authorize(operation, topic)
      this.#more.set(key, ok)
    }
    return ok
  }
  #authorize(operation: 'READ' | 'WRITE' | 'DESCRIBE' | 'DELETE' | 'ALTER', topic: string): boolean {
    return this.#ctx.server.authorizer.authorize(this.#ctx.principal, operation, 'TOPIC', topic)
  }
}

/**
 * Groups per-partition answers into topic entries: consecutive items of the same topic (`topicOf`)
 * share an entry, as Kafka's response builders group them. `partitionOf` gives an item's answer (with
 * its index in `items`), `makeTopic` the entry from its topic, its answers and its first item.
 */
export function groupByTopic<I, K, P, T>(
  items: readonly I[],
  topicOf: (item: I) => K,
  partitionOf: (item: I, index: number) => P,
  makeTopic: (topic: K, partitions: P[], first: I) => T,
): T[] {
  const out: T[] = []
  let start = 0
  while (start < items.length) {
    const first = items[start]
    const topic = topicOf(first)
    const partitions: P[] = [partitionOf(first, start)]
    let i = start + 1
    for (; i < items.length && topicOf(items[i]) === topic; i++) partitions.push(partitionOf(items[i], i))
    out.push(makeTopic(topic, partitions, first))
    start = i
  }
  return out
}

export const NONE = ErrorCode.NONE
