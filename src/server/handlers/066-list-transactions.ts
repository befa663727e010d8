// ListTransactions (key 66): serves v0–v2 (transactions.md §11). Every shard's transactions that
// pass the filters (DurationFilter v1+, TransactionalIdPattern v2+), without the ids the caller may
// not DESCRIBE.
import { createListTransactionsResponse } from '../../protocol/generated/messages/ListTransactionsResponse.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 66,
  minVersion: 0,
  maxVersion: 2,
  async handle(request, ctx) {
    const r = await ctx.server.transactions.listTransactions({
      stateFilters: request.stateFilters,
      producerIdFilters: request.producerIdFilters,
      durationFilter: ctx.apiVersion >= 1 ? request.durationFilter : -1n,
      transactionalIdPattern: ctx.apiVersion >= 2 ? request.transactionalIdPattern : null,
    })
    const auth = ctx.server.authorizer
    return createListTransactionsResponse({
      errorCode: r.errorCode,
      unknownStateFilters: r.unknownStateFilters,
      transactionStates: r.transactionStates.filter((t) =>
        auth.authorize(ctx.principal, 'DESCRIBE', 'TRANSACTIONAL_ID', t.transactionalId),
      ),
    })
  },
  errorResponse(_request, errorCode) {
    return createListTransactionsResponse({ errorCode })
  },
})
