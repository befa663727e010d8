import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  GroupCoordinatorShard,
  type OffsetCommitInput,
  type GroupCoordinatorResult,
} from '../../../src/coordinator/shard/index.js'
import { StickyTaskAssignor } from '../../../src/coordinator/shard/streams/assignor/index.js'
import type { CoordinatorRecord } from '../../../src/protocol/generated/coordinator-records.js'
import { decodeCoordinatorRecord, encodeCoordinatorRecord } from '../../../src/protocol/records.js'
import { CONSUMER_GROUP_CONFIG_DEFAULTS } from '../../../src/coordinator/shard/consumer/config.js'
import { heartbeatRequest, joinRequest, NO_DELAY, topicsImage } from './streams/harness.js'

const assignors = { select: () => new StickyTaskAssignor() }
const ctx = (nowMs: number) => ({
  nowMs,
  requestApiVersion: 1,
  clientId: 'c',
  clientHost: '/127.0.0.1',
  config: NO_DELAY,
})

function newShard(): GroupCoordinatorShard {
  return new GroupCoordinatorShard({ topics: topicsImage({ foo: 2, bar: 1 }), assignors })
}

/** Applies a write result as the runtime does: records go through their wire encoding, then replay. */
function apply<T>(shard: GroupCoordinatorShard, log: CoordinatorRecord[], r: GroupCoordinatorResult<T>): T {
  for (const rec of r.records) {
    const enc = encodeCoordinatorRecord(rec)
    const dec = decodeCoordinatorRecord(enc.key, enc.value)
    log.push(dec)
    shard.replay(dec)
  }
  return r.response
}

function heartbeat(
  shard: GroupCoordinatorShard,
  log: CoordinatorRecord[],
  nowMs: number,
  req: Parameters<GroupCoordinatorShard['streamsGroupHeartbeat']>[1],
) {
  const r = shard.streamsGroupHeartbeat(ctx(nowMs), req)
  return apply(shard, log, { records: r.records, response: r.response, timers: r.timers })
}

const commit = (p: Partial<OffsetCommitInput> = {}): OffsetCommitInput => ({
  groupId: 'simple',
  generationIdOrMemberEpoch: -1,
  memberId: '',
  groupInstanceId: null,
  retentionTimeMs: -1n,
  topics: [
    {
      name: 'foo',
      topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
      partitions: [
        { partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: 3, committedMetadata: 'm' },
      ],
    },
  ],
  ...p,
})

/** Everything the shard exposes, for replay equivalence. */
function snapshot(shard: GroupCoordinatorShard) {
  const groups = shard.listGroups([], []).sort((a, b) => (a.groupId < b.groupId ? -1 : 1))
  const ids = groups.map((g) => g.groupId)
  return {
    groups,
    describe: shard.describeGroups(ids, 6),
    streams: shard
      .streamsGroupDescribe(ids, false)
      .map((d) => ({ ...d, members: d.members.map((m) => ({ ...m, taskOffsets: [], taskEndOffsets: [] })) })),
    offsets: ids.map((groupId) =>
      shard.fetchOffsets({ groupId, memberId: null, memberEpoch: -1, topics: null }),
    ),
  }
}

function replayInto(log: readonly CoordinatorRecord[]): GroupCoordinatorShard {
  const fresh = newShard()
  for (const r of log) fresh.replay(r)
  return fresh
}

