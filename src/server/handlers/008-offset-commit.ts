// OffsetCommit (key 8): serves v2–v10 (v10 names topics by id). Topics are checked here against the
// catalog (UNKNOWN_TOPIC_ID / UNKNOWN_TOPIC_OR_PARTITION per partition, as Kafka's KafkaApis does);
// the partitions that pass go to the group coordinator, which checks the group and writes the
// OffsetCommit records.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { OffsetCommitRequest } from '../../protocol/generated/messages/OffsetCommitRequest.js'
import {
  createOffsetCommitResponse,
  type OffsetCommitResponse,
} from '../../protocol/generated/messages/OffsetCommitResponse.js'
import { type CheckedCommitTopics, checkCommitTopics } from '../data/commit-topics.js'
import { defineHandler } from '../router.js'

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'
/** The topic id kept with a commit's offsets: the topic's from v10, none below. */
const catalogTopicId = (id: string): string => id
const noTopicId = (): string => ZERO_UUID

function everyPartition(request: OffsetCommitRequest, errorCode: number): OffsetCommitResponse {
  return createOffsetCommitResponse({
    topics: request.topics.map((t) => ({
      name: t.name,
      topicId: t.topicId,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
    })),
  })
}

/** The answer once the coordinator answered the partitions that passed (`answered`, in order). */
function answerOf(
  request: OffsetCommitRequest,
  { errors, allValid }: CheckedCommitTopics,
  answered: readonly OffsetCommitResponse['topics'][number][],
): OffsetCommitResponse {
  if (allValid && answered.length === request.topics.length) {
    // Every partition went to the coordinator, which answers them in request order: its
    // partitions are the answer, under the topics as the request named them (one loop, the
    // answer's own object: a Kafka Streams commit is answered this way nearly always).
    const topics: OffsetCommitResponse['topics'] = new Array(request.topics.length)
    for (let ti = 0; ti < topics.length; ti++) {
      const t = request.topics[ti]
      topics[ti] = { name: t.name, topicId: t.topicId, partitions: answered[ti].partitions }
    }
    return { throttleTimeMs: 0, topics }
  }
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
}

export const handler = defineHandler({
  apiKey: 8,
  minVersion: 2,
  maxVersion: 10,
  // Not an async function: its frame was about a tenth of what a one-group commit allocated. What
  // throws here fails the request as a rejection would.
  handle(request, ctx) {
    const { server } = ctx
    // 1. The group: READ on it.
    if (!server.authorizer.authorize(ctx.principal, 'READ', 'GROUP', request.groupId)) {
      return everyPartition(request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    }
    // 2. Topics, in Kafka's order (`checkCommitTopics`); below v10 no topic id is kept.
    const useTopicIds = ctx.apiVersion >= 10
    const checked = checkCommitTopics(
      ctx,
      request.topics,
      useTopicIds,
      useTopicIds ? catalogTopicId : noTopicId,
    )
    // 3. The coordinator answers the partitions that passed, in the order they were sent.
    if (checked.valid.length === 0) return answerOf(request, checked, [])
    return coordinatorFrom(server.coordinator)
      .commitOffsets(ctx.apiVersion, {
        groupId: request.groupId,
        generationIdOrMemberEpoch: request.generationIdOrMemberEpoch,
        memberId: request.memberId,
        groupInstanceId: request.groupInstanceId,
        retentionTimeMs: request.retentionTimeMs,
        topics: checked.valid,
      })
      .then((answered) => answerOf(request, checked, answered))
  },
  errorResponse(request, errorCode) {
    return everyPartition(request, errorCode)
  },
})
