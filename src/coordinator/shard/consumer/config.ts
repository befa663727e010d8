/** The consumer group settings the shard reads (Kafka's GroupCoordinatorConfig `group.consumer.*`). */

export interface ConsumerGroupConfig {
  readonly sessionTimeoutMs: number
  readonly heartbeatIntervalMs: number
  /**
   * group.heartbeat.spread.enable (Topograph only): each answer's interval moves the member toward
   * its own phase (modern/heartbeat-phase.ts); false answers heartbeatIntervalMs, as Kafka does.
   */
  readonly heartbeatSpreadEnable: boolean
  /** group.consumer.max.size */
  readonly maxSize: number
  /** group.consumer.assignors, the first being the default. */
  readonly assignors: readonly string[]
  readonly assignmentIntervalMs: number
  /** group.consumer.regex.refresh.interval.ms */
  readonly regexRefreshIntervalMs: number
  /** group.consumer.migration.policy */
  readonly migrationPolicy: 'disabled' | 'upgrade' | 'downgrade' | 'bidirectional'
}

/** Kafka's defaults. */
export const CONSUMER_GROUP_CONFIG_DEFAULTS: ConsumerGroupConfig = Object.freeze({
  sessionTimeoutMs: 45000,
  heartbeatIntervalMs: 5000,
  heartbeatSpreadEnable: true,
  maxSize: 2147483647,
  assignors: Object.freeze(['uniform', 'range']),
  assignmentIntervalMs: 1000,
  regexRefreshIntervalMs: 600000,
  migrationPolicy: 'bidirectional',
})
