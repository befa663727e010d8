// ListPartitionReassignments (key 46): serves v0, as a KRaft controller answers the request a
// broker forwards to it (ControllerApis.handleListPartitionReassignments). DESCRIBE on the CLUSTER,
// else CLUSTER_AUTHORIZATION_FAILED for the request (each named partition listed without replicas,
// as ListPartitionReassignmentsRequest.getErrorResponse builds it). On one node a partition has no
// other replica to move to, so no reassignment is ever in progress: the list is empty.
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import { createListPartitionReassignmentsResponse } from '../../protocol/generated/messages/ListPartitionReassignmentsResponse.js'
import type { ListPartitionReassignmentsRequest } from '../../protocol/generated/messages/ListPartitionReassignmentsRequest.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { defineHandler } from '../router.js'

function failed(request: ListPartitionReassignmentsRequest, errorCode: number, errorMessage: string | null) {
  return createListPartitionReassignmentsResponse({
    errorCode,
    errorMessage,
    topics: (request.topics ?? []).map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((partitionIndex) => ({
        partitionIndex,
        replicas: [],
        addingReplicas: [],
        removingReplicas: [],
      })),
    })),
  })
}

export const handler = defineHandler({
  apiKey: 46,
  minVersion: 0,
  maxVersion: 0,
  handle(request, ctx) {
    if (!ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'CLUSTER', CLUSTER_NAME)) {
      return failed(
        request,
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorInfo(ErrorCode.CLUSTER_AUTHORIZATION_FAILED).message,
      )
    }
    return createListPartitionReassignmentsResponse({ errorMessage: null, topics: [] })
  },
  errorResponse(request, errorCode) {
    return failed(request, errorCode, null)
  },
})
