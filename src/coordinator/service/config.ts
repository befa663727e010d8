/**
 * The settings the group coordinator reads, by the parsed configuration's property names (the
 * server's TopographConfig satisfies this interface), and the StreamsGroupConfig built from them.
 */
import { CLASSIC_GROUP_CONFIG_DEFAULTS, type ClassicGroupConfig } from '../shard/classic/manager.js'
import type { StreamsGroupConfig } from '../shard/streams/config.js'

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
  /** Classic groups; absent: Kafka's defaults. */
  readonly groupMinSessionTimeoutMs?: number
  readonly groupMaxSessionTimeoutMs?: number
  readonly groupInitialRebalanceDelayMs?: number
  readonly groupMaxSize?: number
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
