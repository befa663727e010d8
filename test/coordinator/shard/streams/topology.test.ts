import assert from 'node:assert/strict'
import { test } from 'node:test'
import { topologyRecord } from '../../../../src/coordinator/shard/streams/records.js'
import { StreamsTopology, topologyTopicNames } from '../../../../src/coordinator/shard/streams/topology.js'
import type { StreamsGroupTopologyValue } from '../../../../src/coordinator/shard/streams/wire.js'
import { decodeCoordinatorRecord, encodeCoordinatorRecord } from '../../../../src/protocol/records.js'

const subtopology = (
  id: string,
  extra: Partial<StreamsGroupTopologyValue['subtopologies'][number]> = {},
) => ({
  subtopologyId: id,
  sourceTopics: [`in-${id}`],
  sourceTopicRegex: [],
  stateChangelogTopics: [],
  repartitionSinkTopics: [],
  repartitionSourceTopics: [],
  copartitionGroups: [],
  ...extra,
})

const values: StreamsGroupTopologyValue[] = [
  { epoch: 0, subtopologies: [subtopology('0')] },
  { epoch: 3, subtopologies: [] },
  {
    epoch: 7,
    subtopologies: [
      subtopology('1', {
        stateChangelogTopics: [{ name: 'c', partitions: 0, replicationFactor: 0, topicConfigs: [] }],
        repartitionSinkTopics: ['r'],
        unknownTaggedFields: [{ tag: 9, data: Uint8Array.of(1, 2) }],
      }),
      subtopology('0', {
        repartitionSourceTopics: [
          { name: 'r', partitions: 4, replicationFactor: 3, topicConfigs: [{ key: 'k', value: 'v' }] },
        ],
        copartitionGroups: [{ sourceTopics: [0], sourceTopicRegex: [], repartitionSourceTopics: [0] }],
      }),
    ],
    unknownTaggedFields: [{ tag: 5, data: Uint8Array.of(7) }],
  },
  // More subtopologies than are searched in order.
  { epoch: 1, subtopologies: Array.from({ length: 12 }, (_, i) => subtopology(String(i))) },
]

const bytes = (v: StreamsGroupTopologyValue) => {
  const e = encodeCoordinatorRecord(topologyRecord('g', v))
  return [Buffer.from(e.key).toString('hex'), Buffer.from(e.value!).toString('hex')]
}

test('a topology is its record value: the same record, unknown tagged fields included', () => {
  for (const v of values) {
    const t = new StreamsTopology(v)
    assert.equal(t.value, t)
    assert.equal(t.epoch, v.epoch)
    assert.deepEqual(bytes(t.value), bytes(v))
    assert.equal('unknownTaggedFields' in t, v.unknownTaggedFields !== undefined)
    // Read back from its own record, equal again.
    const e = encodeCoordinatorRecord(topologyRecord('g', t))
    const decoded = decodeCoordinatorRecord(e.key, e.value)
    assert.deepEqual(bytes(new StreamsTopology(decoded.value as StreamsGroupTopologyValue)), bytes(v))
    for (const s of v.subtopologies) assert.deepEqual(t.subtopology(s.subtopologyId), s)
    assert.equal(t.subtopology('none'), undefined)
  }
})

test("a topology's empty lists are one shared empty list, which nothing can change", () => {
  const a = new StreamsTopology(values[0]!)
  const b = new StreamsTopology(values[2]!)
  const empty = a.subtopologies[0]!.sourceTopicRegex
  assert.equal(b.subtopologies[0]!.sourceTopicRegex, empty)
  assert.equal(b.subtopologies[1]!.stateChangelogTopics, empty)
  assert.ok(Object.isFrozen(empty))
  assert.throws(() => (empty as string[]).push('x'))
  // The lists with entries are kept as they are.
  assert.deepEqual(b.subtopologies[0]!.repartitionSinkTopics, ['r'])
})

test('a topology names its topics once each, in order of first mention', () => {
  const info = (name: string) => ({ name, partitions: 0, replicationFactor: 0, topicConfigs: [] })
  const names = topologyTopicNames([
    subtopology('0', {
      sourceTopics: ['in', 'in2'],
      repartitionSinkTopics: ['rep'],
      stateChangelogTopics: [info('log-0')],
    }),
    subtopology('1', {
      sourceTopics: ['in2'],
      repartitionSourceTopics: [info('rep'), info('rep-b')],
      repartitionSinkTopics: ['out'],
      stateChangelogTopics: [info('log-1'), info('log-0')],
    }),
  ])
  assert.deepEqual(names, ['in', 'in2', 'rep', 'log-0', 'out', 'rep-b', 'log-1'])
  assert.deepEqual(topologyTopicNames([]), [])
})
