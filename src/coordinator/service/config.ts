/**
 * The settings the group coordinator reads, by the parsed configuration's property names (the
 * server's TopographConfig satisfies this interface), and the StreamsGroupConfig built from them.
 */
import { CLASSIC_GROUP_CONFIG_DEFAULTS, type ClassicGroupConfig } from '../shard/classic/manager.js'
import { STREAMS_GROUP_CONFIG_DEFAULTS, type StreamsGroupConfig } from '../shard/streams/config.js'
import { CONSUMER_GROUP_CONFIG_DEFAULTS, type ConsumerGroupConfig } from '../shard/consumer/config.js'

export interface GroupCoordinatorConfig {
  readonly groupCoordinatorRebalanceProtocols: readonly string[]
  readonly offsetsTopicNumPartitions: number
  readonly offsetsRetentionMinutes: number
  readonly offsetsRetentionCheckIntervalMs: number
  readonly offsetsCommitTimeoutMs: number
  /** offset.metadata.max.bytes; absent: Kafka's default 4096. */
  readonly offsetMetadataMaxBytes?: number
  readonly groupStreamsSessionTimeoutMs: number
  readonly groupStreamsMinSessionTimeoutMs: number
  readonly groupStreamsMaxSessionTimeoutMs: number
  readonly groupStreamsHeartbeatIntervalMs: number
  readonly groupStreamsMinHeartbeatIntervalMs: number
  readonly groupStreamsMaxHeartbeatIntervalMs: number
  readonly groupStreamsMaxSize: number
  readonly groupStreamsNumStandbyReplicas: number
  readonly groupStreamsMaxStandbyReplicas: number
  readonly groupStreamsInitialRebalanceDelayMs: number
  readonly groupStreamsAssignmentIntervalMs: number
  readonly groupStreamsMinAssignmentIntervalMs: number
  readonly groupStreamsMaxAssignmentIntervalMs: number
  readonly groupStreamsAssignors: readonly string[]
  readonly groupStreamsAssignorOffloadEnable: boolean
  readonly groupStreamsTaskOffsetIntervalMs: number
  readonly groupStreamsMinTaskOffsetIntervalMs: number
  readonly groupStreamsNumWarmupReplicas: number
  readonly groupStreamsMaxWarmupReplicas: number
  readonly groupStreamsRackAwareAssignmentTags: readonly string[]
  readonly groupStreamsAcceptableRecoveryLag: number
  readonly groupStreamsTopologyDescriptionPluginClass: string | null
  /** Consumer groups (group.consumer.*); absent: Kafka's defaults. */
  readonly groupConsumerSessionTimeoutMs?: number
  readonly groupConsumerMinSessionTimeoutMs?: number
  readonly groupConsumerMaxSessionTimeoutMs?: number
  readonly groupConsumerHeartbeatIntervalMs?: number
  readonly groupConsumerMinHeartbeatIntervalMs?: number
  readonly groupConsumerMaxHeartbeatIntervalMs?: number
  readonly groupConsumerMaxSize?: number
  readonly groupConsumerAssignors?: readonly string[]
  readonly groupConsumerMigrationPolicy?: string
  readonly groupConsumerAssignmentIntervalMs?: number
  readonly groupConsumerMinAssignmentIntervalMs?: number
  readonly groupConsumerMaxAssignmentIntervalMs?: number
  readonly groupConsumerRegexRefreshIntervalMs?: number
  /** Classic groups; absent: Kafka's defaults. */
  readonly groupMinSessionTimeoutMs?: number
  readonly groupMaxSessionTimeoutMs?: number
  readonly groupInitialRebalanceDelayMs?: number
  readonly groupMaxSize?: number
  /** group.heartbeat.spread.enable (consumer and streams groups); absent: true. */
  readonly groupHeartbeatSpreadEnable?: boolean
  /** max.group.configs: the most groups that set group-level configs; absent: 10000. */
  readonly maxGroupConfigs?: number
  /**
   * The keys the operator supplied, as given (the server's TopographConfig has them). DescribeConfigs
   * reports a group key whose broker key is here as STATIC_BROKER_CONFIG, else as DEFAULT_CONFIG.
   */
  readonly raw?: Readonly<Record<string, string>>
}

/** The broker-level classic group settings. */
export function classicGroupConfigFrom(c: GroupCoordinatorConfig): ClassicGroupConfig {
  const d = CLASSIC_GROUP_CONFIG_DEFAULTS
  return Object.freeze({
    minSessionTimeoutMs: c.groupMinSessionTimeoutMs ?? d.minSessionTimeoutMs,
    maxSessionTimeoutMs: c.groupMaxSessionTimeoutMs ?? d.maxSessionTimeoutMs,
    initialRebalanceDelayMs: c.groupInitialRebalanceDelayMs ?? d.initialRebalanceDelayMs,
    maxSize: c.groupMaxSize ?? d.maxSize,
    newMemberJoinTimeoutMs: d.newMemberJoinTimeoutMs,
  })
}

/**
 * The broker-level streams group settings. A group that sets group-level configs gets its own
 * settings built from these (GroupConfigManager.streamsConfig).
 */
