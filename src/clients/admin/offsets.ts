/**
 * Offsets in the admin client, with the semantics of Kafka's Admin:
 *
 * - `listOffsets`: ListOffsets sent to each partition's leader, found through Metadata
 *   (ListOffsetsHandler with PartitionLeaderStrategy);
 * - `alterGroupOffsets`: an OffsetCommit without member or generation, as an admin commit
 *   (AlterConsumerGroupOffsetsHandler; `alterStreamsGroupOffsets` delegates to it, as in Kafka);
 * - `deleteGroupOffsets`: OffsetDelete (DeleteConsumerGroupOffsetsHandler;
 *   `deleteStreamsGroupOffsets` delegates to it).
 *
 * Errors are Kafka's exceptions with Kafka's messages: a partition's error is the error code's
 * exception with its default message; retriable conditions are retried until the call's deadline.
 */
import { errorInfo } from '../../protocol/errors.js'
import type { ListOffsetsRequestListOffsetsTopic } from '../../protocol/generated/messages/ListOffsetsRequest.js'
import type { ListOffsetsResponse } from '../../protocol/generated/messages/ListOffsetsResponse.js'
import type { OffsetCommitRequestOffsetCommitRequestTopic } from '../../protocol/generated/messages/OffsetCommitRequest.js'
import type { BrokerNode, NetworkClient } from '../network/client.js'
import { KafkaError, kafkaErrorFromCode, TimeoutError, UnsupportedVersionError } from '../network/errors.js'
import { javaHashOrder, topicPartitionHash } from '../../java-order.js'
import { topicsMetadata } from './metadata.js'

export interface TopicPartition {
  readonly topic: string
  readonly partition: number
}

