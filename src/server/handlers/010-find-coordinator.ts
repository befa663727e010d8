// FindCoordinator (key 10): serves v0–v6. This node coordinates every group; v4+ answers a batch of
// keys. Key type 0 (GROUP) needs DESCRIBE on the group, key type 1 (TRANSACTION) DESCRIBE on the
// transactional id; both are coordinated here. Key type 2 (SHARE) has no coordinator.
import { ErrorCode } from '../../protocol/errors.js'
import {
  createFindCoordinatorResponse,
  type FindCoordinatorResponseCoordinator,
} from '../../protocol/generated/messages/FindCoordinatorResponse.js'
import { defineHandler, type RequestContext } from '../router.js'

const GROUP = 0
const TRANSACTION = 1
const SHARE = 2

function lookup(key: string, keyType: number, ctx: RequestContext): FindCoordinatorResponseCoordinator {
  const node = ctx.server.advertisedNode(ctx.listenerName)
  const fail = (errorCode: number, errorMessage: string | null): FindCoordinatorResponseCoordinator => ({
    key,
    nodeId: -1,
    host: '',
    port: -1,
    errorCode,
    errorMessage,
  })
  if (keyType === GROUP || keyType === TRANSACTION) {
    if (keyType === GROUP && !ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', key)) {
      return fail(ErrorCode.GROUP_AUTHORIZATION_FAILED, null)
    }
    if (
      keyType === TRANSACTION &&
      !ctx.server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'TRANSACTIONAL_ID', key)
    ) {
      return fail(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, null)
    }
    return {
      key,
      nodeId: node.nodeId,
      host: node.host,
      port: node.port,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
    }
  }
  if (keyType === SHARE) {
    // No share coordinator runs here.
    return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'The coordinator is not available.')
  }
  return fail(ErrorCode.INVALID_REQUEST, `Unknown coordinator type: ${keyType}`)
}

export const handler = defineHandler({
  apiKey: 10,
  minVersion: 0,
  maxVersion: 6,
  handle(request, ctx) {
    if (ctx.apiVersion >= 4) {
      return createFindCoordinatorResponse({
        coordinators: request.coordinatorKeys.map((key) => lookup(key, request.keyType, ctx)),
      })
    }
    const c = lookup(request.key, request.keyType, ctx)
    return createFindCoordinatorResponse({
      errorCode: c.errorCode,
      errorMessage: c.errorMessage,
      nodeId: c.nodeId,
      host: c.host,
      port: c.port,
    })
  },
  errorResponse(request, errorCode, ctx) {
    if (ctx.apiVersion >= 4) {
      return createFindCoordinatorResponse({
        coordinators: request.coordinatorKeys.map((key) => ({
          key,
          nodeId: -1,
          host: '',
          port: -1,
          errorCode,
          errorMessage: null,
        })),
      })
    }
    return createFindCoordinatorResponse({ errorCode, nodeId: -1, host: '', port: -1 })
  },
})
