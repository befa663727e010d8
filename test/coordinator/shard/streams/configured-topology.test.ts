// Direct tests of configureTopology (Kafka's InternalTopicManager.configureTopics): partition counts
// of repartition and changelog topics, the status of a topology that is not ready, and the topics
// the service is asked to create; plus the metadata hash and the topic summaries.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  computeMetadataHash,
  configureTopology,
  isReady,
  summarizeTopics,
  type TopicsImage,
  TopicStatusCode,
} from '../../../../src/coordinator/shard/streams/configured-topology.js'
import { StreamsTopology } from '../../../../src/coordinator/shard/streams/topology.js'

const image = (topics: Record<string, number>): TopicsImage => ({
  topic: (name) => (name in topics ? { topicId: `id-${name}`, numPartitions: topics[name] } : undefined),
})
const info = (name: string, partitions = 0) => ({ name, partitions, replicationFactor: 0, topicConfigs: [] })

/**
 * Subtopology 0 reads `input` and writes `app-repartition`; subtopology 1 reads it and keeps a store
 * (with `copartition`, it also reads `other` and `input`, co-partitioned).
 */
function twoStep(copartition = false): StreamsTopology {
  return new StreamsTopology({
    epoch: 0,
    subtopologies: [
      {
        subtopologyId: '0',
        sourceTopics: ['input'],
        sourceTopicRegex: [],
        stateChangelogTopics: [],
        repartitionSinkTopics: ['app-repartition'],
        repartitionSourceTopics: [],
        copartitionGroups: [],
      },
      {
        subtopologyId: '1',
        sourceTopics: copartition ? ['other', 'input'] : [],
        sourceTopicRegex: [],
        stateChangelogTopics: [info('app-store-changelog')],
        repartitionSinkTopics: [],
        repartitionSourceTopics: [info('app-repartition')],
        copartitionGroups: copartition
          ? [{ sourceTopics: [0, 1], sourceTopicRegex: [], repartitionSourceTopics: [] }]
          : [],
      },
    ],
  })
}

describe('configureTopology', () => {
  it('a repartition topic takes the partitions of the source topic; the changelog those of its tasks', () => {
    const t = configureTopology(twoStep(), image({ input: 4 }))
    assert.equal(t.status?.statusCode, TopicStatusCode.MISSING_INTERNAL_TOPICS)
    assert.equal(t.status?.statusDetail, 'Internal topics are missing: app-repartition, app-store-changelog')
    assert.deepEqual(
      t.internalTopicsToBeCreated.map((c) => [c.name, c.numPartitions, c.replicationFactor]),
      [
        ['app-repartition', 4, -1],
        ['app-store-changelog', 4, -1],
      ],
    )
    assert.deepEqual(
      [...t.subtopologies!].map(([id, s]) => [id, s.numberOfTasks]),
      [
        ['0', 4],
        ['1', 4],
      ],
    )
  })

  it('is ready once the internal topics exist', () => {
    const t = configureTopology(
      twoStep(),
      image({ input: 4, 'app-repartition': 4, 'app-store-changelog': 4 }),
    )
    assert.equal(isReady(t), true)
    assert.deepEqual(t.internalTopicsToBeCreated, [])
    // Every source topic has one partition a task: no count is kept.
    assert.deepEqual([...t.sourcePartitionCounts!], [])
  })

  it('keeps the partition counts of source topics with fewer partitions than tasks', () => {
    const topology = new StreamsTopology({
      epoch: 0,
      subtopologies: [
        {
          subtopologyId: '0',
          sourceTopics: ['big', 'small'],
          sourceTopicRegex: [],
          stateChangelogTopics: [],
          repartitionSinkTopics: [],
          repartitionSourceTopics: [],
          copartitionGroups: [],
        },
      ],
    })
    const t = configureTopology(topology, image({ big: 6, small: 4 }))
    assert.equal(t.subtopologies!.get('0')!.numberOfTasks, 6)
    assert.deepEqual([...t.sourcePartitionCounts!], [['small', 4]])
  })

  it('missing source topics: MISSING_SOURCE_TOPICS, nothing to create', () => {
    const t = configureTopology(twoStep(), image({}))
    assert.deepEqual(t.status, {
      statusCode: TopicStatusCode.MISSING_SOURCE_TOPICS,
      statusDetail: 'Source topics input are missing.',
    })
    assert.deepEqual([t.subtopologies, t.internalTopicsToBeCreated], [null, []])
  })

  it('co-partitioned source topics with different partition counts: INCORRECTLY_PARTITIONED_TOPICS', () => {
    const t = configureTopology(twoStep(true), image({ input: 4, other: 3 }))
    assert.deepEqual(t.status, {
      statusCode: TopicStatusCode.INCORRECTLY_PARTITIONED_TOPICS,
      statusDetail: 'Following topics do not have the same number of partitions: [{input=4, other=3}]',
    })
  })
})

describe('computeMetadataHash and summarizeTopics', () => {
  it('the hash changes with a topic partition count and ignores topics not asked for', () => {
    const a = computeMetadataHash(['input'], image({ input: 4, x: 1 }))
    assert.equal(a, computeMetadataHash(['input'], image({ input: 4 })))
    assert.notEqual(a, computeMetadataHash(['input'], image({ input: 5 })))
  })

  it('names up to three topics, then counts the rest', () => {
    assert.equal(summarizeTopics([]), '<none>')
    assert.equal(summarizeTopics(['a', 'b', 'c']), 'a, b, c')
    assert.equal(summarizeTopics(['a', 'b', 'c', 'd', 'e']), 'a, b, c and 2 additional topics')
  })
})
