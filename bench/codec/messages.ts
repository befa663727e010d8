/**
 * The logical content of every benchmarked message, built once. Peers get the same content in their
 * own shapes (see peers.ts); bytes a peer decodes are produced from the same objects.
 */
import * as p from '../../src/protocol/index.js'

const uuid = (i: number) => Buffer.from(`topic-id-${String(i).padStart(7, '0')}`).toString('base64url')

/** Metadata response: 3 brokers, 100 topics × 3 partitions × 3 replicas, topic ids. */
export const metadataResponse = p.createMetadataResponse({
  brokers: [0, 1, 2].map((nodeId) =>
    p.createMetadataResponseMetadataResponseBroker({
      nodeId,
      host: `broker-${nodeId}.kafka.internal`,
      port: 9092,
      rack: `rack-${nodeId}`,
    }),
  ),
  clusterId: 'Jj3pW1x9Qmu0bWtqgC2LWg',
  controllerId: 1,
  topics: Array.from({ length: 100 }, (_, t) =>
    p.createMetadataResponseMetadataResponseTopic({
      name: `orders-topic-${t}`,
      topicId: uuid(t),
      partitions: Array.from({ length: 3 }, (_, i) =>
        p.createMetadataResponseMetadataResponsePartition({
          partitionIndex: i,
          leaderId: (t + i) % 3,
          leaderEpoch: 7,
          replicaNodes: [0, 1, 2],
          isrNodes: [0, 1, 2],
          offlineReplicas: [],
        }),
      ),
      topicAuthorizedOperations: -2147483648,
    }),
  ),
})

const metadataBytes = Uint8Array.from(Array.from({ length: 64 }, (_, i) => i))

/** JoinGroup request: two protocols with 64-byte metadata. */
export const joinGroupRequest = p.createJoinGroupRequest({
  groupId: 'payments-consumer-group',
  sessionTimeoutMs: 45000,
  rebalanceTimeoutMs: 300000,
  memberId: 'consumer-1-4b8f7a52-0c52-4f6e-8f6d-1a2b3c4d5e6f',
  groupInstanceId: null,
  protocolType: 'consumer',
  protocols: ['range', 'cooperative-sticky'].map((name) =>
    p.createJoinGroupRequestJoinGroupRequestProtocol({ name, metadata: metadataBytes }),
  ),
  reason: null,
})

/** JoinGroup response to the leader: 10 members with 64-byte metadata. */
export const joinGroupResponse = p.createJoinGroupResponse({
  generationId: 12,
  protocolType: 'consumer',
  protocolName: 'range',
  leader: 'consumer-0-4b8f7a52-0c52-4f6e-8f6d-1a2b3c4d5e6f',
  memberId: 'consumer-0-4b8f7a52-0c52-4f6e-8f6d-1a2b3c4d5e6f',
  members: Array.from({ length: 10 }, (_, i) =>
    p.createJoinGroupResponseJoinGroupResponseMember({
      memberId: `consumer-${i}-4b8f7a52-0c52-4f6e-8f6d-1a2b3c4d5e6f`,
      groupInstanceId: null,
      metadata: metadataBytes,
    }),
  ),
})

/** OffsetCommit request: 5 topics × 10 partitions = 50 partitions. */
export const offsetCommitRequest = p.createOffsetCommitRequest({
  groupId: 'payments-consumer-group',
  generationIdOrMemberEpoch: 12,
  memberId: 'consumer-1-4b8f7a52-0c52-4f6e-8f6d-1a2b3c4d5e6f',
  groupInstanceId: null,
  topics: Array.from({ length: 5 }, (_, t) =>
    p.createOffsetCommitRequestOffsetCommitRequestTopic({
      name: `orders-topic-${t}`,
      partitions: Array.from({ length: 10 }, (_, i) =>
        p.createOffsetCommitRequestOffsetCommitRequestPartition({
          partitionIndex: i,
          committedOffset: BigInt(1_000_000 + t * 1000 + i),
          committedLeaderEpoch: 7,
          committedMetadata: '',
        }),
      ),
    }),
  ),
})

const groupIds = Array.from({ length: 10 }, (_, i) => `streams-app-${i}`)

/** DeleteGroups: 10 groups. */
export const deleteGroupsRequest = p.createDeleteGroupsRequest({ groupsNames: groupIds })
export const deleteGroupsResponse = p.createDeleteGroupsResponse({
  results: groupIds.map((groupId) =>
    p.createDeleteGroupsResponseDeletableGroupResult({ groupId, errorCode: 0 }),
  ),
})

