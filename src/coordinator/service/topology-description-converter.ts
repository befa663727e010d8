/**
 * Wire ↔ plugin shapes of a topology description (Kafka's StreamsGroupTopologyDescriptionConverter,
 * kip1331-broker.md §3.2 step 4, protocol.md §6.6): node types 1 = SOURCE, 2 = PROCESSOR, 3 = SINK;
 * string lists keep wire order with duplicates dropped; fields that do not belong to a node's type
 * are ignored.
 */
import { invalidRequest } from '../../protocol/api-error.js'
import type {
  GlobalStoreDescription,
  ProcessorNode,
  SourceNode,
  StreamsGroupTopologyDescription,
  TopologyNode,
} from '../../plugin/spi.js'
import type {
  StreamsGroupDescribeResponseTopologyDescription,
  StreamsGroupDescribeResponseTopologyDescriptionNode,
} from '../../protocol/generated/messages/StreamsGroupDescribeResponse.js'

export const NODE_TYPE_SOURCE = 1
export const NODE_TYPE_PROCESSOR = 2
export const NODE_TYPE_SINK = 3

/** A wire node (the push request and the describe response have the same fields). */
export interface WireTopologyNode {
  readonly name: string
  readonly nodeType: number
  readonly sourceTopics: readonly string[]
  readonly sinkTopic: string | null
  readonly stores: readonly string[]
  readonly successors: readonly string[]
}

export interface WireTopologyDescription {
  readonly subtopologies: readonly {
    readonly subtopologyId: string
    readonly nodes: readonly WireTopologyNode[]
  }[]
  readonly globalStores: readonly {
    readonly source: WireTopologyNode
    readonly processor: WireTopologyNode
  }[]
}

const distinct = (list: readonly string[]): string[] => [...new Set(list)]

function nodeFromWire(n: WireTopologyNode): TopologyNode {
  switch (n.nodeType) {
    case NODE_TYPE_SOURCE:
      return {
        type: 'source',
        name: n.name,
        topics: distinct(n.sourceTopics),
        successors: distinct(n.successors),
      }
    case NODE_TYPE_PROCESSOR:
      return {
        type: 'processor',
        name: n.name,
        stores: distinct(n.stores),
        successors: distinct(n.successors),
      }
    case NODE_TYPE_SINK:
      return { type: 'sink', name: n.name, topic: n.sinkTopic, successors: distinct(n.successors) }
    default:
      throw invalidRequest(`Unknown topology node type: ${n.nodeType}`)
  }
}

/** The pushed description as the plugin stores it. */
export function descriptionFromWire(wire: WireTopologyDescription): StreamsGroupTopologyDescription {
  const subtopologies = wire.subtopologies.map((s) => ({
    id: s.subtopologyId,
    nodes: s.nodes.map(nodeFromWire),
  }))
  const globalStores: GlobalStoreDescription[] = wire.globalStores.map((g) => {
    const source = nodeFromWire(g.source)
    const processor = nodeFromWire(g.processor)
    if (source.type !== 'source' || processor.type !== 'processor') {
      throw invalidRequest('Global store must be composed of a source and a processor node.')
    }
    return { source: source as SourceNode, processor: processor as ProcessorNode }
  })
  return { subtopologies, globalStores }
}

function nodeToWire(n: TopologyNode): StreamsGroupDescribeResponseTopologyDescriptionNode {
  switch (n.type) {
    case 'source':
      return {
        name: n.name,
        nodeType: NODE_TYPE_SOURCE,
        sourceTopics: [...n.topics],
        sinkTopic: null,
        stores: [],
        successors: [...n.successors],
      }
    case 'processor':
      return {
        name: n.name,
        nodeType: NODE_TYPE_PROCESSOR,
        sourceTopics: [],
        sinkTopic: null,
        stores: [...n.stores],
        successors: [...n.successors],
      }
    case 'sink':
      return {
        name: n.name,
        nodeType: NODE_TYPE_SINK,
        sourceTopics: [],
        sinkTopic: n.topic,
        stores: [],
        successors: [...n.successors],
      }
    default:
      throw invalidRequest(`Unknown topology node type: ${String((n as { type?: unknown }).type)}`)
  }
}

/** A stored description as the describe response carries it. Throws on a malformed node. */
export function descriptionToWire(
  d: StreamsGroupTopologyDescription,
): StreamsGroupDescribeResponseTopologyDescription {
  return {
    subtopologies: d.subtopologies.map((s) => ({ subtopologyId: s.id, nodes: s.nodes.map(nodeToWire) })),
    globalStores: d.globalStores.map((g) => ({
      source: nodeToWire(g.source),
      processor: nodeToWire(g.processor),
    })),
  }
}
