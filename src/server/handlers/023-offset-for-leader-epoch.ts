// OffsetForLeaderEpoch (key 23): serves v2–v4 (data-plane.md §9). One node leads every partition at
// leader epoch 0 for the partition's whole life, so the epoch cache holds one entry: epoch 0 from
// the log start offset. Per partition, in request order:
//   1. CLUSTER_ACTION on the cluster covers every topic; otherwise DESCRIBE on the topic, else
//      TOPIC_AUTHORIZATION_FAILED.
//   2. An unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION.
//   3. CurrentLeaderEpoch other than -1: older than the partition's epoch FENCED_LEADER_EPOCH,
//      newer UNKNOWN_LEADER_EPOCH.
//   4. LeaderEpoch 0: epoch 0 ends at the log end offset (also on an empty log and after a
//      restart, so a consumer never mistakes it for a truncation); any other epoch: -1 / -1.
import { ErrorCode } from '../../protocol/errors.js'
import type { OffsetForLeaderEpochRequest } from '../../protocol/generated/messages/OffsetForLeaderEpochRequest.js'
import {
  createOffsetForLeaderEpochResponse,
  type OffsetForLeaderEpochResponse,
  type OffsetForLeaderEpochResponseEpochEndOffset,
} from '../../protocol/generated/messages/OffsetForLeaderEpochResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { partitionLog, TopicAuthorizations, toBigInt } from '../data/requests.js'
import { defineHandler } from '../router.js'

type Result = OffsetForLeaderEpochResponseEpochEndOffset

const failed = (partition: number, errorCode: number): Result => ({
  errorCode,
  partition,
  leaderEpoch: -1,
  endOffset: -1n,
})

function errorResponse(
  request: OffsetForLeaderEpochRequest,
  errorCode: number,
): OffsetForLeaderEpochResponse {
  return createOffsetForLeaderEpochResponse({
    topics: request.topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => failed(p.partition, errorCode)),
    })),
  })
}

export const handler = defineHandler({
  apiKey: 23,
  minVersion: 2,
  maxVersion: 4,
  handle(request, ctx) {
    const clusterAction = ctx.server.authorizer.authorize(
      ctx.principal,
      'CLUSTER_ACTION',
      'CLUSTER',
      CLUSTER_NAME,
    )
    const auth = new TopicAuthorizations(ctx)
    return createOffsetForLeaderEpochResponse({
      topics: request.topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p): Result => {
          // 1–2.
          if (!clusterAction && !auth.allowed('DESCRIBE', t.topic))
            return failed(p.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
          const log = partitionLog(ctx, t.topic, p.partition)
          if (log === undefined)
            return failed(p.partition, ctx.server.data.missingPartitionError(t.topic, p.partition))
          // 3.
          if (p.currentLeaderEpoch !== -1 && p.currentLeaderEpoch !== log.leaderEpoch) {
            return failed(
              p.partition,
              p.currentLeaderEpoch < log.leaderEpoch
                ? ErrorCode.FENCED_LEADER_EPOCH
                : ErrorCode.UNKNOWN_LEADER_EPOCH,
            )
          }
          // 4.
          const r = log.endOffsetForLeaderEpoch(p.leaderEpoch)
          return {
            errorCode: r.errorCode,
            partition: p.partition,
            leaderEpoch: r.leaderEpoch,
            endOffset: toBigInt(r.endOffset),
          }
        }),
      })),
    })
  },
  errorResponse(request, errorCode) {
    return errorResponse(request, errorCode)
  },
})
