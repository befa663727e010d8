// LeaveGroup (key 13): serves v0–v5. v0–2 name one member at the top level; v3+ a batch of members
// (by member id, or by group.instance.id for administrative removal).
import { ErrorCode } from '../../protocol/errors.js'
import { createLeaveGroupResponse } from '../../protocol/generated/messages/LeaveGroupResponse.js'
import { defineHandler } from '../router.js'
import { classicContext, classicGroups, mayRead } from './011-join-group.js'

export const handler = defineHandler({
  apiKey: 13,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    if (!mayRead(ctx, request.groupId)) {
      return createLeaveGroupResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })
    }
    const classic = classicGroups(ctx)
    if (classic === undefined)
      return createLeaveGroupResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE })
    return classic.leaveGroup(classicContext(ctx), request)
  },
  errorResponse(_request, errorCode) {
    return createLeaveGroupResponse({ errorCode })
  },
})
