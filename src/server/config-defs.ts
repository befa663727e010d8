// The one definition table of every server configuration key: name, type, default, bounds,
// importance and documentation. parseConfig (config.ts), the reference table in
// docs/configuration.md and the typed TopographConfig object are all derived from CONFIG_DEFS.
//
// Names, types, defaults and bounds are Kafka's (GroupCoordinatorConfig, SocketServerConfigs,
// KafkaConfig); the keys Kafka does not have are marked "Topograph only" in their doc text.

import { hostname } from 'node:os'
import { parsePlainUsers } from './auth/sasl.js'
import { parseScramUsers } from './auth/scram.js'

export type ConfigType = 'int' | 'long' | 'double' | 'string' | 'list' | 'boolean' | 'password' | 'class'
export type Importance = 'high' | 'medium' | 'low'

/**
 * A configuration that cannot be honoured. `key` names the offending key (null when the problem is
 * not about one key, e.g. an unreadable file). The message follows Kafka's
 * `Invalid value X for configuration KEY: reason` where a single value is at fault.
 */
export class ConfigError extends Error {
  readonly code = 'ERR_TOPOGRAPH_CONFIG'
  readonly key: string | null

  constructor(message: string, key: string | null, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'ConfigError'
    this.key = key
  }

  static invalidValue(key: string, shownValue: string, reason: string): ConfigError {
    return new ConfigError(`Invalid value ${shownValue} for configuration ${key}: ${reason}`, key)
  }
}

/** Thrown by a value parser; parseConfig turns it into a ConfigError naming the key. */
export class InvalidValue extends Error {}

export interface ConfigKeyDef<K extends string = string, T = unknown> {
  readonly name: K
  readonly type: ConfigType
  /** The default as it would be written in a properties file; null means unset. */
  readonly default: string | null
  /** Human-readable description of the accepted values, for the reference table. */
  readonly validValues: string
  readonly importance: Importance
  readonly doc: string
  /** Converts a present value (already trimmed). Throws InvalidValue with the reason. */
  readonly parse: (value: string) => T
  /** The value when the key is absent and has no default. */
  readonly absent: T
  /** For a value that can embed a secret (a password in a URL): the value as logs and DescribeConfigs show it. */
  readonly redact?: (value: string) => string
}

// ---------------------------------------------------------------------------------------------
// Value parsers

const INT_MIN = -2147483648
const INT_MAX = 2147483647

interface Bounds {
  readonly min?: number
  readonly max?: number
}

function parseInteger(value: string, type: 'INT' | 'LONG', bounds: Bounds): number {
  // Java's Integer.parseInt / Long.parseLong: optional sign, decimal digits, nothing else.
  if (!/^[+-]?\d+$/.test(value)) throw new InvalidValue(`Not a number of type ${type}`)
  const n = Number(value)
  const [lo, hi] = type === 'INT' ? [INT_MIN, INT_MAX] : [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]
  // LONG values are held as JavaScript numbers, so they are limited to ±(2^53 − 1) rather than
  // Java's ±(2^63 − 1); no Kafka default comes near either limit.
  if (n < lo || n > hi) throw new InvalidValue(`Not a number of type ${type}`)
  if (bounds.min !== undefined && n < bounds.min)
    throw new InvalidValue(`Value must be at least ${bounds.min}`)
  if (bounds.max !== undefined && n > bounds.max)
    throw new InvalidValue(`Value must be no more than ${bounds.max}`)
  return n
}

function boundsText(bounds: Bounds): string {
  if (bounds.min !== undefined && bounds.max !== undefined) return `[${bounds.min}, ..., ${bounds.max}]`
  if (bounds.min !== undefined) return `[${bounds.min}, ...]`
  if (bounds.max !== undefined) return `[..., ${bounds.max}]`
  return 'any'
}

/** Splits a comma-separated list as Kafka does: entries trimmed, an empty string is an empty list. */
export function splitList(value: string): string[] {
  if (value.trim() === '') return []
  return value.split(',').map((s) => s.trim())
}

interface ListRules {
  readonly allowEmptyList?: boolean
  readonly allowed?: readonly string[]
  /** Rejects repeated entries. Off where a cross-check reports duplicates with its own message. */
  readonly unique?: boolean
}

function parseList(value: string, rules: ListRules): string[] {
  const items = splitList(value)
  if (items.length === 0 && !rules.allowEmptyList) throw new InvalidValue('the list must not be empty')
  if (items.some((s) => s === '')) throw new InvalidValue('list entries must not be empty')
  if (rules.unique !== false && new Set(items).size !== items.length) {
    throw new InvalidValue('values must not be duplicated')
  }
  if (rules.allowed) {
    const bad = items.find((s) => !rules.allowed!.includes(s))
    if (bad !== undefined) throw new InvalidValue(`'${bad}' is not one of ${rules.allowed.join(', ')}`)
  }
  return items
}

// ---------------------------------------------------------------------------------------------
// Listeners

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL'
export const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = [
  'PLAINTEXT',
  'SSL',
  'SASL_PLAINTEXT',
  'SASL_SSL',
]

