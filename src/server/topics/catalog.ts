import { LocalError } from '../../errors.js'
import { randomUuid, ZERO_UUID } from '../../uuid.js'
import type { CoordinatorRecord, RecordStore } from '../../coordinator/storage/types.js'
import { invalidTopicNameReason } from '../../protocol/topics.js'
import { checkTopicConfig } from './topic-configs.js'

/**
 * The topic catalog: topic names, ids, partition counts and configs. Topograph has no data plane, so
 * a topic is metadata only: every partition is led by this node, with this node as the only replica.
 *
 * Durability: the catalog is its own log in the coordinator record store, under log id
 * {@link TOPIC_CATALOG_LOG_ID} (no group shard uses it: shards are 0 … offsets.topic.num.partitions-1).
 * One record per topic:
 *   key   = int16 record type {@link TOPIC_RECORD_TYPE}, then the topic name (int16 length + UTF-8)
 *   value = int16 version 0, then UTF-8 JSON {"topicId","numPartitions","replicationFactor","configs"}
 * Deleting a topic appends a tombstone for its key. Loading replays the log, latest record per key wins.
 */

/** Log id of the catalog in the record store: the largest int32, beyond any shard number. */
export const TOPIC_CATALOG_LOG_ID = 0x7fffffff
/** Record type of a topic record (outside the range Kafka uses for coordinator records). */
export const TOPIC_RECORD_TYPE = 0x7f01

/** Kafka's error names the catalog answers with; handlers map them to wire codes. */
export type TopicErrorName =
  | 'NONE'
  | 'TOPIC_ALREADY_EXISTS'
  | 'INVALID_PARTITIONS'
  | 'INVALID_REPLICATION_FACTOR'
  | 'INVALID_REPLICA_ASSIGNMENT'
  | 'INVALID_TOPIC_EXCEPTION'
  | 'INVALID_CONFIG'
  | 'INVALID_REQUEST'
  | 'POLICY_VIOLATION'
  | 'UNKNOWN_TOPIC_OR_PARTITION'
  | 'UNKNOWN_TOPIC_ID'

export interface TopicError {
  readonly error: TopicErrorName
  readonly message: string | null
}

export interface TopicInfo {
  readonly name: string
  /** Kafka's base64url form of the 16-byte topic id. */
  readonly topicId: string
  readonly numPartitions: number
  readonly replicationFactor: number
  /** Configs set at creation (topic overrides only; defaults are not stored). */
  readonly configs: Readonly<Record<string, string>>
}

export interface NewTopic {
  readonly name: string
  readonly numPartitions: number
  readonly replicationFactor: number
  readonly assignments: readonly { readonly partitionIndex: number; readonly brokerIds: readonly number[] }[]
  readonly configs: readonly { readonly name: string; readonly value: string | null }[]
}

export type CreateTopicOutcome =
  | ({ readonly error: 'NONE'; readonly message: null } & TopicInfo)
  | (TopicError & {
      readonly name: string
    })

export interface TopicCatalogOptions {
  /** This node's id: the leader and only replica of every partition. */
  readonly nodeId: number
  /** num.partitions (Kafka default 1). */
  readonly defaultNumPartitions?: number
  /** default.replication.factor (Kafka default 1). */
  readonly defaultReplicationFactor?: number
  /** Id source; tests inject one. Defaults to random ids as Kafka draws them. */
  readonly newTopicId?: () => string
  /** topic.max.partitions: the most partitions one topic may have (default {@link DEFAULT_TOPIC_MAX_PARTITIONS}). */
  readonly maxPartitionsPerTopic?: number
  /** max.partitions: the most partitions of all topics together (default {@link DEFAULT_MAX_PARTITIONS}). */
  readonly maxPartitions?: number
  /**
   * topic.change.log.wait.ms: how long a change waits for its partitions' logs before it is
   * answered (default {@link DEFAULT_TOPIC_CHANGE_LOG_WAIT_MS}; 0: not at all).
   */
  readonly logWaitMs?: number
}

/**
 * What keeps the topics' data (the partition logs) in step with the catalog. Each call comes after
 * the catalog's change is durable, in the order of the changes; the catalog does not wait for the
 * returned promise before the next change, and the request that made the change waits for it at
 * most `logWaitMs` (Kafka's controller answers once its records are committed and the broker
 * creates the logs afterwards). The hooks log their own failures and never reject; the next start
 * opens every catalog topic's logs again.
 */
