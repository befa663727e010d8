/**
 * Topology configuration (Kafka's InternalTopicManager and its helpers): resolves partition counts
 * from the topic catalog, decides repartition and changelog partition counts, enforces
 * co-partitioning, and lists the internal topics still to be created. Configuration problems the
 * group can recover from become a status (codes 1–3); an invalid topology throws
 * STREAMS_INVALID_TOPOLOGY and fails the heartbeat.
 */
import { invalidTopology } from '../api-error.js'
import type { StreamsTopology } from './topology.js'
import type { RecordSubtopology } from './wire.js'

/** What the coordinator needs to know about one topic. */
export interface TopicMetadata {
  readonly topicId: string
  readonly numPartitions: number
  /** Per partition, the racks of its replicas (optional; only feeds the metadata hash). */
  readonly partitionRacks?: readonly (readonly string[])[]
}

/** The topic catalog: topic name → metadata, or undefined when the topic does not exist. */
export interface TopicsImage {
  topic(name: string): TopicMetadata | undefined
}

export const TopicStatusCode = {
  STALE_TOPOLOGY: 0,
  MISSING_SOURCE_TOPICS: 1,
  INCORRECTLY_PARTITIONED_TOPICS: 2,
  MISSING_INTERNAL_TOPICS: 3,
  SHUTDOWN_APPLICATION: 4,
  ASSIGNMENT_DELAYED: 5,
  MISSING_CLIENT_TAGS: 6,
} as const

export interface TopicConfigurationStatus {
  readonly statusCode: number
  readonly statusDetail: string
}

export interface ConfiguredInternalTopic {
  readonly name: string
  readonly numberOfPartitions: number
  /** null when the topology left it at 0 ("broker default"). */
  readonly replicationFactor: number | null
  readonly topicConfigs: ReadonlyMap<string, string>
}

export interface ConfiguredSubtopology {
  readonly numberOfTasks: number
  readonly sourceTopics: readonly string[]
  readonly repartitionSinkTopics: readonly string[]
  /** by topic name */
  readonly repartitionSourceTopics: ReadonlyMap<string, ConfiguredInternalTopic>
  /** by topic name */
  readonly stateChangelogTopics: ReadonlyMap<string, ConfiguredInternalTopic>
}

/** A topic the service should create (CreateTopics' CreatableTopic). */
export interface CreatableTopic {
  readonly name: string
  readonly numPartitions: number
  /** -1 when the topology gave 0 (broker default) */
  readonly replicationFactor: number
  readonly configs: readonly { readonly name: string; readonly value: string }[]
}

export interface ConfiguredTopology {
  readonly topologyEpoch: number
  /** Sorted by subtopology id; null when configuration failed before subtopologies could be built. */
  readonly subtopologies: ReadonlyMap<string, ConfiguredSubtopology> | null
  /** Sorted by name. */
  readonly internalTopicsToBeCreated: readonly CreatableTopic[]
  /** null when the topology is ready. */
  readonly status: TopicConfigurationStatus | null
  /**
   * Partition counts, as found in the catalog, of the source topics whose count differs from the
   * number of tasks of a subtopology reading them; any other source topic has one partition a task
   * of its subtopologies (null when not configured).
   */
  readonly sourcePartitionCounts: ReadonlyMap<string, number> | null
}

export function isReady(t: ConfiguredTopology): boolean {
  return t.status === null
}

class TopicConfigurationFailure extends Error {
  readonly status: TopicConfigurationStatus
  constructor(statusCode: number, statusDetail: string) {
    super(statusDetail)
    this.status = { statusCode, statusDetail }
  }
}

