// AlterPartitionReassignments (key 45): serves v0–v1, as a KRaft controller answers the request a
// broker forwards to it (ControllerApis.handleAlterPartitionReassignments,
// ReplicationControlManager.alterPartitionReassignment). One node is the only broker registered,
// so the only valid target of a partition is the replica it has: accepted, nothing to move.
//   1. ALTER on the CLUSTER, else every partition CLUSTER_AUTHORIZATION_FAILED.
//   2. Per partition: UNKNOWN_TOPIC_OR_PARTITION for a topic or partition that does not exist;
//      null replicas (cancel): NO_REASSIGNMENT_IN_PROGRESS; target replicas checked as Kafka's
//      validateManualPartitionAssignment does (INVALID_REPLICA_ASSIGNMENT: empty, a broker that is
//      not this node, a broker twice); otherwise accepted. (Kafka's replication factor check, with
//      AllowReplicationFactorChange false, can no longer fail once the target is this node alone.)
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import {
  type AlterPartitionReassignmentsResponse,
  createAlterPartitionReassignmentsResponse,
} from '../../protocol/generated/messages/AlterPartitionReassignmentsResponse.js'
import type { AlterPartitionReassignmentsRequest } from '../../protocol/generated/messages/AlterPartitionReassignmentsRequest.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { defineHandler } from '../router.js'

type PartitionResponse = AlterPartitionReassignmentsResponse['responses'][number]['partitions'][number]

/** AlterPartitionReassignmentsRequest.getErrorResponse: the error for every partition. */
function failed(request: AlterPartitionReassignmentsRequest, errorCode: number, errorMessage: string | null) {
  return createAlterPartitionReassignmentsResponse({
    allowReplicationFactorChange: request.allowReplicationFactorChange,
    errorCode,
    errorMessage,
    responses: request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode, errorMessage })),
    })),
  })
}

/** Kafka's validateManualPartitionAssignment with this node as the only broker registered. */
function invalidAssignment(replicas: readonly number[], nodeId: number): string | null {
  if (replicas.length === 0) return 'The manual partition assignment includes an empty replica list.'
  const sorted = [...replicas].sort((a, b) => a - b)
  let previous: number | undefined
  for (const broker of sorted) {
    if (broker !== nodeId) {
      return `The manual partition assignment includes broker ${broker}, but no such broker is registered.`
    }
    if (broker === previous) {
      return `The manual partition assignment includes the broker ${broker} more than once.`
    }
    previous = broker
  }
  return null
}

export const handler = defineHandler({
  apiKey: 45,
  minVersion: 0,
  maxVersion: 1,
  handle(request, ctx) {
    const server = ctx.server
    // 1.
    if (!server.authorizer.authorize(ctx.principal, 'ALTER', 'CLUSTER', CLUSTER_NAME)) {
      return failed(
        request,
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorInfo(ErrorCode.CLUSTER_AUTHORIZATION_FAILED).message,
      )
    }
    // 2.
    const responses = request.topics.map(({ name, partitions }) => {
      const t = server.topics.byName(name)
      return {
        name,
        partitions: partitions.map(({ partitionIndex, replicas }): PartitionResponse => {
          const answer = (errorCode: number, errorMessage: string | null): PartitionResponse => ({
            partitionIndex,
            errorCode,
            errorMessage,
          })
          if (t === undefined) {
            return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find a topic named ${name}.`)
          }
          if (partitionIndex < 0 || partitionIndex >= t.numPartitions) {
            return answer(
              ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
              `Unable to find partition ${name}:${partitionIndex}.`,
            )
          }
          // Kafka's message for this one is the error's default, which its answer leaves out.
          if (replicas === null) return answer(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, null)
          const invalid = invalidAssignment(replicas, server.nodeId)
          if (invalid !== null) return answer(ErrorCode.INVALID_REPLICA_ASSIGNMENT, invalid)
          return answer(ErrorCode.NONE, null)
        }),
      }
    })
    return createAlterPartitionReassignmentsResponse({
      allowReplicationFactorChange: request.allowReplicationFactorChange,
      errorMessage: null,
      responses,
    })
  },
  errorResponse(request, errorCode) {
    return failed(request, errorCode, null)
  },
})
