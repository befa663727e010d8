// OffsetFetch (key 9): serves v1–v10. v1–v7 fetch one group (v2+ may ask for every topic with a
// null topic list and carry a group-level error); v8+ fetch several groups; v9+ carry the member id
// and epoch the group checks (streams groups: member and exact epoch); v10 names topics by id.
// v7+ RequireStable: a partition with a pending transactional offset answers UNSTABLE_OFFSET_COMMIT.
// Authorization as Kafka: DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED), DESCRIBE on each
// named topic (TOPIC_AUTHORIZATION_FAILED partitions, after the others); a fetch of every topic
// leaves out the topics the principal may not describe.
import { coordinatorFrom } from '../../coordinator/service/index.js'
import type { OffsetFetchGroupInput } from '../../coordinator/shard/offsets/offset-metadata-manager.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { OffsetFetchRequest } from '../../protocol/generated/messages/OffsetFetchRequest.js'
import {
  createOffsetFetchResponse,
  type OffsetFetchResponse,
  type OffsetFetchResponseOffsetFetchResponseGroup,
} from '../../protocol/generated/messages/OffsetFetchResponse.js'
import { defineHandler, type RequestContext } from '../router.js'

interface GroupAsk {
  readonly groupId: string
  readonly memberId: string | null
  readonly memberEpoch: number
  /** v7+ RequireStable: pending transactional offsets answer UNSTABLE_OFFSET_COMMIT. */
  readonly requireStable: boolean
  /** null: every topic. */
  readonly topics:
    | readonly {
        readonly name: string
        readonly topicId: string
        readonly partitionIndexes: readonly number[]
      }[]
    | null
}

function asks(request: OffsetFetchRequest, version: number): GroupAsk[] {
  if (version < 8) {
    return [
      {
        groupId: request.groupId,
        memberId: null,
        memberEpoch: -1,
        requireStable: version >= 7 && request.requireStable,
        topics: request.topics === null ? null : request.topics.map((t) => ({ ...t, topicId: '' })),
      },
    ]
  }
  return request.groups.map((g) => ({
    groupId: g.groupId,
    memberId: version >= 9 ? g.memberId : null,
    memberEpoch: version >= 9 ? g.memberEpoch : -1,
    requireStable: request.requireStable,
    topics: g.topics,
  }))
}

async function fetchGroup(
  ask: GroupAsk,
  ctx: RequestContext,
): Promise<OffsetFetchResponseOffsetFetchResponseGroup> {
  const { server } = ctx
  if (!server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'GROUP', ask.groupId)) {
    return { groupId: ask.groupId, topics: [], errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }
  }
  const useTopicIds = ctx.apiVersion >= 10
  const mayDescribe = (name: string) => server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'TOPIC', name)
  const coordinator = coordinatorFrom(server.coordinator)
  // Named topics: ids (v10) resolved through the catalog; topics without DESCRIBE are not fetched and
  // are answered after the others with TOPIC_AUTHORIZATION_FAILED, as Kafka does. Topic ids the
  // catalog does not know are answered here (UNKNOWN_TOPIC_ID).
  const named =
    ask.topics === null
      ? null
      : ask.topics.map((t) => ({ ask: t, name: useTopicIds ? server.topics.byId(t.topicId)?.name : t.name }))
  const denied = (named ?? []).filter((t) => t.name !== undefined && !mayDescribe(t.name))
  const fetched = named === null ? null : named.filter((t) => !denied.includes(t))
  const input: OffsetFetchGroupInput = {
    groupId: ask.groupId,
    memberId: ask.memberId,
    memberEpoch: ask.memberEpoch,
    requireStable: ask.requireStable,
    topics:
      fetched === null
        ? null
        : fetched.flatMap((t) =>
            t.name === undefined ? [] : [{ name: t.name, partitionIndexes: t.ask.partitionIndexes }],
          ),
  }
  const result = await coordinator.fetchOffsets(input)
  if (result.errorCode !== ErrorCode.NONE) return result
  if (fetched === null) {
    // Every topic: offsets of topics the principal may not describe are left out.
    const visible = result.topics.filter((t) => mayDescribe(t.name))
    if (!useTopicIds) return { ...result, topics: visible }
    // v10 fetch-all answers with topic ids: offsets of topics no longer in the catalog are left out.
    return {
      ...result,
      topics: visible.flatMap((t) => {
        const info = server.topics.byName(t.name)
        return info === undefined ? [] : [{ ...t, topicId: info.topicId }]
      }),
    }
  }
  const byName = new Map(result.topics.map((t) => [t.name, t]))
  const missing = (
    t: { name: string; topicId: string; partitionIndexes: readonly number[] },
    errorCode: number,
  ) => ({
    name: t.name,
    topicId: t.topicId,
    partitions: t.partitionIndexes.map((p) => ({
      partitionIndex: p,
      committedOffset: -1n,
      committedLeaderEpoch: -1,
      metadata: '',
      errorCode,
    })),
  })
  return {
    ...result,
    topics: [
      ...fetched.map(({ ask: t, name }) => {
        const found = name === undefined ? undefined : byName.get(name)
        if (found === undefined) return missing(t, ErrorCode.UNKNOWN_TOPIC_ID)
        return { ...found, name: name ?? t.name, topicId: t.topicId }
      }),
      ...denied.map(({ ask: t, name }) =>
        missing({ ...t, name: name ?? t.name }, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
      ),
    ],
  }
}

/** The v1–v7 layout: one group, its error at the top (v2+) or on every partition (v1). */
function singleGroupResponse(
  group: OffsetFetchResponseOffsetFetchResponseGroup,
  request: OffsetFetchRequest,
  version: number,
): OffsetFetchResponse {
  if (group.errorCode !== ErrorCode.NONE && version < 2) {
    return createOffsetFetchResponse({
      topics: (request.topics ?? []).map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((p) => ({
          partitionIndex: p,
          committedOffset: -1n,
          committedLeaderEpoch: -1,
          metadata: '',
          errorCode: group.errorCode,
        })),
      })),
    })
  }
  return createOffsetFetchResponse({
    errorCode: group.errorCode,
    topics: group.topics.map((t) => ({ name: t.name, partitions: t.partitions })),
  })
}

export const handler = defineHandler({
  apiKey: 9,
  minVersion: 1,
  maxVersion: 10,
  async handle(request, ctx) {
    const groups = await Promise.all(asks(request, ctx.apiVersion).map((a) => fetchGroup(a, ctx)))
    if (ctx.apiVersion < 8) return singleGroupResponse(groups[0], request, ctx.apiVersion)
    return createOffsetFetchResponse({ groups })
  },
  errorResponse(request, errorCode, ctx) {
    if (ctx.apiVersion < 8) {
      return singleGroupResponse({ groupId: request.groupId, topics: [], errorCode }, request, ctx.apiVersion)
    }
    return createOffsetFetchResponse({
      groups: request.groups.map((g) => ({ groupId: g.groupId, topics: [], errorCode })),
    })
  },
})
