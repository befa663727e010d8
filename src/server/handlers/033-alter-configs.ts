// AlterConfigs (key 33): serves v0–v2, the legacy form that replaces a resource's whole set of
// configs (IncrementalAlterConfigs changes single keys). Kafka's steps (ControllerApis
// .handleLegacyAlterConfigs, ConfigurationControlManager.legacyAlterConfigs):
//   1. A resource type Kafka does not define: UNSUPPORTED_VERSION "Unknown resource type N.".
//   2. A resource named a second time: one INVALID_REQUEST "Duplicate resource." for it, and no
//      other answer for any of its occurrences.
//   3. Authorization, ALTER_CONFIGS: on the topic for TOPIC (TOPIC_AUTHORIZATION_FAILED), on the
//      group for GROUP (GROUP_AUTHORIZATION_FAILED), on the cluster otherwise
//      (CLUSTER_AUTHORIZATION_FAILED).
//   4. TOPIC: the given configs become the topic's complete set (keys not given return to their
//      defaults), checked as IncrementalAlterConfigs checks them; unless ValidateOnly the new set
//      is written to the topic catalog and the partition logs take it at once. BROKER: checked as
//      IncrementalAlterConfigs checks a broker change (nothing can be set dynamically). Other
//      types: INVALID_REQUEST "Unknown resource type N" (no legacy changes for them here).
// Answers come in Kafka's order: steps 1–2, then 3, then 4, each in request order.
import { AlterConfigOpType } from '../../coordinator/service/index.js'
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import type { AlterConfigsRequestAlterConfigsResource } from '../../protocol/generated/messages/AlterConfigsRequest.js'
import {
  type AlterConfigsResponseAlterConfigsResourceResponse,
  createAlterConfigsResponse,
} from '../../protocol/generated/messages/AlterConfigsResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { checkBrokerChange } from '../configs/broker.js'
import { ConfigResourceType, configResourceTypeName } from '../configs/codes.js'
import { replaceTopicConfigs, type TopicChangeOutcome } from '../configs/topic.js'
import { defineHandler, type RequestContext } from '../router.js'

type Resource = AlterConfigsRequestAlterConfigsResource
type Answer = AlterConfigsResponseAlterConfigsResourceResponse

const answer = (r: Resource, errorCode: number, errorMessage: string | null): Answer => ({
  errorCode,
  errorMessage,
  resourceType: r.resourceType,
  resourceName: r.resourceName,
})

/** Step 3: null when allowed, else the error code. */
function refusal(ctx: RequestContext, r: Resource): number | null {
  const auth = ctx.server.authorizer
  if (r.resourceType === ConfigResourceType.TOPIC)
    return auth.authorize(ctx.principal, 'ALTER_CONFIGS', 'TOPIC', r.resourceName)
      ? null
      : ErrorCode.TOPIC_AUTHORIZATION_FAILED
  if (r.resourceType === ConfigResourceType.GROUP)
    return auth.authorize(ctx.principal, 'ALTER_CONFIGS', 'GROUP', r.resourceName)
      ? null
      : ErrorCode.GROUP_AUTHORIZATION_FAILED
  return auth.authorize(ctx.principal, 'ALTER_CONFIGS', 'CLUSTER', CLUSTER_NAME)
    ? null
    : ErrorCode.CLUSTER_AUTHORIZATION_FAILED
}

export const handler = defineHandler({
  apiKey: 33,
  minVersion: 0,
  maxVersion: 2,
  async handle(request, ctx) {
    const early: Answer[] = []
    // 1–2.
    const firstSeen = new Map<string, Resource>()
    const duplicated = new Set<string>()
    for (const r of request.resources) {
      if (configResourceTypeName(r.resourceType) === 'UNKNOWN') {
        early.push(answer(r, ErrorCode.UNSUPPORTED_VERSION, `Unknown resource type ${r.resourceType}.`))
        continue
      }
      const id = `${r.resourceType}\u0000${r.resourceName}`
      if (duplicated.has(id)) continue
      if (firstSeen.has(id)) {
        firstSeen.delete(id)
        duplicated.add(id)
        early.push(answer(r, ErrorCode.INVALID_REQUEST, 'Duplicate resource.'))
      } else firstSeen.set(id, r)
    }
    // 3.
    const allowed: Resource[] = []
    for (const r of firstSeen.values()) {
      const error = refusal(ctx, r)
      if (error === null) allowed.push(r)
      else early.push(answer(r, error, errorInfo(error).message))
    }
    // 4.
    const late: Answer[] = []
    for (const r of allowed) {
      if (r.resourceType === ConfigResourceType.TOPIC) {
        const outcome: TopicChangeOutcome = replaceTopicConfigs(ctx.server.topics, r.resourceName, r.configs)
        if (outcome.configs !== undefined && !request.validateOnly) {
          if ((await ctx.server.topics.setConfigs(r.resourceName, outcome.configs)) === undefined) {
            late.push(
              answer(
                r,
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                `The topic '${r.resourceName}' does not exist.`,
              ),
            )
            continue
          }
        }
        late.push(answer(r, outcome.errorCode, outcome.errorMessage))
      } else if (r.resourceType === ConfigResourceType.BROKER) {
        const refused = checkBrokerChange(
          ctx.server.nodeId,
          r.resourceName,
          r.configs.map((c) => ({ name: c.name, configOperation: AlterConfigOpType.SET, value: c.value })),
        )
        late.push(answer(r, refused?.errorCode ?? ErrorCode.NONE, refused?.errorMessage ?? null))
      } else {
        late.push(answer(r, ErrorCode.INVALID_REQUEST, `Unknown resource type ${r.resourceType}`))
      }
    }
    return createAlterConfigsResponse({ responses: [...early, ...late] })
  },
  errorResponse(request, errorCode) {
    return createAlterConfigsResponse({
      responses: request.resources.map((r) => answer(r, errorCode, null)),
    })
  },
})