/** Kafka's `TopicPartition.toString()`: `topic-partition`. */
export function topicPartitionString(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`
}

const keyOf = (topic: string, partition: number): string => `${topic}\u0000${partition}`

/** What to look up for a partition (Kafka's OffsetSpec). */
export type OffsetSpec =
  | { readonly kind: 'earliest' }
  | { readonly kind: 'latest' }
  | { readonly kind: 'max-timestamp' }
  | { readonly kind: 'earliest-local' }
  | { readonly kind: 'latest-tiered' }
  | { readonly kind: 'earliest-pending-upload' }
  | { readonly kind: 'timestamp'; readonly timestamp: bigint }

export const OffsetSpec = Object.freeze({
  /** the log start offset (ListOffsets -2) */
  earliest: (): OffsetSpec => ({ kind: 'earliest' }),
  /** the offset of the next record to be written (-1) */
  latest: (): OffsetSpec => ({ kind: 'latest' }),
  /** the record with the highest timestamp (-3; brokers from ListOffsets v7) */
  maxTimestamp: (): OffsetSpec => ({ kind: 'max-timestamp' }),
  /** the local log start offset with tiered storage (-4; v8) */
  earliestLocal: (): OffsetSpec => ({ kind: 'earliest-local' }),
  /** the highest offset in remote storage (-5; v9) */
  latestTiered: (): OffsetSpec => ({ kind: 'latest-tiered' }),
  /** the earliest offset not yet uploaded to remote storage (-6; v11) */
  earliestPendingUpload: (): OffsetSpec => ({ kind: 'earliest-pending-upload' }),
  /** the first record whose timestamp is at or after `timestamp` (ms since the epoch) */
  forTimestamp: (timestamp: number | bigint): OffsetSpec => ({
    kind: 'timestamp',
    timestamp: BigInt(timestamp),
  }),
})

/** The ListOffsets timestamp of a spec, and the first request version that carries it. */
function specTimestamp(spec: OffsetSpec): { readonly timestamp: bigint; readonly minVersion: number } {
  switch (spec.kind) {
    case 'earliest':
      return { timestamp: -2n, minVersion: 1 }
    case 'latest':
      return { timestamp: -1n, minVersion: 1 }
    case 'max-timestamp':
      return { timestamp: -3n, minVersion: 7 }
    case 'earliest-local':
      return { timestamp: -4n, minVersion: 8 }
    case 'latest-tiered':
      return { timestamp: -5n, minVersion: 9 }
    case 'earliest-pending-upload':
      return { timestamp: -6n, minVersion: 11 }
    case 'timestamp':
      return { timestamp: spec.timestamp, minVersion: 1 }
  }
}

export interface ListOffsetsQuery extends TopicPartition {
  readonly spec: OffsetSpec
}

export interface ListOffsetsResultInfo {
  readonly offset: bigint
  /** the record's timestamp, or -1 */
  readonly timestamp: bigint
  /** null when the broker gives none (-1) */
  readonly leaderEpoch: number | null
}

export interface ListOffsetsOptions {
  readonly timeoutMs?: number
  /** `read_uncommitted` (default) or `read_committed` (the last stable offset bounds latest) */
  readonly isolationLevel?: 'read_uncommitted' | 'read_committed'
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  // A caller that awaits only some partitions must not see unhandled rejections for the others.
  promise.catch(() => undefined)
  return { promise, resolve, reject }
}

/** java.lang.IllegalArgumentException, as Kafka's result classes throw it. */
function illegalArgument(message: string): KafkaError {
  return new KafkaError(message, {
    errorName: 'ILLEGAL_ARGUMENT',
    javaClassName: 'java.lang.IllegalArgumentException',
  })
}

/** `Errors.forCode(code).exception(message)`: the error's exception with another message. */
function errorWithMessage(code: number, message: string): KafkaError {
  const base = kafkaErrorFromCode(code)
  if (base instanceof UnsupportedVersionError) return new UnsupportedVersionError(message)
  return new KafkaError(message, {
    code: base.code,
    errorName: base.errorName,
    retriable: base.retriable,
    javaClassName: base.javaClassName,
  })
}

/** Per-partition outcomes of `listOffsets`. */
export class ListOffsetsResult {
  readonly #partitions: readonly TopicPartition[]
  readonly #byKey: ReadonlyMap<string, Promise<ListOffsetsResultInfo>>

  constructor(
    partitions: readonly TopicPartition[],
    byKey: ReadonlyMap<string, Promise<ListOffsetsResultInfo>>,
  ) {
    this.#partitions = partitions
    this.#byKey = byKey
  }

  /** The partitions asked about (each once), in request order. */
  get partitions(): readonly TopicPartition[] {
    return this.#partitions
  }

  /** One partition's answer; a partition that was not asked about fails with IllegalArgumentException. */
  partitionResult(topic: string, partition: number): Promise<ListOffsetsResultInfo> {
    const p = this.#byKey.get(keyOf(topic, partition))
    if (p === undefined) {
      return Promise.reject(
        illegalArgument(`List Offsets for partition "${topic}-${partition}" was not attempted`),
      )
    }
    return p
  }

  /** Every answer in request order; rejects with the first failure (request order). */
  async all(): Promise<Array<TopicPartition & ListOffsetsResultInfo>> {
    const out: Array<TopicPartition & ListOffsetsResultInfo> = []
    for (const tp of this.#partitions) {
      out.push({
        topic: tp.topic,
        partition: tp.partition,
        ...(await this.#byKey.get(keyOf(tp.topic, tp.partition))!),
      })
    }
    return out
  }
}

interface Pending {
  readonly tp: TopicPartition
  readonly timestamp: bigint
  readonly minVersion: number
  readonly d: ReturnType<typeof deferred<ListOffsetsResultInfo>>
}

/** Partition errors after which the leader is looked up again (PartitionLeaderStrategy). */
const METADATA_RETRY_PARTITION_ERRORS = new Set([
  'NOT_LEADER_OR_FOLLOWER',
  'REPLICA_NOT_AVAILABLE',
  'LEADER_NOT_AVAILABLE',
  'BROKER_NOT_AVAILABLE',
  'KAFKA_STORAGE_ERROR',
  'UNKNOWN_TOPIC_OR_PARTITION',
])

/**
 * Looks up offsets; each partition's promise settles on its own. Unknown topics fail their
 * partitions (Kafka's admin does not wait for them to appear); a partition the topic does not have
 * is looked up again until the deadline, as Kafka's admin does.
 */
export function listOffsets(
  client: NetworkClient,
  queries: readonly ListOffsetsQuery[],
  opts: ListOffsetsOptions,
  defaultApiTimeoutMs: number,
): ListOffsetsResult {
  const pending = new Map<string, Pending>()
  for (const q of queries) {
    const key = keyOf(q.topic, q.partition)
    const { timestamp, minVersion } = specTimestamp(q.spec)
    const existing = pending.get(key)
    // As in a Java map, the last spec for a partition wins.
    pending.set(key, {
      tp: existing?.tp ?? { topic: q.topic, partition: q.partition },
      timestamp,
      minVersion,
      d: existing?.d ?? deferred(),
    })
  }
  const result = new ListOffsetsResult(
    [...pending.values()].map((p) => p.tp),
    new Map([...pending].map(([k, p]) => [k, p.d.promise])),
  )
  const timeoutMs = opts.timeoutMs ?? defaultApiTimeoutMs
  const readCommitted = opts.isolationLevel === 'read_committed'
  void runListOffsets(client, pending, Date.now() + timeoutMs, timeoutMs, readCommitted).catch(
    (e: unknown) => {
      for (const p of pending.values()) p.d.reject(e)
    },
  )
  return result
}

async function runListOffsets(
  client: NetworkClient,
  all: ReadonlyMap<string, Pending>,
  deadline: number,
  timeoutMs: number,
  readCommitted: boolean,
): Promise<void> {
  let remaining = new Map(all)
  let lastError: KafkaError | null = null
  const fail = (key: string, e: unknown): void => {
    all.get(key)!.d.reject(e)
    remaining.delete(key)
  }
  for (let attempt = 0; remaining.size > 0; attempt++) {
    const retry = new Set<string>()
    // 1. Leaders, from Metadata for the topics still open.
    const byLeader = new Map<number, { node: BrokerNode; keys: string[] }>()
    try {
      const topics = [...new Set([...remaining.values()].map((p) => p.tp.topic))]
      const md = await topicsMetadata(client, topics)
      const topicsByName = new Map(md.response.topics.map((t) => [t.name, t]))
      for (const [key, p] of remaining) {
        const t = topicsByName.get(p.tp.topic)
        if (t === undefined) {
          retry.add(key)
          continue
        }
        if (t.errorCode !== 0) {
          const e = metadataTopicError(t.errorCode, p.tp)
          if (e === null) retry.add(key)
          else fail(key, e)
          continue
        }
        const part = t.partitions.find((x) => x.partitionIndex === p.tp.partition)
        if (part === undefined) {
          retry.add(key)
          continue
        }
        if (part.errorCode !== 0) {
          if (METADATA_RETRY_PARTITION_ERRORS.has(errorInfo(part.errorCode).name)) retry.add(key)
          else
            fail(
              key,
              errorWithMessage(
                part.errorCode,
                `Unexpected error during metadata lookup for ${topicPartitionString(p.tp)}`,
              ),
            )
          continue
        }
        const node = md.brokers.get(part.leaderId)
        if (part.leaderId < 0 || node === undefined) {
          retry.add(key)
          continue
        }
        const batch = byLeader.get(node.nodeId) ?? { node, keys: [] }
        batch.keys.push(key)
        byLeader.set(node.nodeId, batch)
      }
    } catch (e) {
      if (!(e instanceof KafkaError) || !e.retriable) throw e
      lastError = e
      for (const k of remaining.keys()) retry.add(k)
    }

    // 2. One ListOffsets per leader.
    for (const { node, keys } of byLeader.values()) {
      const settled = await sendListOffsets(client, node, keys, all, timeoutMs, readCommitted)
      for (const [key, outcome] of settled.outcomes) {
        if (outcome === 'retry') retry.add(key)
        else if (outcome instanceof Error) fail(key, outcome)
        else {
          all.get(key)!.d.resolve(outcome)
          remaining.delete(key)
        }
      }
      lastError = settled.lastError ?? lastError
    }

    remaining = new Map([...remaining].filter(([k]) => retry.has(k)))
    if (remaining.size === 0) return
    const wait = client.backoffMs(attempt)
    if (Date.now() + wait >= deadline) {
      const err = new TimeoutError(
        `Timed out waiting for listOffsets: ${lastError?.message ?? 'no leader known for the partition'}`,
        lastError,
      )
      for (const k of remaining.keys()) all.get(k)!.d.reject(err)
      return
    }
    await new Promise((r) => setTimeout(r, wait))
  }
}

/** PartitionLeaderStrategy's topic errors: null = look up again; otherwise the partition's failure. */
function metadataTopicError(code: number, tp: TopicPartition): KafkaError | null {
  const name = errorInfo(code).name
  const tps = topicPartitionString(tp)
  switch (name) {
    case 'UNKNOWN_TOPIC_OR_PARTITION':
      return errorWithMessage(
        code,
        `Failed to fetch metadata for partition ${tps} because metadata for topic \`${tp.topic}\` could not be found`,
      )
    case 'LEADER_NOT_AVAILABLE':
    case 'BROKER_NOT_AVAILABLE':
      return null
    case 'TOPIC_AUTHORIZATION_FAILED':
      return errorWithMessage(
        code,
        `Failed to fetch metadata for partition ${tps} due to topic authorization failure`,
      )
    case 'INVALID_TOPIC_EXCEPTION':
      return errorWithMessage(
        code,
        `Failed to fetch metadata for partition ${tps} due to invalid topic \`${tp.topic}\``,
      )
    default:
      return errorWithMessage(
        code,
        `Failed to fetch metadata for partition ${tps} due to unexpected error for topic \`${tp.topic}\``,
      )
  }
}