export interface TopicDataHooks {
  /** Partitions [fromCount, topic.numPartitions) of the topic now exist (0 for a new topic). */
  partitionsCreated(topic: TopicInfo, fromCount: number): Promise<void>
  /** The topic's configs changed. */
  configsChanged(topic: TopicInfo): void
  /** The topics are gone. */
  topicsDeleted(topics: readonly TopicInfo[]): Promise<void>
}

/** Default of `topic.change.log.wait.ms`. */
export const DEFAULT_TOPIC_CHANGE_LOG_WAIT_MS = 5000
/** Default of `topic.max.partitions`. */
export const DEFAULT_TOPIC_MAX_PARTITIONS = 10_000
/** Default of `max.partitions`. */
export const DEFAULT_MAX_PARTITIONS = 100_000
/**
 * Kafka's controller refuses a CreateTopics request whose topics add up to more partitions than
 * this (ReplicationControlManager.MAX_PARTITIONS_PER_BATCH), before looking at any topic.
 */
export const MAX_PARTITIONS_PER_REQUEST = 10_000

export { ZERO_UUID }
const CLUSTER_METADATA_TOPIC = '__cluster_metadata'

/** A random topic id as Kafka draws it (Uuid.randomUuid). */
export const randomTopicId: () => string = randomUuid

/** '.' and '_' collide in metric names, so Kafka refuses a topic that differs from another only there. */
function collisionKey(name: string): string {
  return name.replaceAll('.', '_')
}

function encodeKey(name: string): Uint8Array {
  const nameBytes = Buffer.from(name, 'utf8')
  const key = Buffer.allocUnsafe(4 + nameBytes.length)
  key.writeInt16BE(TOPIC_RECORD_TYPE, 0)
  key.writeInt16BE(nameBytes.length, 2)
  nameBytes.copy(key, 4)
  return key
}

function encodeValue(t: TopicInfo): Uint8Array {
  const json = Buffer.from(
    JSON.stringify({
      topicId: t.topicId,
      numPartitions: t.numPartitions,
      replicationFactor: t.replicationFactor,
      configs: t.configs,
    }),
    'utf8',
  )
  const value = Buffer.allocUnsafe(2 + json.length)
  value.writeInt16BE(0, 0)
  json.copy(value, 2)
  return value
}

function decodeRecord(record: CoordinatorRecord): { name: string; info: TopicInfo | null } | null {
  const key = Buffer.from(record.key.buffer, record.key.byteOffset, record.key.byteLength)
  if (key.length < 4 || key.readInt16BE(0) !== TOPIC_RECORD_TYPE) return null
  const len = key.readInt16BE(2)
  if (len < 0 || 4 + len !== key.length)
    throw new LocalError('TOPIC_RECORD_INVALID', 'topic record key is malformed')
  const name = key.toString('utf8', 4)
  if (record.value === null) return { name, info: null }
  const value = Buffer.from(record.value.buffer, record.value.byteOffset, record.value.byteLength)
  if (value.length < 2)
    throw new LocalError('TOPIC_RECORD_INVALID', `topic record for '${name}' is malformed`)
  const version = value.readInt16BE(0)
  if (version !== 0) {
    throw new LocalError(
      'TOPIC_RECORD_INVALID',
      `topic record for '${name}' has version ${version}; this version reads 0`,
    )
  }
  const parsed = JSON.parse(value.toString('utf8', 2)) as {
    topicId: string
    numPartitions: number
    replicationFactor: number
    configs: Record<string, string>
  }
  return {
    name,
    info: {
      name,
      topicId: parsed.topicId,
      numPartitions: parsed.numPartitions,
      replicationFactor: parsed.replicationFactor,
      configs: parsed.configs ?? {},
    },
  }
}

