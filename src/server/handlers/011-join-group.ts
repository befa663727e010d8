// JoinGroup (key 11): serves v0–v9. Classic group membership: the answer is deferred until the
// join phase completes (see docs/classic-groups.md); the group coordinator's classic part does the
// work. Also holds the small helpers the other classic group handlers (12, 13, 14) share.
// A request that names one protocol twice in Protocols is answered INVALID_REQUEST before it
// reaches the group: a group elects a protocol every member supports once, and such a member's
// votes could never be counted.
import type { ClassicGroupsService, ClassicRequestContext } from '../../coordinator/service/classic-groups.js'
import { invalidRequest } from '../../protocol/api-error.js'
import { ErrorCode } from '../../protocol/errors.js'
import {
  createJoinGroupResponse,
  type JoinGroupResponse,
} from '../../protocol/generated/messages/JoinGroupResponse.js'
import { clientHostOf, defineHandler, type RequestContext } from '../router.js'

/** The classic groups part of the coordinator, when one is running. */
export function classicGroups(ctx: RequestContext): ClassicGroupsService | undefined {
  const c = ctx.server.coordinator as { readonly classicGroups?: ClassicGroupsService } | undefined
  return c?.classicGroups
}

/** The request as the classic manager sees it (Kafka's client host: "/" + the peer address). */
export function classicContext(ctx: RequestContext): ClassicRequestContext {
  return { apiVersion: ctx.apiVersion, clientId: ctx.clientId ?? '', clientHost: clientHostOf(ctx) }
}

export const mayRead = (ctx: RequestContext, groupId: string): boolean =>
  ctx.server.authorizer.authorize(ctx.principal, 'READ', 'GROUP', groupId)

/**
 * Before v7 the protocol name is not nullable (empty string instead); from v7 an empty name is sent
 * as null, as Kafka's JoinGroupResponse does.
 */
function forVersion(r: JoinGroupResponse, version: number): JoinGroupResponse {
  if (version < 7 && r.protocolName === null) return { ...r, protocolName: '' }
  if (version >= 7 && r.protocolName === '') return { ...r, protocolName: null }
  return r
}

export const handler = defineHandler({
  apiKey: 11,
  minVersion: 0,
  maxVersion: 9,
  async handle(request, ctx) {
    if (!mayRead(ctx, request.groupId)) {
      return forVersion(
        createJoinGroupResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }),
        ctx.apiVersion,
      )
    }
    const names = new Set<string>()
    for (const p of request.protocols) {
      if (names.has(p.name)) throw invalidRequest(`Protocol ${p.name} is listed more than once`)
      names.add(p.name)
    }
    const classic = classicGroups(ctx)
    if (classic === undefined) {
      return forVersion(
        createJoinGroupResponse({
          memberId: request.memberId,
          errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE,
        }),
        ctx.apiVersion,
      )
    }
    return forVersion(await classic.joinGroup(classicContext(ctx), request), ctx.apiVersion)
  },
  errorResponse(_request, errorCode, ctx) {
    return forVersion(createJoinGroupResponse({ errorCode }), ctx.apiVersion)
  },
})
