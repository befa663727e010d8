// AddPartitionsToTxn (key 24): serves v0–v5 (transactions.md §5.1, §5.3).
//   v0–3 (a producer, transaction version 1): WRITE on the transactional id, else
//     TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition; then topics the caller may not
//     WRITE answer TOPIC_AUTHORIZATION_FAILED and unknown partitions UNKNOWN_TOPIC_OR_PARTITION, the
//     others OPERATION_NOT_ATTEMPTED; else the coordinator adds them (client version 0) and its one
//     error is every partition's, PRODUCER_FENCED becoming INVALID_PRODUCER_EPOCH below v2.
//   v4–5 (a broker verifying or adding for Produce, CLUSTER_ACTION on the cluster, else
//     CLUSTER_AUTHORIZATION_FAILED): per transaction, unknown partitions as above; `VerifyOnly`
//     asks whether each partition is in the transaction, else they are added (client version 2).
import { ErrorCode } from '../../protocol/errors.js'
import type { AddPartitionsToTxnRequestAddPartitionsToTxnTopic } from '../../protocol/generated/messages/AddPartitionsToTxnRequest.js'
import {
  type AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult,
  createAddPartitionsToTxnResponse,
} from '../../protocol/generated/messages/AddPartitionsToTxnResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { defineHandler, type RequestContext } from '../router.js'

type TopicResult = AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult

function uniform(
  topics: readonly AddPartitionsToTxnRequestAddPartitionsToTxnTopic[],
  code: number,
): TopicResult[] {
  return topics.map((t) => ({
    name: t.name,
    resultsByPartition: [...new Set(t.partitions)].map((p) => ({
      partitionIndex: p,
      partitionErrorCode: code,
    })),
  }))
}

/** Per-partition refusals before the coordinator is asked (null: every partition may be added). */
function refusals(
  topics: readonly AddPartitionsToTxnRequestAddPartitionsToTxnTopic[],
  ctx: RequestContext,
  checkWrite: boolean,
): TopicResult[] | null {
  let refused = false
  const results = topics.map((t) => {
    const mayWrite = !checkWrite || ctx.server.authorizer.authorize(ctx.principal, 'WRITE', 'TOPIC', t.name)
    return {
      name: t.name,
      resultsByPartition: [...new Set(t.partitions)].map((p) => {
        let code: number = ErrorCode.OPERATION_NOT_ATTEMPTED
        if (!mayWrite) code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        else if (ctx.server.data.partition(t.name, p) === undefined)
          code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if (code !== ErrorCode.OPERATION_NOT_ATTEMPTED) refused = true
        return { partitionIndex: p, partitionErrorCode: code }
      }),
    }
  })
  return refused ? results : null
}

function byTopic(topics: readonly AddPartitionsToTxnRequestAddPartitionsToTxnTopic[]) {
  return topics.map((t) => ({ topic: t.name, partitions: [...new Set(t.partitions)] }))
}

/** How long an add waits for the id's previous transaction to complete (Kafka's 100 ms window). */
const COMPLETION_WAIT_MS = 100

export const handler = defineHandler({
  apiKey: 24,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    const txns = ctx.server.transactions
    if (ctx.apiVersion < 4) {
      const transactionalId = request.v3AndBelowTransactionalId
      const topics = request.v3AndBelowTopics
      const answer = (results: TopicResult[]) =>
        createAddPartitionsToTxnResponse({ resultsByTopicV3AndBelow: results })
      if (!ctx.server.authorizer.authorize(ctx.principal, 'WRITE', 'TRANSACTIONAL_ID', transactionalId))
        return answer(uniform(topics, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
      const refused = refusals(topics, ctx, true)
      if (refused !== null) return answer(refused)
      // The previous transaction still writing its markers: answered once it is complete.
      let code = await txns.afterCompletion(transactionalId, COMPLETION_WAIT_MS, () =>
        txns.addPartitionsToTxn({
          transactionalId,
          producerId: request.v3AndBelowProducerId,
          producerEpoch: request.v3AndBelowProducerEpoch,
          topics: byTopic(topics),
          clientTransactionVersion: 0,
        }),
      )
      if (code === ErrorCode.PRODUCER_FENCED && ctx.apiVersion < 2) code = ErrorCode.INVALID_PRODUCER_EPOCH
      return answer(uniform(topics, code))
    }
    if (!ctx.server.authorizer.authorize(ctx.principal, 'CLUSTER_ACTION', 'CLUSTER', CLUSTER_NAME))
      return createAddPartitionsToTxnResponse({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })
    const resultsByTransaction = await Promise.all(
      request.transactions.map(async (t) => {
        const refused = refusals(t.topics, ctx, false)
        if (refused !== null) return { transactionalId: t.transactionalId, topicResults: refused }
        const input = {
          transactionalId: t.transactionalId,
          producerId: t.producerId,
          producerEpoch: t.producerEpoch,
          topics: byTopic(t.topics),
        }
        if (t.verifyOnly) {
          const v = await txns.verifyPartitionsInTxn(input)
          return {
            transactionalId: t.transactionalId,
            topicResults: v.topics.map((r) => ({
              name: r.topic,
              resultsByPartition: r.partitions.map((p) => ({
                partitionIndex: p.partitionIndex,
                partitionErrorCode: p.errorCode,
              })),
            })),
          }
        }
        const code = await txns.addPartitionsToTxn({ ...input, clientTransactionVersion: 2 })
        return { transactionalId: t.transactionalId, topicResults: uniform(t.topics, code) }
      }),
    )
    return createAddPartitionsToTxnResponse({ resultsByTransaction })
  },
  errorResponse(request, errorCode, ctx) {
    if (ctx.apiVersion < 4)
      return createAddPartitionsToTxnResponse({
        resultsByTopicV3AndBelow: uniform(request.v3AndBelowTopics, errorCode),
      })
    return createAddPartitionsToTxnResponse({ errorCode })
  },
})