type ListOutcome = ListOffsetsResultInfo | KafkaError | 'retry'

async function sendListOffsets(
  client: NetworkClient,
  node: BrokerNode,
  keys: readonly string[],
  all: ReadonlyMap<string, Pending>,
  timeoutMs: number,
  readCommitted: boolean,
): Promise<{ outcomes: Map<string, ListOutcome>; lastError: KafkaError | null }> {
  const out = new Map<string, ListOutcome>()
  let lastError: KafkaError | null = null
  const done = () => ({ outcomes: out, lastError })
  let open = [...keys]
  // A broker too old for a spec fails the max-timestamp partitions and retries the others
  // (ListOffsetsHandler.handleUnsupportedVersionException); without such partitions all fail.
  while (open.length > 0) {
    const ps = open.map((k) => all.get(k)!)
    const minVersion = Math.max(readCommitted ? 2 : 1, ...ps.map((p) => p.minVersion))
    let conn: Awaited<ReturnType<NetworkClient['connect']>>
    let version: number
    try {
      conn = await client.connect(node.host, node.port)
      version = conn.negotiateVersion(2, 11)
      if (version < minVersion) {
        throw new UnsupportedVersionError(
          `The node does not support ListOffsets at version ${minVersion} or above (broker up to ${version})`,
        )
      }
    } catch (e) {
      const err = e instanceof KafkaError ? e : new KafkaError(String(e), { cause: e })
      if (err instanceof UnsupportedVersionError) {
        const maxTs = open.filter((k) => all.get(k)!.timestamp === -3n)
        if (maxTs.length === 0) {
          for (const k of open) out.set(k, err)
          return done()
        }
        for (const k of maxTs) out.set(k, err)
        open = open.filter((k) => !maxTs.includes(k))
        continue
      }
      for (const k of open) out.set(k, err.retriable ? 'retry' : err)
      if (err.retriable) lastError = err
      return done()
    }
    const topics = new Map<string, ListOffsetsRequestListOffsetsTopic>()
    for (const p of ps) {
      const t = topics.get(p.tp.topic) ?? { name: p.tp.topic, partitions: [] }
      t.partitions.push({ partitionIndex: p.tp.partition, currentLeaderEpoch: -1, timestamp: p.timestamp })
      topics.set(p.tp.topic, t)
    }
    let res: ListOffsetsResponse
    try {
      res = await conn.send(
        2,
        { replicaId: -1, isolationLevel: readCommitted ? 1 : 0, topics: [...topics.values()], timeoutMs },
        { version },
      )
    } catch (e) {
      const err = e instanceof KafkaError ? e : new KafkaError(String(e), { cause: e })
      for (const k of open) out.set(k, err.retriable ? 'retry' : err)
      if (err.retriable) lastError = err
      return done()
    }
    const asked = new Set(open)
    for (const t of res.topics) {
      for (const p of t.partitions) {
        const key = keyOf(t.name, p.partitionIndex)
        if (!asked.has(key)) continue
        if (p.errorCode === 0) {
          out.set(key, {
            offset: p.offset,
            timestamp: p.timestamp,
            leaderEpoch: p.leaderEpoch === -1 ? null : p.leaderEpoch,
          })
          continue
        }
        const e = kafkaErrorFromCode(p.errorCode)
        // NOT_LEADER_OR_FOLLOWER / LEADER_NOT_AVAILABLE: find the leader again; other retriable
        // errors: ask again; the rest fail the partition.
        if (e.retriable) {
          out.set(key, 'retry')
          lastError = e
        } else out.set(key, e)
      }
    }
    for (const key of open) {
      if (!out.has(key)) {
        const tp = all.get(key)!.tp
        out.set(
          key,
          new KafkaError(
            `The response from broker ${node.nodeId} did not contain a result for topic partition ${topicPartitionString(tp)}`,
            { errorName: 'API_EXCEPTION', javaClassName: 'org.apache.kafka.common.errors.ApiException' },
          ),
        )
      }
    }
    return done()
  }
  return done()
}

