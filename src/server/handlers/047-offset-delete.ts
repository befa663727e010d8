// OffsetDelete (key 47): serves v0. Group errors (INVALID_GROUP_ID, GROUP_ID_NOT_FOUND,
// GROUP_AUTHORIZATION_FAILED) answer the whole request; per partition, unknown topics or partitions
// get UNKNOWN_TOPIC_OR_PARTITION, topics a streams group consumes GROUP_SUBSCRIBED_TO_TOPIC, and the
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
    const partitionError = (topic: string, partition: number): number | null => {
      const info = server.topics.byName(topic)
      if (info === undefined || partition < 0 || partition >= info.numPartitions)
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
      if (!server.authorizer.authorize(ctx.principal, 'READ', 'TOPIC', topic))
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
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
