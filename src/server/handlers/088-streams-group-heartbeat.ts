// StreamsGroupHeartbeat (key 88): serves v0–v1 (KIP-1071). Kafka's KafkaApis gates, in order
// (streams-groups.md §2.1 a): UNSUPPORTED_VERSION when group.coordinator.rebalance.protocols does
// not include streams; GROUP_AUTHORIZATION_FAILED without READ on the group; with a topology whose
// topic names are all legal and not Kafka-internal (the coordinator answers those with
// STREAMS_INVALID_TOPOLOGY), TOPIC_AUTHORIZATION_FAILED unless the principal may DESCRIBE every
// source, repartition and changelog topic. These errors carry no message. Otherwise the group
// coordinator runs the heartbeat on the group's shard; missing internal topics are created only with
// CREATE on the cluster or on each of them, else the MISSING_INTERNAL_TOPICS status says which
// topics were refused (§3.5).
import { coordinatorFrom, type StreamsHeartbeatRequestContext } from '../../coordinator/service/index.js'
import { topologyTopicNames } from '../../coordinator/shard/streams/topology.js'
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import type { StreamsGroupHeartbeatRequest } from '../../protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import { isInternalTopic, isValidTopicName } from '../../protocol/topics.js'
import {
  createStreamsGroupHeartbeatResponse,
  type StreamsGroupHeartbeatResponse,
} from '../../protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { unauthorizedTopics } from '../auth/authorized-operations.js'
import { clientHostOf, defineHandler, type RequestContext } from '../router.js'

/** Of the internal topics to create, those the principal may not create (none with CREATE on the cluster). */
function refusedCreations(ctx: RequestContext, names: readonly string[]): string[] {
  if (ctx.server.authorizer.authorize(ctx.principal, 'CREATE', 'CLUSTER', 'kafka-cluster')) return []
  return unauthorizedTopics(ctx, 'CREATE', names)
}

/**
 * The request facts the coordinator needs; refused creations are worked out only when it asks. The
 * coordinator keeps it only while an answer it returns as a promise is pending, so the object of a
 * heartbeat answered at once serves the next one.
 */
class HeartbeatContext implements StreamsHeartbeatRequestContext {
  apiVersion: number
  clientId: string
  clientHost: string
  #ctx: RequestContext

  constructor(ctx: RequestContext) {
    this.apiVersion = ctx.apiVersion
    this.clientId = ctx.clientId ?? ''
    this.clientHost = clientHostOf(ctx)
    this.#ctx = ctx
  }

  reset(ctx: RequestContext): this {
    this.apiVersion = ctx.apiVersion
    this.clientId = ctx.clientId ?? ''
    this.clientHost = clientHostOf(ctx)
    this.#ctx = ctx
    return this
  }

  unauthorizedToCreate(names: readonly string[]): readonly string[] {
    return refusedCreations(this.#ctx, names)
  }
}

/** The context of the last heartbeat answered at once, free for the next. */
let freeContext: HeartbeatContext | null = null

type Answer = StreamsGroupHeartbeatResponse | Promise<StreamsGroupHeartbeatResponse>

function heartbeat(
  request: StreamsGroupHeartbeatRequest,
  ctx: RequestContext,
  heartbeatCtx: HeartbeatContext,
): Answer {
  const coordinator = coordinatorFrom(ctx.server.coordinator)
  // 1. Streams groups disabled: the coordinator's UNSUPPORTED_VERSION, before any authorization.
  if (!coordinator.isStreamsEnabled) return coordinator.streamsGroupHeartbeat(heartbeatCtx, request)
  // 2. READ on the group.
  if (!ctx.server.authorizer.authorize(ctx.principal, 'READ', 'GROUP', request.groupId)) {
    return createStreamsGroupHeartbeatResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })
  }
  // 3. DESCRIBE on every topic of the topology, once its names passed Kafka's name checks.
  if (request.topology !== null) {
    const topics = topologyTopicNames(request.topology.subtopologies)
    const checkable = topics.every((t) => !isInternalTopic(t) && isValidTopicName(t))
    if (checkable && unauthorizedTopics(ctx, 'DESCRIBE', topics).length > 0) {
      return createStreamsGroupHeartbeatResponse({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })
    }
  }
  return coordinator.streamsGroupHeartbeat(heartbeatCtx, request)
}

export const handler = defineHandler({
  apiKey: 88,
  minVersion: 0,
  maxVersion: 1,
  // The request context is kept (by the HeartbeatContext) only while a promised answer is pending.
  keepsNoContext: true,
  handle(request, ctx) {
    const heartbeatCtx = freeContext?.reset(ctx) ?? new HeartbeatContext(ctx)
    freeContext = null
    const answer = heartbeat(request, ctx, heartbeatCtx)
    if (!(answer instanceof Promise)) freeContext = heartbeatCtx
    return answer
  },
  errorResponse(_request, errorCode) {
    return createStreamsGroupHeartbeatResponse({ errorCode, errorMessage: errorInfo(errorCode).message })
  },
})
