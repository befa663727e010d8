/**
 * The structured KIP-1331 topology description turned into a graph the console draws: subtopologies
 * and global stores are boxes, sources / processors / sinks are nodes inside them, topics are
 * shared nodes outside every box (so a repartition topic links the subtopology writing it to the one
 * reading it), state stores are nodes inside the box of the processors using them.
 *
 * Pure and DOM-free: the browser bundle and the server both use it.
 */
import type {
  StreamsGroupTopologyDescription,
  TopologyNode,
  TopologyProcessorNode,
  TopologySourceNode,
} from '../clients/admin/index.js'

export type GraphNodeKind =
  | 'source'
  | 'processor'
  | 'sink'
  | 'topic'
  /** the topics of a pattern source: the description carries no names for them */
  | 'topic-pattern'
  /** the topics of a sink with a TopicNameExtractor: chosen per record, not known */
  | 'topic-dynamic'
  | 'store'

export type GraphBoxKind = 'subtopology' | 'global-store'

export type GraphEdgeKind =
  /** a node's successor in the description */
  | 'successor'
  /** a topic read by a source */
  | 'reads'
  /** a topic written by a sink */
  | 'writes'
  /** a processor connected to a state store */
  | 'store'

export interface GraphBox {
  readonly id: string
  readonly kind: GraphBoxKind
  readonly label: string
  /** the subtopology id for a subtopology box, the global store's index otherwise */
  readonly key: string
}

export interface GraphNode {
  readonly id: string
  readonly kind: GraphNodeKind
  readonly label: string
  /** the id of the box it is drawn in; null for a node outside every box (topics) */
  readonly box: string | null
  /** what a click on the node shows, in display order */
  readonly details: ReadonlyArray<readonly [string, string]>
}

export interface GraphEdge {
  readonly id: string
  readonly kind: GraphEdgeKind
  readonly source: string
  readonly target: string
}

export interface TopologyGraph {
  readonly boxes: readonly GraphBox[]
  readonly nodes: readonly GraphNode[]
  readonly edges: readonly GraphEdge[]
  /** successors that name no node of their subtopology (Kafka ignores them; so does the drawing) */
  readonly danglingSuccessors: ReadonlyArray<{ readonly from: string; readonly to: string }>
}

/** The id of a topology node: its box and its name, since names are unique only per box. */
export const topologyNodeId = (boxId: string, name: string): string => `node:${boxId}/${name}`
export const subtopologyBoxId = (subtopologyId: string): string => `subtopology:${subtopologyId}`
export const globalStoreBoxId = (index: number): string => `global:${index}`
export const topicNodeId = (topic: string): string => `topic:${topic}`
export const storeNodeId = (boxId: string, store: string): string => `store:${boxId}/${store}`

const list = (xs: readonly string[]): string => (xs.length === 0 ? '—' : xs.join(', '))

class GraphBuilder {
  readonly boxes: GraphBox[] = []
  readonly nodes: GraphNode[] = []
  readonly edges: GraphEdge[] = []
  readonly dangling: Array<{ from: string; to: string }> = []
  readonly #nodeIds = new Set<string>()
  readonly #edgeIds = new Set<string>()
  readonly #topicReaders = new Map<string, string[]>()
  readonly #topicWriters = new Map<string, string[]>()

