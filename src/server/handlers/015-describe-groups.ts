// DescribeGroups (key 15): serves v0–v6. Classic groups are not served, so the only classic groups
// here are simple ones (offsets only: state Empty, no protocol, no members). A streams group or an
// unknown id reads as Dead; v6+ adds GROUP_ID_NOT_FOUND with Kafka's message (spec §5.4).
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createDescribeGroupsResponse } from '../../protocol/generated/messages/DescribeGroupsResponse.js'
import { groupAuthorizedOperations } from '../auth/authorized-operations.js'
import { defineHandler } from '../router.js'

const row = (groupId: string, errorCode: number) => ({
  errorCode,
  errorMessage: null,
  groupId,
  groupState: '',
  protocolType: '',
  protocolData: '',
  members: [],
  authorizedOperations: -2147483648,
})

export const handler = defineHandler({
  apiKey: 15,
  minVersion: 0,
  maxVersion: 6,
  async handle(request, ctx) {
    // Kafka's order: the groups without DESCRIBE first (GROUP_AUTHORIZATION_FAILED), then the
    // coordinator's rows, which carry the v3+ authorized-operations bit set when asked for.
    const { authorizer } = ctx.server
    const denied: string[] = []
    const allowed: string[] = []
    for (const g of request.groups) {
      if (authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', g)) allowed.push(g)
      else denied.push(g)
    }
    const described = await coordinatorFrom(ctx.server.coordinator).describeGroups(allowed, ctx.apiVersion)
    const withOperations = ctx.apiVersion >= 3 && request.includeAuthorizedOperations
    return createDescribeGroupsResponse({
      groups: [
        ...denied.map((g) => row(g, ErrorCode.GROUP_AUTHORIZATION_FAILED)),
        ...described.map((d) =>
          withOperations && d.errorCode === ErrorCode.NONE
            ? { ...d, authorizedOperations: groupAuthorizedOperations(ctx, d.groupId) }
            : d,
        ),
      ],
    })
  },
  errorResponse(request, errorCode) {
    return createDescribeGroupsResponse({ groups: request.groups.map((g) => row(g, errorCode)) })
  },
})
