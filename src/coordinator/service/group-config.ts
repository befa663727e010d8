/**
 * Group-level configuration (Kafka's GroupConfig): the keys an operator may set on a GROUP config
 * resource, their types and defaults, the validation IncrementalAlterConfigs runs on a group's
 * configs (with Kafka's messages and order), the clamping applied when a stored override is used
 * (GroupConfig.evaluate), the effective streams settings of a group, and the entries
 * DescribeConfigs reports.
 *
 * Every key of Kafka's GroupConfig is defined here, consumer and share keys included, so a describe
 * lists what a Kafka broker lists and an alteration is validated as Kafka validates it. The consumer
 * keys take their bounds and defaults from the broker's `group.consumer.*` settings, as the streams
 * keys take theirs from `group.streams.*`. Topograph does not serve share groups: their keys are
 * stored and reported, nothing reads them, and their bounds and defaults are Kafka's (Topograph has
 * no `group.share.*` settings).
 */
import { ApiError } from '../../protocol/api-error.js'
import { ErrorCode } from '../../protocol/errors.js'
import {
  checkBounds,
  checkOneOf,
  InvalidValue,
  invalidValueMessage,
  parseBoolean,
  parseInt32,
  parseInt64,
  splitList,
} from '../../config/index.js'
import { STREAMS_GROUP_CONFIG_DEFAULTS, type StreamsGroupConfig } from '../shard/streams/config.js'
import {
  type BrokerConsumerGroupConfig,
  consumerGroupConfigFrom,
  type GroupCoordinatorConfig,
} from './config.js'

export type GroupConfigType = 'int' | 'long' | 'boolean' | 'string' | 'list'

/** Where a described value comes from (Kafka's DescribeConfigs ConfigSource names). */
export type GroupConfigSource = 'GROUP_CONFIG' | 'STATIC_BROKER_CONFIG' | 'DEFAULT_CONFIG'

/** A bad group configuration: INVALID_CONFIG with Kafka's message (its InvalidConfigurationException). */
const invalidConfig = (message: string): ApiError => new ApiError(ErrorCode.INVALID_CONFIG, message)

/** What validation and describe read besides the group's own values. */
export interface GroupConfigContext {
  /** The broker configuration: bounds, defaults, and the keys the operator set (`raw`). */
  readonly broker: GroupCoordinatorConfig
  /** Names of the registered task assignors, the default first. */
  readonly assignorNames: readonly string[]
}

type Parsed = number | bigint | boolean | string | readonly string[]

interface KeyDef {
  readonly name: string
  readonly type: GroupConfigType
  /** The broker key this key defaults to (its DescribeConfigs synonym); null when there is none. */
  readonly brokerSynonym: string | null
  readonly doc: string
  /** The validator's reason for a bad parsed value (Kafka's ConfigDef validators), or null. */
  readonly check?: (value: Parsed, name: string) => ApiError | null
}

/** A validator's InvalidValue as Kafka words it for the key and the value. */
function reasonOf(check: () => void, name: string, value: Parsed): ApiError | null {
  try {
    check()
    return null
  } catch (e) {
    if (e instanceof InvalidValue) return invalidValue(name, String(value), e.message)
    throw e
  }
}

const atLeast =
  (min: number) =>
  (value: Parsed, name: string): ApiError | null =>
    reasonOf(() => checkBounds(value as number | bigint, { min }), name, value)

const oneOf =
  (...allowed: string[]) =>
  (value: Parsed, name: string): ApiError | null =>
    reasonOf(() => checkOneOf(value as string, allowed), name, value)

/** Kafka's ValidList.anyNonDuplicateValues(true, false), after the parser dropped duplicates. */
const nonEmptyEntries = (value: Parsed, name: string): ApiError | null =>
  (value as readonly string[]).some((s) => s === '')
    ? invalidConfig(`Configuration '${name}' values must not be empty.`)
    : null

const ISO_DURATION =
  /^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$/i

/** Java's Duration.parse, reduced to "is it a valid, non-negative duration". */
function nonNegativeDuration(text: string): boolean {
  const m = ISO_DURATION.exec(text)
  if (m === null) return false
  const [, sign, d, h, min, s, frac] = m
  if (d === undefined && h === undefined && min === undefined && s === undefined) return false
  if (text.toUpperCase().endsWith('T')) return false
  const n = (v: string | undefined) => BigInt(v ?? '0')
  let nanos = ((n(d) * 24n + n(h)) * 60n + n(min)) * 60n * 1_000_000_000n + n(s) * 1_000_000_000n
  if (frac !== undefined && frac !== '') {
    const f = BigInt(frac.padEnd(9, '0'))
    nanos += (s ?? '').startsWith('-') ? -f : f
  }
  if (sign === '-') nanos = -nanos
  return nanos >= 0n
}