export class TopicCatalog {
  readonly #store: RecordStore
  readonly #nodeId: number
  readonly #defaultNumPartitions: number
  readonly #defaultReplicationFactor: number
  readonly #newTopicId: () => string
  readonly #byName = new Map<string, TopicInfo>()
  readonly #byId = new Map<string, TopicInfo>()
  readonly #byCollisionKey = new Map<string, string>()
  readonly #maxPartitionsPerTopic: number
  readonly #maxPartitions: number
  readonly #logWaitMs: number
  /** Partitions of every topic in the catalog. */
  #totalPartitions = 0
  /** Mutations run one at a time, so a check and the append that follows it see the same state. */
  #tail: Promise<unknown> = Promise.resolve()
  readonly #listeners = new Set<(changedTopics: readonly string[]) => void>()
  #data: TopicDataHooks | null = null
  /** {@link sorted}'s answer, dropped on every change. */
  #sorted: readonly TopicInfo[] | null = null

  private constructor(store: RecordStore, options: TopicCatalogOptions) {
    this.#store = store
    this.#nodeId = options.nodeId
    this.#defaultNumPartitions = options.defaultNumPartitions ?? 1
    this.#defaultReplicationFactor = options.defaultReplicationFactor ?? 1
    this.#newTopicId = options.newTopicId ?? randomTopicId
    this.#maxPartitionsPerTopic = options.maxPartitionsPerTopic ?? DEFAULT_TOPIC_MAX_PARTITIONS
    this.#maxPartitions = options.maxPartitions ?? DEFAULT_MAX_PARTITIONS
    this.#logWaitMs = options.logWaitMs ?? DEFAULT_TOPIC_CHANGE_LOG_WAIT_MS
  }

  /** Replays the catalog's log from an opened store. */
  static async load(store: RecordStore, options: TopicCatalogOptions): Promise<TopicCatalog> {
    const catalog = new TopicCatalog(store, options)
    for (const record of await store.load(TOPIC_CATALOG_LOG_ID)) {
      const decoded = decodeRecord(record)
      if (decoded === null) continue
      catalog.#remove(decoded.name)
      if (decoded.info !== null) catalog.#add(decoded.info)
    }
    return catalog
  }

  /** Connects the partition logs (once, at start-up, before any request is served). */
  attachData(hooks: TopicDataHooks): void {
    this.#data = hooks
  }

  get nodeId(): number {
    return this.#nodeId
  }

  get size(): number {
    return this.#byName.size
  }

  /** Partitions of every topic together (what `max.partitions` bounds). */
  get totalPartitions(): number {
    return this.#totalPartitions
  }

  /**
   * The partition limits, for any change that gives partitions to a topic: a new topic
   * (CreateTopics) or an increase (CreatePartitions). Call it with the count the client asked for
   * before allocating anything per partition.
   *
   * - `count`: the partition count `topic` would have after the change;
   * - `added`: the partitions the change adds to the server (`count` for a new topic, `count` minus
   *   the current count for an increase);
   * - `pending`: partitions that earlier topics of the same request add and that are not in the
   *   catalog yet (a request's changes are checked together).
   *
   * Returns null when the change fits, else Kafka's error and a message naming the limit:
   * INVALID_PARTITIONS when `count` is above `topic.max.partitions`, POLICY_VIOLATION when the
   * server's total would go above `max.partitions`. Topics loaded from storage are never refused,
   * even when the limits were lowered since they were created.
   */
  checkPartitionLimits(topic: string, count: number, added: number, pending = 0): TopicError | null {
    if (count > this.#maxPartitionsPerTopic) {
      return {
        error: 'INVALID_PARTITIONS',
        message: `Topic '${topic}' would have ${count} partitions, above the limit of ${this.#maxPartitionsPerTopic} (topic.max.partitions).`,
      }
    }
    const total = this.#totalPartitions + pending + added
    if (added > 0 && total > this.#maxPartitions) {
      return {
        error: 'POLICY_VIOLATION',
        message: `Adding ${added} partition(s) for topic '${topic}' would bring the server to ${total} partitions, above the limit of ${this.#maxPartitions} (max.partitions).`,
      }
    }
    return null
  }

  byName(name: string): TopicInfo | undefined {
    return this.#byName.get(name)
  }

  byId(topicId: string): TopicInfo | undefined {
    return this.#byId.get(topicId)
  }

  /**
   * Calls `listener` with the names of the topics a CreateTopics or DeleteTopics added or removed,
   * once the change is durable. Returns a function that removes the listener. A listener that
   * throws does not affect the change or the other listeners.
   */
  onChange(listener: (changedTopics: readonly string[]) => void): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** Every topic, sorted by name. */
  list(): TopicInfo[] {
    return this.sorted().slice()
  }

