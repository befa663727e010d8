// InitProducerId (key 22): serves v0–v5 (v6, two-phase commit, is unstable in Kafka and not
// advertised). Without a transactional id this is the idempotent producer's request
// (data-plane.md §5.1), answered here; with one it belongs to a transaction coordinator:
//   1. TransactionalId set: WRITE on it, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then the
//      transaction coordinator answers (docs/transactions.md; v0–2 carry no producer id and epoch,
//      so -1, -1), PRODUCER_FENCED becoming INVALID_PRODUCER_EPOCH below v4.
//   2. No TransactionalId: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic, else
//      CLUSTER_AUTHORIZATION_FAILED.
//   3. v3+: ProducerId and ProducerEpoch are both -1 or both set; exactly one -1 is INVALID_REQUEST.
//   4. A new producer id, never handed out before (across restarts too), with epoch 0; the
//      TransactionTimeoutMs and the given id and epoch are not used for an idempotent producer.
import { ErrorCode } from '../../protocol/errors.js'
import {
  createInitProducerIdResponse,
  type InitProducerIdResponse,
} from '../../protocol/generated/messages/InitProducerIdResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { toBigInt } from '../data/requests.js'
import { defineHandler, type RequestContext } from '../router.js'

function failed(errorCode: number): InitProducerIdResponse {
  return createInitProducerIdResponse({ errorCode, producerId: -1n, producerEpoch: -1 })
}

/** Step 2: IDEMPOTENT_WRITE on the cluster, or WRITE on any topic (Kafka's authorizeByResourceType). */
function mayWriteIdempotently(ctx: RequestContext): boolean {
  const auth = ctx.server.authorizer
  if (auth.authorize(ctx.principal, 'IDEMPOTENT_WRITE', 'CLUSTER', CLUSTER_NAME)) return true
  return ctx.server.topics.list().some((t) => auth.authorize(ctx.principal, 'WRITE', 'TOPIC', t.name))
}

export const handler = defineHandler({
  apiKey: 22,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    // 1.
    const transactionalId = request.transactionalId
    if (transactionalId !== null) {
      if (!ctx.server.authorizer.authorize(ctx.principal, 'WRITE', 'TRANSACTIONAL_ID', transactionalId))
        return failed(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
      const v3 = ctx.apiVersion >= 3
      const r = await ctx.server.transactions.initProducerId({
        transactionalId,
        transactionTimeoutMs: request.transactionTimeoutMs,
        producerId: v3 ? request.producerId : -1n,
        producerEpoch: v3 ? request.producerEpoch : -1,
      })
      const errorCode =
        r.errorCode === ErrorCode.PRODUCER_FENCED && ctx.apiVersion < 4
          ? ErrorCode.INVALID_PRODUCER_EPOCH
          : r.errorCode
      return createInitProducerIdResponse({
        errorCode,
        producerId: r.producerId,
        producerEpoch: r.producerEpoch,
      })
    }
    // 2.
    if (!mayWriteIdempotently(ctx)) return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    // 3.
    if (ctx.apiVersion >= 3 && (request.producerId === -1n) !== (request.producerEpoch === -1))
      return failed(ErrorCode.INVALID_REQUEST)
    // 4.
    const producerId = await ctx.server.data.producerIds.next()
    return createInitProducerIdResponse({
      errorCode: ErrorCode.NONE,
      producerId: toBigInt(producerId),
      producerEpoch: 0,
    })
  },
  errorResponse(_request, errorCode) {
    return failed(errorCode)
  },
})
