// elkjs layout of the graph: every node and box placed, nodes inside their box, edges routed, and a
// bound on the time for a 500-node topology.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { layoutGraph, MAX_LABEL, type Rect, shortLabel } from '../../src/console/layout.js'
import { topologyGraph } from '../../src/console/model.js'
import { inventoryDescription, largeDescription, ordersDescription } from './fixtures.js'

const inside = (inner: Rect, outer: Rect): boolean =>
  inner.x >= outer.x &&
  inner.y >= outer.y &&
  inner.x + inner.width <= outer.x + outer.width + 0.01 &&
  inner.y + inner.height <= outer.y + outer.height + 0.01

const overlap = (a: Rect, b: Rect): boolean =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height

describe('layoutGraph', () => {
  for (const [name, description] of [
    ['orders', ordersDescription()],
    ['inventory', inventoryDescription()],
  ] as const) {
    it(`places every node of the ${name} topology inside its box, without overlaps, and routes every edge`, async () => {
      const graph = topologyGraph(description)
      const layout = await layoutGraph(graph)
      assert.equal(layout.nodes.length, graph.nodes.length)
      assert.equal(layout.boxes.length, graph.boxes.length)
      assert.equal(layout.edges.length, graph.edges.length)
      const boxes = new Map(layout.boxes.map((b) => [b.box.id, b]))
      for (const n of layout.nodes) {
        assert.ok(inside(n, layout), `${n.node.id} outside the drawing`)
        if (n.node.box !== null) assert.ok(inside(n, boxes.get(n.node.box)!), `${n.node.id} outside its box`)
        else for (const b of layout.boxes) assert.ok(!overlap(n, b), `${n.node.id} overlaps ${b.box.id}`)
      }
      for (let i = 0; i < layout.nodes.length; i++)
        for (let j = i + 1; j < layout.nodes.length; j++)
          assert.ok(
            !overlap(layout.nodes[i]!, layout.nodes[j]!),
            `${layout.nodes[i]!.node.id} overlaps ${layout.nodes[j]!.node.id}`,
          )
      for (const e of layout.edges) assert.ok(e.points.length >= 2, `${e.edge.id} has no route`)
    })
  }

  // The bound only catches a layout that hangs or goes quadratic; speed is measured in bench/, not here.
  it('lays out a 500-node topology without hanging', async () => {
    const graph = topologyGraph(largeDescription(25, 20))
    const start = performance.now()
    const layout = await layoutGraph(graph)
    const elapsed = performance.now() - start
    assert.equal(layout.nodes.length, graph.nodes.length)
    assert.ok(graph.nodes.length > 500)
    assert.ok(elapsed < 120_000, `took ${elapsed.toFixed(0)} ms`)
  })

  it('shortens long labels around an ellipsis and keeps short ones', () => {
    assert.equal(shortLabel('KSTREAM-SOURCE-0000000000'), 'KSTREAM-SOURCE-0000000000')
    const long = `a-very-long-application-id-${'x'.repeat(40)}-repartition`
    const s = shortLabel(long)
    assert.equal(s.length, MAX_LABEL)
    assert.ok(s.startsWith('a-very-long') && s.endsWith('repartition') && s.includes('…'))
  })
})