/** One entry of `listeners` / `advertised.listeners`, e.g. `PLAINTEXT://localhost:9092`. */
export interface Endpoint {
  /** The part before `://`, upper-cased as Kafka does (`PLAINTEXT`, or a custom name such as `INTERNAL`). */
  readonly listenerName: string
  /**
   * Host without IPv6 brackets. In `listeners`, '' means every interface. In the resolved
   * `advertisedListeners` it is never empty (see parseConfig).
   */
  readonly host: string
  /** 0..65535; 0 in `listeners` picks a free port. */
  readonly port: number
}

/** Parses one `NAME://host:port` entry; `[v6addr]` brackets are accepted and removed. */
export function parseEndpoint(entry: string): Endpoint {
  const m = /^([A-Za-z0-9_.-]+):\/\/(?:\[([0-9A-Za-z%.:-]*)\]|([0-9A-Za-z%._-]*)):(-?\d+)$/.exec(entry)
  if (!m) throw new InvalidValue(`'${entry}' is not of the form NAME://host:port`)
  const port = Number(m[4])
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidValue(`'${entry}' has port ${m[4]}, which is outside 0..65535`)
  }
  return { listenerName: m[1].toUpperCase(), host: m[2] ?? m[3], port }
}

function parseListeners(value: string, allowEmptyList: boolean): Endpoint[] {
  const endpoints = parseList(value, { allowEmptyList }).map(parseEndpoint)
  const names = endpoints.map((e) => e.listenerName)
  const dup = names.find((n, i) => names.indexOf(n) !== i)
  if (dup !== undefined)
    throw new InvalidValue(`each listener must have a different name; ${dup} is repeated`)
  return endpoints
}

function parseProtocolMap(value: string): ReadonlyMap<string, SecurityProtocol> {
  const map = new Map<string, SecurityProtocol>()
  for (const entry of splitList(value)) {
    const m = /^([^:]+):(.+)$/.exec(entry)
    if (!m) throw new InvalidValue(`'${entry}' is not of the form LISTENER_NAME:SECURITY_PROTOCOL`)
    const name = m[1].trim().toUpperCase()
    const protocol = m[2].trim().toUpperCase() as SecurityProtocol
    if (!SECURITY_PROTOCOLS.includes(protocol)) {
      throw new InvalidValue(`'${m[2].trim()}' is not a security protocol (${SECURITY_PROTOCOLS.join(', ')})`)
    }
    if (map.has(name)) throw new InvalidValue(`listener name ${name} is mapped twice`)
    map.set(name, protocol)
  }
  return map
}

/** Where advertised listeners with no host (or a wildcard host) point: this machine's name. */
export function defaultAdvertisedHost(): string {
  return hostname()
}

// ---------------------------------------------------------------------------------------------
// Console listener

export interface HttpEndpoint {
  readonly host: string
  readonly port: number
}

function parseConsoleListener(value: string): HttpEndpoint | null {
  if (value === 'none') return null
  const m = /^http:\/\/(?:\[([0-9A-Za-z%.:-]*)\]|([0-9A-Za-z%._-]*)):(\d+)\/?$/.exec(value)
  if (!m) throw new InvalidValue(`expected http://host:port or none`)
  const port = Number(m[3])
  if (port > 65535) throw new InvalidValue(`port ${m[3]} is outside 0..65535`)
  return { host: m[1] ?? m[2], port }
}

// ---------------------------------------------------------------------------------------------
// Definition helpers. Each returns a ConfigKeyDef whose value type is exact, so TopographConfig
// is computed from the table (see ConfigValues below).

