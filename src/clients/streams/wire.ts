/**
 * Wire forms of a Topology: the KIP-1331 description (Kafka's TopologyDescriptionConverter rules)
 * and the StreamsGroupHeartbeat topology sent when joining.
 */
import type {
  StreamsGroupHeartbeatRequestSubtopology,
  StreamsGroupHeartbeatRequestTopology,
} from '../../protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import type {
  StreamsGroupTopologyDescriptionUpdateRequestTopologyDescription,
  StreamsGroupTopologyDescriptionUpdateRequestTopologyDescriptionNode,
} from '../../protocol/generated/messages/StreamsGroupTopologyDescriptionUpdateRequest.js'
import type { DescribedNode, Topology, TopologyDescription } from './topology.js'

export type WireDescription = StreamsGroupTopologyDescriptionUpdateRequestTopologyDescription
type WireNode = StreamsGroupTopologyDescriptionUpdateRequestTopologyDescriptionNode

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** `<prefix>-<topic>` for topics registered as internal in this topology; others unchanged. */
export function internalTopicDecorator(
  topology: Topology,
  prefix: string,
): (topic: string | null) => string | null {
  const internal = topology.internals.repartitionTopics
  return (t) => (t !== null && internal.has(t) ? `${prefix}-${t}` : t)
}

function toWireNode(n: DescribedNode, decorate: (t: string | null) => string | null): WireNode {
  const node: WireNode = {
    name: n.name,
    nodeType: n.kind === 'source' ? 1 : n.kind === 'processor' ? 2 : 3,
    sourceTopics: [],
    sinkTopic: null,
    stores: [],
    successors: [...n.successors].sort(byCodeUnits),
  }
  if (n.kind === 'source') {
    // A pattern source has no topic set: the regex is not sent.
    node.sourceTopics = n.topics === null ? [] : n.topics.map((t) => decorate(t)!).sort(byCodeUnits)
  } else if (n.kind === 'processor') {
    node.stores = [...n.stores].sort(byCodeUnits)
  } else {
    node.sinkTopic = decorate(n.topic)
  }
  return node
}

/** Kafka's TopologyDescriptionConverter.toWire. */
export function topologyDescriptionToWire(
  d: TopologyDescription,
  decorate: (topic: string | null) => string | null = (t) => t,
): WireDescription {
  return {
    subtopologies: [...d.subtopologies]
      .sort((a, b) => a.id - b.id)
      .map((s) => ({
        subtopologyId: String(s.id),
        nodes: s.nodes.map((n) => toWireNode(n, decorate)).sort((a, b) => byCodeUnits(a.name, b.name)),
      })),
    globalStores: [...d.globalStores]
      .sort((a, b) => a.id - b.id)
      .map((g) => ({ source: toWireNode(g.source, decorate), processor: toWireNode(g.processor, decorate) })),
  }
}

export interface HeartbeatTopologyOptions {
  readonly applicationId: string
  readonly epoch?: number
  /** replication.factor for internal topics (-1 = broker default) */
  readonly replicationFactor?: number
  /** Kafka Streams' `topic.*` configs, without the prefix: every internal topic's configs */
  readonly topicConfigs?: Readonly<Record<string, string>>
}

/**
 * The configs Kafka Streams puts on every internal topic (InternalTopicConfig), on repartition
 * topics (RepartitionTopicConfig: kept until the members purge them, in 50 MiB segments) and on
 * the changelogs of key-value stores (UnwindowedUnversionedChangelogTopicConfig). This client has
 * no windowed or versioned stores, whose changelogs Kafka Streams also gives `retention.ms` or
 * `min.compaction.lag.ms` from the store's retention.
 */
const INTERNAL_TOPIC_DEFAULTS = { 'message.timestamp.type': 'CreateTime' }
const REPARTITION_TOPIC_DEFAULTS: Readonly<Record<string, string>> = {
  ...INTERNAL_TOPIC_DEFAULTS,
  'cleanup.policy': 'delete',
  'segment.bytes': '52428800',
  'retention.ms': '-1',
}
const CHANGELOG_TOPIC_DEFAULTS: Readonly<Record<string, string>> = {
  ...INTERNAL_TOPIC_DEFAULTS,
  'cleanup.policy': 'compact',
}

