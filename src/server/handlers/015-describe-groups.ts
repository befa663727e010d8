// DescribeGroups (key 15): serves v0–v6. Classic groups are not served, so the only classic groups
// here are simple ones (offsets only: state Empty, no protocol, no members). A streams group or an
// unknown id reads as Dead; v6+ adds GROUP_ID_NOT_FOUND with Kafka's message (spec §5.4).
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createDescribeGroupsResponse } from '../../protocol/generated/messages/DescribeGroupsResponse.js'
import { defineHandler, type RequestContext } from '../router.js'

/** Kafka's AclOperation codes of the operations a group has (READ 3, DELETE 6, DESCRIBE 8). */
const GROUP_OPERATIONS = [
  ['READ', 3],
  ['DELETE', 6],
  ['DESCRIBE', 8],
] as const

/** The authorized-operations bit set of a group for this request's principal. */
export function groupAuthorizedOperations(ctx: RequestContext, groupId: string): number {
  let bits = 0
  for (const [op, code] of GROUP_OPERATIONS) {
    if (ctx.server.authorizer.authorize(ctx.principal, op, 'GROUP', groupId)) bits |= 1 << code
  }
  return bits
}

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
    const allowed = request.groups.filter((g) =>
      ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', g),
    )
    const described = await coordinatorFrom(ctx.server.coordinator).describeGroups(allowed, ctx.apiVersion)
    const byId = new Map(described.map((d) => [d.groupId, d]))
    return createDescribeGroupsResponse({
      groups: request.groups.map((groupId) => {
        const d = byId.get(groupId)
        if (d === undefined) return row(groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED)
        if (request.includeAuthorizedOperations && d.errorCode === ErrorCode.NONE) {
          return { ...d, authorizedOperations: groupAuthorizedOperations(ctx, groupId) }
        }
        return d
      }),
    })
  },
  errorResponse(request, errorCode) {
    return createDescribeGroupsResponse({ groups: request.groups.map((g) => row(g, errorCode)) })
  },
})
