// ListOffsets (key 2): serves v1–v11 on the partition logs, led by this node at leader epoch 0
// (as its Metadata says). Each partition gets what a Kafka broker answers (KafkaApis
// .handleListOffsetRequest, ReplicaManager.fetchOffset, Partition and UnifiedLog
// fetchOffsetForTimestamp; data-plane.md §7), in these steps:
//   1. DESCRIBE on each topic; topics without it answer TOPIC_AUTHORIZATION_FAILED for every
//      partition as asked (after the authorized topics, as Kafka merges them).
//   2. An IsolationLevel other than 0 or 1 fails the request: INVALID_REQUEST everywhere, logged at
//      DEBUG. Kafka's IsolationLevel.forId throws there, which Kafka answers UNKNOWN_SERVER_ERROR
//      and logs as an unexpected error; the value is the client's mistake, not a server fault.
//   3. A partition named twice: INVALID_REQUEST (one answer for it).
//   4. A negative timestamp that is not a known code, or a code newer than the request version
//      (-3 from v7, -4 from v8, -5 from v9, -6 from v11): UNSUPPORTED_VERSION.
//   5. An unknown topic or a partition outside the topic: UNKNOWN_TOPIC_OR_PARTITION.
//   6. CurrentLeaderEpoch (v4+) other than -1: older than 0 is FENCED_LEADER_EPOCH, newer is
//      UNKNOWN_LEADER_EPOCH.
//   7. The log answers: latest (-1) the high watermark (read_uncommitted) or the last stable offset
//      (read_committed); earliest (-2) and earliest local (-4) the log start offset; latest tiered
//      (-5) and earliest pending upload (-6) -1 (no remote storage); max timestamp (-3) the record
//      with the largest timestamp; a timestamp the first record at or after it. A record at or
//      beyond the readable end counts as none (offset -1, timestamp -1). The leader epoch is
//      written from v4 only.
// Every ReplicaId is answered the same way. Topics come back in the order first asked, each
// partition once.
import { invalidRequest } from '../../protocol/api-error.js'
import { ErrorCode } from '../../protocol/errors.js'
import type {
  ListOffsetsRequest,
  ListOffsetsRequestListOffsetsPartition,
} from '../../protocol/generated/messages/ListOffsetsRequest.js'
import {
  createListOffsetsResponse,
  type ListOffsetsResponse,
  type ListOffsetsResponseListOffsetsPartitionResponse,
  type ListOffsetsResponseListOffsetsTopicResponse,
} from '../../protocol/generated/messages/ListOffsetsResponse.js'
import { toBigInt } from '../data/requests.js'
import { defineHandler, type RequestContext } from '../router.js'

/** The special timestamps and the first ListOffsets version that may carry each. */
const MIN_VERSION_OF_CODE: ReadonlyMap<bigint, number> = new Map([
  [-1n, 1], // latest
  [-2n, 1], // earliest
  [-3n, 7], // max timestamp (KIP-734)
  [-4n, 8], // earliest local (KIP-405)
  [-5n, 9], // latest tiered (KIP-1005)
  [-6n, 11], // earliest pending upload (KIP-1023)
])

function answer(
  partitionIndex: number,
  errorCode: number,
  offset = -1n,
  leaderEpoch = -1,
): ListOffsetsResponseListOffsetsPartitionResponse {
  return { partitionIndex, errorCode, timestamp: -1n, offset, leaderEpoch }
}

/** Steps 4–7 for one authorized, unduplicated partition. */
function lookUp(
  ctx: RequestContext,
  topic: string,
  topicPartitions: number | undefined,
  p: ListOffsetsRequestListOffsetsPartition,
  isolationLevel: 'read_uncommitted' | 'read_committed',
):
  | ListOffsetsResponseListOffsetsPartitionResponse
  | Promise<ListOffsetsResponseListOffsetsPartitionResponse> {
  const version = ctx.apiVersion
  const ts = p.timestamp
  if (ts < 0n) {
    const min = MIN_VERSION_OF_CODE.get(ts)
    if (min === undefined || version < min) return answer(p.partitionIndex, ErrorCode.UNSUPPORTED_VERSION)
  }
  const log =
    topicPartitions === undefined || p.partitionIndex < 0 || p.partitionIndex >= topicPartitions
      ? undefined
      : ctx.server.data.partition(topic, p.partitionIndex)
  if (log === undefined)
    return answer(p.partitionIndex, ctx.server.data.missingPartitionError(topic, p.partitionIndex))
  const current = version >= 4 ? p.currentLeaderEpoch : -1
  if (current !== -1) {
    if (current < log.leaderEpoch) return answer(p.partitionIndex, ErrorCode.FENCED_LEADER_EPOCH)
    if (current > log.leaderEpoch) return answer(p.partitionIndex, ErrorCode.UNKNOWN_LEADER_EPOCH)
  }
  return log.listOffsets(Number(ts), isolationLevel).then((r) => ({
    partitionIndex: p.partitionIndex,
    errorCode: r.errorCode,
    timestamp: toBigInt(r.timestamp),
    offset: toBigInt(r.offset),
    leaderEpoch: version >= 4 ? r.leaderEpoch : -1,
  }))
}

