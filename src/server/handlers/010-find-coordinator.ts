// FindCoordinator (key 10): serves v0–v6. This node coordinates every group; v4+ answers a batch of
// keys. Key type 0 (GROUP) needs DESCRIBE on the group, key type 1 (TRANSACTION) DESCRIBE on the
// transactional id; both are coordinated here. Key type 2 (SHARE) has no coordinator.
// As in Kafka (KafkaApis.getCoordinator), a key that passed its check creates the coordinator's
// topic (`__consumer_offsets`, `__transaction_state`) when it does not exist yet, so that it is
// listed once groups or transactions have been used. Kafka answers COORDINATOR_NOT_AVAILABLE while
// its coordinator waits for the topic; the coordinators here keep their state elsewhere and are
// ready, so the answer waits for the creation and names this node.
import { ErrorCode } from '../../protocol/errors.js'
import {
  createFindCoordinatorResponse,
  type FindCoordinatorResponse,
  type FindCoordinatorResponseCoordinator,
} from '../../protocol/generated/messages/FindCoordinatorResponse.js'
import { GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from '../../protocol/topics.js'
import { defineHandler, type RequestContext } from '../router.js'
import { autoCreateTopics } from '../topics/auto-create.js'

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
    let response: FindCoordinatorResponse
    let found: boolean
    if (ctx.apiVersion >= 4) {
      const coordinators = request.coordinatorKeys.map((key) => lookup(key, request.keyType, ctx))
      found = coordinators.some((c) => c.errorCode === ErrorCode.NONE)
      response = createFindCoordinatorResponse({ coordinators })
    } else {
      const c = lookup(request.key, request.keyType, ctx)
      found = c.errorCode === ErrorCode.NONE
      response = createFindCoordinatorResponse({
        errorCode: c.errorCode,
        errorMessage: c.errorMessage,
        nodeId: c.nodeId,
        host: c.host,
        port: c.port,
      })
    }
    const topic = request.keyType === GROUP ? GROUP_METADATA_TOPIC_NAME : TRANSACTION_STATE_TOPIC_NAME
    if (!found || ctx.server.topics.byName(topic) !== undefined) return response
    return autoCreateTopics(ctx.server, [topic]).then(() => response)
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
