// ElectLeaders (key 43): serves v0–v2, as a KRaft controller answers the request a broker forwards
// to it (ControllerApis.handleElectLeaders, ReplicationControlManager.electLeaders). On one node
// every partition already has its preferred leader, and a leader, so no election is ever needed.
//   1. ALTER on the CLUSTER, else every named partition CLUSTER_AUTHORIZATION_FAILED.
//   2. An election type other than 0 (preferred) or 1 (unclean): INVALID_REQUEST, the same way.
//   3. Named partitions: ELECTION_NOT_NEEDED each, or UNKNOWN_TOPIC_OR_PARTITION for a topic or
//      partition that does not exist. No partitions named (null): every topic, each without
//      partitions, since Kafka leaves out the ones whose election was not needed.
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import {
  createElectLeadersResponse,
  type ElectLeadersResponse,
} from '../../protocol/generated/messages/ElectLeadersResponse.js'
import type { ElectLeadersRequest } from '../../protocol/generated/messages/ElectLeadersRequest.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { defineHandler } from '../router.js'

type Result = ElectLeadersResponse['replicaElectionResults'][number]

/** ElectLeadersRequest.getErrorResponse: the error for every named partition and for the request. */
function failed(request: ElectLeadersRequest, errorCode: number, errorMessage: string | null) {
  return createElectLeadersResponse({
    errorCode,
    replicaElectionResults: (request.topicPartitions ?? []).map((t) => ({
      topic: t.topic,
      partitionResult: t.partitions.map((partitionId) => ({ partitionId, errorCode, errorMessage })),
    })),
  })
}

export const handler = defineHandler({
  apiKey: 43,
  minVersion: 0,
  maxVersion: 2,
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
    // 2. (v0 has no type: preferred)
    if (request.electionType !== 0 && request.electionType !== 1) {
      return failed(request, ErrorCode.INVALID_REQUEST, `Unknown election type ${request.electionType}`)
    }
    // 3.
    if (request.topicPartitions === null) {
      return createElectLeadersResponse({
        replicaElectionResults: server.topics.sorted().map((t) => ({ topic: t.name, partitionResult: [] })),
      })
    }
    const notNeeded = errorInfo(ErrorCode.ELECTION_NOT_NEEDED).message
    const results: Result[] = []
    for (const { topic, partitions } of request.topicPartitions) {
      const t = server.topics.byName(topic)
      results.push({
        topic,
        partitionResult: partitions.map((partitionId) =>
          t === undefined
            ? {
                partitionId,
                errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                errorMessage: `No such topic as ${topic}`,
              }
            : partitionId < 0 || partitionId >= t.numPartitions
              ? {
                  partitionId,
                  errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                  errorMessage: `No such partition as ${topic}-${partitionId}`,
                }
              : { partitionId, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: notNeeded },
        ),
      })
    }
    return createElectLeadersResponse({ replicaElectionResults: results })
  },
  errorResponse(request, errorCode) {
    return failed(request, errorCode, null)
  },
})
