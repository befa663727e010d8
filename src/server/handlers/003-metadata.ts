// Metadata (key 3): serves v0–v13. One broker (this node), which leads every partition of every
// topic in the catalog at leader epoch 0. A topic asked by name that does not exist is created when
// auto.create.topics.enable is on (the default) and the request allows it (AllowAutoTopicCreation,
// always true before v4), with num.partitions and default.replication.factor, as Kafka's
// AutoTopicCreationManager does: the principal needs CREATE on the cluster or on the topic (else
// TOPIC_AUTHORIZATION_FAILED), and the answer for the topic is UNKNOWN_TOPIC_OR_PARTITION, as
// Kafka answers while the creation is under way; the client's next Metadata request finds it. A
// creation that fails is logged at WARN. Without auto-creation an unknown topic gets
// UNKNOWN_TOPIC_OR_PARTITION. A topic entry with a null name is INVALID_REQUEST for the whole
// request: before v12 with Kafka's message, from v12 when the entry has no topic id either (nothing
// names the topic). The error answer echoes every requested topic, a null name as "" (Kafka's
// MetadataRequest.getErrorResponse).
import { invalidRequest } from '../../protocol/api-error.js'
import { ErrorCode } from '../../protocol/errors.js'
import {
  createMetadataResponse,
  type MetadataResponse,
  type MetadataResponseMetadataResponseTopic,
} from '../../protocol/generated/messages/MetadataResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { clusterAuthorizedOperations, topicAuthorizedOperations } from '../operations.js'
import { defineHandler, type RequestContext } from '../router.js'
import { invalidTopicNameReason, isInternalTopic, type TopicInfo, ZERO_UUID } from '../topics/catalog.js'

const NO_OPERATIONS = -2147483648

type PartitionEntry = MetadataResponseMetadataResponseTopic['partitions'][number]

/**
 * The partition entries of a topic, built once per topic and node and then shared by every
 * response (the encoder only reads them): an all-topics Metadata on a server at max.partitions
 * then costs its encoding, not a hundred thousand new objects each time. A topic's entry is dropped
 * with its TopicInfo (a changed topic is a new TopicInfo).
 */
const partitionCache = new WeakMap<TopicInfo, { nodeId: number; partitions: PartitionEntry[] }>()

function partitionsOf(t: TopicInfo, nodeId: number): PartitionEntry[] {
  const cached = partitionCache.get(t)
  if (cached !== undefined && cached.nodeId === nodeId) return cached.partitions
  // The count is bounded by topic.max.partitions; the partitions differ only in their index, so
  // they share their lists.
  const replicas = [nodeId]
  const offline: number[] = []
  const partitions: PartitionEntry[] = new Array(t.numPartitions)
  for (let i = 0; i < t.numPartitions; i++) {
    partitions[i] = {
      errorCode: ErrorCode.NONE,
      partitionIndex: i,
      leaderId: nodeId,
      leaderEpoch: 0,
      replicaNodes: replicas,
      isrNodes: replicas,
      offlineReplicas: offline,
    }
  }
  partitionCache.set(t, { nodeId, partitions })
  return partitions
}

function topicEntry(
  t: TopicInfo,
  ctx: RequestContext,
  includeOps: boolean,
  nodeId: number,
): MetadataResponseMetadataResponseTopic {
  const partitions = partitionsOf(t, nodeId)
  return {
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.topicId,
    isInternal: isInternalTopic(t.name),
    partitions,
    topicAuthorizedOperations: includeOps ? topicAuthorizedOperations(ctx, t.name) : NO_OPERATIONS,
  }
}

function errorEntry(
  errorCode: number,
  name: string | null,
  topicId: string,
): MetadataResponseMetadataResponseTopic {
  return {
    errorCode,
    name,
    topicId,
    isInternal: false,
    partitions: [],
    topicAuthorizedOperations: NO_OPERATIONS,
  }
}

/** Creates the topics with the defaults; failures are logged, as Kafka's auto-creation logs them. */
async function autoCreateTopics(ctx: RequestContext, names: readonly string[]): Promise<void> {
  const outcomes = await ctx.server.topics.createTopics(
    names.map((name) => ({ name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] })),
    false,
  )
  for (const o of outcomes) {
    if (o.error === 'NONE') ctx.server.logger.info({ topic: o.name }, `Auto-created topic ${o.name}`)
    else
      ctx.server.logger.warn(
        { topic: o.name, error: o.error },
        `Auto topic creation failed for ${o.name} with error '${o.error}': ${o.message}.`,
      )
  }
}

