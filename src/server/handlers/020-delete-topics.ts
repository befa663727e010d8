// DeleteTopics (key 20): serves v1–v6. v1–v5 name topics; v6 names them or gives their ids. Errors
// follow Kafka's controller: unknown names UNKNOWN_TOPIC_OR_PARTITION, unknown ids UNKNOWN_TOPIC_ID,
// a name and an id together, neither, or a duplicate INVALID_REQUEST.
import { ErrorCode } from '../../protocol/errors.js'
import {
  createDeleteTopicsResponse,
  type DeleteTopicsResponseDeletableTopicResult,
} from '../../protocol/generated/messages/DeleteTopicsResponse.js'
import { defineHandler } from '../router.js'
import { ZERO_UUID } from '../topics/catalog.js'

function result(
  name: string | null,
  topicId: string,
  errorCode: number,
  errorMessage: string | null = null,
): DeleteTopicsResponseDeletableTopicResult {
  return { name, topicId, errorCode, errorMessage }
}

export const handler = defineHandler({
  apiKey: 20,
  minVersion: 1,
  maxVersion: 6,
  async handle(request, ctx) {
    const server = ctx.server
    const catalog = server.topics
    const responses: DeleteTopicsResponseDeletableTopicResult[] = []
    // 1. Collect names and ids; a value given twice is a duplicate and is not deleted.
    const names = new Map<string, number>()
    const ids = new Map<string, number>()
    const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1)
    if (ctx.apiVersion < 6) for (const n of request.topicNames) bump(names, n)
    else {
      for (const t of request.topics) {
        if (t.name === null) {
          if (t.topicId === ZERO_UUID) {
            responses.push(
              result(null, ZERO_UUID, ErrorCode.INVALID_REQUEST, 'Neither topic name nor id were specified.'),
            )
          } else bump(ids, t.topicId)
        } else if (t.topicId === ZERO_UUID) bump(names, t.name)
        else {
          responses.push(
            result(
              t.name,
              t.topicId,
              ErrorCode.INVALID_REQUEST,
              'You may not specify both topic name and topic id.',
            ),
          )
        }
      }
    }
    for (const [n, c] of names)
      if (c > 1) responses.push(result(n, ZERO_UUID, ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'))
    for (const [id, c] of ids)
      if (c > 1) responses.push(result(null, id, ErrorCode.INVALID_REQUEST, 'Duplicate topic id.'))

    // 2. Resolve ids to names, then check what may be deleted.
    const toDelete = new Map<string, string>() // name → id
    const deletable = (n: string) => server.authorizer.authorize(ctx.principal, 'DELETE', 'TOPIC', n)
    for (const [id, c] of ids) {
      if (c > 1) continue
      const t = catalog.byId(id)
      if (t === undefined) responses.push(result(null, id, ErrorCode.UNKNOWN_TOPIC_ID))
      else if (!deletable(t.name)) responses.push(result(null, id, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
      else toDelete.set(t.name, id)
    }
    for (const [n, c] of names) {
      if (c > 1) continue
      const t = catalog.byName(n)
      if (!deletable(n)) responses.push(result(n, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
      else if (t === undefined) responses.push(result(n, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
      else if (toDelete.has(n)) {
        toDelete.delete(n)
        responses.push(
          result(
            n,
            t.topicId,
            ErrorCode.INVALID_REQUEST,
            'The provided topic name maps to an ID that was already supplied.',
          ),
        )
      } else toDelete.set(n, t.topicId)
    }

    // 3. Delete in one durable write. A topic deleted meanwhile by another request is unknown now.
    const deleted = new Set((await catalog.deleteTopics([...toDelete.keys()])).map((t) => t.name))
    for (const [n, id] of toDelete) {
      responses.push(
        deleted.has(n) ? result(n, id, ErrorCode.NONE) : result(n, id, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
      )
    }
    if (deleted.size > 0)
      server.logger.info({ topics: [...deleted] }, `Deleted topics: ${[...deleted].join(', ')}`)
    return createDeleteTopicsResponse({ responses })
  },
  errorResponse(request, errorCode, ctx) {
    if (ctx.apiVersion < 6) {
      return createDeleteTopicsResponse({
        responses: request.topicNames.map((n) => result(n, ZERO_UUID, errorCode)),
      })
    }
    return createDeleteTopicsResponse({
      responses: request.topics.map((t) => result(t.name, t.topicId, errorCode)),
    })
  },
})