/**
 * An internal topic's configs as Kafka Streams lays them: the library's defaults, then the
 * application's `topic.*` configs, then the topic's own; sorted by key as Kafka's heartbeat sends
 * them.
 */
function internalTopicConfigs(
  ...layers: readonly Readonly<Record<string, string>>[]
): { key: string; value: string }[] {
  return Object.entries(Object.assign({}, ...layers) as Record<string, string>)
    .sort(([a], [b]) => byCodeUnits(a, b))
    .map(([key, value]) => ({ key, value }))
}

/** The heartbeat `Topology` (sorted lists; internal topics prefixed with the application id). */
export function heartbeatTopology(
  topology: Topology,
  opts: HeartbeatTopologyOptions,
): StreamsGroupHeartbeatRequestTopology {
  const { repartitionTopics, stores, copartitionGroups, nodeGroups, node } = topology.internals
  const decorate = internalTopicDecorator(topology, opts.applicationId)
  const rf = opts.replicationFactor ?? -1
  const appConfigs = opts.topicConfigs ?? {}
  const subtopologies: StreamsGroupHeartbeatRequestSubtopology[] = []
  for (const g of nodeGroups) {
    if (g.global) continue
    const sourceTopics = new Set<string>()
    const sourceRegex = new Set<string>()
    const repartitionSources = new Set<string>()
    const repartitionSinks = new Set<string>()
    const changelogs = new Map<string, Readonly<Record<string, string>>>()
    for (const name of g.nodes) {
      const n = node(name)
      if (n.kind === 'source') {
        if (n.pattern !== undefined) sourceRegex.add(n.pattern.source)
        for (const t of n.topics ?? []) (repartitionTopics.has(t) ? repartitionSources : sourceTopics).add(t)
      } else if (n.kind === 'sink' && n.sinkTopic !== undefined && repartitionTopics.has(n.sinkTopic)) {
        repartitionSinks.add(n.sinkTopic)
      }
      for (const s of n.stores) {
        const store = stores.get(s)
        if (store?.logged === true) changelogs.set(`${opts.applicationId}-${s}-changelog`, store.logConfig)
      }
    }
    const sortedSources = [...sourceTopics].sort(byCodeUnits)
    const sortedRepartition = [...repartitionSources].map((t) => decorate(t)!).sort(byCodeUnits)
    subtopologies.push({
      subtopologyId: String(g.id),
      sourceTopics: sortedSources,
      sourceTopicRegex: [...sourceRegex].sort(byCodeUnits),
      stateChangelogTopics: [...changelogs]
        .sort(([a], [b]) => byCodeUnits(a, b))
        .map(([name, own]) => ({
          name,
          partitions: 0,
          replicationFactor: rf,
          topicConfigs: internalTopicConfigs(CHANGELOG_TOPIC_DEFAULTS, appConfigs, own),
        })),
      repartitionSinkTopics: [...repartitionSinks].map((t) => decorate(t)!).sort(byCodeUnits),
      repartitionSourceTopics: sortedRepartition.map((name) => ({
        name,
        partitions: repartitionTopics.get(name.slice(opts.applicationId.length + 1))?.partitions ?? 0,
        replicationFactor: rf,
        topicConfigs: internalTopicConfigs(REPARTITION_TOPIC_DEFAULTS, appConfigs),
      })),
      copartitionGroups: copartitionGroups
        .filter((cg) => cg.some((t) => sourceTopics.has(t) || repartitionSources.has(t)))
        .map((cg) => ({
          sourceTopics: cg.map((t) => sortedSources.indexOf(t)).filter((i) => i >= 0),
          sourceTopicRegex: [],
          repartitionSourceTopics: cg
            .map((t) => sortedRepartition.indexOf(decorate(t)!))
            .filter((i) => i >= 0),
        })),
    })
  }
  return { epoch: opts.epoch ?? 0, subtopologies }
}