describe('GroupCoordinatorShard offsets', () => {
  it('a simple commit writes one OffsetCommit record per partition and creates the simple group on replay', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    const r = shard.commitOffsets({ apiVersion: 9, nowMs: 1000, maxMetadataSize: 4096 }, commit())
    assert.deepEqual(r.records, [
      {
        type: 'OffsetCommit',
        key: { group: 'simple', topic: 'foo', partition: 0 },
        value: {
          offset: 42n,
          leaderEpoch: 3,
          metadata: 'm',
          commitTimestamp: 1000n,
          expireTimestamp: -1n,
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        },
        valueVersion: 3,
      },
    ])
    assert.deepEqual(r.response, [
      { name: 'foo', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partitionIndex: 0, errorCode: 0 }] },
    ])
    assert.equal(shard.hasGroup('simple'), false, 'a handler changes nothing before replay')
    apply(shard, log, r)
    assert.deepEqual(shard.listGroups([], []), [
      { groupId: 'simple', protocolType: '', groupState: 'Empty', groupType: 'classic' },
    ])
    assert.deepEqual(
      shard.fetchOffsets({
        groupId: 'simple',
        memberId: null,
        memberEpoch: -1,
        topics: [{ name: 'foo', partitionIndexes: [0, 1] }],
      }),
      {
        groupId: 'simple',
        errorCode: 0,
        topics: [
          {
            name: 'foo',
            topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
            partitions: [
              {
                partitionIndex: 0,
                committedOffset: 42n,
                committedLeaderEpoch: 3,
                metadata: 'm',
                errorCode: 0,
              },
              {
                partitionIndex: 1,
                committedOffset: -1n,
                committedLeaderEpoch: -1,
                metadata: '',
                errorCode: 0,
              },
            ],
          },
        ],
      },
    )
    assert.deepEqual(snapshot(replayInto(log)), snapshot(shard))
  })

  it('v2–v4 retention sets the expire timestamp (value version 1); v10 topic ids use version 4', () => {
    const shard = newShard()
    const r = shard.commitOffsets(
      { apiVersion: 3, nowMs: 1000, maxMetadataSize: 4096 },
      commit({ retentionTimeMs: 500n }),
    )
    assert.equal(r.records[0].valueVersion, 1)
    assert.equal((r.records[0].value as { expireTimestamp: bigint }).expireTimestamp, 1500n)
    const v10 = shard.commitOffsets(
      { apiVersion: 10, nowMs: 1000, maxMetadataSize: 4096 },
      commit({
        topics: [
          {
            name: 'foo',
            topicId: 'AQIDBAUGBwgJCgsMDQ4PEA',
            partitions: [
              { partitionIndex: 1, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null },
            ],
          },
        ],
      }),
    )
    assert.equal(v10.records[0].valueVersion, 4)
    assert.equal((v10.records[0].value as { metadata: string }).metadata, '')
  })

  it('group checks: unknown group with a generation, too-large metadata, empty group id', () => {
    const shard = newShard()
    const c = (apiVersion: number, p: Partial<OffsetCommitInput>) =>
      shard.commitOffsets({ apiVersion, nowMs: 0, maxMetadataSize: 4 }, commit(p))
    const codes = (r: GroupCoordinatorResult<{ partitions: { errorCode: number }[] }[]>) =>
      r.response.flatMap((t) => t.partitions.map((p) => p.errorCode))
    assert.deepEqual(codes(c(9, { generationIdOrMemberEpoch: 5, memberId: 'x' })), [69])
    assert.deepEqual(codes(c(8, { generationIdOrMemberEpoch: 5, memberId: 'x' })), [22])
    assert.deepEqual(codes(c(9, { groupId: '' })), [24])
    const tooLarge = c(9, {
      topics: [
        {
          name: 'foo',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
          partitions: [
            { partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: 'hello' },
          ],
        },
      ],
    })
    assert.deepEqual(codes(tooLarge), [12])
    assert.equal(tooLarge.records.length, 0)
  })

  it('streams groups: member-epoch checks of §5.6 for commit and fetch', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    const joined = heartbeat(shard, log, 0, joinRequest())
    assert.equal(joined.memberEpoch, 2)
    const streamsCommit = (p: Partial<OffsetCommitInput>, apiVersion = 9) =>
      shard
        .commitOffsets({ apiVersion, nowMs: 0, maxMetadataSize: 4096 }, commit({ groupId: 'g', ...p }))
        .response.flatMap((t) => t.partitions.map((x) => x.errorCode))
    assert.deepEqual(streamsCommit({ memberId: 'm1', generationIdOrMemberEpoch: 2 }), [0])
    assert.deepEqual(streamsCommit({ memberId: 'm1', generationIdOrMemberEpoch: 3 }), [113])
    assert.deepEqual(streamsCommit({ memberId: 'nobody', generationIdOrMemberEpoch: 2 }), [25])
    assert.deepEqual(streamsCommit({ memberId: '', generationIdOrMemberEpoch: -1 }), [25])
    assert.deepEqual(streamsCommit({ memberId: 'm1', generationIdOrMemberEpoch: 2 }, 8), [35])
    assert.equal(
      shard.fetchOffsets({ groupId: 'g', memberId: 'm1', memberEpoch: 1, topics: null }).errorCode,
      113,
    )
    assert.equal(
      shard.fetchOffsets({ groupId: 'g', memberId: 'm1', memberEpoch: 2, topics: null }).errorCode,
      0,
    )
    assert.equal(
      shard.fetchOffsets({ groupId: 'g', memberId: null, memberEpoch: -1, topics: null }).errorCode,
      0,
    )
  })

  it('an id whose simple group a record removed is a simple group again with its next offsets', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    // Two partitions a commit: the second record of each finds the group a simple one already.
    const twice = commit({
      topics: [
        {
          name: 'foo',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
          partitions: [0, 1].map((partitionIndex) => ({
            partitionIndex,
            committedOffset: 7n,
            committedLeaderEpoch: -1,
            committedMetadata: '',
          })),
        },
      ],
    })
    const ctx9 = { apiVersion: 9, nowMs: 0, maxMetadataSize: 4096 }
    apply(shard, log, shard.commitOffsets(ctx9, twice))
    assert.equal(shard.isSimpleGroup('simple'), true)
    shard.replay({ type: 'GroupMetadata', key: { group: 'simple' }, value: null })
    assert.equal(shard.isSimpleGroup('simple'), false)
    apply(shard, log, shard.commitOffsets(ctx9, twice))
    assert.equal(shard.isSimpleGroup('simple'), true, 'the offsets after the tombstone make it again')
    // The same with another id's offsets between: each id is looked up for itself.
    apply(shard, log, shard.commitOffsets(ctx9, { ...twice, groupId: 'other' }))
    shard.replay({ type: 'GroupMetadata', key: { group: 'simple' }, value: null })
    apply(shard, log, shard.commitOffsets(ctx9, { ...twice, groupId: 'other' }))
    assert.equal(shard.isSimpleGroup('simple'), false)
    assert.equal(shard.isSimpleGroup('other'), true)
    apply(shard, log, shard.commitOffsets(ctx9, twice))
    assert.equal(shard.isSimpleGroup('simple'), true)
  })

  it('OffsetDelete tombstones existing offsets, refuses subscribed topics, answers unknown groups', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    apply(shard, log, shard.commitOffsets({ apiVersion: 9, nowMs: 0, maxMetadataSize: 4096 }, commit()))
    const del = shard.offsetDelete({ groupId: 'simple', topics: [{ name: 'foo', partitions: [0, 1] }] })
    assert.deepEqual(del.records, [
      { type: 'OffsetCommit', key: { group: 'simple', topic: 'foo', partition: 0 }, value: null },
    ])
    assert.deepEqual(del.response, {
      errorCode: 0,
      topics: [
        {
          name: 'foo',
          partitions: [
            { partitionIndex: 0, errorCode: 0 },
            { partitionIndex: 1, errorCode: 0 },
          ],
        },
      ],
    })
    apply(shard, log, del)
    assert.equal(shard.offsets.offset('simple', 'foo', 0), undefined)
    assert.equal(shard.offsetDelete({ groupId: 'nope', topics: [] }).response.errorCode, 69)
    heartbeat(shard, log, 0, joinRequest())
    const subscribed = shard.offsetDelete({
      groupId: 'g',
      topics: [
        { name: 'foo', partitions: [0] },
        { name: 'bar', partitions: [0] },
      ],
    })
    assert.deepEqual(
      subscribed.response.topics.map((t) => t.partitions[0].errorCode),
      [86, 0],
    )
    assert.deepEqual(snapshot(replayInto(log)), snapshot(shard))
  })
})

