/**
 * The topic-level configs Kafka accepts (Kafka's LogConfig definitions, 4.x line), with their types
 * and defaults. Topograph stores no data, so these are only validated, kept with the topic, and
 * reported back: in CreateTopics v5+ responses and by DescribeConfigs, as Kafka reports them.
 */

import {
  checkBounds,
  checkOneOf,
  InvalidValue,
  invalidValueMessage,
  parseBoolean,
  parseDouble,
  parseInt32,
  parseInt64,
  splitList,
} from '../../config/index.js'

export type TopicConfigType = 'int' | 'long' | 'double' | 'boolean' | 'string' | 'list'

export interface TopicConfigDef {
  readonly type: TopicConfigType
  /** The default as Kafka prints it in a CreateTopics response. */
  readonly default: string
  /** Allowed values (string and list types). */
  readonly oneOf?: readonly string[]
  /** Kafka's range for numbers (atLeast / between). */
  readonly min?: number
  readonly max?: number
  /** What the key means (DescribeConfigs documentation). */
  readonly doc: string
  /**
   * The broker key a topic without this key falls back to, with the value DescribeConfigs reports
   * for it on a broker that does not set it (Kafka's ServerTopicConfigSynonyms, first synonym with
   * a default). Absent: the key has no broker synonym.
   */
  readonly synonym?: { readonly name: string; readonly value: string }
}

const LONG_MAX = '9223372036854775807'

type Row = [string, Omit<TopicConfigDef, 'synonym'>, string?, string?]

