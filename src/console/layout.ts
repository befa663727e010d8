/**
 * Positions a TopologyGraph with elkjs' layered algorithm: boxes are compound nodes laid out with
 * their contents (hierarchy handling INCLUDE_CHILDREN), so edges between boxes, such as a repartition
 * topic feeding another subtopology, are routed across them. All coordinates are absolute.
 * DOM-free: the browser bundle and the tests use it.
 */
import elkModule, { type ElkExtendedEdge, type ElkNode } from 'elkjs/lib/elk.bundled.js'
import type { GraphBox, GraphEdge, GraphNode, TopologyGraph } from './model.js'

export interface Rect {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}
export interface Point {
  readonly x: number
  readonly y: number
}

export interface PlacedNode extends Rect {
  readonly node: GraphNode
  /** the label as drawn (long names are shortened; the full name is in the details) */
  readonly text: string
}
export interface PlacedBox extends Rect {
  readonly box: GraphBox
}
export interface PlacedEdge {
  readonly edge: GraphEdge
  /** start, bend points, end */
  readonly points: readonly Point[]
}
export interface GraphLayout extends Rect {
  readonly boxes: readonly PlacedBox[]
  readonly nodes: readonly PlacedNode[]
  readonly edges: readonly PlacedEdge[]
}

/** Longest label drawn in full; longer ones keep their start and end around an ellipsis. */
export const MAX_LABEL = 44
const CHAR_WIDTH = 7
export const NODE_HEIGHT = 30
export const BOX_HEADER = 26

export function shortLabel(label: string): string {
  if (label.length <= MAX_LABEL) return label
  const keep = MAX_LABEL - 1
  return `${label.slice(0, Math.ceil(keep / 2))}…${label.slice(label.length - Math.floor(keep / 2))}`
}

/** Width of a node: its text plus room for the shape (topics and stores have rounded ends). */
export function nodeWidth(node: GraphNode): number {
  const pad = node.kind === 'processor' || node.kind === 'source' || node.kind === 'sink' ? 24 : 40
  return Math.max(80, shortLabel(node.label).length * CHAR_WIDTH + pad)
}

const ROOT_OPTIONS: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.json.shapeCoords': 'ROOT',
  'elk.json.edgeCoords': 'ROOT',
  'elk.edgeRouting': 'ORTHOGONAL',
  'elk.spacing.nodeNode': '24',
  'elk.layered.spacing.nodeNodeBetweenLayers': '32',
  'elk.spacing.componentComponent': '40',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.padding': '[top=20,left=20,bottom=20,right=20]',
}
const BOX_OPTIONS: Record<string, string> = {
  'elk.padding': `[top=${BOX_HEADER + 14},left=14,bottom=14,right=14]`,
  'elk.nodeLabels.placement': 'INSIDE V_TOP H_LEFT',
}

/** The ELK input for a graph (exported for tests). */
export function elkInput(graph: TopologyGraph): ElkNode {
  const children = new Map<string | null, ElkNode[]>()
  const push = (parent: string | null, n: ElkNode): void => {
    const list = children.get(parent) ?? []
    list.push(n)
    children.set(parent, list)
  }
  for (const n of graph.nodes) push(n.box, { id: n.id, width: nodeWidth(n), height: NODE_HEIGHT })
  const boxes: ElkNode[] = graph.boxes.map((b) => ({
    id: b.id,
    layoutOptions: BOX_OPTIONS,
    // The header label needs room even when the box holds a single narrow node.
    children: children.get(b.id) ?? [],
    labels: [{ text: b.label, width: Math.min(b.label.length, 60) * CHAR_WIDTH, height: BOX_HEADER - 8 }],
  }))
  const edges: ElkExtendedEdge[] = graph.edges.map((e) => ({
    id: e.id,
    sources: [e.source],
    targets: [e.target],
  }))
  return {
    id: 'root',
    layoutOptions: ROOT_OPTIONS,
    children: [...boxes, ...(children.get(null) ?? [])],
    edges,
  }
}

// The bundled build is CommonJS and sets `default` on its export, so this resolves to the
// constructor under Node's ESM loader, esbuild and TypeScript alike.
const ELK = elkModule.default
let elk: InstanceType<typeof ELK> | null = null

export async function layoutGraph(graph: TopologyGraph): Promise<GraphLayout> {
  elk ??= new ELK()
  const out = await elk.layout(elkInput(graph))
  const rects = new Map<string, Rect>()
  const walk = (n: ElkNode): void => {
    rects.set(n.id, { x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0 })
    for (const c of n.children ?? []) walk(c)
  }
  walk(out)
  const rect = (id: string): Rect => {
    const r = rects.get(id)
    if (r === undefined) throw new Error(`The layout lost ${id}`)
    return r
  }
  const placedEdges: PlacedEdge[] = []
  const byId = new Map(graph.edges.map((e) => [e.id, e]))
  const collect = (n: ElkNode): void => {
    for (const e of n.edges ?? []) {
      const edge = byId.get(e.id)
      if (edge === undefined) continue
      const points: Point[] = []
      for (const s of e.sections ?? []) points.push(s.startPoint, ...(s.bendPoints ?? []), s.endPoint)
      placedEdges.push({ edge, points })
    }
    for (const c of n.children ?? []) collect(c)
  }
  collect(out)
  const root = rect('root')
  return {
    x: 0,
    y: 0,
    width: root.width,
    height: root.height,
    boxes: graph.boxes.map((box) => ({ box, ...rect(box.id) })),
    nodes: graph.nodes.map((node) => ({ node, text: shortLabel(node.label), ...rect(node.id) })),
    edges: placedEdges,
  }
}
