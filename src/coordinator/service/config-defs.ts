// The group coordinator's keys of the broker configuration, as Kafka's GroupCoordinatorConfig
// defines them (the `group.*` and `offsets.*` keys, with offset.metadata.max.bytes), plus the
// topology description plugin keys of KIP-1331 and the Topograph-only bound on group-level
// configs. The server's table (src/server/config-defs.ts) lists them among its own keys; the
// coordinator reads the parsed values through GroupCoordinatorConfig (config.ts).

import {
  boolKey,
  ConfigError,
  checkBounds,
  type ConfigKeyDef,
  InvalidValue,
  intKey,
  listKey,
  longKey,
  nonEmpty,
  parseSafeLong,
  splitList,
  stringKey,
} from '../../config/index.js'
import type { StreamsGroupConfig } from '../shard/streams/config.js'
import type { GroupCoordinatorConfig } from './config.js'

export const REBALANCE_PROTOCOLS = ['classic', 'consumer', 'share', 'streams'] as const
export const BUILTIN_PLUGIN_ALIASES = ['memory', 'sqlite', 'postgres'] as const

/** Protocols, offsets, classic groups. */
export const GROUP_COORDINATOR_KEYS = [
  listKey(
    'group.coordinator.rebalance.protocols',
    ['classic', 'consumer', 'streams'],
    { allowed: REBALANCE_PROTOCOLS },
    `${REBALANCE_PROTOCOLS.join(', ')}; must include classic`,
    'medium',
    'Group protocols the coordinator serves. Without streams, the streams group APIs answer UNSUPPORTED_VERSION. share is accepted for compatibility and has no effect. Deprecated in Kafka 4.3.',
  ),
  intKey(
    'offsets.topic.num.partitions',
    50,
    { min: 1 },
    'high',
    'Number of coordinator shards. A group lives in shard abs(hashCode(groupId)) % n, with Java String.hashCode; do not change it once groups exist.',
  ),
  intKey(
    'offsets.topic.segment.bytes',
    104857600,
    { min: 1 },
    'high',
    'segment.bytes of __consumer_offsets when a Metadata request creates it (the coordinator keeps its records in the coordinator store, not in that topic).',
  ),
  intKey(
    'offsets.retention.minutes',
    10080,
    { min: 1 },
    'high',
    'Committed offsets of a group without members are deleted after this long.',
  ),
  longKey(
    'offsets.retention.check.interval.ms',
    600000,
    { min: 1 },
    'high',
    'Period of the offset-expiry sweep and of the topology-description cleanup cycle.',
  ),
  intKey(
    'offsets.commit.timeout.ms',
    5000,
    { min: 1 },
    'high',
    'Longest wait for a coordinator write to be stored before the request fails.',
  ),

  // --- Classic groups ----------------------------------------------------------------------------
  intKey(
    'group.min.session.timeout.ms',
    6000,
    {},
    'medium',
    'Smallest session timeout a classic group member may ask for.',
  ),
  intKey(
    'group.max.session.timeout.ms',
    1800000,
    {},
    'medium',
    'Largest session timeout a classic group member may ask for.',
  ),
  intKey(
    'group.initial.rebalance.delay.ms',
    3000,
    {},
    'medium',
    'How long a new classic group waits for more members before its first rebalance.',
  ),
  intKey('group.max.size', 2147483647, { min: 1 }, 'medium', 'Most members one classic group may hold.'),
  intKey(
    'max.group.configs',
    10000,
    { min: 0 },
    'low',
    'Most groups that may set group-level configs (IncrementalAlterConfigs on GROUP resources); an alteration that would set configs on one more group is refused with POLICY_VIOLATION. Topograph only.',
  ),
  boolKey(
    'group.heartbeat.spread.enable',
    true,
    'low',
    "Spread the heartbeats of consumer and streams group members over the heartbeat interval: each member has a phase within the interval (from a hash of its member id), and a heartbeat's answer carries the interval (between half and one and a half of the group's) that brings the member's next heartbeat onto it; a member on its phase gets the group's interval. false answers the group's interval exactly, as Kafka does. Topograph only.",
  ),
] as const satisfies readonly ConfigKeyDef<string, unknown>[]

