// StreamsGroupTopologyDescriptionUpdate (key 93, KIP-1331): serves v0. Listed in ApiVersions whether
// or not a plugin is configured. In Kafka's order (kip1331-broker.md §3.1): UNSUPPORTED_VERSION (no
// message) when streams groups are disabled; GROUP_AUTHORIZATION_FAILED without READ on the group
// (a push is not a modification of the group, like an offset commit), and then the plugin is not
// called; otherwise the coordinator's push pipeline answers, UNSUPPORTED_VERSION with a message when
// no plugin is configured.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createStreamsGroupTopologyDescriptionUpdateResponse } from '../../protocol/generated/messages/StreamsGroupTopologyDescriptionUpdateResponse.js'
import { installGroupCoordinatorMetrics } from '../metrics.js'
import { defineHandler } from '../router.js'

// Kafka's topology-description sensors on prom-client's default registry (what /metrics serves).
installGroupCoordinatorMetrics()

export const handler = defineHandler({
  apiKey: 93,
  minVersion: 0,
  maxVersion: 0,
  async handle(request, ctx) {
    const coordinator = coordinatorFrom(ctx.server.coordinator)
    if (!coordinator.isStreamsEnabled) {
      return createStreamsGroupTopologyDescriptionUpdateResponse({ errorCode: ErrorCode.UNSUPPORTED_VERSION })
    }
    if (!ctx.server.authorizer.authorize(ctx.principal, 'READ', 'GROUP', request.groupId)) {
      return createStreamsGroupTopologyDescriptionUpdateResponse({
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
      })
    }
    const r = await coordinator.streamsGroupTopologyDescriptionUpdate(request)
    return createStreamsGroupTopologyDescriptionUpdateResponse({
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
    })
  },
  errorResponse(_request, errorCode) {
    return createStreamsGroupTopologyDescriptionUpdateResponse({ errorCode })
  },
})
