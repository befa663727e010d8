import { LocalError, type LocalErrorCode } from '../../errors.js'
import { type CoordinatorRecord, isLaidOut, type LaidOutRecord } from './types.js'

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

/**
 * Throws unless every record has a Uint8Array key and a Uint8Array or null value. A record that
 * tells where its bytes lie ({@link LaidOutRecord}) is checked by that, without reading its key and
 * value (which it may make only when read).
 */
export function checkRecords(records: readonly { readonly key: unknown; readonly value: unknown }[]): void {
  if (!Array.isArray(records)) {
    throw new StorageError('STORAGE_INVALID_ARGUMENT', 'records must be an array')
  }
  for (let i = 0; i < records.length; i++) {
    const r = records[i]
    if (r === null || typeof r !== 'object') {
      throw new StorageError('STORAGE_INVALID_ARGUMENT', `record ${i} is not an object`)
    }
    if (isLaidOut(r as CoordinatorRecord)) {
      checkLayout(r as LaidOutRecord, i)
      continue
    }
    if (!(r.key instanceof Uint8Array)) {
      throw new StorageError('STORAGE_INVALID_ARGUMENT', `record ${i}: key must be a Uint8Array`)
    }
    if (r.value !== null && !(r.value instanceof Uint8Array)) {
      throw new StorageError('STORAGE_INVALID_ARGUMENT', `record ${i}: value must be a Uint8Array or null`)
    }
  }
}

function checkLayout(r: LaidOutRecord, i: number): void {
  const { bytes, offset, keyLength, valueLength } = r
  if (
    !(bytes instanceof Uint8Array) ||
    !Number.isSafeInteger(offset) ||
    !Number.isSafeInteger(keyLength) ||
    !Number.isSafeInteger(valueLength) ||
    offset < 0 ||
    keyLength < 0 ||
    valueLength < -1 ||
    offset + keyLength + Math.max(0, valueLength) > bytes.byteLength
  ) {
    throw new StorageError(
      'STORAGE_INVALID_ARGUMENT',
      `record ${i}: its key and value must lie within its bytes (offset ${offset}, key ${keyLength}, value ${valueLength}, ${bytes?.byteLength} bytes)`,
    )
  }
}

export function injectedFailure(): StorageError {
  return new StorageError('STORAGE_INJECTED_FAILURE', 'append failed (injected by failNextAppend)')
}
