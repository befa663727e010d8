/**
 * Kafka's codes of the config APIs (DescribeConfigs, IncrementalAlterConfigs): config resource
 * types (ConfigResource.Type), where a value comes from (DescribeConfigsResponse.ConfigSource) and
 * value types (DescribeConfigsResponse.ConfigType).
 */

/** ConfigResource.Type ids. */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
  CLIENT_METRICS: 16,
  GROUP: 32,
} as const
export type ConfigResourceTypeName = keyof typeof ConfigResourceType

/** The name Kafka prints for a resource type id (UNKNOWN for ids it does not define). */
export function configResourceTypeName(id: number): ConfigResourceTypeName {
  for (const [name, code] of Object.entries(ConfigResourceType)) {
    if (code === id) return name as ConfigResourceTypeName
  }
  return 'UNKNOWN'
}

/** DescribeConfigsResponse.ConfigSource ids. */
export const ConfigSource = {
  UNKNOWN: 0,
  TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
  CLIENT_METRICS_CONFIG: 7,
  GROUP_CONFIG: 8,
} as const
export type ConfigSourceName = keyof typeof ConfigSource

/** DescribeConfigsResponse.ConfigType ids. */
export const ConfigType = {
  UNKNOWN: 0,
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
} as const
export type ConfigTypeName = keyof typeof ConfigType

/** A config type as the definition tables spell it ('int', 'list', …) → its ConfigType id. */
export function configTypeId(type: string | undefined): number {
  if (type === undefined) return ConfigType.UNKNOWN
  const name = type.toUpperCase()
  return Object.hasOwn(ConfigType, name) ? ConfigType[name as ConfigTypeName] : ConfigType.UNKNOWN
}

/** One described entry, before version-specific trimming. */
export interface DescribedConfig {
  readonly name: string
  readonly value: string | null
  readonly readOnly: boolean
  readonly configSource: number
  readonly isSensitive: boolean
  readonly synonyms: readonly {
    readonly name: string
    readonly value: string | null
    readonly source: number
  }[]
  readonly configType: number
  readonly documentation: string | null
}