function intKey<K extends string>(
  name: K,
  dflt: number,
  bounds: Bounds,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, number> {
  return {
    name,
    type: 'int',
    default: String(dflt),
    validValues: boundsText(bounds),
    importance,
    doc,
    parse: (v) => parseInteger(v, 'INT', bounds),
    absent: dflt,
  }
}

function longKey<K extends string>(
  name: K,
  dflt: number,
  bounds: Bounds,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, number> {
  return {
    ...intKey(name, dflt, bounds, importance, doc),
    type: 'long',
    parse: (v) => parseInteger(v, 'LONG', bounds),
  }
}

function boolKey<K extends string>(
  name: K,
  dflt: boolean,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, boolean> {
  return {
    name,
    type: 'boolean',
    default: String(dflt),
    validValues: 'true, false',
    importance,
    doc,
    parse: (v) => {
      // Kafka accepts true/false in any letter case.
      const lower = v.toLowerCase()
      if (lower === 'true') return true
      if (lower === 'false') return false
      throw new InvalidValue('Expected value to be either true or false')
    },
    absent: dflt,
  }
}

function stringKey<K extends string>(
  name: K,
  dflt: string,
  validValues: string,
  importance: Importance,
  doc: string,
  check: (v: string) => void,
  redact?: (v: string) => string,
): ConfigKeyDef<K, string> {
  return {
    name,
    type: 'string',
    default: dflt,
    validValues,
    importance,
    doc,
    parse: (v) => {
      check(v)
      return v
    },
    absent: dflt,
    ...(redact === undefined ? {} : { redact }),
  }
}

/**
 * A URL's password replaced by `***` (`postgres://user:***@host/db`, also a `password=` query
 * parameter); any other text as it is.
 */
export function hideUrlPassword(value: string): string {
  return value
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:?#]*):[^/?#]*@/i, '$1:***@')
    .replace(/([?&]password=)[^&#]*/gi, '$1***')
}

function enumKey<K extends string, V extends string>(
  name: K,
  dflt: V,
  values: readonly V[],
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, V> {
  return {
    name,
    type: 'string',
    default: dflt,
    validValues: values.join(', '),
    importance,
    doc,
    parse: (v) => {
      if (!(values as readonly string[]).includes(v)) {
        throw new InvalidValue(`String must be one of: ${values.join(', ')}`)
      }
      return v as V
    },
    absent: dflt,
  }
}

function nonEmpty(v: string): void {
  if (v === '') throw new InvalidValue('String must be non-empty')
}

function listKey<K extends string>(
  name: K,
  dflt: readonly string[],
  rules: ListRules,
  validValues: string,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, readonly string[]> {
  return {
    name,
    type: 'list',
    default: dflt.join(','),
    validValues,
    importance,
    doc,
    parse: (v) => parseList(v, rules),
    absent: dflt,
  }
}

// ---------------------------------------------------------------------------------------------
// The log (data plane): helpers for Kafka's LONG keys whose default is Long.MAX_VALUE. The value is
// checked against Java's long range and held as a JavaScript number, so 9223372036854775807 reads
// as 2^63, which the log treats as "no limit".

const JAVA_LONG_MAX = 9223372036854775807n

function parseJavaLong(value: string, bounds: Bounds): number {
  if (!/^[+-]?\d+$/.test(value)) throw new InvalidValue('Not a number of type LONG')
  const n = BigInt(value)
  if (n > JAVA_LONG_MAX || n < -JAVA_LONG_MAX - 1n) throw new InvalidValue('Not a number of type LONG')
  if (bounds.min !== undefined && n < BigInt(bounds.min))
    throw new InvalidValue(`Value must be at least ${bounds.min}`)
  if (bounds.max !== undefined && n > BigInt(bounds.max))
    throw new InvalidValue(`Value must be no more than ${bounds.max}`)
  return Number(n)
}

function javaLongKey<K extends string>(
  name: K,
  dflt: string,
  bounds: Bounds,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, number> {
  return {
    name,
    type: 'long',
    default: dflt,
    validValues: boundsText(bounds),
    importance,
    doc,
    parse: (v) => parseJavaLong(v, bounds),
    absent: Number(dflt),
  }
}

/** A LONG key without a default: null when unset (Kafka then falls back to a coarser synonym). */
function optionalLongKey<K extends string>(
  name: K,
  bounds: Bounds,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, number | null> {
  return {
    name,
    type: 'long',
    default: null,
    validValues: `${boundsText(bounds)} or unset`,
    importance,
    doc,
    parse: (v): number | null => parseJavaLong(v, bounds),
    absent: null as number | null,
  }
}

function optionalIntKey<K extends string>(
  name: K,
  bounds: Bounds,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, number | null> {
  return {
    name,
    type: 'int',
    default: null,
    validValues: `${boundsText(bounds)} or unset`,
    importance,
    doc,
    parse: (v): number | null => parseInteger(v, 'INT', bounds),
    absent: null as number | null,
  }
}

// ---------------------------------------------------------------------------------------------
// The table. Order is the order of the reference table in docs/configuration.md.

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export const REBALANCE_PROTOCOLS = ['classic', 'consumer', 'share', 'streams'] as const
export const BUILTIN_PLUGIN_ALIASES = ['memory', 'sqlite', 'postgres'] as const

export const CONFIG_DEFS = [
  // --- Server, network -------------------------------------------------------------------------
  {
    name: 'listeners',
    type: 'list',
    default: 'PLAINTEXT://localhost:9092',
    validValues: 'comma-separated NAME://host:port; empty host = all interfaces; port 0 = any free port',
    importance: 'high',
    doc: 'Addresses the Kafka-protocol server binds to. The bound address is logged at start-up.',
    parse: (v: string): readonly Endpoint[] => parseListeners(v, false),
    absent: [] as readonly Endpoint[],
  },
  {
    name: 'advertised.listeners',
    type: 'list',
    default: null,
    validValues:
      'NAME://host:port list; names must appear in listeners; unset = listeners, an empty or wildcard host becoming the machine host name',
    importance: 'high',
    doc: 'Addresses returned to clients in Metadata and FindCoordinator responses. Port 0 stands for the port actually bound by the listener of the same name.',
    parse: (v: string): readonly Endpoint[] | null => parseListeners(v, true),
    absent: null as readonly Endpoint[] | null,
  },
  {
    name: 'listener.security.protocol.map',
    type: 'string',
    default: 'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL',
    validValues: `NAME:PROTOCOL list; protocols ${SECURITY_PROTOCOLS.join(', ')}`,
    importance: 'low',
    doc: 'Security protocol of each listener name: PLAINTEXT, SSL (TLS), SASL_PLAINTEXT or SASL_SSL (SASL over TLS). See docs/security.md.',
    parse: parseProtocolMap,
    absent: new Map() as ReadonlyMap<string, SecurityProtocol>,
  },
  intKey('node.id', 1, { min: 0 }, 'high', 'Id of this node, returned as the broker and coordinator id.'),
  intKey(
    'socket.request.max.bytes',
    104857600,
    { min: 1 },
    'high',
    'Largest request frame accepted; a bigger size prefix closes the connection.',
  ),
  longKey(
    'connections.max.idle.ms',
    600000,
    {},
    'medium',
    'A connection with no traffic for this long is closed by the server.',
  ),
  intKey(
    'queued.max.requests',
    500,
    { min: 1 },
    'high',
    'Most requests the server works on at once, over all connections (each connection has at most one in flight); at the bound, connections wait before their next request is read.',
  ),
  enumKey(
    'log.level',
    'info',
    LOG_LEVELS,
    'medium',
    'Least severe level written to the JSON log on stdout. Topograph only.',
  ),

  // --- Storage -----------------------------------------------------------------------------------
  stringKey(
    'data.dir',
    './data',
    'non-empty path',
    'high',
    'Directory for the embedded storage and the cluster id, created if missing. Topograph only.',
    nonEmpty,
  ),
  stringKey(
    'coordinator.storage',
    'sqlite',
    'sqlite, memory, postgres://… or postgresql://…',
    'high',
    'Where coordinator records are kept: a SQLite file in data.dir, process memory (lost on exit), or a PostgreSQL database given by its URL (tables in the first schema of the search_path, one server per schema at a time; see docs/storage.md). Topograph only.',
    (v) => {
      if (v === 'sqlite' || v === 'memory' || /^postgres(ql)?:\/\/./.test(v)) return
      throw new InvalidValue('expected sqlite, memory or a postgres:// connection string')
    },
    hideUrlPassword,
  ),

  // --- Group coordinator, offsets ----------------------------------------------------------------
  listKey(
    'group.coordinator.rebalance.protocols',
    ['classic', 'consumer', 'streams'],
    { allowed: REBALANCE_PROTOCOLS },
    `${REBALANCE_PROTOCOLS.join(', ')}; must include classic`,
    'medium',
    'Group protocols the coordinator serves. Without streams, the streams group APIs answer UNSUPPORTED_VERSION. share is accepted for compatibility and has no effect. Deprecated in Kafka 4.3.',
  ),
  intKey(
    'offsets.topic.num.partitions',
    50,
    { min: 1 },
    'high',
    'Number of coordinator shards. A group lives in shard abs(hashCode(groupId)) % n, with Java String.hashCode; do not change it once groups exist.',
  ),
  intKey(
    'offsets.retention.minutes',
    10080,
    { min: 1 },
    'high',
    'Committed offsets of a group without members are deleted after this long.',
  ),
  longKey(
    'offsets.retention.check.interval.ms',
    600000,
    { min: 1 },
    'high',
    'Period of the offset-expiry sweep and of the topology-description cleanup cycle.',
  ),
  intKey(
    'offsets.commit.timeout.ms',
    5000,
    { min: 1 },
    'high',
    'Longest wait for a coordinator write to be stored before the request fails.',
  ),

  // --- Classic groups ----------------------------------------------------------------------------
  intKey(
    'group.min.session.timeout.ms',
    6000,
    {},
    'medium',
    'Smallest session timeout a classic group member may ask for.',
  ),
  intKey(
    'group.max.session.timeout.ms',
    1800000,
    {},
    'medium',
    'Largest session timeout a classic group member may ask for.',
  ),
  intKey(
    'group.initial.rebalance.delay.ms',
    3000,
    {},
    'medium',
    'How long a new classic group waits for more members before its first rebalance.',
  ),
  intKey('group.max.size', 2147483647, { min: 1 }, 'medium', 'Most members one classic group may hold.'),
  intKey(
    'max.group.configs',
    10000,
    { min: 0 },
    'low',
    'Most groups that may set group-level configs (IncrementalAlterConfigs on GROUP resources); an alteration that would set configs on one more group is refused with POLICY_VIOLATION. Topograph only.',
  ),
  intKey(
    'num.partitions',
    1,
    { min: 1 },
    'medium',
    'Partitions of a topic created without a partition count (CreateTopics with NumPartitions -1).',
  ),
  intKey(
    'default.replication.factor',
    1,
    { min: 1 },
    'medium',
    'Replication factor of a topic created without one. This server is a single node, so only 1 is usable.',
  ),
  intKey(
    'topic.max.partitions',
    10000,
    { min: 1 },
    'medium',
    'Most partitions one topic may have; CreateTopics asking for more is refused with INVALID_PARTITIONS. Topograph only.',
  ),
  intKey(
    'max.partitions',
    100000,
    { min: 1 },
    'medium',
    'Most partitions of all topics together; a creation that would go above it is refused with POLICY_VIOLATION. Topograph only (the name KIP-578 proposes).',
  ),
  intKey(
    'offset.metadata.max.bytes',
    4096,
    { min: 0 },
    'low',
    'Longest metadata string an offset commit may carry; a longer one is refused with OFFSET_METADATA_TOO_LARGE.',
  ),

  // --- Streams groups (KIP-1071) -----------------------------------------------------------------
  intKey(
    'group.streams.session.timeout.ms',
    45000,
    { min: 1 },
    'medium',
    'A streams member that does not heartbeat for this long is removed from its group.',
  ),
  intKey(
    'group.streams.min.session.timeout.ms',
    45000,
    { min: 1 },
    'medium',
    'Lower limit for the group-level streams.session.timeout.ms.',
  ),
  intKey(
    'group.streams.max.session.timeout.ms',
    60000,
    { min: 1 },
    'medium',
    'Upper limit for the group-level streams.session.timeout.ms.',
  ),
  intKey(
    'group.streams.heartbeat.interval.ms',
    5000,
    { min: 1 },
    'medium',
    'Heartbeat interval sent to streams members (HeartbeatIntervalMs).',
  ),
  intKey(
    'group.streams.min.heartbeat.interval.ms',
    5000,
    { min: 1 },
    'medium',
    'Lower limit for the group-level streams.heartbeat.interval.ms.',
  ),
  intKey(
    'group.streams.max.heartbeat.interval.ms',
    15000,
    { min: 1 },
    'medium',
    'Upper limit for the group-level streams.heartbeat.interval.ms.',
  ),
  intKey(
    'group.streams.max.size',
    2147483647,
    { min: 1 },
    'medium',
    'Most members one streams group may hold.',
  ),
  intKey(
    'group.streams.num.standby.replicas',
    0,
    { min: 0 },
    'medium',
    'Standby replicas per task, given to the assignor.',
  ),
  intKey(
    'group.streams.max.standby.replicas',
    2,
    { min: 0 },
    'medium',
    'Upper limit for the group-level streams.num.standby.replicas.',
  ),
  intKey(
    'group.streams.initial.rebalance.delay.ms',
    3000,
    { min: 0 },
    'medium',
    'How long a new streams group waits for more members before its first assignment.',
  ),
  intKey(
    'group.streams.assignment.interval.ms',
    1000,
    { min: 0 },
    'medium',
    'Shortest time between two assignor runs for one streams group.',
  ),
  intKey(
    'group.streams.min.assignment.interval.ms',
    0,
    { min: 0 },
    'medium',
    'Lower limit for group.streams.assignment.interval.ms and its group-level override.',
  ),
  intKey(
    'group.streams.max.assignment.interval.ms',
    15000,
    { min: 0 },
    'medium',
    'Upper limit for group.streams.assignment.interval.ms and its group-level override.',
  ),
  listKey(
    'group.streams.assignors',
    ['sticky'],
    {},
    'non-empty list without duplicates; built-in: sticky',
    'medium',
    'Task assignors available to streams groups; the first is used when a group names none.',
  ),
  boolKey(
    'group.streams.assignor.offload.enable',
    true,
    'medium',
    'Accepted for compatibility; as in Kafka, the streams assignor always runs inline.',
  ),
  intKey(
    'group.streams.task.offset.interval.ms',
    60000,
    { min: 1 },
    'medium',
    'How often members report task changelog offsets (TaskOffsetIntervalMs).',
  ),
  intKey(
    'group.streams.min.task.offset.interval.ms',
    15000,
    { min: 1 },
    'medium',
    'Lower limit for the group-level streams.task.offset.interval.ms.',
  ),
  intKey(
    'group.streams.num.warmup.replicas',
    2,
    { min: 0 },
    'medium',
    'Most warm-up replicas the assignor may place.',
  ),
  intKey(
    'group.streams.max.warmup.replicas',
    20,
    { min: 0 },
    'medium',
    'Upper limit for the group-level streams.num.warmup.replicas.',
  ),
  listKey(
    'group.streams.rack.aware.assignment.tags',
    [],
    { allowEmptyList: true, unique: false },
    'list of client tag keys without duplicates; may be empty',
    'low',
    'Client tag keys used to spread standby replicas; part of the assignment configs.',
  ),
  longKey(
    'group.streams.acceptable.recovery.lag',
    10000,
    { min: 0 },
    'medium',
    'Offsets a member may lag behind and still count as caught up (AcceptableRecoveryLag).',
  ),

  // --- Topology description plugin (KIP-1331) ----------------------------------------------------
  {
    name: 'group.streams.topology.description.plugin.class',
    type: 'class',
    default: null,
    validValues: `${BUILTIN_PLUGIN_ALIASES.join(', ')}, or a module path or package specifier, optionally #ExportName`,
    importance: 'medium',
    doc: 'The topology description plugin. Unset turns the feature off. The value is loaded as a module; a load failure stops start-up.',
    parse: (v: string): string | null => {
      nonEmpty(v)
      const hash = v.lastIndexOf('#')
      if (hash === 0) throw new InvalidValue('the module part before # is empty')
      if (hash > 0 && !/^[A-Za-z_$][\w$]*$/.test(v.slice(hash + 1))) {
        throw new InvalidValue(`'${v.slice(hash + 1)}' after # is not an export name`)
      }
      return v
    },
    absent: null as string | null,
  },
  {
    name: 'group.streams.topology.description.plugin.timeout.ms',
    type: 'long',
    default: null,
    validValues: '[1, ...] or unset',
    importance: 'low',
    doc: 'Deadline for one plugin call; a call still running then counts as failed. Unset = no deadline, as in Kafka. Topograph only (difference D5).',
    parse: (v: string): number | null => parseInteger(v, 'LONG', { min: 1 }),
    absent: null as number | null,
  },

  // --- The log (data plane; docs/data-plane.md) ---------------------------------------------------
  // Broker defaults of the topic configs (a topic's own setting wins) and the log layer's settings.
  {
    name: 'log.dirs',
    type: 'list',
    default: null,
    validValues: 'comma-separated directories, or unset for <data.dir>/logs',
    importance: 'high',
    doc: 'Directories the partition logs are kept in; partitions are spread over them. Unset: the logs directory under data.dir.',
    parse: (v: string): readonly string[] | null => parseList(v, {}),
    absent: null as readonly string[] | null,
  },
  enumKey(
    'log.storage',
    'file',
    ['file', 'memory'],
    'low',
    'Where partition logs live: segment files under log.dirs, or memory only (nothing survives a restart; for tests). Topograph only.',
  ),
  boolKey(
    'auto.create.topics.enable',
    true,
    'high',
    'Create a topic that a Metadata request with AllowAutoTopicCreation names and that does not exist, with num.partitions and default.replication.factor.',
  ),
  intKey(
    'fetch.max.bytes',
    57671680,
    { min: 1024 },
    'medium',
    'Most record bytes one Fetch answer carries (a client may ask for less; the first batch is returned whole even if larger).',
  ),
  listKey(
    'log.cleanup.policy',
    ['delete'],
    { allowEmptyList: true, allowed: ['compact', 'delete'] },
    'compact, delete; may be empty (keep everything)',
    'medium',
    'Default cleanup.policy of topics.',
  ),
  optionalLongKey(
    'log.retention.ms',
    { min: -1 },
    'high',
    'Default retention.ms of topics; wins over log.retention.minutes and log.retention.hours. -1 = no limit.',
  ),
  optionalIntKey(
    'log.retention.minutes',
    {},
    'high',
    'Default retention of topics in minutes; wins over log.retention.hours.',
  ),
  intKey('log.retention.hours', 168, {}, 'high', 'Default retention of topics in hours.'),
  javaLongKey(
    'log.retention.bytes',
    '-1',
    {},
    'high',
    'Default retention.bytes of topics (per partition). -1 = no limit.',
  ),
  intKey('log.segment.bytes', 1073741824, { min: 1048576 }, 'high', 'Default segment.bytes of topics.'),
  optionalLongKey('log.roll.ms', {}, 'high', 'Default segment.ms of topics; wins over log.roll.hours.'),
  intKey(
    'log.roll.hours',
    168,
    { min: 1 },
    'high',
    'Default segment age before a new segment is started, in hours.',
  ),
  optionalLongKey(
    'log.roll.jitter.ms',
    {},
    'high',
    'Default segment.jitter.ms of topics; wins over log.roll.jitter.hours.',
  ),
  intKey('log.roll.jitter.hours', 0, { min: 0 }, 'high', 'Default segment jitter of topics, in hours.'),
  intKey(
    'log.index.size.max.bytes',
    10485760,
    { min: 4 },
    'medium',
    'Default segment.index.bytes of topics.',
  ),
  intKey('log.index.interval.bytes', 4096, { min: 0 }, 'medium', 'Default index.interval.bytes of topics.'),
  intKey(
    'message.max.bytes',
    1048588,
    { min: 0 },
    'high',
    'Default max.message.bytes of topics: the largest record batch accepted.',
  ),
  enumKey(
    'log.message.timestamp.type',
    'CreateTime',
    ['CreateTime', 'LogAppendTime'],
    'medium',
    'Default message.timestamp.type of topics.',
  ),
  javaLongKey(
    'log.message.timestamp.before.max.ms',
    '9223372036854775807',
    { min: 0 },
    'medium',
    'Default message.timestamp.before.max.ms of topics.',
  ),
  javaLongKey(
    'log.message.timestamp.after.max.ms',
    '3600000',
    { min: 0 },
    'medium',
    'Default message.timestamp.after.max.ms of topics.',
  ),
  enumKey(
    'compression.type',
    'producer',
    ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'],
    'high',
    "Default compression.type of topics: producer keeps the producer's codec.",
  ),
  intKey(
    'compression.gzip.level',
    -1,
    { min: -1, max: 9 },
    'medium',
    'Default compression.gzip.level of topics (1-9, or -1 for the codec default).',
  ),
  intKey(
    'compression.lz4.level',
    9,
    { min: 1, max: 17 },
    'medium',
    'Default compression.lz4.level of topics.',
  ),
  intKey(
    'compression.zstd.level',
    3,
    { min: -131072, max: 22 },
    'medium',
    'Default compression.zstd.level of topics.',
  ),
  javaLongKey(
    'log.cleaner.min.compaction.lag.ms',
    '0',
    { min: 0 },
    'medium',
    'Default min.compaction.lag.ms of topics.',
  ),
  javaLongKey(
    'log.cleaner.max.compaction.lag.ms',
    '9223372036854775807',
    { min: 1 },
    'medium',
    'Default max.compaction.lag.ms of topics.',
  ),
  javaLongKey(
    'log.cleaner.delete.retention.ms',
    '86400000',
    { min: 0 },
    'medium',
    'Default delete.retention.ms of topics.',
  ),
  {
    name: 'log.cleaner.min.cleanable.ratio',
    type: 'double',
    default: '0.5',
    validValues: '[0, ..., 1]',
    importance: 'medium',
    doc: 'Default min.cleanable.dirty.ratio of topics.',
    parse: (v: string): number => {
      const n = Number(v)
      if (v === '' || Number.isNaN(n)) throw new InvalidValue('Not a number of type DOUBLE')
      if (n < 0) throw new InvalidValue('Value must be at least 0')
      if (n > 1) throw new InvalidValue('Value must be no more than 1')
      return n
    },
    absent: 0.5,
  },
  javaLongKey(
    'log.segment.delete.delay.ms',
    '60000',
    { min: 0 },
    'high',
    'Default file.delete.delay.ms of topics.',
  ),
  javaLongKey(
    'log.flush.interval.messages',
    '9223372036854775807',
    { min: 1 },
    'high',
    'Default flush.messages of topics (1 = force every append to disk before it is acknowledged).',
  ),
  optionalLongKey(
    'log.flush.interval.ms',
    {},
    'high',
    'Default flush.ms of topics; unset = log.flush.scheduler.interval.ms.',
  ),
  javaLongKey(
    'log.flush.scheduler.interval.ms',
    '9223372036854775807',
    {},
    'high',
    'How often logs are checked against flush.ms.',
  ),
  intKey(
    'log.flush.offset.checkpoint.interval.ms',
    60000,
    { min: 0 },
    'high',
    'How often the recovery points are written.',
  ),
  intKey(
    'log.flush.start.offset.checkpoint.interval.ms',
    60000,
    { min: 0 },
    'high',
    'How often the log start offsets are written (DeleteRecords writes them at once too).',
  ),
  javaLongKey(
    'log.retention.check.interval.ms',
    '300000',
    { min: 1 },
    'medium',
    'How often retention deletes old segments.',
  ),
  boolKey('log.cleaner.enable', true, 'medium', 'Run the log cleaner (compaction of compact topics).'),
  intKey('log.cleaner.threads', 1, { min: 0 }, 'medium', 'Log cleaner threads; 0 compacts nothing.'),
  javaLongKey(
    'log.cleaner.backoff.ms',
    '15000',
    { min: 0 },
    'medium',
    'Pause of the log cleaner when no log needs cleaning.',
  ),
  javaLongKey(
    'log.cleaner.dedupe.buffer.size',
    '134217728',
    {},
    'medium',
    'Memory for key hashes in one cleaning pass, in bytes.',
  ),
  intKey(
    'log.cleaner.io.buffer.size',
    524288,
    { min: 0 },
    'medium',
    'Bytes the log cleaner reads at a time.',
  ),
  intKey(
    'producer.id.expiration.ms',
    86400000,
    { min: 1 },
    'low',
    'How long an idempotent producer state is kept without a write from it.',
  ),
  intKey(
    'producer.id.expiration.check.interval.ms',
    600000,
    { min: 1 },
    'low',
    'How often expired producer states are removed.',
  ),

  // --- Security (docs/security.md) -----------------------------------------------------------------
  enumKey(
    'ssl.keystore.type',
    'PEM',
    ['PEM'],
    'medium',
    'Format of the key store. Only PEM is supported (Kafka defaults to JKS). May be set per listener as listener.name.<name>.ssl.keystore.type, like every ssl.* key.',
  ),
  {
    name: 'ssl.keystore.location',
    type: 'string',
    default: null,
    validValues: 'path of a PEM file holding one private key and the certificate chain',
    importance: 'high',
    doc: 'Key store of SSL and SASL_SSL listeners: a PEM file with the private key and the certificate chain (leaf first).',
    parse: (v: string): string | null => v,
    absent: null as string | null,
  },
  {
    name: 'ssl.keystore.certificate.chain',
    type: 'password',
    default: null,
    validValues: 'PEM certificates (leaf first); with ssl.keystore.key, instead of ssl.keystore.location',
    importance: 'high',
    doc: 'Certificate chain in PEM, given inline.',
    parse: (v: string): string | null => v,
    absent: null as string | null,
  },
  {
    name: 'ssl.keystore.key',
    type: 'password',
    default: null,
    validValues: 'one PEM private key (PKCS#8, PKCS#1 or SEC1; may be encrypted)',
    importance: 'high',
    doc: 'Private key in PEM, given inline; used with ssl.keystore.certificate.chain.',
    parse: (v: string): string | null => v,
    absent: null as string | null,
  },
  {
    name: 'ssl.key.password',
    type: 'password',
    default: null,
    validValues: 'passphrase of an encrypted PEM private key',
    importance: 'high',
    doc: 'Passphrase of the private key when it is encrypted.',
    parse: (v: string): string | null => v,
    absent: null as string | null,
  },
  enumKey(
    'ssl.truststore.type',
    'PEM',
    ['PEM'],
    'medium',
    'Format of the trust store. Only PEM is supported.',
  ),
  {
    name: 'ssl.truststore.location',
    type: 'string',
    default: null,
    validValues: 'path of a PEM file of CA certificates',
    importance: 'high',
    doc: 'Certificates that client certificates are verified against (ssl.client.auth requested or required).',
    parse: (v: string): string | null => v,
    absent: null as string | null,
  },
  {
    name: 'ssl.truststore.certificates',
    type: 'password',
    default: null,
    validValues: 'PEM CA certificates, instead of ssl.truststore.location',
    importance: 'high',
    doc: 'Trusted certificates in PEM, given inline.',
    parse: (v: string): string | null => v,
    absent: null as string | null,
  },
  enumKey(
    'ssl.client.auth',
    'none',
    ['required', 'requested', 'none'],
    'medium',
    'Client certificates on TLS listeners: none (not asked), requested (verified when sent), required (connection refused without a valid one).',
  ),
  listKey(
    'ssl.enabled.protocols',
    ['TLSv1.2', 'TLSv1.3'],
    { allowed: ['TLSv1.2', 'TLSv1.3'] },
    'TLSv1.2, TLSv1.3',
    'medium',
    'TLS versions accepted on TLS listeners.',
  ),
  listKey(
    'sasl.enabled.mechanisms',
    ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'],
    { allowed: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] },
    'PLAIN, SCRAM-SHA-256, SCRAM-SHA-512',
    'medium',
    'SASL mechanisms offered on SASL_PLAINTEXT and SASL_SSL listeners (Kafka defaults to GSSAPI, which is not served). Per listener: listener.name.<name>.sasl.enabled.mechanisms.',
  ),
  {
    name: 'sasl.plain.users',
    type: 'password',
    default: null,
    validValues: 'comma-separated user:password; no comma in passwords',
    importance: 'high',
    doc: 'Users and passwords accepted by SASL/PLAIN. Topograph only (Kafka reads them from JAAS).',
    parse: (v: string): string | null => {
      try {
        parsePlainUsers(v)
      } catch (e) {
        throw new InvalidValue((e as Error).message)
      }
      return v
    },
    absent: null as string | null,
  },
  {
    name: 'sasl.scram.users',
    type: 'password',
    default: null,
    validValues:
      'comma-separated user:SCRAM-SHA-256|SCRAM-SHA-512:iterations:salt:storedKey:serverKey (base64)',
    importance: 'high',
    doc: 'SCRAM credentials as salted hashes, never passwords; compute entries with scramUserEntry() (docs/security.md). Topograph only.',
    parse: (v: string): string | null => {
      try {
        parseScramUsers(v)
      } catch (e) {
        throw new InvalidValue((e as Error).message)
      }
      return v
    },
    absent: null as string | null,
  },
  intKey(
    'sasl.server.max.receive.size',
    524288,
    { min: 1 },
    'low',
    'Largest frame accepted from a client before it has authenticated; a bigger one closes the connection.',
  ),
  longKey(
    'connections.max.reauth.ms',
    0,
    { min: 0 },
    'medium',
    'Lifetime of a SASL session, sent to clients as SessionLifetimeMs; the first request after it ends closes the connection unless the client re-authenticated. 0 = no limit.',
  ),
  intKey(
    'connection.failed.authentication.delay.ms',
    100,
    { min: 0 },
    'low',
    'Delay before the answer to a failed authentication is sent and the connection closed.',
  ),
  {
    name: 'authorizer.class.name',
    type: 'string',
    default: '',
    validValues: 'empty, or any name (enables the built-in ACL authorizer)',
    importance: 'low',
    doc: 'Empty: every request is allowed. Any other value (e.g. org.apache.kafka.metadata.authorizer.StandardAuthorizer) turns on the built-in ACL authorizer.',
    parse: (v: string): string => v,
    absent: '',
  },
  stringKey(
    'super.users',
    '',
    'semicolon-separated principals, e.g. User:admin;User:ops',
    'low',
    'Principals the ACL authorizer allows everything.',
    () => undefined,
  ),
  boolKey(
    'allow.everyone.if.no.acl.found',
    false,
    'low',
    'With the ACL authorizer: allow an action on a resource no ACL applies to.',
  ),
  intKey(
    'max.acls',
    10000,
    { min: 0 },
    'low',
    'Most ACLs the ACL authorizer stores; CreateAcls that would go above it is refused with POLICY_VIOLATION. Topograph only.',
  ),
  intKey(
    'max.acl.bytes',
    4096,
    { min: 1 },
    'low',
    "Most UTF-8 bytes of one ACL's resource name, principal and host together; a longer ACL is refused with POLICY_VIOLATION. Topograph only.",
  ),

  // --- Console -----------------------------------------------------------------------------------
  {
    name: 'console.listener',
    type: 'string',
    default: 'http://localhost:8080',
    validValues: 'http://host:port, or none',
    importance: 'medium',
    doc: 'Address of the web console and the Prometheus /metrics endpoint; none turns both off. Topograph only.',
    parse: parseConsoleListener,
    absent: null as HttpEndpoint | null,
  },
] as const satisfies readonly ConfigKeyDef<string, unknown>[]

// ---------------------------------------------------------------------------------------------
// Types derived from the table

type Defs = (typeof CONFIG_DEFS)[number]

/** Every key the table defines. */
export type ConfigKey = Defs['name']

/** `group.streams.session.timeout.ms` → `groupStreamsSessionTimeoutMs`. */
export type CamelCase<S extends string> = S extends `${infer H}.${infer T}`
  ? `${H}${Capitalize<CamelCase<T>>}`
  : S

type ValueOfDef<D> = D extends { parse: (v: string) => infer T } ? T : never

/** The typed value of every key, named in camelCase. */
export type ConfigValues = {
  readonly [D in Defs as CamelCase<D['name']>]: ValueOfDef<D>
}

/** Run-time twin of CamelCase. */
export function camelCase(key: string): string {
  return key.replace(/\.([a-z0-9])/g, (_, c: string) => c.toUpperCase())
}

export const KNOWN_KEYS: ReadonlySet<string> = new Set(CONFIG_DEFS.map((d) => d.name))
