// Server configuration: sources (defaults < properties file < TOPOGRAPH_* environment variables <
// --override), parsing into a typed object, Kafka's start-up cross-checks, and the reference table
// rendered for docs/configuration.md. The keys themselves are defined once, in config-defs.ts.

import { readFileSync } from 'node:fs'
import {
  CONFIG_DEFS,
  ConfigError,
  type ConfigKeyDef,
  type ConfigValues,
  type Endpoint,
  InvalidValue,
  KNOWN_KEYS,
  camelCase,
  defaultAdvertisedHost,
} from './config-defs.js'
import { isSecretType } from '../config/index.js'
import { verifyGroupCoordinatorConfigs } from '../coordinator/service/config-defs.js'
import { BUILTIN_PLUGIN_CONFIG_KEYS } from '../plugin/builtin/keys.js'

export {
  BUILTIN_PLUGIN_ALIASES,
  CONFIG_DEFS,
  ConfigError,
  type ConfigKey,
  type ConfigKeyDef,
  type ConfigType,
  type ConfigValues,
  type Endpoint,
  type HttpEndpoint,
  type Importance,
  type SecurityProtocol,
  parseEndpoint,
} from './config-defs.js'

/**
 * The parsed configuration. Every key of the table is a camelCase property holding its typed value
 * (`group.streams.session.timeout.ms` → `groupStreamsSessionTimeoutMs: number`; a key without a
 * default, such as `group.streams.topology.description.plugin.class`, is `T | null`).
 */
export type TopographConfig = Omit<ConfigValues, 'advertisedListeners'> & {
  /**
   * `advertised.listeners` when set, otherwise `listeners`; an empty, `0.0.0.0` or `::` host in the
   * defaulted list is replaced by the machine's host name. Port 0 means "the port the listener of
   * the same name actually bound".
   */
  readonly advertisedListeners: readonly Endpoint[]
  /**
   * Every key the operator supplied (any source, defaults not included), unknown keys too, as
   * strings. This is what the topology description plugin's configure() receives, as Kafka passes
   * its original configuration map.
   */
  readonly raw: Readonly<Record<string, string>>
  /** Supplied keys the table does not define, sorted. They are kept in `raw`. */
  readonly unknownKeys: readonly string[]
}

// ---------------------------------------------------------------------------------------------
// Parsing

/** Keys whose values must never appear in messages or logs. */
function isSecret(def: ConfigKeyDef | undefined): boolean {
  return isSecretType(def?.type)
}

/** A value as logs and DescribeConfigs show it: null for a secret, a URL without its password, … */
export function shownValue(def: ConfigKeyDef, value: string): string | null {
  if (isSecret(def)) return null
  return def.redact === undefined ? value : def.redact(value)
}

function parseValue<T>(def: ConfigKeyDef<string, T>, rawValue: string): T {
  // Kafka trims values before converting them; `raw` keeps the original text.
  const value = rawValue.trim()
  try {
    return def.parse(value)
  } catch (e) {
    if (e instanceof InvalidValue) {
      throw ConfigError.invalidValue(def.name, shownValue(def, value) ?? '[hidden]', e.message)
    }
    throw e
  }
}

/**
 * Parses a merged key → string map against the given definition table. Exposed with the table as a
 * parameter so the generic behaviour (e.g. the password type) can be tested on its own.
 */
export function parseWithDefs(
  defs: readonly ConfigKeyDef[],
  raw: Readonly<Record<string, string>>,
): { values: Record<string, unknown>; unknownKeys: string[] } {
  const values: Record<string, unknown> = {}
  for (const def of defs) {
    const supplied = Object.hasOwn(raw, def.name) ? raw[def.name] : undefined
    const text = supplied ?? def.default
    values[camelCase(def.name)] = text === null ? def.absent : parseValue(def, text)
  }
  const known = new Set(defs.map((d) => d.name))
  const unknownKeys = Object.keys(raw)
    .filter((k) => !known.has(k))
    .sort()
  return { values, unknownKeys }
}

/**
 * Builds the typed configuration from a merged map of supplied keys (see loadConfigFromSources for
 * the sources). Throws ConfigError naming the key on any value it cannot honour.
 */
export function parseConfig(raw: Readonly<Record<string, string>>): TopographConfig {
  const { values, unknownKeys } = parseWithDefs(CONFIG_DEFS, raw)
  const v = values as unknown as ConfigValues
  verifyListeners(v)
  verifyConnectionLimits(v)
  verifyGroupCoordinatorConfigs(v, raw)
  const advertisedListeners = v.advertisedListeners ?? v.listeners.map(advertiseListener)
  return Object.freeze({
    ...v,
    advertisedListeners,
    raw: Object.freeze({ ...raw }),
    unknownKeys: Object.freeze(unknownKeys),
  })
}

