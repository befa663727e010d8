import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ManualClock } from '../../../src/coordinator/runtime/index.js'
import { GroupCoordinatorService } from '../../../src/coordinator/service/index.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/index.js'
import { parseConfig } from '../../../src/server/config.js'
import { TopicCatalog } from '../../../src/server/topics/catalog.js'
import { heartbeatRequest, joinRequest } from '../shard/streams/harness.js'

const hb = { apiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1' }
const newTopic = (name: string, numPartitions: number) => ({
  name,
  numPartitions,
  replicationFactor: -1,
  assignments: [],
  configs: [],
})

async function setup() {
  const store = new MemoryRecordStore()
  await store.open()
  let n = 0
  const catalog = await TopicCatalog.load(store, {
    nodeId: 1,
    newTopicId: () => Buffer.alloc(16, ++n).toString('base64url'),
  })
  const service = await GroupCoordinatorService.start({
    store,
    topics: catalog,
    clock: new ManualClock(0),
    config: parseConfig({
      'offsets.topic.num.partitions': '1',
      'group.streams.initial.rebalance.delay.ms': '0',
      'group.streams.assignment.interval.ms': '0',
    }),
  })
  return { catalog, service }
}

/** Waits until the service has handled the catalog's notification (it runs in the shard's queue). */
async function refreshDeadline(service: GroupCoordinatorService, groupId: string): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const d = await service.scheduleReadOperation(
      'read',
      groupId,
      (shard) => shard.streams.group(groupId)!.metadataRefreshDeadline.deadlineMs,
    )
    if (d === 0) return d
    await new Promise((r) => setImmediate(r))
  }
  return service.scheduleReadOperation(
    'read',
    groupId,
    (shard) => shard.streams.group(groupId)!.metadataRefreshDeadline.deadlineMs,
  )
}

describe('topic catalog changes reach the streams groups', () => {
  it('CreateTopics of a missing source topic: the shard is told at once; the next heartbeat bumps the group epoch and assigns', async () => {
    const { catalog, service } = await setup()
    try {
      const r1 = await service.streamsGroupHeartbeat(hb, joinRequest())
      assert.equal(r1.errorCode, 0)
      assert.deepEqual(r1.status, [{ statusCode: 1, statusDetail: 'Source topics foo are missing.' }])
      // A second member bumps the epoch of the stored group, which sets its far refresh deadline.
      const r1b = await service.streamsGroupHeartbeat(hb, joinRequest({ memberId: 'm2', processId: 'p2' }))
      assert.deepEqual(r1b.status, r1.status)
      const before = await service.streamsGroupDescribe(['g'], false)
      assert.equal(before[0].groupState, 'NotReady')
      const epochBefore = before[0].groupEpoch
      // A catalog change must reset that deadline before any heartbeat comes.
      assert.notEqual(
        await service.scheduleReadOperation(
          'read',
          'g',
          (shard) => shard.streams.group('g')!.metadataRefreshDeadline.deadlineMs,
        ),
        0,
      )

      const [created] = await catalog.createTopics([newTopic('foo', 2)], false)
      assert.equal(created.error, 'NONE')
      assert.equal(await refreshDeadline(service, 'g'), 0)

      const r2 = await service.streamsGroupHeartbeat(
        hb,
        heartbeatRequest({ memberEpoch: r1.memberEpoch, endpointInformationEpoch: 0 }),
      )
      assert.equal(r2.errorCode, 0)
      assert.deepEqual(r2.status, [])
      assert.equal(r2.memberEpoch, epochBefore + 1)
      const after = await service.streamsGroupDescribe(['g'], false)
      assert.equal(after[0].groupEpoch, epochBefore + 1)
      assert.equal(after[0].assignmentEpoch, epochBefore + 1)
      assert.notEqual(after[0].groupState, 'NotReady')
    } finally {
      await service.close()
    }
  })

  it('DeleteTopics of a source topic: the shard is told at once; the next heartbeat reports it missing', async () => {
    const { catalog, service } = await setup()
    try {
      await catalog.createTopics([newTopic('foo', 2)], false)
      const r1 = await service.streamsGroupHeartbeat(hb, joinRequest())
      assert.deepEqual(r1.status, [])
      await service.streamsGroupHeartbeat(hb, joinRequest({ memberId: 'm2', processId: 'p2' }))
      assert.notEqual(
        await service.scheduleReadOperation(
          'read',
          'g',
          (shard) => shard.streams.group('g')!.metadataRefreshDeadline.deadlineMs,
        ),
        0,
      )
      await catalog.deleteTopics(['foo'])
      assert.equal(await refreshDeadline(service, 'g'), 0)
      const r2 = await service.streamsGroupHeartbeat(
        hb,
        heartbeatRequest({ memberEpoch: r1.memberEpoch, endpointInformationEpoch: 0 }),
      )
      assert.deepEqual(r2.status, [{ statusCode: 1, statusDetail: 'Source topics foo are missing.' }])
      const after = await service.streamsGroupDescribe(['g'], false)
      assert.equal(after[0].groupState, 'NotReady')
    } finally {
      await service.close()
    }
  })
})
