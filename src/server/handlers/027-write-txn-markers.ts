// WriteTxnMarkers (key 27): serves v1–v2 (transactions.md §8.1; v0 was removed in Kafka 4.0). The
// transaction coordinator writes its markers directly; this API serves the admin client's
// `abortTransaction` and tools. ALTER or CLUSTER_ACTION on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED for every partition. Each marker goes through the coordinator's own
// marker writer (`PartitionMarkerWriter`): a data partition gets the control batch (origin
// coordinator, checked by the log), a `__consumer_offsets` partition settles the producer's pending
// transactional offsets, an unknown partition answers UNKNOWN_TOPIC_OR_PARTITION. Results of markers
// with the same producer id are answered together, as Kafka's map by producer id does.
import { ErrorCode } from '../../protocol/errors.js'
import type { WriteTxnMarkersRequest } from '../../protocol/generated/messages/WriteTxnMarkersRequest.js'
import {
  createWriteTxnMarkersResponse,
  type WriteTxnMarkersResponse,
  type WriteTxnMarkersResponseWritableTxnMarkerTopicResult,
} from '../../protocol/generated/messages/WriteTxnMarkersResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { defineHandler } from '../router.js'

function everyPartition(request: WriteTxnMarkersRequest, errorCode: number): WriteTxnMarkersResponse {
  return createWriteTxnMarkersResponse({
    markers: request.markers.map((m) => ({
      producerId: m.producerId,
      topics: m.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode })),
      })),
    })),
  })
}

export const handler = defineHandler({
  apiKey: 27,
  minVersion: 1,
  maxVersion: 2,
  async handle(request, ctx) {
    const auth = ctx.server.authorizer
    if (
      !auth.authorize(ctx.principal, 'ALTER', 'CLUSTER', CLUSTER_NAME) &&
      !auth.authorize(ctx.principal, 'CLUSTER_ACTION', 'CLUSTER', CLUSTER_NAME)
    ) {
      return everyPartition(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    }
    const writer = ctx.server.transactions.markerWriter
    const results = await Promise.all(
      request.markers.map((m) => {
        const topics = m.topics.map((t) => ({ topic: t.name, partitions: t.partitionIndexes }))
        return writer.writeTxnMarkers(
          {
            transactionalId: '',
            producerId: m.producerId,
            producerEpoch: m.producerEpoch,
            committed: m.transactionResult,
            coordinatorEpoch: m.coordinatorEpoch,
            transactionVersion: ctx.apiVersion >= 2 ? m.transactionVersion : 0,
            topics,
          },
          topics,
        )
      }),
    )
    // One entry per producer id; a partition named twice keeps its last result.
    const byProducer = new Map<bigint, Map<string, Map<number, number>>>()
    request.markers.forEach((m, i) => {
      let topics = byProducer.get(m.producerId)
      if (topics === undefined) {
        topics = new Map()
        byProducer.set(m.producerId, topics)
      }
      for (const r of results[i]) {
        let partitions = topics.get(r.topic)
        if (partitions === undefined) {
          partitions = new Map()
          topics.set(r.topic, partitions)
        }
        partitions.set(r.partition, r.errorCode)
      }
    })
    return createWriteTxnMarkersResponse({
      markers: [...byProducer].map(([producerId, topics]) => ({
        producerId,
        topics: [...topics].map(
          ([name, partitions]): WriteTxnMarkersResponseWritableTxnMarkerTopicResult => ({
            name,
            partitions: [...partitions].map(([partitionIndex, errorCode]) => ({ partitionIndex, errorCode })),
          }),
        ),
      })),
    })
  },
  errorResponse(request, errorCode) {
    return everyPartition(request, errorCode)
  },
})
