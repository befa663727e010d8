// CreatePartitions (key 37): serves v0–v3 (data-plane.md §10.1), with the checks of Kafka's
// ControllerApis.createPartitions and ReplicationControlManager.createPartitions, one result per
// topic in request order:
//   1. A topic named twice: INVALID_REQUEST "Duplicate topic name." (each time).
//   2. No ALTER on the topic: TOPIC_AUTHORIZATION_FAILED.
//   3. An unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
//   4. Count equal to the current count, or below it: INVALID_PARTITIONS with Kafka's message.
//   5. Assignments given: one per added partition, each naming this node once (the topic's
//      replication factor is 1), else INVALID_REPLICA_ASSIGNMENT with Kafka's message.
//   6. The server's partition limits (topic.max.partitions, max.partitions), as for CreateTopics.
//   7. Unless ValidateOnly: the new count is written to the catalog and the new partitions' logs are
//      created (empty, at offset 0, leader epoch 0) before the answer. Existing partitions are
//      untouched, so keyed data does not move.
import { ErrorCode } from '../../protocol/errors.js'
import type {
  CreatePartitionsRequest,
  CreatePartitionsRequestCreatePartitionsTopic,
} from '../../protocol/generated/messages/CreatePartitionsRequest.js'
import {
  type CreatePartitionsResponse,
  type CreatePartitionsResponseCreatePartitionsTopicResult,
  createCreatePartitionsResponse,
} from '../../protocol/generated/messages/CreatePartitionsResponse.js'
import { TopicAuthorizations } from '../data/requests.js'
import { defineHandler, type RequestContext } from '../router.js'

type Result = CreatePartitionsResponseCreatePartitionsTopicResult

const result = (name: string, errorCode: number, errorMessage: string | null = null): Result => ({
  name,
  errorCode,
  errorMessage,
})

/** Steps 3–5 for one topic: null when it may grow. */
function check(ctx: RequestContext, t: CreatePartitionsRequestCreatePartitionsTopic): Result | null {
  const topic = ctx.server.topics.byName(t.name)
  if (topic === undefined) return result(t.name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
  const current = topic.numPartitions
  if (t.count === current)
    return result(t.name, ErrorCode.INVALID_PARTITIONS, `Topic already has ${current} partition(s).`)
  if (t.count < current) {
    return result(
      t.name,
      ErrorCode.INVALID_PARTITIONS,
      `The topic ${t.name} currently has ${current} partition(s); ${t.count} would not be an increase.`,
    )
  }
  const added = t.count - current
  if (t.assignments !== null) {
    const invalid = (message: string) => result(t.name, ErrorCode.INVALID_REPLICA_ASSIGNMENT, message)
    if (t.assignments.length !== added) {
      return invalid(
        `Attempted to add ${added} additional partition(s), but only ${t.assignments.length} assignment(s) were specified.`,
      )
    }
    const nodeId = ctx.server.nodeId
    for (const a of t.assignments) {
      if (a.brokerIds.length === 0)
        return invalid('The manual partition assignment includes an empty replica list.')
      const seen = new Set<number>()
      for (const b of a.brokerIds) {
        if (b !== nodeId)
          return invalid(
            `The manual partition assignment includes broker ${b}, but no such broker is registered.`,
          )
        if (seen.has(b))
          return invalid(`The manual partition assignment includes the broker ${b} more than once.`)
        seen.add(b)
      }
      if (a.brokerIds.length !== topic.replicationFactor) {
        return invalid(
          `The manual partition assignment includes a partition with ${a.brokerIds.length} replica(s), but this is not consistent with previous partitions, which have ${topic.replicationFactor} replica(s).`,
        )
      }
    }
  }
  return null
}

function errorResponse(request: CreatePartitionsRequest, errorCode: number): CreatePartitionsResponse {
  return createCreatePartitionsResponse({ results: request.topics.map((t) => result(t.name, errorCode)) })
}

export const handler = defineHandler({
  apiKey: 37,
  minVersion: 0,
  maxVersion: 3,
  async handle(request, ctx) {
    const catalog = ctx.server.topics
    const auth = new TopicAuthorizations(ctx)
    const counts = new Map<string, number>()
    for (const t of request.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1)
    let pending = 0
    const results: Result[] = []
    for (const t of request.topics) {
      // 1–2.
      if ((counts.get(t.name) ?? 0) > 1) {
        results.push(result(t.name, ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'))
        continue
      }
      if (!auth.allowed('ALTER', t.name)) {
        results.push(result(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        continue
      }
      // 3–5.
      const refused = check(ctx, t)
      if (refused !== null) {
        results.push(refused)
        continue
      }
      // 6.
      const added = t.count - (catalog.byName(t.name)?.numPartitions ?? 0)
      const limit = catalog.checkPartitionLimits(t.name, t.count, added, pending)
      if (limit !== null) {
        results.push(result(t.name, ErrorCode[limit.error], limit.message))
        continue
      }
      pending += added
      // 7.
      if (!request.validateOnly) {
        const updated = await catalog.increasePartitions(t.name, t.count)
        if (updated === undefined) {
          results.push(result(t.name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
          continue
        }
      }
      results.push(result(t.name, ErrorCode.NONE))
    }
    return createCreatePartitionsResponse({ results })
  },
  errorResponse(request, errorCode) {
    return errorResponse(request, errorCode)
  },
})