/** offset.metadata.max.bytes (the server's table lists it after the topic defaults). */
export const OFFSET_METADATA_KEYS = [
  intKey(
    'offset.metadata.max.bytes',
    4096,
    { min: 0 },
    'low',
    'Longest metadata string an offset commit may carry; a longer one is refused with OFFSET_METADATA_TOO_LARGE.',
  ),
] as const satisfies readonly ConfigKeyDef<string, unknown>[]

/** Consumer groups (KIP-848), Kafka's `group.consumer.*` keys. */
export const CONSUMER_GROUP_KEYS = [
  intKey(
    'group.consumer.session.timeout.ms',
    45000,
    { min: 1 },
    'medium',
    'A consumer group member that does not heartbeat for this long is removed from its group.',
  ),
  intKey(
    'group.consumer.min.session.timeout.ms',
    45000,
    { min: 1 },
    'medium',
    'Lower limit for the group-level consumer.session.timeout.ms.',
  ),
  intKey(
    'group.consumer.max.session.timeout.ms',
    60000,
    { min: 1 },
    'medium',
    'Upper limit for the group-level consumer.session.timeout.ms.',
  ),
  intKey(
    'group.consumer.heartbeat.interval.ms',
    5000,
    { min: 1 },
    'medium',
    'Heartbeat interval sent to consumer group members (HeartbeatIntervalMs).',
  ),
  intKey(
    'group.consumer.min.heartbeat.interval.ms',
    5000,
    { min: 1 },
    'medium',
    'Lower limit for the group-level consumer.heartbeat.interval.ms.',
  ),
  intKey(
    'group.consumer.max.heartbeat.interval.ms',
    15000,
    { min: 1 },
    'medium',
    'Upper limit for the group-level consumer.heartbeat.interval.ms.',
  ),
  intKey(
    'group.consumer.max.size',
    2147483647,
    { min: 1 },
    'medium',
    'Most members one consumer group may hold; a join beyond it gets GROUP_MAX_SIZE_REACHED.',
  ),
  listKey(
    'group.consumer.assignors',
    ['uniform', 'range'],
    { allowed: ['uniform', 'range'] },
    'non-empty list without duplicates of uniform, range',
    'medium',
    'Server-side assignors available to consumer groups; the first is used when no member names one (ServerAssignor).',
  ),
  stringKey(
    'group.consumer.migration.policy',
    'bidirectional',
    'disabled, upgrade, downgrade, bidirectional (any case)',
    'medium',
    'Online conversion between classic and consumer groups: whether a classic group becomes a consumer group when a KIP-848 member joins (upgrade), and back when the last one leaves (downgrade).',
    (v) => {
      if (!['disabled', 'upgrade', 'downgrade', 'bidirectional'].includes(v.toLowerCase()))
        throw new InvalidValue('expected one of disabled, upgrade, downgrade, bidirectional')
    },
  ),
  intKey(
    'group.consumer.assignment.interval.ms',
    1000,
    { min: 0 },
    'medium',
    'Shortest time between two target assignments of a consumer group (KIP-1263); 0 computes one on every group epoch bump.',
  ),
  intKey(
    'group.consumer.min.assignment.interval.ms',
    0,
    { min: 0 },
    'medium',
    'Lower limit for group.consumer.assignment.interval.ms and its group-level override.',
  ),
  intKey(
    'group.consumer.max.assignment.interval.ms',
    15000,
    { min: 0 },
    'medium',
    'Upper limit for group.consumer.assignment.interval.ms and its group-level override.',
  ),
  boolKey(
    'group.consumer.assignor.offload.enable',
    true,
    'medium',
    'Accepted for compatibility; the consumer assignors always run inline.',
  ),
  intKey(
    'group.consumer.regex.refresh.interval.ms',
    600000,
    { min: 1 },
    'low',
    "How often the topics of a consumer group's subscription patterns are matched again when the catalog has not changed.",
  ),
] as const satisfies readonly ConfigKeyDef<string, unknown>[]

