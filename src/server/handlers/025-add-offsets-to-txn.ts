// AddOffsetsToTxn (key 25): serves v0–v4 (transactions.md §6.1). WRITE on the transactional id,
// else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the group, else GROUP_AUTHORIZATION_FAILED;
// then the coordinator adds the group's `__consumer_offsets` partition to the transaction.
// PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH below v2.
import { ErrorCode } from '../../protocol/errors.js'
import { createAddOffsetsToTxnResponse } from '../../protocol/generated/messages/AddOffsetsToTxnResponse.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 25,
  minVersion: 0,
  maxVersion: 4,
  async handle(request, ctx) {
    const auth = ctx.server.authorizer
    if (!auth.authorize(ctx.principal, 'WRITE', 'TRANSACTIONAL_ID', request.transactionalId))
      return createAddOffsetsToTxnResponse({ errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED })
    if (!auth.authorize(ctx.principal, 'READ', 'GROUP', request.groupId))
      return createAddOffsetsToTxnResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })
    const txns = ctx.server.transactions
    // The previous transaction still writing its markers: answered once it is complete (up to
    // Kafka's 100 ms window).
    let errorCode = await txns.afterCompletion(request.transactionalId, 100, () =>
      txns.addOffsetsToTxn({
        transactionalId: request.transactionalId,
        producerId: request.producerId,
        producerEpoch: request.producerEpoch,
        groupId: request.groupId,
      }),
    )
    if (errorCode === ErrorCode.PRODUCER_FENCED && ctx.apiVersion < 2)
      errorCode = ErrorCode.INVALID_PRODUCER_EPOCH
    return createAddOffsetsToTxnResponse({ errorCode })
  },
  errorResponse(_request, errorCode) {
    return createAddOffsetsToTxnResponse({ errorCode })
  },
})