/** Up to three names joined with ", ", then " and <k> additional topics". */
export function summarizeTopics(topics: readonly string[]): string {
  if (topics.length === 0) return '<none>'
  const shown = topics.slice(0, 3).join(', ')
  return topics.length > 3 ? `${shown} and ${topics.length - 3} additional topics` : shown
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Java's TreeMap.toString: `{a=3, b=5}`. */
function javaSortedMap(m: ReadonlyMap<string, number>): string {
  return `{${[...m.keys()]
    .sort(byString)
    .map((k) => `${k}=${m.get(k)}`)
    .join(', ')}}`
}

export function configureTopology(topology: StreamsTopology, image: TopicsImage): ConfiguredTopology {
  const decided = new Map<string, number>()
  const partitionCount = (topic: string): number | undefined =>
    image.topic(topic)?.numPartitions ?? decided.get(topic)
  try {
    throwOnMissingSourceTopics(topology, image)
    for (const [k, v] of decideRepartitionCounts(topology.subtopologies, partitionCount)) decided.set(k, v)
    enforceCopartitioning(topology.subtopologies, partitionCount, decided)
    for (const [k, v] of changelogCounts(topology.subtopologies, partitionCount)) decided.set(k, v)

    // Sorted by id; of two with one id, the later one's configuration (as a Map would keep it).
    const sorted: (string | ConfiguredSubtopology)[] = []
    for (const s of [...topology.subtopologies].sort((a, b) => byString(a.subtopologyId, b.subtopologyId))) {
      const c = configureSubtopology(s, partitionCount, decided)
      if (sorted.length > 0 && sorted[sorted.length - 2] === s.subtopologyId) sorted[sorted.length - 1] = c
      else sorted.push(s.subtopologyId, c)
    }
    const configured = new SortedSubtopologies(sorted)
    const toCreate = missingInternalTopics(configured, topology, image)
    const status =
      toCreate.length > 0
        ? {
            statusCode: TopicStatusCode.MISSING_INTERNAL_TOPICS,
            statusDetail: `Internal topics are missing: ${summarizeTopics(toCreate.map((t) => t.name))}`,
          }
        : null
    // Only the source topics whose partition count differs from the tasks of a subtopology that
    // reads them (most have one partition a task: a Map of them would cost a hash table a group).
    let sourcePartitionCounts: Map<string, number> | null = null
    for (const s of configured.values()) {
      for (const t of s.sourceTopics) {
        const n = partitionCount(t)!
        if (n !== s.numberOfTasks) (sourcePartitionCounts ??= new Map()).set(t, n)
      }
    }
    return new ConfiguredTopologyWithSubtopologies(
      topology.epoch,
      sorted,
      toCreate,
      status,
      sourcePartitionCounts ?? NO_PARTITION_COUNTS,
    )
  } catch (e) {
    if (e instanceof TopicConfigurationFailure) {
      return {
        topologyEpoch: topology.epoch,
        subtopologies: null,
        internalTopicsToBeCreated: NO_TOPICS_TO_CREATE,
        status: e.status,
        sourcePartitionCounts: null,
      }
    }
    throw e
  }
}

function throwOnMissingSourceTopics(topology: StreamsTopology, image: TopicsImage): void {
  const missing = new Set<string>()
  for (const s of topology.subtopologies) for (const t of s.sourceTopics) if (!image.topic(t)) missing.add(t)
  if (missing.size > 0) {
    throw new TopicConfigurationFailure(
      TopicStatusCode.MISSING_SOURCE_TOPICS,
      `Source topics ${summarizeTopics([...missing].sort(byString))} are missing.`,
    )
  }
}

function decideRepartitionCounts(
  subtopologies: readonly RecordSubtopology[],
  partitionCount: (t: string) => number | undefined,
): Map<string, number> {
  const counts = new Map<string, number>()
  for (const s of subtopologies)
    for (const t of s.repartitionSourceTopics) if (t.partitions !== 0) counts.set(t.name, t.partitions)
  let needed: boolean
  do {
    needed = false
    let progress = false
    for (const s of subtopologies) {
      for (const sink of s.repartitionSinkTopics) {
        if (counts.has(sink)) continue
        // The writing subtopology's widest input decides the sink's count.
        let n: number | undefined
        for (const t of s.repartitionSourceTopics) {
          const c = counts.get(t.name)
          if (c !== undefined && (n === undefined || c > n)) n = c
        }
        for (const t of s.sourceTopics) {
          const c = partitionCount(t)
          if (c !== undefined && (n === undefined || c > n)) n = c
        }
        if (n === undefined) needed = true
        else {
          counts.set(sink, n)
          progress = true
        }
      }
    }
    if (!progress && needed) {
      throw invalidTopology(
        'Failed to compute number of partitions for all repartition topics. There may be loops in the topology that cannot be resolved.',
      )
    }
  } while (needed)
  for (const s of subtopologies) {
    if (s.repartitionSourceTopics.some((t) => !counts.has(t.name))) {
      throw invalidTopology(
        'Failed to compute number of partitions for all repartition topics, because a repartition source topic is never used as a sink topic.',
      )
    }
  }
  return counts
}

function enforceCopartitioning(
  subtopologies: readonly RecordSubtopology[],
  partitionCount: (t: string) => number | undefined,
  decided: Map<string, number>,
): void {
  const fixed = new Set<string>()
  const repartition = new Set<string>()
  for (const s of subtopologies) {
    for (const t of s.repartitionSourceTopics) {
      repartition.add(t.name)
      if (t.partitions !== 0) fixed.add(t.name)
    }
  }
  const count = (t: string): number => {
    const c = partitionCount(t)
    if (c === undefined) throw new Error(`Number of partitions is not set for topic: ${t}`)
    return c
  }
  for (const s of subtopologies) {
    for (const g of s.copartitionGroups) {
      const group = new Set<string>()
      for (const i of g.sourceTopics) group.add(s.sourceTopics[i]!)
      for (const i of g.repartitionSourceTopics) group.add(s.repartitionSourceTopics[i]!.name)
      if (group.size === 0) continue
      const repartitionCounts = new Map<string, number>()
      const otherCounts = new Map<string, number>()
      for (const t of group) (repartition.has(t) ? repartitionCounts : otherCounts).set(t, count(t))
      let n: number
      if (otherCounts.size === 0) {
        if (fixed.size > 0) {
          // Every fixed repartition topic of the topology must agree (Kafka checks the whole set).
          const fixedCounts = [...fixed].map(count)
          if (fixedCounts.some((c) => c !== fixedCounts[0])) {
            throw new TopicConfigurationFailure(
              TopicStatusCode.INCORRECTLY_PARTITIONED_TOPICS,
              `Following topics do not have the same number of partitions: [${javaSortedMap(repartitionCounts)}]`,
            )
          }
          n = fixedCounts[0]!
        } else {
          n = Math.max(0, ...repartitionCounts.values())
          if (n === 0) {
            throw invalidTopology(
              `All topics in the copartition group had undefined partition number: [${[...repartitionCounts.keys()].sort(byString).join(', ')}]`,
            )
          }
        }
      } else {
        const values = [...otherCounts.values()]
        if (values.some((c) => c !== values[0])) {
          throw new TopicConfigurationFailure(
            TopicStatusCode.INCORRECTLY_PARTITIONED_TOPICS,
            `Following topics do not have the same number of partitions: [${javaSortedMap(otherCounts)}]`,
          )
        }
        n = values[0]!
      }
      for (const [t, c] of [...repartitionCounts].sort((a, b) => byString(a[0], b[0]))) {
        decided.set(t, n)
        if (fixed.has(t) && c !== n) {
          throw new TopicConfigurationFailure(
            TopicStatusCode.INCORRECTLY_PARTITIONED_TOPICS,
            `Number of partitions [${c}] of repartition topic [${t}] doesn't match number of partitions [${n}] of the source topic.`,
          )
        }
      }
    }
  }
}

function changelogCounts(
  subtopologies: readonly RecordSubtopology[],
  partitionCount: (t: string) => number | undefined,
): Map<string, number> {
  const out = new Map<string, number>()
  for (const s of subtopologies) {
    const inputs = [...s.sourceTopics, ...s.repartitionSourceTopics.map((t) => t.name)]
    if (inputs.length === 0)
      throw invalidTopology(`No source topics found for subtopology ${s.subtopologyId}`)
    const n = Math.max(
      ...inputs.map((t) => {
        const c = partitionCount(t)
        if (c === undefined) throw new Error(`No partition count for source topic ${t}`)
        return c
      }),
    )
    for (const t of s.stateChangelogTopics) out.set(t.name, n)
  }
  return out
}

function configureSubtopology(
  s: RecordSubtopology,
  partitionCount: (t: string) => number | undefined,
  decided: ReadonlyMap<string, number>,
): ConfiguredSubtopology {
  const inputs = [...s.sourceTopics, ...s.repartitionSourceTopics.map((t) => t.name)]
  const numberOfTasks = Math.max(...inputs.map((t) => partitionCount(t)!))
  const internal = (t: RecordSubtopology['stateChangelogTopics'][number]): ConfiguredInternalTopic => ({
    name: t.name,
    numberOfPartitions: t.partitions === 0 ? decided.get(t.name)! : t.partitions,
    replicationFactor: t.replicationFactor === 0 ? null : t.replicationFactor,
    topicConfigs: new Map(t.topicConfigs.map((c) => [c.key, c.value])),
  })
  return {
    numberOfTasks,
    sourceTopics: sortedNames(s.sourceTopics),
    repartitionSinkTopics: sortedNames(s.repartitionSinkTopics),
    repartitionSourceTopics: topicsByName(s.repartitionSourceTopics.map(internal)),
    stateChangelogTopics: topicsByName(s.stateChangelogTopics.map(internal)),
  }
}

/**
 * The names sorted, without duplicates: the recorded list itself when it is so already (most are:
 * one source topic, no sinks), so the configured topology keeps no copy of it.
 */
function sortedNames(names: readonly string[]): readonly string[] {
  if (names.length === 0) return NO_NAMES
  for (let i = 1; i < names.length; i++) {
    if (!(names[i - 1]! < names[i]!)) return [...new Set(names)].sort(byString)
  }
  return names
}
const NO_NAMES: readonly string[] = Object.freeze([])

function missingInternalTopics(
  configured: ReadonlyMap<string, ConfiguredSubtopology>,
  topology: StreamsTopology,
  image: TopicsImage,
): readonly CreatableTopic[] {
  const expected = new Map<string, ConfiguredInternalTopic>()
  for (const s of configured.values()) {
    for (const t of s.repartitionSourceTopics.values()) expected.set(t.name, t)
    for (const t of s.stateChangelogTopics.values()) expected.set(t.name, t)
  }
  for (const name of [...topology.requiredTopics()].sort(byString)) {
    const existing = image.topic(name)
    const want = expected.get(name)
    if (!existing || !want) continue
    expected.delete(name)
    if (existing.numPartitions !== want.numberOfPartitions) {
      throw new TopicConfigurationFailure(
        TopicStatusCode.INCORRECTLY_PARTITIONED_TOPICS,
        `Existing topic ${name} has different number of partitions: expected ${want.numberOfPartitions}, found ${existing.numPartitions}`,
      )
    }
  }
  if (expected.size === 0) return NO_TOPICS_TO_CREATE
  // Sorted by name where Kafka uses hash-map order (documented in docs/streams-groups.md).
  return [...expected.values()]
    .sort((a, b) => byString(a.name, b.name))
    .map((t) => ({
      name: t.name,
      numPartitions: t.numberOfPartitions,
      replicationFactor: t.replicationFactor ?? -1,
      configs: [...t.topicConfigs].map(([name, value]) => ({ name, value })),
    }))
}

/**
 * A stable 64-bit fingerprint of the required topics' metadata (topic id, name, partition count and
 * sorted replica racks per partition), combined in topic-name order; 0 when none exist. Kafka uses
 * XXH3 here; the value is internal and never reaches the wire, so FNV-1a is used instead.
 */
export function computeMetadataHash(topics: Iterable<string>, image: TopicsImage): bigint {
  const names = [...new Set(topics)].sort(byString)
  let any = false
  let h = FNV_OFFSET
  for (const name of names) {
    const t = image.topic(name)
    if (!t) continue
    any = true
    const racks = (t.partitionRacks ?? []).map((r) => [...r].sort(byString).join(',')).join(';')
    h = fnv1a(h, `\u0000${t.topicId}\u0001${name}\u0001${t.numPartitions}\u0001${racks}`)
  }
  return any ? BigInt.asIntN(64, h) : 0n
}

const FNV_OFFSET = 0xcbf29ce484222325n
const FNV_PRIME = 0x100000001b3n
const MASK = 0xffffffffffffffffn

function fnv1a(seed: bigint, s: string): bigint {
  let h = seed
  for (let i = 0; i < s.length; i++) {
    h ^= BigInt(s.charCodeAt(i))
    h = (h * FNV_PRIME) & MASK
  }
  return h
}

/** No internal topic to create (a ready topology), shared. */
const NO_TOPICS_TO_CREATE: readonly CreatableTopic[] = Object.freeze([])

/** Source partition counts when every source topic has one partition a task (most topologies). */
const NO_PARTITION_COUNTS: ReadonlyMap<string, number> = new Map()

/**
 * A read-only map over a list of subtopologies sorted by id, found by binary search (a Map's hash
 * table costs about 150 bytes even for one entry, kept by every group). One subtopology (most
 * topologies of a few operators have one) is kept as its id and itself, without a list.
 */
class SortedSubtopologies implements ReadonlyMap<string, ConfiguredSubtopology> {
  /** The id of the one subtopology; or id, subtopology, id, subtopology, …: sorted by id, no id twice. */
  readonly #k: string | readonly (string | ConfiguredSubtopology)[]
  /** The one subtopology (null with a list). */
  readonly #v: ConfiguredSubtopology | null

  constructor(kv: readonly (string | ConfiguredSubtopology)[]) {
    if (kv.length === 2) {
      this.#k = kv[0] as string
      this.#v = kv[1] as ConfiguredSubtopology
    } else {
      // Copied to its exact size (a list grown by push keeps spare room).
      this.#k = kv.slice()
      this.#v = null
    }
  }
  get size(): number {
    const k = this.#k
    return typeof k === 'string' ? 1 : k.length / 2
  }
  get(key: string): ConfiguredSubtopology | undefined {
    const kv = this.#k
    if (typeof kv === 'string') return kv === key ? this.#v! : undefined
    let lo = 0
    let hi = kv.length / 2 - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const k = kv[mid * 2] as string
      if (k === key) return kv[mid * 2 + 1] as ConfiguredSubtopology
      if (k < key) lo = mid + 1
      else hi = mid - 1
    }
    return undefined
  }
  has(key: string): boolean {
    return this.get(key) !== undefined
  }
  forEach(
    fn: (value: ConfiguredSubtopology, key: string, map: ReadonlyMap<string, ConfiguredSubtopology>) => void,
    thisArg?: unknown,
  ): void {
    for (const [k, v] of this) fn.call(thisArg, v, k, this)
  }
  *entries(): MapIterator<[string, ConfiguredSubtopology]> {
    const kv = this.#k
    if (typeof kv === 'string') yield [kv, this.#v!]
    else for (let i = 0; i < kv.length; i += 2) yield [kv[i] as string, kv[i + 1] as ConfiguredSubtopology]
  }
  *keys(): MapIterator<string> {
    for (const [k] of this) yield k
  }
  *values(): MapIterator<ConfiguredSubtopology> {
    for (const [, v] of this) yield v
  }
  [Symbol.iterator](): MapIterator<[string, ConfiguredSubtopology]> {
    return this.entries()
  }
}

/**
 * A configured topology whose subtopologies could be built (ready or not): it is also the sorted map
 * of its subtopologies (`subtopologies` is the object itself), so a group keeps one object where a
 * result, a map and the map's list would be three (about 90 bytes a group).
 */
class ConfiguredTopologyWithSubtopologies extends SortedSubtopologies implements ConfiguredTopology {
  readonly topologyEpoch: number
  readonly internalTopicsToBeCreated: readonly CreatableTopic[]
  readonly status: TopicConfigurationStatus | null
  readonly sourcePartitionCounts: ReadonlyMap<string, number>

  constructor(
    topologyEpoch: number,
    kv: readonly (string | ConfiguredSubtopology)[],
    internalTopicsToBeCreated: readonly CreatableTopic[],
    status: TopicConfigurationStatus | null,
    sourcePartitionCounts: ReadonlyMap<string, number>,
  ) {
    super(kv)
    this.topologyEpoch = topologyEpoch
    this.internalTopicsToBeCreated = internalTopicsToBeCreated
    this.status = status
    this.sourcePartitionCounts = sourcePartitionCounts
  }

  /** This object (see the class). */
  get subtopologies(): ReadonlyMap<string, ConfiguredSubtopology> {
    return this
  }
}

/** A stateless subtopology has no internal topics: one shared empty map (a Map costs a hash table). */
const NO_INTERNAL_TOPICS: ReadonlyMap<string, ConfiguredInternalTopic> = new Map()

function topicsByName(
  topics: readonly ConfiguredInternalTopic[],
): ReadonlyMap<string, ConfiguredInternalTopic> {
  return topics.length === 0 ? NO_INTERNAL_TOPICS : new Map(topics.map((t) => [t.name, t]))
}