/** Streams groups (KIP-1071) and the topology description plugin (KIP-1331). */
export const STREAMS_GROUP_KEYS = [
  intKey(
    'group.streams.session.timeout.ms',
    45000,
    { min: 1 },
    'medium',
    'A streams member that does not heartbeat for this long is removed from its group.',
  ),
  intKey(
    'group.streams.min.session.timeout.ms',
    45000,
    { min: 1 },
    'medium',
    'Lower limit for the group-level streams.session.timeout.ms.',
  ),
  intKey(
    'group.streams.max.session.timeout.ms',
    60000,
    { min: 1 },
    'medium',
    'Upper limit for the group-level streams.session.timeout.ms.',
  ),
  intKey(
    'group.streams.heartbeat.interval.ms',
    5000,
    { min: 1 },
    'medium',
    'Heartbeat interval sent to streams members (HeartbeatIntervalMs).',
  ),
  intKey(
    'group.streams.min.heartbeat.interval.ms',
    5000,
    { min: 1 },
    'medium',
    'Lower limit for the group-level streams.heartbeat.interval.ms.',
  ),
  intKey(
    'group.streams.max.heartbeat.interval.ms',
    15000,
    { min: 1 },
    'medium',
    'Upper limit for the group-level streams.heartbeat.interval.ms.',
  ),
  intKey(
    'group.streams.max.size',
    2147483647,
    { min: 1 },
    'medium',
    'Most members one streams group may hold.',
  ),
  intKey(
    'group.streams.num.standby.replicas',
    0,
    { min: 0 },
    'medium',
    'Standby replicas per task, given to the assignor.',
  ),
  intKey(
    'group.streams.max.standby.replicas',
    2,
    { min: 0 },
    'medium',
    'Upper limit for the group-level streams.num.standby.replicas.',
  ),
  intKey(
    'group.streams.initial.rebalance.delay.ms',
    3000,
    { min: 0 },
    'medium',
    'How long a new streams group waits for more members before its first assignment.',
  ),
  intKey(
    'group.streams.assignment.interval.ms',
    1000,
    { min: 0 },
    'medium',
    'Shortest time between two assignor runs for one streams group.',
  ),
  intKey(
    'group.streams.min.assignment.interval.ms',
    0,
    { min: 0 },
    'medium',
    'Lower limit for group.streams.assignment.interval.ms and its group-level override.',
  ),
  intKey(
    'group.streams.max.assignment.interval.ms',
    15000,
    { min: 0 },
    'medium',
    'Upper limit for group.streams.assignment.interval.ms and its group-level override.',
  ),
  listKey(
    'group.streams.assignors',
    ['sticky'],
    {},
    'non-empty list without duplicates; built-in: sticky',
    'medium',
    'Task assignors available to streams groups; the first is used when a group names none.',
  ),
  boolKey(
    'group.streams.assignor.offload.enable',
    true,
    'medium',
    'Accepted for compatibility; as in Kafka, the streams assignor always runs inline.',
  ),
  intKey(
    'group.streams.task.offset.interval.ms',
    60000,
    { min: 1 },
    'medium',
    'How often members report task changelog offsets (TaskOffsetIntervalMs).',
  ),
  intKey(
    'group.streams.min.task.offset.interval.ms',
    15000,
    { min: 1 },
    'medium',
    'Lower limit for the group-level streams.task.offset.interval.ms.',
  ),
  intKey(
    'group.streams.num.warmup.replicas',
    2,
    { min: 0 },
    'medium',
    'Most warm-up replicas the assignor may place.',
  ),
  intKey(
    'group.streams.max.warmup.replicas',
    20,
    { min: 0 },
    'medium',
    'Upper limit for the group-level streams.num.warmup.replicas.',
  ),
  listKey(
    'group.streams.rack.aware.assignment.tags',
    [],
    { allowEmptyList: true, unique: false },
    'list of client tag keys without duplicates; may be empty',
    'low',
    'Client tag keys used to spread standby replicas; part of the assignment configs.',
  ),
  longKey(
    'group.streams.acceptable.recovery.lag',
    10000,
    { min: 0 },
    'medium',
    'Offsets a member may lag behind and still count as caught up (AcceptableRecoveryLag).',
  ),

  // --- Topology description plugin (KIP-1331) ----------------------------------------------------
  {
    name: 'group.streams.topology.description.plugin.class',
    type: 'class',
    default: null,
    validValues: `${BUILTIN_PLUGIN_ALIASES.join(', ')}, or a module path or package specifier, optionally #ExportName`,
    importance: 'medium',
    doc: 'The topology description plugin. Unset turns the feature off. The value is loaded as a module; a load failure stops start-up.',
    parse: (v: string): string | null => {
      nonEmpty(v)
      const hash = v.lastIndexOf('#')
      if (hash === 0) throw new InvalidValue('the module part before # is empty')
      if (hash > 0 && !/^[A-Za-z_$][\w$]*$/.test(v.slice(hash + 1))) {
        throw new InvalidValue(`'${v.slice(hash + 1)}' after # is not an export name`)
      }
      return v
    },
    absent: null as string | null,
  },
  {
    name: 'group.streams.topology.description.plugin.timeout.ms',
    type: 'long',
    default: null,
    validValues: '[1, ...] or unset',
    importance: 'low',
    doc: 'Deadline for one plugin call; a call still running then counts as failed. Unset = no deadline, as in Kafka. Topograph only (difference D5).',
    parse: (v: string): number | null => {
      const n = parseSafeLong(v)
      checkBounds(n, { min: 1 })
      return n
    },
    absent: null as number | null,
  },
] as const satisfies readonly ConfigKeyDef<string, unknown>[]

