/**
 * BROKER config resources: the server's static configuration. Topograph has no dynamic broker
 * configs, so DescribeConfigs reports each key as a Kafka broker reports a static one (source
 * STATIC_BROKER_CONFIG when the operator set it, DEFAULT_CONFIG otherwise, read-only, secrets as
 * null with IsSensitive), and IncrementalAlterConfigs refuses every change a Kafka broker would
 * refuse for a key that cannot be updated dynamically. Deleting a key (nothing dynamic is set)
 * succeeds without effect, as on a Kafka broker.
 */
import { AlterConfigOpType, isSecretType } from '../../config/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { TopographConfig } from '../config.js'
import { CONFIG_DEFS, type ConfigKeyDef, shownValue } from '../config.js'
import { ConfigSource, ConfigType, configTypeId, type DescribedConfig } from './codes.js'
import type { ConfigChange, ResourceOutcome } from './topic.js'

const DEFS: ReadonlyMap<string, ConfigKeyDef> = new Map(
  (CONFIG_DEFS as readonly ConfigKeyDef[]).map((d) => [d.name, d]),
)

/** Java's Integer.parseInt, for broker resource names. */
function brokerId(name: string): number | null {
  if (!/^[+-]?\d+$/.test(name)) return null
  const n = Number(name)
  return n < -2147483648 || n > 2147483647 ? null : n
}

/** DescribeConfigs of a BROKER resource: the entries, or Kafka's INVALID_REQUEST for a bad name. */
export function describeBroker(
  config: TopographConfig,
  nodeId: number,
  name: string,
): { readonly entries: DescribedConfig[] } | ResourceOutcome {
  // The cluster-wide default resource holds the dynamic defaults: there are none.
  if (name === '') return { entries: [] }
  const id = brokerId(name)
  if (id === null) {
    return {
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: `Broker id must be an integer, but it is: ${name}`,
    }
  }
  if (id !== nodeId) {
    return {
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: `Unexpected broker id, expected ${nodeId} or empty string, but received ${name}`,
    }
  }
  const raw = config.raw
  const entries: DescribedConfig[] = []
  for (const def of DEFS.values()) {
    const sensitive = isSecretType(def.type)
    const set = Object.hasOwn(raw, def.name)
    const synonyms: { name: string; value: string | null; source: number }[] = []
    if (set)
      synonyms.push({
        name: def.name,
        value: shownValue(def, raw[def.name].trim()),
        source: ConfigSource.STATIC_BROKER_CONFIG,
      })
    synonyms.push({
      name: def.name,
      value: def.default === null ? null : shownValue(def, def.default),
      source: ConfigSource.DEFAULT_CONFIG,
    })
    entries.push({
      name: def.name,
      value: synonyms[0].value,
      readOnly: true,
      configSource: synonyms[0].source,
      isSensitive: sensitive,
      synonyms,
      configType: configTypeId(def.type),
      documentation: def.doc,
    })
  }
  // Keys Kafka does not define are reported too, as Kafka reports unknown originals: of unknown
  // type, hence sensitive, their values withheld.
  for (const key of config.unknownKeys) {
    entries.push({
      name: key,
      value: null,
      readOnly: true,
      configSource: ConfigSource.STATIC_BROKER_CONFIG,
      isSensitive: true,
      synonyms: [{ name: key, value: null, source: ConfigSource.STATIC_BROKER_CONFIG }],
      configType: ConfigType.UNKNOWN,
      documentation: null,
    })
  }
  return { entries: entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) }
}

/**
 * The broker's checks of a BROKER change before it would be forwarded (ConfigAdminManager): the
 * resource name, each operation, APPEND/SUBTRACT only on known list keys, then every key the change
 * would leave set refused, since none can be updated dynamically. Null when nothing is refused.
 */
export function checkBrokerChange(
  nodeId: number,
  name: string,
  changes: readonly ConfigChange[],
): ResourceOutcome | null {
  if (name !== '') {
    const id = brokerId(name)
    if (id === null)
      return {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `Node id must be an integer, but it is: ${name}`,
      }
    if (id !== nodeId) {
      return {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `Unexpected broker id, expected ${nodeId}, but received ${name}`,
      }
    }
  }
  const set = new Set<string>()
  for (const c of changes) {
    switch (c.configOperation) {
      case AlterConfigOpType.SET:
        set.add(c.name)
        break
      case AlterConfigOpType.DELETE:
        set.delete(c.name)
        break
      case AlterConfigOpType.APPEND:
      case AlterConfigOpType.SUBTRACT: {
        const def = DEFS.get(c.name)
        if (def === undefined)
          return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Unknown config name: ${c.name}` }
        if (def.type !== 'list') {
          const verb = c.configOperation === AlterConfigOpType.APPEND ? 'append' : 'subtract'
          return {
            errorCode: ErrorCode.INVALID_CONFIG,
            errorMessage: `Config value ${verb} is not allowed for config key: ${c.name}`,
          }
        }
        set.add(c.name)
        break
      }
      default:
        return {
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `Unknown operations type ${c.configOperation}`,
        }
    }
  }
  if (set.size > 0) {
    return {
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: `Cannot update these configs dynamically: [${[...set].join(', ')}]`,
    }
  }
  return null
}
