/**
 * Kafka's configuration keys → the log's settings. The broker keys (log.segment.bytes, …) give the
 * defaults of every topic; a topic's own keys (segment.bytes, …, kept in the topic catalog) win over
 * them. Among a field's broker keys the first one the operator set wins (log.retention.ms over
 * log.retention.minutes over log.retention.hours), as in Kafka; none set gives Kafka's default.
 */
import { join } from 'node:path'
import {
  DEFAULT_LOG_CONFIG,
  DEFAULT_LOG_MANAGER_CONFIG,
  LOG_CONFIG_KEYS,
  type LogConfig,
  type LogManagerConfig,
} from '../../log/index.js'
import { camelCase } from '../config-defs.js'
import type { TopographConfig } from '../config.js'

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** A topic config's text as the log reads it (the catalog has already checked it). */
function fromText(field: keyof LogConfig, text: string): LogConfig[keyof LogConfig] {
  switch (field) {
    case 'cleanupPolicy':
      return text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '') as LogConfig['cleanupPolicy']
    case 'messageTimestampType':
    case 'compressionType':
      return text.trim() as never
    case 'minCleanableDirtyRatio':
      return Number(text.trim())
    default:
      // int and long keys; Long.MAX_VALUE becomes 2^63, which the log reads as "no limit"
      return Number(BigInt(text.trim()))
  }
}

/** A broker key's typed value as the log reads it. */
function fromBroker(field: keyof LogConfig, value: unknown, unit: number): LogConfig[keyof LogConfig] {
  if (field === 'cleanupPolicy') return [...(value as readonly string[])] as LogConfig['cleanupPolicy']
  if (typeof value === 'number') return value < 0 ? value : value * unit
  return value as never
}

/** The defaults of every topic, from the broker's log.* keys. */
export function brokerLogDefaults(config: TopographConfig): LogConfig {
  const values = config as unknown as Readonly<Record<string, unknown>>
  const out: Mutable<LogConfig> = { ...DEFAULT_LOG_CONFIG }
  for (const k of LOG_CONFIG_KEYS) {
    for (let i = 0; i < k.brokerKeys.length; i++) {
      const key = k.brokerKeys[i]
      const value = values[camelCase(key)]
      if (value === undefined || value === null || !Object.hasOwn(config.raw, key)) continue
      ;(out as Record<string, unknown>)[k.field] = fromBroker(k.field, value, k.brokerUnits?.[i] ?? 1)
      break
    }
  }
  return Object.freeze(out)
}

/** The log layer's settings. */
export function logManagerConfig(config: TopographConfig): LogManagerConfig {
  return {
    ...DEFAULT_LOG_MANAGER_CONFIG,
    storage: config.logStorage as LogManagerConfig['storage'],
    logDirs: config.logDirs ?? [join(config.dataDir, 'logs')],
    defaults: brokerLogDefaults(config),
    retentionCheckIntervalMs: config.logRetentionCheckIntervalMs,
    cleanerEnable: config.logCleanerEnable,
    cleanerThreads: config.logCleanerThreads,
    cleanerBackoffMs: config.logCleanerBackoffMs,
    cleanerDedupeBufferSize: config.logCleanerDedupeBufferSize,
    cleanerIoBufferSize: config.logCleanerIoBufferSize,
    flushSchedulerIntervalMs: config.logFlushSchedulerIntervalMs,
    flushOffsetCheckpointIntervalMs: config.logFlushOffsetCheckpointIntervalMs,
    flushStartOffsetCheckpointIntervalMs: config.logFlushStartOffsetCheckpointIntervalMs,
    producerIdExpirationMs: config.producerIdExpirationMs,
    producerIdExpirationCheckIntervalMs: config.producerIdExpirationCheckIntervalMs,
  }
}

/** A topic's own settings (its catalog configs that shape the log). */
export function topicLogOverrides(configs: Readonly<Record<string, string>>): Partial<LogConfig> {
  const out: Record<string, unknown> = {}
  for (const k of LOG_CONFIG_KEYS) {
    if (k.topicKey === null || !Object.hasOwn(configs, k.topicKey)) continue
    out[k.field] = fromText(k.field, configs[k.topicKey])
  }
  return out as Partial<LogConfig>
}