export function streamsGroupConfigFrom(c: GroupCoordinatorConfig): StreamsGroupConfig {
  return Object.freeze({
    sessionTimeoutMs: c.groupStreamsSessionTimeoutMs,
    minSessionTimeoutMs: c.groupStreamsMinSessionTimeoutMs,
    maxSessionTimeoutMs: c.groupStreamsMaxSessionTimeoutMs,
    heartbeatIntervalMs: c.groupStreamsHeartbeatIntervalMs,
    minHeartbeatIntervalMs: c.groupStreamsMinHeartbeatIntervalMs,
    maxHeartbeatIntervalMs: c.groupStreamsMaxHeartbeatIntervalMs,
    heartbeatSpreadEnable:
      c.groupHeartbeatSpreadEnable ?? STREAMS_GROUP_CONFIG_DEFAULTS.heartbeatSpreadEnable,
    maxSize: c.groupStreamsMaxSize,
    numStandbyReplicas: c.groupStreamsNumStandbyReplicas,
    maxStandbyReplicas: c.groupStreamsMaxStandbyReplicas,
    initialRebalanceDelayMs: c.groupStreamsInitialRebalanceDelayMs,
    assignmentIntervalMs: c.groupStreamsAssignmentIntervalMs,
    minAssignmentIntervalMs: c.groupStreamsMinAssignmentIntervalMs,
    maxAssignmentIntervalMs: c.groupStreamsMaxAssignmentIntervalMs,
    assignors: Object.freeze([...c.groupStreamsAssignors]),
    assignorName: null,
    assignorOffloadEnable: c.groupStreamsAssignorOffloadEnable,
    taskOffsetIntervalMs: c.groupStreamsTaskOffsetIntervalMs,
    minTaskOffsetIntervalMs: c.groupStreamsMinTaskOffsetIntervalMs,
    numWarmupReplicas: c.groupStreamsNumWarmupReplicas,
    maxWarmupReplicas: c.groupStreamsMaxWarmupReplicas,
    rackAwareAssignmentTags: Object.freeze([...c.groupStreamsRackAwareAssignmentTags]),
    acceptableRecoveryLag: BigInt(c.groupStreamsAcceptableRecoveryLag),
  })
}

/** The broker-level consumer group settings, with the bounds group-level configs are clamped to. */
export interface BrokerConsumerGroupConfig extends ConsumerGroupConfig {
  readonly minSessionTimeoutMs: number
  readonly maxSessionTimeoutMs: number
  readonly minHeartbeatIntervalMs: number
  readonly maxHeartbeatIntervalMs: number
  readonly minAssignmentIntervalMs: number
  readonly maxAssignmentIntervalMs: number
}

export function consumerGroupConfigFrom(c: GroupCoordinatorConfig): BrokerConsumerGroupConfig {
  const d = CONSUMER_GROUP_CONFIG_DEFAULTS
  const policy = (c.groupConsumerMigrationPolicy ?? d.migrationPolicy).toLowerCase()
  return Object.freeze({
    sessionTimeoutMs: c.groupConsumerSessionTimeoutMs ?? d.sessionTimeoutMs,
    minSessionTimeoutMs: c.groupConsumerMinSessionTimeoutMs ?? 45000,
    maxSessionTimeoutMs: c.groupConsumerMaxSessionTimeoutMs ?? 60000,
    heartbeatIntervalMs: c.groupConsumerHeartbeatIntervalMs ?? d.heartbeatIntervalMs,
    heartbeatSpreadEnable: c.groupHeartbeatSpreadEnable ?? d.heartbeatSpreadEnable,
    minHeartbeatIntervalMs: c.groupConsumerMinHeartbeatIntervalMs ?? 5000,
    maxHeartbeatIntervalMs: c.groupConsumerMaxHeartbeatIntervalMs ?? 15000,
    maxSize: c.groupConsumerMaxSize ?? d.maxSize,
    assignors: Object.freeze([...(c.groupConsumerAssignors ?? d.assignors)]),
    assignmentIntervalMs: c.groupConsumerAssignmentIntervalMs ?? d.assignmentIntervalMs,
    minAssignmentIntervalMs: c.groupConsumerMinAssignmentIntervalMs ?? 0,
    maxAssignmentIntervalMs: c.groupConsumerMaxAssignmentIntervalMs ?? 15000,
    regexRefreshIntervalMs: c.groupConsumerRegexRefreshIntervalMs ?? d.regexRefreshIntervalMs,
    migrationPolicy: policy as ConsumerGroupConfig['migrationPolicy'],
  })
}

/**
 * A group's consumer settings: the broker's, with the group-level `consumer.session.timeout.ms`,
 * `consumer.heartbeat.interval.ms` and `consumer.assignment.interval.ms` where the group sets them,
 * clamped to the broker's bounds (Kafka's GroupConfig.evaluate).
 */
export function consumerGroupConfigOf(
  broker: BrokerConsumerGroupConfig,
  overrides: ReadonlyMap<string, string> | undefined,
): ConsumerGroupConfig {
  if (overrides === undefined) return broker
  const read = (key: string, fallback: number, min: number, max: number): number => {
    const text = overrides.get(key)
    const v = text === undefined ? Number.NaN : Number(text)
    return Number.isInteger(v) ? Math.min(max, Math.max(min, v)) : fallback
  }
  return {
    ...broker,
    sessionTimeoutMs: read(
      'consumer.session.timeout.ms',
      broker.sessionTimeoutMs,
      broker.minSessionTimeoutMs,
      broker.maxSessionTimeoutMs,
    ),
    heartbeatIntervalMs: read(
      'consumer.heartbeat.interval.ms',
      broker.heartbeatIntervalMs,
      broker.minHeartbeatIntervalMs,
      broker.maxHeartbeatIntervalMs,
    ),
    assignmentIntervalMs: read(
      'consumer.assignment.interval.ms',
      broker.assignmentIntervalMs,
      broker.minAssignmentIntervalMs,
      broker.maxAssignmentIntervalMs,
    ),
  }
}
