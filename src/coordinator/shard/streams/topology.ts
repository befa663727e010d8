/**
 * The group's topology as recorded (StreamsGroupTopology record value), with the lookups the
 * coordinator needs. Subtopology order is the order the client sent.
 */
import type {
  RecordSubtopology,
  RecordTopicInfo,
  RequestTopology,
  StreamsGroupTopologyValue,
} from './wire.js'

/** Up to this many subtopologies, StreamsTopology.subtopology searches them in order. */
const SEARCHED_SUBTOPOLOGIES = 8

export class StreamsTopology {
  readonly value: StreamsGroupTopologyValue
  /** `value.epoch` (read by every heartbeat; kept here to save a hop). */
  readonly epoch: number
  /**
   * Subtopology id → subtopology, for a topology with many subtopologies; a few are searched in
   * order instead (a Map costs about 180 bytes, kept as long as the group).
   */
  readonly #byId: Map<string, RecordSubtopology> | null

  constructor(value: StreamsGroupTopologyValue) {
    this.value = value
    this.epoch = value.epoch
    this.#byId =
      value.subtopologies.length > SEARCHED_SUBTOPOLOGIES
        ? new Map(value.subtopologies.map((s) => [s.subtopologyId, s]))
        : null
  }

  subtopology(id: string): RecordSubtopology | undefined {
    if (this.#byId !== null) return this.#byId.get(id)
    // From the end: of two with one id, the later one, as the Map keeps it.
    const subtopologies = this.value.subtopologies
    for (let i = subtopologies.length - 1; i >= 0; i--)
      if (subtopologies[i]!.subtopologyId === id) return subtopologies[i]
    return undefined
  }

  get subtopologies(): readonly RecordSubtopology[] {
    return this.value.subtopologies
  }

  /** Source, repartition-source and changelog topics: the topics whose metadata the group depends on. */
  requiredTopics(): Set<string> {
    const out = new Set<string>()
    for (const s of this.value.subtopologies) {
      for (const t of s.sourceTopics) out.add(t)
      for (const t of s.repartitionSourceTopics) out.add(t.name)
      for (const t of s.stateChangelogTopics) out.add(t.name)
    }
    return out
  }

  /** Every topic named anywhere in the topology (source, repartition sink/source, changelog), deduplicated. */
  allTopicNames(): string[] {
    const out = new Set<string>()
    for (const s of this.value.subtopologies) {
      for (const t of s.sourceTopics) out.add(t)
      for (const t of s.repartitionSinkTopics) out.add(t)
      for (const t of s.repartitionSourceTopics) out.add(t.name)
      for (const t of s.stateChangelogTopics) out.add(t.name)
    }
    return [...out]
  }
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
