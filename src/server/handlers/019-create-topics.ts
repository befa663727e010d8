// CreateTopics (key 19): serves v2–v7. Validation and errors follow Kafka's controller (see
// topics/catalog.ts); the topic is metadata only. Duplicate names in one request get INVALID_REQUEST
// "Duplicate topic name." and are not created.
import { ErrorCode, type ErrorName } from '../../protocol/errors.js'
import {
  type CreateTopicsResponseCreatableTopicConfigs,
  type CreateTopicsResponseCreatableTopicResult,
  createCreateTopicsResponse,
} from '../../protocol/generated/messages/CreateTopicsResponse.js'
import { defineHandler } from '../router.js'
import { ZERO_UUID } from '../topics/catalog.js'
import { TOPIC_CONFIGS } from '../topics/topic-configs.js'

/** Kafka's ConfigSource ids (DescribeConfigs): 1 = a topic override, 5 = the default. */
const DYNAMIC_TOPIC_CONFIG = 1
const DEFAULT_CONFIG = 5

function effectiveConfigs(
  overrides: Readonly<Record<string, string>>,
): CreateTopicsResponseCreatableTopicConfigs[] {
  return [...TOPIC_CONFIGS.keys()].sort().map((name) => {
    const set = Object.hasOwn(overrides, name)
    return {
      name,
      value: set ? overrides[name] : (TOPIC_CONFIGS.get(name)?.default ?? null),
      readOnly: false,
      configSource: set ? DYNAMIC_TOPIC_CONFIG : DEFAULT_CONFIG,
      isSensitive: false,
    }
  })
}

function failed(
  name: string,
  errorCode: number,
  errorMessage: string | null,
): CreateTopicsResponseCreatableTopicResult {
  return {
    name,
    topicId: ZERO_UUID,
    errorCode,
    errorMessage,
    topicConfigErrorCode: 0,
    numPartitions: -1,
    replicationFactor: -1,
    configs: [],
  }
}

export const handler = defineHandler({
  apiKey: 19,
  minVersion: 2,
  maxVersion: 7,
  async handle(request, ctx) {
    const server = ctx.server
    const counts = new Map<string, number>()
    for (const t of request.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1)
    const unique = request.topics.filter((t) => counts.get(t.name) === 1)
    const authorized = unique.filter(
      (t) =>
        server.authorizer.authorize(ctx.principal, 'CREATE', 'CLUSTER', 'kafka-cluster') ||
        server.authorizer.authorize(ctx.principal, 'CREATE', 'TOPIC', t.name),
    )
    const outcomes = await server.topics.createTopics(authorized, request.validateOnly)
    const byName = new Map(outcomes.map((o) => [o.name, o]))
    const results: CreateTopicsResponseCreatableTopicResult[] = []
    const reportedDuplicates = new Set<string>()
    for (const t of request.topics) {
      if (counts.get(t.name) !== 1) {
        if (!reportedDuplicates.has(t.name)) {
          reportedDuplicates.add(t.name)
          results.push(failed(t.name, ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'))
        }
        continue
      }
      const o = byName.get(t.name)
      if (o === undefined) {
        results.push(failed(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.'))
        continue
      }
      if (o.error !== 'NONE' || !('topicId' in o)) {
        results.push(failed(t.name, ErrorCode[o.error as ErrorName], o.message))
        continue
      }
      results.push({
        name: o.name,
        topicId: o.topicId,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        topicConfigErrorCode: ErrorCode.NONE,
        numPartitions: o.numPartitions,
        replicationFactor: o.replicationFactor,
        configs: effectiveConfigs(o.configs),
      })
    }
    const created = results.filter((r) => r.errorCode === ErrorCode.NONE).map((r) => r.name)
    if (created.length > 0) {
      server.logger.info(
        { topics: created, validateOnly: request.validateOnly },
        `${request.validateOnly ? 'Validate-only CreateTopics' : 'CreateTopics'} created: ${created.join(', ')}`,
      )
    }
    return createCreateTopicsResponse({ topics: results })
  },
  errorResponse(request, errorCode) {
    return createCreateTopicsResponse({ topics: request.topics.map((t) => failed(t.name, errorCode, null)) })
  },
})
