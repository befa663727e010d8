// OffsetCommit (key 8): serves v2–v10 (v10 names topics by id). Topics are checked here against the
// catalog (UNKNOWN_TOPIC_ID / UNKNOWN_TOPIC_OR_PARTITION per partition, as Kafka's KafkaApis does);
// the partitions that pass go to the group coordinator, which checks the group and writes the
// OffsetCommit records.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import type { OffsetCommitPartitionInput } from '../../coordinator/shard/offsets/offset-metadata-manager.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { OffsetCommitRequest } from '../../protocol/generated/messages/OffsetCommitRequest.js'
import {
  createOffsetCommitResponse,
  type OffsetCommitResponse,
} from '../../protocol/generated/messages/OffsetCommitResponse.js'
import { defineHandler } from '../router.js'

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'

function everyPartition(request: OffsetCommitRequest, errorCode: number): OffsetCommitResponse {
  return createOffsetCommitResponse({
    topics: request.topics.map((t) => ({
      name: t.name,
      topicId: t.topicId,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
    })),
  })
}

export const handler = defineHandler({
  apiKey: 8,
  minVersion: 2,
  maxVersion: 10,
  async handle(request, ctx) {
    const { server } = ctx
    // 1. The group: READ on it.
    if (!server.authorizer.authorize(ctx.principal, 'READ', 'GROUP', request.groupId)) {
      return everyPartition(request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    }
    // 2. Topics, in Kafka's order: an unknown id (v10) is UNKNOWN_TOPIC_ID; then READ on the topic
    // name (whether or not the topic exists: TOPIC_AUTHORIZATION_FAILED); then an unknown name or
    // partition is UNKNOWN_TOPIC_OR_PARTITION.
    const useTopicIds = ctx.apiVersion >= 10
    const errors: (number | null)[][] = []
    const valid: { name: string; topicId: string; partitions: OffsetCommitPartitionInput[] }[] = []
    for (const t of request.topics) {
      const info = useTopicIds ? server.topics.byId(t.topicId) : server.topics.byName(t.name)
      const name = useTopicIds ? info?.name : t.name
      const mayRead = name !== undefined && server.authorizer.authorize(ctx.principal, 'READ', 'TOPIC', name)
      const topicErrors: (number | null)[] = []
      const accepted: OffsetCommitPartitionInput[] = []
      for (const p of t.partitions) {
        let error: number | null = null
        if (name === undefined) {
          error = ErrorCode.UNKNOWN_TOPIC_ID
        } else if (!mayRead) {
          error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        } else if (info === undefined) {
          error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        } else if (p.partitionIndex < 0 || p.partitionIndex >= info.numPartitions) {
          error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        } else {
          accepted.push(p)
        }
        topicErrors.push(error)
      }
      errors.push(topicErrors)
      if (info !== undefined && accepted.length > 0) {
        valid.push({ name: info.name, topicId: useTopicIds ? info.topicId : ZERO_UUID, partitions: accepted })
      }
    }
    // 3. The coordinator answers the partitions that passed, in the order they were sent.
    const answered =
      valid.length === 0
        ? []
        : await coordinatorFrom(server.coordinator).commitOffsets(ctx.apiVersion, {
            groupId: request.groupId,
            generationIdOrMemberEpoch: request.generationIdOrMemberEpoch,
            memberId: request.memberId,
            groupInstanceId: request.groupInstanceId,
            retentionTimeMs: request.retentionTimeMs,
            topics: valid,
          })
    const queue = answered.flatMap((t) => t.partitions.map((p) => p.errorCode))
    let next = 0
    return createOffsetCommitResponse({
      topics: request.topics.map((t, ti) => ({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p, pi) => ({
          partitionIndex: p.partitionIndex,
          errorCode: errors[ti][pi] ?? queue[next++],
        })),
      })),
    })
  },
  errorResponse(request, errorCode) {
    return everyPartition(request, errorCode)
  },
})