/** Kafka's ShareGroupAutoOffsetResetStrategy validator. */
const shareAutoOffsetReset = (value: Parsed, name: string): ApiError | null => {
  const v = value as string
  const ok =
    v === 'earliest' ||
    v === 'latest' ||
    (v.startsWith('by_duration:') && nonNegativeDuration(v.slice('by_duration:'.length)))
  return ok
    ? null
    : invalidValue(
        name,
        v,
        `Invalid value \`${v}\` for configuration ${name}. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.`,
      )
}

function invalidValue(name: string, value: string, reason: string): ApiError {
  return invalidConfig(invalidValueMessage(name, value, reason))
}

export const STREAMS_SESSION_TIMEOUT_MS = 'streams.session.timeout.ms'
export const STREAMS_HEARTBEAT_INTERVAL_MS = 'streams.heartbeat.interval.ms'
export const STREAMS_NUM_STANDBY_REPLICAS = 'streams.num.standby.replicas'
export const STREAMS_INITIAL_REBALANCE_DELAY_MS = 'streams.initial.rebalance.delay.ms'
export const STREAMS_ASSIGNMENT_INTERVAL_MS = 'streams.assignment.interval.ms'
export const STREAMS_ASSIGNOR_OFFLOAD_ENABLE = 'streams.assignor.offload.enable'
export const STREAMS_TASK_OFFSET_INTERVAL_MS = 'streams.task.offset.interval.ms'
export const STREAMS_NUM_WARMUP_REPLICAS = 'streams.num.warmup.replicas'
export const STREAMS_RACK_AWARE_ASSIGNMENT_TAGS = 'streams.rack.aware.assignment.tags'
export const STREAMS_ACCEPTABLE_RECOVERY_LAG = 'streams.acceptable.recovery.lag'
export const STREAMS_ASSIGNOR_NAME = 'streams.assignor.name'
const DLQ_TOPIC_NAME = 'errors.deadletterqueue.topic.name'