/** [key, definition, broker synonym (default: the same name), its default text (default: the topic default)] */
const ROWS: readonly Row[] = [
  [
    'cleanup.policy',
    {
      type: 'list',
      default: 'delete',
      oneOf: ['compact', 'delete'],
      doc: 'What happens to old segments: deleted after the retention time or size, or compacted to the latest record per key, or both.',
    },
    'log.cleanup.policy',
  ],
  [
    'compression.type',
    {
      type: 'string',
      default: 'producer',
      oneOf: ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'],
      doc: "The compression of the topic's stored batches; producer keeps what the producer sent.",
    },
    'compression.type',
  ],
  [
    'compression.gzip.level',
    { type: 'int', default: '-1', doc: 'The gzip level used when compression.type is gzip.' },
    'compression.gzip.level',
  ],
  [
    'compression.lz4.level',
    { type: 'int', min: 1, max: 17, default: '9', doc: 'The lz4 level used when compression.type is lz4.' },
    'compression.lz4.level',
  ],
  [
    'compression.zstd.level',
    {
      type: 'int',
      min: -131072,
      max: 22,
      default: '3',
      doc: 'The zstd level used when compression.type is zstd.',
    },
    'compression.zstd.level',
  ],
  [
    'delete.retention.ms',
    {
      type: 'long',
      min: 0,
      default: '86400000',
      doc: 'How long delete markers are kept in a compacted topic.',
    },
    'log.cleaner.delete.retention.ms',
  ],
  [
    'errors.deadletterqueue.group.enable',
    {
      type: 'boolean',
      default: 'false',
      doc: 'Whether share groups may use this topic as their dead-letter queue.',
    },
  ],
  [
    'file.delete.delay.ms',
    {
      type: 'long',
      min: 0,
      default: '60000',
      doc: 'How long a deleted segment file waits before it is removed from disk.',
    },
    'log.segment.delete.delay.ms',
  ],
  [
    'flush.messages',
    {
      type: 'long',
      min: 1,
      default: LONG_MAX,
      doc: 'How many records may be written before the log is forced to disk.',
    },
    'log.flush.interval.messages',
  ],
  [
    'flush.ms',
    {
      type: 'long',
      min: 0,
      default: LONG_MAX,
      doc: 'How long records may wait before the log is forced to disk.',
    },
    'log.flush.scheduler.interval.ms',
  ],
  [
    'follower.replication.throttled.replicas',
    { type: 'list', default: '', doc: 'Replicas whose replication is throttled on the follower side.' },
  ],
  [
    'index.interval.bytes',
    {
      type: 'int',
      min: 0,
      default: '4096',
      doc: 'How many bytes of records lie between two offset index entries.',
    },
    'log.index.interval.bytes',
  ],
  [
    'leader.replication.throttled.replicas',
    { type: 'list', default: '', doc: 'Replicas whose replication is throttled on the leader side.' },
  ],
  [
    'local.retention.bytes',
    {
      type: 'long',
      min: -2,
      default: '-2',
      doc: 'Local log size kept with tiered storage; -2 means retention.bytes.',
    },
    'log.local.retention.bytes',
  ],
  [
    'local.retention.ms',
    {
      type: 'long',
      min: -2,
      default: '-2',
      doc: 'Local log age kept with tiered storage; -2 means retention.ms.',
    },
    'log.local.retention.ms',
  ],
  [
    'max.compaction.lag.ms',
    { type: 'long', min: 1, default: LONG_MAX, doc: 'The longest a record may stay uncompacted.' },
    'log.cleaner.max.compaction.lag.ms',
  ],
  [
    'max.message.bytes',
    { type: 'int', min: 0, default: '1048588', doc: 'The largest record batch the topic accepts.' },
    'message.max.bytes',
  ],
  [
    'message.timestamp.after.max.ms',
    { type: 'long', min: 0, default: '3600000', doc: 'How far in the future a record timestamp may lie.' },
    'log.message.timestamp.after.max.ms',
  ],
  [
    'message.timestamp.before.max.ms',
    { type: 'long', min: 0, default: LONG_MAX, doc: 'How far in the past a record timestamp may lie.' },
    'log.message.timestamp.before.max.ms',
  ],
  [
    'message.timestamp.type',
    {
      type: 'string',
      default: 'CreateTime',
      oneOf: ['CreateTime', 'LogAppendTime'],
      doc: "Whether a record's timestamp is the producer's or the time the broker appended it.",
    },
    'log.message.timestamp.type',
  ],
  [
    'min.cleanable.dirty.ratio',
    {
      type: 'double',
      min: 0,
      max: 1,
      default: '0.5',
      doc: 'The share of uncompacted log above which the cleaner compacts.',
    },
    'log.cleaner.min.cleanable.ratio',
  ],
  [
    'min.compaction.lag.ms',
    { type: 'long', min: 0, default: '0', doc: 'The shortest a record stays uncompacted.' },
    'log.cleaner.min.compaction.lag.ms',
  ],
  [
    'min.insync.replicas',
    { type: 'int', min: 1, default: '1', doc: 'How many in-sync replicas an acks=all write needs.' },
    'min.insync.replicas',
  ],
  [
    'preallocate',
    { type: 'boolean', default: 'false', doc: 'Whether segment files are preallocated on disk.' },
    'log.preallocate',
  ],
  [
    'remote.copy.lag.bytes',
    { type: 'long', default: '-1', doc: 'How many bytes may wait before they are copied to tiered storage.' },
    'log.remote.copy.lag.bytes',
  ],
  [
    'remote.copy.lag.ms',
    {
      type: 'long',
      default: '-1',
      doc: 'How long records may wait before they are copied to tiered storage.',
    },
    'log.remote.copy.lag.ms',
  ],
  [
    'remote.log.copy.disable',
    { type: 'boolean', default: 'false', doc: 'Whether copying to tiered storage is stopped.' },
  ],
  [
    'remote.log.delete.on.disable',
    {
      type: 'boolean',
      default: 'false',
      doc: 'Whether tiered data is deleted when tiered storage is turned off.',
    },
  ],
  [
    'remote.storage.enable',
    { type: 'boolean', default: 'false', doc: 'Whether the topic uses tiered storage.' },
  ],
  [
    'retention.bytes',
    {
      type: 'long',
      default: '-1',
      doc: 'The largest a partition may grow before old segments are deleted; -1 means no limit.',
    },
    'log.retention.bytes',
  ],
  [
    'retention.ms',
    {
      type: 'long',
      min: -1,
      default: '604800000',
      doc: 'How long records are kept before old segments are deleted; -1 means no limit.',
    },
    'log.retention.hours',
    '168',
  ],
  [
    'segment.bytes',
    {
      type: 'int',
      min: 1048576,
      default: '1073741824',
      doc: 'The size at which a new log segment is started.',
    },
    'log.segment.bytes',
  ],
  [
    'segment.index.bytes',
    { type: 'int', min: 4, default: '10485760', doc: 'The size of the offset index of a segment.' },
    'log.index.size.max.bytes',
  ],
  [
    'segment.jitter.ms',
    { type: 'long', min: 0, default: '0', doc: 'The most random time subtracted from segment.ms.' },
    'log.roll.jitter.hours',
    '0',
  ],
  [
    'segment.ms',
    { type: 'long', min: 1, default: '604800000', doc: 'The age at which a new log segment is started.' },
    'log.roll.hours',
    '168',
  ],
  [
    'unclean.leader.election.enable',
    { type: 'boolean', default: 'false', doc: 'Whether a replica that is not in sync may become leader.' },
    'unclean.leader.election.enable',
  ],
]

