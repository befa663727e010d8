// A KIP-848 consumer member over the wire for tests: ConsumerGroupHeartbeat v1 with a client-chosen
// member id; it adopts each assignment at once (revoking what it loses), as a consumer does.
import assert from 'node:assert/strict'
import type { WireClient } from '../server/wire-client.js'

export type OwnedPartitions = { topicId: string; partitions: number[] }[]

export class ConsumerMember {
  epoch = 0
  owned: OwnedPartitions = []
  constructor(
    readonly client: WireClient,
    readonly groupId: string,
    readonly memberId: string,
    readonly topics: readonly string[],
  ) {}

  // biome-ignore lint/suspicious/noExplicitAny: decoded bodies are checked field by field
  async heartbeat(): Promise<any> {
    const joining = this.epoch === 0
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const { body } = await this.client.request<any>(68, 1, {
      groupId: this.groupId,
      memberId: this.memberId,
      memberEpoch: this.epoch,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: joining ? 30000 : -1,
      subscribedTopicNames: joining ? [...this.topics] : null,
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: joining ? [] : this.owned,
    })
    assert.equal(body.errorCode, 0, body.errorMessage)
    this.epoch = body.memberEpoch
    if (body.assignment !== null) this.owned = body.assignment.topicPartitions
    return body
  }

  /** Leaves the group (epoch -1). */
  async leave(): Promise<void> {
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const { body } = await this.client.request<any>(68, 1, {
      groupId: this.groupId,
      memberId: this.memberId,
      memberEpoch: -1,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: -1,
      subscribedTopicNames: null,
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: null,
    })
    assert.equal(body.errorCode, 0, body.errorMessage)
  }

  partitions(): number[] {
    return this.owned.flatMap((t) => t.partitions).sort((a, b) => a - b)
  }
}