/** Kafka's GroupConfig keys, in Kafka's definition order (the order values are parsed in). */
const KEYS: readonly KeyDef[] = [
  {
    name: 'consumer.session.timeout.ms',
    type: 'int',
    brokerSynonym: 'group.consumer.session.timeout.ms',
    doc: 'How long a consumer group member may go without a heartbeat before it is removed from the group.',
    check: atLeast(1),
  },
  {
    name: 'consumer.heartbeat.interval.ms',
    type: 'int',
    brokerSynonym: 'group.consumer.heartbeat.interval.ms',
    doc: 'The heartbeat interval handed to the members of a consumer group.',
    check: atLeast(1),
  },
  {
    name: 'consumer.assignment.interval.ms',
    type: 'int',
    brokerSynonym: 'group.consumer.assignment.interval.ms',
    doc: 'The shortest time between two target assignments of a consumer group.',
    check: atLeast(0),
  },
  {
    name: 'consumer.assignor.offload.enable',
    type: 'boolean',
    brokerSynonym: 'group.consumer.assignor.offload.enable',
    doc: 'Whether the assignment of a consumer group runs on a background thread of the coordinator.',
  },
  {
    name: 'share.session.timeout.ms',
    type: 'int',
    brokerSynonym: 'group.share.session.timeout.ms',
    doc: 'How long a share group member may go without a heartbeat before it is removed from the group.',
    check: atLeast(1),
  },
  {
    name: 'share.heartbeat.interval.ms',
    type: 'int',
    brokerSynonym: 'group.share.heartbeat.interval.ms',
    doc: 'The heartbeat interval handed to the members of a share group.',
    check: atLeast(1),
  },
  {
    name: 'share.record.lock.duration.ms',
    type: 'int',
    brokerSynonym: 'group.share.record.lock.duration.ms',
    doc: 'How long a share group member holds an acquired record before it becomes available again.',
    check: atLeast(1000),
  },
  {
    name: 'share.delivery.count.limit',
    type: 'int',
    brokerSynonym: 'group.share.delivery.count.limit',
    doc: 'How many times a record is delivered to a share group before it is given up on.',
    check: atLeast(2),
  },
  {
    name: 'share.partition.max.record.locks',
    type: 'int',
    brokerSynonym: 'group.share.partition.max.record.locks',
    doc: 'The most records of one share-partition that may be acquired at the same time.',
    check: atLeast(100),
  },
  {
    name: 'share.auto.offset.reset',
    type: 'string',
    brokerSynonym: null,
    doc: "Where a share group starts reading a partition it has no position for: 'earliest', 'latest', or 'by_duration:<ISO-8601 duration>' (that long before now).",
    check: shareAutoOffsetReset,
  },
  {
    name: 'share.isolation.level',
    type: 'string',
    brokerSynonym: null,
    doc: 'Whether a share group reads only committed transactional records (read_committed) or every record (read_uncommitted).',
    check: oneOf('read_committed', 'read_uncommitted'),
  },
  {
    name: 'share.renew.acknowledge.enable',
    type: 'boolean',
    brokerSynonym: null,
    doc: 'Whether share group members may renew the lock of a record they hold.',
  },
  {
    name: 'share.assignment.interval.ms',
    type: 'int',
    brokerSynonym: 'group.share.assignment.interval.ms',
    doc: 'The shortest time between two target assignments of a share group.',
    check: atLeast(0),
  },
  {
    name: 'share.assignor.offload.enable',
    type: 'boolean',
    brokerSynonym: 'group.share.assignor.offload.enable',
    doc: 'Whether the assignment of a share group runs on a background thread of the coordinator.',
  },
  {
    name: STREAMS_SESSION_TIMEOUT_MS,
    type: 'int',
    brokerSynonym: 'group.streams.session.timeout.ms',
    doc: 'How long a streams group member may go without a heartbeat before it is removed from the group.',
    check: atLeast(1),
  },
  {
    name: STREAMS_HEARTBEAT_INTERVAL_MS,
    type: 'int',
    brokerSynonym: 'group.streams.heartbeat.interval.ms',
    doc: 'The heartbeat interval handed to the members of a streams group (HeartbeatIntervalMs).',
    check: atLeast(1),
  },
  {
    name: STREAMS_NUM_STANDBY_REPLICAS,
    type: 'int',
    brokerSynonym: 'group.streams.num.standby.replicas',
    doc: 'How many standby replicas of each task the assignor places; a change makes the group compute a new target assignment.',
    check: atLeast(0),
  },
  {
    name: STREAMS_INITIAL_REBALANCE_DELAY_MS,
    type: 'int',
    brokerSynonym: 'group.streams.initial.rebalance.delay.ms',
    doc: 'How long an empty streams group waits for more members before its first assignment.',
    check: atLeast(0),
  },
  {
    name: STREAMS_ASSIGNMENT_INTERVAL_MS,
    type: 'int',
    brokerSynonym: 'group.streams.assignment.interval.ms',
    doc: 'The shortest time between two assignor runs of a streams group.',
    check: atLeast(0),
  },
  {
    name: STREAMS_ASSIGNOR_OFFLOAD_ENABLE,
    type: 'boolean',
    brokerSynonym: 'group.streams.assignor.offload.enable',
    doc: 'Accepted for compatibility; the streams assignor always runs inline, as in Kafka.',
  },
  {
    name: STREAMS_TASK_OFFSET_INTERVAL_MS,
    type: 'int',
    brokerSynonym: 'group.streams.task.offset.interval.ms',
    doc: 'How often streams group members report their task changelog offsets (TaskOffsetIntervalMs).',
    check: atLeast(1),
  },
  {
    name: STREAMS_NUM_WARMUP_REPLICAS,
    type: 'int',
    brokerSynonym: 'group.streams.num.warmup.replicas',
    doc: 'The most warm-up replicas the assignor may place in a streams group.',
    check: atLeast(0),
  },
  {
    name: STREAMS_RACK_AWARE_ASSIGNMENT_TAGS,
    type: 'list',
    brokerSynonym: 'group.streams.rack.aware.assignment.tags',
    doc: 'Client tag keys over which standby replicas are spread; part of the assignment configs.',
    check: nonEmptyEntries,
  },
  {
    name: STREAMS_ACCEPTABLE_RECOVERY_LAG,
    type: 'long',
    brokerSynonym: 'group.streams.acceptable.recovery.lag',
    doc: 'How many offsets a streams group member may lag behind and still count as caught up (AcceptableRecoveryLag).',
    check: atLeast(0),
  },
  {
    name: STREAMS_ASSIGNOR_NAME,
    type: 'string',
    brokerSynonym: 'group.streams.assignors',
    doc: 'The task assignor of this streams group, by name, among those registered in group.streams.assignors; unset, the first of them. A change takes effect at the next assignor run and does not start one.',
  },
  {
    name: DLQ_TOPIC_NAME,
    type: 'string',
    brokerSynonym: null,
    doc: 'The dead-letter queue topic of a share group; empty means none.',
  },
  {
    name: 'errors.deadletterqueue.copy.record.enable',
    type: 'boolean',
    brokerSynonym: null,
    doc: 'Whether a record sent to the dead-letter queue carries the original record or only the context headers.',
  },
]

const BY_NAME: ReadonlyMap<string, KeyDef> = new Map(KEYS.map((k) => [k.name, k]))

/** Every group config key, in Kafka's definition order. */
export const GROUP_CONFIG_NAMES: readonly string[] = KEYS.map((k) => k.name)

