// Direct tests of the OffsetMetadataManager (Kafka's OffsetMetadataManager), run as a shard of the
// real runtime (test/testkit): OffsetCommit records and their value versions, OffsetFetch of a
// group with and without a topic list, OffsetDelete, the group checks it asks of OffsetGroups, the
// expiry, and replay equivalence after a reload.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  NO_TOPIC_ID,
  type OffsetCommitInput,
  type OffsetRecord,
  type OffsetGroups,
  OffsetMetadataManager,
  offsetCommitRecord,
  offsetCommitTombstone,
} from '../../../../src/coordinator/shard/offsets/offset-metadata-manager.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import { ShardTestContext } from '../../../testkit/shard-context.js'

type Context = ShardTestContext<OffsetMetadataManager, OffsetRecord>

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ'
const CTX = { apiVersion: 9, maxMetadataSize: 4096 }

function commit(partitions: Record<number, bigint>, p: Partial<OffsetCommitInput> = {}): OffsetCommitInput {
  return {
    groupId: 'g',
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [
      {
        name: 'foo',
        topicId: '',
        partitions: Object.entries(partitions).map(([i, o]) => ({
          partitionIndex: Number(i),
          committedOffset: o,
          committedLeaderEpoch: -1,
          committedMetadata: null,
        })),
      },
    ],
    ...p,
  }
}

/** A group that accepts everything and reads no topic. */
const ANY_GROUP: OffsetGroups = {
  validateOffsetCommit: () => ErrorCode.NONE,
  validateTransactionalOffsetCommit: () => ErrorCode.NONE,
  validateOffsetFetch: () => ErrorCode.NONE,
  validateOffsetDelete: () => ErrorCode.NONE,
  isSubscribedToTopic: () => false,
}

function start(groups?: OffsetGroups): Promise<Context> {
  return ShardTestContext.start({ newShard: () => new OffsetMetadataManager(groups) })
}

const fetchFoo = (t: Context, partitionIndexes: number[] | null) =>
  t.read('fetch', (m) =>
    m.fetchOffsets({
      groupId: 'g',
      memberId: null,
      memberEpoch: -1,
      topics: partitionIndexes === null ? null : [{ name: 'foo', partitionIndexes }],
    }),
  )

/** An offset commit record's value for `offset`, committed at 1, never expiring. */
const value = (offset: bigint) => ({
  offset,
  leaderEpoch: -1,
  metadata: '',
  commitTimestamp: 1n,
  expireTimestamp: -1n,
  topicId: NO_TOPIC_ID,
})

