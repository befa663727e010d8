// StreamsGroupDescribe (key 89): serves v0–v1. UNSUPPORTED_VERSION on every group when streams
// groups are disabled; GROUP_AUTHORIZATION_FAILED per group without DESCRIBE; otherwise each group's
// row from its shard (spec §5.2). With v1's IncludeTopologyDescription the coordinator adds the
// stored description and its status (KIP-1331: NOT_STORED / ERROR / AVAILABLE; NOT_STORED without a
// plugin); the topology outcome never changes a group's ErrorCode.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createStreamsGroupDescribeResponse } from '../../protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { defineHandler } from '../router.js'
import { groupAuthorizedOperations } from './015-describe-groups.js'

const row = (groupId: string, errorCode: number) => ({
  errorCode,
  errorMessage: null,
  groupId,
  groupState: '',
  groupEpoch: 0,
  assignmentEpoch: 0,
  topology: null,
  members: [],
  authorizedOperations: -2147483648,
  topologyDescription: null,
  topologyDescriptionStatus: 0,
  assignorName: null,
})

export const handler = defineHandler({
  apiKey: 89,
  minVersion: 0,
  maxVersion: 1,
  async handle(request, ctx) {
    const coordinator = coordinatorFrom(ctx.server.coordinator)
    const may = (g: string) => ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', g)
    const includeDescription = ctx.apiVersion >= 1 && request.includeTopologyDescription
    const described = await coordinator.streamsGroupDescribe(request.groupIds.filter(may), includeDescription)
    let next = 0
    return createStreamsGroupDescribeResponse({
      groups: request.groupIds.map((g) => {
        if (!may(g)) return row(g, ErrorCode.GROUP_AUTHORIZATION_FAILED)
        const d = described[next++]
        if (request.includeAuthorizedOperations && d.errorCode === ErrorCode.NONE) {
          return { ...d, authorizedOperations: groupAuthorizedOperations(ctx, g) }
        }
        return d
      }),
    })
  },
  errorResponse(request, errorCode) {
    return createStreamsGroupDescribeResponse({ groups: request.groupIds.map((g) => row(g, errorCode)) })
  },
})
