// AlterClientQuotas (key 49): serves v0–v1, as Kafka 4.x. Needs ALTER_CONFIGS on the CLUSTER
// (else every entry CLUSTER_AUTHORIZATION_FAILED). Entries are validated and applied as Kafka's
// controller applies them (src/server/quotas/client-quotas.ts): one outcome per distinct entity,
// the valid entries' changes stored in one append, nothing stored with ValidateOnly.
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import { createAlterClientQuotasResponse } from '../../protocol/generated/messages/AlterClientQuotasResponse.js'
import type { AlterClientQuotasRequest } from '../../protocol/generated/messages/AlterClientQuotasRequest.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { defineHandler } from '../router.js'

function failedAll(request: AlterClientQuotasRequest, errorCode: number, errorMessage: string | null) {
  return createAlterClientQuotasResponse({
    entries: request.entries.map((e) => ({
      errorCode,
      errorMessage,
      entity: e.entity.map((p) => ({ entityType: p.entityType, entityName: p.entityName })),
    })),
  })
}

export const handler = defineHandler({
  apiKey: 49,
  minVersion: 0,
  maxVersion: 1,
  async handle(request, ctx) {
    // 1. Cluster ALTER_CONFIGS.
    if (!ctx.server.authorizer.authorize(ctx.principal, 'ALTER_CONFIGS', 'CLUSTER', CLUSTER_NAME)) {
      return failedAll(
        request,
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorInfo(ErrorCode.CLUSTER_AUTHORIZATION_FAILED).message,
      )
    }
    // 2. Validate and apply.
    const outcomes = await ctx.server.quotas.alter(request.entries, request.validateOnly)
    return createAlterClientQuotasResponse({
      entries: outcomes.map((o) => ({
        errorCode: o.errorCode,
        errorMessage: o.errorMessage,
        entity: o.entity.map((p) => ({ entityType: p.entityType, entityName: p.entityName })),
      })),
    })
  },
  errorResponse(request, errorCode) {
    return failedAll(request, errorCode, null)
  },
})
