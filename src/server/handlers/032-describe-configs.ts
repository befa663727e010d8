// DescribeConfigs (key 32): serves v1–v4, as Kafka's ConfigHelper answers it.
//
// 1. A resource type Kafka does not know fails the whole request: every resource INVALID_REQUEST.
// 2. Authorization, DESCRIBE_CONFIGS: on the CLUSTER for BROKER, BROKER_LOGGER and CLIENT_METRICS
//    (else CLUSTER_AUTHORIZATION_FAILED), on the topic for TOPIC (TOPIC_AUTHORIZATION_FAILED), on
//    the group for GROUP (GROUP_AUTHORIZATION_FAILED). Refused resources come after the others.
// 3. Per resource: GROUP — the group config keys (an empty name is INVALID_REQUEST "Group name must
//    not be empty"; a group need not exist); TOPIC — the topic configs (INVALID_TOPIC_EXCEPTION,
//    UNKNOWN_TOPIC_OR_PARTITION); BROKER — the static configuration of this node ("" is the
//    cluster-wide dynamic defaults: none); BROKER_LOGGER and CLIENT_METRICS are not served
//    (INVALID_REQUEST "Unsupported resource type: …").
// Entries are filtered by ConfigurationKeys (null or empty: all); synonyms only with
// IncludeSynonyms, documentation only with IncludeDocumentation.
// Bounds: a resource named again in the same request shares the entries of its first answer (the
// encoder only reads them), and one response describes at most MAX_DESCRIBED_ENTRIES entries; the
// resources beyond get POLICY_VIOLATION. A few bytes of request would otherwise ask for dozens of
// entries each, without limit.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import type { DescribeConfigsRequestDescribeConfigsResource } from '../../protocol/generated/messages/DescribeConfigsRequest.js'
import {
  createDescribeConfigsResponse,
  type DescribeConfigsResponseDescribeConfigsResourceResult,
  type DescribeConfigsResponseDescribeConfigsResult,
} from '../../protocol/generated/messages/DescribeConfigsResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { describeBroker } from '../configs/broker.js'
import { describeGroup } from '../configs/group.js'
import { ConfigResourceType, type DescribedConfig } from '../configs/codes.js'
import { describeTopic } from '../configs/topic.js'
import { defineHandler, type RequestContext } from '../router.js'

const KNOWN_TYPES: ReadonlySet<number> = new Set([
  ConfigResourceType.TOPIC,
  ConfigResourceType.BROKER,
  ConfigResourceType.BROKER_LOGGER,
  ConfigResourceType.CLIENT_METRICS,
  ConfigResourceType.GROUP,
])

type Resource = DescribeConfigsRequestDescribeConfigsResource
type Result = DescribeConfigsResponseDescribeConfigsResult

function failed(r: Resource, errorCode: number, errorMessage: string | null): Result {
  return { errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] }
}

/** Whether the principal may describe the resource, and Kafka's error when not. */
function authorization(ctx: RequestContext, r: Resource): number {
  const auth = ctx.server.authorizer
  switch (r.resourceType) {
    case ConfigResourceType.TOPIC:
      return auth.authorize(ctx.principal, 'DESCRIBE_CONFIGS', 'TOPIC', r.resourceName)
        ? ErrorCode.NONE
        : ErrorCode.TOPIC_AUTHORIZATION_FAILED
    case ConfigResourceType.GROUP:
      return auth.authorize(ctx.principal, 'DESCRIBE_CONFIGS', 'GROUP', r.resourceName)
        ? ErrorCode.NONE
        : ErrorCode.GROUP_AUTHORIZATION_FAILED
    default:
      return auth.authorize(ctx.principal, 'DESCRIBE_CONFIGS', 'CLUSTER', CLUSTER_NAME)
        ? ErrorCode.NONE
        : ErrorCode.CLUSTER_AUTHORIZATION_FAILED
  }
}

