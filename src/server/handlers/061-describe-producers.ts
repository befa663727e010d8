// DescribeProducers (key 61): serves v0 (data-plane.md §10.2; kafka-transactions.sh find-hanging
// and abort use it). Per topic, then per partition asked, in request order:
//   1. An invalid topic name: INVALID_TOPIC_EXCEPTION with the reason.
//   2. No READ on the topic: TOPIC_AUTHORIZATION_FAILED; an unknown topic:
//      UNKNOWN_TOPIC_OR_PARTITION; both with Kafka's default message, for every partition asked.
//   3. An unknown partition: UNKNOWN_TOPIC_OR_PARTITION (no message); an offline one
//      KAFKA_STORAGE_ERROR.
//   4. The producers with state on the partition: id, epoch, last sequence (-1 when no batch is
//      cached), last timestamp, coordinator epoch (-1 until a marker was seen) and the first offset
//      of its open transaction (-1 when none).
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import {
  createDescribeProducersResponse,
  type DescribeProducersResponsePartitionResponse,
} from '../../protocol/generated/messages/DescribeProducersResponse.js'
import { invalidTopicNameReason } from '../../protocol/topics.js'
import { partitionLog, TopicAuthorizations, toBigInt } from '../data/requests.js'
import { defineHandler } from '../router.js'

type Result = DescribeProducersResponsePartitionResponse

const failed = (partitionIndex: number, errorCode: number, errorMessage: string | null): Result => ({
  partitionIndex,
  errorCode,
  errorMessage,
  activeProducers: [],
})

export const handler = defineHandler({
  apiKey: 61,
  minVersion: 0,
  maxVersion: 0,
  handle(request, ctx) {
    const auth = new TopicAuthorizations(ctx)
    return createDescribeProducersResponse({
      topics: request.topics.map((t) => {
        // 1–2.
        const reason = invalidTopicNameReason(t.name)
        let topicError: { code: number; message: string | null } | null = null
        if (reason !== null)
          topicError = {
            code: ErrorCode.INVALID_TOPIC_EXCEPTION,
            message: `Topic name is invalid: ${reason}`,
          }
        else if (!auth.allowed('READ', t.name))
          topicError = { code: ErrorCode.TOPIC_AUTHORIZATION_FAILED, message: null }
        else if (ctx.server.topics.byName(t.name) === undefined)
          topicError = { code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: null }
        return {
          name: t.name,
          partitions: t.partitionIndexes.map((index): Result => {
            if (topicError !== null)
              return failed(index, topicError.code, topicError.message ?? errorInfo(topicError.code).message)
            // 3.
            const log = partitionLog(ctx, t.name, index)
            if (log === undefined)
              return failed(index, ctx.server.data.missingPartitionError(t.name, index), null)
            if (!log.online) return failed(index, ErrorCode.KAFKA_STORAGE_ERROR, null)
            // 4.
            return {
              partitionIndex: index,
              errorCode: ErrorCode.NONE,
              errorMessage: null,
              activeProducers: log.producerStates().map((s) => ({
                producerId: toBigInt(s.producerId),
                producerEpoch: s.producerEpoch,
                lastSequence: s.lastSequence,
                lastTimestamp: toBigInt(s.lastTimestamp),
                coordinatorEpoch: s.coordinatorEpoch,
                currentTxnStartOffset: toBigInt(s.currentTxnStartOffset),
              })),
            }
          }),
        }
      }),
    })
  },
  errorResponse(request, errorCode) {
    return createDescribeProducersResponse({
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((i) => failed(i, errorCode, null)),
      })),
    })
  },
})
