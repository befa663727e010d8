import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ManualClock } from '../../../src/coordinator/runtime/index.js'
import { GroupCoordinatorService } from '../../../src/coordinator/service/index.js'
import { coordinatorRecordSerde } from '../../../src/coordinator/service/records.js'
import { GroupCoordinatorShard } from '../../../src/coordinator/shard/index.js'
import { StickyTaskAssignor } from '../../../src/coordinator/shard/streams/assignor/index.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/index.js'
import type { CoordinatorRecord } from '../../../src/protocol/generated/coordinator-records.js'
import { decodeCoordinatorRecord, encodeCoordinatorRecord } from '../../../src/protocol/records.js'
import { parseConfig } from '../../../src/server/config.js'
import { groupSnapshot } from '../../sim/snapshot.js'
import { joinRequest, topicsImage } from '../shard/streams/harness.js'

const latestOnly = (record: CoordinatorRecord): boolean => {
  // The key where a store holds it: within a larger buffer, not at its start.
  const key = encodeCoordinatorRecord(record).key
  const bytes = new Uint8Array(key.length + 7)
  bytes.set(key, 5)
  return coordinatorRecordSerde.latestOnly?.(bytes, 5, key.length) === true
}

describe('coordinatorRecordSerde.latestOnly', () => {
  it('lets loading replay only the latest OffsetCommit record of a partition, and every other record', () => {
    assert.equal(
      latestOnly({ type: 'OffsetCommit', key: { group: 'g', topic: 't', partition: 3 }, value: null }),
      true,
    )
    assert.equal(
      latestOnly({ type: 'StreamsGroupMemberMetadata', key: { groupId: 'g', memberId: 'm' }, value: null }),
      false,
      'members keep the order they joined in',
    )
    assert.equal(latestOnly({ type: 'GroupMetadata', key: { group: 'g' }, value: null }), false)
    assert.equal(
      latestOnly({
        type: 'TxnOffsetCommit',
        key: { producerId: 7n, group: 'g', topic: 't', partition: 0 },
        value: null,
      }),
      false,
      'pending transactional offsets are replayed in full',
    )
    assert.equal(
      coordinatorRecordSerde.latestOnly?.(new Uint8Array([9, 0, 1]), 1, 1),
      false,
      'a key too short for a type',
    )
  })

  it('a restart gives the state replaying every record of the log gives', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const config = parseConfig({
      'offsets.topic.num.partitions': '2',
      'group.streams.initial.rebalance.delay.ms': '0',
      'group.streams.assignment.interval.ms': '0',
    })
    const topics = {
      list: () => [{ name: 'foo', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', numPartitions: 2 }],
      createTopics: async () => [],
    }
    const clock = new ManualClock(1_000_000)
    const first = await GroupCoordinatorService.start({ store, config, topics, clock })
    const hb = { apiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1' }
    const joined = await first.streamsGroupHeartbeat(hb, joinRequest({ groupId: 'app' }))
    assert.equal(joined.errorCode, 0)
    const commit = (groupId: string, offset: bigint, partitions: number[], epoch = -1, memberId = '') => {
      const committed = partitions.map((partitionIndex) => ({
        partitionIndex,
        committedOffset: offset + BigInt(partitionIndex),
        committedLeaderEpoch: -1,
        committedMetadata: null,
      }))
      const topic = { name: 'foo', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: committed }
      const request = { groupId, memberId, groupInstanceId: null, retentionTimeMs: -1n, topics: [topic] }
      return first.commitOffsets(9, { ...request, generationIdOrMemberEpoch: epoch })
    }
    for (let i = 0; i < 30; i++) {
      await commit('simple-a', BigInt(i), i % 3 === 0 ? [1, 0] : [0, 1])
      await commit('simple-b', BigInt(i), [1])
      await commit('app', BigInt(100 + i), [0, 1], joined.memberEpoch, joined.memberId)
    }
    // Tombstones: one partition's offsets, and a whole group.
    const deleted = await first.deleteOffsets({
      groupId: 'simple-a',
      topics: [{ name: 'foo', partitions: [1] }],
    })
    assert.equal(deleted.errorCode, 0)
    await first.deleteGroups(['simple-b'])
    await commit('simple-b', 5n, [0])
    await first.close()

    const loaded = new Map<number, string>()
    const again = await GroupCoordinatorService.start({
      store,
      config,
      topics,
      clock,
      onShardReplayed: (shardId, shard) => loaded.set(shardId, groupSnapshot(shard)),
    })
    await again.close()
    for (let shardId = 0; shardId < 2; shardId++) {
      const all = new GroupCoordinatorShard({
        topics: topicsImage({ foo: 2 }),
        assignors: { select: () => new StickyTaskAssignor() },
      })
      const log = await store.load(shardId)
      for (const r of log) all.replay(decodeCoordinatorRecord(r.key, r.value))
      assert.equal(loaded.get(shardId), groupSnapshot(all), `shard ${shardId}`)
    }
    const superseded = (await Promise.all([store.load(0), store.load(1)])).flat().length
    assert.ok(superseded > 150, `the log holds every commit (${superseded} records)`)
  })
})
