/**
 * Every `group.streams.*` setting the streams-group logic reads, with Kafka's defaults. The server
 * maps its parsed configuration (broker values, with any group-level override already applied and
 * clamped per Kafka's GroupConfig rules) to this shape and passes it with each operation.
 */
export interface StreamsGroupConfig {
  /** group.streams.session.timeout.ms */
  readonly sessionTimeoutMs: number
  /** group.streams.min.session.timeout.ms */
  readonly minSessionTimeoutMs: number
  /** group.streams.max.session.timeout.ms */
  readonly maxSessionTimeoutMs: number
  /** group.streams.heartbeat.interval.ms */
  readonly heartbeatIntervalMs: number
  /** group.streams.min.heartbeat.interval.ms */
  readonly minHeartbeatIntervalMs: number
  /** group.streams.max.heartbeat.interval.ms */
  readonly maxHeartbeatIntervalMs: number
  /**
   * group.heartbeat.spread.enable (Topograph only): each answer's interval moves the member toward
   * its own phase (modern/heartbeat-phase.ts); false answers heartbeatIntervalMs, as Kafka does.
   */
  readonly heartbeatSpreadEnable: boolean
  /** group.streams.max.size */
  readonly maxSize: number
  /** group.streams.num.standby.replicas */
  readonly numStandbyReplicas: number
  /** group.streams.max.standby.replicas */
  readonly maxStandbyReplicas: number
  /** group.streams.initial.rebalance.delay.ms */
  readonly initialRebalanceDelayMs: number
  /** group.streams.assignment.interval.ms */
  readonly assignmentIntervalMs: number
  /** group.streams.min.assignment.interval.ms */
  readonly minAssignmentIntervalMs: number
  /** group.streams.max.assignment.interval.ms */
  readonly maxAssignmentIntervalMs: number
  /** group.streams.assignors: the first entry is the default. */
  readonly assignors: readonly string[]
  /** streams.assignor.name (group level only): null means the default assignor. */
  readonly assignorName: string | null
  /** group.streams.assignor.offload.enable (never consulted, as in Kafka) */
  readonly assignorOffloadEnable: boolean
  /** group.streams.task.offset.interval.ms */
  readonly taskOffsetIntervalMs: number
  /** group.streams.min.task.offset.interval.ms */
  readonly minTaskOffsetIntervalMs: number
  /** group.streams.num.warmup.replicas */
  readonly numWarmupReplicas: number
  /** group.streams.max.warmup.replicas */
  readonly maxWarmupReplicas: number
  /** group.streams.rack.aware.assignment.tags */
  readonly rackAwareAssignmentTags: readonly string[]
  /** group.streams.acceptable.recovery.lag */
  readonly acceptableRecoveryLag: bigint
}

export const STREAMS_GROUP_CONFIG_DEFAULTS: StreamsGroupConfig = Object.freeze({
  sessionTimeoutMs: 45000,
  minSessionTimeoutMs: 45000,
  maxSessionTimeoutMs: 60000,
  heartbeatIntervalMs: 5000,
  minHeartbeatIntervalMs: 5000,
  maxHeartbeatIntervalMs: 15000,
  heartbeatSpreadEnable: true,
  maxSize: 2147483647,
  numStandbyReplicas: 0,
  maxStandbyReplicas: 2,
  initialRebalanceDelayMs: 3000,
  assignmentIntervalMs: 1000,
  minAssignmentIntervalMs: 0,
  maxAssignmentIntervalMs: 15000,
  assignors: Object.freeze(['sticky']),
  assignorName: null,
  assignorOffloadEnable: true,
  taskOffsetIntervalMs: 60000,
  minTaskOffsetIntervalMs: 15000,
  numWarmupReplicas: 2,
  maxWarmupReplicas: 20,
  rackAwareAssignmentTags: Object.freeze([]),
  acceptableRecoveryLag: 10000n,
})

/** The assignment configs of §3.7: num.standby.replicas, plus the rack tags only when some are set. */
export function assignmentConfigs(config: StreamsGroupConfig): Map<string, string> {
  const m = new Map<string, string>()
  m.set('num.standby.replicas', String(config.numStandbyReplicas))
  if (config.rackAwareAssignmentTags.length > 0)
    m.set('rack.aware.assignment.tags', config.rackAwareAssignmentTags.join(','))
  return m
}

/** Whether `recorded` equals `assignmentConfigs(config)`, without building the map. */
export function assignmentConfigsMatch(
  config: StreamsGroupConfig,
  recorded: ReadonlyMap<string, string>,
): boolean {
  const tags = config.rackAwareAssignmentTags
  if (recorded.size !== (tags.length > 0 ? 2 : 1)) return false
  if (recorded.get('num.standby.replicas') !== String(config.numStandbyReplicas)) return false
  return tags.length === 0 || recorded.get('rack.aware.assignment.tags') === tags.join(',')
}
