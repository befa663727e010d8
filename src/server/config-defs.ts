// The one definition table of every server configuration key: name, type, default, bounds,
// importance and documentation. parseConfig (config.ts), the reference table in
// docs/configuration.md and the typed TopographConfig object are all derived from CONFIG_DEFS.
//
// Names, types, defaults and bounds are Kafka's (GroupCoordinatorConfig, SocketServerConfigs,
// KafkaConfig); the keys Kafka does not have are marked "Topograph only" in their doc text.

import { hostname } from 'node:os'
import {
  boolKey,
  type Bounds,
  boundsText,
  checkBounds,
  type ConfigKeyDef,
  type Importance,
  enumKey,
  hideUrlPassword,
  InvalidValue,
  intKey,
  listKey,
  longKey,
  nonEmpty,
  optionalKey,
  parseInt32,
  parseInt64,
  parseList,
  splitList,
  stringKey,
} from '../config/index.js'
import {
  CONSUMER_GROUP_KEYS,
  GROUP_COORDINATOR_KEYS,
  OFFSET_METADATA_KEYS,
  STREAMS_GROUP_KEYS,
} from '../coordinator/service/config-defs.js'
import { parsePlainUsers } from './auth/sasl.js'
import { parseScramUsers } from './auth/scram.js'

export {
  type Bounds,
  type ConfigKeyDef,
  type ConfigType,
  ConfigError,
  type Importance,
  hideUrlPassword,
  InvalidValue,
  splitList,
} from '../config/index.js'

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

/** Kafka's pattern of a valid host in max.connections.per.ip.overrides. */
const VALID_HOST = /^[0-9a-zA-Z\-%._:]*$/

/**
 * `max.connections.per.ip.overrides`, parsed as Kafka parses it: entries split at commas (with the
 * white space around them), each split at its last ':' into host and count (so IPv6 addresses
 * work), the count a Java int; hosts must consist of valid host characters.
 */
