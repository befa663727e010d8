import { AclOperation } from './auth/acl.js'
import type { AclOperationName, RequestContext } from './router.js'

// Kafka's authorized-operations bit sets (Metadata, DescribeCluster): bit n set when the principal
// may perform the operation whose AclOperation code is n (codes from the ACL model).

/** The operations Kafka defines on each resource type. */
const TOPIC_OPERATIONS: readonly AclOperationName[] = [
  'READ',
  'WRITE',
  'CREATE',
  'DESCRIBE',
  'DELETE',
  'ALTER',
  'DESCRIBE_CONFIGS',
  'ALTER_CONFIGS',
]
const CLUSTER_OPERATIONS: readonly AclOperationName[] = [
  'CREATE',
  'CLUSTER_ACTION',
  'DESCRIBE_CONFIGS',
  'ALTER_CONFIGS',
  'IDEMPOTENT_WRITE',
  'ALTER',
  'DESCRIBE',
]

function bits(
  ctx: RequestContext,
  ops: readonly AclOperationName[],
  type: 'TOPIC' | 'CLUSTER',
  name: string,
): number {
  let out = 0
  for (const op of ops) {
    if (ctx.server.authorizer.authorize(ctx.principal, op, type, name)) out |= 1 << AclOperation[op]
  }
  return out
}

export function topicAuthorizedOperations(ctx: RequestContext, topic: string): number {
  return bits(ctx, TOPIC_OPERATIONS, 'TOPIC', topic)
}

export function clusterAuthorizedOperations(ctx: RequestContext): number {
  return bits(ctx, CLUSTER_OPERATIONS, 'CLUSTER', 'kafka-cluster')
}
