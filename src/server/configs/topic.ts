/**
 * TOPIC config resources. DescribeConfigs reports every topic config Kafka defines, with the topic's
 * own value (TOPIC_CONFIG) or the default, as a Kafka broker that sets no `log.*` keys reports it
 * (ConfigHelper.createTopicConfigEntry). IncrementalAlterConfigs and AlterConfigs are checked as
 * Kafka's controller checks a topic change; a change that passes gives the topic its new configs,
 * which the handler writes to the catalog (the partition logs take them at once).
 */
import { AlterConfigOpType, MAX_CONFIG_VALUE_LENGTH } from '../../config/index.js'
import { LOG_CONFIG_KEYS } from '../../log/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import { invalidTopicNameReason } from '../../protocol/topics.js'
import type { TopicCatalog } from '../topics/catalog.js'
import { checkTopicConfig, checkTopicConfigSet, TOPIC_CONFIGS } from '../topics/topic-configs.js'
import { ConfigSource, configTypeId, type DescribedConfig } from './codes.js'

export interface ResourceOutcome {
  readonly errorCode: number
  readonly errorMessage: string | null
}

/** A topic change that passed every check: the topic's complete new configs, when they differ. */
export interface TopicChangeOutcome extends ResourceOutcome {
  readonly configs?: Readonly<Record<string, string>>
}

const OP_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT']

/** A broker time in hours or minutes as the topic key's milliseconds; a negative one means "no limit". */
function inUnit(value: string, unit: number): string {
  const n = BigInt(value.trim())
  return n < 0n ? '-1' : String(n * BigInt(unit))
}

/** Topic key → its broker keys, most specific first, with the factor to the topic key's unit. */
const BROKER_SYNONYMS: ReadonlyMap<string, readonly { name: string; unit: number }[]> = new Map(
  LOG_CONFIG_KEYS.filter((k) => k.topicKey !== null).map((k) => [
    k.topicKey as string,
    k.brokerKeys.map((name, i) => ({ name, unit: k.brokerUnits?.[i] ?? 1 })),
  ]),
)

/** DescribeConfigs of one topic: the entries, or the error Kafka answers. */
export function describeTopic(
  topics: TopicCatalog,
  name: string,
  brokerSet: Readonly<Record<string, string>> = {},
): { readonly entries: DescribedConfig[] } | ResourceOutcome {
  const reason = invalidTopicNameReason(name)
  if (reason !== null) {
    return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: `Topic name is invalid: ${reason}` }
  }
  const topic = topics.byName(name)
  if (topic === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null }
  const entries = [...TOPIC_CONFIGS].map(([key, def]): DescribedConfig => {
    const synonyms: { name: string; value: string | null; source: number }[] = []
    const own = Object.hasOwn(topic.configs, key) ? topic.configs[key] : undefined
    if (own !== undefined) synonyms.push({ name: key, value: own, source: ConfigSource.TOPIC_CONFIG })
    // The broker keys the operator set (log.retention.ms, …) come next and give the value when the
    // topic has none of its own, converted to the topic key's unit.
    const broker = BROKER_SYNONYMS.get(key) ?? []
    let fromBroker: string | undefined
    for (const b of broker) {
      if (!Object.hasOwn(brokerSet, b.name)) continue
      synonyms.push({ name: b.name, value: brokerSet[b.name], source: ConfigSource.STATIC_BROKER_CONFIG })
      fromBroker ??= b.unit === 1 ? brokerSet[b.name] : inUnit(brokerSet[b.name], b.unit)
    }
    if (def.synonym !== undefined)
      synonyms.push({ name: def.synonym.name, value: def.synonym.value, source: ConfigSource.DEFAULT_CONFIG })
    return {
      name: key,
      value: own ?? fromBroker ?? def.default,
      readOnly: false,
      configSource: synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG,
      isSensitive: false,
      synonyms,
      configType: configTypeId(def.type),
      documentation: def.doc,
    }
  })
  return { entries: entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) }
}

export interface ConfigChange {
  readonly name: string
  readonly configOperation: number
  readonly value: string | null
}

/**
 * An IncrementalAlterConfigs change of one topic, checked in the order of Kafka's controller:
 * APPEND/SUBTRACT only on list keys, value size, the topic name, the topic's resulting configs
 * (names and values), the topic's existence. The outcome carries the new configs when they differ
 * from the current ones.
 */