// ---------------------------------------------------------------------------------------------
// Group offsets: alter (OffsetCommit) and delete (OffsetDelete).

export interface OffsetAndMetadata extends TopicPartition {
  readonly offset: bigint
  /** null or absent: no leader epoch (-1 on the wire) */
  readonly leaderEpoch?: number | null
  readonly metadata?: string | null
}

/** Outcome of `alterStreamsGroupOffsets` (Kafka's AlterConsumerGroupOffsetsResult). */
export class AlterOffsetsResult {
  readonly #outcome: Promise<Map<string, number>>
  readonly #partitions: ReadonlyMap<string, TopicPartition>

  constructor(outcome: Promise<Map<string, number>>, partitions: ReadonlyMap<string, TopicPartition>) {
    outcome.catch(() => undefined)
    this.#outcome = outcome
    this.#partitions = partitions
  }

  /** One partition: its error's exception, or IllegalArgumentException when it was not attempted. */
  async partitionResult(topic: string, partition: number): Promise<void> {
    const errors = await this.#outcome
    const code = errors.get(keyOf(topic, partition))
    if (code === undefined)
      throw illegalArgument(`Alter offset for partition "${topic}-${partition}" was not attempted`)
    if (code !== 0) throw kafkaErrorFromCode(code)
  }

