import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  heartbeatTopology,
  internalTopicDecorator,
  Topology,
  TopologyError,
  topologyDescriptionToWire,
} from '../../../src/clients/streams/index.js'

function wordcount(): Topology {
  const t = new Topology()
  const src = t.newName('KSTREAM-SOURCE')
  const flat = t.newName('KSTREAM-FLATMAPVALUES')
  const agg = t.newName('KSTREAM-AGGREGATE')
  const sink = t.newName('KSTREAM-SINK')
  return t
    .addSource(src, 'streams-plaintext-input')
    .addProcessor(flat, [src])
    .addProcessor(agg, [flat])
    .addStateStore('counts-store', agg)
    .addSink(sink, 'streams-wordcount-output', agg)
}

describe('Topology.describe()', () => {
  it('prints Kafka Streams text for the word-count example', () => {
    assert.equal(
      wordcount().describe().toString(),
      'Topologies:\n' +
        '   Sub-topology: 0\n' +
        '    Source: KSTREAM-SOURCE-0000000000 (topics: [streams-plaintext-input])\n' +
        '      --> KSTREAM-FLATMAPVALUES-0000000001\n' +
        '    Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])\n' +
        '      --> KSTREAM-AGGREGATE-0000000002\n' +
        '      <-- KSTREAM-SOURCE-0000000000\n' +
        '    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [counts-store])\n' +
        '      --> KSTREAM-SINK-0000000003\n' +
        '      <-- KSTREAM-FLATMAPVALUES-0000000001\n' +
        '    Sink: KSTREAM-SINK-0000000003 (topic: streams-wordcount-output)\n' +
        '      <-- KSTREAM-AGGREGATE-0000000002\n\n',
    )
  })

  it('interleaves global stores by id with two-space lines and no blank line after them', () => {
    const t = new Topology()
      .addSource('a-src', 'in')
      .addSink('a-sink', 'rep', 'a-src')
      .addGlobalStore('g-store', 'g-src', 'positions', 'g-proc')
      .addSource('b-src', 'rep')
      .addRepartitionTopic('rep')
    assert.equal(
      t.describe().toString(),
      'Topologies:\n' +
        '   Sub-topology: 0\n' +
        '    Source: a-src (topics: [in])\n' +
        '      --> a-sink\n' +
        '    Sink: a-sink (topic: rep)\n' +
        '      <-- a-src\n\n' +
        '  Sub-topology: 1 for global store (will not generate tasks)\n' +
        '    Source: g-src (topics: [positions])\n' +
        '      --> g-proc\n' +
        '    Processor: g-proc (stores: [g-store])\n' +
        '      --> none\n' +
        '      <-- g-src\n' +
        '  Sub-topology: 2\n' +
        '    Source: b-src (topics: [rep])\n' +
        '      --> none\n\n',
    )
  })

  it('orders by sub-tree size then name, shows patterns and extractors; empty topology', () => {
    const t = new Topology()
      .addSource('s', /in-.*/)
      .addProcessor('z-big', ['s'])
      .addProcessor('z-big-child', ['z-big'])
      .addProcessor('a-small', ['s'])
      .addSink('dyn', { toString: () => 'MyExtractor' }, 'z-big-child')
    const text = t.describe().toString()
    assert.match(text, /Source: s \(topics: in-\.\*\)\n {6}--> z-big, a-small\n/)
    assert.match(text, /Sink: dyn \(extractor class: MyExtractor\)\n {6}<-- z-big-child\n/)
    assert.equal(new Topology().describe().toString(), 'Topologies:\n ')
  })

  it('rejects bad definitions with clear errors', () => {
    assert.throws(() => new Topology().addProcessor('p', ['missing']), TopologyError)
    assert.throws(() => new Topology().addSource('a', 'x').addSource('a', 'y'), /already added/)
    assert.throws(() => new Topology().addSource('a', 'x').addSource('b', 'x'), /already been registered/)
    assert.throws(() => new Topology().addSource('a'), /at least one topic/)
    assert.throws(
      () => new Topology().addSource('a', 'x').addSink('k', 'o', 'a').addProcessor('p', ['k']),
      /cannot be used a parent/,
    )
  })
})

