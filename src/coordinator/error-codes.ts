/**
 * The catalogue of the coordinator's local error codes: the stable `code` of every error the
 * runtime, the record stores and the assignors raise that is not a Kafka error (those are the
 * protocol's ErrorCode table, carried by the shard's ApiError). docs/errors.md lists the same codes;
 * a test keeps the two in sync. Each error class takes its codes from here, so a code exists only
 * once it is catalogued.
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
} as const

export type LocalErrorCode = keyof typeof LOCAL_ERROR_CODES
