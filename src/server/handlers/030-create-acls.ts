// CreateAcls (key 30): serves v1–v3. Needs ALTER on the CLUSTER (else every result
// CLUSTER_AUTHORIZATION_FAILED); without the ACL authorizer every result is SECURITY_DISABLED.
// Each creation is validated as Kafka validates it (INVALID_REQUEST with Kafka's message); the
// valid ones are stored in one append. Creating an ACL that exists already succeeds. An ACL whose
// strings are longer than max.acl.bytes is POLICY_VIOLATION; so is every valid creation of a request
// that would store more than 10000 ACLs at once (Kafka's per-request bound and text) or take the
// server above max.acls.
import { ApiError } from '../../protocol/api-error.js'
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import {
  type CreateAclsResponseAclCreationResult,
  createCreateAclsResponse,
} from '../../protocol/generated/messages/CreateAclsResponse.js'
import {
  type AclBinding,
  operationName,
  patternTypeName,
  permissionTypeName,
  resourceTypeName,
  validateNewBinding,
} from '../auth/acl.js'
import { aclAuthorizer, clusterAllowed, NO_AUTHORIZER } from '../auth/acl-api.js'
import { defineHandler } from '../router.js'

const ok = (): CreateAclsResponseAclCreationResult => ({ errorCode: ErrorCode.NONE, errorMessage: null })

export const handler = defineHandler({
  apiKey: 30,
  minVersion: 1,
  maxVersion: 3,
  async handle(request, ctx) {
    const all = (errorCode: number, errorMessage: string | null) =>
      createCreateAclsResponse({ results: request.creations.map(() => ({ errorCode, errorMessage })) })
    // 1. Cluster ALTER, then an authorizer that keeps ACLs.
    if (!clusterAllowed(ctx, 'ALTER'))
      return all(
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorInfo(ErrorCode.CLUSTER_AUTHORIZATION_FAILED).message,
      )
    const acls = aclAuthorizer(ctx)
    if (acls === null) return all(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)

    // 2. Validation, per creation.
    const results: CreateAclsResponseAclCreationResult[] = []
    const valid: { readonly index: number; readonly binding: AclBinding }[] = []
    request.creations.forEach((c, index) => {
      const binding: AclBinding = {
        resourceType: resourceTypeName(c.resourceType),
        resourceName: c.resourceName,
        patternType: patternTypeName(c.resourcePatternType),
        principal: c.principal,
        host: c.host,
        operation: operationName(c.operation),
        permissionType: permissionTypeName(c.permissionType),
      }
      const problem = validateNewBinding(binding)
      const tooLarge = problem === null ? acls.checkAclSize(binding) : null
      if (problem !== null) results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: problem })
      else if (tooLarge !== null)
        results.push({ errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: tooLarge })
      else {
        valid.push({ index, binding })
        results.push(ok())
      }
    })

    // 3. One append for every valid creation.
    if (valid.length > 0) {
      try {
        await acls.createAcls(valid.map((v) => v.binding))
        ctx.server.logger.info(
          { principal: ctx.principal, count: valid.length },
          `Created ${valid.length} ACL(s) for ${ctx.principal}`,
        )
      } catch (err) {
        if (err instanceof ApiError) {
          for (const v of valid) {
            results[v.index] = { errorCode: err.errorCode, errorMessage: err.errorMessage }
          }
          return createCreateAclsResponse({ results })
        }
        ctx.server.logger.error({ err }, 'Failed to store ACLs')
        for (const v of valid) {
          results[v.index] = {
            errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
            errorMessage: 'Unknown error while trying to create ACL',
          }
        }
      }
    }
    return createCreateAclsResponse({ results })
  },
  errorResponse(request, errorCode) {
    return createCreateAclsResponse({
      results: request.creations.map(() => ({ errorCode, errorMessage: null })),
    })
  },
})