  /**
   * Succeeds when every partition did. Otherwise fails with the exception of the first failed
   * partition's error, whose message lists every failed partition, in Kafka's (hash map) order:
   * `Failed altering group offsets for the following partitions: [t-0, t-1]`.
   */
  async all(): Promise<void> {
    const errors = await this.#outcome
    const failed = javaHashOrder(
      [...errors].filter(([, code]) => code !== 0),
      ([k]) => {
        const tp = this.#partitions.get(k)!
        return topicPartitionHash(tp.topic, tp.partition)
      },
    )
    if (failed.length === 0) return
    const names = failed.map(([k]) => topicPartitionString(this.#partitions.get(k)!))
    throw errorWithMessage(
      failed[0]![1],
      `Failed altering group offsets for the following partitions: [${names.join(', ')}]`,
    )
  }
}

/** Outcome of `deleteStreamsGroupOffsets` (Kafka's DeleteConsumerGroupOffsetsResult). */
export class DeleteOffsetsResult {
  readonly #outcome: Promise<Map<string, number>>
  readonly #partitions: readonly TopicPartition[]

  constructor(outcome: Promise<Map<string, number>>, partitions: readonly TopicPartition[]) {
    outcome.catch(() => undefined)
    this.#outcome = outcome
    this.#partitions = partitions
  }

  /**
   * One partition. Throws IllegalArgumentException at once for a partition that was not in the
   * request; the promise fails with the group's error, or the partition's.
   */
  partitionResult(topic: string, partition: number): Promise<void> {
    if (!this.#partitions.some((tp) => tp.topic === topic && tp.partition === partition)) {
      throw illegalArgument(`Partition ${topic}-${partition} was not included in the original request`)
    }
    return this.#outcome.then((errors) => {
      const e = partitionError(errors, topic, partition)
      if (e !== null) throw e
    })
  }

  /** Succeeds only if every deletion did; otherwise the first partition error, in request order. */
  async all(): Promise<void> {
    const errors = await this.#outcome
    for (const tp of this.#partitions) {
      const e = partitionError(errors, tp.topic, tp.partition)
      if (e !== null) throw e
    }
  }
}

function partitionError(
  errors: ReadonlyMap<string, number>,
  topic: string,
  partition: number,
): KafkaError | null {
  const code = errors.get(keyOf(topic, partition))
  if (code === undefined) {
    return illegalArgument(
      `Offset deletion result for partition "${topic}-${partition}" was not included in the response`,
    )
  }
  return code === 0 ? null : kafkaErrorFromCode(code)
}

/** A retriable stand-in that makes `withRetries` try again (and forget the coordinator if asked). */
function retryable(code: number): KafkaError {
  const base = kafkaErrorFromCode(code)
  return new KafkaError(base.message, {
    code: base.code,
    errorName: base.errorName,
    retriable: true,
    javaClassName: base.javaClassName,
  })
}

/**
 * Commits `offsets` for `groupId` as an admin (no member, generation -1) through the group's
 * coordinator. Per partition: COORDINATOR_LOAD_IN_PROGRESS and REBALANCE_IN_PROGRESS retry the
 * commit, COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR look the coordinator up again; every other
 * error is that partition's result.
 */
