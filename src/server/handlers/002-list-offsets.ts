// ListOffsets (key 2): serves v1–v11. Topograph serves no data plane, so every partition's log is
// empty (log start 0, high watermark 0, log end 0, no remote storage) and led by this node at
// leader epoch 0, as its Metadata says. Each partition gets what a Kafka broker answers for such a
// log (KafkaApis.handleListOffsetRequest, ReplicaManager.fetchOffset, Partition and UnifiedLog
// fetchOffsetForTimestamp), in these steps:
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
//   7. The empty log: latest (-1) offset 0; earliest (-2) and earliest local (-4) offset 0, both
//      with leader epoch 0; latest tiered (-5) and earliest pending upload (-6) offset -1 with
//      leader epoch -1 (no remote storage); max timestamp (-3) and every timestamp look-up find no
//      record: offset -1, timestamp -1, leader epoch -1. The timestamp is always -1.
// Every ReplicaId is answered the same way (a follower or debugging id reads up to the log end,
// which is 0 as well). Topics come back in the order first asked, each partition once.
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
import { defineHandler, InvalidRequestError } from '../router.js'

/** The leader epoch of every partition this node leads (Metadata reports the same). */
const LEADER_EPOCH = 0

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
  topicPartitions: number | undefined,
  p: ListOffsetsRequestListOffsetsPartition,
  version: number,
): ListOffsetsResponseListOffsetsPartitionResponse {
  const ts = p.timestamp
  if (ts < 0n) {
    const min = MIN_VERSION_OF_CODE.get(ts)
    if (min === undefined || version < min) return answer(p.partitionIndex, ErrorCode.UNSUPPORTED_VERSION)
  }
  if (topicPartitions === undefined || p.partitionIndex < 0 || p.partitionIndex >= topicPartitions) {
    return answer(p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
  }
  const current = version >= 4 ? p.currentLeaderEpoch : -1
  if (current !== -1) {
    if (current < LEADER_EPOCH) return answer(p.partitionIndex, ErrorCode.FENCED_LEADER_EPOCH)
    if (current > LEADER_EPOCH) return answer(p.partitionIndex, ErrorCode.UNKNOWN_LEADER_EPOCH)
  }
  switch (ts) {
    case -1n:
    case -2n:
    case -4n:
      // The leader epoch exists from v4 (Kafka sets it only there).
      return answer(p.partitionIndex, ErrorCode.NONE, 0n, version >= 4 ? LEADER_EPOCH : -1)
    default:
      // -3, -5, -6 and timestamp look-ups: nothing in an empty log.
      return answer(p.partitionIndex, ErrorCode.NONE)
  }
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
  handle(request, ctx): ListOffsetsResponse {
    const { server } = ctx
    const version = ctx.apiVersion

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
      throw new InvalidRequestError(`Unknown isolation level ${request.isolationLevel}`)
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
    const byTopic = new Map<string, Map<number, ListOffsetsResponseListOffsetsPartitionResponse>>()
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
            : lookUp(numPartitions, p, version),
        )
      }
    }
    const topics: ListOffsetsResponseListOffsetsTopicResponse[] = [...byTopic].map(([name, ps]) => ({
      name,
      partitions: [...ps.values()],
    }))
    return createListOffsetsResponse({ topics: [...topics, ...unauthorized] })
  },
  errorResponse(request, errorCode) {
    return errorResponse(request, errorCode)
  },
})
