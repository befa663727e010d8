// Topology descriptions and group descriptions for the console tests, built with the streams
// client's Topology builder and the admin client's wire conversion (the same path a description
// takes from a member through the coordinator to the admin client).
import type {
  ConsumerGroupDescription,
  StreamsGroupDescription,
  StreamsGroupMemberDescription,
  StreamsGroupTopologyDescription,
  StreamsGroupTopologyDescriptionStatus,
} from '../../src/clients/admin/index.js'
import { topologyDescriptionFromWire } from '../../src/clients/admin/index.js'
import { internalTopicDecorator, topologyDescriptionToWire } from '../../src/clients/streams/index.js'
import { type DemoApplication, inventoryApplication, ordersApplication } from '../../src/cli/demo.js'
import type {
  ConsoleSource,
  ConsumerDescribeOutcome,
  DescribeOutcome,
  PartitionOffsets,
  TopicOffsetsOutcome,
} from '../../src/console/source.js'
import type { GroupListing } from '../../src/clients/admin/index.js'

export function describeApp(app: DemoApplication): StreamsGroupTopologyDescription {
  const wire = topologyDescriptionToWire(
    app.topology.describe(),
    internalTopicDecorator(app.topology, app.applicationId),
  )
  return topologyDescriptionFromWire(wire)
}

export const ordersDescription = (): StreamsGroupTopologyDescription => describeApp(ordersApplication())
export const inventoryDescription = (): StreamsGroupTopologyDescription =>
  describeApp(inventoryApplication(3, { patternSource: true }))

/**
 * `subtopologies` chains of `perSubtopology` nodes (source → processors → sink), each subtopology
 * reading the topic the previous one writes, every other processor with a store.
 */
export function largeDescription(
  subtopologies: number,
  perSubtopology: number,
): StreamsGroupTopologyDescription {
  const wire = {
    subtopologies: Array.from({ length: subtopologies }, (_, s) => ({
      subtopologyId: String(s),
      nodes: Array.from({ length: perSubtopology }, (_, i) => {
        const name = `S${s}-N${i}`
        const last = i === perSubtopology - 1
        return {
          name,
          nodeType: i === 0 ? 1 : last ? 3 : 2,
          sourceTopics: i === 0 ? [`topic-${s}`] : [],
          sinkTopic: last ? `topic-${s + 1}` : null,
          stores: i > 0 && !last && i % 2 === 0 ? [`store-${s}-${i}`] : [],
          successors: last ? [] : [`S${s}-N${i + 1}`],
        }
      }),
    })),
    globalStores: [],
  }
  return topologyDescriptionFromWire(wire)
}

export function member(
  memberId: string,
  opts: {
    readonly processId?: string
    readonly topologyEpoch?: number
    readonly active?: Record<string, number[]>
    readonly standby?: Record<string, number[]>
    readonly warmup?: Record<string, number[]>
  } = {},
): StreamsGroupMemberDescription {
  const tasks = (r: Record<string, number[]> = {}) =>
    Object.entries(r).map(([subtopologyId, partitions]) => ({ subtopologyId, partitions }))
  const assignment = {
    activeTasks: tasks(opts.active),
    standbyTasks: tasks(opts.standby),
    warmupTasks: tasks(opts.warmup),
  }
  return {
    memberId,
    memberEpoch: 5,
    instanceId: null,
    rackId: null,
    clientId: `client-${memberId}`,
    clientHost: '/127.0.0.1',
    topologyEpoch: opts.topologyEpoch ?? 0,
    processId: opts.processId ?? `process-${memberId}`,
    userEndpoint: null,
    clientTags: {},
    assignment,
    targetAssignment: assignment,
    isClassic: false,
  }
}