export function alterGroupOffsets(
  client: NetworkClient,
  groupId: string,
  offsets: readonly OffsetAndMetadata[],
  deadline: number,
): AlterOffsetsResult {
  const byKey = new Map<string, OffsetAndMetadata>()
  for (const o of offsets) byKey.set(keyOf(o.topic, o.partition), o)
  const partitions = new Map([...byKey].map(([k, o]) => [k, { topic: o.topic, partition: o.partition }]))
  const outcome = client.withRetries(
    async () => {
      const node = await client.findCoordinator(groupId)
      const conn = await client.connect(node.host, node.port)
      // v10 names topics by id; the admin commit names them (Kafka's forTopicNames).
      const version = conn.negotiateVersion(8, 9)
      const topics = new Map<string, OffsetCommitRequestOffsetCommitRequestTopic>()
      for (const o of byKey.values()) {
        const t = topics.get(o.topic) ?? { name: o.topic, topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [] }
        t.partitions.push({
          partitionIndex: o.partition,
          committedOffset: o.offset,
          committedLeaderEpoch: o.leaderEpoch ?? -1,
          committedMetadata: o.metadata ?? '',
        })
        topics.set(o.topic, t)
      }
      const res = await conn.send(
        8,
        {
          groupId,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          retentionTimeMs: -1n,
          topics: [...topics.values()],
        },
        { version },
      )
      const errors = new Map<string, number>()
      for (const t of res.topics) {
        for (const p of t.partitions) {
          const name = errorInfo(p.errorCode).name
          if (name === 'COORDINATOR_LOAD_IN_PROGRESS' || name === 'REBALANCE_IN_PROGRESS')
            throw retryable(p.errorCode)
          if (name === 'COORDINATOR_NOT_AVAILABLE' || name === 'NOT_COORDINATOR')
            throw kafkaErrorFromCode(p.errorCode)
          errors.set(keyOf(t.name, p.partitionIndex), p.errorCode)
          if (!partitions.has(keyOf(t.name, p.partitionIndex))) {
            partitions.set(keyOf(t.name, p.partitionIndex), { topic: t.name, partition: p.partitionIndex })
          }
        }
      }
      return errors
    },
    { deadline, operation: 'alterStreamsGroupOffsets', coordinatorKey: groupId },
  )
  return new AlterOffsetsResult(outcome, partitions)
}

/**
 * Deletes the committed offsets of `partitions` in `groupId` (OffsetDelete). Group errors fail the
 * whole call: GROUP_AUTHORIZATION_FAILED, GROUP_ID_NOT_FOUND, INVALID_GROUP_ID, NON_EMPTY_GROUP and
 * any unexpected one; COORDINATOR_LOAD_IN_PROGRESS retries; COORDINATOR_NOT_AVAILABLE and
 * NOT_COORDINATOR look the coordinator up again.
 */
export function deleteGroupOffsets(
  client: NetworkClient,
  groupId: string,
  partitions: readonly TopicPartition[],
  deadline: number,
): DeleteOffsetsResult {
  const unique = new Map<string, TopicPartition>()
  for (const tp of partitions)
    unique.set(keyOf(tp.topic, tp.partition), { topic: tp.topic, partition: tp.partition })
  const outcome = client.withRetries(
    async () => {
      const node = await client.findCoordinator(groupId)
      const topics = new Map<string, { name: string; partitions: { partitionIndex: number }[] }>()
      for (const tp of unique.values()) {
        const t = topics.get(tp.topic) ?? { name: tp.topic, partitions: [] }
        t.partitions.push({ partitionIndex: tp.partition })
        topics.set(tp.topic, t)
      }
      const res = await client.sendTo(node, 47, { groupId, topics: [...topics.values()] })
      if (res.errorCode !== 0) {
        if (errorInfo(res.errorCode).name === 'COORDINATOR_LOAD_IN_PROGRESS') throw retryable(res.errorCode)
        throw kafkaErrorFromCode(res.errorCode)
      }
      const errors = new Map<string, number>()
      for (const t of res.topics)
        for (const p of t.partitions) errors.set(keyOf(t.name, p.partitionIndex), p.errorCode)
      return errors
    },
    { deadline, operation: 'deleteStreamsGroupOffsets', coordinatorKey: groupId },
  )
  return new DeleteOffsetsResult(outcome, [...unique.values()])
}
