import { LocalError, type LocalErrorCode } from '../../errors.js'

/** The record stores' codes in the catalogue of local error codes (src/errors.ts). */
export type StorageErrorCode = Extract<LocalErrorCode, `STORAGE_${string}`>

/**
 * A record store's failure. Its own type because the runtime acts on it: a failed append fails
 * exactly the operations of that write, and STORAGE_OPEN_FAILED (another process holds the data
 * directory) stops the server from starting.
 */
export class StorageError extends LocalError {
  declare readonly code: StorageErrorCode

  constructor(code: StorageErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(code, message, options)
    this.name = 'StorageError'
  }
}

/** Throws unless `shard` is a non-negative safe integer. */
export function checkShard(shard: number): void {
  if (!Number.isSafeInteger(shard) || shard < 0) {
    throw new StorageError(
      'STORAGE_INVALID_ARGUMENT',
      `shard must be a non-negative integer, got ${String(shard)}`,
    )
  }
}

/** Throws unless every record has a Uint8Array key and a Uint8Array or null value. */
export function checkRecords(records: readonly { readonly key: unknown; readonly value: unknown }[]): void {
  if (!Array.isArray(records)) {
    throw new StorageError('STORAGE_INVALID_ARGUMENT', 'records must be an array')
  }
  for (let i = 0; i < records.length; i++) {
    const r = records[i]
    if (r === null || typeof r !== 'object') {
      throw new StorageError('STORAGE_INVALID_ARGUMENT', `record ${i} is not an object`)
    }
    if (!(r.key instanceof Uint8Array)) {
      throw new StorageError('STORAGE_INVALID_ARGUMENT', `record ${i}: key must be a Uint8Array`)
    }
    if (r.value !== null && !(r.value instanceof Uint8Array)) {
      throw new StorageError('STORAGE_INVALID_ARGUMENT', `record ${i}: value must be a Uint8Array or null`)
    }
  }
}

export function injectedFailure(): StorageError {
  return new StorageError('STORAGE_INJECTED_FAILURE', 'append failed (injected by failNextAppend)')
}
