// SyncGroup (key 14): serves v0–v5. The leader hands the assignment over; followers wait for it
// (the answer is deferred, see docs/classic-groups.md). From v5 ProtocolType and ProtocolName are
// mandatory (INCONSISTENT_GROUP_PROTOCOL otherwise, checked by the classic manager).
import { ErrorCode } from '../../protocol/errors.js'
import { createSyncGroupResponse } from '../../protocol/generated/messages/SyncGroupResponse.js'
import { defineHandler } from '../router.js'
import { classicContext, classicGroups, mayRead } from './011-join-group.js'

export const handler = defineHandler({
  apiKey: 14,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    if (ctx.apiVersion >= 5 && (request.protocolType === null || request.protocolName === null)) {
      return createSyncGroupResponse({ errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL })
    }
    if (!mayRead(ctx, request.groupId)) {
      return createSyncGroupResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })
    }
    const classic = classicGroups(ctx)
    if (classic === undefined)
      return createSyncGroupResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE })
    return classic.syncGroup(classicContext(ctx), request)
  },
  errorResponse(_request, errorCode) {
    return createSyncGroupResponse({ errorCode })
  },
})
