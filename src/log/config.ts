/**
 * Defaults and checks of the log's settings, with Kafka's key names so the server can register
 * them: broker keys (log.dirs, log.segment.bytes, …) and topic keys (segment.bytes, …). The server
 * parses strings; this module takes numbers and enums (LogConfig, LogManagerConfig) and says which
 * key sets which field.
 */
import type { CleanupPolicy, CompressionType, LogConfig, LogManagerConfig, TimestampType } from './types.js'

/** Java's Long.MAX_VALUE as a number (9.223372036854776e18): "no limit" for ms and counts. */
export const LONG_MAX = 2 ** 63

/** Kafka's defaults for every topic (LogConfig / ServerLogConfigs). */
export const DEFAULT_LOG_CONFIG: LogConfig = Object.freeze({
  cleanupPolicy: Object.freeze(['delete']) as readonly CleanupPolicy[],
  retentionMs: 604800000,
  retentionBytes: -1,
  segmentBytes: 1073741824,
  segmentMs: 604800000,
  segmentJitterMs: 0,
  segmentIndexBytes: 10485760,
  indexIntervalBytes: 4096,
  maxMessageBytes: 1048588,
  messageTimestampType: 'CreateTime' as TimestampType,
  messageTimestampBeforeMaxMs: LONG_MAX,
  messageTimestampAfterMaxMs: 3600000,
  compressionType: 'producer' as CompressionType,
  compressionGzipLevel: -1,
  compressionLz4Level: 9,
  compressionZstdLevel: 3,
  minCompactionLagMs: 0,
  maxCompactionLagMs: LONG_MAX,
  deleteRetentionMs: 86400000,
  minCleanableDirtyRatio: 0.5,
  fileDeleteDelayMs: 60000,
  flushMessages: LONG_MAX,
  flushMs: LONG_MAX,
})

/** Broker-level defaults (log.dirs has none here: the server defaults it to `<data.dir>/logs`). */
export const DEFAULT_LOG_MANAGER_CONFIG: Omit<LogManagerConfig, 'logDirs'> = Object.freeze({
  storage: 'file' as const,
  defaults: DEFAULT_LOG_CONFIG,
  retentionCheckIntervalMs: 300000,
  cleanerEnable: true,
  cleanerThreads: 1,
  cleanerBackoffMs: 15000,
  cleanerDedupeBufferSize: 134217728,
  cleanerIoBufferSize: 524288,
  flushSchedulerIntervalMs: LONG_MAX,
  flushOffsetCheckpointIntervalMs: 60000,
  flushStartOffsetCheckpointIntervalMs: 60000,
  producerIdExpirationMs: 86400000,
  producerIdExpirationCheckIntervalMs: 600000,
})

export interface LogConfigKey {
  /** The topic-level key (null: broker only). */
  readonly topicKey: string | null
  /** The broker-level synonym(s), most specific first (log.retention.ms before .minutes before .hours). */
  readonly brokerKeys: readonly string[]
  /** The LogConfig field it sets. */
  readonly field: keyof LogConfig
  /** Multiplier from the broker key's unit to ms, per brokerKeys entry (1 when not a time unit). */
  readonly brokerUnits?: readonly number[]
}

/**
 * Which Kafka key sets which LogConfig field. A topic's own key wins over the broker keys; among
 * broker keys the first one set wins (log.retention.ms over log.retention.minutes over
 * log.retention.hours; log.roll.ms over log.roll.hours), as in Kafka.
 */
