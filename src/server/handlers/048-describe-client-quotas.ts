// DescribeClientQuotas (key 48): serves v0–v1, as Kafka 4.x. Needs DESCRIBE_CONFIGS on the
// CLUSTER (else CLUSTER_AUTHORIZATION_FAILED, no entries). A filter Kafka refuses is answered with
// its error code and message and null entries; otherwise the matching entities with their quotas
// (src/server/quotas/client-quotas.ts, Kafka's ClientQuotasImage.describe).
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import { createDescribeClientQuotasResponse } from '../../protocol/generated/messages/DescribeClientQuotasResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { ApiError } from '../../protocol/api-error.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 48,
  minVersion: 0,
  maxVersion: 1,
  handle(request, ctx) {
    // 1. Cluster DESCRIBE_CONFIGS.
    if (!ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE_CONFIGS', 'CLUSTER', CLUSTER_NAME)) {
      return createDescribeClientQuotasResponse({
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage: errorInfo(ErrorCode.CLUSTER_AUTHORIZATION_FAILED).message,
        entries: null,
      })
    }
    // 2. The filter, then the matching entities.
    try {
      const entries = ctx.server.quotas.describe(request.components, request.strict)
      return createDescribeClientQuotasResponse({ entries })
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      return createDescribeClientQuotasResponse({
        errorCode: err.errorCode,
        errorMessage: err.errorMessage,
        entries: null,
      })
    }
  },
  errorResponse(_request, errorCode) {
    return createDescribeClientQuotasResponse({ errorCode, entries: null })
  },
})
