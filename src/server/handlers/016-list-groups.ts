// ListGroups (key 16): serves v0–v5 (v4 adds the states filter and GroupState, v5 the types filter
// and GroupType). Streams groups list as protocol type "streams"; simple groups (offsets only) as
// classic groups with no protocol in state Empty. Without DESCRIBE on the cluster, only groups the
// principal may describe are listed, as Kafka does.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { createListGroupsResponse } from '../../protocol/generated/messages/ListGroupsResponse.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 16,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    const statesFilter = ctx.apiVersion >= 4 ? request.statesFilter : []
    const typesFilter = ctx.apiVersion >= 5 ? request.typesFilter : []
    const result = await coordinatorFrom(ctx.server.coordinator).listGroups(statesFilter, typesFilter)
    const { authorizer } = ctx.server
    const all = authorizer.authorize(ctx.principal, 'DESCRIBE', 'CLUSTER', 'kafka-cluster')
    const groups = all
      ? result.groups
      : result.groups.filter((g) => authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', g.groupId))
    return createListGroupsResponse({ errorCode: result.errorCode, groups })
  },
  errorResponse(_request, errorCode) {
    return createListGroupsResponse({ errorCode })
  },
})