function describe(
  ctx: RequestContext,
  r: Resource,
  includeSynonyms: boolean,
  includeDocumentation: boolean,
): Result {
  let outcome: { readonly entries: DescribedConfig[] } | { errorCode: number; errorMessage: string | null }
  switch (r.resourceType) {
    case ConfigResourceType.GROUP:
      outcome = describeGroup(coordinatorFrom(ctx.server.coordinator), r.resourceName)
      break
    case ConfigResourceType.TOPIC:
      outcome = describeTopic(ctx.server.topics, r.resourceName, ctx.server.config.raw)
      break
    case ConfigResourceType.BROKER:
      outcome = describeBroker(ctx.server.config, ctx.server.nodeId, r.resourceName)
      break
    default:
      outcome = {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `Unsupported resource type: ${r.resourceType === ConfigResourceType.BROKER_LOGGER ? 'BROKER_LOGGER' : 'CLIENT_METRICS'}`,
      }
  }
  if (!('entries' in outcome)) return failed(r, outcome.errorCode, outcome.errorMessage)
  const keys = r.configurationKeys
  const wanted = keys === null || keys.length === 0 ? null : new Set(keys)
  const configs: DescribeConfigsResponseDescribeConfigsResourceResult[] = []
  for (const e of outcome.entries) {
    if (wanted !== null && !wanted.has(e.name)) continue
    configs.push({
      name: e.name,
      value: e.value,
      readOnly: e.readOnly,
      configSource: e.configSource,
      isSensitive: e.isSensitive,
      synonyms: includeSynonyms ? e.synonyms.map((s) => ({ ...s })) : [],
      configType: e.configType,
      documentation: includeDocumentation ? e.documentation : null,
    })
  }
  return {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    resourceType: r.resourceType,
    resourceName: r.resourceName,
    configs,
  }
}

/** The most config entries one DescribeConfigs response carries (Topograph only; Kafka has none). */
export const MAX_DESCRIBED_ENTRIES = 100_000

export const handler = defineHandler({
  apiKey: 32,
  minVersion: 1,
  maxVersion: 4,
  handle(request, ctx) {
    // 1. A resource type Kafka does not know: the whole request fails (Kafka throws while
    //    authorizing and answers with the request's error response).
    if (request.resources.some((r) => !KNOWN_TYPES.has(r.resourceType))) {
      return createDescribeConfigsResponse({
        results: request.resources.map((r) =>
          failed(r, ErrorCode.INVALID_REQUEST, errorInfo(ErrorCode.INVALID_REQUEST).message),
        ),
      })
    }
    // 2. Authorization; 3. the authorized resources, then the refused ones.
    const allowed: Result[] = []
    const refused: Result[] = []
    const answered = new Map<string, Result>()
    let entries = 0
    for (const r of request.resources) {
      const denied = authorization(ctx, r)
      if (denied !== ErrorCode.NONE) {
        refused.push(failed(r, denied, errorInfo(denied).message))
        continue
      }
      const key = JSON.stringify([r.resourceType, r.resourceName, r.configurationKeys ?? []])
      let result = answered.get(key)
      if (result === undefined) {
        result = describe(ctx, r, request.includeSynonyms, request.includeDocumentation)
        answered.set(key, result)
      }
      entries += result.configs.length
      if (entries > MAX_DESCRIBED_ENTRIES) {
        entries -= result.configs.length
        result = failed(
          r,
          ErrorCode.POLICY_VIOLATION,
          `The response would describe more than ${MAX_DESCRIBED_ENTRIES} config entries; describe fewer resources per request.`,
        )
      }
      allowed.push(result)
    }
    return createDescribeConfigsResponse({ results: [...allowed, ...refused] })
  },
  errorResponse(request, errorCode) {
    return createDescribeConfigsResponse({
      results: request.resources.map((r) => failed(r, errorCode, errorInfo(errorCode).message)),
    })
  },
})
