// OffsetDelete (key 47): serves v0. Group errors (INVALID_GROUP_ID, GROUP_ID_NOT_FOUND,
// GROUP_AUTHORIZATION_FAILED without DELETE on the group) answer the whole request; per partition,
// topics without READ get TOPIC_AUTHORIZATION_FAILED, unknown topics or partitions
// UNKNOWN_TOPIC_OR_PARTITION, topics a streams group consumes GROUP_SUBSCRIBED_TO_TOPIC, and the
// other partitions lose their committed offset (a tombstone) and answer NONE.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { createOffsetDeleteResponse } from '../../protocol/generated/messages/OffsetDeleteResponse.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 47,
  minVersion: 0,
  maxVersion: 0,
  async handle(request, ctx) {
    const { server } = ctx
    if (!server.authorizer.authorize(ctx.principal, 'DELETE', 'GROUP', request.groupId)) {
      return createOffsetDeleteResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })
    }
    // Kafka's order per topic: READ on the topic name first (TOPIC_AUTHORIZATION_FAILED, whether or
    // not it exists), then an unknown topic or partition (UNKNOWN_TOPIC_OR_PARTITION).
    const mayRead = new Map<string, boolean>()
    const partitionError = (topic: string, partition: number): number | null => {
      let may = mayRead.get(topic)
      if (may === undefined) {
        may = server.authorizer.authorize(ctx.principal, 'READ', 'TOPIC', topic)
        mayRead.set(topic, may)
      }
      if (!may) return ErrorCode.TOPIC_AUTHORIZATION_FAILED
      const info = server.topics.byName(topic)
      if (info === undefined || partition < 0 || partition >= info.numPartitions)
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
      return null
    }
    const valid = request.topics
      .map((t) => ({
        name: t.name,
        partitions: t.partitions
          .map((p) => p.partitionIndex)
          .filter((p) => partitionError(t.name, p) === null),
      }))
      .filter((t) => t.partitions.length > 0)
    const result = await coordinatorFrom(server.coordinator).deleteOffsets({
      groupId: request.groupId,
      topics: valid,
    })
    if (result.errorCode !== ErrorCode.NONE)
      return createOffsetDeleteResponse({ errorCode: result.errorCode })
    const answered = new Map<string, number>()
    for (const t of result.topics)
      for (const p of t.partitions) answered.set(`${t.name}\u0000${p.partitionIndex}`, p.errorCode)
    return createOffsetDeleteResponse({
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          errorCode:
            partitionError(t.name, p.partitionIndex) ??
            answered.get(`${t.name}\u0000${p.partitionIndex}`) ??
            ErrorCode.NONE,
        })),
      })),
    })
  },
  errorResponse(_request, errorCode) {
    return createOffsetDeleteResponse({ errorCode })
  },
})
