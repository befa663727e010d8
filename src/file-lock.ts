/**
 * An exclusive lock on a file, held by this process until released or until the process ends
 * (kill -9 included): a connection to the file (an empty SQLite database) opens a transaction with
 * `BEGIN EXCLUSIVE` and never ends it while the lock is held; SQLite takes an exclusive OS file lock
 * for it, so a second process, or a second holder in this one, fails at once with SQLITE_BUSY. The
 * operating system drops the lock with the process, so a crash leaves no stale lock behind.
 *
 * Used wherever two servers on one directory would corrupt each other: the coordinator's SQLite
 * store (`coordinator.lock` in data.dir) and every partition log directory (`.lock`, as Kafka
 * locks its log directories).
 */
import Database from 'better-sqlite3'

/** A held lock. */
export interface FileLock {
  readonly file: string
  /** Drops the lock (idempotent). */
  release(): void
}

/** The file is locked by another holder (another process, or another holder in this one). */
export class FileLockBusyError extends Error {
  readonly file: string
  constructor(file: string, options?: ErrorOptions) {
    super(`${file} is locked by another process`, options)
    this.name = 'FileLockBusyError'
    this.file = file
  }
}

/**
 * Takes the lock on `file` (created if missing) without waiting. Throws FileLockBusyError when it
 * is held elsewhere, or the open error when the file cannot be opened.
 */
export function acquireFileLock(file: string): FileLock {
  let db: Database.Database | undefined
  try {
    db = new Database(file, { timeout: 0 })
    db.exec('BEGIN EXCLUSIVE')
  } catch (cause) {
    db?.close()
    if ((cause as { code?: unknown }).code === 'SQLITE_BUSY') throw new FileLockBusyError(file, { cause })
    throw cause
  }
  const held = db
  let open = true
  return {
    file,
    release() {
      if (!open) return
      open = false
      held.close()
    },
  }
}