function isWildcardHost(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::'
}

function advertiseListener(e: Endpoint): Endpoint {
  return isWildcardHost(e.host) ? { ...e, host: defaultAdvertisedHost() } : e
}

/** KafkaConfig's start-up check of the per-IP connection limit. */
function verifyConnectionLimits(v: ConfigValues): void {
  if (v.maxConnectionsPerIp === 0 && v.maxConnectionsPerIpOverrides.size === 0) {
    throw new ConfigError(
      'requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.',
      'max.connections.per.ip',
    )
  }
}

function verifyListeners(v: ConfigValues): void {
  for (const e of v.listeners) {
    if (!v.listenerSecurityProtocolMap.has(e.listenerName)) {
      throw new ConfigError(
        `Invalid value for configuration listeners: no security protocol is defined for listener ${e.listenerName} in listener.security.protocol.map`,
        'listeners',
      )
    }
  }
  if (v.advertisedListeners === null) return
  const names = new Set(v.listeners.map((e) => e.listenerName))
  for (const e of v.advertisedListeners) {
    if (!names.has(e.listenerName)) {
      throw new ConfigError(
        `Invalid value for configuration advertised.listeners: listener ${e.listenerName} is not one of the names in listeners (${[...names].join(', ')})`,
        'advertised.listeners',
      )
    }
    // A wildcard tells a client nothing about where to connect.
    if (isWildcardHost(e.host)) {
      throw new ConfigError(
        `Invalid value for configuration advertised.listeners: ${e.listenerName} has no routable host ('${e.host}'); name a host clients can reach`,
        'advertised.listeners',
      )
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Java .properties syntax

const WS = new Set([' ', '\t', '\f'])

/**
 * Parses Java `.properties` text: `#`/`!` comment lines, `key=value`, `key: value` or `key value`,
 * a line ending in an odd number of backslashes continues on the next line (its leading white
 * space dropped), and the escapes `\t \n \r \f \uXXXX` (any other escaped character stands for
 * itself, so `\=`, `\:`, `\ ` and `\\` work in keys). A later duplicate key wins.
 *
 * Unlike java.util.Properties.load(InputStream), which reads ISO-8859-1, the text is UTF-8.
 */
export function parseProperties(text: string, source = 'properties'): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split(/\r\n|\r|\n/)
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1
    let line = stripLeading(lines[i])
    // A comment line ends at its line break, even when it ends in a backslash.
    if (line === '' || line[0] === '#' || line[0] === '!') continue
    while (endsWithContinuation(line) && i + 1 < lines.length) {
      line = line.slice(0, -1) + stripLeading(lines[++i])
    }
    if (endsWithContinuation(line)) line = line.slice(0, -1)
    let k = 0
    while (k < line.length && line[k] !== '=' && line[k] !== ':' && !WS.has(line[k])) {
      k += line[k] === '\\' ? 2 : 1
    }
    const keyText = line.slice(0, Math.min(k, line.length))
    let j = k
    while (j < line.length && WS.has(line[j])) j++
    if (j < line.length && (line[j] === '=' || line[j] === ':')) j++
    while (j < line.length && WS.has(line[j])) j++
    const key = unescapeProperty(keyText, source, lineNo)
    out[key] = unescapeProperty(line.slice(j), source, lineNo)
  }
  return out
}

function stripLeading(s: string): string {
  let i = 0
  while (i < s.length && WS.has(s[i])) i++
  return s.slice(i)
}

function endsWithContinuation(s: string): boolean {
  let n = 0
  for (let i = s.length - 1; i >= 0 && s[i] === '\\'; i--) n++
  return n % 2 === 1
}

function unescapeProperty(s: string, source: string, lineNo: number): string {
  if (!s.includes('\\')) return s
  let out = ''
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c !== '\\') {
      out += c
      continue
    }
    const n = s[++i]
    if (n === undefined) break
    if (n === 't') out += '\t'
    else if (n === 'n') out += '\n'
    else if (n === 'r') out += '\r'
    else if (n === 'f') out += '\f'
    else if (n === 'u') {
      const hex = s.slice(i + 1, i + 5)
      if (!/^[0-9A-Fa-f]{4}$/.test(hex)) {
        throw new ConfigError(`${source}:${lineNo}: malformed \\uXXXX escape '\\u${hex}'`, null)
      }
      out += String.fromCharCode(Number.parseInt(hex, 16))
      i += 4
    } else out += n
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Environment variables

export const ENV_PREFIX = 'TOPOGRAPH_'

/**
 * Maps an environment variable name to a config key, as Kafka's container image does for `KAFKA_`:
 * drop the prefix, lower-case, then `___` → `-`, `__` → `_`, `_` → `.`
 * (`TOPOGRAPH_GROUP_STREAMS_SESSION_TIMEOUT_MS` → `group.streams.session.timeout.ms`).
 * Returns null for names without the prefix.
 */
export function envNameToKey(name: string): string | null {
  if (!name.startsWith(ENV_PREFIX) || name.length === ENV_PREFIX.length) return null
  return name
    .slice(ENV_PREFIX.length)
    .toLowerCase()
    .replace(/_+/g, (run) => {
      // Read a run of underscores greedily in groups of three, two and one.
      let out = ''
      let n = run.length
      while (n >= 3) {
        out += '-'
        n -= 3
      }
      if (n === 2) out += '_'
      else if (n === 1) out += '.'
      return out
    })
}

/** Every `TOPOGRAPH_*` variable as a config key → value map. */
export function configFromEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    const key = envNameToKey(name)
    if (key !== null && value !== undefined) out[key] = value
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Sources

/** Splits one `--override` argument; the value may contain `=`. */
export function parseOverride(arg: string): [string, string] {
  const eq = arg.indexOf('=')
  if (eq <= 0 || arg.slice(0, eq).trim() === '') {
    throw new ConfigError(`Invalid --override '${arg}': expected key=value`, null)
  }
  return [arg.slice(0, eq).trim(), arg.slice(eq + 1)]
}

export interface ConfigSources {
  /** Path of a properties file. */
  readonly configFile?: string
  /** Environment to read `TOPOGRAPH_*` variables from; none when omitted. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** `key=value` strings, later ones winning. */
  readonly overrides?: readonly string[]
}

/** Merges the sources into one map of supplied keys: file < environment < overrides. */
export function mergeSources(sources: ConfigSources): Record<string, string> {
  let fromFile: Record<string, string> = {}
  if (sources.configFile !== undefined) {
    let text: string
    try {
      text = readFileSync(sources.configFile, 'utf8')
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e)
      throw new ConfigError(`Cannot read configuration file ${sources.configFile}: ${reason}`, null, {
        cause: e,
      })
    }
    fromFile = parseProperties(text, sources.configFile)
  }
  const merged: Record<string, string> = { ...fromFile, ...configFromEnv(sources.env ?? {}) }
  for (const arg of sources.overrides ?? []) {
    const [k, v] = parseOverride(arg)
    merged[k] = v
  }
  return merged
}

