// Member ids the coordinator draws, in Kafka's forms: a consumer group member's (a KIP-848 member
// without one, or a classic member joining a consumer group) is a Kafka Uuid (Uuid.randomUuid(),
// 22 base64url characters); a classic group member's is `<client id>-<java.util.UUID>`.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ManualClock } from '../../../src/coordinator/runtime/index.js'
import { GroupCoordinatorService } from '../../../src/coordinator/service/group-coordinator-service.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { createConsumerGroupHeartbeatRequest } from '../../../src/protocol/generated/messages/ConsumerGroupHeartbeatRequest.js'
import { createJoinGroupRequest } from '../../../src/protocol/generated/messages/JoinGroupRequest.js'
import { randomUuid, ZERO_UUID } from '../../../src/uuid.js'
import { parseConfig } from '../../../src/server/config.js'

const KAFKA_UUID = /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/
const JAVA_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function start() {
  const store = new MemoryRecordStore()
  await store.open()
  return GroupCoordinatorService.start({
    store,
    clock: new ManualClock(0),
    config: parseConfig({ 'offsets.topic.num.partitions': '1' }),
    topics: {
      list: () => [{ name: 'foo', topicId: randomUuid(), numPartitions: 1 }],
      createTopics: async () => [],
    },
  })
}

const ctx = { apiVersion: 1, clientId: 'app', clientHost: '/127.0.0.1' }

const join = (groupId: string, memberId: string) =>
  createJoinGroupRequest({
    groupId,
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array([0, 0, 0, 0, 0, 0]) }],
  })

describe('member ids', () => {
  it('randomUuid: 22 base64url characters, never zero, never starting with "-"', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 20_000; i++) {
      const id = randomUuid()
      assert.match(id, KAFKA_UUID)
      assert.notEqual(id, ZERO_UUID)
      seen.add(id)
    }
    assert.equal(seen.size, 20_000)
  })

  it('a consumer group member and a classic member joining a consumer group get Kafka Uuids', async () => {
    const service = await start()
    try {
      // v0: the coordinator draws the id (from v1 the client sends its own, KIP-1082).
      const hb = await service.consumerGroupHeartbeat(
        { ...ctx, apiVersion: 0 },
        createConsumerGroupHeartbeatRequest({
          groupId: 'cg',
          memberId: '',
          memberEpoch: 0,
          rebalanceTimeoutMs: 30_000,
          subscribedTopicNames: ['foo'],
          topicPartitions: [],
        }),
      )
      assert.equal(hb.errorCode, ErrorCode.NONE)
      assert.match(hb.memberId ?? '', KAFKA_UUID)
      const classic = await service.classicGroups.joinGroup({ ...ctx, apiVersion: 9 }, join('cg', ''))
      assert.equal(classic.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      assert.match(classic.memberId, KAFKA_UUID)
    } finally {
      await service.close()
    }
  })

  it('a classic group member gets <client id>-<uuid>', async () => {
    const service = await start()
    try {
      const r = await service.classicGroups.joinGroup({ ...ctx, apiVersion: 9 }, join('classic', ''))
      assert.equal(r.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
      assert.match(r.memberId.slice('app-'.length), JAVA_UUID)
      assert.ok(r.memberId.startsWith('app-'), r.memberId)
    } finally {
      await service.close()
    }
  })
})