describe('OffsetMetadataManager', () => {
  it('commits offsets as OffsetCommit records (value version 3, 4 with a topic id, 1 with a retention)', async () => {
    const t = await start()
    const answer = await t.write('commit', (m, nowMs) => m.commitOffset({ ...CTX, nowMs }, commit({ 0: 5n })))
    assert.deepEqual(answer, [
      { name: 'foo', topicId: '', partitions: [{ partitionIndex: 0, errorCode: 0 }] },
    ])
    const withId = commit({ 1: 7n })
    await t.write('commit', (m, nowMs) =>
      m.commitOffset(
        { ...CTX, nowMs, apiVersion: 10 },
        { ...withId, topics: [{ ...withId.topics[0], topicId: TOPIC_ID }] },
      ),
    )
    await t.write('commit', (m, nowMs) =>
      m.commitOffset({ ...CTX, nowMs, apiVersion: 2 }, commit({ 2: 9n }, { retentionTimeMs: 1000n })),
    )
    const log = await t.log()
    assert.deepEqual(
      log.map((r) => [
        r.key.partition,
        r.valueVersion,
        r.value?.offset,
        r.type === 'OffsetCommit' ? r.value?.expireTimestamp : undefined,
      ]),
      [
        [0, 3, 5n, -1n],
        [1, 4, 7n, -1n],
        [2, 1, 9n, BigInt(t.nowMs + 1000)],
      ],
    )
    assert.equal(log[1].value?.topicId, TOPIC_ID)
    await t.close()
  })

  it('metadata above offset.metadata.max.bytes is refused per partition; nothing written for it', async () => {
    const t = await start()
    const request = commit({ 0: 1n, 1: 2n })
    const partitions = request.topics[0].partitions.map((p, i) => ({
      ...p,
      committedMetadata: i === 0 ? 'ok' : 'xxxxx',
    }))
    const answer = await t.write('commit', (m, nowMs) =>
      m.commitOffset(
        { ...CTX, nowMs, maxMetadataSize: 4 },
        { ...request, topics: [{ ...request.topics[0], partitions }] },
      ),
    )
    assert.deepEqual(
      answer[0].partitions.map((p) => p.errorCode),
      [ErrorCode.NONE, ErrorCode.OFFSET_METADATA_TOO_LARGE],
    )
    assert.equal((await t.log()).length, 1)
    await t.close()
  })

  it('asks the groups: what a group refuses writes nothing and answers its code', async () => {
    const t = await start({
      validateOffsetCommit: () => ErrorCode.STALE_MEMBER_EPOCH,
      validateTransactionalOffsetCommit: () => ErrorCode.STALE_MEMBER_EPOCH,
      validateOffsetFetch: () => ErrorCode.UNKNOWN_MEMBER_ID,
      validateOffsetDelete: () => ErrorCode.GROUP_ID_NOT_FOUND,
      isSubscribedToTopic: () => false,
    })
    const answer = await t.write('commit', (m, nowMs) =>
      m.commitOffset({ ...CTX, nowMs }, commit({ 0: 1n, 1: 1n })),
    )
    assert.deepEqual(
      answer[0].partitions.map((p) => p.errorCode),
      [ErrorCode.STALE_MEMBER_EPOCH, ErrorCode.STALE_MEMBER_EPOCH],
    )
    assert.deepEqual(await t.log(), [])
    assert.equal((await fetchFoo(t, [0])).errorCode, ErrorCode.UNKNOWN_MEMBER_ID)
    const del = await t.write('delete', (m) =>
      m.deleteOffsets({ groupId: 'g', topics: [{ name: 'foo', partitions: [0] }] }),
    )
    assert.equal(del.errorCode, ErrorCode.GROUP_ID_NOT_FOUND)
    await t.close()
  })

  it('fetches the listed partitions (-1 when none) or every committed offset; an empty id is INVALID_GROUP_ID', async () => {
    const t = await start()
    await t.write('commit', (m, nowMs) => m.commitOffset({ ...CTX, nowMs }, commit({ 0: 5n, 3: 8n })))
    const listed = await fetchFoo(t, [0, 1])
    assert.deepEqual(
      listed.topics[0].partitions.map((p) => [p.partitionIndex, p.committedOffset]),
      [
        [0, 5n],
        [1, -1n],
      ],
    )
    const all = await fetchFoo(t, null)
    assert.deepEqual(
      all.topics.map((x) => [x.name, x.topicId, x.partitions.map((p) => p.partitionIndex)]),
      [['foo', NO_TOPIC_ID, [0, 3]]],
    )
    const empty = await t.read('fetch', (m) =>
      m.fetchOffsets({ groupId: '', memberId: null, memberEpoch: -1, topics: null }),
    )
    assert.equal(empty.errorCode, ErrorCode.INVALID_GROUP_ID)
    await t.close()
  })

  it('deletes committed offsets with tombstones, except on topics the group reads', async () => {
    const t = await start({ ...ANY_GROUP, isSubscribedToTopic: (_g, topic) => topic === 'read' })
    await t.write('commit', (m, nowMs) => m.commitOffset({ ...CTX, nowMs }, commit({ 0: 5n })))
    const del = await t.write('delete', (m) =>
      m.deleteOffsets({
        groupId: 'g',
        topics: [
          { name: 'foo', partitions: [0, 1] },
          { name: 'read', partitions: [0] },
        ],
      }),
    )
    assert.deepEqual(
      del.topics.map((x) => [x.name, x.partitions.map((p) => p.errorCode)]),
      [
        ['foo', [0, 0]],
        ['read', [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC]],
      ],
    )
    assert.equal(t.shard.hasOffsets('g'), false)
    assert.deepEqual((await t.log()).at(-1), {
      type: 'OffsetCommit',
      key: { group: 'g', topic: 'foo', partition: 0 },
      value: null,
    })
    await t.close()
  })

  it('expires offsets past their retention, never those of topics the group reads', async () => {
    const t = await start()
    await t.write('commit', (m, nowMs) => m.commitOffset({ ...CTX, nowMs }, commit({ 0: 5n })))
    await t.advance(1000)
    const none = t.shard.expiredOffsetsRecords('g', t.nowMs, 1001, () => false)
    assert.deepEqual([none.records.length, none.allOffsetsExpired], [0, false])
    const due = t.shard.expiredOffsetsRecords('g', t.nowMs, 1000, () => false)
    assert.deepEqual([due.records.length, due.allOffsetsExpired], [1, true])
    const read = t.shard.expiredOffsetsRecords('g', t.nowMs, 1000, () => true)
    assert.deepEqual([read.records.length, read.allOffsetsExpired], [0, false])
    await t.close()
  })

  it('a reload replays the log into the same offsets', async () => {
    const t = await start(ANY_GROUP)
    await t.write('commit', (m, nowMs) => m.commitOffset({ ...CTX, nowMs }, commit({ 0: 5n, 1: 6n })))
    await t.write('delete', (m) =>
      m.deleteOffsets({ groupId: 'g', topics: [{ name: 'foo', partitions: [1] }] }),
    )
    const again = await t.reload()
    assert.deepEqual(again.shard.allOffsets('g'), t.shard.allOffsets('g'))
    assert.deepEqual(
      again.shard.allOffsets('g').map((x) => x.partitions.map(([p]) => p)),
      [[0]],
    )
    await again.close()
    await t.close()
  })

  it('counts the committed offsets as they are replayed (Kafka offset-count)', () => {
    const m = new OffsetMetadataManager(ANY_GROUP)
    assert.equal(m.offsetCount, 0)
    m.replay(offsetCommitRecord('g', 'foo', 0, value(1n)))
    m.replay(offsetCommitRecord('g', 'foo', 1, value(1n)))
    m.replay(offsetCommitRecord('h', 'foo', 0, value(1n)))
    assert.equal(m.offsetCount, 3)
    m.replay(offsetCommitRecord('g', 'foo', 0, value(2n)))
    assert.equal(m.offsetCount, 3, 'a new offset for a partition replaces the old one')
    m.replay(offsetCommitTombstone('g', 'foo', 0))
    m.replay(offsetCommitTombstone('g', 'foo', 0))
    m.replay(offsetCommitTombstone('g', 'bar', 7))
    assert.equal(m.offsetCount, 2, 'a tombstone of an offset that is not there removes nothing')
  })

  it('replays commits after tombstones emptied their topic and group into the live offsets', () => {
    // Replay keeps the partitions of the last group and topic at hand for the next record of a
    // commit; tombstones that remove that topic and group must not leave later commits there.
    const m = new OffsetMetadataManager(ANY_GROUP)
    m.replay(offsetCommitRecord('g', 'foo', 0, value(1n)))
    m.replay(offsetCommitRecord('g', 'foo', 1, value(2n)))
    m.replay(offsetCommitTombstone('g', 'foo', 0))
    m.replay(offsetCommitTombstone('g', 'foo', 1))
    assert.equal(m.hasOffsets('g'), false)
    m.replay(offsetCommitRecord('g', 'foo', 0, value(3n)))
    m.replay(offsetCommitRecord('g', 'bar', 0, value(4n)))
    m.replay(offsetCommitRecord('g', 'foo', 2, value(5n)))
    assert.equal(m.offset('g', 'foo', 0)?.offset, 3n)
    assert.equal(m.offset('g', 'foo', 2)?.offset, 5n)
    assert.equal(m.offset('g', 'bar', 0)?.offset, 4n)
    assert.deepEqual(
      m.allOffsets('g').map(({ topic, partitions }) => [topic, partitions.map(([p]) => p)]),
      [
        ['bar', [0]],
        ['foo', [0, 2]],
      ],
    )
  })

  it('answers every partition its own index and code, whatever the index, commit after commit', async () => {
    const t = await start()
    const partitions = (metadataOf: (i: number) => string | null) =>
      [0, 5, 1023, 1024, 70_000].map((i) => ({
        partitionIndex: i,
        committedOffset: BigInt(i),
        committedLeaderEpoch: -1,
        committedMetadata: metadataOf(i),
      }))
    const first = await t.write('commit', (m, nowMs) =>
      m.commitOffset(
        { ...CTX, nowMs, maxMetadataSize: 3 },
        {
          ...commit({}),
          topics: [{ name: 'foo', topicId: '', partitions: partitions((i) => (i === 5 ? 'long' : null)) }],
        },
      ),
    )
    const expected = [
      {
        name: 'foo',
        topicId: '',
        partitions: [
          { partitionIndex: 0, errorCode: 0 },
          { partitionIndex: 5, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE },
          { partitionIndex: 1023, errorCode: 0 },
          { partitionIndex: 1024, errorCode: 0 },
          { partitionIndex: 70_000, errorCode: 0 },
        ],
      },
    ]
    assert.deepEqual(first, expected)
    // The next commits refuse other partitions; the first answer stays what it was.
    const second = await t.write('commit', (m, nowMs) =>
      m.commitOffset(
        { ...CTX, nowMs, maxMetadataSize: 3 },
        {
          ...commit({}),
          topics: [{ name: 'foo', topicId: '', partitions: partitions((i) => (i === 5 ? null : 'long')) }],
        },
      ),
    )
    assert.deepEqual(
      second[0].partitions.map((p) => [p.partitionIndex, p.errorCode]),
      [
        [0, ErrorCode.OFFSET_METADATA_TOO_LARGE],
        [5, 0],
        [1023, ErrorCode.OFFSET_METADATA_TOO_LARGE],
        [1024, ErrorCode.OFFSET_METADATA_TOO_LARGE],
        [70_000, ErrorCode.OFFSET_METADATA_TOO_LARGE],
      ],
    )
    assert.deepEqual(first, expected)
    const offsets = await fetchFoo(t, [0, 5, 1023, 1024, 70_000])
    assert.deepEqual(
      offsets.topics[0].partitions.map((p) => [p.partitionIndex, p.committedOffset]),
      [
        [0, 0n],
        [5, 5n],
        [1023, 1023n],
        [1024, 1024n],
        [70_000, 70_000n],
      ],
    )
    await t.close()
  })
})
