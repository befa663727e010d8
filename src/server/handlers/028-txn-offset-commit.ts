// TxnOffsetCommit (key 28): serves v0–v6 (transactions.md §6.2; v6 names topics by id). In
// Kafka's order (KafkaApis `handleTxnOffsetCommitRequest`, GroupCoordinatorService
// `commitTransactionalOffsets`):
//   1. WRITE on the transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition.
//   2. READ on the group, else GROUP_AUTHORIZATION_FAILED for every partition.
//   3. Per topic: v6 an id no topic has: UNKNOWN_TOPIC_ID; no READ on the topic:
//      TOPIC_AUTHORIZATION_FAILED; an unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION.
//      Below v6 the topic id is taken from the catalog and kept with the offset.
//   4. An empty group id: INVALID_GROUP_ID for every partition that passed 3.
//   5. The transaction: v5+ (transaction version 2) adds the group's `__consumer_offsets` partition
//      to it, earlier versions verify that AddOffsetsToTxn added it. The answer becomes every
//      partition's error (PRODUCER_FENCED → INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE →
//      INVALID_TXN_STATE below v4, UNKNOWN_TOPIC_OR_PARTITION / NOT_ENOUGH_REPLICAS /
//      REQUEST_TIMED_OUT → COORDINATOR_NOT_AVAILABLE, as Kafka's AddPartitionsToTxnManager and
//      CoordinatorOperationExceptionHelper translate them).
//   6. The group coordinator checks the group (member, generation, instance id) and writes the
//      offsets as pending (`txn-commit-offset`); they become committed with the transaction's COMMIT
//      marker.
//   7. The transaction is checked again (verify only): if it ended between 5 and 6 (the coordinator
//      aborted it at its timeout, or a new producer fenced it), its marker may already have passed
//      the offsets partition, and nothing would settle the offsets just written; they are dropped
//      and every partition answers the check's error. Kafka closes the same gap with the
//      verification guard of the `__consumer_offsets` log. (A Prepare state is left alone: its
//      markers are still to come.)
// Below v2 COORDINATOR_LOAD_IN_PROGRESS is answered as COORDINATOR_NOT_AVAILABLE.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { TxnOffsetCommitRequest } from '../../protocol/generated/messages/TxnOffsetCommitRequest.js'
import {
  createTxnOffsetCommitResponse,
  type TxnOffsetCommitResponse,
} from '../../protocol/generated/messages/TxnOffsetCommitResponse.js'
import { GROUP_METADATA_TOPIC_NAME } from '../../protocol/topics.js'
import { checkCommitTopics } from '../data/commit-topics.js'
import { defineHandler, type RequestContext } from '../router.js'

function everyPartition(request: TxnOffsetCommitRequest, errorCode: number): TxnOffsetCommitResponse {
  return createTxnOffsetCommitResponse({
    topics: request.topics.map((t) => ({
      name: t.name,
      topicId: t.topicId,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
    })),
  })
}

/**
 * Step 5 (and 7 with `verifyOnly`): NONE when the group's offsets partition is in the producer's
 * transaction, else the error.
 */
async function checkTransaction(
  ctx: RequestContext,
  request: TxnOffsetCommitRequest,
  verifyOnly = false,
): Promise<number> {
  const service = ctx.server.transactions
  const input = {
    transactionalId: request.transactionalId,
    producerId: request.producerId,
    producerEpoch: request.producerEpoch,
    topics: [
      {
        topic: GROUP_METADATA_TOPIC_NAME,
        partitions: [coordinatorFrom(ctx.server.coordinator).shardFor(request.groupId)],
      },
    ],
  }
  // A TV2 add that meets the id's previous transaction still writing its markers runs again once
  // it is complete (within 100 ms), as a transactional Produce does.
  const code =
    ctx.apiVersion >= 5 && !verifyOnly
      ? await service.afterCompletion(request.transactionalId, 100, () =>
          service.addPartitionsToTxn({ ...input, clientTransactionVersion: 2 }),
        )
      : ((await service.verifyPartitionsInTxn(input)).topics[0]?.partitions[0]?.errorCode ??
        ErrorCode.UNKNOWN_SERVER_ERROR)
  switch (code) {
    case ErrorCode.PRODUCER_FENCED:
      return ErrorCode.INVALID_PRODUCER_EPOCH
    case ErrorCode.TRANSACTION_ABORTABLE:
      return ctx.apiVersion >= 4 ? code : ErrorCode.INVALID_TXN_STATE
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE
    default:
      return code
  }
}

export const handler = defineHandler({
  apiKey: 28,
  minVersion: 0,
  maxVersion: 6,
  async handle(request, ctx) {
    const { server } = ctx
    const reply = (response: TxnOffsetCommitResponse): TxnOffsetCommitResponse => {
      if (ctx.apiVersion >= 2) return response
      for (const t of response.topics) {
        for (const p of t.partitions) {
          if (p.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            p.errorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE
        }
      }
      return response
    }
    // 1–2. The transactional id, then the group.
    if (!server.authorizer.authorize(ctx.principal, 'WRITE', 'TRANSACTIONAL_ID', request.transactionalId)) {
      return everyPartition(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    }
    if (!server.authorizer.authorize(ctx.principal, 'READ', 'GROUP', request.groupId)) {
      return everyPartition(request, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    }
    // 3. Topics (`checkCommitTopics`); the catalog's topic id is kept with the offsets.
    const { errors, valid } = checkCommitTopics(ctx, request.topics, ctx.apiVersion >= 6, (id) => id)
    const answer = (codeOf: () => number) =>
      reply(
        createTxnOffsetCommitResponse({
          topics: request.topics.map((t, ti) => ({
            name: t.name,
            topicId: t.topicId,
            partitions: t.partitions.map((p, pi) => ({
              partitionIndex: p.partitionIndex,
              errorCode: errors[ti][pi] ?? codeOf(),
            })),
          })),
        }),
      )
    if (valid.length === 0) return answer(() => ErrorCode.NONE)
    // 4. The group id.
    if (request.groupId === '') return answer(() => ErrorCode.INVALID_GROUP_ID)
    // 5. The transaction.
    const txnError = await checkTransaction(ctx, request)
    if (txnError !== ErrorCode.NONE) return answer(() => txnError)
    // 6. The group coordinator answers the partitions that passed, in the order they were sent.
    const answered = await coordinatorFrom(server.coordinator).commitTransactionalOffsets(ctx.apiVersion, {
      transactionalId: request.transactionalId,
      groupId: request.groupId,
      producerId: request.producerId,
      producerEpoch: request.producerEpoch,
      generationIdOrMemberEpoch: request.generationIdOrMemberEpoch,
      memberId: request.memberId,
      groupInstanceId: request.groupInstanceId,
      topics: valid,
    })
    const queue = answered.flatMap((t) => t.partitions.map((p) => p.errorCode))
    // 7. The transaction again, when offsets were written.
    if (queue.includes(ErrorCode.NONE)) {
      const after = await checkTransaction(ctx, request, true)
      if (after !== ErrorCode.NONE && after !== ErrorCode.CONCURRENT_TRANSACTIONS) {
        await coordinatorFrom(server.coordinator)
          .dropPendingOffsets(request.groupId, request.producerId, request.producerEpoch)
          .catch(() => undefined)
        return answer(() => after)
      }
    }
    let next = 0
    return answer(() => queue[next++] ?? ErrorCode.UNKNOWN_SERVER_ERROR)
  },
  errorResponse(request, errorCode) {
    return everyPartition(request, errorCode)
  },
})