export function isGroupConfigName(name: string): boolean {
  return BY_NAME.has(name)
}

/** The type of a group config key (undefined for an unknown key). */
export function groupConfigType(name: string): GroupConfigType | undefined {
  return BY_NAME.get(name)?.type
}

// ---------------------------------------------------------------------------------------------
// Parsing (Kafka's ConfigDef.parseType)

const INT_RE = /^[+-]?\d+$/

function parse(def: KeyDef, raw: string): Parsed {
  try {
    switch (def.type) {
      case 'int':
        return parseInt32(raw)
      case 'long':
        return parseInt64(raw)
      case 'boolean':
        return parseBoolean(raw)
      case 'string':
        return raw.trim()
      case 'list':
        // The parser drops repeated entries (Kafka logs a warning); duplicates of the rack tags were
        // refused on the raw text before.
        return [...new Set(splitList(raw))]
    }
  } catch (e) {
    if (e instanceof InvalidValue) throw invalidValue(def.name, raw, e.message)
    throw e
  }
}

/** The text DescribeConfigs shows for a parsed value (Kafka's ConfigDef.convertToString). */
function toText(value: Parsed): string {
  return Array.isArray(value) ? value.join(',') : String(value)
}

/** A stored value as DescribeConfigs shows it (parsed, then printed; the raw text if it no longer parses). */
export function normalizedGroupConfigValue(name: string, raw: string): string {
  const def = BY_NAME.get(name)
  if (def === undefined) return raw
  try {
    return toText(parse(def, raw))
  } catch {
    return raw
  }
}

// ---------------------------------------------------------------------------------------------
// Validation (GroupConfig.validate)

/** Kafka's bounds of the share group keys (their broker defaults; there are no `group.share.*` keys). */
const SHARE_BOUNDS = {
  minSessionTimeoutMs: 45000,
  maxSessionTimeoutMs: 60000,
  sessionTimeoutMs: 45000,
  minHeartbeatIntervalMs: 5000,
  maxHeartbeatIntervalMs: 15000,
  heartbeatIntervalMs: 5000,
  minAssignmentIntervalMs: 0,
  maxAssignmentIntervalMs: 15000,
  minRecordLockDurationMs: 15000,
  maxRecordLockDurationMs: 60000,
  minDeliveryCountLimit: 2,
  maxDeliveryCountLimit: 10,
  minPartitionMaxRecordLocks: 100,
  maxPartitionMaxRecordLocks: 4000,
} as const

/** Kafka's broker defaults of the consumer keys' synonyms (`group.consumer.*`), as DescribeConfigs prints them. */
const CONSUMER_BROKER_DEFAULTS: Readonly<Record<string, string>> = {
  'group.consumer.session.timeout.ms': '45000',
  'group.consumer.heartbeat.interval.ms': '5000',
  'group.consumer.assignment.interval.ms': '1000',
  'group.consumer.assignor.offload.enable': 'true',
}

/** The broker's value of a `group.consumer.*` synonym, as DescribeConfigs prints it. */
function consumerBrokerValue(brokerKey: string, b: GroupCoordinatorConfig): string {
  const c = consumerGroupConfigFrom(b)
  switch (brokerKey) {
    case 'group.consumer.session.timeout.ms':
      return String(c.sessionTimeoutMs)
    case 'group.consumer.heartbeat.interval.ms':
      return String(c.heartbeatIntervalMs)
    case 'group.consumer.assignment.interval.ms':
      return String(c.assignmentIntervalMs)
    case 'group.consumer.assignor.offload.enable': {
      // Accepted and reported, never read (the assignors run inline): the operator's text as parsed.
      const raw = b.raw?.[brokerKey]
      return raw === undefined ? CONSUMER_BROKER_DEFAULTS[brokerKey] : String(parseBoolean(raw.trim()))
    }
    default:
      throw new Error(`no value for ${brokerKey}`)
  }
}

/** Kafka's defaults of the share and dead-letter keys, as DescribeConfigs prints them. */
const FIXED_DEFAULTS: Readonly<Record<string, string>> = {
  'share.session.timeout.ms': '45000',
  'share.heartbeat.interval.ms': '5000',
  'share.record.lock.duration.ms': '30000',
  'share.delivery.count.limit': '5',
  'share.partition.max.record.locks': '2000',
  'share.auto.offset.reset': 'latest',
  'share.isolation.level': 'read_uncommitted',
  'share.renew.acknowledge.enable': 'true',
  'share.assignment.interval.ms': '1000',
  'share.assignor.offload.enable': 'true',
  [DLQ_TOPIC_NAME]: '',
  'errors.deadletterqueue.copy.record.enable': 'false',
}

