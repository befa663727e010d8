/**
 * Renders a stored topology description: `text` is byte-identical to Kafka's
 * TopologyDescriptionFormatter (three-space subtopology lines, sorted names, global stores numbered
 * from the subtopology count); `json`, `dot` and `mermaid` are Topograph additions.
 */
import type {
  StreamsGroupTopologyDescription,
  TopologyNode,
} from '../../clients/admin/topology-description.js'

// Plain sort() compares UTF-16 code units, as Java's String.compareTo does; never localeCompare.
const sorted = (xs: readonly string[]): string[] => [...xs].sort()
const setText = (xs: readonly string[]): string => `[${sorted(xs).join(', ')}]`
const names = (xs: readonly string[]): string => (xs.length === 0 ? 'none' : sorted(xs).join(', '))

function nodeText(n: TopologyNode): string {
  switch (n.type) {
    case 'source':
      return `Source: ${n.name} (topics: ${setText(n.topics)})\n      --> ${names(n.successors)}`
    case 'processor':
      return `Processor: ${n.name} (stores: ${setText(n.stores)})\n      --> ${names(n.successors)}\n      <-- ${names(n.predecessors)}`
    case 'sink':
      return `Sink: ${n.name} (topic: ${n.topic ?? 'null'})\n      <-- ${names(n.predecessors)}`
  }
}

/** Kafka's format; the string ends with a blank line after each block. */
export function formatTopologyText(d: StreamsGroupTopologyDescription): string {
  let out = 'Topologies:\n'
  for (const s of d.subtopologies) {
    out += `   Sub-topology: ${s.id}\n`
    for (const n of s.nodes) out += `    ${nodeText(n)}\n`
    out += '\n'
  }
  let k = d.subtopologies.length
  for (const g of d.globalStores) {
    out += `   Sub-topology: ${k} for global store (will not generate tasks)\n`
    out += `    ${nodeText(g.source)}\n`
    out += `    ${nodeText(g.processor)}\n`
    out += '\n'
    k++
  }
  return out
}

/** The description as JSON (nodes in the order received), ending with a newline. */
export function formatTopologyJson(groupId: string, d: StreamsGroupTopologyDescription): string {
  return `${JSON.stringify({ groupId, subtopologies: d.subtopologies, globalStores: d.globalStores }, null, 2)}\n`
}

const dq = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`

interface Graph {
  readonly clusters: Array<{ id: string; label: string; nodes: TopologyNode[] }>
}

function graphOf(d: StreamsGroupTopologyDescription): Graph {
  const clusters: Graph['clusters'] = d.subtopologies.map((s) => ({
    id: `sub_${s.id}`,
    label: `Sub-topology: ${s.id}`,
    nodes: [...s.nodes],
  }))
  d.globalStores.forEach((g, i) => {
    const k = d.subtopologies.length + i
    clusters.push({
      id: `global_${k}`,
      label: `Sub-topology: ${k} for global store`,
      nodes: [g.source, g.processor],
    })
  })
  return { clusters }
}

function nodeLabel(n: TopologyNode): string {
  switch (n.type) {
    case 'source':
      return `Source: ${n.name}\ntopics: ${setText(n.topics)}`
    case 'processor':
      return `Processor: ${n.name}\nstores: ${setText(n.stores)}`
    case 'sink':
      return `Sink: ${n.name}\ntopic: ${n.topic ?? 'null'}`
  }
}

/**
 * Graphviz DOT. Every identifier is quoted, so topic names with dots or dashes and pattern text
 * cannot break the graph. Node ids are prefixed with their cluster (names are unique per
 * subtopology only).
 */
export function formatTopologyDot(groupId: string, d: StreamsGroupTopologyDescription): string {
  const lines = [`digraph ${dq(`streams-group:${groupId}`)} {`, '  rankdir="LR";']
  const { clusters } = graphOf(d)
  for (const c of clusters) {
    lines.push(`  subgraph ${dq(`cluster_${c.id}`)} {`, `    label=${dq(c.label)};`)
    for (const n of c.nodes) {
      const shape = n.type === 'processor' ? 'box' : n.type === 'source' ? 'invhouse' : 'house'
      lines.push(`    ${dq(`${c.id}/${n.name}`)} [label=${dq(nodeLabel(n))}, shape=${dq(shape)}];`)
    }
    lines.push('  }')
  }
  for (const c of clusters) {
    const inCluster = new Set(c.nodes.map((n) => n.name))
    for (const n of c.nodes) {
      for (const s of sorted(n.successors)) {
        if (inCluster.has(s)) lines.push(`  ${dq(`${c.id}/${n.name}`)} -> ${dq(`${c.id}/${s}`)};`)
      }
    }
  }
  lines.push('}')
  return `${lines.join('\n')}\n`
}

// Mermaid ids cannot be quoted, so they are generated (n0, n1, …); every label is quoted, with the
// characters Mermaid treats specially written as entity codes.
const mq = (s: string): string =>
  `"${s.replace(/&/g, '#amp;').replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;').replace(/\n/g, '<br/>')}"`

/** A Mermaid flowchart with one subgraph per subtopology and global store. */
export function formatTopologyMermaid(_groupId: string, d: StreamsGroupTopologyDescription): string {
  const lines = ['flowchart LR']
  const { clusters } = graphOf(d)
  let next = 0
  const ids: Array<Map<string, string>> = []
  clusters.forEach((c, ci) => {
    const map = new Map<string, string>()
    ids.push(map)
    lines.push(`  subgraph c${ci}[${mq(c.label)}]`)
    for (const n of c.nodes) {
      const id = `n${next++}`
      map.set(n.name, id)
      const label = mq(nodeLabel(n))
      lines.push(
        `    ${id}${n.type === 'processor' ? `[${label}]` : n.type === 'source' ? `[/${label}/]` : `[\\${label}\\]`}`,
      )
    }
    lines.push('  end')
  })
  clusters.forEach((c, ci) => {
    const map = ids[ci]!
    for (const n of c.nodes) {
      for (const s of sorted(n.successors)) {
        const to = map.get(s)
        if (to !== undefined) lines.push(`  ${map.get(n.name)} --> ${to}`)
      }
    }
  })
  return `${lines.join('\n')}\n`
}
