// EndTxn (key 26): serves v0–v5 (transactions.md §7). WRITE on the transactional id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then the coordinator decides the outcome and answers once
// its Prepare record is stored (the markers follow). v5 is transaction version 2: the epoch is
// bumped and the answer carries the producer id and epoch to use next. PRODUCER_FENCED becomes
// INVALID_PRODUCER_EPOCH below v2.
import { ErrorCode } from '../../protocol/errors.js'
import { createEndTxnResponse } from '../../protocol/generated/messages/EndTxnResponse.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 26,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    if (!ctx.server.authorizer.authorize(ctx.principal, 'WRITE', 'TRANSACTIONAL_ID', request.transactionalId))
      return createEndTxnResponse({
        errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        producerId: -1n,
        producerEpoch: -1,
      })
    const r = await ctx.server.transactions.endTxn({
      transactionalId: request.transactionalId,
      producerId: request.producerId,
      producerEpoch: request.producerEpoch,
      committed: request.committed,
      clientTransactionVersion: ctx.apiVersion >= 5 ? 2 : 0,
    })
    const errorCode =
      r.errorCode === ErrorCode.PRODUCER_FENCED && ctx.apiVersion < 2
        ? ErrorCode.INVALID_PRODUCER_EPOCH
        : r.errorCode
    return createEndTxnResponse({ errorCode, producerId: r.producerId, producerEpoch: r.producerEpoch })
  },
  errorResponse(_request, errorCode) {
    return createEndTxnResponse({ errorCode, producerId: -1n, producerEpoch: -1 })
  },
})
