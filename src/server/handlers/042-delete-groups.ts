// DeleteGroups (key 42): serves v0–v3. An empty group is deleted with its offsets (offset
// tombstones, then the group's); a group with members gets NON_EMPTY_GROUP, an unknown id
// GROUP_ID_NOT_FOUND, an id the principal may not delete GROUP_AUTHORIZATION_FAILED. With a topology
// description plugin, a streams group's stored description is deleted first (KIP-1331); when the
// plugin fails, that group gets GROUP_DELETION_FAILED (134) with the plugin's message in the v3
// ErrorMessage (Topograph D1), and below v3 Kafka's rewrite to UNKNOWN_SERVER_ERROR.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createDeleteGroupsResponse } from '../../protocol/generated/messages/DeleteGroupsResponse.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 42,
  minVersion: 0,
  maxVersion: 3,
  async handle(request, ctx) {
    // Kafka's order: the names are de-duplicated and split by DELETE on the group; the coordinator's
    // results come first, then GROUP_AUTHORIZATION_FAILED for each group without DELETE.
    const allowed: string[] = []
    const denied: string[] = []
    for (const g of new Set(request.groupsNames)) {
      if (ctx.server.authorizer.authorize(ctx.principal, 'DELETE', 'GROUP', g)) allowed.push(g)
      else denied.push(g)
    }
    const deleted =
      allowed.length === 0 ? [] : await coordinatorFrom(ctx.server.coordinator).deleteGroups(allowed)
    return createDeleteGroupsResponse({
      results: [
        ...deleted.map((r) =>
          ctx.apiVersion < 3 && r.errorCode === ErrorCode.GROUP_DELETION_FAILED
            ? { ...r, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null }
            : r,
        ),
        ...denied.map((groupId) => ({
          groupId,
          errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
          errorMessage: null,
        })),
      ],
    })
  },
  errorResponse(request, errorCode) {
    return createDeleteGroupsResponse({
      results: request.groupsNames.map((groupId) => ({ groupId, errorCode, errorMessage: null })),
    })
  },
})
