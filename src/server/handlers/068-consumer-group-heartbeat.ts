// ConsumerGroupHeartbeat (key 68): serves v0–v1. Consumer groups (KIP-848) are not served here:
// aimed at a streams group the heartbeat answers GROUP_ID_NOT_FOUND "Group <g> is not a consumer
// group." exactly as Kafka does; any other group id gets UNSUPPORTED_VERSION, Kafka's answer when
// the consumer protocol is not enabled (so a client falls back or fails clearly instead of waiting).
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createConsumerGroupHeartbeatResponse } from '../../protocol/generated/messages/ConsumerGroupHeartbeatResponse.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 68,
  minVersion: 0,
  maxVersion: 1,
  async handle(request, ctx) {
    const coordinator = coordinatorFrom(ctx.server.coordinator)
    if (!coordinator.isConsumerEnabled) {
      // Kafka's getErrorResponse: the code, no message.
      return createConsumerGroupHeartbeatResponse({
        errorCode: ErrorCode.UNSUPPORTED_VERSION,
        errorMessage: null,
        memberId: null,
      })
    }
    if (!ctx.server.authorizer.authorize(ctx.principal, 'READ', 'GROUP', request.groupId)) {
      // Kafka's error response here carries only the code (no message).
      return createConsumerGroupHeartbeatResponse({
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
        errorMessage: null,
        memberId: null,
      })
    }
    if (request.groupId === '') {
      return createConsumerGroupHeartbeatResponse({
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: "GroupId can't be empty.",
        memberId: null,
      })
    }
    return coordinator.consumerGroupHeartbeat(request.groupId)
  },
  errorResponse(_request, errorCode) {
    return createConsumerGroupHeartbeatResponse({ errorCode, memberId: null })
  },
})
