// Metadata (key 3): serves v0–v13. One broker (this node), which leads every partition of every
// topic in the catalog at leader epoch 0. A topic asked by name that does not exist is created when
// auto.create.topics.enable is on (the default) and the request allows it (AllowAutoTopicCreation,
// always true before v4), with num.partitions and default.replication.factor, as Kafka's
// AutoTopicCreationManager does: the principal needs CREATE on the cluster or on the topic (else
// TOPIC_AUTHORIZATION_FAILED), and the answer for the topic is UNKNOWN_TOPIC_OR_PARTITION, as
// Kafka answers while the creation is under way; the client's next Metadata request finds it. The
// coordinators' topics (`__consumer_offsets`, `__transaction_state`, `__share_group_state`) are
// created as Kafka creates them: offsets.topic.num.partitions /
// transaction.state.log.num.partitions / share.coordinator.state.topic.num.partitions partitions,
// with the cleanup policy, compression, segment size and retention Kafka's coordinators give them
// (nothing is written to them here: the coordinators keep their records in the coordinator store,
// and no share coordinator runs). A creation that fails is logged at WARN. Without auto-creation
// an unknown topic gets UNKNOWN_TOPIC_OR_PARTITION. A topic entry with a null name is
// INVALID_REQUEST for the whole request: before v12 with Kafka's message, from v12 when the entry
// has no topic id either (nothing names the topic). The error answer echoes every requested topic,
// a null name as "" (Kafka's MetadataRequest.getErrorResponse).
import { invalidRequest } from '../../protocol/api-error.js'
import { ErrorCode } from '../../protocol/errors.js'
import {
  createMetadataResponse,
  type MetadataResponse,
  type MetadataResponseMetadataResponseBroker,
  type MetadataResponseMetadataResponseTopic,
  writeMetadataResponse,
  writeMetadataResponseMetadataResponseBroker,
  writeMetadataResponseMetadataResponseTopic,
} from '../../protocol/generated/messages/MetadataResponse.js'
import { invalidTopicNameReason, isInternalTopic } from '../../protocol/topics.js'
import { Writer } from '../../protocol/writer.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { clusterAuthorizedOperations, topicAuthorizedOperations } from '../operations.js'
import { type AdvertisedNode, defineHandler, type RequestContext } from '../router.js'
import { autoCreateTopics } from '../topics/auto-create.js'
import { type TopicInfo, ZERO_UUID } from '../topics/catalog.js'

const NO_OPERATIONS = -2147483648

type TopicEntry = MetadataResponseMetadataResponseTopic
type PartitionEntry = TopicEntry['partitions'][number]

// The encoded topics. A topic's entry is a function of its TopicInfo (name, id, partition count),
// the node id and nothing else: this node leads every partition at leader epoch 0, and the catalog
// replaces a topic's TopicInfo on every change (creation, deletion, added partitions, configs). So
// the entry is built once per TopicInfo and node and shared by every response, and its bytes are
// written once per version and copied into every answer after that: a catalog change makes a new
// TopicInfo, whose entry and bytes are new, and the old ones go with the old TopicInfo (weak keys).
// What differs per request stays out of the cache: which topics the principal may DESCRIBE (decided
// per request, before any entry is chosen), the authorized operations (written over the cached
// bytes), and error entries (unknown, unauthorized, invalid or auto-created topics), which are
// encoded afresh every time.

/** The shared entry of a topic, with the node it was built for. */
const entries = new WeakMap<TopicInfo, { readonly nodeId: number; readonly entry: TopicEntry }>()
/** The bytes of a shared entry, by response version (authorized operations: NO_OPERATIONS). */
const encoded = new WeakMap<TopicEntry, (Uint8Array | undefined)[]>()
/** A shared entry with authorized operations: the entry it copies. */
const withOperations = new WeakMap<TopicEntry, TopicEntry>()

function sharedEntry(t: TopicInfo, nodeId: number): TopicEntry {
  const cached = entries.get(t)
  if (cached !== undefined && cached.nodeId === nodeId) return cached.entry
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
  const entry: TopicEntry = Object.freeze({
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.topicId,
    isInternal: isInternalTopic(t.name),
    partitions,
    topicAuthorizedOperations: NO_OPERATIONS,
  })
  entries.set(t, { nodeId, entry })
  encoded.set(entry, [])
  return entry
}

function topicEntry(t: TopicInfo, ctx: RequestContext, includeOps: boolean, nodeId: number): TopicEntry {
  const entry = sharedEntry(t, nodeId)
  if (!includeOps) return entry
  const own = { ...entry, topicAuthorizedOperations: topicAuthorizedOperations(ctx, t.name) }
  withOperations.set(own, entry)
  return own
}

/**
 * The bytes of `entry` at `version` when it is a shared entry (or a copy of one with authorized
 * operations, v8+), else null. Written by the generated writer the first time.
 */