export const LOG_CONFIG_KEYS: readonly LogConfigKey[] = [
  { topicKey: 'cleanup.policy', brokerKeys: ['log.cleanup.policy'], field: 'cleanupPolicy' },
  {
    topicKey: 'retention.ms',
    brokerKeys: ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'],
    brokerUnits: [1, 60000, 3600000],
    field: 'retentionMs',
  },
  { topicKey: 'retention.bytes', brokerKeys: ['log.retention.bytes'], field: 'retentionBytes' },
  { topicKey: 'segment.bytes', brokerKeys: ['log.segment.bytes'], field: 'segmentBytes' },
  {
    topicKey: 'segment.ms',
    brokerKeys: ['log.roll.ms', 'log.roll.hours'],
    brokerUnits: [1, 3600000],
    field: 'segmentMs',
  },
  {
    topicKey: 'segment.jitter.ms',
    brokerKeys: ['log.roll.jitter.ms', 'log.roll.jitter.hours'],
    brokerUnits: [1, 3600000],
    field: 'segmentJitterMs',
  },
  { topicKey: 'segment.index.bytes', brokerKeys: ['log.index.size.max.bytes'], field: 'segmentIndexBytes' },
  { topicKey: 'index.interval.bytes', brokerKeys: ['log.index.interval.bytes'], field: 'indexIntervalBytes' },
  { topicKey: 'max.message.bytes', brokerKeys: ['message.max.bytes'], field: 'maxMessageBytes' },
  {
    topicKey: 'message.timestamp.type',
    brokerKeys: ['log.message.timestamp.type'],
    field: 'messageTimestampType',
  },
  {
    topicKey: 'message.timestamp.before.max.ms',
    brokerKeys: ['log.message.timestamp.before.max.ms'],
    field: 'messageTimestampBeforeMaxMs',
  },
  {
    topicKey: 'message.timestamp.after.max.ms',
    brokerKeys: ['log.message.timestamp.after.max.ms'],
    field: 'messageTimestampAfterMaxMs',
  },
  { topicKey: 'compression.type', brokerKeys: ['compression.type'], field: 'compressionType' },
  {
    topicKey: 'compression.gzip.level',
    brokerKeys: ['compression.gzip.level'],
    field: 'compressionGzipLevel',
  },
  { topicKey: 'compression.lz4.level', brokerKeys: ['compression.lz4.level'], field: 'compressionLz4Level' },
  {
    topicKey: 'compression.zstd.level',
    brokerKeys: ['compression.zstd.level'],
    field: 'compressionZstdLevel',
  },
  {
    topicKey: 'min.compaction.lag.ms',
    brokerKeys: ['log.cleaner.min.compaction.lag.ms'],
    field: 'minCompactionLagMs',
  },
  {
    topicKey: 'max.compaction.lag.ms',
    brokerKeys: ['log.cleaner.max.compaction.lag.ms'],
    field: 'maxCompactionLagMs',
  },
  {
    topicKey: 'delete.retention.ms',
    brokerKeys: ['log.cleaner.delete.retention.ms'],
    field: 'deleteRetentionMs',
  },
  {
    topicKey: 'min.cleanable.dirty.ratio',
    brokerKeys: ['log.cleaner.min.cleanable.ratio'],
    field: 'minCleanableDirtyRatio',
  },
  {
    topicKey: 'file.delete.delay.ms',
    brokerKeys: ['log.segment.delete.delay.ms'],
    field: 'fileDeleteDelayMs',
  },
  { topicKey: 'flush.messages', brokerKeys: ['log.flush.interval.messages'], field: 'flushMessages' },
  { topicKey: 'flush.ms', brokerKeys: ['log.flush.interval.ms'], field: 'flushMs' },
]

/** Broker keys of LogManagerConfig fields (not per topic). */
export const LOG_MANAGER_CONFIG_KEYS: Readonly<Record<string, keyof LogManagerConfig>> = Object.freeze({
  'log.dirs': 'logDirs',
  'log.retention.check.interval.ms': 'retentionCheckIntervalMs',
  'log.cleaner.enable': 'cleanerEnable',
  'log.cleaner.threads': 'cleanerThreads',
  'log.cleaner.backoff.ms': 'cleanerBackoffMs',
  'log.cleaner.dedupe.buffer.size': 'cleanerDedupeBufferSize',
  'log.cleaner.io.buffer.size': 'cleanerIoBufferSize',
  'log.flush.scheduler.interval.ms': 'flushSchedulerIntervalMs',
  'log.flush.offset.checkpoint.interval.ms': 'flushOffsetCheckpointIntervalMs',
  'log.flush.start.offset.checkpoint.interval.ms': 'flushStartOffsetCheckpointIntervalMs',
  'producer.id.expiration.ms': 'producerIdExpirationMs',
  'producer.id.expiration.check.interval.ms': 'producerIdExpirationCheckIntervalMs',
})

