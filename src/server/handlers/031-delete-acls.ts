// DeleteAcls (key 31): serves v1–v3. Needs ALTER on the CLUSTER (else every filter result
// CLUSTER_AUTHORIZATION_FAILED); without the ACL authorizer SECURITY_DISABLED. Every ACL matched by
// any filter is removed in one append; each filter result lists the ACLs it matched.
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import {
  createDeleteAclsResponse,
  type DeleteAclsResponseDeleteAclsFilterResult,
} from '../../protocol/generated/messages/DeleteAclsResponse.js'
import {
  type AclBindingFilter,
  AclOperation,
  AclPermissionType,
  PatternType,
  ResourceType,
} from '../auth/acl.js'
import { aclAuthorizer, clusterAllowed, filterFromWire, NO_AUTHORIZER } from '../auth/acl-api.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 31,
  minVersion: 1,
  maxVersion: 3,
  async handle(request, ctx) {
    const all = (errorCode: number, errorMessage: string | null) =>
      createDeleteAclsResponse({
        filterResults: request.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })),
      })
    // 1. Cluster ALTER, then an authorizer that keeps ACLs.
    if (!clusterAllowed(ctx, 'ALTER'))
      return all(
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorInfo(ErrorCode.CLUSTER_AUTHORIZATION_FAILED).message,
      )
    const acls = aclAuthorizer(ctx)
    if (acls === null) return all(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)

    // 2. Filters; one with an UNKNOWN element is refused on its own.
    const parsed = request.filters.map(filterFromWire)
    const usable = parsed.filter((f): f is AclBindingFilter => typeof f !== 'string')

    // 3. One append removing every match.
    let matches: ReturnType<typeof acls.acls>[]
    try {
      matches = await acls.deleteAcls(usable)
    } catch (err) {
      ctx.server.logger.error({ err }, 'Failed to delete ACLs')
      return all(ErrorCode.UNKNOWN_SERVER_ERROR, 'Unknown error while trying to delete ACLs')
    }
    let next = 0
    const filterResults: DeleteAclsResponseDeleteAclsFilterResult[] = parsed.map((f) => {
      if (typeof f === 'string')
        return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: f, matchingAcls: [] }
      return {
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        matchingAcls: matches[next++].map((b) => ({
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          resourceType: ResourceType[b.resourceType],
          resourceName: b.resourceName,
          patternType: PatternType[b.patternType],
          principal: b.principal,
          host: b.host,
          operation: AclOperation[b.operation],
          permissionType: AclPermissionType[b.permissionType],
        })),
      }
    })
    const removed = new Set(matches.flat()).size
    if (removed > 0) {
      ctx.server.logger.info(
        { principal: ctx.principal, count: removed },
        `Deleted ${removed} ACL(s) for ${ctx.principal}`,
      )
    }
    return createDeleteAclsResponse({ filterResults })
  },
  errorResponse(request, errorCode) {
    return createDeleteAclsResponse({
      filterResults: request.filters.map(() => ({ errorCode, errorMessage: null, matchingAcls: [] })),
    })
  },
})
