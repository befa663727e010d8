import type { AclOperationName, RequestContext } from './router.js'

/**
 * Kafka's authorized-operations bit sets (Metadata, DescribeCluster): bit n set when the principal
 * may perform the operation whose AclOperation code is n.
 */
const ACL_OPERATION_CODES: Readonly<Record<AclOperationName, number>> = {
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
}

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
    if (ctx.server.authorizer.authorize(ctx.principal, op, type, name)) out |= 1 << ACL_OPERATION_CODES[op]
  }
  return out
}

export function topicAuthorizedOperations(ctx: RequestContext, topic: string): number {
  return bits(ctx, TOPIC_OPERATIONS, 'TOPIC', topic)
}

export function clusterAuthorizedOperations(ctx: RequestContext): number {
  return bits(ctx, CLUSTER_OPERATIONS, 'CLUSTER', 'kafka-cluster')
}