/** StreamsGroupHeartbeat v1 request of a joining member: topology with 4 subtopologies, task offsets. */
export const streamsHeartbeatRequest = p.createStreamsGroupHeartbeatRequest({
  groupId: 'word-count',
  memberId: 'c8b1d0b6-2a8f-4f5e-9b1e-3a6c9d2e7f10',
  memberEpoch: 0,
  endpointInformationEpoch: 0,
  rebalanceTimeoutMs: 300000,
  topology: p.createStreamsGroupHeartbeatRequestTopology({
    epoch: 1,
    subtopologies: Array.from({ length: 4 }, (_, s) =>
      p.createStreamsGroupHeartbeatRequestSubtopology({
        subtopologyId: String(s),
        sourceTopics: [`input-${s}`],
        repartitionSinkTopics: s < 3 ? [`word-count-repartition-${s + 1}`] : [],
        stateChangelogTopics: [
          p.createStreamsGroupHeartbeatRequestTopicInfo({
            name: `word-count-store-${s}-changelog`,
            topicConfigs: [{ key: 'cleanup.policy', value: 'compact' }],
          }),
        ],
      }),
    ),
  }),
  activeTasks: [],
  standbyTasks: [],
  warmupTasks: [],
  processId: '4f2d9a3c-1b7e-4c8a-9d6f-2e5b8a1c3d7e',
  userEndpoint: p.createStreamsGroupHeartbeatRequestEndpoint({ host: 'app-1.internal', port: 8080 }),
  clientTags: [{ key: 'zone', value: 'eu-west-1a' }],
  taskOffsets: Array.from({ length: 16 }, (_, i) =>
    p.createStreamsGroupHeartbeatRequestTaskOffset({
      subtopologyId: String(i % 4),
      partition: i >> 2,
      offset: BigInt(i * 1000),
    }),
  ),
  taskEndOffsets: [],
})

/** StreamsGroupHeartbeat v1 response: assignment of 4 subtopologies × 4 partitions, endpoint map. */
export const streamsHeartbeatResponse = p.createStreamsGroupHeartbeatResponse({
  memberId: 'c8b1d0b6-2a8f-4f5e-9b1e-3a6c9d2e7f10',
  memberEpoch: 3,
  heartbeatIntervalMs: 5000,
  acceptableRecoveryLag: 10000n,
  taskOffsetIntervalMs: 60000,
  status: [],
  activeTasks: Array.from({ length: 4 }, (_, s) =>
    p.createStreamsGroupHeartbeatResponseTaskIds({ subtopologyId: String(s), partitions: [0, 1, 2, 3] }),
  ),
  standbyTasks: [],
  warmupTasks: [],
  topologyDescriptionRequired: true,
  endpointInformationEpoch: 2,
  partitionsByUserEndpoint: [0, 1].map((i) =>
    p.createStreamsGroupHeartbeatResponseEndpointToPartitions({
      userEndpoint: { host: `app-${i}.internal`, port: 8080 },
      activePartitions: [{ topic: 'input-0', partitions: [i, i + 2] }],
      standbyPartitions: [],
    }),
  ),
})

/** StreamsGroupDescribe v1 response: one group whose topology description has 200 nodes (20 subtopologies × 10). */
export const streamsDescribeResponse = p.createStreamsGroupDescribeResponse({
  groups: [
    p.createStreamsGroupDescribeResponseDescribedGroup({
      groupId: 'word-count',
      groupState: 'Stable',
      groupEpoch: 4,
      assignmentEpoch: 4,
      authorizedOperations: -2147483648,
      topologyDescription: p.createStreamsGroupDescribeResponseTopologyDescription({
        subtopologies: Array.from({ length: 20 }, (_, s) =>
          p.createStreamsGroupDescribeResponseTopologyDescriptionSubtopology({
            subtopologyId: String(s),
            nodes: Array.from({ length: 10 }, (_, n) =>
              p.createStreamsGroupDescribeResponseTopologyDescriptionNode({
                name: `KSTREAM-NODE-${String(s * 10 + n).padStart(10, '0')}`,
                nodeType: n === 0 ? 1 : n === 9 ? 3 : 2,
                sourceTopics: n === 0 ? [`input-${s}`] : [],
                sinkTopic: n === 9 ? `output-${s}` : null,
                stores: n === 5 ? [`store-${s}`] : [],
                successors: n === 9 ? [] : [`KSTREAM-NODE-${String(s * 10 + n + 1).padStart(10, '0')}`],
              }),
            ),
          }),
        ),
      }),
      topologyDescriptionStatus: 3,
    }),
  ],
})
