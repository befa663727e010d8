// ConsumerGroupHeartbeat (key 68): serves v0–v1 (KIP-848; v1 needs the member id from the client).
// Kafka's KafkaApis gates, in order: UNSUPPORTED_VERSION when group.coordinator.rebalance.protocols
// does not include consumer; GROUP_AUTHORIZATION_FAILED without READ on the group;
// TOPIC_AUTHORIZATION_FAILED unless the principal may DESCRIBE every subscribed topic name. These
// errors carry no message. Otherwise the group coordinator runs the heartbeat on the group's shard
// (docs/consumer-groups.md); the topics the group's subscription patterns match there are filtered
// by the principal's DESCRIBE rights, as Kafka's TopicRegexResolver filters them.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createConsumerGroupHeartbeatResponse } from '../../protocol/generated/messages/ConsumerGroupHeartbeatResponse.js'
import { unauthorizedTopics } from '../auth/authorized-operations.js'
import { clientHostOf, defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 68,
  minVersion: 0,
  maxVersion: 1,
  async handle(request, ctx) {
    const coordinator = coordinatorFrom(ctx.server.coordinator)
    const heartbeatCtx = {
      apiVersion: ctx.apiVersion,
      clientId: ctx.clientId ?? '',
      clientHost: clientHostOf(ctx),
      // 4. The topics a subscription pattern matches count only where the principal may DESCRIBE
      //    them (Kafka's TopicRegexResolver), checked when the coordinator matches the patterns.
      describableTopics: (topics: readonly string[]) => {
        const denied = new Set(unauthorizedTopics(ctx, 'DESCRIBE', topics))
        return denied.size === 0 ? topics : topics.filter((t) => !denied.has(t))
      },
    }
    // 1. Consumer groups disabled: the coordinator's UNSUPPORTED_VERSION, before any authorization.
    if (!coordinator.isConsumerEnabled) return coordinator.consumerGroupHeartbeat(heartbeatCtx, request)
    // 2. READ on the group.
    if (!ctx.server.authorizer.authorize(ctx.principal, 'READ', 'GROUP', request.groupId)) {
      return createConsumerGroupHeartbeatResponse({
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
        errorMessage: null,
        memberId: null,
      })
    }
    // 3. DESCRIBE on every subscribed topic name.
    const names = request.subscribedTopicNames
    if (names !== null && names.length > 0 && unauthorizedTopics(ctx, 'DESCRIBE', names).length > 0) {
      return createConsumerGroupHeartbeatResponse({
        errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        errorMessage: null,
        memberId: null,
      })
    }
    return coordinator.consumerGroupHeartbeat(heartbeatCtx, request)
  },
  errorResponse(_request, errorCode) {
    return createConsumerGroupHeartbeatResponse({ errorCode, memberId: null })
  },
})