/** Kafka's getErrorResponse: every partition as asked, with `errorCode`. */
function errorResponse(request: ListOffsetsRequest, errorCode: number): ListOffsetsResponse {
  return createListOffsetsResponse({
    topics: request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => answer(p.partitionIndex, errorCode)),
    })),
  })
}

export const handler = defineHandler({
  apiKey: 2,
  minVersion: 1,
  maxVersion: 11,
  handle(request, ctx) {
    const { server } = ctx

    // 1. DESCRIBE on each topic name, once per name.
    const mayDescribe = new Map<string, boolean>()
    for (const t of request.topics) {
      if (!mayDescribe.has(t.name))
        mayDescribe.set(t.name, server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'TOPIC', t.name))
    }
    const authorized = request.topics.filter((t) => mayDescribe.get(t.name) === true)
    const unauthorized: ListOffsetsResponseListOffsetsTopicResponse[] = request.topics
      .filter((t) => mayDescribe.get(t.name) !== true)
      .map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => answer(p.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED)),
      }))
    if (authorized.length === 0) return createListOffsetsResponse({ topics: unauthorized })

    // 2. The isolation level is read only when there is something to look up.
    if (request.isolationLevel !== 0 && request.isolationLevel !== 1) {
      throw invalidRequest(`Unknown isolation level ${request.isolationLevel}`)
    }

    // 3. Partitions asked more than once.
    const seen = new Set<string>()
    const duplicated = new Set<string>()
    for (const t of authorized) {
      for (const p of t.partitions) {
        const key = `${t.name}\u0000${p.partitionIndex}`
        if (seen.has(key)) duplicated.add(key)
        else seen.add(key)
      }
    }

    // 4–7, one answer per distinct partition, grouped by topic in the order first asked.
    const isolationLevel = request.isolationLevel === 1 ? 'read_committed' : 'read_uncommitted'
    type Pending =
      | ListOffsetsResponseListOffsetsPartitionResponse
      | Promise<ListOffsetsResponseListOffsetsPartitionResponse>
    const byTopic = new Map<string, Map<number, Pending>>()
    for (const t of authorized) {
      let partitions = byTopic.get(t.name)
      if (partitions === undefined) {
        partitions = new Map()
        byTopic.set(t.name, partitions)
      }
      const numPartitions = server.topics.byName(t.name)?.numPartitions
      for (const p of t.partitions) {
        const key = `${t.name}\u0000${p.partitionIndex}`
        partitions.set(
          p.partitionIndex,
          duplicated.has(key)
            ? answer(p.partitionIndex, ErrorCode.INVALID_REQUEST)
            : lookUp(ctx, t.name, numPartitions, p, isolationLevel),
        )
      }
    }
    const entries = [...byTopic].map(([name, ps]) => ({ name, partitions: [...ps.values()] }))
    const build = (
      topics: { name: string; partitions: ListOffsetsResponseListOffsetsPartitionResponse[] }[],
    ): ListOffsetsResponse => createListOffsetsResponse({ topics: [...topics, ...unauthorized] })
    if (entries.every((t) => t.partitions.every((p) => !(p instanceof Promise)))) {
      return build(
        entries as { name: string; partitions: ListOffsetsResponseListOffsetsPartitionResponse[] }[],
      )
    }
    return Promise.all(
      entries.map(async (t) => ({ name: t.name, partitions: await Promise.all(t.partitions) })),
    ).then(build)
  },
  errorResponse(request, errorCode) {
    return errorResponse(request, errorCode)
  },
})