function requireThat(ok: boolean, key: string, message: string): void {
  if (!ok) throw new ConfigError(message, key)
}

const ge = (a: string, b: string) => `${a} must be greater than or equal to ${b}`
const le = (a: string, b: string) => `${a} must be less than or equal to ${b}`

/** The timeouts and intervals of a modern group type, as its broker keys under `p` set them. */
type ModernGroupBounds = Pick<
  StreamsGroupConfig,
  | 'sessionTimeoutMs'
  | 'minSessionTimeoutMs'
  | 'maxSessionTimeoutMs'
  | 'heartbeatIntervalMs'
  | 'minHeartbeatIntervalMs'
  | 'maxHeartbeatIntervalMs'
  | 'assignmentIntervalMs'
  | 'minAssignmentIntervalMs'
  | 'maxAssignmentIntervalMs'
>

/** Kafka's checks of one modern group type's heartbeat, session and assignment bounds, in order. */
function verifyModernGroupBounds(p: string, v: ModernGroupBounds): void {
  const pairs: [string, number, number, number][] = [
    ['heartbeat.interval.ms', v.heartbeatIntervalMs, v.minHeartbeatIntervalMs, v.maxHeartbeatIntervalMs],
    ['session.timeout.ms', v.sessionTimeoutMs, v.minSessionTimeoutMs, v.maxSessionTimeoutMs],
  ]
  for (const [name, value, min, max] of pairs) {
    const [k, kMin, kMax] = [`${p}${name}`, `${p}min.${name}`, `${p}max.${name}`]
    requireThat(max >= min, kMax, ge(kMax, kMin))
    requireThat(value >= min, k, ge(k, kMin))
    requireThat(value <= max, k, le(k, kMax))
  }
  requireThat(
    v.heartbeatIntervalMs < v.sessionTimeoutMs,
    `${p}heartbeat.interval.ms`,
    `${p}heartbeat.interval.ms must be less than ${p}session.timeout.ms`,
  )
  const [k, kMin, kMax] = [
    `${p}assignment.interval.ms`,
    `${p}min.assignment.interval.ms`,
    `${p}max.assignment.interval.ms`,
  ]
  requireThat(v.maxAssignmentIntervalMs >= v.minAssignmentIntervalMs, kMax, ge(kMax, kMin))
  requireThat(v.assignmentIntervalMs >= v.minAssignmentIntervalMs, k, ge(k, kMin))
  requireThat(v.assignmentIntervalMs <= v.maxAssignmentIntervalMs, k, le(k, kMax))
}

