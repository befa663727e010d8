// The description → graph conversion the console draws: nodes, successor edges, shared topics,
// stores, global stores, pattern sources, dynamic sinks, and the cost for large topologies.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { topologyDescriptionFromWire } from '../../src/clients/admin/index.js'
import {
  globalStoreBoxId,
  storeNodeId,
  subtopologyBoxId,
  topicNodeId,
  topologyGraph,
  topologyNodeId,
} from '../../src/console/model.js'
import { inventoryDescription, largeDescription, ordersDescription } from './fixtures.js'

const ids = (xs: ReadonlyArray<{ id: string }>): string[] => xs.map((x) => x.id).sort()
const edgeSet = (g: ReturnType<typeof topologyGraph>, kind: string): string[] =>
  g.edges
    .filter((e) => e.kind === kind)
    .map((e) => `${e.source} -> ${e.target}`)
    .sort()

describe('topologyGraph', () => {
  it('draws every node of every subtopology in its box, with one successor edge per successor', () => {
    const d = ordersDescription()
    const g = topologyGraph(d)
    assert.deepEqual(ids(g.boxes), ['subtopology:0', 'subtopology:1'])
    const expectedNodes = d.subtopologies.flatMap((s) =>
      s.nodes.map((n) => topologyNodeId(subtopologyBoxId(s.id), n.name)),
    )
    const drawnTopologyNodes = g.nodes.filter((n) => ['source', 'processor', 'sink'].includes(n.kind))
    assert.deepEqual(ids(drawnTopologyNodes), expectedNodes.sort())
    for (const n of drawnTopologyNodes) assert.match(n.box!, /^subtopology:/)
    const expectedSuccessors = d.subtopologies
      .flatMap((s) =>
        s.nodes.flatMap((n) =>
          n.successors.map(
            (x) =>
              `${topologyNodeId(subtopologyBoxId(s.id), n.name)} -> ${topologyNodeId(subtopologyBoxId(s.id), x)}`,
          ),
        ),
      )
      .sort()
    assert.equal(expectedSuccessors.length, 5)
    assert.deepEqual(edgeSet(g, 'successor'), expectedSuccessors)
    assert.deepEqual(g.danglingSuccessors, [])
  })

  it('draws each topic once, outside the boxes, so a repartition topic links two subtopologies', () => {
    const g = topologyGraph(ordersDescription())
    const topics = g.nodes.filter((n) => n.kind === 'topic')
    assert.deepEqual(topics.map((t) => t.label).sort(), [
      'customers',
      'demo-orders-orders-by-customer-repartition',
      'enriched-orders',
      'orders',
    ])
    for (const t of topics) assert.equal(t.box, null)
    const rep = topicNodeId('demo-orders-orders-by-customer-repartition')
    const writes = g.edges.filter((e) => e.kind === 'writes' && e.target === rep)
    const reads = g.edges.filter((e) => e.kind === 'reads' && e.source === rep)
    assert.equal(writes.length, 1)
    assert.equal(reads.length, 1)
    assert.match(writes[0]!.source, /^node:subtopology:0\//)
    assert.match(reads[0]!.target, /^node:subtopology:1\//)
  })

  it('draws a store once per box, connected to every processor using it', () => {
    const g = topologyGraph(ordersDescription())
    const store = storeNodeId('subtopology:1', 'customers-store')
    const node = g.nodes.find((n) => n.id === store)
    assert.equal(node?.kind, 'store')
    assert.equal(node?.box, 'subtopology:1')
    assert.deepEqual(
      g.edges
        .filter((e) => e.kind === 'store')
        .map((e) => e.source.replace(/^.*\//, ''))
        .sort(),
      ['KSTREAM-JOIN-0000000006', 'KTABLE-SOURCE-PROCESSOR-0000000005'],
    )
  })

  it('puts a global store in its own box with its source, processor and store, reading its topic', () => {
    const d = inventoryDescription()
    const g = topologyGraph(d)
    const box = g.boxes.find((b) => b.kind === 'global-store')
    assert.equal(box?.id, globalStoreBoxId(0))
    assert.match(box!.label, /products-global-store/)
    const inBox = g.nodes.filter((n) => n.box === box!.id)
    assert.deepEqual(inBox.map((n) => n.kind).sort(), ['processor', 'source', 'store'])
    const src = inBox.find((n) => n.kind === 'source')!
    assert.ok(
      g.edges.some((e) => e.kind === 'reads' && e.source === topicNodeId('products') && e.target === src.id),
    )
  })

  it('draws a pattern source reading an unnamed "topic pattern" and a dynamic sink writing a "dynamic topic"', () => {
    const g = topologyGraph(inventoryDescription())
    const pattern = g.nodes.filter((n) => n.kind === 'topic-pattern')
    assert.equal(pattern.length, 1)
    assert.equal(pattern[0]!.label, 'topic pattern')
    const patternEdges = g.edges.filter((e) => e.source === pattern[0]!.id)
    assert.equal(patternEdges.length, 1)
    const source = g.nodes.find((n) => n.id === patternEdges[0]!.target)!
    assert.equal(source.kind, 'source')
    assert.ok(source.details.some(([k, v]) => k === 'Topics' && /pattern/.test(v)))
    const dynamic = g.nodes.filter((n) => n.kind === 'topic-dynamic')
    assert.equal(dynamic.length, 1)
    const into = g.edges.filter((e) => e.target === dynamic[0]!.id)
    assert.equal(into.length, 1)
    assert.equal(into[0]!.kind, 'writes')
    assert.equal(g.nodes.find((n) => n.id === into[0]!.source)?.kind, 'sink')
    // No invented topic names: only the global store's topic is a named topic here.
    assert.deepEqual(
      g.nodes.filter((n) => n.kind === 'topic').map((n) => n.label),
      ['products'],
    )
  })

  it('ignores and reports a successor naming no node of its subtopology', () => {
    const d = topologyDescriptionFromWire({
      subtopologies: [
        {
          subtopologyId: '0',
          nodes: [
            {
              name: 'a',
              nodeType: 1,
              sourceTopics: ['in'],
              sinkTopic: null,
              stores: [],
              successors: ['b', 'ghost'],
            },
            { name: 'b', nodeType: 3, sourceTopics: [], sinkTopic: 'out', stores: [], successors: [] },
          ],
        },
      ],
      globalStores: [],
    })
    const g = topologyGraph(d)
    assert.deepEqual(g.danglingSuccessors, [{ from: 'a', to: 'ghost' }])
    assert.deepEqual(edgeSet(g, 'successor'), ['node:subtopology:0/a -> node:subtopology:0/b'])
    assert.ok(!g.nodes.some((n) => n.label === 'ghost'))
  })

  it('keeps nodes of equal names in different subtopologies apart', () => {
    const node = (name: string, type: number) => ({
      name,
      nodeType: type,
      sourceTopics: type === 1 ? [`in-${name}`] : [],
      sinkTopic: null,
      stores: [],
      successors: [],
    })
    const g = topologyGraph(
      topologyDescriptionFromWire({
        subtopologies: [
          { subtopologyId: '0', nodes: [node('x', 1)] },
          { subtopologyId: '1', nodes: [node('x', 2)] },
        ],
        globalStores: [],
      }),
    )
    assert.deepEqual(
      g.nodes.filter((n) => n.label === 'x').map((n) => n.id),
      ['node:subtopology:0/x', 'node:subtopology:1/x'],
    )
  })

  it('converts a 600-node topology', () => {
    const d = largeDescription(30, 20)
    const g = topologyGraph(d)
    assert.equal(g.nodes.filter((n) => ['source', 'processor', 'sink'].includes(n.kind)).length, 600)
    assert.equal(g.edges.filter((e) => e.kind === 'successor').length, 30 * 19)
    // 31 topics: topic-0 … topic-30, each chain's sink feeding the next chain's source.
    assert.equal(g.nodes.filter((n) => n.kind === 'topic').length, 31)
  })
})