function encodedTopic(entry: TopicEntry, version: number): Uint8Array | null {
  let byVersion = encoded.get(entry)
  if (byVersion === undefined) {
    const base = withOperations.get(entry)
    if (base === undefined || version < 8) return null
    byVersion = encoded.get(base)
    if (byVersion === undefined) return null
    entry = base
  }
  let bytes = byVersion[version]
  if (bytes === undefined) {
    const w = new Writer(64 + 32 * entry.partitions.length)
    writeMetadataResponseMetadataResponseTopic(w, entry, version)
    // A copy of its own, not a view of a pooled buffer.
    bytes = new Uint8Array(w.finish())
    byVersion[version] = bytes
  }
  return bytes
}

/**
 * The response body with the topics' cached bytes: the same bytes as the generated writer (the
 * fields around the topics are written by hand in its order; a response this does not expect goes
 * to the generated writer whole).
 */
function writeResponse(w: Writer, m: MetadataResponse, v: number): void {
  const { brokers, topics } = m
  if (
    brokers === null ||
    topics === null ||
    (m.unknownTaggedFields !== undefined && m.unknownTaggedFields.length > 0) ||
    (m.clusterAuthorizedOperations !== NO_OPERATIONS && (v < 8 || v > 10))
  ) {
    writeMetadataResponse(w, m, v)
    return
  }
  const flex = v >= 9
  const parts: (Uint8Array | null)[] = new Array(topics.length)
  let size = 64 + 32 * brokers.length
  for (let i = 0; i < topics.length; i++) {
    const bytes = encodedTopic(topics[i], v)
    parts[i] = bytes
    size += bytes === null ? 64 : bytes.length
  }
  w.reserve(size)
  if (v >= 3) w.writeInt32(m.throttleTimeMs)
  if (flex) w.writeCompactArrayLength(brokers.length)
  else w.writeArrayLength(brokers.length)
  for (let i = 0; i < brokers.length; i++) writeMetadataResponseMetadataResponseBroker(w, brokers[i], v)
  if (v >= 2) {
    if (flex) w.writeCompactNullableString(m.clusterId)
    else w.writeNullableString(m.clusterId)
  }
  if (v >= 1) w.writeInt32(m.controllerId)
  if (flex) w.writeCompactArrayLength(topics.length)
  else w.writeArrayLength(topics.length)
  for (let i = 0; i < topics.length; i++) {
    const bytes = parts[i]
    const t = topics[i]
    if (bytes === null) {
      writeMetadataResponseMetadataResponseTopic(w, t, v)
      continue
    }
    w.writeRaw(bytes)
    // The operations are the int32 before the entry's (empty) tagged-field section. Positions are
    // in the writer's buffer (`end`), not in the message (`length`): an answer written in place
    // starts after the connection's earlier answers.
    if (t.topicAuthorizedOperations !== NO_OPERATIONS)
      w.patchInt32(w.end - (flex ? 5 : 4), t.topicAuthorizedOperations)
  }
  if (v >= 8 && v <= 10) w.writeInt32(m.clusterAuthorizedOperations)
  if (v === 13) w.writeInt16(m.errorCode)
  if (flex) w.writeUVarint(0)
}

/** The broker list of a listener's node, one shared array per node. */
const brokerLists = new WeakMap<AdvertisedNode, MetadataResponseMetadataResponseBroker[]>()

function brokersOf(node: AdvertisedNode): MetadataResponseMetadataResponseBroker[] {
  let brokers = brokerLists.get(node)
  if (brokers === undefined) {
    brokers = [Object.freeze({ nodeId: node.nodeId, host: node.host, port: node.port, rack: null })]
    brokerLists.set(node, brokers)
  }
  return brokers
}

function errorEntry(errorCode: number, name: string | null, topicId: string): TopicEntry {
  return {
    errorCode,
    name,
    topicId,
    isInternal: false,
    partitions: [],
    topicAuthorizedOperations: NO_OPERATIONS,
  }
}

export const handler = defineHandler({
  apiKey: 3,
  minVersion: 0,
  maxVersion: 13,
  writeResponse,
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

    const topics: TopicEntry[] = []
    const toCreate: string[] = []
    const describable = (name: string) =>
      server.authorizer.authorize(ctx.principal, 'DESCRIBE', 'TOPIC', name)
    if (allTopics) {
      for (const t of server.topics.sorted()) {
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
      brokers: brokersOf(node),
      clusterId: server.clusterId,
      controllerId: server.nodeId,
      topics,
      clusterAuthorizedOperations: clusterOps,
    })
    if (toCreate.length === 0) return response
    return autoCreateTopics(server, toCreate).then(() => response)
  },
  errorResponse(request, errorCode) {
    // Kafka's error answer: every requested topic carries the error.
    return createMetadataResponse({
      topics: (request.topics ?? []).map((t) => errorEntry(errorCode, t.name ?? '', t.topicId)),
    })
  },
})
