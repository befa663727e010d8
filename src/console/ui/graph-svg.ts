/// <reference lib="dom" />
/**
 * Draws a laid-out topology as SVG. Every node and edge carries its model id (`data-id`), so tests
 * and the details panel can find them; the styles are embedded so that a downloaded SVG looks the
 * same outside the console.
 */
import type { GraphLayout, PlacedNode, Point } from '../layout.js'
import { s } from './dom.js'

/** Styles inside the SVG itself (not in app.css): they travel with the downloaded file. */
export const GRAPH_STYLE = `
.tg-box rect{fill:#f6f8fb;stroke:#8a9bb3;stroke-width:1.2}
.tg-box-global-store rect{fill:#fbf7ef;stroke:#b08a3c;stroke-dasharray:6 3}
.tg-box text{font:600 12px system-ui,sans-serif;fill:#33415c}
.tg-node text{font:12px ui-monospace,Menlo,Consolas,monospace;fill:#1d2433;pointer-events:none}
.tg-node{cursor:pointer}
.tg-node .shape{stroke-width:1.3}
.tg-node-source .shape{fill:#e3f4e8;stroke:#2f8a4c}
.tg-node-processor .shape{fill:#ffffff;stroke:#4a5a75}
.tg-node-sink .shape{fill:#fde9e4;stroke:#b4492c}
.tg-node-topic .shape{fill:#e8eefc;stroke:#3a5db8}
.tg-node-topic-pattern .shape,.tg-node-topic-dynamic .shape{fill:#f3f0fb;stroke:#6d4bb8;stroke-dasharray:5 3}
.tg-node-topic-pattern text,.tg-node-topic-dynamic text{font-style:italic}
.tg-node-store .shape{fill:#fff6db;stroke:#a77d0c}
.tg-node-missing .shape{fill:#fde7e5;stroke:#b3261e;stroke-width:2;stroke-dasharray:5 3}
.tg-node-missing text{fill:#a4231b;text-decoration:line-through}
.tg-node.selected .shape{stroke:#e0245e;stroke-width:3}
.tg-node:focus{outline:none}
.tg-node:focus-visible .shape{stroke-width:3}
.tg-edge{fill:none;stroke:#5d6b82;stroke-width:1.2}
.tg-edge-reads,.tg-edge-writes{stroke:#3a5db8}
.tg-edge-store{stroke:#a77d0c;stroke-dasharray:4 3}
.tg-edge.highlight{stroke:#e0245e;stroke-width:2.2}
`

function shape(n: PlacedNode): SVGElement {
  const { x, y, width: w, height: hgt } = n
  switch (n.node.kind) {
    case 'source':
    case 'sink':
      return s('rect', { class: 'shape', x, y, width: w, height: hgt, rx: hgt / 2 })
    case 'processor':
      return s('rect', { class: 'shape', x, y, width: w, height: hgt, rx: 3 })
    case 'store': {
      // A cylinder: the usual database symbol.
      const ry = 5
      const d = `M${x},${y + ry} a${w / 2},${ry} 0 0 0 ${w},0 a${w / 2},${ry} 0 0 0 ${-w},0 v${hgt - 2 * ry} a${w / 2},${ry} 0 0 0 ${w},0 v${-(hgt - 2 * ry)}`
      return s('path', { class: 'shape', d })
    }
    default: {
      // Topics: a parallelogram, as in most stream-processing diagrams.
      const k = 10
      const points = `${x + k},${y} ${x + w},${y} ${x + w - k},${y + hgt} ${x},${y + hgt}`
      return s('polygon', { class: 'shape', points })
    }
  }
}

const pathOf = (points: readonly Point[]): string =>
  points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')

export interface RenderedGraph {
  readonly svg: SVGSVGElement
  readonly layout: GraphLayout
}

/** Draws into `svg` (emptied first); returns it. */
export function renderGraph(svg: SVGSVGElement, layout: GraphLayout): RenderedGraph {
  svg.replaceChildren()
  svg.setAttribute('xmlns', 'http://www.w3.org/2000/svg')
  svg.append(
    s('style', {}, GRAPH_STYLE),
    s(
      'defs',
      {},
      s(
        'marker',
        {
          id: 'tg-arrow',
          viewBox: '0 0 10 10',
          refX: 10,
          refY: 5,
          markerWidth: 7,
          markerHeight: 7,
          orient: 'auto',
        },
        s('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#5d6b82' }),
      ),
    ),
  )
  const boxes = s('g', { class: 'tg-boxes' })
  for (const b of layout.boxes) {
    boxes.append(
      s(
        'g',
        { class: `tg-box tg-box-${b.box.kind}`, 'data-id': b.box.id, 'data-kind': b.box.kind },
        s('title', {}, b.box.label),
        s('rect', { x: b.x, y: b.y, width: b.width, height: b.height, rx: 6 }),
        s('text', { x: b.x + 10, y: b.y + 18 }, b.box.label),
      ),
    )
  }
  const edges = s('g', { class: 'tg-edges' })
  for (const e of layout.edges) {
    edges.append(
      s('path', {
        class: `tg-edge tg-edge-${e.edge.kind}`,
        d: pathOf(e.points),
        'data-id': e.edge.id,
        'data-kind': e.edge.kind,
        'data-source': e.edge.source,
        'data-target': e.edge.target,
        'marker-end': e.edge.kind === 'store' ? null : 'url(#tg-arrow)',
      }),
    )
  }
  const nodes = s('g', { class: 'tg-nodes' })
  for (const n of layout.nodes) {
    nodes.append(
      s(
        'g',
        {
          class: `tg-node tg-node-${n.node.kind}`,
          'data-id': n.node.id,
          'data-kind': n.node.kind,
          tabindex: 0,
          role: 'button',
          'aria-label': `${n.node.kind} ${n.node.label}`,
        },
        s('title', {}, n.node.label),
        shape(n),
        s('text', { x: n.x + n.width / 2, y: n.y + n.height / 2 + 4, 'text-anchor': 'middle' }, n.text),
      ),
    )
  }
  svg.append(boxes, edges, nodes)
  return { svg, layout }
}

/** A standalone SVG document of the drawing (the whole graph, whatever the current zoom). */
export function svgDocument(rendered: RenderedGraph, title: string): string {
  const copy = rendered.svg.cloneNode(true) as SVGSVGElement
  const { width, height } = rendered.layout
  copy.setAttribute('viewBox', `0 0 ${width} ${height}`)
  copy.setAttribute('width', String(Math.ceil(width)))
  copy.setAttribute('height', String(Math.ceil(height)))
  copy.removeAttribute('class')
  copy.querySelectorAll('.selected').forEach((el) => {
    el.classList.remove('selected')
  })
  copy.querySelectorAll('.highlight').forEach((el) => {
    el.classList.remove('highlight')
  })
  copy.insertBefore(s('title', {}, title), copy.firstChild)
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(copy)}\n`
}
