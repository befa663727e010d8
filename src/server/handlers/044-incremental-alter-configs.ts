// IncrementalAlterConfigs (key 44): serves v0–v1. The steps of a Kafka broker (ConfigAdminManager)
// and of the controller it forwards to (ControllerApis, ConfigurationControlManager), one result
// per resource in request order:
//
// 1. A resource (type and name) named twice: both INVALID_REQUEST "Each resource must appear at
//    most once."
// 2. Per resource: a config key named twice, INVALID_REQUEST "Error due to duplicate config keys";
//    a null value for anything but DELETE, INVALID_REQUEST "Null value not supported for : a, b";
//    an operation Kafka does not define, INVALID_REQUEST "Unknown operations type N".
// 3. By type: BROKER is checked as the broker checks it (node id, then every key it would set is
//    refused: nothing can be updated dynamically); TOPIC and GROUP go on; BROKER_LOGGER,
//    CLIENT_METRICS (not served) and unknown types get INVALID_REQUEST "Unknown resource type N".
// 4. Authorization, ALTER_CONFIGS: on the CLUSTER for BROKER (CLUSTER_AUTHORIZATION_FAILED), on the
//    topic for TOPIC (TOPIC_AUTHORIZATION_FAILED), on the group for GROUP (GROUP_AUTHORIZATION_FAILED).
// 5. BROKER: nothing left to do (only deletions get here). TOPIC: Kafka's checks on the topic's
//    resulting configs (names, values and ranges, min.compaction.lag.ms ≤ max.compaction.lag.ms,
//    existence); unless ValidateOnly a change is written to the topic catalog and the partition
//    logs take it at once (retention, segment size, max.message.bytes, timestamps, compression,
//    cleanup policy, …). GROUP: the group config manager validates the group's resulting configs
//    (Kafka's GroupConfig rules and messages) and stores the valid changes in one append, unless
//    ValidateOnly.
import {
  AlterConfigOpType,
  coordinatorFrom,
  type GroupConfigAlteration,
} from '../../coordinator/service/index.js'
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import type { IncrementalAlterConfigsRequestAlterConfigsResource } from '../../protocol/generated/messages/IncrementalAlterConfigsRequest.js'
import {
  createIncrementalAlterConfigsResponse,
  type IncrementalAlterConfigsResponseAlterConfigsResourceResponse,
} from '../../protocol/generated/messages/IncrementalAlterConfigsResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { checkBrokerChange } from '../configs/broker.js'
import { ConfigResourceType } from '../configs/codes.js'
import { alterTopic, type ResourceOutcome } from '../configs/topic.js'
import { defineHandler, type RequestContext } from '../router.js'

type Resource = IncrementalAlterConfigsRequestAlterConfigsResource

const isKnownOp = (op: number) => op >= AlterConfigOpType.SET && op <= AlterConfigOpType.SUBTRACT
const fail = (errorCode: number, errorMessage: string | null): ResourceOutcome => ({
  errorCode,
  errorMessage,
})

