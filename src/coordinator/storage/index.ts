import { MemoryRecordStore } from './memory.js'
import { SqliteRecordStore } from './sqlite.js'
import { StorageError } from './errors.js'
import type { FaultInjection, RecordStore } from './types.js'

export type { CoordinatorRecord, FaultInjection, RecordStore } from './types.js'
export { StorageError, type StorageErrorCode } from './errors.js'
export { MemoryRecordStore } from './memory.js'
export { SQLITE_FILE_NAME, SqliteRecordStore, type SqliteRecordStoreOptions } from './sqlite.js'

/** The engines `coordinator.storage` can name. */
export type RecordStoreKind = 'sqlite' | 'memory'

/**
 * Builds the engine named by `coordinator.storage` (not opened yet). `dataDir` is `data.dir`; the
 * memory engine ignores it.
 */
export function createRecordStore(kind: RecordStoreKind, dataDir: string): RecordStore & FaultInjection {
  switch (kind) {
    case 'sqlite':
      return new SqliteRecordStore(dataDir)
    case 'memory':
      return new MemoryRecordStore()
    default:
      throw new StorageError(
        'STORAGE_INVALID_ARGUMENT',
        `coordinator.storage must be 'sqlite' or 'memory', got ${JSON.stringify(kind)}`,
      )
  }
}
