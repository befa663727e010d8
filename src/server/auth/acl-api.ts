import type { RequestContext } from '../router.js'
import {
  type AclBindingFilter,
  CLUSTER_NAME,
  operationName,
  patternTypeName,
  permissionTypeName,
  resourceTypeName,
} from './acl.js'
import { AclAuthorizer } from './authorizer.js'

/** What the ACL APIs (CreateAcls, DescribeAcls, DeleteAcls) share. */

/** Kafka's texts when no authorizer is configured. */
export const NO_AUTHORIZER_DESCRIBE = 'No Authorizer is configured on the broker'
export const NO_AUTHORIZER = 'No Authorizer is configured.'

/** The ACL authorizer behind `ctx.server.authorizer`, or null when ACLs are not served. */
export function aclAuthorizer(ctx: RequestContext): AclAuthorizer | null {
  const a = ctx.server.authorizer
  return a instanceof AclAuthorizer ? a : null
}

/** Kafka's cluster-level check for the ACL APIs (ALTER to change ACLs, DESCRIBE to list them). */
export function clusterAllowed(ctx: RequestContext, operation: 'ALTER' | 'DESCRIBE'): boolean {
  return ctx.server.authorizer.authorize(ctx.principal, operation, 'CLUSTER', CLUSTER_NAME)
}

/** A filter as it arrives in DescribeAcls / DeleteAcls. */
export interface WireAclFilter {
  readonly resourceTypeFilter: number
  readonly resourceNameFilter: string | null
  readonly patternTypeFilter: number
  readonly principalFilter: string | null
  readonly hostFilter: string | null
  readonly operation: number
  readonly permissionType: number
}

/**
 * Converts a wire filter. Returns Kafka's message when an element is the UNKNOWN code (0), which
 * Kafka refuses while parsing the request.
 */
export function filterFromWire(f: WireAclFilter): AclBindingFilter | string {
  if (
    f.resourceTypeFilter === 0 ||
    f.patternTypeFilter === 0 ||
    f.operation === 0 ||
    f.permissionType === 0
  ) {
    return 'Filter contains UNKNOWN elements'
  }
  return {
    resourceType: resourceTypeName(f.resourceTypeFilter),
    resourceName: f.resourceNameFilter,
    patternType: patternTypeName(f.patternTypeFilter),
    principal: f.principalFilter,
    host: f.hostFilter,
    operation: operationName(f.operation),
    permissionType: permissionTypeName(f.permissionType),
  }
}
