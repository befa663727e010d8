// DeleteRecords (key 21): serves v0–v2 (data-plane.md §8). Per partition, in request order:
//   1. DELETE on the topic, else TOPIC_AUTHORIZATION_FAILED.
//   2. An unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION.
//   3. An internal topic: INVALID_TOPIC_EXCEPTION.
//   4. The log moves its start offset: POLICY_VIOLATION on a compact-only topic; Offset -1 means
//      the high watermark; a negative offset or one above the high watermark is
//      OFFSET_OUT_OF_RANGE; one at or below the log start changes nothing. LowWatermark is the
//      log start offset after the call, -1 on error. The new start is written at once, so a restart
//      keeps it (Kafka checkpoints it only every log.flush.start.offset.checkpoint.interval.ms).
import { ErrorCode } from '../../protocol/errors.js'
import type { DeleteRecordsRequest } from '../../protocol/generated/messages/DeleteRecordsRequest.js'
import {
  createDeleteRecordsResponse,
  type DeleteRecordsResponse,
  type DeleteRecordsResponseDeleteRecordsPartitionResult,
} from '../../protocol/generated/messages/DeleteRecordsResponse.js'
import { isInternalTopic } from '../../protocol/topics.js'
import { partitionLog, TopicAuthorizations, toBigInt, toNumber } from '../data/requests.js'
import { defineHandler } from '../router.js'

type Result = DeleteRecordsResponseDeleteRecordsPartitionResult

const failed = (partitionIndex: number, errorCode: number): Result => ({
  partitionIndex,
  lowWatermark: -1n,
  errorCode,
})

function errorResponse(request: DeleteRecordsRequest, errorCode: number): DeleteRecordsResponse {
  return createDeleteRecordsResponse({
    topics: request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => failed(p.partitionIndex, errorCode)),
    })),
  })
}

export const handler = defineHandler({
  apiKey: 21,
  minVersion: 0,
  maxVersion: 2,
  async handle(request, ctx) {
    const auth = new TopicAuthorizations(ctx)
    const topics = request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p): Result | Promise<Result> => {
        // 1–3.
        if (!auth.allowed('DELETE', t.name))
          return failed(p.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        const log = partitionLog(ctx, t.name, p.partitionIndex)
        if (log === undefined)
          return failed(p.partitionIndex, ctx.server.data.missingPartitionError(t.name, p.partitionIndex))
        if (isInternalTopic(t.name)) return failed(p.partitionIndex, ErrorCode.INVALID_TOPIC_EXCEPTION)
        // 4.
        return log.deleteRecordsBefore(toNumber(p.offset)).then((r) => {
          if (r.errorCode !== ErrorCode.NONE && r.errorMessage !== null) {
            ctx.server.logger.debug({ topic: t.name, partition: p.partitionIndex }, r.errorMessage)
          }
          return {
            partitionIndex: p.partitionIndex,
            lowWatermark: toBigInt(r.lowWatermark),
            errorCode: r.errorCode,
          }
        })
      }),
    }))
    return createDeleteRecordsResponse({
      topics: await Promise.all(
        topics.map(async (t) => ({ name: t.name, partitions: await Promise.all(t.partitions) })),
      ),
    })
  },
  errorResponse(request, errorCode) {
    return errorResponse(request, errorCode)
  },
})
