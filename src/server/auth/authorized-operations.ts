import type { AclOperationName, Authorizer, RequestContext } from '../router.js'
import { AclOperation, type ResourceTypeName } from './acl.js'
import { SUPPORTED_OPERATIONS } from './authorizer.js'

/**
 * Kafka's authorized-operations bit set of one resource for the principal of the request being
 * handled: bit n is set when the principal may perform the operation whose code is n, over the
 * operations Kafka defines for the resource type (a GROUP: READ, DESCRIBE, DELETE,
 * DESCRIBE_CONFIGS, ALTER_CONFIGS). Works with any `Authorizer`: without an authorizer every
 * operation is allowed and every bit of the type is set, as in Kafka. The host is the client's
 * address (the ACL authorizer reads it from the request scope).
 */
export function authorizedOperations(
  authorizer: Authorizer,
  principal: string,
  resourceType: 'TOPIC' | 'GROUP' | 'CLUSTER',
  resourceName: string,
): number {
  let bits = 0
  for (const op of SUPPORTED_OPERATIONS[resourceType as ResourceTypeName] ?? []) {
    if (authorizer.authorize(principal, op as AclOperationName, resourceType, resourceName)) {
      bits |= 1 << AclOperation[op]
    }
  }
  return bits
}

/** The authorized-operations bit set of a group for this request's principal. */
export function groupAuthorizedOperations(ctx: RequestContext, groupId: string): number {
  return authorizedOperations(ctx.server.authorizer, ctx.principal, 'GROUP', groupId)
}

/** Of `names`, those the request's principal may not perform `operation` on (TOPIC resources). */
export function unauthorizedTopics(
  ctx: RequestContext,
  operation: AclOperationName,
  names: Iterable<string>,
): string[] {
  const denied: string[] = []
  for (const n of new Set(names)) {
    if (!ctx.server.authorizer.authorize(ctx.principal, operation, 'TOPIC', n)) denied.push(n)
  }
  return denied
}
