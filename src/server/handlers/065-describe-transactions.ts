// DescribeTransactions (key 65): serves v0 (transactions.md §11). Per transactional id DESCRIBE on
// it, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; the coordinator's description, without the
// topics the caller may not DESCRIBE.
import { ErrorCode } from '../../protocol/errors.js'
import { createDescribeTransactionsResponse } from '../../protocol/generated/messages/DescribeTransactionsResponse.js'
import { describeTransactionError } from '../../coordinator/txn/index.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 65,
  minVersion: 0,
  maxVersion: 0,
  async handle(request, ctx) {
    const auth = ctx.server.authorizer
    const ids = request.transactionalIds
    const allowed = ids.filter((id) => auth.authorize(ctx.principal, 'DESCRIBE', 'TRANSACTIONAL_ID', id))
    const described = new Map(
      (await ctx.server.transactions.describeTransactions(allowed)).map((d, i) => [i, d]),
    )
    let next = 0
    const transactionStates = ids.map((id) => {
      if (!auth.authorize(ctx.principal, 'DESCRIBE', 'TRANSACTIONAL_ID', id))
        return describeTransactionError(id, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
      const d = described.get(next++)!
      return {
        ...d,
        topics: d.topics.filter((t) => auth.authorize(ctx.principal, 'DESCRIBE', 'TOPIC', t.topic)),
      }
    })
    return createDescribeTransactionsResponse({ transactionStates })
  },
  errorResponse(request, errorCode) {
    return createDescribeTransactionsResponse({
      transactionStates: request.transactionalIds.map((id) => describeTransactionError(id, errorCode)),
    })
  },
})
