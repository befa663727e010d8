import { MemoryRecordStore } from './memory.js'
import { PostgresRecordStore, type PostgresStoreLogger } from './postgres.js'
import { SqliteRecordStore } from './sqlite.js'
import { StorageError } from './errors.js'
import type { FaultInjection, RecordStore } from './types.js'

export type { CoordinatorRecord, FaultInjection, LatestOnly, LoadOptions, RecordStore } from './types.js'
export { StorageError, type StorageErrorCode } from './errors.js'
export { MemoryRecordStore } from './memory.js'
export {
  PostgresRecordStore,
  type PostgresRecordStoreOptions,
  type PostgresStoreLogger,
  redactPostgresUrl,
} from './postgres.js'
export { SQLITE_FILE_NAME, SqliteRecordStore, type SqliteRecordStoreOptions } from './sqlite.js'

/** The engines `coordinator.storage` can name: a PostgreSQL engine is named by its connection URL. */
export type RecordStoreKind = 'sqlite' | 'memory' | `postgres://${string}` | `postgresql://${string}`

export interface CreateRecordStoreOptions {
  /** Where an engine reports what happens to its connections (the PostgreSQL engine). */
  readonly logger?: PostgresStoreLogger
}

/**
 * Builds the engine named by `coordinator.storage` (not opened yet). `dataDir` is `data.dir`, where
 * the SQLite engine keeps its file; the others ignore it.
 */
export function createRecordStore(
  kind: RecordStoreKind,
  dataDir: string,
  options: CreateRecordStoreOptions = {},
): RecordStore & FaultInjection {
  if (typeof kind === 'string' && /^postgres(ql)?:\/\/./.test(kind)) {
    return new PostgresRecordStore(kind, { logger: options.logger })
  }
  switch (kind) {
    case 'sqlite':
      return new SqliteRecordStore(dataDir)
    case 'memory':
      return new MemoryRecordStore()
    default:
      throw new StorageError(
        'STORAGE_INVALID_ARGUMENT',
        `coordinator.storage must be 'sqlite', 'memory' or a postgres:// URL, got ${JSON.stringify(kind)}`,
      )
  }
}
