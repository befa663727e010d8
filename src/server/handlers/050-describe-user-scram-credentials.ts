// DescribeUserScramCredentials (key 50): serves v0, as Kafka 4.x (KafkaApis
// .handleDescribeUserScramCredentialsRequest, ScramImage.describe). Needs DESCRIBE on the CLUSTER
// (else CLUSTER_AUTHORIZATION_FAILED with no message, and one result per user named, with an
// empty user name, as Kafka's error response). Null or empty Users: every user with a credential.
// Results in the iteration order of Kafka's HashMap of the user names.
// Named users: RESOURCE_NOT_FOUND for a user without credential, DUPLICATE_RESOURCE for a user
// named twice, each with Kafka's message. Credentials from sasl.scram.users are listed too; a
// stored one hides the configured one of the same user and mechanism (src/server/auth/scram-store.ts).
import { ErrorCode } from '../../protocol/errors.js'
import { createDescribeUserScramCredentialsResponse } from '../../protocol/generated/messages/DescribeUserScramCredentialsResponse.js'
import type { DescribeUserScramCredentialsRequest } from '../../protocol/generated/messages/DescribeUserScramCredentialsRequest.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { defineHandler } from '../router.js'

function failed(request: DescribeUserScramCredentialsRequest, errorCode: number) {
  // Kafka's getErrorResponse: the message of an exception with the error's own text is null.
  return createDescribeUserScramCredentialsResponse({
    errorCode,
    errorMessage: null,
    results: (request.users ?? []).map(() => ({
      user: '',
      errorCode,
      errorMessage: null,
      credentialInfos: [],
    })),
  })
}

export const handler = defineHandler({
  apiKey: 50,
  minVersion: 0,
  maxVersion: 0,
  handle(request, ctx) {
    // 1. Cluster DESCRIBE.
    if (!ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'CLUSTER', CLUSTER_NAME)) {
      return failed(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    }
    // 2. The users asked for.
    const results = ctx.server.scram.describe(request.users?.map((u) => u.name) ?? null)
    return createDescribeUserScramCredentialsResponse({ results })
  },
  errorResponse(request, errorCode) {
    return failed(request, errorCode)
  },
})
