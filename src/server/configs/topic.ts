/**
 * TOPIC config resources. DescribeConfigs reports every topic config Kafka defines, with the topic's
 * own value (TOPIC_CONFIG) or the default, as a Kafka broker that sets no `log.*` keys reports it
 * (ConfigHelper.createTopicConfigEntry). IncrementalAlterConfigs is checked as Kafka's controller
 * checks a topic change, and a change that passes is refused as a Kafka broker with an alter-config
 * policy refuses one: POLICY_VIOLATION. Topograph keeps a topic's configs as they were at creation.
 */
import { AlterConfigOpType, MAX_CONFIG_VALUE_LENGTH } from '../../config/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { TopicCatalog } from '../topics/catalog.js'
import { invalidTopicNameReason } from '../topics/catalog.js'
import { checkTopicConfig, TOPIC_CONFIGS } from '../topics/topic-configs.js'
import { ConfigSource, configTypeId, type DescribedConfig } from './codes.js'

export interface ResourceOutcome {
  readonly errorCode: number
  readonly errorMessage: string | null
}

const OP_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT']

/** The POLICY_VIOLATION message of a topic change that passed every check. */
export const TOPIC_ALTER_REFUSED =
  'Topograph does not change topic configs after creation: the configs given at CreateTopics stay.'

/** DescribeConfigs of one topic: the entries, or the error Kafka answers. */
export function describeTopic(
  topics: TopicCatalog,
  name: string,
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
    if (def.synonym !== undefined)
      synonyms.push({ name: def.synonym.name, value: def.synonym.value, source: ConfigSource.DEFAULT_CONFIG })
    return {
      name: key,
      value: own ?? def.default,
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
 * (names and values), the topic's existence. A change that alters nothing succeeds; any other is
 * refused with POLICY_VIOLATION.
 */
export function alterTopic(
  topics: TopicCatalog,
  name: string,
  changes: readonly ConfigChange[],
): ResourceOutcome {
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
  if (topics.byName(name) === undefined) {
    return {
      errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      errorMessage: `The topic '${name}' does not exist.`,
    }
  }
  if (!altered) return { errorCode: ErrorCode.NONE, errorMessage: null }
  return { errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: TOPIC_ALTER_REFUSED }
}