export const TOPIC_CONFIGS: ReadonlyMap<string, TopicConfigDef> = new Map<string, TopicConfigDef>(
  ROWS.map(([name, def, synonym, synonymValue]) => [
    name,
    synonym === undefined ? def : { ...def, synonym: { name: synonym, value: synonymValue ?? def.default } },
  ]),
)

/**
 * Kafka's checks across a topic's configs (LogConfig.validateValues): min.compaction.lag.ms may not
 * exceed max.compaction.lag.ms. Returns Kafka's message, or null.
 */
export function checkTopicConfigSet(configs: ReadonlyMap<string, string>): string | null {
  const min = BigInt(configs.get('min.compaction.lag.ms')?.trim() ?? '0')
  const max = BigInt(configs.get('max.compaction.lag.ms')?.trim() ?? LONG_MAX)
  if (min > max) {
    return `conflict topic config setting min.compaction.lag.ms (${min}) > max.compaction.lag.ms (${max})`
  }
  return null
}

/**
 * Checks one config value against its definition; returns Kafka's message for a bad value
 * ("Invalid value X for configuration Y: …"), or null when the value is acceptable.
 */
export function checkTopicConfig(name: string, value: string): string | null {
  const def = TOPIC_CONFIGS.get(name)
  if (def === undefined) return `Unknown topic config name: ${name}`
  try {
    parseTopicConfigValue(name, def, value)
    return null
  } catch (e) {
    if (e instanceof InvalidValue) return invalidValueMessage(name, value, e.message)
    if (e instanceof ConfigRefusal) return e.message
    throw e
  }
}

/** Kafka's parse and validation of one topic config value; throws InvalidValue with the reason. */
function parseTopicConfigValue(name: string, def: TopicConfigDef, value: string): void {
  const v = value.trim()
  switch (def.type) {
    case 'int':
      checkBounds(parseInt32(v), def)
      return
    case 'long':
      checkBounds(parseInt64(v), def)
      return
    case 'double':
      checkBounds(parseDouble(v), def)
      return
    case 'boolean':
      parseBoolean(v)
      return
    case 'string':
      if (def.oneOf !== undefined) checkOneOf(v, def.oneOf)
      return
    case 'list': {
      if (def.oneOf === undefined || v === '') return
      // Kafka's ValidList.in: no repeated entry, no empty one, and each one of the allowed strings,
      // refused with the entry's own "Invalid value" message.
      const items = splitList(v)
      if (new Set(items).size !== items.length)
        throw new ConfigRefusal(`Configuration '${name}' values must not be duplicated.`)
      for (const item of items) {
        if (item === '') throw new ConfigRefusal(`Configuration '${name}' values must not be empty.`)
        if (!def.oneOf.includes(item))
          throw new ConfigRefusal(
            invalidValueMessage(name, item, `String must be one of: ${def.oneOf.join(', ')}`),
          )
      }
    }
  }
}

/** A refusal whose message is Kafka's whole text (a ConfigException(message)), not a reason. */
class ConfigRefusal extends Error {}
