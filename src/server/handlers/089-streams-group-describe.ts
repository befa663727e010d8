// StreamsGroupDescribe (key 89): serves v0–v1. UNSUPPORTED_VERSION on every group when streams
// groups are disabled; GROUP_AUTHORIZATION_FAILED per group without DESCRIBE; otherwise each group's
// row from its shard (spec §5.2); a group whose topology names a topic without DESCRIBE becomes a
// TOPIC_AUTHORIZATION_FAILED row with no members, topology or description (protocol.md §6.3).
// With v1's IncludeTopologyDescription the coordinator adds the stored description and its status
// (KIP-1331: NOT_STORED / ERROR / AVAILABLE; NOT_STORED without a plugin); the topology outcome
// never changes a group's ErrorCode.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { topologyTopicNames } from '../../coordinator/shard/streams/topology.js'
import { ErrorCode } from '../../protocol/errors.js'
import {
  createStreamsGroupDescribeResponse,
  createStreamsGroupDescribeResponseDescribedGroup,
} from '../../protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { groupAuthorizedOperations } from '../auth/authorized-operations.js'
import { defineHandler } from '../router.js'

const row = (groupId: string, errorCode: number) =>
  createStreamsGroupDescribeResponseDescribedGroup({ groupId, errorCode })

export const handler = defineHandler({
  apiKey: 89,
  minVersion: 0,
  maxVersion: 1,
  async handle(request, ctx) {
    const coordinator = coordinatorFrom(ctx.server.coordinator)
    const includeDescription = ctx.apiVersion >= 1 && request.includeTopologyDescription
    // Streams groups disabled: UNSUPPORTED_VERSION on every group, before any authorization.
    if (!coordinator.isStreamsEnabled) {
      return createStreamsGroupDescribeResponse({
        groups: await coordinator.streamsGroupDescribe(request.groupIds, includeDescription),
      })
    }
    // Kafka's order: the groups without DESCRIBE first, then the coordinator's rows.
    const { authorizer } = ctx.server
    const denied: string[] = []
    const allowed: string[] = []
    for (const g of request.groupIds) {
      if (authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', g)) allowed.push(g)
      else denied.push(g)
    }
    const described = await coordinator.streamsGroupDescribe(allowed, includeDescription)
    return createStreamsGroupDescribeResponse({
      groups: [
        ...denied.map((g) => row(g, ErrorCode.GROUP_AUTHORIZATION_FAILED)),
        ...described.map((d) => {
          // A group whose topology names a topic the principal may not describe is replaced (the
          // topics of the description alone are not checked). Without an authorizer every topic
          // passes.
          const topics = topologyTopicNames(d.topology?.subtopologies ?? [])
          if (topics.some((t) => !authorizer.authorize(ctx.principal, 'DESCRIBE', 'TOPIC', t))) {
            return {
              ...row(d.groupId, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
              errorMessage: 'The described group uses topics that the client is not authorized to describe.',
            }
          }
          if (request.includeAuthorizedOperations && d.errorCode === ErrorCode.NONE) {
            return { ...d, authorizedOperations: groupAuthorizedOperations(ctx, d.groupId) }
          }
          return d
        }),
      ],
    })
  },
  errorResponse(request, errorCode) {
    return createStreamsGroupDescribeResponse({ groups: request.groupIds.map((g) => row(g, errorCode)) })
  },
})
