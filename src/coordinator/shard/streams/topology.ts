/**
 * The group's topology as recorded (StreamsGroupTopology record value), with the lookups the
 * coordinator needs. Subtopology order is the order the client sent.
 */
import type { TaggedField } from '../../../protocol/reader.js'
import type {
  RecordSubtopology,
  RecordTopicInfo,
  RequestTopology,
  StreamsGroupTopologyValue,
} from './wire.js'

/** Up to this many subtopologies, StreamsTopology.subtopology searches them in order. */
const SEARCHED_SUBTOPOLOGIES = 8

/**
 * The topology is its record value too (one object a group instead of two): its fields are the
 * record's, each empty list the shared one.
 */
export class StreamsTopology implements StreamsGroupTopologyValue {
  /** Read by every heartbeat. */
  readonly epoch: number
  readonly subtopologies: RecordSubtopology[]
  /** The record's unknown tagged fields, when it had any (no field otherwise). */
  declare readonly unknownTaggedFields?: TaggedField[]
  /**
   * Subtopology id → subtopology, for a topology with many subtopologies; a few are searched in
   * order instead (a Map costs about 180 bytes, kept as long as the group).
   */
  readonly #byId: Map<string, RecordSubtopology> | null

  constructor(recorded: StreamsGroupTopologyValue) {
    this.epoch = recorded.epoch
    this.subtopologies = recorded.subtopologies.map(withSharedEmptyLists)
    if (recorded.unknownTaggedFields !== undefined)
      (this as { unknownTaggedFields?: TaggedField[] }).unknownTaggedFields = recorded.unknownTaggedFields
    this.#byId =
      this.subtopologies.length > SEARCHED_SUBTOPOLOGIES
        ? new Map(this.subtopologies.map((s) => [s.subtopologyId, s]))
        : null
  }

  /** The record value (StreamsGroupTopology): the topology itself. */
  get value(): StreamsGroupTopologyValue {
    return this
  }

