/**
 * The admin view of a stored topology description (Kafka's `StreamsGroupTopologyDescription`):
 * string-based subtopologies, nodes and global stores, with predecessors rebuilt by inverting the
 * successor lists. Lists keep the wire order and drop duplicates (Kafka uses sets).
 */
import { IllegalStateError } from '../network/errors.js'

export const StreamsGroupTopologyDescriptionStatus = {
  NOT_REQUESTED: 0,
  NOT_STORED: 1,
  ERROR: 2,
  AVAILABLE: 3,
} as const
export type StreamsGroupTopologyDescriptionStatus = keyof typeof StreamsGroupTopologyDescriptionStatus

/** The status for a wire id; throws `Unknown topology description status id: <id>` otherwise. */
export function topologyDescriptionStatusForId(id: number): StreamsGroupTopologyDescriptionStatus {
  for (const [name, v] of Object.entries(StreamsGroupTopologyDescriptionStatus)) {
    if (v === id) return name as StreamsGroupTopologyDescriptionStatus
  }
  throw new RangeError(`Unknown topology description status id: ${id}`)
}

export interface TopologySourceNode {
  readonly type: 'source'
  readonly name: string
  readonly topics: readonly string[]
  readonly successors: readonly string[]
  readonly predecessors: readonly string[]
}
export interface TopologyProcessorNode {
  readonly type: 'processor'
  readonly name: string
  readonly stores: readonly string[]
  readonly successors: readonly string[]
  readonly predecessors: readonly string[]
}
export interface TopologySinkNode {
  readonly type: 'sink'
  readonly name: string
  /** null for a dynamic (TopicNameExtractor) sink */
  readonly topic: string | null
  readonly successors: readonly string[]
  readonly predecessors: readonly string[]
}
export type TopologyNode = TopologySourceNode | TopologyProcessorNode | TopologySinkNode

export interface TopologySubtopology {
  readonly id: string
  readonly nodes: readonly TopologyNode[]
}
export interface TopologyGlobalStore {
  readonly source: TopologySourceNode
  readonly processor: TopologyProcessorNode
}
export interface StreamsGroupTopologyDescription {
  readonly subtopologies: readonly TopologySubtopology[]
  readonly globalStores: readonly TopologyGlobalStore[]
}

/** A wire node (the same shape in the describe response and the update request). */
export interface WireTopologyNode {
  readonly name: string
  readonly nodeType: number
  readonly sourceTopics: readonly string[]
  readonly sinkTopic: string | null
  readonly stores: readonly string[]
  readonly successors: readonly string[]
}
export interface WireTopologyDescription {
  readonly subtopologies: ReadonlyArray<{
    readonly subtopologyId: string
    readonly nodes: readonly WireTopologyNode[]
  }>
  readonly globalStores: ReadonlyArray<{
    readonly source: WireTopologyNode
    readonly processor: WireTopologyNode
  }>
}

function unique(xs: readonly string[]): string[] {
  return [...new Set(xs)]
}

function convertNodes(wire: readonly WireTopologyNode[]): TopologyNode[] {
  const names = new Set(wire.map((n) => n.name))
  const preds = new Map<string, string[]>()
  for (const n of wire) {
    for (const s of n.successors) {
      // A successor that names no node of this group is ignored, as Kafka does.
      if (!names.has(s)) continue
      const list = preds.get(s) ?? []
      if (!list.includes(n.name)) list.push(n.name)
      preds.set(s, list)
    }
  }
  return wire.map((n): TopologyNode => {
    const common = { name: n.name, successors: unique(n.successors), predecessors: preds.get(n.name) ?? [] }
    switch (n.nodeType) {
      case 1:
        return { type: 'source', ...common, topics: unique(n.sourceTopics) }
      case 2:
        return { type: 'processor', ...common, stores: unique(n.stores) }
      case 3:
        return { type: 'sink', ...common, topic: n.sinkTopic }
      default:
        throw new IllegalStateError(`Unknown topology node type: ${n.nodeType}`)
    }
  })
}

/** Converts the wire description as Kafka's DescribeStreamsGroupsHandler does. */
export function topologyDescriptionFromWire(wire: WireTopologyDescription): StreamsGroupTopologyDescription {
  return {
    subtopologies: wire.subtopologies.map((s) => ({ id: s.subtopologyId, nodes: convertNodes(s.nodes) })),
    globalStores: wire.globalStores.map((g) => {
      const [source, processor] = convertNodes([g.source, g.processor])
      if (source?.type !== 'source' || processor?.type !== 'processor') {
        throw new IllegalStateError('Global store must be composed of a source and a processor node.')
      }
      return { source, processor }
    }),
  }
}