/**
 * Validates the full set of a group's configs after a change (Kafka validates the merged set, so a
 * stored value is checked again). Throws ApiError (INVALID_CONFIG) with Kafka's message for the first
 * problem, in Kafka's order: unknown names, duplicate rack tags (on the raw text), each value's
 * type and validator in definition order, the broker-level bounds, the assignor name, the
 * session-timeout/heartbeat-interval cross checks, the dead-letter topic name.
 */
export function validateGroupConfig(configs: ReadonlyMap<string, string>, ctx: GroupConfigContext): void {
  for (const name of configs.keys()) {
    if (!BY_NAME.has(name)) throw invalidConfig(`Unknown group config name: ${name}`)
  }
  const rawTags = configs.get(STREAMS_RACK_AWARE_ASSIGNMENT_TAGS)
  if (rawTags !== undefined) {
    const tags = splitList(rawTags)
    if (new Set(tags).size !== tags.length) {
      throw invalidConfig(`${STREAMS_RACK_AWARE_ASSIGNMENT_TAGS} must not contain duplicate tag keys.`)
    }
  }
  const parsed = new Map<string, Parsed>()
  for (const def of KEYS) {
    const raw = configs.get(def.name)
    if (raw === undefined) continue
    const value = parse(def, raw)
    const problem = def.check?.(value, def.name)
    if (problem) throw problem
    parsed.set(def.name, value)
  }
  const b = ctx.broker
  const int = (k: string) => parsed.get(k) as number | undefined
  const range = (k: string, min: number, max: number) => {
    const v = int(k)
    if (v !== undefined && (v < min || v > max))
      throw invalidConfig(`${k} must be in the range ${min} to ${max} inclusive.`)
  }
  const max = (k: string, limit: number) => {
    const v = int(k)
    if (v !== undefined && v > limit) throw invalidConfig(`${k} must be less than or equal to ${limit}`)
  }
  const min = (k: string, limit: number) => {
    const v = int(k)
    if (v !== undefined && v < limit) throw invalidConfig(`${k} must be greater than or equal to ${limit}`)
  }
  const C: BrokerConsumerGroupConfig = consumerGroupConfigFrom(b)
  const S = SHARE_BOUNDS
  range('consumer.heartbeat.interval.ms', C.minHeartbeatIntervalMs, C.maxHeartbeatIntervalMs)
  range('consumer.session.timeout.ms', C.minSessionTimeoutMs, C.maxSessionTimeoutMs)
  range('consumer.assignment.interval.ms', C.minAssignmentIntervalMs, C.maxAssignmentIntervalMs)
  range('share.heartbeat.interval.ms', S.minHeartbeatIntervalMs, S.maxHeartbeatIntervalMs)
  range('share.session.timeout.ms', S.minSessionTimeoutMs, S.maxSessionTimeoutMs)
  range('share.record.lock.duration.ms', S.minRecordLockDurationMs, S.maxRecordLockDurationMs)
  range('share.delivery.count.limit', S.minDeliveryCountLimit, S.maxDeliveryCountLimit)
  range('share.partition.max.record.locks', S.minPartitionMaxRecordLocks, S.maxPartitionMaxRecordLocks)
  range('share.assignment.interval.ms', S.minAssignmentIntervalMs, S.maxAssignmentIntervalMs)
  range(
    STREAMS_HEARTBEAT_INTERVAL_MS,
    b.groupStreamsMinHeartbeatIntervalMs,
    b.groupStreamsMaxHeartbeatIntervalMs,
  )
  range(STREAMS_SESSION_TIMEOUT_MS, b.groupStreamsMinSessionTimeoutMs, b.groupStreamsMaxSessionTimeoutMs)
  max(STREAMS_NUM_STANDBY_REPLICAS, b.groupStreamsMaxStandbyReplicas)
  range(
    STREAMS_ASSIGNMENT_INTERVAL_MS,
    b.groupStreamsMinAssignmentIntervalMs,
    b.groupStreamsMaxAssignmentIntervalMs,
  )
  min(STREAMS_TASK_OFFSET_INTERVAL_MS, b.groupStreamsMinTaskOffsetIntervalMs)
  max(STREAMS_NUM_WARMUP_REPLICAS, b.groupStreamsMaxWarmupReplicas)
  const assignor = parsed.get(STREAMS_ASSIGNOR_NAME) as string | undefined
  if (assignor !== undefined && !ctx.assignorNames.includes(assignor)) {
    throw invalidConfig(
      `${STREAMS_ASSIGNOR_NAME} '${assignor}' is not a registered task assignor. Registered assignors are: [${ctx.assignorNames.join(', ')}].`,
    )
  }
  const sessionExceedsHeartbeat = (session: string, defSession: number, hb: string, defHb: number) => {
    if (!parsed.has(session) && !parsed.has(hb)) return
    if ((int(session) ?? defSession) <= (int(hb) ?? defHb))
      throw invalidConfig(`${session} must be greater than ${hb}`)
  }
  sessionExceedsHeartbeat(
    'consumer.session.timeout.ms',
    C.sessionTimeoutMs,
    'consumer.heartbeat.interval.ms',
    C.heartbeatIntervalMs,
  )
  sessionExceedsHeartbeat(
    'share.session.timeout.ms',
    S.sessionTimeoutMs,
    'share.heartbeat.interval.ms',
    S.heartbeatIntervalMs,
  )
  sessionExceedsHeartbeat(
    STREAMS_SESSION_TIMEOUT_MS,
    b.groupStreamsSessionTimeoutMs,
    STREAMS_HEARTBEAT_INTERVAL_MS,
    b.groupStreamsHeartbeatIntervalMs,
  )
  const dlq = parsed.get(DLQ_TOPIC_NAME) as string | undefined
  if (dlq?.startsWith('__')) {
    throw invalidConfig(`${DLQ_TOPIC_NAME}: DLQ topic name must not start with '__'`)
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluation (GroupConfig.evaluate): stored overrides clamped to the current broker bounds

/** Where evaluation reports a clamped value (a WARN, as Kafka logs it). */
export type GroupConfigWarn = (fields: Record<string, unknown>, message: string) => void

/**
 * A group's stored overrides with the bounded streams values clamped to the broker's current
 * bounds. Values that passed validation are unchanged; a value stored before the bounds were
 * tightened (a restart with other `group.streams.*` settings) is capped, with a WARN each.
 */
export function evaluateGroupConfig(
  overrides: ReadonlyMap<string, string>,
  groupId: string,
  broker: GroupCoordinatorConfig,
  warn: GroupConfigWarn = () => undefined,
): Map<string, string> {
  const out = new Map(overrides)
  const clamp = (key: string, lo: number | null, hi: number | null) => {
    const raw = out.get(key)
    if (raw === undefined) return
    const t = raw.trim()
    if (!INT_RE.test(t)) return
    const value = Number(t)
    if (lo !== null && value < lo) {
      warn(
        { groupId, key, value, min: lo },
        `The group config '${key}' for group '${groupId}' has value ${value} which is below the broker's allowed minimum ${lo}. The effective value will be capped to ${lo}.`,
      )
      out.set(key, String(lo))
    } else if (hi !== null && value > hi) {
      warn(
        { groupId, key, value, max: hi },
        `The group config '${key}' for group '${groupId}' has value ${value} which exceeds the broker's allowed maximum ${hi}. The effective value will be capped to ${hi}.`,
      )
      out.set(key, String(hi))
    }
  }
  const C = consumerGroupConfigFrom(broker)
  const S = SHARE_BOUNDS
  clamp('consumer.session.timeout.ms', C.minSessionTimeoutMs, C.maxSessionTimeoutMs)
  clamp('consumer.heartbeat.interval.ms', C.minHeartbeatIntervalMs, C.maxHeartbeatIntervalMs)
  clamp('consumer.assignment.interval.ms', C.minAssignmentIntervalMs, C.maxAssignmentIntervalMs)
  clamp('share.session.timeout.ms', S.minSessionTimeoutMs, S.maxSessionTimeoutMs)
  clamp('share.heartbeat.interval.ms', S.minHeartbeatIntervalMs, S.maxHeartbeatIntervalMs)
  clamp('share.record.lock.duration.ms', S.minRecordLockDurationMs, S.maxRecordLockDurationMs)
  clamp('share.delivery.count.limit', S.minDeliveryCountLimit, S.maxDeliveryCountLimit)
  clamp('share.partition.max.record.locks', S.minPartitionMaxRecordLocks, S.maxPartitionMaxRecordLocks)
  clamp('share.assignment.interval.ms', S.minAssignmentIntervalMs, S.maxAssignmentIntervalMs)
  clamp(
    STREAMS_SESSION_TIMEOUT_MS,
    broker.groupStreamsMinSessionTimeoutMs,
    broker.groupStreamsMaxSessionTimeoutMs,
  )
  clamp(
    STREAMS_HEARTBEAT_INTERVAL_MS,
    broker.groupStreamsMinHeartbeatIntervalMs,
    broker.groupStreamsMaxHeartbeatIntervalMs,
  )
  clamp(STREAMS_NUM_STANDBY_REPLICAS, null, broker.groupStreamsMaxStandbyReplicas)
  clamp(
    STREAMS_ASSIGNMENT_INTERVAL_MS,
    broker.groupStreamsMinAssignmentIntervalMs,
    broker.groupStreamsMaxAssignmentIntervalMs,
  )
  clamp(STREAMS_TASK_OFFSET_INTERVAL_MS, broker.groupStreamsMinTaskOffsetIntervalMs, null)
  clamp(STREAMS_NUM_WARMUP_REPLICAS, null, broker.groupStreamsMaxWarmupReplicas)
  const session = out.get(STREAMS_SESSION_TIMEOUT_MS)
  const heartbeat = out.get(STREAMS_HEARTBEAT_INTERVAL_MS)
  if (session !== undefined || heartbeat !== undefined) {
    const s = session === undefined ? broker.groupStreamsSessionTimeoutMs : Number(session.trim())
    const h = heartbeat === undefined ? broker.groupStreamsHeartbeatIntervalMs : Number(heartbeat.trim())
    if (s <= h) {
      warn(
        { groupId, sessionTimeoutMs: s, heartbeatIntervalMs: h },
        `The effective ${STREAMS_SESSION_TIMEOUT_MS} (${s}) for group '${groupId}' is not greater than ${STREAMS_HEARTBEAT_INTERVAL_MS} (${h}). Check that the broker-level min/max bounds for session timeout and heartbeat interval do not overlap.`,
      )
    }
  }
  return out
}

/**
 * The streams settings of one group: the broker's (`base`), with each streams key the group sets
 * taken from its evaluated overrides. A value that does not parse (it cannot, once validated) keeps
 * the broker's.
 */
export function streamsGroupConfigWith(
  base: StreamsGroupConfig,
  evaluated: ReadonlyMap<string, string>,
): StreamsGroupConfig {
  const value = (key: string): Parsed | undefined => {
    const raw = evaluated.get(key)
    const def = BY_NAME.get(key)
    if (raw === undefined || def === undefined) return undefined
    try {
      return parse(def, raw)
    } catch {
      return undefined
    }
  }
  const int = (key: string, dflt: number) => (value(key) as number | undefined) ?? dflt
  const tags = value(STREAMS_RACK_AWARE_ASSIGNMENT_TAGS) as readonly string[] | undefined
  return Object.freeze({
    ...base,
    sessionTimeoutMs: int(STREAMS_SESSION_TIMEOUT_MS, base.sessionTimeoutMs),
    heartbeatIntervalMs: int(STREAMS_HEARTBEAT_INTERVAL_MS, base.heartbeatIntervalMs),
    numStandbyReplicas: int(STREAMS_NUM_STANDBY_REPLICAS, base.numStandbyReplicas),
    initialRebalanceDelayMs: int(STREAMS_INITIAL_REBALANCE_DELAY_MS, base.initialRebalanceDelayMs),
    assignmentIntervalMs: int(STREAMS_ASSIGNMENT_INTERVAL_MS, base.assignmentIntervalMs),
    assignorOffloadEnable:
      (value(STREAMS_ASSIGNOR_OFFLOAD_ENABLE) as boolean | undefined) ?? base.assignorOffloadEnable,
    taskOffsetIntervalMs: int(STREAMS_TASK_OFFSET_INTERVAL_MS, base.taskOffsetIntervalMs),
    numWarmupReplicas: int(STREAMS_NUM_WARMUP_REPLICAS, base.numWarmupReplicas),
    rackAwareAssignmentTags: tags === undefined ? base.rackAwareAssignmentTags : Object.freeze([...tags]),
    acceptableRecoveryLag:
      (value(STREAMS_ACCEPTABLE_RECOVERY_LAG) as bigint | undefined) ?? base.acceptableRecoveryLag,
    assignorName: (value(STREAMS_ASSIGNOR_NAME) as string | undefined) ?? base.assignorName,
  })
}

// ---------------------------------------------------------------------------------------------
// DescribeConfigs entries

export interface GroupConfigSynonym {
  readonly name: string
  readonly value: string | null
  readonly source: GroupConfigSource
}

export interface GroupConfigEntry {
  readonly name: string
  readonly value: string | null
  readonly source: GroupConfigSource
  readonly type: GroupConfigType
  /** Highest precedence first: the group's value when set, then the broker key's sources. */
  readonly synonyms: readonly GroupConfigSynonym[]
  readonly documentation: string
}

/** Kafka's default text of each `group.streams.*` key a group key falls back to. */
function streamsBrokerDefault(brokerKey: string): string {
  const d = STREAMS_GROUP_CONFIG_DEFAULTS
  switch (brokerKey) {
    case 'group.streams.session.timeout.ms':
      return String(d.sessionTimeoutMs)
    case 'group.streams.heartbeat.interval.ms':
      return String(d.heartbeatIntervalMs)
    case 'group.streams.num.standby.replicas':
      return String(d.numStandbyReplicas)
    case 'group.streams.initial.rebalance.delay.ms':
      return String(d.initialRebalanceDelayMs)
    case 'group.streams.assignment.interval.ms':
      return String(d.assignmentIntervalMs)
    case 'group.streams.assignor.offload.enable':
      return String(d.assignorOffloadEnable)
    case 'group.streams.task.offset.interval.ms':
      return String(d.taskOffsetIntervalMs)
    case 'group.streams.num.warmup.replicas':
      return String(d.numWarmupReplicas)
    case 'group.streams.rack.aware.assignment.tags':
      return d.rackAwareAssignmentTags.join(',')
    case 'group.streams.acceptable.recovery.lag':
      return String(d.acceptableRecoveryLag)
    case 'group.streams.assignors':
      return d.assignors.join(',')
    default:
      throw new Error(`no default for ${brokerKey}`)
  }
}

/** The broker's value of a `group.streams.*` key, as DescribeConfigs prints it. */
function streamsBrokerValue(brokerKey: string, b: GroupCoordinatorConfig): string {
  switch (brokerKey) {
    case 'group.streams.session.timeout.ms':
      return String(b.groupStreamsSessionTimeoutMs)
    case 'group.streams.heartbeat.interval.ms':
      return String(b.groupStreamsHeartbeatIntervalMs)
    case 'group.streams.num.standby.replicas':
      return String(b.groupStreamsNumStandbyReplicas)
    case 'group.streams.initial.rebalance.delay.ms':
      return String(b.groupStreamsInitialRebalanceDelayMs)
    case 'group.streams.assignment.interval.ms':
      return String(b.groupStreamsAssignmentIntervalMs)
    case 'group.streams.assignor.offload.enable':
      return String(b.groupStreamsAssignorOffloadEnable)
    case 'group.streams.task.offset.interval.ms':
      return String(b.groupStreamsTaskOffsetIntervalMs)
    case 'group.streams.num.warmup.replicas':
      return String(b.groupStreamsNumWarmupReplicas)
    case 'group.streams.rack.aware.assignment.tags':
      return [...new Set(b.groupStreamsRackAwareAssignmentTags)].join(',')
    case 'group.streams.acceptable.recovery.lag':
      return String(b.groupStreamsAcceptableRecoveryLag)
    case 'group.streams.assignors':
      return b.groupStreamsAssignors.join(',')
    default:
      throw new Error(`no value for ${brokerKey}`)
  }
}

/**
 * Every group config key of one group as DescribeConfigs reports it (ConfigHelper's group entries):
 * the group's value when it sets the key (source GROUP_CONFIG), else the broker's value of the
 * synonym key (STATIC_BROKER_CONFIG when the operator set it, DEFAULT_CONFIG otherwise), else
 * Kafka's default of the group key. `streams.assignor.name` defaults to the first registered
 * assignor's name. Sorted by name.
 */
export function describeGroupConfig(
  overrides: ReadonlyMap<string, string> | undefined,
  ctx: GroupConfigContext,
): GroupConfigEntry[] {
  const b = ctx.broker
  const raw = b.raw ?? {}
  const entries = KEYS.map((def): GroupConfigEntry => {
    const chain: GroupConfigSynonym[] = []
    let brokerValue: string | null
    const synonym = def.brokerSynonym
    if (synonym?.startsWith('group.streams.')) {
      if (Object.hasOwn(raw, synonym))
        chain.push({ name: synonym, value: raw[synonym].trim(), source: 'STATIC_BROKER_CONFIG' })
      chain.push({ name: synonym, value: streamsBrokerDefault(synonym), source: 'DEFAULT_CONFIG' })
      brokerValue =
        def.name === STREAMS_ASSIGNOR_NAME ? (ctx.assignorNames[0] ?? null) : streamsBrokerValue(synonym, b)
    } else if (synonym?.startsWith('group.consumer.')) {
      if (Object.hasOwn(raw, synonym))
        chain.push({ name: synonym, value: raw[synonym].trim(), source: 'STATIC_BROKER_CONFIG' })
      chain.push({ name: synonym, value: CONSUMER_BROKER_DEFAULTS[synonym], source: 'DEFAULT_CONFIG' })
      brokerValue = consumerBrokerValue(synonym, b)
    } else {
      const dflt = FIXED_DEFAULTS[def.name]
      // Share keys fall back to Kafka's broker defaults; the others to their own.
      chain.push({ name: synonym ?? def.name, value: dflt, source: 'DEFAULT_CONFIG' })
      brokerValue = dflt
    }
    const own = overrides?.get(def.name)
    let value = brokerValue
    if (own !== undefined) {
      value = normalizedGroupConfigValue(def.name, own)
      chain.unshift({ name: def.name, value, source: 'GROUP_CONFIG' })
    }
    return {
      name: def.name,
      value,
      source: chain[0].source,
      type: def.type,
      synonyms: chain,
      documentation: def.doc,
    }
  })
  return entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
}