const COMPRESSION_TYPES: readonly CompressionType[] = [
  'producer',
  'uncompressed',
  'gzip',
  'snappy',
  'lz4',
  'zstd',
]

/**
 * Checks a LogConfig's values against Kafka's bounds; returns the first problem as Kafka's message
 * ("Invalid value … for configuration …") or null.
 */
export function checkLogConfig(c: LogConfig): string | null {
  const bad = (key: string, value: unknown, why: string): string =>
    `Invalid value ${String(value)} for configuration ${key}: ${why}`
  for (const p of c.cleanupPolicy) {
    if (p !== 'delete' && p !== 'compact')
      return bad('cleanup.policy', c.cleanupPolicy.join(','), `String must be one of: delete, compact`)
  }
  if (c.retentionMs < -1) return bad('retention.ms', c.retentionMs, 'Value must be at least -1')
  if (c.segmentBytes < 14) return bad('segment.bytes', c.segmentBytes, 'Value must be at least 14')
  if (c.segmentMs < 1) return bad('segment.ms', c.segmentMs, 'Value must be at least 1')
  if (c.segmentJitterMs < 0) return bad('segment.jitter.ms', c.segmentJitterMs, 'Value must be at least 0')
  if (c.segmentIndexBytes < 4)
    return bad('segment.index.bytes', c.segmentIndexBytes, 'Value must be at least 4')
  if (c.indexIntervalBytes < 0)
    return bad('index.interval.bytes', c.indexIntervalBytes, 'Value must be at least 0')
  if (c.maxMessageBytes < 0) return bad('max.message.bytes', c.maxMessageBytes, 'Value must be at least 0')
  if (c.messageTimestampType !== 'CreateTime' && c.messageTimestampType !== 'LogAppendTime')
    return bad(
      'message.timestamp.type',
      c.messageTimestampType,
      'String must be one of: CreateTime, LogAppendTime',
    )
  if (c.messageTimestampBeforeMaxMs < 0)
    return bad('message.timestamp.before.max.ms', c.messageTimestampBeforeMaxMs, 'Value must be at least 0')
  if (c.messageTimestampAfterMaxMs < 0)
    return bad('message.timestamp.after.max.ms', c.messageTimestampAfterMaxMs, 'Value must be at least 0')
  if (!COMPRESSION_TYPES.includes(c.compressionType))
    return bad(
      'compression.type',
      c.compressionType,
      `String must be one of: ${COMPRESSION_TYPES.join(', ')}`,
    )
  if (c.minCompactionLagMs < 0)
    return bad('min.compaction.lag.ms', c.minCompactionLagMs, 'Value must be at least 0')
  if (c.maxCompactionLagMs < 1)
    return bad('max.compaction.lag.ms', c.maxCompactionLagMs, 'Value must be at least 1')
  if (c.deleteRetentionMs < 0)
    return bad('delete.retention.ms', c.deleteRetentionMs, 'Value must be at least 0')
  if (c.minCleanableDirtyRatio < 0 || c.minCleanableDirtyRatio > 1)
    return bad('min.cleanable.dirty.ratio', c.minCleanableDirtyRatio, 'Value must be between 0 and 1')
  if (c.flushMessages < 1) return bad('flush.messages', c.flushMessages, 'Value must be at least 1')
  if (c.flushMs < 0) return bad('flush.ms', c.flushMs, 'Value must be at least 0')
  return null
}

/** The topic's own settings over the defaults. */
export function resolveLogConfig(defaults: LogConfig, overrides: Partial<LogConfig> | undefined): LogConfig {
  if (overrides === undefined) return defaults
  const out: Record<string, unknown> = { ...defaults }
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) out[k] = v
  return Object.freeze(out) as unknown as LogConfig
}

export function hasCompact(c: LogConfig): boolean {
  return c.cleanupPolicy.includes('compact')
}
export function hasDelete(c: LogConfig): boolean {
  return c.cleanupPolicy.includes('delete')
}
