// The early gates of the group APIs on a server whose group.coordinator.rebalance.protocols excludes
// a protocol: Kafka's KafkaApis answers with getErrorResponse(UNSUPPORTED_VERSION), which sets the
// code and no ErrorMessage (StreamsGroupHeartbeat, StreamsGroupDescribe, ConsumerGroupHeartbeat,
// ConsumerGroupDescribe, StreamsGroupTopologyDescriptionUpdate), before any authorization.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

type Body = Record<string, unknown> & { errorCode?: number; errorMessage?: string | null }
type Groups = { groups: Body[] }

describe('group APIs of a disabled rebalance protocol answer UNSUPPORTED_VERSION without a message', () => {
  let ts: TestServer
  let client: WireClient

  before(async () => {
    ts = await startTestServer({ 'group.coordinator.rebalance.protocols': 'classic' })
    client = await WireClient.connect(ts.port)
  })
  after(async () => {
    client.close()
    await ts.stop()
  })

  test('StreamsGroupHeartbeat', async () => {
    for (const version of [0, 1]) {
      const { body } = await client.request<Body>(88, version, {
        groupId: 'g',
        memberId: 'm',
        memberEpoch: 0,
      })
      assert.deepEqual([body.errorCode, body.errorMessage], [ErrorCode.UNSUPPORTED_VERSION, null])
    }
  })

  test('StreamsGroupDescribe', async () => {
    const { body } = await client.request<Groups>(89, 0, { groupIds: ['a', 'b'] })
    assert.deepEqual(
      body.groups.map((g) => [g.groupId, g.errorCode, g.errorMessage]),
      [
        ['a', ErrorCode.UNSUPPORTED_VERSION, null],
        ['b', ErrorCode.UNSUPPORTED_VERSION, null],
      ],
    )
  })

  test('ConsumerGroupHeartbeat', async () => {
    const { body } = await client.request<Body>(68, 0, { groupId: 'g', memberId: 'm', memberEpoch: 0 })
    assert.deepEqual([body.errorCode, body.errorMessage], [ErrorCode.UNSUPPORTED_VERSION, null])
  })

  test('ConsumerGroupDescribe', async () => {
    const { body } = await client.request<Groups>(69, 0, { groupIds: ['a'] })
    assert.deepEqual(
      body.groups.map((g) => [g.groupId, g.errorCode, g.errorMessage]),
      [['a', ErrorCode.UNSUPPORTED_VERSION, null]],
    )
  })

  test('StreamsGroupTopologyDescriptionUpdate', async () => {
    const { body } = await client.request<Body>(93, 0, { groupId: 'g', memberId: 'm', memberEpoch: 1 })
    assert.deepEqual([body.errorCode, body.errorMessage], [ErrorCode.UNSUPPORTED_VERSION, null])
  })
})
