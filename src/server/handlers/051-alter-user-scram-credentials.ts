// AlterUserScramCredentials (key 51): serves v0, as a KRaft controller answers the request a
// broker forwards to it (ControllerApis.handleAlterUserScramCredentials,
// ScramControlManager.alterCredentials). Needs ALTER on the CLUSTER (else every user named, once
// each and sorted, CLUSTER_AUTHORIZATION_FAILED). One result per user:
//   - a user named more than once (deletions and upsertions together, whatever the mechanisms):
//     DUPLICATE_RESOURCE `A user credential cannot be altered twice in the same request`;
//   - an empty name: UNACCEPTABLE_CREDENTIAL `Username must not be empty`; a mechanism other than
//     1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512): UNSUPPORTED_SASL_MECHANISM `Unknown SCRAM mechanism`;
//   - an upsertion below 4096 or above 16384 iterations: UNACCEPTABLE_CREDENTIAL `Too few
//     iterations` / `Too many iterations`;
//   - deleting a credential that does not exist: RESOURCE_NOT_FOUND `Attempt to delete a user
//     credential that does not exist`; one that exists only in sasl.scram.users: INVALID_REQUEST
//     (ours: Kafka has no configured credentials).
// The server derives StoredKey and ServerKey from SaltedPassword and keeps only those, the salt
// and the iteration count. The valid changes are stored in one append and used by the next
// SASL/SCRAM authentication (src/server/auth/scram-store.ts). Results: the deletions done, the
// upsertions done, then the failed users, each group in the order of Kafka's HashMap of it.
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import { createAlterUserScramCredentialsResponse } from '../../protocol/generated/messages/AlterUserScramCredentialsResponse.js'
import type { AlterUserScramCredentialsRequest } from '../../protocol/generated/messages/AlterUserScramCredentialsRequest.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { defineHandler } from '../router.js'

/** Kafka's getErrorResponse: every user named, once, sorted. */
function failedAll(
  request: AlterUserScramCredentialsRequest,
  errorCode: number,
  errorMessage: string | null,
) {
  const users = new Set([...request.deletions, ...request.upsertions].map((a) => a.name))
  return createAlterUserScramCredentialsResponse({
    results: [...users].sort().map((user) => ({ user, errorCode, errorMessage })),
  })
}

export const handler = defineHandler({
  apiKey: 51,
  minVersion: 0,
  maxVersion: 0,
  async handle(request, ctx) {
    // 1. Cluster ALTER.
    if (!ctx.server.authorizer.authorize(ctx.principal, 'ALTER', 'CLUSTER', CLUSTER_NAME)) {
      return failedAll(
        request,
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorInfo(ErrorCode.CLUSTER_AUTHORIZATION_FAILED).message,
      )
    }
    // 2. Validate, derive the keys, store.
    const results = await ctx.server.scram.alter(request.deletions, request.upsertions)
    return createAlterUserScramCredentialsResponse({ results })
  },
  errorResponse(request, errorCode) {
    return failedAll(request, errorCode, null)
  },
})