  addNode(node: GraphNode): void {
    if (this.#nodeIds.has(node.id)) return
    this.#nodeIds.add(node.id)
    this.nodes.push(node)
  }

  addEdge(kind: GraphEdgeKind, source: string, target: string): void {
    const id = `${kind}:${source}->${target}`
    if (this.#edgeIds.has(id)) return
    this.#edgeIds.add(id)
    this.edges.push({ id, kind, source, target })
  }

  reads(topic: string, source: string): void {
    const readers = this.#topicReaders.get(topic) ?? []
    readers.push(source)
    this.#topicReaders.set(topic, readers)
  }

  writes(topic: string, sink: string): void {
    const writers = this.#topicWriters.get(topic) ?? []
    writers.push(sink)
    this.#topicWriters.set(topic, writers)
  }

  /** Topic nodes are added last, once every reader and writer is known. */
  addTopics(): void {
    const topics = new Set([...this.#topicWriters.keys(), ...this.#topicReaders.keys()])
    for (const t of topics) {
      const readers = this.#topicReaders.get(t) ?? []
      const writers = this.#topicWriters.get(t) ?? []
      const id = topicNodeId(t)
      this.addNode({
        id,
        kind: 'topic',
        label: t,
        box: null,
        details: [
          ['Topic', t],
          ['Read by', list(readers)],
          ['Written by', list(writers)],
        ],
      })
    }
  }

  /** The nodes of one box with their successor edges, stores and topics. */
  addBoxNodes(boxId: string, boxLabel: string, nodes: readonly TopologyNode[]): void {
    const names = new Set(nodes.map((n) => n.name))
    for (const n of nodes) {
      const id = topologyNodeId(boxId, n.name)
      const common: Array<[string, string]> = [
        ['Name', n.name],
        ['Type', n.type],
        ['In', boxLabel],
      ]
      if (n.type === 'source') {
        const details: Array<[string, string]> = [
          ...common,
          [
            'Topics',
            n.topics.length === 0 ? 'a topic pattern (not part of the description)' : list(n.topics),
          ],
        ]
        this.addNode({ id, kind: 'source', label: n.name, box: boxId, details: [...details, ...links(n)] })
        if (n.topics.length === 0) {
          // A pattern source: KIP-1331 sends no topic names and no regex for it.
          const patternId = `pattern:${boxId}/${n.name}`
          this.addNode({
            id: patternId,
            kind: 'topic-pattern',
            label: 'topic pattern',
            box: null,
            details: [
              ['Topics', 'every topic matching the pattern of the source'],
              ['Read by', n.name],
              ['Note', 'the description names neither the pattern nor the topics it matches'],
            ],
          })
          this.addEdge('reads', patternId, id)
        }
        for (const t of n.topics) {
          this.reads(t, n.name)
          this.addEdge('reads', topicNodeId(t), id)
        }
      } else if (n.type === 'processor') {
        this.addNode({
          id,
          kind: 'processor',
          label: n.name,
          box: boxId,
          details: [...common, ['Stores', list(n.stores)], ...links(n)],
        })
        for (const s of n.stores) this.#addStore(boxId, boxLabel, s, n)
      } else {
        const details: Array<[string, string]> = [
          ...common,
          ['Topic', n.topic ?? 'chosen per record by a TopicNameExtractor'],
        ]
        this.addNode({ id, kind: 'sink', label: n.name, box: boxId, details: [...details, ...links(n)] })
        if (n.topic === null) {
          const dynamicId = `dynamic:${boxId}/${n.name}`
          this.addNode({
            id: dynamicId,
            kind: 'topic-dynamic',
            label: 'dynamic topic',
            box: null,
            details: [
              ['Topic', 'chosen per record by a TopicNameExtractor'],
              ['Written by', n.name],
            ],
          })
          this.addEdge('writes', id, dynamicId)
        } else {
          this.writes(n.topic, n.name)
          this.addEdge('writes', id, topicNodeId(n.topic))
        }
      }
      for (const s of n.successors) {
        if (!names.has(s)) {
          this.dangling.push({ from: n.name, to: s })
          continue
        }
        this.addEdge('successor', id, topologyNodeId(boxId, s))
      }
    }
  }

  #addStore(boxId: string, boxLabel: string, store: string, user: TopologyProcessorNode): void {
    const id = storeNodeId(boxId, store)
    if (!this.#nodeIds.has(id)) {
      this.addNode({
        id,
        kind: 'store',
        label: store,
        box: boxId,
        details: [
          ['State store', store],
          ['In', boxLabel],
        ],
      })
    }
    this.addEdge('store', topologyNodeId(boxId, user.name), id)
  }
}

function links(n: TopologyNode): Array<[string, string]> {
  return [
    ['Successors', list(n.successors)],
    ['Predecessors', list(n.predecessors)],
  ]
}

const sourceTopicsLabel = (s: TopologySourceNode): string =>
  s.topics.length === 0 ? 'a topic pattern' : s.topics.join(', ')

/** Converts a description to the graph the console draws. Linear in nodes + edges. */
export function topologyGraph(description: StreamsGroupTopologyDescription): TopologyGraph {
  const b = new GraphBuilder()
  for (const s of description.subtopologies) {
    const boxId = subtopologyBoxId(s.id)
    const label = `Sub-topology: ${s.id}`
    b.boxes.push({ id: boxId, kind: 'subtopology', label, key: s.id })
    b.addBoxNodes(boxId, label, s.nodes)
  }
  description.globalStores.forEach((g, i) => {
    const boxId = globalStoreBoxId(i)
    const stores = g.processor.stores.length === 0 ? 'no store named' : g.processor.stores.join(', ')
    const label = `Global store: ${stores} (from ${sourceTopicsLabel(g.source)})`
    b.boxes.push({ id: boxId, kind: 'global-store', label, key: String(i) })
    b.addBoxNodes(boxId, label, [g.source, g.processor])
  })
  b.addTopics()
  return { boxes: b.boxes, nodes: b.nodes, edges: b.edges, danglingSuccessors: b.dangling }
}
