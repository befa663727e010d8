// DescribeTopicPartitions (key 75, KIP-966): serves v0, as Kafka's DescribeTopicPartitionsRequestHandler
// and its metadata cache's describeTopicResponse answer it. Kafka's tools describe topics with it
// (kafka-topics --describe) and fall back to Metadata only when a broker lacks it.
//   1. The topics: the requested names (duplicates once), or every topic when none is named, each
//      kept only when it sorts at or after the cursor's topic. A cursor whose topic is not among the
//      named ones, or whose partition is negative, is INVALID_REQUEST for the whole request.
//   2. Authorization: DESCRIBE on each topic. When every topic was asked for, the others are left
//      out; when named, each is answered TOPIC_AUTHORIZATION_FAILED (zero id, no partitions) after
//      the rest, without telling whether it exists.
//   3. The authorized topics in name order, each from the cursor's partition (its own topic) or 0,
//      until min(ResponsePartitionLimit, max.request.partition.size.limit) (at least 1) partitions
//      are in the answer: a topic cut short, or the next topic once the limit is reached, becomes
//      NextCursor. A named topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION (or
//      INVALID_TOPIC_EXCEPTION for a name no topic may have), left out when every topic was asked.
//   4. Each partition as Metadata has it on one node: this node leads it at epoch 0, is its only
//      replica and in sync, nothing offline; no eligible leader replicas beyond the ISR (empty
//      lists, as a KRaft controller leaves them). Each described topic carries the operations the
//      caller may perform on it.
import { invalidRequest } from '../../protocol/api-error.js'
import { ErrorCode } from '../../protocol/errors.js'
import {
  createDescribeTopicPartitionsResponse,
  type DescribeTopicPartitionsResponse,
  type DescribeTopicPartitionsResponseDescribeTopicPartitionsResponseTopic,
} from '../../protocol/generated/messages/DescribeTopicPartitionsResponse.js'
import { invalidTopicNameReason, isInternalTopic } from '../../protocol/topics.js'
import { topicAuthorizedOperations } from '../operations.js'
import { defineHandler } from '../router.js'
import { ZERO_UUID } from '../topics/catalog.js'

type Topic = DescribeTopicPartitionsResponseDescribeTopicPartitionsResponseTopic

const NO_OPERATIONS = -2147483648
/** Shared by every partition of every answer; never changed. */
const NO_NODES: number[] = []

function errorTopic(errorCode: number, name: string, topicId = ZERO_UUID): Topic {
  return {
    errorCode,
    name,
    topicId,
    isInternal: errorCode === ErrorCode.TOPIC_AUTHORIZATION_FAILED ? false : isInternalTopic(name),
    partitions: [],
    topicAuthorizedOperations: NO_OPERATIONS,
  }
}

export const handler = defineHandler({
  apiKey: 75,
  minVersion: 0,
  maxVersion: 0,
  handle(request, ctx) {
    const server = ctx.server
    const cursor = request.cursor
    const cursorTopic = cursor?.topicName ?? ''
    const fetchAll = request.topics.length === 0
    // 1.
    const names = new Set<string>()
    for (const name of fetchAll
      ? server.topics.sorted().map((t) => t.name)
      : request.topics.map((t) => t.name)) {
      if (name >= cursorTopic) names.add(name)
    }
    if (!fetchAll && cursor !== null && !names.has(cursor.topicName)) {
      throw invalidRequest(
        `DescribeTopicPartitionsRequest topic list should contain the cursor topic: ${cursor.topicName}`,
      )
    }
    if (cursor !== null && cursor.partitionIndex < 0) {
      throw invalidRequest(
        `DescribeTopicPartitionsRequest cursor partition must be valid: Cursor(topicName=${cursor.topicName}, partitionIndex=${cursor.partitionIndex})`,
      )
    }
    // 2.
    const authorized: string[] = []
    const refused: Topic[] = []
    for (const name of names) {
      if (server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'TOPIC', name)) authorized.push(name)
      else if (!fetchAll) refused.push(errorTopic(ErrorCode.TOPIC_AUTHORIZATION_FAILED, name))
    }
    authorized.sort()
    refused.sort((a, b) => ((a.name ?? '') < (b.name ?? '') ? -1 : 1))
    // 3.
    const limit = Math.max(
      Math.min(server.config.maxRequestPartitionSizeLimit, request.responsePartitionLimit),
      1,
    )
    const leader = server.advertisedNode(ctx.listenerName).nodeId
    const replicas = [leader]
    const topics: Topic[] = []
    let nextCursor: DescribeTopicPartitionsResponse['nextCursor'] = null
    let remaining = limit
    for (const name of authorized) {
      if (remaining === 0) {
        nextCursor = { topicName: name, partitionIndex: 0 }
        break
      }
      const t = server.topics.byName(name)
      if (t === undefined) {
        if (!fetchAll) {
          const code =
            invalidTopicNameReason(name) === null
              ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
              : ErrorCode.INVALID_TOPIC_EXCEPTION
          topics.push(errorTopic(code, name))
        }
        continue
      }
      const start = name === cursorTopic && cursor !== null ? cursor.partitionIndex : 0
      const end = Math.min(t.numPartitions, start + remaining)
      const partitions: Topic['partitions'] = []
      // 4.
      for (let i = start; i < end; i++) {
        partitions.push({
          errorCode: ErrorCode.NONE,
          partitionIndex: i,
          leaderId: leader,
          leaderEpoch: 0,
          replicaNodes: replicas,
          isrNodes: replicas,
          eligibleLeaderReplicas: NO_NODES,
          lastKnownElr: NO_NODES,
          offlineReplicas: NO_NODES,
        })
      }
      topics.push({
        errorCode: ErrorCode.NONE,
        name,
        topicId: t.topicId,
        isInternal: isInternalTopic(name),
        partitions,
        topicAuthorizedOperations: topicAuthorizedOperations(ctx, name),
      })
      if (end < t.numPartitions) {
        nextCursor = { topicName: name, partitionIndex: end }
        break
      }
      remaining -= partitions.length
    }
    topics.push(...refused)
    return createDescribeTopicPartitionsResponse({ topics, nextCursor })
  },
  // Kafka's DescribeTopicPartitionsRequest.getErrorResponse: every named topic with the error.
  errorResponse(request, errorCode) {
    return createDescribeTopicPartitionsResponse({
      topics: request.topics.map((t) => ({ ...errorTopic(errorCode, t.name), isInternal: false })),
    })
  },
})