  subtopology(id: string): RecordSubtopology | undefined {
    if (this.#byId !== null) return this.#byId.get(id)
    // From the end: of two with one id, the later one, as the Map keeps it.
    const subtopologies = this.subtopologies
    for (let i = subtopologies.length - 1; i >= 0; i--)
      if (subtopologies[i]!.subtopologyId === id) return subtopologies[i]
    return undefined
  }

  /** Source, repartition-source and changelog topics: the topics whose metadata the group depends on. */
  requiredTopics(): Set<string> {
    const out = new Set<string>()
    for (const s of this.subtopologies) {
      for (const t of s.sourceTopics) out.add(t)
      for (const t of s.repartitionSourceTopics) out.add(t.name)
      for (const t of s.stateChangelogTopics) out.add(t.name)
    }
    return out
  }
}

/**
 * What names topics in a subtopology, alike in the heartbeat request, the topology record and the
 * describe response.
 */
export interface TopicNamingSubtopology {
  readonly sourceTopics: readonly string[]
  readonly repartitionSinkTopics: readonly string[]
  readonly repartitionSourceTopics: readonly { readonly name: string }[]
  readonly stateChangelogTopics: readonly { readonly name: string }[]
}

/**
 * Every topic a topology names, each once, in order of first mention: per subtopology its source,
 * repartition sink, repartition source and changelog topics (Kafka's KafkaApis gathers a heartbeat
 * topology's topics so before its name and DESCRIBE checks).
 */
export function topologyTopicNames(subtopologies: readonly TopicNamingSubtopology[]): string[] {
  const names = new Set<string>()
  for (const s of subtopologies) {
    for (const t of s.sourceTopics) names.add(t)
    for (const t of s.repartitionSinkTopics) names.add(t)
    for (const t of s.repartitionSourceTopics) names.add(t.name)
    for (const t of s.stateChangelogTopics) names.add(t.name)
  }
  return [...names]
}

/** The one empty list of every kept topology (frozen: nothing may add to it). */
const EMPTY_LIST: never[] = Object.freeze([]) as unknown as never[]

/**
 * The shared empty list when the list is empty, else a copy. The copy is for the hidden classes: a
 * list decoded from the store is holey (the decoder sizes the array, then fills it) and one copied
 * from a request is packed, and V8 keeps the kind of array a field holds in the map of the object
 * holding it, so a topology reloaded after a restart would have other maps than a live one.
 */
const orShared = <T>(list: T[]): T[] => (list.length === 0 ? EMPTY_LIST : packed(list))

/** A packed copy of a list (a spread, `slice` or `Array.from` of a holey array is holey). */
function packed<T>(list: readonly T[]): T[] {
  const out: T[] = []
  for (let i = 0; i < list.length; i++) out.push(list[i]!)
  return out
}

const withSharedTopicInfoLists = (list: RecordTopicInfo[]): RecordTopicInfo[] =>
  list.length === 0
    ? EMPTY_LIST
    : list.map((t) => (t.topicConfigs.length === 0 ? { ...t, topicConfigs: EMPTY_LIST } : t))

/**
 * The subtopology with each of its empty lists the shared empty list. A group keeps its topology
 * for as long as it lives, an empty array costs 32 bytes, and most of a subtopology's seven lists
 * are empty (a stateless subtopology has one source topic and nothing else). Every other field
 * (unknown tagged fields too) is kept as it is.
 */
function withSharedEmptyLists(s: RecordSubtopology): RecordSubtopology {
  // Every field named, not a spread of `s`: an object a spread builds takes its size from the
  // spread's first objects, so the first topologies of a process got other maps than the later ones.
  const kept: RecordSubtopology = {
    subtopologyId: s.subtopologyId,
    sourceTopics: orShared(s.sourceTopics),
    sourceTopicRegex: orShared(s.sourceTopicRegex),
    stateChangelogTopics: withSharedTopicInfoLists(s.stateChangelogTopics),
    repartitionSinkTopics: orShared(s.repartitionSinkTopics),
    repartitionSourceTopics: withSharedTopicInfoLists(s.repartitionSourceTopics),
    copartitionGroups: orShared(s.copartitionGroups),
  }
  if (s.unknownTaggedFields !== undefined) kept.unknownTaggedFields = s.unknownTaggedFields
  return kept
}

const copyTopicInfo = (t: {
  name: string
  partitions: number
  replicationFactor: number
  topicConfigs: readonly { key: string; value: string }[]
}): RecordTopicInfo => ({
  name: t.name,
  partitions: t.partitions,
  replicationFactor: t.replicationFactor,
  topicConfigs: t.topicConfigs.map((c) => ({ key: c.key, value: c.value })),
})

/** Converts a heartbeat topology into the record form, keeping every list in the order sent. */
export function topologyRecordFromRequest(topology: RequestTopology): StreamsGroupTopologyValue {
  return {
    epoch: topology.epoch,
    subtopologies: topology.subtopologies.map((s) => ({
      subtopologyId: s.subtopologyId,
      sourceTopics: [...s.sourceTopics],
      sourceTopicRegex: [...s.sourceTopicRegex],
      stateChangelogTopics: s.stateChangelogTopics.map(copyTopicInfo),
      repartitionSinkTopics: [...s.repartitionSinkTopics],
      repartitionSourceTopics: s.repartitionSourceTopics.map(copyTopicInfo),
      copartitionGroups: s.copartitionGroups.map((g) => ({
        sourceTopics: [...g.sourceTopics],
        sourceTopicRegex: [...g.sourceTopicRegex],
        repartitionSourceTopics: [...g.repartitionSourceTopics],
      })),
    })),
  }
}

/** Order-sensitive equality of two recorded topologies (epoch and every subtopology field). */
export function topologyEquals(a: StreamsGroupTopologyValue, b: StreamsGroupTopologyValue): boolean {
  return canonical(a) === canonical(b)
}

function canonical(t: StreamsGroupTopologyValue): string {
  // Rebuild through the converter so both sides have the same key order, then serialise.
  return JSON.stringify(topologyRecordFromRequest(t))
}