  /**
   * Every topic, sorted by name, as one array shared by every caller until the catalog changes
   * (an all-topics Metadata asks for it on every request; it is sorted once per change).
   */
  sorted(): readonly TopicInfo[] {
    this.#sorted ??= [...this.#byName.values()].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )
    return this.#sorted
  }

  /**
   * Creates topics as Kafka's controller does: each topic is checked on its own (name, existence,
   * configs, partitions, replication factor, manual assignment), the valid ones are written in one
   * atomic append (nothing is written with `validateOnly`), and one outcome per topic comes back in
   * request order. Duplicate names in one request are the caller's concern (Kafka answers them
   * before the controller sees them).
   */
  async createTopics(topics: readonly NewTopic[], validateOnly: boolean): Promise<CreateTopicOutcome[]> {
    let logs: Promise<unknown> | null = null
    const outcomes = await this.#serialize(async (): Promise<CreateTopicOutcome[]> => {
      const outcomes: CreateTopicOutcome[] = []
      const created: TopicInfo[] = []
      const pendingCollision = new Map<string, string>()
      // Kafka's first check: the partitions the request asks for, all topics together, counted
      // before any topic is looked at (a manual assignment counts its entries).
      let requested = 0
      for (const topic of topics) {
        if (topic.assignments.length > 0) requested += topic.assignments.length
        else if (topic.numPartitions === -1) requested += this.#defaultNumPartitions
        else if (topic.numPartitions > 0) requested += topic.numPartitions
        if (requested > MAX_PARTITIONS_PER_REQUEST) {
          const message = 'Excessively large number of partitions per request.'
          return topics.map((t) => ({ name: t.name, error: 'POLICY_VIOLATION', message }))
        }
      }
      let pendingPartitions = 0
      for (const topic of topics) {
        const outcome = this.#checkNewTopic(topic, pendingCollision, pendingPartitions)
        outcomes.push(outcome)
        if (outcome.error === 'NONE' && 'topicId' in outcome) {
          const { name, topicId, numPartitions, replicationFactor, configs } = outcome
          created.push({ name, topicId, numPartitions, replicationFactor, configs })
          pendingCollision.set(collisionKey(topic.name), topic.name)
          pendingPartitions += numPartitions
        }
      }
      if (!validateOnly && created.length > 0) {
        await this.#store.append(
          TOPIC_CATALOG_LOG_ID,
          created.map((t) => ({ key: encodeKey(t.name), value: encodeValue(t) })),
        )
        for (const t of created) this.#add(t)
        const data = this.#data
        if (data !== null) logs = Promise.all(created.map((t) => data.partitionsCreated(t, 0)))
        this.#notify(created.map((t) => t.name))
      }
      return outcomes
    })
    await this.#waitForLogs(logs)
    return outcomes
  }

  /** Deletes topics by name; returns the deleted topics (unknown names are skipped). */
  async deleteTopics(names: readonly string[]): Promise<TopicInfo[]> {
    let logs: Promise<unknown> | null = null
    const deleted = await this.#serialize(async () => {
      const existing = names.map((n) => this.#byName.get(n)).filter((t): t is TopicInfo => t !== undefined)
      if (existing.length === 0) return []
      await this.#store.append(
        TOPIC_CATALOG_LOG_ID,
        existing.map((t) => ({ key: encodeKey(t.name), value: null })),
      )
      for (const t of existing) this.#remove(t.name)
      if (this.#data !== null) logs = this.#data.topicsDeleted(existing)
      this.#notify(existing.map((t) => t.name))
      return existing
    })
    await this.#waitForLogs(logs)
    return deleted
  }

  /**
   * Raises a topic's partition count (CreatePartitions, after its checks): one durable record, then
   * the new partitions' logs. Returns the updated topic, or undefined when the topic is gone.
   */
  async increasePartitions(name: string, count: number): Promise<TopicInfo | undefined> {
    let logs: Promise<unknown> | null = null
    const result = await this.#serialize(async () => {
      const t = this.#byName.get(name)
      if (t === undefined) return undefined
      if (count <= t.numPartitions) return t
      const updated: TopicInfo = { ...t, numPartitions: count }
      await this.#store.append(TOPIC_CATALOG_LOG_ID, [{ key: encodeKey(name), value: encodeValue(updated) }])
      this.#replace(updated)
      this.#totalPartitions += count - t.numPartitions
      if (this.#data !== null) logs = this.#data.partitionsCreated(updated, t.numPartitions)
      this.#notify([name])
      return updated
    })
    await this.#waitForLogs(logs)
    return result
  }

  /**
   * Replaces a topic's own configs (AlterConfigs, IncrementalAlterConfigs, after their checks): one
   * durable record, then the logs take the new settings. Returns the updated topic, or undefined
   * when the topic is gone.
   */
  setConfigs(name: string, configs: Readonly<Record<string, string>>): Promise<TopicInfo | undefined> {
    return this.#serialize(async () => {
      const t = this.#byName.get(name)
      if (t === undefined) return undefined
      const updated: TopicInfo = { ...t, configs: { ...configs } }
      await this.#store.append(TOPIC_CATALOG_LOG_ID, [{ key: encodeKey(name), value: encodeValue(updated) }])
      this.#replace(updated)
      this.#data?.configsChanged(updated)
      this.#notify([name])
      return updated
    })
  }

  #replace(t: TopicInfo): void {
    this.#sorted = null
    this.#byName.set(t.name, t)
    this.#byId.set(t.topicId, t)
  }

  #notify(changedTopics: readonly string[]): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(changedTopics)
      } catch {
        // A listener's failure is its own; the catalog change stands.
      }
    }
  }

  /**
   * Waits for a change's logs (created or removed) for at most `logWaitMs`: a client that learns of
   * a new partition finds its log open unless the disk is slower than that; the rest goes on in the
   * background, outside the catalog's queue, so a change never waits for another one's files.
   */
  async #waitForLogs(logs: Promise<unknown> | null): Promise<void> {
    if (logs === null) return
    // The hooks log their own failures; one that rejects anyway must not go unhandled.
    const settled = logs.then(
      () => undefined,
      () => undefined,
    )
    if (this.#logWaitMs <= 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([
      settled,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#logWaitMs)
      }),
    ])
    clearTimeout(timer)
  }

  #serialize<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(op, op)
    this.#tail = run.catch(() => undefined)
    return run
  }

  #add(t: TopicInfo): void {
    this.#sorted = null
    this.#totalPartitions += t.numPartitions
    this.#byName.set(t.name, t)
    this.#byId.set(t.topicId, t)
    this.#byCollisionKey.set(collisionKey(t.name), t.name)
  }

  #remove(name: string): void {
    const t = this.#byName.get(name)
    if (t === undefined) return
    this.#sorted = null
    this.#totalPartitions -= t.numPartitions
    this.#byName.delete(name)
    this.#byId.delete(t.topicId)
    if (this.#byCollisionKey.get(collisionKey(name)) === name) this.#byCollisionKey.delete(collisionKey(name))
  }

  /** The numbered checks follow the order of Kafka's controller, so the first failing one is reported. */
  #checkNewTopic(
    topic: NewTopic,
    pendingCollision: ReadonlyMap<string, string>,
    pendingPartitions: number,
  ): CreateTopicOutcome {
    const name = topic.name
    const fail = (error: TopicErrorName, message: string | null): CreateTopicOutcome => ({
      name,
      error,
      message,
    })
    // 1. The name.
    if (name === CLUSTER_METADATA_TOPIC) {
      return fail('INVALID_REQUEST', `Creation of internal topic ${CLUSTER_METADATA_TOPIC} is prohibited.`)
    }
    const reason = invalidTopicNameReason(name)
    if (reason !== null) return fail('INVALID_TOPIC_EXCEPTION', `Topic name is invalid: ${reason}`)
    // 2. A name that differs from another only in '.' versus '_'.
    if (name.includes('.') || name.includes('_')) {
      const other = this.#byCollisionKey.get(collisionKey(name)) ?? pendingCollision.get(collisionKey(name))
      if (other !== undefined && other !== name) {
        return fail('INVALID_TOPIC_EXCEPTION', `Topic '${name}' collides with existing topic: ${other}`)
      }
    }
    // 3. Existence.
    if (this.#byName.has(name)) return fail('TOPIC_ALREADY_EXISTS', `Topic '${name}' already exists.`)
    // 4. Configs: null values first (all named in one message), then names and values.
    const nullConfigs = topic.configs.filter((c) => c.value === null).map((c) => c.name)
    if (nullConfigs.length > 0) {
      return fail('INVALID_CONFIG', `Null value not supported for topic configs: ${nullConfigs.join(',')}`)
    }
    const configs: Record<string, string> = {}
    for (const c of topic.configs) {
      const problem = checkTopicConfig(c.name, c.value as string)
      if (problem !== null) return fail('INVALID_CONFIG', problem)
      configs[c.name] = c.value as string
    }
    // 5. Partitions and replicas: a manual assignment, or counts (-1 = the default).
    let numPartitions: number
    let replicationFactor: number
    if (topic.assignments.length > 0) {
      if (topic.replicationFactor !== -1) {
        return fail(
          'INVALID_REQUEST',
          'A manual partition assignment was specified, but replication factor was not set to -1.',
        )
      }
      if (topic.numPartitions !== -1) {
        return fail(
          'INVALID_REQUEST',
          'A manual partition assignment was specified, but numPartitions was not set to -1.',
        )
      }
      const seen = new Set<number>()
      let rf: number | undefined
      for (const a of topic.assignments) {
        if (seen.has(a.partitionIndex)) {
          return fail(
            'INVALID_REPLICA_ASSIGNMENT',
            `Found multiple manual partition assignments for partition ${a.partitionIndex}`,
          )
        }
        seen.add(a.partitionIndex)
        if (a.brokerIds.length === 0) {
          return fail(
            'INVALID_REPLICA_ASSIGNMENT',
            'The manual partition assignment includes an empty replica list.',
          )
        }
        const sorted = [...a.brokerIds].sort((x, y) => x - y)
        let prev: number | undefined
        for (const b of sorted) {
          if (b !== this.#nodeId) {
            return fail(
              'INVALID_REPLICA_ASSIGNMENT',
              `The manual partition assignment includes broker ${b}, but no such broker is registered.`,
            )
          }
          if (b === prev) {
            return fail(
              'INVALID_REPLICA_ASSIGNMENT',
              `The manual partition assignment includes the broker ${b} more than once.`,
            )
          }
          prev = b
        }
        if (rf !== undefined && sorted.length !== rf) {
          return fail(
            'INVALID_REPLICA_ASSIGNMENT',
            `The manual partition assignment includes a partition with ${sorted.length} replica(s), but this is not consistent with previous partitions, which have ${rf} replica(s).`,
          )
        }
        rf = sorted.length
      }
      for (let i = 0; i < seen.size; i++) {
        if (!seen.has(i)) {
          return fail(
            'INVALID_REPLICA_ASSIGNMENT',
            'partitions should be a consecutive 0-based integer sequence',
          )
        }
      }
      numPartitions = seen.size
      replicationFactor = rf ?? 1
    } else if (topic.replicationFactor < -1 || topic.replicationFactor === 0) {
      return fail(
        'INVALID_REPLICATION_FACTOR',
        'Replication factor must be larger than 0, or -1 to use the default value.',
      )
    } else if (topic.numPartitions < -1 || topic.numPartitions === 0) {
      return fail('INVALID_PARTITIONS', 'Number of partitions was set to an invalid non-positive value.')
    } else {
      numPartitions = topic.numPartitions === -1 ? this.#defaultNumPartitions : topic.numPartitions
      replicationFactor =
        topic.replicationFactor === -1 ? this.#defaultReplicationFactor : topic.replicationFactor
      // One node: a replication factor above 1 cannot be placed.
      if (replicationFactor > 1) {
        return fail(
          'INVALID_REPLICATION_FACTOR',
          `Unable to replicate the partition ${replicationFactor} time(s): The target replication factor of ${replicationFactor} cannot be reached because only 1 broker(s) are registered or some brokers have all their log directories cordoned.`,
        )
      }
    }
    // 6. The partition limits (topic.max.partitions, max.partitions).
    const limit = this.checkPartitionLimits(name, numPartitions, numPartitions, pendingPartitions)
    if (limit !== null) return fail(limit.error, limit.message)
    let topicId = this.#newTopicId()
    while (this.#byId.has(topicId) || topicId === ZERO_UUID) topicId = this.#newTopicId()
    return { error: 'NONE', message: null, name, topicId, numPartitions, replicationFactor, configs }
  }
}