export function alterTopic(
  topics: TopicCatalog,
  name: string,
  changes: readonly ConfigChange[],
): TopicChangeOutcome {
  const current = topics.byName(name)?.configs ?? {}
  const configs = new Map(Object.entries(current))
  let altered = false
  for (const c of changes) {
    const before = configs.get(c.name) ?? null
    let after: string | null
    switch (c.configOperation) {
      case AlterConfigOpType.SET:
        after = c.value
        break
      case AlterConfigOpType.DELETE:
        after = null
        break
      case AlterConfigOpType.APPEND:
      case AlterConfigOpType.SUBTRACT: {
        const def = TOPIC_CONFIGS.get(c.name)
        if (def?.type !== 'list') {
          return {
            errorCode: ErrorCode.INVALID_CONFIG,
            errorMessage: `Can't ${OP_NAMES[c.configOperation]} to key ${c.name} because its type is not LIST.`,
          }
        }
        const parts = (before ?? def.default).split(',').filter((s) => s !== '')
        for (const v of (c.value ?? '').split(',')) {
          if (c.configOperation === AlterConfigOpType.APPEND) {
            if (!parts.includes(v)) parts.push(v)
          } else {
            const i = parts.indexOf(v)
            if (i >= 0) parts.splice(i, 1)
          }
        }
        after = parts.join(',')
        break
      }
      default:
        return {
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `Unknown operations type ${c.configOperation}`,
        }
    }
    if (after !== before) {
      altered = true
      if (after !== null && after.length > MAX_CONFIG_VALUE_LENGTH) {
        return {
          errorCode: ErrorCode.INVALID_CONFIG,
          errorMessage: `The configuration value cannot be added because it exceeds the maximum value size of ${MAX_CONFIG_VALUE_LENGTH} bytes.`,
        }
      }
    }
    if (after === null) configs.delete(c.name)
    else configs.set(c.name, after)
  }
  return checkTopicChange(topics, name, configs, altered)
}

/**
 * An AlterConfigs (legacy) change of one topic: `configs` become the topic's complete set (keys not
 * given return to their defaults; a null value is left out), checked as IncrementalAlterConfigs.
 */
export function replaceTopicConfigs(
  topics: TopicCatalog,
  name: string,
  configs: readonly { readonly name: string; readonly value: string | null }[],
): TopicChangeOutcome {
  const next = new Map<string, string>()
  for (const c of configs) if (c.value !== null) next.set(c.name, c.value)
  for (const value of next.values()) {
    if (value.length > MAX_CONFIG_VALUE_LENGTH) {
      return {
        errorCode: ErrorCode.INVALID_CONFIG,
        errorMessage: `The configuration value cannot be added because it exceeds the maximum value size of ${MAX_CONFIG_VALUE_LENGTH} bytes.`,
      }
    }
  }
  const current = topics.byName(name)?.configs ?? {}
  const same =
    next.size === Object.keys(current).length &&
    [...next].every(([k, v]) => Object.hasOwn(current, k) && current[k] === v)
  return checkTopicChange(topics, name, next, !same)
}

/** The checks after the change is applied: the name, every resulting config, the cross-checks, existence. */
function checkTopicChange(
  topics: TopicCatalog,
  name: string,
  configs: ReadonlyMap<string, string>,
  altered: boolean,
): TopicChangeOutcome {
  if (name === '') {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Default topic resources are not allowed.' }
  }
  const reason = invalidTopicNameReason(name)
  if (reason !== null) {
    return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: `Topic name is invalid: ${reason}` }
  }
  for (const [key, value] of configs) {
    const problem = checkTopicConfig(key, value)
    if (problem !== null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: problem }
  }
  const conflict = checkTopicConfigSet(configs)
  if (conflict !== null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: conflict }
  if (topics.byName(name) === undefined) {
    return {
      errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      errorMessage: `The topic '${name}' does not exist.`,
    }
  }
  if (!altered) return { errorCode: ErrorCode.NONE, errorMessage: null }
  return { errorCode: ErrorCode.NONE, errorMessage: null, configs: Object.fromEntries(configs) }
}