describe('GroupCoordinatorShard group APIs', () => {
  it('ListGroups lists streams and simple groups with the states and types filters', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    apply(shard, log, shard.commitOffsets({ apiVersion: 9, nowMs: 0, maxMetadataSize: 4096 }, commit()))
    heartbeat(shard, log, 0, joinRequest())
    const all = shard
      .listGroups([], [])
      .map((g) => `${g.groupId}:${g.groupType}:${g.groupState}:${g.protocolType}`)
    assert.deepEqual(all.sort(), ['g:streams:Stable:streams', 'simple:classic:Empty:'])
    assert.deepEqual(
      shard.listGroups([' EMPTY '], []).map((g) => g.groupId),
      ['simple'],
    )
    assert.deepEqual(
      shard.listGroups([], ['Streams']).map((g) => g.groupId),
      ['g'],
    )
    assert.deepEqual(shard.listGroups([], ['consumer']), [])
    assert.deepEqual(
      shard.listGroups(['stable'], []).map((g) => g.groupId),
      ['g'],
    )
    assert.deepEqual(shard.listGroups(['reconciling'], []), [])
  })

  it('DescribeGroups: simple group Empty; streams group and unknown id Dead, with the v6 error', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    apply(shard, log, shard.commitOffsets({ apiVersion: 9, nowMs: 0, maxMetadataSize: 4096 }, commit()))
    heartbeat(shard, log, 0, joinRequest())
    const v6 = shard.describeGroups(['simple', 'g', 'x', ''], 6)
    assert.deepEqual(
      v6.map((d) => [d.groupId, d.groupState, d.errorCode, d.errorMessage]),
      [
        ['simple', 'Empty', 0, null],
        ['g', 'Dead', 69, 'Group g is not a classic group.'],
        ['x', 'Dead', 69, 'Group x not found.'],
        ['', '', 24, null],
      ],
    )
    const v5 = shard.describeGroups(['g', 'x'], 5)
    assert.deepEqual(
      v5.map((d) => [d.groupState, d.errorCode, d.errorMessage]),
      [
        ['Dead', 0, null],
        ['Dead', 0, null],
      ],
    )
  })

  it('DeleteGroups: NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, offsets then group tombstones in order', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    heartbeat(shard, log, 0, joinRequest())
    apply(
      shard,
      log,
      shard.commitOffsets(
        { apiVersion: 9, nowMs: 0, maxMetadataSize: 4096 },
        commit({ groupId: 'g', memberId: 'm1', generationIdOrMemberEpoch: 2 }),
      ),
    )
    assert.deepEqual(shard.deleteGroups(['g', 'x']).response, [
      { groupId: 'g', errorCode: 68, errorMessage: null },
      { groupId: 'x', errorCode: 69, errorMessage: null },
    ])
    heartbeat(shard, log, 0, heartbeatRequest({ memberEpoch: -1 }))
    const del = shard.deleteGroups(['g'])
    assert.deepEqual(del.response, [{ groupId: 'g', errorCode: 0, errorMessage: null }])
    assert.deepEqual(
      del.records.map((r) => `${r.type}${r.value === null ? ' tombstone' : ''}`),
      [
        'OffsetCommit tombstone',
        'StreamsGroupTargetAssignmentMetadata tombstone',
        'StreamsGroupMetadata tombstone',
        'StreamsGroupTopology tombstone',
      ],
    )
    assert.deepEqual(del.timers!.cancel, ['initial-rebalance-timeout-g'])
    apply(shard, log, del)
    assert.equal(shard.hasGroup('g'), false)
    assert.equal(shard.offsets.hasOffsets('g'), false)
    assert.deepEqual(snapshot(replayInto(log)), snapshot(shard))
  })

  it('a streams join replaces a simple group: its tombstone first, the offsets stay', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    apply(
      shard,
      log,
      shard.commitOffsets({ apiVersion: 9, nowMs: 0, maxMetadataSize: 4096 }, commit({ groupId: 'g' })),
    )
    assert.equal(shard.streamsGroupDescribe(['g'], false)[0].errorMessage, 'Group g is not a streams group.')
    const r = shard.streamsGroupHeartbeat(ctx(0), joinRequest())
    assert.deepEqual(r.records[0], { type: 'GroupMetadata', key: { group: 'g' }, value: null })
    apply(shard, log, { records: r.records, response: r.response, timers: r.timers })
    assert.equal(shard.isSimpleGroup('g'), false)
    assert.equal(shard.offsets.offset('g', 'foo', 0)?.offset, 42n)
    assert.deepEqual(snapshot(replayInto(log)), snapshot(shard))
  })

  it('ConsumerGroupHeartbeat/Describe on a streams group answer as Kafka', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    heartbeat(shard, log, 0, joinRequest())
    const join = {
      groupId: 'g',
      memberId: 'm1',
      memberEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: 30000,
      subscribedTopicNames: ['foo'],
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: [],
    }
    const consumerCtx = {
      nowMs: 0,
      requestApiVersion: 1,
      clientId: 'c',
      clientHost: '/127.0.0.1',
      config: CONSUMER_GROUP_CONFIG_DEFAULTS,
      newMemberId: () => 'generated',
    }
    const r = shard.consumerGroupHeartbeat(consumerCtx, join)
    assert.deepEqual(r.records, [])
    assert.deepEqual(
      [r.response.errorCode, r.response.errorMessage],
      [69, 'Group g is not a consumer group.'],
    )
    assert.deepEqual(
      shard.consumerGroupDescribe(['g', 'x']).map((d) => [d.errorCode, d.errorMessage]),
      [
        [69, 'Group g is not a consumer group.'],
        [69, 'Group x not found.'],
      ],
    )
  })
})

