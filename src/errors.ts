/**
 * The catalogue of local error codes: the stable `code` of every error Topograph raises that is not
 * a Kafka error (those are the protocol's ErrorCode table, carried by ApiError in
 * src/protocol/api-error.ts). docs/errors.md lists the same codes; a test keeps the two in sync.
 * Every local error is a LocalError, or one of the few subclasses that add behaviour; each takes
 * its code from here, so a code exists only once it is catalogued.
 *
 * This module imports nothing of the project, so every folder may use it.
 */
export const LOCAL_ERROR_CODES = {
  // The runtime (CoordinatorRuntimeError); each names the Kafka error it is answered with.
  COORDINATOR_WRITE_FAILED: "The store did not accept a write operation's records: nothing was applied.",
  COORDINATOR_LOADING: 'The shard is still loading.',
  COORDINATOR_NOT_ACTIVE: 'The runtime is closing or closed, or the shard is not hosted here or failed.',
  COORDINATOR_SHARD_FAILED:
    'Replaying a record failed: the shard no longer matches its log and stopped serving.',
  COORDINATOR_WRITE_TIMEOUT:
    'A write operation did not complete within its write timeout (it may complete later).',
  COORDINATOR_INVALID_ARGUMENT:
    'A caller or an operation handed the runtime something it cannot use (a bug).',
  // The record stores (StorageError).
  STORAGE_NOT_OPEN: 'The store was used before open() or after close().',
  STORAGE_INVALID_ARGUMENT: 'A shard id or record that is not valid.',
  STORAGE_WRITE_FAILED: 'The engine could not write; nothing of the batch was written.',
  STORAGE_READ_FAILED: 'The engine could not read a shard.',
  STORAGE_OPEN_FAILED: 'The data directory is used by another process, or its file cannot be opened.',
  STORAGE_INJECTED_FAILURE: 'failNextAppend() made this append fail (tests).',
  // The streams assignors.
  ASSIGNOR_INVALID_CONFIG: 'A group.streams.assignors value Kafka would reject (ConfigException).',
  TASK_ASSIGNOR_FAILED: 'An assignor could not compute an assignment (Kafka TaskAssignorException).',
  // The consumer group assignors.
  PARTITION_ASSIGNOR_FAILED:
    'A consumer group assignor could not compute an assignment (Kafka PartitionAssignorException).',
  // The group coordinator service's group config log.
  GROUP_CONFIG_RECORD_INVALID: 'A group config record that cannot be written (a field too long) or read.',
  // The transaction coordinator shard.
  TXN_ILLEGAL_TRANSITION: 'A transaction state transition the state table forbids (a bug in the shard).',
  TXN_UNKNOWN_STATUS: 'A transaction record with a status no state has (corrupt or foreign): replay fails.',
  // The server's own logs and files.
  ACL_RECORD_INVALID: 'An ACL record that cannot be written (a field too long) or read.',
  TOPIC_RECORD_INVALID: "The topic catalog's log holds a record this version cannot read.",
  CLUSTER_IDENTITY_INVALID: 'The data directory holds a meta.properties this server cannot use.',
  CLIENT_QUOTA_RECORD_INVALID: 'A stored client quota record the replay cannot read.',
  SCRAM_RECORD_INVALID: 'A SCRAM credential record that cannot be written (a field too long) or read.',
  // Configuration, plugins and the command line.
  CONFIG_INVALID:
    'A configuration that cannot be honoured (ConfigError names the key, when one is at fault).',
  PLUGIN_LOAD_FAILED:
    'A plugin that cannot be loaded or configured (PluginLoadError names the key and value).',
  CLI_USAGE: 'A command line that cannot be understood: the CLI prints the usage and exits 2.',
} as const

export type LocalErrorCode = keyof typeof LOCAL_ERROR_CODES

/**
 * An error that stays inside the process (a log line, a failed start, an exception of the embedding
 * API): a catalogued `code` and, where it wraps another failure, a `cause`. Nothing answers a
 * client with it directly; the one translation per caller (the coordinator service's
 * toKafkaErrorCode, the router) turns what reaches a request into a Kafka error.
 */
export class LocalError extends Error {
  override name = 'LocalError'
  readonly code: LocalErrorCode

  constructor(code: LocalErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
  }
}

/** Whether `e` is a LocalError, with this code when one is given. */
export function isLocalError(e: unknown, code?: LocalErrorCode): e is LocalError {
  return e instanceof LocalError && (code === undefined || e.code === code)
}
