// DescribeAcls (key 29): serves v1–v3. Needs DESCRIBE on the CLUSTER (else
// CLUSTER_AUTHORIZATION_FAILED); without the ACL authorizer SECURITY_DISABLED. ACLs matching the
// filter are grouped by resource pattern, as Kafka's DescribeAclsResponse.aclsResources does.
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import {
  createDescribeAclsResponse,
  type DescribeAclsResponseDescribeAclsResource,
} from '../../protocol/generated/messages/DescribeAclsResponse.js'
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../auth/acl.js'
import { aclAuthorizer, clusterAllowed, filterFromWire, NO_AUTHORIZER_DESCRIBE } from '../auth/acl-api.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 29,
  minVersion: 1,
  maxVersion: 3,
  handle(request, ctx) {
    // 1. Cluster DESCRIBE.
    if (!clusterAllowed(ctx, 'DESCRIBE')) {
      return createDescribeAclsResponse({
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage: errorInfo(ErrorCode.CLUSTER_AUTHORIZATION_FAILED).message,
      })
    }
    // 2. An authorizer that keeps ACLs.
    const acls = aclAuthorizer(ctx)
    if (acls === null) {
      return createDescribeAclsResponse({
        errorCode: ErrorCode.SECURITY_DISABLED,
        errorMessage: NO_AUTHORIZER_DESCRIBE,
      })
    }
    // 3. The filter.
    const filter = filterFromWire(request)
    if (typeof filter === 'string') {
      return createDescribeAclsResponse({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: filter })
    }
    // 4. Matches, grouped by resource pattern.
    const byResource = new Map<string, DescribeAclsResponseDescribeAclsResource>()
    for (const b of acls.acls(filter)) {
      const k = JSON.stringify([b.resourceType, b.resourceName, b.patternType])
      let r = byResource.get(k)
      if (r === undefined) {
        r = {
          resourceType: ResourceType[b.resourceType],
          resourceName: b.resourceName,
          patternType: PatternType[b.patternType],
          acls: [],
        }
        byResource.set(k, r)
      }
      r.acls.push({
        principal: b.principal,
        host: b.host,
        operation: AclOperation[b.operation],
        permissionType: AclPermissionType[b.permissionType],
      })
    }
    return createDescribeAclsResponse({ resources: [...byResource.values()] })
  },
  errorResponse(_request, errorCode) {
    return createDescribeAclsResponse({ errorCode })
  },
})