export function group(
  groupId: string,
  opts: {
    readonly status?: StreamsGroupTopologyDescriptionStatus
    readonly description?: StreamsGroupTopologyDescription | null
    readonly topologyEpoch?: number
    readonly members?: readonly StreamsGroupMemberDescription[]
    readonly state?: string
  } = {},
): StreamsGroupDescription {
  const description = opts.description ?? null
  const status = opts.status ?? (description === null ? 'NOT_STORED' : 'AVAILABLE')
  return {
    groupId,
    groupEpoch: 7,
    targetAssignmentEpoch: 7,
    topologyEpoch: opts.topologyEpoch ?? 0,
    subtopologies: (description?.subtopologies ?? []).map((s) => ({
      subtopologyId: s.id,
      sourceTopics: [],
      repartitionSinkTopics: [],
      stateChangelogTopics: [],
      repartitionSourceTopics: [],
    })),
    members: opts.members ?? [],
    groupState: opts.state ?? 'Stable',
    coordinator: { nodeId: 0, host: '127.0.0.1', port: 9092 },
    authorizedOperations: null,
    topologyDescription: status === 'AVAILABLE' ? description : null,
    topologyDescriptionStatus: status,
    assignorName: 'sticky',
  }
}

/** A consumer group (KIP-848) without members. */
export function consumerGroup(groupId: string): ConsumerGroupDescription {
  return {
    groupId,
    groupState: 'Empty',
    groupEpoch: 3,
    targetAssignmentEpoch: 3,
    assignorName: 'uniform',
    members: [],
    coordinator: { nodeId: 0, host: '127.0.0.1', port: 9092 },
    authorizedOperations: null,
  }
}

/**
 * A ConsoleSource over an in-memory map: only for the UI tests, to show states (ERROR, an older
 * epoch's description, STALE_TOPOLOGY members) a live cluster cannot be made to produce on demand.
 */
export class FixtureSource implements ConsoleSource {
  readonly groups = new Map<string, StreamsGroupDescription | Error>()
  /** Consumer groups (KIP-848): described, not listed. */
  readonly consumerGroups = new Map<string, ConsumerGroupDescription>()
  /** The topics with their partitions' offsets; any other topic does not exist. */
  readonly topics = new Map<string, readonly PartitionOffsets[]>()
  closed = false

  async topicOffsets(topics: readonly string[] | null): Promise<readonly TopicOffsetsOutcome[]> {
    return [...new Set(topics ?? this.topics.keys())].sort().map((topic): TopicOffsetsOutcome => {
      const partitions = this.topics.get(topic)
      if (partitions !== undefined) return { topic, partitions }
      const e = Object.assign(new Error('This server does not host this topic-partition.'), {
        errorName: 'UNKNOWN_TOPIC_OR_PARTITION',
      })
      return { topic, error: e }
    })
  }

  async listStreamsGroups(): Promise<readonly GroupListing[]> {
    return [...this.groups.keys()].map((groupId) => ({
      groupId,
      protocolType: 'streams',
      groupState: (() => {
        const g = this.groups.get(groupId)
        return g instanceof Error ? null : g!.groupState
      })(),
      groupType: 'streams',
    }))
  }

  async describeStreamsGroups(groupIds: readonly string[]): Promise<ReadonlyMap<string, DescribeOutcome>> {
    return new Map(
      groupIds.map((id): [string, DescribeOutcome] => {
        const g = this.groups.get(id)
        if (g === undefined) {
          const e = Object.assign(new Error(`Group ${id} not found.`), { errorName: 'GROUP_ID_NOT_FOUND' })
          return [id, { error: e }]
        }
        return [id, g instanceof Error ? { error: g } : { value: g }]
      }),
    )
  }

  async describeConsumerGroups(
    groupIds: readonly string[],
  ): Promise<ReadonlyMap<string, ConsumerDescribeOutcome>> {
    return new Map(
      groupIds.map((id): [string, ConsumerDescribeOutcome] => {
        const g = this.consumerGroups.get(id)
        if (g !== undefined) return [id, { value: g }]
        const message = this.groups.has(id)
          ? `Group ${id} is not a consumer group.`
          : `Group ${id} not found.`
        return [id, { error: Object.assign(new Error(message), { errorName: 'GROUP_ID_NOT_FOUND' }) }]
      }),
    )
  }

  async close(): Promise<void> {
    this.closed = true
  }
}