export const handler = defineHandler({
  apiKey: 3,
  minVersion: 0,
  maxVersion: 13,
  handle(request, ctx): MetadataResponse | Promise<MetadataResponse> {
    const server = ctx.server
    const version = ctx.apiVersion
    const node = server.advertisedNode(ctx.listenerName)
    const includeOps = version >= 8 && request.includeTopicAuthorizedOperations
    const requested = request.topics
    // v0 has no null list: an empty list means every topic there.
    const allTopics = requested === null || (version === 0 && requested.length === 0)

    if (!allTopics) {
      // Topic ids in requests arrive with v12; before, a null name or an id is invalid (Kafka's
      // KafkaApis checks, with its messages).
      for (const t of requested) {
        if (version < 12 && t.name === null) {
          throw invalidRequest(`Topic name can not be null for version ${version}`)
        }
        if (version < 12 && t.topicId !== ZERO_UUID) {
          throw invalidRequest(`Topic IDs are not supported in requests for version ${version}`)
        }
      }
    }

    const topics: MetadataResponseMetadataResponseTopic[] = []
    const toCreate: string[] = []
    const describable = (name: string) =>
      server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'TOPIC', name)
    if (allTopics) {
      for (const t of server.topics.list()) {
        if (describable(t.name)) topics.push(topicEntry(t, ctx, includeOps, node.nodeId))
      }
    } else if (requested.some((t) => t.topicId !== ZERO_UUID)) {
      // By id: an unknown id gets UNKNOWN_TOPIC_ID with a null name.
      const seen = new Set<string>()
      for (const r of requested) {
        if (r.topicId === ZERO_UUID || seen.has(r.topicId)) continue
        seen.add(r.topicId)
        const t = server.topics.byId(r.topicId)
        if (t === undefined) topics.push(errorEntry(ErrorCode.UNKNOWN_TOPIC_ID, null, r.topicId))
        else if (!describable(t.name))
          topics.push(errorEntry(ErrorCode.TOPIC_AUTHORIZATION_FAILED, null, t.topicId))
        else topics.push(topicEntry(t, ctx, includeOps, node.nodeId))
      }
    } else {
      const seen = new Set<string>()
      const autoCreate = request.allowAutoTopicCreation && server.config.autoCreateTopicsEnable
      let mayCreateAll: boolean | undefined
      const mayCreate = (name: string) => {
        mayCreateAll ??= server.authorizer.authorize(ctx.principal, 'CREATE', 'CLUSTER', CLUSTER_NAME)
        return mayCreateAll || server.authorizer.authorize(ctx.principal, 'CREATE', 'TOPIC', name)
      }
      for (const r of requested) {
        const name = r.name
        // v12+: an entry with neither a name nor an id names no topic.
        if (name === null) throw invalidRequest('A requested topic has neither a name nor a topic id')
        if (seen.has(name)) continue
        seen.add(name)
        if (!describable(name)) {
          topics.push(errorEntry(ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, ZERO_UUID))
          continue
        }
        const t = server.topics.byName(name)
        if (t !== undefined) topics.push(topicEntry(t, ctx, includeOps, node.nodeId))
        else if (invalidTopicNameReason(name) !== null) {
          topics.push(errorEntry(ErrorCode.INVALID_TOPIC_EXCEPTION, name, ZERO_UUID))
        } else if (autoCreate && !mayCreate(name)) {
          topics.push(errorEntry(ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, ZERO_UUID))
        } else {
          if (autoCreate) toCreate.push(name)
          topics.push(errorEntry(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name, ZERO_UUID))
        }
      }
    }

    let clusterOps = NO_OPERATIONS
    if (version >= 8 && version <= 10 && request.includeClusterAuthorizedOperations) {
      clusterOps = clusterAuthorizedOperations(ctx)
    }
    const response = createMetadataResponse({
      brokers: [{ nodeId: node.nodeId, host: node.host, port: node.port, rack: null }],
      clusterId: server.clusterId,
      controllerId: server.nodeId,
      topics,
      clusterAuthorizedOperations: clusterOps,
    })
    if (toCreate.length === 0) return response
    return autoCreateTopics(ctx, toCreate).then(() => response)
  },
  errorResponse(request, errorCode) {
    // Kafka's error answer: every requested topic carries the error.
    return createMetadataResponse({
      topics: (request.topics ?? []).map((t) => errorEntry(errorCode, t.name ?? '', t.topicId)),
    })
  },
})
