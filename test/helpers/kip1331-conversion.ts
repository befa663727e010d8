// Fixtures for the classic JoinGroup conversion of an empty streams group (KIP-1331 §7): a raw
// JoinGroup v9 and an empty streams group whose member pushed a description before leaving (stored 0).
import assert from 'node:assert/strict'
import type { WireClient } from '../server/wire-client.js'
import { joinMember, push } from './kip1331.js'

export interface ClassicJoinBody {
  readonly errorCode: number
  readonly memberId: string
  readonly leader: string
  readonly generationId: number
}

/** One JoinGroup v9 (consumer protocol, one "range" assignor). */
export async function classicJoin(
  c: WireClient,
  groupId: string,
  memberId: string,
): Promise<ClassicJoinBody> {
  const { body } = await c.request<ClassicJoinBody>(11, 9, {
    groupId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new TextEncoder().encode('sub') }],
    reason: null,
  })
  return body
}

/**
 * A streams group whose member was asked for its description, pushed it at topology epoch 0 and
 * left: the group is empty with stored epoch 0 and the plugin holds the description.
 */
export async function streamsGroupWithStoredDescription(
  port: number,
  groupId: string,
  opened: { close(): void }[],
): Promise<void> {
  const m = await joinMember(port, groupId)
  opened.push(m)
  const hb = await m.heartbeat()
  assert.deepEqual([hb.errorCode, hb.topologyDescriptionRequired], [0, true])
  assert.equal((await push(m.client, groupId, m.memberId, 0)).errorCode, 0)
  assert.equal((await m.leave()).errorCode, 0)
}