export function parseConnectionOverrides(value: string): ReadonlyMap<string, number> {
  const map = new Map<string, number>()
  if (value === '') return map
  const entries = value.split(/\s*,\s*/)
  // Java's String.split drops trailing empty strings.
  while (entries.length > 0 && entries[entries.length - 1] === '') entries.pop()
  for (const entry of entries) {
    const at = entry.lastIndexOf(':')
    if (at < 0) {
      throw new InvalidValue(
        `Error parsing configuration property 'max.connections.per.ip.overrides': begin 0, end -1, length ${entry.length}`,
      )
    }
    const host = entry.slice(0, at).trim()
    const count = entry.slice(at + 1).trim()
    let n: number
    try {
      n = parseInt32(count)
    } catch {
      throw new InvalidValue(`For input string: "${count}"`)
    }
    map.set(host, n)
  }
  const invalid = [...map.keys()].filter((h) => !VALID_HOST.test(h))
  if (invalid.length > 0) {
    throw new InvalidValue(
      `max.connections.per.ip.overrides contains invalid addresses : ${invalid.join(',')}`,
    )
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
// The log (data plane): Kafka's LONG keys whose default is Long.MAX_VALUE are checked against
// Java's long range and held as a JavaScript number, so 9223372036854775807 reads as 2^63, which
// the log treats as "no limit".

function parseJavaLong(value: string, bounds: Bounds): number {
  const n = parseInt64(value)
  checkBounds(n, bounds)
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

/** A LONG or INT key without a default: null when unset (Kafka then falls back to a coarser synonym). */
function optionalNumberKey<K extends string>(
  name: K,
  type: 'int' | 'long',
  bounds: Bounds,
  importance: Importance,
  doc: string,
): ConfigKeyDef<K, number | null> {
  return {
    name,
    type,
    default: null,
    validValues: `${boundsText(bounds)} or unset`,
    importance,
    doc,
    parse: (v): number | null => {
      if (type === 'long') return parseJavaLong(v, bounds)
      const n = parseInt32(v)
      checkBounds(n, bounds)
      return n
    },
    absent: null as number | null,
  }
}

// ---------------------------------------------------------------------------------------------
// The table. Order is the order of the reference table in docs/configuration.md.

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export { BUILTIN_PLUGIN_ALIASES, REBALANCE_PROTOCOLS } from '../coordinator/service/config-defs.js'

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
    'max.connections',
    2147483647,
    { min: 0 },
    'medium',
    'Most connections the server holds at once, over all listeners and addresses. At the limit a new connection waits, unread, until another closes (up to socket.listen.backlog.size connections wait; beyond them a new connection is closed at once).',
  ),
  intKey(
    'max.connection.creation.rate',
    2147483647,
    { min: 0 },
    'medium',
    'Most new connections per second over all listeners; above it the server waits (at most quota.window.size.seconds) before it admits the next connection.',
  ),
  intKey(
    'max.connections.per.ip',
    2147483647,
    { min: 0 },
    'medium',
    'Most connections from one IP address; a connection above it is closed at once. 0 is allowed only with max.connections.per.ip.overrides set.',
  ),
  {
    name: 'max.connections.per.ip.overrides',
    type: 'string',
    default: '',
    validValues: 'comma-separated host:count list (an IP address or a host name resolved at start-up)',
    importance: 'medium',
    doc: 'Per-address exceptions to max.connections.per.ip, e.g. "hostName:100,127.0.0.1:200".',
    parse: parseConnectionOverrides,
    absent: new Map() as ReadonlyMap<string, number>,
  },
  intKey(
    'socket.listen.backlog.size',
    50,
    { min: 1 },
    'medium',
    'Most pending connections: the listen backlog, and the most connections that wait, unread, for a slot while max.connections is reached.',
  ),
  intKey(
    'quota.window.num',
    11,
    { min: 1 },
    'low',
    'Number of samples kept for client quotas (the rate is measured over this many windows).',
  ),
  intKey(
    'quota.window.size.seconds',
    1,
    { min: 1 },
    'low',
    'Time span of each sample for client quotas; also the longest throttle of a request-percentage quota.',
  ),
  intKey(
    'queued.max.requests',
    500,
    { min: 1 },
    'high',
    'Most requests the server works on at once, over all connections (each connection has at most one in flight); at the bound, connections wait before their next request is read. A request parked on purpose (a JoinGroup waiting for its rebalance) stops counting within 200 ms while others wait.',
  ),
  enumKey(
    'log.level',
    'info',
    LOG_LEVELS,
    'medium',
    'Least severe level written to the JSON log on stdout. Topograph only.',
  ),
  boolKey(
    'request.log.enable',
    false,
    'low',
    "Write one INFO line to the JSON log for every answered request, whatever log.level says: its API and version, correlation id, client id and address, the milliseconds from its read to its answer, and the error codes inside the answer (as Kafka's request logger at DEBUG). Topograph only.",
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

  ...GROUP_COORDINATOR_KEYS,

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
    'topic.change.log.wait.ms',
    5000,
    { min: 0 },
    'low',
    "How long CreateTopics, CreatePartitions and DeleteTopics wait, once the change is durable, for the partitions' logs to be created or removed before answering; the rest goes on in the background, and until a partition's log is open Produce, Fetch and ListOffsets answer it NOT_LEADER_OR_FOLLOWER (retriable), as Kafka does before its broker has created the log. 0 answers as soon as the change is durable, as Kafka's controller does. Topograph only.",
  ),
  intKey(
    'max.partitions',
    100000,
    { min: 1 },
    'medium',
    'Most partitions of all topics together; a creation that would go above it is refused with POLICY_VIOLATION. Topograph only (the name KIP-578 proposes).',
  ),
  ...OFFSET_METADATA_KEYS,

  ...CONSUMER_GROUP_KEYS,

  ...STREAMS_GROUP_KEYS,

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
  intKey(
    'max.request.partition.size.limit',
    2000,
    { min: 1 },
    'low',
    'The most partitions a DescribeTopicPartitions answer holds, whatever the request asks for.',
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
  intKey(
    'fetch.max.buffered.bytes',
    268435456,
    { min: 0 },
    'low',
    'Most record bytes read for Fetch answers and not yet written to their sockets, over all connections (clients that do not read their answers hold them). Past it, a Fetch carries at most one batch until answers drain. Topograph only: Kafka sends fetch data from the page cache without holding it.',
  ),
  intKey(
    'max.incremental.fetch.session.cache.slots',
    1000,
    { min: 0 },
    'medium',
    'The most incremental fetch sessions (KIP-227) kept at once; 0 = none (every Fetch is sessionless). One cache (Kafka splits it into 8 shards, each with an eighth of the slots).',
  ),
  longKey(
    'min.incremental.fetch.session.eviction.ms',
    120000,
    { min: 0 },
    'low',
    'How long an incremental fetch session is kept from eviction by a new session: one unused for longer is evicted first, and one older than this when last used may be evicted for a larger one. Topograph only (Kafka fixes it at 120000).',
  ),
  listKey(
    'log.cleanup.policy',
    ['delete'],
    { allowEmptyList: true, allowed: ['compact', 'delete'] },
    'compact, delete; may be empty (keep everything)',
    'medium',
    'Default cleanup.policy of topics.',
  ),
  optionalNumberKey(
    'log.retention.ms',
    'long',
    { min: -1 },
    'high',
    'Default retention.ms of topics; wins over log.retention.minutes and log.retention.hours. -1 = no limit.',
  ),
  optionalNumberKey(
    'log.retention.minutes',
    'int',
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
  optionalNumberKey(
    'log.roll.ms',
    'long',
    {},
    'high',
    'Default segment.ms of topics; wins over log.roll.hours.',
  ),
  intKey(
    'log.roll.hours',
    168,
    { min: 1 },
    'high',
    'Default segment age before a new segment is started, in hours.',
  ),
  optionalNumberKey(
    'log.roll.jitter.ms',
    'long',
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
    'min.insync.replicas',
    1,
    { min: 1 },
    'high',
    'Default min.insync.replicas of topics. With one broker every partition has one replica, and an acks=all write needs only it: Kafka caps the minimum at the replica count.',
  ),
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
  optionalNumberKey(
    'log.flush.interval.ms',
    'long',
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

  // --- Transactions (docs/transactions.md) ---------------------------------------------------------
  intKey(
    'transaction.state.log.num.partitions',
    50,
    { min: 1 },
    'high',
    'Number of transaction coordinator shards. A transactional id lives in shard abs(hashCode(transactionalId)) % n, with Java String.hashCode; do not change it once transactional ids exist.',
  ),
  intKey(
    'transaction.state.log.segment.bytes',
    104857600,
    { min: 1 },
    'high',
    'segment.bytes of __transaction_state when a Metadata request creates it (the coordinator keeps its records in the coordinator store, not in that topic).',
  ),
  intKey(
    'transaction.max.timeout.ms',
    900000,
    { min: 1 },
    'high',
    'Largest transaction timeout a producer may ask for; InitProducerId with a larger one answers INVALID_TRANSACTION_TIMEOUT.',
  ),
  intKey(
    'transactional.id.expiration.ms',
    604800000,
    { min: 1 },
    'high',
    'A transactional id with no transaction in progress and no update for this long is removed.',
  ),
  intKey(
    'transaction.abort.timed.out.transaction.cleanup.interval.ms',
    10000,
    { min: 1 },
    'low',
    'How often transactions open longer than their timeout are aborted.',
  ),
  intKey(
    'transaction.remove.expired.transaction.cleanup.interval.ms',
    3600000,
    { min: 1 },
    'low',
    'How often expired transactional ids are removed.',
  ),
  intKey(
    'transaction.version',
    2,
    { min: 0, max: 2 },
    'medium',
    'The finalized transaction.version feature level ApiVersions reports (KIP-890): 2 makes every EndTxn bump the epoch and lets Produce v12+ and TxnOffsetCommit v5+ add partitions to the transaction implicitly; 0 and 1 keep the original protocol (1 writes the transaction log value at version 1). Kafka sets it with kafka-features; Topograph only as a configuration key.',
  ),

  // --- Share coordinator's topic (docs/data-plane.md, auto-creation) --------------------------------
  intKey(
    'share.coordinator.state.topic.num.partitions',
    50,
    { min: 1 },
    'high',
    'Partitions of __share_group_state when a Metadata request creates it. No share coordinator runs here; the topic stays empty.',
  ),
  intKey(
    'share.coordinator.state.topic.segment.bytes',
    104857600,
    { min: 1 },
    'high',
    'segment.bytes of __share_group_state when a Metadata request creates it.',
  ),

  // --- Security (docs/security.md) -----------------------------------------------------------------
  enumKey(
    'ssl.keystore.type',
    'PEM',
    ['PEM'],
    'medium',
    'Format of the key store. Only PEM is supported (Kafka defaults to JKS). May be set per listener as listener.name.<name>.ssl.keystore.type, like every ssl.* key.',
  ),
  optionalKey(
    'ssl.keystore.location',
    'string',
    'path of a PEM file holding one private key and the certificate chain',
    'high',
    'Key store of SSL and SASL_SSL listeners: a PEM file with the private key and the certificate chain (leaf first).',
  ),
  optionalKey(
    'ssl.keystore.certificate.chain',
    'password',
    'PEM certificates (leaf first); with ssl.keystore.key, instead of ssl.keystore.location',
    'high',
    'Certificate chain in PEM, given inline.',
  ),
  optionalKey(
    'ssl.keystore.key',
    'password',
    'one PEM private key (PKCS#8, PKCS#1 or SEC1; may be encrypted)',
    'high',
    'Private key in PEM, given inline; used with ssl.keystore.certificate.chain.',
  ),
  optionalKey(
    'ssl.key.password',
    'password',
    'passphrase of an encrypted PEM private key',
    'high',
    'Passphrase of the private key when it is encrypted.',
  ),
  enumKey(
    'ssl.truststore.type',
    'PEM',
    ['PEM'],
    'medium',
    'Format of the trust store. Only PEM is supported.',
  ),
  optionalKey(
    'ssl.truststore.location',
    'string',
    'path of a PEM file of CA certificates',
    'high',
    'Certificates that client certificates are verified against (ssl.client.auth requested or required).',
  ),
  optionalKey(
    'ssl.truststore.certificates',
    'password',
    'PEM CA certificates, instead of ssl.truststore.location',
    'high',
    'Trusted certificates in PEM, given inline.',
  ),
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
    doc: 'SCRAM credentials as salted hashes, never passwords; compute entries with scramUserEntry() (docs/security.md). A credential stored with AlterUserScramCredentials for the same user and mechanism takes precedence. Topograph only.',
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
