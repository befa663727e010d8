/**
 * Metadata for named topics, as Kafka's admin client asks for it: never creating a topic
 * (AllowAutoTopicCreation false, so v4 at least when the broker has it), the brokers of the
 * answer included so that partition leaders can be reached.
 */
import type { MetadataResponse } from '../../protocol/generated/messages/MetadataResponse.js'
import type { BrokerNode, NetworkClient } from '../network/client.js'

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'

export interface TopicsMetadata {
  readonly response: MetadataResponse
  readonly brokers: ReadonlyMap<number, BrokerNode>
}

/**
 * One Metadata request for `topics` to any broker (v12 at most: names, no topic ids needed). The
 * answer may hold other topics too (before v4); callers pick theirs by name.
 */
export async function topicsMetadata(
  client: NetworkClient,
  topics: readonly string[],
): Promise<TopicsMetadata> {
  const conn = await client.anyConnection()
  const version = conn.negotiateVersion(3, 12)
  // Before v4 a request cannot forbid topic creation; Kafka's admin then asks for every topic.
  const response = await conn.send(
    3,
    {
      topics:
        version < 4 ? (version === 0 ? [] : null) : topics.map((name) => ({ topicId: ZERO_UUID, name })),
      allowAutoTopicCreation: version < 4,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    },
    { version },
  )
  const brokers = new Map<number, BrokerNode>(
    response.brokers.map((b) => [b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port }]),
  )
  return { response, brokers }
}
