/**
 * The file operations of the log layer, as one narrow interface (node:fs by default; tests wrap it
 * to count calls or inject faults), and the durable small-file writes built on it.
 */
import * as nodeFs from 'node:fs'

/** The file operations the engine uses; node:fs by default, wrapped by tests to inject faults. */
export interface FileLayer {
  openSync(path: string, flags: string): number
  closeSync(fd: number): void
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number
  /** One positional write of several buffers back to back (`pwritev`); returns the bytes written. */
  writevSync(fd: number, buffers: readonly Uint8Array[], position: number): number
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number
  /** A read on libuv's threadpool (Fetch reads larger than SYNC_READ_BYTES). */
  read(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
    cb: (err: NodeJS.ErrnoException | null, bytesRead: number) => void,
  ): void
  fstatSync(fd: number): { size: number; mtimeMs: number; birthtimeMs: number }
  ftruncateSync(fd: number, len: number): void
  fsyncSync(fd: number): void
  fsync(fd: number, cb: (err: NodeJS.ErrnoException | null) => void): void
  existsSync(path: string): boolean
  mkdirSync(path: string, opts: { recursive: true }): unknown
  readdirSync(path: string): string[]
  renameSync(from: string, to: string): void
  unlinkSync(path: string): void
  rmSync(path: string, opts: { recursive: true; force: true }): void
  /** Removes a tree off the event loop; without it, rmSync. */
  rm?(
    path: string,
    opts: { recursive: true; force: true },
    cb: (err: NodeJS.ErrnoException | null) => void,
  ): void
  readFileSync(path: string): Buffer
  statfsSync?(path: string): { bsize: number; blocks: number; bavail: number }
  // The same calls on libuv's threadpool (node:fs's callback forms): what opening a partition and
  // the deferred small-file writes use, so that a topic change of thousands of partitions (four new
  // inodes each, about a millisecond apiece on a busy disk) never holds the event loop.
  open(path: string, flags: string, cb: (err: NodeJS.ErrnoException | null, fd: number) => void): void
  close(fd: number, cb: (err: NodeJS.ErrnoException | null) => void): void
  write(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
    cb: (err: NodeJS.ErrnoException | null, written: number) => void,
  ): void
  fstat(
    fd: number,
    cb: (
      err: NodeJS.ErrnoException | null,
      stats: { size: number; mtimeMs: number; birthtimeMs: number },
    ) => void,
  ): void
  mkdir(path: string, opts: { recursive: true }, cb: (err: NodeJS.ErrnoException | null) => void): void
  readdir(path: string, cb: (err: NodeJS.ErrnoException | null, names: string[]) => void): void
  unlink(path: string, cb: (err: NodeJS.ErrnoException | null) => void): void
  rename(from: string, to: string, cb: (err: NodeJS.ErrnoException | null) => void): void
  readFile(path: string, cb: (err: NodeJS.ErrnoException | null, data: Buffer) => void): void
}

export const NODE_FILE_LAYER: FileLayer = nodeFs as unknown as FileLayer

/** A FileLayer callback call as a promise. */
export function call<T = void>(
  start: (cb: (err: NodeJS.ErrnoException | null, value: T) => void) => void,
): Promise<T> {
  return new Promise((resolvePromise, reject) =>
    start((err, value) => (err ? reject(err) : resolvePromise(value))),
  )
}

/** Writes a file atomically: temp file, fsync, rename. */
export function writeFileAtomic(fs: FileLayer, path: string, data: Uint8Array): void {
  const tmp = `${path}.tmp`
  const fd = fs.openSync(tmp, 'w')
  try {
    let pos = 0
    while (pos < data.byteLength) pos += fs.writeSync(fd, data, pos, data.byteLength - pos, pos)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(tmp, path)
}

let tmpSerial = 0

/**
 * writeFileAtomic off the event loop: the temporary file (a name of its own) is created, written,
 * fsynced, closed and renamed over `path` on libuv's threadpool. An fsync costs milliseconds, far
 * more after a burst of writes, and creating a file about one on a busy disk: a roll, or a topic
 * change that opens thousands of partitions, must not hold every connection for them.
 *
 * Writes of one path must not overtake each other: the callers order theirs (one writer, or a
 * chain), or pass `stillWanted`, asked once the file is durable: false means a newer write of
 * `path` happened meanwhile and the temporary file is removed instead. The rename after a true
 * answer runs on the threadpool too (on a busy disk a rename waits as long as a create): a caller
 * that writes `path` by other means (a close writing the index files, the cleaner's swap) first
 * makes the answer false, then waits for the write in flight.
 */
export async function writeFileAtomicLater(
  fs: FileLayer,
  path: string,
  data: Uint8Array,
  stillWanted?: () => boolean,
): Promise<void> {
  const tmp = `${path}.${++tmpSerial}.tmp`
  const fd = await call<number>((cb) => fs.open(tmp, 'w', cb))
  let durable = false
  try {
    let pos = 0
    while (pos < data.byteLength)
      pos += await call<number>((cb) => fs.write(fd, data, pos, data.byteLength - pos, pos, cb))
    await call((cb) => fs.fsync(fd, cb))
    durable = true
  } finally {
    await call((cb) => fs.close(fd, cb)).catch((e: unknown) => {
      if (durable) throw e
    })
    // A write that failed leaves no temporary file behind (one a crash leaves is removed at open).
    if (!durable) await call((cb) => fs.unlink(tmp, cb)).catch(() => {})
  }
  if (stillWanted === undefined) await call((cb) => fs.rename(tmp, path, cb))
  else await call((cb) => (stillWanted() ? fs.rename(tmp, path, cb) : fs.unlink(tmp, cb)))
}