/**
 * Kafka's start-up cross-checks (GroupCoordinatorConfig.verifyStreamsGroupConfigs and the
 * rebalance-protocol check in KafkaConfig), with Kafka's message texts, in Kafka's order.
 */
export function verifyGroupCoordinatorConfigs(
  v: GroupCoordinatorConfig,
  raw: Readonly<Record<string, string>>,
): void {
  requireThat(
    v.groupCoordinatorRebalanceProtocols.includes('classic'),
    'group.coordinator.rebalance.protocols',
    "Disabling the 'classic' protocol is not supported.",
  )
  verifyModernGroupBounds('group.streams.', {
    sessionTimeoutMs: v.groupStreamsSessionTimeoutMs,
    minSessionTimeoutMs: v.groupStreamsMinSessionTimeoutMs,
    maxSessionTimeoutMs: v.groupStreamsMaxSessionTimeoutMs,
    heartbeatIntervalMs: v.groupStreamsHeartbeatIntervalMs,
    minHeartbeatIntervalMs: v.groupStreamsMinHeartbeatIntervalMs,
    maxHeartbeatIntervalMs: v.groupStreamsMaxHeartbeatIntervalMs,
    assignmentIntervalMs: v.groupStreamsAssignmentIntervalMs,
    minAssignmentIntervalMs: v.groupStreamsMinAssignmentIntervalMs,
    maxAssignmentIntervalMs: v.groupStreamsMaxAssignmentIntervalMs,
  })
  const p = 'group.streams.'
  requireThat(
    v.groupStreamsNumStandbyReplicas <= v.groupStreamsMaxStandbyReplicas,
    `${p}num.standby.replicas`,
    le(`${p}num.standby.replicas`, `${p}max.standby.replicas`),
  )
  requireThat(
    v.groupStreamsTaskOffsetIntervalMs >= v.groupStreamsMinTaskOffsetIntervalMs,
    `${p}task.offset.interval.ms`,
    ge(`${p}task.offset.interval.ms`, `${p}min.task.offset.interval.ms`),
  )
  requireThat(
    v.groupStreamsNumWarmupReplicas <= v.groupStreamsMaxWarmupReplicas,
    `${p}num.warmup.replicas`,
    le(`${p}num.warmup.replicas`, `${p}max.warmup.replicas`),
  )
  if (v.groupConsumerSessionTimeoutMs !== undefined) {
    verifyModernGroupBounds('group.consumer.', {
      sessionTimeoutMs: v.groupConsumerSessionTimeoutMs,
      minSessionTimeoutMs: v.groupConsumerMinSessionTimeoutMs ?? 45000,
      maxSessionTimeoutMs: v.groupConsumerMaxSessionTimeoutMs ?? 60000,
      heartbeatIntervalMs: v.groupConsumerHeartbeatIntervalMs ?? 5000,
      minHeartbeatIntervalMs: v.groupConsumerMinHeartbeatIntervalMs ?? 5000,
      maxHeartbeatIntervalMs: v.groupConsumerMaxHeartbeatIntervalMs ?? 15000,
      assignmentIntervalMs: v.groupConsumerAssignmentIntervalMs ?? 1000,
      minAssignmentIntervalMs: v.groupConsumerMinAssignmentIntervalMs ?? 0,
      maxAssignmentIntervalMs: v.groupConsumerMaxAssignmentIntervalMs ?? 15000,
    })
  }
  // Checked on the supplied text, as Kafka does, so `a,a` is refused rather than silently merged.
  const tagsKey = `${p}rack.aware.assignment.tags`
  const tags = Object.hasOwn(raw, tagsKey) ? splitList(raw[tagsKey]) : []
  requireThat(new Set(tags).size === tags.length, tagsKey, `${tagsKey} must not contain duplicate tag keys.`)
}
