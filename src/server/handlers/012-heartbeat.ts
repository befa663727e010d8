// Heartbeat (key 12): serves v0–v4. A classic group member's liveness, and how it learns that a
// rebalance is in progress (REBALANCE_IN_PROGRESS).
import { ErrorCode } from '../../protocol/errors.js'
import { createHeartbeatResponse } from '../../protocol/generated/messages/HeartbeatResponse.js'
import { defineHandler } from '../router.js'
import { classicContext, classicGroups, mayRead } from './011-join-group.js'

export const handler = defineHandler({
  apiKey: 12,
  minVersion: 0,
  maxVersion: 4,
  async handle(request, ctx) {
    if (!mayRead(ctx, request.groupId)) {
      return createHeartbeatResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })
    }
    const classic = classicGroups(ctx)
    if (classic === undefined)
      return createHeartbeatResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE })
    return classic.heartbeat(classicContext(ctx), request)
  },
  errorResponse(_request, errorCode) {
    return createHeartbeatResponse({ errorCode })
  },
})