/** Steps 2 and 3: the broker's preprocessing. Null when the resource goes on. */
function preprocess(ctx: RequestContext, r: Resource): ResourceOutcome | null {
  const names = r.configs.map((c) => c.name)
  if (new Set(names).size !== names.length)
    return fail(ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys')
  const nullUpdates = r.configs
    .filter((c) => c.configOperation !== AlterConfigOpType.DELETE && c.value === null)
    .map((c) => c.name)
  if (nullUpdates.length > 0)
    return fail(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${nullUpdates.join(', ')}`)
  switch (r.resourceType) {
    case ConfigResourceType.BROKER:
      return checkBrokerChange(ctx.server.nodeId, r.resourceName, r.configs)
    case ConfigResourceType.TOPIC:
    case ConfigResourceType.GROUP: {
      // Kafka's controller has no answer of its own for an operation it does not define (it fails
      // on it); the broker's BROKER message is used for every type.
      const badOp = r.configs.find((c) => !isKnownOp(c.configOperation))
      if (badOp !== undefined)
        return fail(ErrorCode.INVALID_REQUEST, `Unknown operations type ${badOp.configOperation}`)
      return null
    }
    default:
      return fail(ErrorCode.INVALID_REQUEST, `Unknown resource type ${r.resourceType}`)
  }
}

/** Step 4. */
function authorization(ctx: RequestContext, r: Resource): ResourceOutcome | null {
  const auth = ctx.server.authorizer
  let error: number
  if (r.resourceType === ConfigResourceType.TOPIC) {
    if (auth.authorize(ctx.principal, 'ALTER_CONFIGS', 'TOPIC', r.resourceName)) return null
    error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
  } else if (r.resourceType === ConfigResourceType.GROUP) {
    if (auth.authorize(ctx.principal, 'ALTER_CONFIGS', 'GROUP', r.resourceName)) return null
    error = ErrorCode.GROUP_AUTHORIZATION_FAILED
  } else {
    if (auth.authorize(ctx.principal, 'ALTER_CONFIGS', 'CLUSTER', CLUSTER_NAME)) return null
    error = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
  }
  return fail(error, errorInfo(error).message)
}

export const handler = defineHandler({
  apiKey: 44,
  minVersion: 0,
  maxVersion: 1,
  async handle(request, ctx) {
    const outcomes: (ResourceOutcome | undefined)[] = request.resources.map(() => undefined)
    // 1. Resources named twice.
    const count = new Map<string, number>()
    const id = (r: Resource) => `${r.resourceType}\u0000${r.resourceName}`
    for (const r of request.resources) count.set(id(r), (count.get(id(r)) ?? 0) + 1)
    const groups: { index: number; alteration: GroupConfigAlteration }[] = []
    const topicWrites: { index: number; name: string; configs: Readonly<Record<string, string>> }[] = []
    request.resources.forEach((r, i) => {
      if ((count.get(id(r)) ?? 0) > 1) {
        outcomes[i] = fail(ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.')
        return
      }
      // 2–4.
      const refused = preprocess(ctx, r) ?? authorization(ctx, r)
      if (refused !== null) {
        outcomes[i] = refused
        return
      }
      // 5.
      if (r.resourceType === ConfigResourceType.BROKER) outcomes[i] = fail(ErrorCode.NONE, null)
      else if (r.resourceType === ConfigResourceType.TOPIC) {
        const outcome = alterTopic(ctx.server.topics, r.resourceName, r.configs)
        outcomes[i] = outcome
        if (outcome.configs !== undefined && !request.validateOnly)
          topicWrites.push({ index: i, name: r.resourceName, configs: outcome.configs })
      } else {
        groups.push({
          index: i,
          alteration: {
            groupId: r.resourceName,
            changes: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })),
          },
        })
      }
    })
    for (const w of topicWrites) {
      if ((await ctx.server.topics.setConfigs(w.name, w.configs)) === undefined) {
        outcomes[w.index] = fail(
          ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          `The topic '${w.name}' does not exist.`,
        )
      }
    }
    if (groups.length > 0) {
      const results = await coordinatorFrom(ctx.server.coordinator).groupConfigs.alter(
        groups.map((g) => g.alteration),
        request.validateOnly,
      )
      groups.forEach((g, k) => {
        outcomes[g.index] = results[k]
      })
    }
    const responses: IncrementalAlterConfigsResponseAlterConfigsResourceResponse[] = request.resources.map(
      (r, i) => ({
        errorCode: outcomes[i]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR,
        errorMessage: outcomes[i]?.errorMessage ?? null,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
      }),
    )
    return createIncrementalAlterConfigsResponse({ responses })
  },
  errorResponse(request, errorCode) {
    return createIncrementalAlterConfigsResponse({
      responses: request.resources.map((r) => ({
        errorCode,
        errorMessage: null,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
      })),
    })
  },
})
