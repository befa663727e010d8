/**
 * The topic-level configs Kafka accepts in CreateTopics (Kafka's LogConfig definitions, 4.x line),
 * with their types and defaults. Topograph stores no data, so these are only validated, kept with
 * the topic, and reported back in CreateTopics v5+ responses, as Kafka reports them.
 */

export type TopicConfigType = 'int' | 'long' | 'double' | 'boolean' | 'string' | 'list'

export interface TopicConfigDef {
  readonly type: TopicConfigType
  /** The default as Kafka prints it in a CreateTopics response. */
  readonly default: string
  /** Allowed values (string and list types). */
  readonly oneOf?: readonly string[]
}

const LONG_MAX = '9223372036854775807'

export const TOPIC_CONFIGS: ReadonlyMap<string, TopicConfigDef> = new Map<string, TopicConfigDef>([
  ['cleanup.policy', { type: 'list', default: 'delete', oneOf: ['compact', 'delete'] }],
  [
    'compression.type',
    {
      type: 'string',
      default: 'producer',
      oneOf: ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'],
    },
  ],
  ['compression.gzip.level', { type: 'int', default: '-1' }],
  ['compression.lz4.level', { type: 'int', default: '9' }],
  ['compression.zstd.level', { type: 'int', default: '3' }],
  ['delete.retention.ms', { type: 'long', default: '86400000' }],
  ['errors.deadletterqueue.group.enable', { type: 'boolean', default: 'false' }],
  ['file.delete.delay.ms', { type: 'long', default: '60000' }],
  ['flush.messages', { type: 'long', default: LONG_MAX }],
  ['flush.ms', { type: 'long', default: LONG_MAX }],
  ['follower.replication.throttled.replicas', { type: 'list', default: '' }],
  ['index.interval.bytes', { type: 'int', default: '4096' }],
  ['leader.replication.throttled.replicas', { type: 'list', default: '' }],
  ['local.retention.bytes', { type: 'long', default: '-2' }],
  ['local.retention.ms', { type: 'long', default: '-2' }],
  ['max.compaction.lag.ms', { type: 'long', default: LONG_MAX }],
  ['max.message.bytes', { type: 'int', default: '1048588' }],
  ['message.timestamp.after.max.ms', { type: 'long', default: '3600000' }],
  ['message.timestamp.before.max.ms', { type: 'long', default: LONG_MAX }],
  [
    'message.timestamp.type',
    { type: 'string', default: 'CreateTime', oneOf: ['CreateTime', 'LogAppendTime'] },
  ],
  ['min.cleanable.dirty.ratio', { type: 'double', default: '0.5' }],
  ['min.compaction.lag.ms', { type: 'long', default: '0' }],
  ['min.insync.replicas', { type: 'int', default: '1' }],
  ['preallocate', { type: 'boolean', default: 'false' }],
  ['remote.copy.lag.bytes', { type: 'long', default: '-1' }],
  ['remote.copy.lag.ms', { type: 'long', default: '-1' }],
  ['remote.log.copy.disable', { type: 'boolean', default: 'false' }],
  ['remote.log.delete.on.disable', { type: 'boolean', default: 'false' }],
  ['remote.storage.enable', { type: 'boolean', default: 'false' }],
  ['retention.bytes', { type: 'long', default: '-1' }],
  ['retention.ms', { type: 'long', default: '604800000' }],
  ['segment.bytes', { type: 'int', default: '1073741824' }],
  ['segment.index.bytes', { type: 'int', default: '10485760' }],
  ['segment.jitter.ms', { type: 'long', default: '0' }],
  ['segment.ms', { type: 'long', default: '604800000' }],
  ['unclean.leader.election.enable', { type: 'boolean', default: 'false' }],
])

const INT_RE = /^[+-]?\d+$/

/**
 * Checks one config value against its definition; returns Kafka's message for a bad value
 * ("Invalid value X for configuration Y: …"), or null when the value is acceptable.
 */
export function checkTopicConfig(name: string, value: string): string | null {
  const def = TOPIC_CONFIGS.get(name)
  if (def === undefined) return `Unknown topic config name: ${name}`
  const v = value.trim()
  const bad = (why: string) => `Invalid value ${value} for configuration ${name}: ${why}`
  switch (def.type) {
    case 'int': {
      if (!INT_RE.test(v)) return bad('Not a number of type INT')
      const n = Number(v)
      if (n < -2147483648 || n > 2147483647) return bad('Not a number of type INT')
      return null
    }
    case 'long': {
      if (!INT_RE.test(v)) return bad('Not a number of type LONG')
      const n = BigInt(v)
      if (n < -9223372036854775808n || n > 9223372036854775807n) return bad('Not a number of type LONG')
      return null
    }
    case 'double':
      return v === '' || Number.isNaN(Number(v)) ? bad('Not a number of type DOUBLE') : null
    case 'boolean':
      return /^(true|false)$/i.test(v) ? null : bad('Expected value to be either true or false')
    case 'string':
      if (def.oneOf !== undefined && !def.oneOf.includes(v))
        return bad(`String must be one of: ${def.oneOf.join(', ')}`)
      return null
    case 'list': {
      if (def.oneOf === undefined || v === '') return null
      for (const item of v.split(',').map((s) => s.trim())) {
        if (!def.oneOf.includes(item)) return bad(`Invalid value ${item} for configuration ${name}`)
      }
      return null
    }
  }
}