describe('GroupCoordinatorShard expiry sweep', () => {
  const retention = { retentionMs: 1000, pluginConfigured: false }

  it('expires old offsets, then deletes the simple group once its offsets are gone', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    apply(shard, log, shard.commitOffsets({ apiVersion: 9, nowMs: 0, maxMetadataSize: 4096 }, commit()))
    apply(
      shard,
      log,
      shard.commitOffsets(
        { apiVersion: 9, nowMs: 600, maxMetadataSize: 4096 },
        commit({
          topics: [
            {
              name: 'bar',
              topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
              partitions: [
                { partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null },
              ],
            },
          ],
        }),
      ),
    )
    const early = shard.cleanupGroupMetadata(999, retention)
    assert.deepEqual(early.records, [])
    const first = shard.cleanupGroupMetadata(1000, retention)
    assert.deepEqual(first.records, [
      { type: 'OffsetCommit', key: { group: 'simple', topic: 'foo', partition: 0 }, value: null },
    ])
    assert.deepEqual(first.response, { expiredOffsets: 1, deletedGroups: [] })
    apply(shard, log, first)
    const second = shard.cleanupGroupMetadata(1600, retention)
    assert.deepEqual(second.records, [
      { type: 'OffsetCommit', key: { group: 'simple', topic: 'bar', partition: 0 }, value: null },
      { type: 'GroupMetadata', key: { group: 'simple' }, value: null },
    ])
    apply(shard, log, second)
    assert.deepEqual(shard.listGroups([], []), [])
    assert.deepEqual(snapshot(replayInto(log)), snapshot(shard))
  })

  it('keeps subscribed topics and non-empty streams groups; deletes an empty one with its offsets gone', () => {
    const shard = newShard()
    const log: CoordinatorRecord[] = []
    heartbeat(shard, log, 0, joinRequest())
    apply(
      shard,
      log,
      shard.commitOffsets(
        { apiVersion: 9, nowMs: 0, maxMetadataSize: 4096 },
        commit({ groupId: 'g', memberId: 'm1', generationIdOrMemberEpoch: 2 }),
      ),
    )
    assert.deepEqual(shard.cleanupGroupMetadata(10_000, retention).records, [], 'subscribed: never expired')
    heartbeat(shard, log, 0, heartbeatRequest({ memberEpoch: -1 }))
    const sweep = shard.cleanupGroupMetadata(10_000, retention)
    assert.deepEqual(sweep.response, { expiredOffsets: 1, deletedGroups: ['g'] })
    assert.equal(sweep.records[0].type, 'OffsetCommit')
    assert.equal(sweep.records.at(-1)?.type, 'StreamsGroupTopology')
    apply(shard, log, sweep)
    assert.equal(shard.hasGroup('g'), false)
    assert.deepEqual(snapshot(replayInto(log)), snapshot(shard))
  })
})