describe('wire conversion', () => {
  it('sorts nodes and successors by name, decorates internal topics, empties pattern topics, nulls dynamic sinks', () => {
    const t = new Topology()
      .addSource('src', 'b-in', 'a-in')
      .addProcessor('proc', ['src'])
      .addStateStore('z-store', 'proc')
      .connectProcessorAndStateStores('proc')
      .addSink('sink', 'agg-repartition', 'proc')
      .addSink('dyn', { toString: () => 'X' }, 'proc')
      .addSource('rsrc', 'agg-repartition')
      .addSource('pat', /p.*/)
      .addGlobalStore('g', 'gs', 'global-in', 'gp')
      .addRepartitionTopic('agg-repartition')
    const w = topologyDescriptionToWire(t.describe(), internalTopicDecorator(t, 'app'))
    assert.deepEqual(w, {
      subtopologies: [
        {
          subtopologyId: '0',
          nodes: [
            { name: 'dyn', nodeType: 3, sourceTopics: [], sinkTopic: null, stores: [], successors: [] },
            {
              name: 'proc',
              nodeType: 2,
              sourceTopics: [],
              sinkTopic: null,
              stores: ['z-store'],
              successors: ['dyn', 'sink'],
            },
            {
              name: 'sink',
              nodeType: 3,
              sourceTopics: [],
              sinkTopic: 'app-agg-repartition',
              stores: [],
              successors: [],
            },
            {
              name: 'src',
              nodeType: 1,
              sourceTopics: ['a-in', 'b-in'],
              sinkTopic: null,
              stores: [],
              successors: ['proc'],
            },
          ],
        },
        {
          subtopologyId: '1',
          nodes: [
            {
              name: 'rsrc',
              nodeType: 1,
              sourceTopics: ['app-agg-repartition'],
              sinkTopic: null,
              stores: [],
              successors: [],
            },
          ],
        },
        {
          subtopologyId: '2',
          nodes: [
            { name: 'pat', nodeType: 1, sourceTopics: [], sinkTopic: null, stores: [], successors: [] },
          ],
        },
      ],
      globalStores: [
        {
          source: {
            name: 'gs',
            nodeType: 1,
            sourceTopics: ['global-in'],
            sinkTopic: null,
            stores: [],
            successors: ['gp'],
          },
          processor: {
            name: 'gp',
            nodeType: 2,
            sourceTopics: [],
            sinkTopic: null,
            stores: ['g'],
            successors: [],
          },
        },
      ],
    })
  })

  it('builds the heartbeat topology with repartition and changelog topics, their default configs and copartition groups', () => {
    const t = new Topology()
      .addSource('src', 'orders', 'customers')
      .addProcessor('join', ['src'])
      .addStateStore('join-store', 'join')
      .addSink('sink', 'rekey', 'join')
      .addSource('rsrc', 'rekey')
      .addRepartitionTopic('rekey', 4)
      .copartitionSources('orders', 'customers')
    const hb = heartbeatTopology(t, { applicationId: 'app' })
    assert.deepEqual(hb, {
      epoch: 0,
      subtopologies: [
        {
          subtopologyId: '0',
          sourceTopics: ['customers', 'orders'],
          sourceTopicRegex: [],
          stateChangelogTopics: [
            {
              name: 'app-join-store-changelog',
              partitions: 0,
              replicationFactor: -1,
              topicConfigs: [
                { key: 'cleanup.policy', value: 'compact' },
                { key: 'message.timestamp.type', value: 'CreateTime' },
              ],
            },
          ],
          repartitionSinkTopics: ['app-rekey'],
          repartitionSourceTopics: [],
          copartitionGroups: [{ sourceTopics: [1, 0], sourceTopicRegex: [], repartitionSourceTopics: [] }],
        },
        {
          subtopologyId: '1',
          sourceTopics: [],
          sourceTopicRegex: [],
          stateChangelogTopics: [],
          repartitionSinkTopics: [],
          repartitionSourceTopics: [
            {
              name: 'app-rekey',
              partitions: 4,
              replicationFactor: -1,
              topicConfigs: [
                { key: 'cleanup.policy', value: 'delete' },
                { key: 'message.timestamp.type', value: 'CreateTime' },
                { key: 'retention.ms', value: '-1' },
                { key: 'segment.bytes', value: '52428800' },
              ],
            },
          ],
          copartitionGroups: [],
        },
      ],
    })
  })

  it("lays the member's topic configs over the defaults, and a store's log config over both", () => {
    const t = new Topology()
      .addSource('src', 'orders')
      .addProcessor('count', ['src'])
      .addStateStore('kept', { logging: true, logConfig: { 'cleanup.policy': 'compact,delete' } }, 'count')
      .addStateStore('plain', 'count')
      .addStateStore('unlogged', { logging: false }, 'count')
      .addSink('sink', 'rekey', 'count')
      .addSource('rsrc', 'rekey')
      .addRepartitionTopic('rekey')
    const hb = heartbeatTopology(t, {
      applicationId: 'app',
      topicConfigs: { 'retention.ms': '86400000', 'min.insync.replicas': '2', 'cleanup.policy': 'delete' },
    })
    const configs = (list: readonly { name: string; topicConfigs: { key: string; value: string }[] }[]) =>
      Object.fromEntries(list.map((x) => [x.name, x.topicConfigs.map((c) => `${c.key}=${c.value}`)]))
    assert.deepEqual(configs(hb.subtopologies[0]!.stateChangelogTopics), {
      'app-kept-changelog': [
        'cleanup.policy=compact,delete',
        'message.timestamp.type=CreateTime',
        'min.insync.replicas=2',
        'retention.ms=86400000',
      ],
      'app-plain-changelog': [
        'cleanup.policy=delete',
        'message.timestamp.type=CreateTime',
        'min.insync.replicas=2',
        'retention.ms=86400000',
      ],
    })
    assert.deepEqual(configs(hb.subtopologies[1]!.repartitionSourceTopics), {
      'app-rekey': [
        'cleanup.policy=delete',
        'message.timestamp.type=CreateTime',
        'min.insync.replicas=2',
        'retention.ms=86400000',
        'segment.bytes=52428800',
      ],
    })
  })
})