/** Reads and merges every source, then parses. Throws ConfigError. */
export function loadConfigFromSources(sources: ConfigSources): TopographConfig {
  return parseConfig(mergeSources(sources))
}

// ---------------------------------------------------------------------------------------------
// Logging and documentation

/** The minimal logger surface used here, satisfied by pino. */
export interface ConfigLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}

/**
 * Logs the effective values once at INFO (secrets hidden), and each unknown key once at WARN but
 * for the built-in plugins' own keys. Unknown keys are not errors: they are passed on to the plugin.
 */
export function logConfig(config: TopographConfig, logger: ConfigLogger): void {
  const effective: Record<string, string | null> = {}
  for (const def of CONFIG_DEFS as readonly ConfigKeyDef[]) {
    const supplied = Object.hasOwn(config.raw, def.name) ? config.raw[def.name] : undefined
    const text = supplied ?? def.default
    if (isSecret(def)) effective[def.name] = '[hidden]'
    else effective[def.name] = text === null ? null : shownValue(def, text)
  }
  logger.info({ config: effective }, 'TopographConfig values')
  for (const key of config.unknownKeys) {
    if (BUILTIN_PLUGIN_CONFIG_KEYS.has(key)) continue
    logger.warn({ key }, `The configuration '${key}' was supplied but isn't a known config.`)
  }
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|')
}

/** The reference table of docs/configuration.md, generated from the definition table. */
export function renderConfigTable(): string {
  const rows = (CONFIG_DEFS as readonly ConfigKeyDef[]).map((d) => {
    const dflt = d.default === null ? 'unset' : d.default === '' ? '""' : `\`${d.default}\``
    return `| \`${d.name}\` | ${d.type} | ${cell(dflt)} | ${cell(d.validValues)} | ${d.importance} | ${cell(d.doc)} |`
  })
  return [
    '| Key | Type | Default | Valid values | Importance | Meaning |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n')
}

/** True when `key` is defined in the table. */
export function isKnownKey(key: string): boolean {
  return KNOWN_KEYS.has(key)
}
