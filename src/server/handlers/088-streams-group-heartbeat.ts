// StreamsGroupHeartbeat (key 88): serves v0–v1 (KIP-1071). UNSUPPORTED_VERSION when
// group.coordinator.rebalance.protocols does not include streams; GROUP_AUTHORIZATION_FAILED without
// READ on the group; otherwise the group coordinator runs the heartbeat on the group's shard.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import { createStreamsGroupHeartbeatResponse } from '../../protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { clientHostOf, defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 88,
  minVersion: 0,
  maxVersion: 1,
  handle(request, ctx) {
    if (!ctx.server.authorizer.authorize(ctx.principal, 'READ', 'GROUP', request.groupId)) {
      return createStreamsGroupHeartbeatResponse({
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
        errorMessage: errorInfo(ErrorCode.GROUP_AUTHORIZATION_FAILED).message,
      })
    }
    return coordinatorFrom(ctx.server.coordinator).streamsGroupHeartbeat(
      { apiVersion: ctx.apiVersion, clientId: ctx.clientId ?? '', clientHost: clientHostOf(ctx) },
      request,
    )
  },
  errorResponse(_request, errorCode) {
    return createStreamsGroupHeartbeatResponse({ errorCode, errorMessage: errorInfo(errorCode).message })
  },
})
