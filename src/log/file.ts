/**
 * The file engine: Kafka's on-disk layout (data-plane.md §12).
 *
 *   <log.dir>/<topic>-<partition>/
 *     00000000000000000000.log        batches back to back, exactly as served
 *     00000000000000000000.index      sparse offset index: int32 (offset - base) + int32 position
 *     00000000000000000000.timeindex  time index: int64 timestamp + int32 (offset - base), the
 *                                     last offset of the batch with the largest timestamp so far
 *     00000000000000000042.snapshot   producer state at offset 42 (Kafka's snapshot format)
 *     leader-epoch-checkpoint         "0\n1\n0 <start offset>\n" (epoch 0 for the partition's life)
 *     partition.metadata              "version: 0\ntopic_id: <id>\n"
 *   <log.dir>/recovery-point-offset-checkpoint, log-start-offset-checkpoint, cleaner-offset-checkpoint
 *     "0\n<n>\n<topic> <partition> <offset>\n…" (Kafka's checkpoint file format)
 *   <log.dir>/.kafka_cleanshutdown   written at clean shutdown, removed at open
 *
 * Appends are positional writes to the active segment (page cache; fsync only on flush, and in
 * the background every WRITE_BACK_BYTES, which is no flush), into
 * pages read ahead once the segment is busy (READ_AHEAD_BYTES: the file is longer than its data
 * meanwhile, by zeros, cut back at roll and close and by recovery after a crash). The
 * offset and time indexes are kept in memory as sparse arrays while a segment is active and
 * written to their files when it rolls and at clean shutdown (Kafka keeps them memory-mapped and
 * preallocated; the files here always hold exactly their entries). Indexes are never trusted after
 * an unclean shutdown past the recovery point: they are rebuilt by the recovery scan.
 *
 * Every file operation goes through a FileLayer (node:fs by default), so tests can inject
 * faults (ENOSPC, EIO) without mocking anything else.
 */
import * as nodeFs from 'node:fs'
import { join, resolve } from 'node:path'
import { acquireFileLock, type FileLock, FileLockBusyError } from '../file-lock.js'
import { call, type FileLayer, NODE_FILE_LAYER, writeFileAtomic, writeFileAtomicLater } from './file-layer.js'
import { ConcurrencyLimit } from './limit.js'
import {
  BATCH_LENGTH_OFFSET,
  type Crc32c,
  isCrcValid,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  MIN_BATCH_LENGTH,
  RECORD_BATCH_OVERHEAD,
} from './batch.js'
import { crc32c as defaultCrc32c } from './compression.js'
import { ReadBufferPool } from './read-buffers.js'
import type {
  AppendBatchInfo,
  AppendBatchSpan,
  LogStorage,
  OpenedPartition,
  PartitionStore,
  SegmentInfo,
  SegmentReplacement,
  SegmentRewrite,
  StoredBatch,
} from './storage.js'
import { segmentIndexFor, segmentInfoOf } from './storage.js'
import type { LogLogger } from './types.js'

export { type FileLayer, NODE_FILE_LAYER } from './file-layer.js'

/** A directory's names off the event loop, or null when it does not exist. */
async function readdirIfAny(fs: FileLayer, path: string): Promise<string[] | null> {
  try {
    return await call<string[]>((cb) => fs.readdir(path, cb))
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw e
  }
}

const CLEAN_SHUTDOWN = '.kafka_cleanshutdown'
/** Each log directory's lock file (Kafka's name). */
const LOCK_FILE = '.lock'
const RECOVERY_POINT_FILE = 'recovery-point-offset-checkpoint'
const LOG_START_FILE = 'log-start-offset-checkpoint'
const CLEANER_FILE = 'cleaner-offset-checkpoint'
const CHUNK = 1 << 20
/**
 * Directory trees removed at once (a deleted partition's): each removal is a run of calls on
 * libuv's threadpool (4 threads by default), which the fsyncs of flushes and checkpoints share.
 */
const REMOVE_CONCURRENCY = 4
/**
 * Deleted segments' files closed and removed at once, on libuv's threadpool. The call that drops a
 * file's last link or descriptor frees its blocks inside the system call: 550 ms for a segment of
 * 1 GiB, 140 ms for 256 MiB, on an ext4 mounted with `discard` here (the discards are issued and
 * waited for in it). One at a time, so that retention deleting many segments leaves the pool's
 * other threads to reads, read-aheads and write-backs.
 */
const DISCARD_CONCURRENCY = 1
/** The suffix a deleted segment's files take until they are removed (Kafka's). */
const DELETED_SUFFIX = '.deleted'
/** The suffix of a cleaned copy's files, after a serial, until the swap renames them in (Kafka's). */
const CLEANED_SUFFIX = '.cleaned'

/** Bytes read at a time when walking batch headers. */
const WALK_WINDOW = 16 * 1024
/**
 * The walk's window, shared by every walk: a walk is synchronous and keeps no view of it, so one
 * buffer serves every Fetch's look-up of its first batch instead of a fresh 16 KiB ArrayBuffer
 * each (V8 counts ArrayBuffer bytes towards starting a full collection). A walk started while
 * another is under way (none is today) takes a buffer of its own.
 */
const WALK_SCRATCH = new Uint8Array(WALK_WINDOW)
let walkScratchBusy = false
/**
 * The active segment's last this-many batches are known by their offsets and positions
 * ({@link RecentBatches}), so that finding the batch of an offset near the log end reads nothing.
 */
export const RECENT_BATCHES = 32

/** A batch found in a segment file: its position, base offset and size. */
interface BatchAt {
  readonly pos: number
  readonly base: number
  readonly size: number
}

/**
 * The last {@link RECENT_BATCHES} batches appended to a segment, in order: base offset, last
 * offset, position and size. A consumer at the log end looks its fetch offset up twice per batch or
 * few (a parked Fetch counting the bytes available at every append, then its read), and each
 * look-up walked batch headers through a read of the walk's window: two 16 KiB reads for batches
 * larger than the window (the one before the offset, then the one holding it). Batches appended
 * after the oldest held are all held, so an offset at or after its base is found here or nowhere.
 */
class RecentBatches {
  readonly #base = new Float64Array(RECENT_BATCHES)
  readonly #last = new Float64Array(RECENT_BATCHES)
  readonly #pos = new Float64Array(RECENT_BATCHES)
  readonly #size = new Float64Array(RECENT_BATCHES)
  /** Batches pushed so far (the newest is at (#pushed - 1) % RECENT_BATCHES). */
  #pushed = 0

  push(base: number, last: number, pos: number, size: number): void {
    const i = this.#pushed % RECENT_BATCHES
    this.#base[i] = base
    this.#last[i] = last
    this.#pos[i] = pos
    this.#size[i] = size
    this.#pushed++
  }

  /**
   * The first batch held whose last offset is ≥ `offset`, when `offset` is at or after the oldest
   * held batch's base offset and at or before the newest's last offset; null otherwise.
   */
  locate(offset: number): BatchAt | null {
    const n = Math.min(this.#pushed, RECENT_BATCHES)
    if (n === 0) return null
    const newest = this.#pushed - 1
    const slot = (k: number) => k % RECENT_BATCHES
    const oldest = newest - n + 1
    if (offset < this.#base[slot(oldest)] || offset > this.#last[slot(newest)]) return null
    // Last offsets grow with every batch; a consumer at the log end wants one of the newest.
    let k = newest
    while (k > oldest && this.#last[slot(k - 1)] >= offset) k--
    const i = slot(k)
    return { pos: this.#pos[i], base: this.#base[i], size: this.#size[i] }
  }
}
/**
 * The largest Fetch read done on the event loop; larger ones run on libuv's threadpool. 64 KiB is
 * a few batches (a consumer at the log end) and about 10–30 µs of copying from the page cache.
 */
export const SYNC_READ_BYTES = 64 * 1024
/**
 * A larger read that starts in the last TAIL_WINDOW_BYTES of a partition's active segment (a
 * consumer near the log end, or some megabytes behind it after a stall) is done at once as well,
 * up to this many bytes of such reads per turn of the event loop over every partition of the
 * storage; beyond that it goes to the threadpool. Those bytes were written lately, so the copy
 * comes from the page cache (about 0.1 ms for 300 KB), where a threadpool round trip cost
 * 0.2–2.6 ms on a 2-core machine at half load, and the consumer, later by that much at every
 * Fetch, read more at the next one: it never caught up with the log end (BENCHMARKS.md, "Tail
 * reads at once").
 */
export const TAIL_READ_BYTES = 1024 * 1024
/**
 * Pages of the active segment read ahead of its end, on libuv's threadpool, once the segment takes
 * this many bytes a second (READ_AHEAD_PACE_MS): the file is made longer than its data with
 * `ftruncate` (a hole: no disk block, as Kafka's `preallocate` does on Linux) and the hole is read,
 * which puts zeroed, clean pages in the page cache, up to READ_AHEAD_CHUNKS times this many bytes
 * past the data. An append then writes into pages already there instead of taking new ones in its
 * `writeSync`. On a VM whose host takes back the guest's free memory (virtio-balloon free page
 * reporting), the first touch of a page costs a host fault, 12–31 µs a 4 KiB page: a 16.7 KB
 * batch that extended the file into new pages cost 45–60 µs of the event loop against 7–11 µs
 * into pages read ahead (bench/log/segment-write.ts; BENCHMARKS.md, "The segment write, and the
 * consumer in its own process"). The bytes past the data are zeros: a roll and a close cut the
 * file back to its data, and recovery after a crash cuts them as it cuts a torn batch (a zero
 * header is no batch).
 */
export const READ_AHEAD_BYTES = 1024 * 1024
/**
 * How far past the data the pages are read ahead, in READ_AHEAD_BYTES: a read ahead covers
 * [data + 1 chunk, data + this many chunks), never the chunk right after the data. A read of a hole
 * keeps its new pages locked until it has zeroed them, and an append that reaches such a page waits
 * for it inside its `writeSync`. Reads that began at the data's end or at the end of the last read
 * (two chunks ahead at most) left the appends about a chunk's time (6 ms at 175 MB/s) before they
 * reached a read in flight, and the main thread waited on page locks 7–149 times a 4-s run where
 * zeroing was slow (BENCHMARKS.md, "The latency runs after the throughput phases, traced"). Three
 * chunks between the data and a read in flight give them three times as long.
 */
export const READ_AHEAD_CHUNKS = 4
/** A segment reads pages ahead while it takes READ_AHEAD_BYTES within this many milliseconds. */
export const READ_AHEAD_PACE_MS = 1000

/**
 * The active segment's data is written back to disk in the background each time this many bytes
 * were appended since the last write-back started: an fsync on libuv's threadpool, at most one in
 * flight per partition, never awaited by an append. Without it the kernel holds a segment's data
 * dirty until its age or the dirty limits say otherwise (30 s and a tenth of memory by default:
 * gigabytes), so the fsync of the flush that follows a roll wrote the whole 1 GiB segment at once,
 * 0.57–0.94 s of the disk and of CPU time on a two-vCPU machine, and the server fell behind
 * meanwhile (BENCHMARKS.md, "The roll's flush written back as the segment grows"). A write-back
 * is not a flush: it moves neither the recovery point nor what a flush counts as fsynced, and
 * `flush.messages` / `flush.ms` keep their meaning. It only leaves a flush little to write. Its
 * failure is one, though: the kernel may drop the pages it failed to write, so the partition goes
 * offline as after a failed flush.
 *
 * 4 MiB, not more: an append's write can block while its segment's fsync runs (5–19 ms with
 * write-backs of 16 MiB, whose fsyncs took about 11 ms; ext4's `data=ordered` commits the journal
 * at an fsync), and on the event loop that holds every connection. Side by side in the same
 * windows, the latency runs had 13 loop stalls in a synchronous write with a write-back in flight
 * in 18 runs at 16 MiB and 3 (all in one run, on a slow disk) in 18 at 4 MiB, for about 3.5 times
 * the fsyncs (BENCHMARKS.md, "Smaller write-backs, and appends on the threadpool while one runs").
 */
export const WRITE_BACK_BYTES = 4 * 1024 * 1024
/** The cleaner's copy of a segment is written this many bytes at a time, off the event loop. */
export const CLEAN_WRITE_BYTES = 1024 * 1024
/**
 * How far back from the end of a partition's active segment a read may start and still be done
 * at once (within TAIL_READ_BYTES a turn). A consumer that a stall of 10–25 ms (a collection, a
 * late timer) left more than 1 MiB behind read only on the threadpool, one answer at a time
 * behind read-aheads and write-back fsyncs (0–13 answers in 50 ms against 33–70 once caught up),
 * so it caught up over hundreds of milliseconds (BENCHMARKS.md, "The half-load run's first
 * second, traced"). The bytes in the window are the segment's newest: not written back yet
 * (dirty pages, which the kernel cannot drop unwritten) or written back by the last few
 * write-backs (WRITE_BACK_BYTES; the clean pages it would drop last). At half load it is about
 * 1,000 batches of 16.7 KB, 70–110 ms of appends: several times what such a stall leaves. A
 * consumer further back reads on the threadpool until it is in the window; the per-turn budget
 * holds what a read at once costs the event loop should a page have been dropped after all.
 */
export const TAIL_WINDOW_BYTES = 16 * 1024 * 1024
const EMPTY = new Uint8Array(0)

/**
 * The batches in `buf[0, got)`, read from position `at` of `seg` for `offset`, up to the last whole
 * one whose base offset is below maxOffset. The header of the batch after them, when the buffer
 * holds it, becomes the segment's readEnd.
 */
function cutRead(
  seg: FileSegment,
  offset: number,
  at: number,
  buf: Buffer,
  got: number,
  maxOffset: number,
): Uint8Array {
  let pos = 0
  let from = offset
  while (pos + RECORD_BATCH_OVERHEAD <= got) {
    const h = scanHeader(buf, pos)
    if (h.base >= maxOffset || pos + h.size > got) break
    from = h.last + 1
    pos += h.size
  }
  // The next batch's base offset, length and last offset delta are its first 27 bytes.
  if (pos + LAST_OFFSET_DELTA_OFFSET + 4 <= got) {
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
    const base = dv.getInt32(pos) * 4294967296 + dv.getUint32(pos + 4)
    const h = { size: dv.getInt32(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD }
    if (!notABatch(buf, pos, h, at + pos, seg.size))
      seg.readEnd = {
        pos: at + pos,
        base,
        size: h.size,
        from,
        last: base + dv.getInt32(pos + LAST_OFFSET_DELTA_OFFSET),
      }
  }
  return buf.subarray(0, pos)
}

export function segmentFileName(offset: number, suffix: string): string {
  return `${String(offset).padStart(20, '0')}${suffix}`
}

function parseBase(name: string, suffix: string): number | null {
  if (!name.endsWith(suffix)) return null
  const digits = name.slice(0, name.length - suffix.length)
  if (!/^\d{20}$/.test(digits)) return null
  return Number(digits)
}

const encoder = new TextEncoder()

/** Kafka's checkpoint text: version 0, count, then "<topic> <partition> <offset>" lines. */
function formatCheckpoint(entries: ReadonlyMap<string, number>): Uint8Array {
  const lines = ['0', String(entries.size)]
  for (const [tp, off] of entries) {
    const i = tp.lastIndexOf('-')
    lines.push(`${tp.slice(0, i)} ${tp.slice(i + 1)} ${off}`)
  }
  return encoder.encode(`${lines.join('\n')}\n`)
}

function parseCheckpoint(text: string): Map<string, number> {
  const out = new Map<string, number>()
  const lines = text.split('\n').filter((l) => l.length > 0)
  if (lines[0] !== '0') return out
  for (const line of lines.slice(2)) {
    const parts = line.split(' ')
    if (parts.length !== 3) continue
    const off = Number(parts[2])
    if (Number.isFinite(off)) out.set(`${parts[0]}-${parts[1]}`, off)
  }
  return out
}

/**
 * One checkpoint file's writes, in call order, off the event loop (writeFileAtomicLater). A write
 * takes the contents as of when it starts, so the changes asked while one waits join it: a
 * DeleteTopics of thousands of partitions is a write or two of the file, not one per partition.
 */
class CheckpointFile {
  readonly #fs: FileLayer
  readonly #path: string
  readonly #contents: () => Uint8Array
  #tail: Promise<void> = Promise.resolve()
  #waiting: Promise<void> | null = null

  constructor(fs: FileLayer, path: string, contents: () => Uint8Array) {
    this.#fs = fs
    this.#path = path
    this.#contents = contents
  }

  /** Settles once the file holds the contents as of this call (rejects when that write failed). */
  write(): Promise<void> {
    if (this.#waiting !== null) return this.#waiting
    const run = this.#tail.then(() => {
      this.#waiting = null
      return writeFileAtomicLater(this.#fs, this.#path, this.#contents())
    })
    this.#waiting = run
    this.#tail = run.catch(() => {})
    return run
  }

  /** Settles (never rejects) once every write asked so far ended. */
  settled(): Promise<void> {
    return this.#tail
  }
}

/** Entries in one chunk of a segment's index (IndexArrays): a power of two. */
export const INDEX_CHUNK_ENTRIES = 4096
const CHUNK_SHIFT = Math.log2(INDEX_CHUNK_ENTRIES)
const CHUNK_MASK = INDEX_CHUNK_ENTRIES - 1

/**
 * A growable pair of number arrays (sparse index entries), held in chunks of INDEX_CHUNK_ENTRIES
 * entries that are never copied. An active segment takes an entry for every batch larger than
 * index.interval.bytes; as one JS array, grown by copying into one half as large again, each index
 * became a large object whose growths each took hundreds of new pages on the event loop at once
 * (BENCHMARKS.md, "The latency runs' running stalls sampled with the kernel's stacks").
 */
export class IndexArrays {
  readonly #keys: number[][] = []
  readonly #values: number[][] = []
  #length = 0
  get length(): number {
    return this.#length
  }
  /** The longest chunk's length: never more than INDEX_CHUNK_ENTRIES. */
  get longestChunk(): number {
    let n = 0
    for (const c of this.#keys) n = Math.max(n, c.length)
    return n
  }
  push(k: number, v: number): void {
    const c = this.#length >> CHUNK_SHIFT
    if (c === this.#keys.length) {
      this.#keys.push([])
      this.#values.push([])
    }
    this.#keys[c].push(k)
    this.#values[c].push(v)
    this.#length++
  }
  key(i: number): number {
    return this.#keys[i >> CHUNK_SHIFT][i & CHUNK_MASK]
  }
  value(i: number): number {
    return this.#values[i >> CHUNK_SHIFT][i & CHUNK_MASK]
  }
  /** Index of the greatest key ≤ k, or -1. */
  floor(k: number): number {
    let lo = 0
    let hi = this.#length - 1
    let found = -1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (this.key(mid) <= k) {
        found = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    return found
  }
}

interface FileSegment {
  readonly baseOffset: number
  readonly path: string
  fd: number
  size: number
  nextOffset: number
  maxTimestamp: number
  offsetOfMaxTimestamp: number
  firstBatchTimestamp: number
  createdMs: number
  /** Offset index: (last offset of a batch, position of the batch). */
  offsets: IndexArrays
  /** Time index: (max timestamp so far, last offset of the batch holding it). */
  times: IndexArrays
  bytesSinceIndex: number
  indexDirty: boolean
  /** Bumped by every write of the index files: a deferred write renames only if it is the last. */
  indexWrites: number
  /** Size that is known to be on disk (fsynced). */
  flushedSize: number
  /** Reads in flight on the file (see read); it is closed when the last one ends. */
  readers: number
  /** The segment left the partition (deleted, replaced, closed): its file closes once unread. */
  released: boolean
  /**
   * The segment's file was deleted or replaced: the close that drops its last reference frees its
   * blocks, so it runs off the event loop (DISCARD_CONCURRENCY).
   */
  deleted: boolean
  /** The file's length when it was made longer than `size` to read pages ahead (else ≤ size). */
  preallocated: number
  /** The end of the pages read ahead (READ_AHEAD_BYTES), and whether a read ahead is in flight. */
  aheadEnd: number
  aheadBusy: boolean
  /** The segment's size and the storage clock when read ahead last looked at its pace. */
  paceSize: number
  paceAt: number
  /** The segment's size when its last write-back started (WRITE_BACK_BYTES). */
  writtenBack: number
  /** The last batches appended, while the segment is active (made by its first append). */
  recent: RecentBatches | null
  /** The batch right after the last read of the segment, or null (see afterLastRead). */
  readEnd: ReadEnd | null
}

/**
 * The batch that starts where a read of a segment stopped, when the read's buffer held its header:
 * the first batch with last offset ≥ any offset from `from` to `last`. A reader going through a
 * segment in order (a consumer catching up, the cleaner) asks for that range next, and finds its
 * first batch without reading headers.
 */
interface ReadEnd extends BatchAt {
  readonly from: number
  readonly last: number
}

/** The batch of `offset` when the segment's last read stopped just before it, else null. */
function afterLastRead(seg: FileSegment, offset: number): BatchAt | null {
  const e = seg.readEnd
  return e !== null && offset >= e.from && offset <= e.last ? e : null
}

/** The header fields a scan needs, read from a buffer. */
function scanHeader(
  buf: Uint8Array,
  pos: number,
): { base: number; size: number; last: number; maxTs: number } {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  const base = dv.getInt32(pos) * 4294967296 + dv.getUint32(pos + 4)
  const size = dv.getInt32(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD
  const last = base + dv.getInt32(pos + LAST_OFFSET_DELTA_OFFSET)
  const maxTs =
    dv.getInt32(pos + MAX_TIMESTAMP_OFFSET) * 4294967296 + dv.getUint32(pos + MAX_TIMESTAMP_OFFSET + 4)
  return { base, size, last, maxTs }
}

/**
 * Whether the header `h` read at `at` in `window` (the batch at file position `pos`) cannot start
 * a whole batch of a segment that ends at `end`: too short, cut short by the end, or not magic 2.
 */
function notABatch(window: Uint8Array, at: number, h: { size: number }, pos: number, end: number): boolean {
  return (
    h.size - LOG_OVERHEAD < MIN_BATCH_LENGTH ||
    h.size < RECORD_BATCH_OVERHEAD ||
    pos + h.size > end ||
    window[at + MAGIC_OFFSET] !== 2
  )
}

/** A batch header as a walk over a segment visits it: scanHeader's fields and its file position. */
type WalkedHeader = { base: number; size: number; last: number; maxTs: number; pos: number }

/**
 * One window of a walk over batch headers: `window` holds `n` bytes of a segment ending at `end`,
 * read from file position `pos`. Each whole batch whose header lies in it goes to `visit`, until
 * visit returns false. Returns the position of the first header not wholly in the window (where
 * the next window starts), or -1 when the walk ends here: visit said so, or the header at a
 * position cannot start a batch (told to `onBad`).
 */
function walkWindow(
  window: Uint8Array,
  n: number,
  pos: number,
  end: number,
  visit: (h: WalkedHeader) => boolean,
  onBad: (pos: number) => void,
): number {
  let at = 0
  while (at + RECORD_BATCH_OVERHEAD <= n) {
    const h = scanHeader(window, at)
    if (notABatch(window, at, h, pos + at, end)) {
      onBad(pos + at)
      return -1
    }
    if (!visit({ ...h, pos: pos + at })) return -1
    at += h.size
  }
  return pos + at
}

/**
 * How many bytes a read from batch `first` takes: up to maxBytes, at least the first batch when
 * minOneMessage; 0 when it answers nothing (the first batch at or past maxOffset, or too large).
 */
function readLength(
  seg: { readonly size: number },
  first: BatchAt,
  maxBytes: number,
  maxOffset: number,
  minOneMessage: boolean,
): number {
  if (first.base >= maxOffset) return 0
  const len = Math.min(Math.max(maxBytes, 0), seg.size - first.pos)
  if (first.size <= len) return len
  return minOneMessage ? first.size : 0
}

export interface FilePartitionSettings {
  readonly indexIntervalBytes: number
}

/**
 * Renames the files at `paths` to `<path>.deleted`, one after another on the threadpool; a file
 * that is not there is skipped. Returns the new paths.
 */
async function renameToDeleted(fs: FileLayer, paths: readonly string[]): Promise<string[]> {
  const renamed: string[] = []
  for (const p of paths) {
    try {
      await call((cb) => fs.rename(p, p + DELETED_SUFFIX, cb))
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw e
    }
    renamed.push(p + DELETED_SUFFIX)
  }
  return renamed
}

class FilePartitionStore implements PartitionStore {
  readonly #storage: FileLogStorage
  readonly #fs: FileLayer
  readonly #dir: string
  readonly #tp: string
  readonly #topicId: string
  readonly #crc32c: Crc32c
  readonly #settings: FilePartitionSettings
  #segments: FileSegment[] = []
  #closed = false
  /** A write-back (WRITE_BACK_BYTES) is in flight. */
  #writeBackBusy = false
  /**
   * The segment a cleaned copy is being swapped in for, while the swap's renames run on the
   * threadpool, and the swap itself (settled, never rejected): see replaceSegment.
   */
  #swapping: { readonly seg: FileSegment; readonly done: Promise<void> } | null = null
  /** The renames of #retire still running (settled, never rejected); null when none. */
  #retiring: Promise<void> | null = null
  /** Deferred writes of a segment's index files in flight (settled, never rejected); null when none. */
  #indexWritesInFlight: Map<FileSegment, Promise<void>> | null = null

  constructor(
    storage: FileLogStorage,
    fs: FileLayer,
    dir: string,
    tp: string,
    topicId: string,
    crc32c: Crc32c,
    settings: FilePartitionSettings,
  ) {
    this.#storage = storage
    this.#fs = fs
    this.#dir = dir
    this.#tp = tp
    this.#topicId = topicId
    this.#crc32c = crc32c
    this.#settings = settings
  }

  get dir(): string {
    return this.#dir
  }

  // ---- open and recovery ----

  async open(now: number): Promise<OpenedPartition> {
    const fs = this.#fs
    // Every file call of an opening runs on libuv's threadpool: a topic change opens thousands of
    // partitions (32 at a time), each new one four new inodes (its directory, two small files with
    // their fsyncs, the segment file), and creating an inode alone takes about a millisecond on a
    // busy disk. Only a recovery scan of existing segments reads in the caller's turn (at start).
    // A deleted partition of this name may still be being renamed away (its directory is taken out
    // off the event loop): this partition's directory is looked at only once that rename is done.
    await this.#storage.renamedAway(this.#dir)
    let names = await readdirIfAny(fs, this.#dir)
    if (names === null) {
      await this.#storage.logStartWritten(this.#tp)
      await call((cb) => fs.mkdir(this.#dir, { recursive: true }, cb))
      names = []
    }
    const isStray = (n: string) =>
      n.endsWith('.cleaned') || n.endsWith('.tmp') || n.endsWith('.deleted') || n.endsWith('.swap')
    for (const n of names) if (isStray(n)) await call((cb) => fs.unlink(join(this.#dir, n), cb))
    names = names.filter((n) => !isStray(n))
    if (!names.includes('partition.metadata')) {
      await writeFileAtomicLater(
        fs,
        join(this.#dir, 'partition.metadata'),
        encoder.encode(`version: 0\ntopic_id: ${this.#topicId}\n`),
      )
    }
    const bases = names
      .map((n) => parseBase(n, '.log'))
      .filter((b): b is number => b !== null)
      .sort((a, b) => a - b)
    const checkpointedStart = this.#storage.logStartOffsetOf(this.#tp)
    let recovered = false
    let truncatedBytes = 0
    if (bases.length === 0) {
      const base = checkpointedStart ?? 0
      const path = join(this.#dir, segmentFileName(base, '.log'))
      this.#segments.push(
        this.#newSegment(base, path, await call<number>((cb) => fs.open(path, 'w+', cb)), now),
      )
    } else {
      const clean = this.#storage.cleanShutdown
      const recoveryPoint = clean ? Number.POSITIVE_INFINITY : (this.#storage.recoveryPointOf(this.#tp) ?? 0)
      for (let i = 0; i < bases.length; i++) {
        const base = bases[i]
        const path = join(this.#dir, segmentFileName(base, '.log'))
        const fd = await call<number>((cb) => fs.open(path, 'r+', cb))
        const st = await call<{ size: number; mtimeMs: number; birthtimeMs: number }>((cb) =>
          fs.fstat(fd, cb),
        )
        const seg: FileSegment = {
          ...this.#newSegment(base, path, fd, st.birthtimeMs > 0 ? st.birthtimeMs : st.mtimeMs),
          size: st.size,
          indexDirty: false,
          flushedSize: st.size,
          paceSize: st.size,
          writtenBack: st.size,
        }
        this.#segments.push(seg)
        const nextBase = bases[i + 1]
        const mustScan =
          nextBase === undefined ? recoveryPoint < Number.POSITIVE_INFINITY : nextBase > recoveryPoint
        if (mustScan || !this.#loadIndexes(seg)) {
          const r = this.#recoverSegment(seg, !mustScan)
          if (r.truncated > 0) {
            recovered = true
            truncatedBytes += r.truncated
          }
          if (mustScan) recovered = true
          if (r.corrupt) {
            // Everything after the first invalid batch goes: later segments too.
            for (const later of bases.slice(i + 1)) {
              for (const suffix of ['.log', '.index', '.timeindex']) {
                const p = join(this.#dir, segmentFileName(later, suffix))
                if (fs.existsSync(p)) {
                  if (suffix === '.log') truncatedBytes += nodeFs.statSync(p).size
                  fs.unlinkSync(p)
                }
              }
            }
            break
          }
        }
      }
      if (!clean) this.#storage.setRecoveryPoint(this.#tp, this.logEndOffset)
    }
    // Producer snapshots: drop those past the log end, return the newest that is left. (A recovery
    // scan removes segment files only: `names` still tells the snapshots.)
    let snapshot: { offset: number; bytes: Uint8Array; aborted: Uint8Array | null } | null = null
    const snaps = names
      .map((n) => parseBase(n, '.snapshot'))
      .filter((b): b is number => b !== null)
      .sort((a, b) => b - a)
    for (const off of snaps) {
      const p = join(this.#dir, segmentFileName(off, '.snapshot'))
      const ap = join(this.#dir, segmentFileName(off, '.aborted'))
      const hasAborted = names.includes(segmentFileName(off, '.aborted'))
      if (off > this.logEndOffset) {
        await call((cb) => fs.unlink(p, cb))
        if (hasAborted) await call((cb) => fs.unlink(ap, cb))
        continue
      }
      if (snapshot === null) {
        snapshot = {
          offset: off,
          bytes: new Uint8Array(await call<Buffer>((cb) => fs.readFile(p, cb))),
          aborted: hasAborted ? new Uint8Array(await call<Buffer>((cb) => fs.readFile(ap, cb))) : null,
        }
      }
    }
    if (!names.includes('leader-epoch-checkpoint')) {
      await writeFileAtomicLater(
        fs,
        join(this.#dir, 'leader-epoch-checkpoint'),
        encoder.encode(`0\n1\n0 ${this.#segments[0].baseOffset}\n`),
      )
    }
    const logStartOffset = Math.max(checkpointedStart ?? 0, this.#segments[0].baseOffset)
    return { logStartOffset, producerSnapshot: snapshot, recovered, truncatedBytes }
  }

  #createSegment(base: number, now: number): FileSegment {
    const path = join(this.#dir, segmentFileName(base, '.log'))
    return this.#newSegment(base, path, this.#fs.openSync(path, 'w+'), now)
  }

  /** An empty segment's bookkeeping over an open file. */
  #newSegment(base: number, path: string, fd: number, createdMs: number): FileSegment {
    return {
      baseOffset: base,
      path,
      fd,
      size: 0,
      nextOffset: base,
      maxTimestamp: -1,
      offsetOfMaxTimestamp: -1,
      firstBatchTimestamp: -1,
      createdMs,
      offsets: new IndexArrays(),
      times: new IndexArrays(),
      bytesSinceIndex: 0,
      indexDirty: true,
      indexWrites: 0,
      flushedSize: 0,
      readers: 0,
      released: false,
      deleted: false,
      preallocated: 0,
      aheadEnd: 0,
      aheadBusy: false,
      paceSize: 0,
      paceAt: this.#storage.now(),
      writtenBack: 0,
      recent: null,
      readEnd: null,
    }
  }

  /**
   * Loads a segment's index files (after a clean shutdown, or below the recovery point). Reads
   * the tail after the last offset-index entry to find the segment's end. False when the files
   * are missing or do not fit the segment (then the caller rebuilds by scanning).
   */
  #loadIndexes(seg: FileSegment): boolean {
    const fs = this.#fs
    const ip = join(this.#dir, segmentFileName(seg.baseOffset, '.index'))
    const tp = join(this.#dir, segmentFileName(seg.baseOffset, '.timeindex'))
    if (!fs.existsSync(ip) || !fs.existsSync(tp)) return seg.size === 0
    const ib = fs.readFileSync(ip)
    const tb = fs.readFileSync(tp)
    if (ib.byteLength % 8 !== 0 || tb.byteLength % 12 !== 0) return false
    const idv = new DataView(ib.buffer, ib.byteOffset, ib.byteLength)
    for (let p = 0; p < ib.byteLength; p += 8) {
      const pos = idv.getInt32(p + 4)
      if (pos < 0 || pos >= seg.size) return false
      seg.offsets.push(seg.baseOffset + idv.getInt32(p), pos)
    }
    const tdv = new DataView(tb.buffer, tb.byteOffset, tb.byteLength)
    for (let p = 0; p < tb.byteLength; p += 12) {
      const ts = tdv.getInt32(p) * 4294967296 + tdv.getUint32(p + 4)
      seg.times.push(ts, seg.baseOffset + tdv.getInt32(p + 8))
    }
    if (seg.times.length > 0) {
      seg.maxTimestamp = seg.times.key(seg.times.length - 1)
      seg.offsetOfMaxTimestamp = seg.times.value(seg.times.length - 1)
    }
    // The first batch's timestamp and the end of the segment.
    if (seg.size > 0) {
      const head = new Uint8Array(RECORD_BATCH_OVERHEAD)
      if (this.#readFully(seg.fd, head, 0) < RECORD_BATCH_OVERHEAD) return false
      seg.firstBatchTimestamp = scanHeader(head, 0).maxTs
    }
    const start = seg.offsets.length > 0 ? seg.offsets.value(seg.offsets.length - 1) : 0
    let next = seg.baseOffset
    let maxTs = seg.maxTimestamp
    let maxTsOffset = seg.offsetOfMaxTimestamp
    let ok = true
    this.#walk(
      seg,
      start,
      seg.size,
      (h) => {
        next = h.last + 1
        if (h.maxTs > maxTs) {
          maxTs = h.maxTs
          maxTsOffset = h.last
        }
        return true
      },
      () => {
        ok = false
      },
    )
    if (!ok) return false
    seg.nextOffset = next
    seg.maxTimestamp = maxTs
    seg.offsetOfMaxTimestamp = maxTsOffset
    return true
  }

  #readFully(fd: number, buf: Uint8Array, position: number): number {
    let n = 0
    while (n < buf.byteLength) {
      const r = this.#fs.readSync(fd, buf, n, buf.byteLength - n, position + n)
      if (r === 0) break
      n += r
    }
    return n
  }

  /**
   * Walks batch headers of a segment from `start` to `end` (positions), calling `visit` with each
   * whole batch's header; stops when visit returns false. `onBad` is called (and the walk stops)
   * at a header that cannot be a batch or a batch cut short by the end.
   */
  #walk(
    seg: FileSegment,
    start: number,
    end: number,
    visit: (h: WalkedHeader) => boolean,
    onBad: (pos: number) => void,
  ): void {
    // Headers are read through a window of WALK_WINDOW bytes: one read serves every batch header
    // in it (an index interval of small batches is one or two reads, not one per batch).
    const scratch = walkScratchBusy ? new Uint8Array(WALK_WINDOW) : WALK_SCRATCH
    const owned = scratch === WALK_SCRATCH
    if (owned) walkScratchBusy = true
    try {
      let pos = start
      while (pos >= 0 && pos < end) {
        if (end - pos < RECORD_BATCH_OVERHEAD) {
          onBad(pos)
          return
        }
        const window = scratch.subarray(0, Math.min(WALK_WINDOW, end - pos))
        const n = this.#readFully(seg.fd, window, pos)
        if (n < RECORD_BATCH_OVERHEAD) {
          onBad(pos)
          return
        }
        pos = walkWindow(window, n, pos, end, visit, onBad)
      }
    } finally {
      if (owned) walkScratchBusy = false
    }
  }

  /**
   * Scans a segment from its start, checking every batch (framing, magic, CRC, offsets that move
   * forward) and rebuilding its indexes. At the first invalid batch the file is truncated there
   * (Kafka's LogSegment.recover). `trusted` segments (below the recovery point, index files
   * missing) are only indexed, not truncated.
   */
  #recoverSegment(seg: FileSegment, trusted: boolean): { truncated: number; corrupt: boolean } {
    seg.offsets = new IndexArrays()
    seg.times = new IndexArrays()
    seg.bytesSinceIndex = 0
    seg.maxTimestamp = -1
    seg.offsetOfMaxTimestamp = -1
    seg.firstBatchTimestamp = -1
    seg.nextOffset = seg.baseOffset
    let pos = 0
    let expectedMin = seg.baseOffset
    let buf = new Uint8Array(0)
    let bufStart = 0
    let corrupt = false
    while (pos < seg.size) {
      // Make sure the header, then the whole batch, is in `buf`.
      const need = (n: number): boolean => {
        if (pos + n > seg.size) return false
        if (pos >= bufStart && pos + n <= bufStart + buf.byteLength) return true
        const len = Math.min(Math.max(n, CHUNK), seg.size - pos)
        buf = new Uint8Array(len)
        bufStart = pos
        return this.#readFully(seg.fd, buf, pos) >= n
      }
      if (!need(RECORD_BATCH_OVERHEAD)) {
        corrupt = true
        break
      }
      const h = scanHeader(buf, pos - bufStart)
      const magic = buf[pos - bufStart + MAGIC_OFFSET]
      if (
        h.size < RECORD_BATCH_OVERHEAD ||
        magic !== 2 ||
        h.base < expectedMin ||
        h.last < h.base ||
        !need(h.size)
      ) {
        corrupt = true
        break
      }
      const view = buf.subarray(pos - bufStart, pos - bufStart + h.size)
      if (!trusted && !isCrcValid(view, 0, this.#crc32c)) {
        corrupt = true
        break
      }
      this.#index(seg, h.last, h.maxTs, pos, h.size)
      seg.nextOffset = h.last + 1
      expectedMin = h.last + 1
      pos += h.size
    }
    let truncated = 0
    if (corrupt && !trusted) {
      // Zeros at the end are pages read ahead past the data (READ_AHEAD_BYTES), not lost bytes.
      truncated = this.#endOfNonZero(seg, pos) - pos
      this.#fs.ftruncateSync(seg.fd, pos)
      seg.size = pos
      seg.preallocated = 0
      seg.flushedSize = Math.min(seg.flushedSize, pos)
    } else if (corrupt) {
      // A trusted segment that does not scan: treat like an untrusted one.
      return this.#recoverSegment(seg, false)
    }
    seg.indexDirty = true
    return { truncated, corrupt: corrupt && !trusted }
  }

  /**
   * The position after the last byte of `seg` from `from` on that is not zero (`from` when none is),
   * read backwards from the end: the zeros of pages read ahead are at most a few MiB.
   */
  #endOfNonZero(seg: FileSegment, from: number): number {
    const buf = new Uint8Array(Math.min(CHUNK, Math.max(0, seg.size - from)))
    for (let end = seg.size; end > from; end -= buf.byteLength) {
      const start = Math.max(from, end - buf.byteLength)
      const view = buf.subarray(0, end - start)
      const got = this.#readFully(seg.fd, view, start)
      for (let i = got - 1; i >= 0; i--) if (view[i] !== 0) return start + i + 1
    }
    return from
  }

  /**
   * Adds a batch to the segment's in-memory metadata and sparse indexes. A time index entry is
   * (largest timestamp so far, last offset of the batch holding it), as Kafka's LogSegment.append
   * writes it and kafka-dump-log --verify-index-only checks it.
   */
  #index(seg: FileSegment, last: number, maxTs: number, pos: number, size: number): void {
    if (seg.firstBatchTimestamp < 0 && pos === 0) seg.firstBatchTimestamp = maxTs
    if (maxTs > seg.maxTimestamp) {
      seg.maxTimestamp = maxTs
      seg.offsetOfMaxTimestamp = last
    }
    if (seg.offsets.length === 0 || seg.bytesSinceIndex > this.#settings.indexIntervalBytes) {
      seg.offsets.push(last, pos)
      if (
        seg.maxTimestamp >= 0 &&
        (seg.times.length === 0 || seg.maxTimestamp > seg.times.key(seg.times.length - 1))
      ) {
        seg.times.push(seg.maxTimestamp, seg.offsetOfMaxTimestamp)
      }
      seg.bytesSinceIndex = 0
      seg.indexDirty = true
    }
    seg.bytesSinceIndex += size
  }

  // ---- the PartitionStore operations ----

  get logEndOffset(): number {
    return this.#segments[this.#segments.length - 1].nextOffset
  }

  get sizeInBytes(): number {
    let n = 0
    for (const s of this.#segments) n += s.size
    return n
  }

  segments(): readonly SegmentInfo[] {
    return this.#segments.map(segmentInfoOf)
  }

  activeSegment(): SegmentInfo {
    const seg = this.#segments[this.#segments.length - 1]
    // One literal (called before every append; a spread of segmentInfoOf's object cost more).
    return {
      baseOffset: seg.baseOffset,
      nextOffset: seg.nextOffset,
      sizeInBytes: seg.size,
      maxTimestamp: seg.maxTimestamp,
      offsetOfMaxTimestamp: seg.offsetOfMaxTimestamp,
      firstBatchTimestamp: seg.firstBatchTimestamp,
      createdMs: seg.createdMs,
      offsetIndexEntries: seg.offsets.length,
      timeIndexEntries: seg.times.length,
    }
  }

  get segmentCount(): number {
    return this.#segments.length
  }

  append(batch: Uint8Array, info: AppendBatchInfo): void {
    const seg = this.#segments[this.#segments.length - 1]
    this.#appended(seg, this.#writeAtEnd(seg, batch), batch.byteLength, info)
    this.#afterAppend(seg)
  }

  appendBatches(chunks: readonly Uint8Array[], spans: readonly AppendBatchSpan[]): void {
    const seg = this.#segments[this.#segments.length - 1]
    let pos = chunks.length === 1 ? this.#writeAtEnd(seg, chunks[0]) : this.#writeChunksAtEnd(seg, chunks)
    for (const span of spans) {
      this.#appended(seg, pos, span.size, span)
      pos += span.size
    }
    this.#afterAppend(seg)
  }

  /** Writes `bytes` after the segment's data (one positional write); returns where they start. */
  #writeAtEnd(seg: FileSegment, bytes: Uint8Array): number {
    const pos = seg.size
    let written = 0
    try {
      while (written < bytes.byteLength) {
        written += this.#fs.writeSync(seg.fd, bytes, written, bytes.byteLength - written, pos + written)
      }
    } catch (e) {
      this.#cutBack(seg, pos)
      throw e
    }
    return pos
  }

  /**
   * Writes `chunks` back to back after the segment's data, in one `pwritev` (the rest of a short
   * one chunk by chunk); returns where they start.
   */
  #writeChunksAtEnd(seg: FileSegment, chunks: readonly Uint8Array[]): number {
    const pos = seg.size
    try {
      let written = this.#fs.writevSync(seg.fd, chunks, pos)
      let at = pos
      for (const chunk of chunks) {
        const end = at + chunk.byteLength
        // The part of this chunk a short write left.
        for (let done = Math.max(0, written - (at - pos)); done < chunk.byteLength; ) {
          const n = this.#fs.writeSync(seg.fd, chunk, done, chunk.byteLength - done, at + done)
          done += n
          written += n
        }
        at = end
      }
    } catch (e) {
      this.#cutBack(seg, pos)
      throw e
    }
    return pos
  }

  /** Nothing partial stays behind a failed append: the file is cut back to `pos`. */
  #cutBack(seg: FileSegment, pos: number): void {
    // Best effort; recovery truncates a torn tail anyway.
    try {
      this.#fs.ftruncateSync(seg.fd, pos)
      seg.preallocated = 0
    } catch {
      // the partition goes offline; recovery at the next start removes the torn bytes
    }
  }

  /** The bookkeeping of a batch written at `pos`: size, next offset, recent batches, indexes. */
  #appended(seg: FileSegment, pos: number, size: number, info: AppendBatchInfo): void {
    seg.size = pos + size
    seg.nextOffset = info.lastOffset + 1
    if (seg.recent === null) seg.recent = new RecentBatches()
    seg.recent.push(info.baseOffset, info.lastOffset, pos, size)
    this.#index(seg, info.lastOffset, info.maxTimestamp, pos, size)
  }

  #afterAppend(seg: FileSegment): void {
    if (!seg.aheadBusy && seg.size + READ_AHEAD_CHUNKS * this.#storage.readAheadBytes > seg.aheadEnd)
      this.#readAhead(seg)
  }

  /**
   * Reads the pages past the active segment's data ahead, on libuv's threadpool (READ_AHEAD_BYTES),
   * when the segment took a chunk's worth within READ_AHEAD_PACE_MS: from one chunk past the data
   * up to READ_AHEAD_CHUNKS past it, so that chunks are read well before the appends reach them,
   * and never the pages the next appends write into (see READ_AHEAD_CHUNKS). The file is made
   * longer first (a hole) where the read would pass its end; only ever longer than the data, and
   * here, in the caller's turn, so that no write of data can be ordered before it. The read's
   * bytes are not used: reading a hole leaves zeroed pages in the page cache, which the appends
   * then write into. A read racing a write of the same page, or a roll cutting the file back,
   * changes nothing in the file. The segment is pinned while the read is in flight.
   */
  #readAhead(seg: FileSegment): void {
    const chunk = this.#storage.readAheadBytes
    if (chunk <= 0 || seg.size - seg.paceSize < chunk) return
    const now = this.#storage.now()
    const atPace = now - seg.paceAt <= READ_AHEAD_PACE_MS
    seg.paceSize = seg.size
    seg.paceAt = now
    if (!atPace) return
    const from = Math.max(seg.aheadEnd, seg.size + chunk)
    const to = seg.size + READ_AHEAD_CHUNKS * chunk
    if (to > seg.preallocated) {
      try {
        this.#fs.ftruncateSync(seg.fd, to)
      } catch {
        // Only a hint: the append it follows is done, and the file is as long as it was.
        return
      }
      seg.preallocated = to
    }
    seg.aheadBusy = true
    seg.readers++
    this.#fs.read(seg.fd, this.#storage.readAheadScratch(to - from), 0, to - from, from, (err) => {
      seg.aheadBusy = false
      if (err === null) seg.aheadEnd = Math.max(seg.aheadEnd, to)
      try {
        this.#unpin(seg)
      } catch {
        // a segment let go meanwhile: a failure to close it is no storage fault
      }
    })
  }

  /**
   * Starts a write-back of the active segment (WRITE_BACK_BYTES) once it took `writeBackBytes`
   * since the last one started and none is in flight; null when it starts none. The segment is
   * pinned meanwhile, so retention, DeleteRecords or a close let its file go only after the fsync
   * ends; a failure on a segment that left the partition meanwhile is no storage fault.
   */
  writeBack(): Promise<void> | null {
    const bytes = this.#storage.writeBackBytes
    if (bytes <= 0 || this.#writeBackBusy || this.#closed || this.#segments.length === 0) return null
    const seg = this.#segments[this.#segments.length - 1]
    if (seg.size - seg.writtenBack < bytes) return null
    seg.writtenBack = seg.size
    this.#writeBackBusy = true
    seg.readers++
    return new Promise((resolvePromise, reject) =>
      this.#fs.fsync(seg.fd, (err) => {
        this.#writeBackBusy = false
        const live = this.#segments.includes(seg) && !this.#closed
        try {
          this.#unpin(seg)
        } catch {
          // a segment let go meanwhile: a failure to close it is no storage fault
        }
        if (err !== null && live) reject(err)
        else resolvePromise()
      }),
    )
  }

  /** Cuts the file back to its data when it was made longer to read pages ahead. */
  #trim(seg: FileSegment): void {
    if (seg.preallocated <= seg.size) return
    this.#fs.ftruncateSync(seg.fd, seg.size)
    seg.preallocated = 0
  }

  roll(now: number): void {
    const active = this.#segments[this.#segments.length - 1]
    if (active.size === 0) return
    // A rolled segment holds its data only: recovery trusts the segments below the recovery point.
    this.#trim(active)
    // The index files of the segment rolled out are written by the next flush (the log flushes
    // right after a roll), their fsyncs off the event loop; until then the segment is indexDirty,
    // so a close writes them, and a crash before leaves the segment to be re-indexed at open.
    this.#finalTimeEntry(active)
    active.indexDirty = true
    active.recent = null
    this.#segments.push(this.#createSegment(active.nextOffset, now))
  }

  /** The last time entry with the segment's max timestamp, as Kafka adds at roll. */
  #finalTimeEntry(seg: FileSegment): void {
    if (seg.maxTimestamp < 0) return
    const n = seg.times.length
    if (n === 0 || seg.times.key(n - 1) < seg.maxTimestamp)
      seg.times.push(seg.maxTimestamp, seg.offsetOfMaxTimestamp)
  }

  /** Writes a segment's index files; `final` adds a last time entry with its max timestamp (as Kafka at roll). */
  #writeIndexFiles(seg: FileSegment, final: boolean): void {
    if (final) this.#finalTimeEntry(seg)
    if (!seg.indexDirty && !final) return
    const { ib, tb } = this.#indexBytes(seg)
    seg.indexWrites++
    writeFileAtomic(this.#fs, join(this.#dir, segmentFileName(seg.baseOffset, '.index')), ib)
    writeFileAtomic(this.#fs, join(this.#dir, segmentFileName(seg.baseOffset, '.timeindex')), tb)
    seg.indexDirty = false
  }

  /** writeIndexFiles of a segment no longer active, the fsyncs off the event loop (writeFileAtomicLater). */
  async #writeIndexFilesLater(seg: FileSegment): Promise<void> {
    const { ib, tb } = this.#indexBytes(seg)
    const write = ++seg.indexWrites
    // Not when a newer write of them happened (a close, the cleaner's swap) or the segment is gone.
    // A close or a swap makes this false, then waits for the write (#indexWritesSettled).
    const current = () =>
      seg.indexWrites === write &&
      this.#segments.includes(seg) &&
      this.#swapping?.seg !== seg &&
      !this.#closed
    const writing = Promise.all([
      writeFileAtomicLater(this.#fs, join(this.#dir, segmentFileName(seg.baseOffset, '.index')), ib, current),
      writeFileAtomicLater(
        this.#fs,
        join(this.#dir, segmentFileName(seg.baseOffset, '.timeindex')),
        tb,
        current,
      ),
    ])
    const inFlight = (this.#indexWritesInFlight ??= new Map())
    // An earlier write of the segment's may still be renaming: the entry waits for both.
    const settled = Promise.allSettled([inFlight.get(seg), writing]).then(() => {})
    inFlight.set(seg, settled)
    try {
      await writing
    } finally {
      // A later write of the segment's may have taken the entry meanwhile.
      if (inFlight.get(seg) === settled) inFlight.delete(seg)
      if (inFlight.size === 0 && this.#indexWritesInFlight === inFlight) this.#indexWritesInFlight = null
    }
    if (current()) seg.indexDirty = false
  }

  /** Settles once the deferred index writes in flight (of `seg`, or of every segment) have ended. */
  async #indexWritesSettled(seg?: FileSegment): Promise<void> {
    const inFlight = this.#indexWritesInFlight
    if (inFlight === null) return
    if (seg !== undefined) await inFlight.get(seg)
    else await Promise.all(inFlight.values())
  }

  /** The bytes of a segment's offset and time index files. */
  #indexBytes(seg: FileSegment): { ib: Uint8Array; tb: Uint8Array } {
    const ib = new Uint8Array(seg.offsets.length * 8)
    const idv = new DataView(ib.buffer)
    for (let i = 0; i < seg.offsets.length; i++) {
      idv.setInt32(i * 8, seg.offsets.key(i) - seg.baseOffset)
      idv.setInt32(i * 8 + 4, seg.offsets.value(i))
    }
    const tb = new Uint8Array(seg.times.length * 12)
    const tdv = new DataView(tb.buffer)
    for (let i = 0; i < seg.times.length; i++) {
      const ts = seg.times.key(i)
      const hi = Math.floor(ts / 4294967296)
      tdv.setInt32(i * 12, hi)
      tdv.setUint32(i * 12 + 4, ts - hi * 4294967296)
      tdv.setInt32(i * 12 + 8, seg.times.value(i) - seg.baseOffset)
    }
    return { ib, tb }
  }

  /** Position of the first batch in `seg` whose last offset is ≥ offset, or -1. */
  #positionOf(seg: FileSegment, offset: number): number {
    return this.#locate(seg, offset)?.pos ?? -1
  }

  /** The first batch in `seg` whose last offset is ≥ offset: its position, base offset and size; or null. */
  #locate(seg: FileSegment, offset: number): BatchAt | null {
    // Near the log end, or just after the segment's last read: no read (RecentBatches, readEnd).
    return (
      seg.recent?.locate(offset) ??
      afterLastRead(seg, offset) ??
      this.#walkTo(seg, this.#floorPosition(seg, offset), offset)
    )
  }

  /** Where the walk to the batch holding `offset` starts: the offset index's floor entry's position. */
  #floorPosition(seg: FileSegment, offset: number): number {
    const e = seg.offsets.floor(offset)
    // Entries hold (last offset of a batch, its position): the batch holding `offset` starts at
    // the entry whose last offset is ≥ offset, or after the greatest entry below it.
    return e >= 0 ? seg.offsets.value(e) : 0
  }

  /** #locate's walk from position `start`, its headers read at once. */
  #walkTo(seg: FileSegment, start: number, offset: number): BatchAt | null {
    let found: BatchAt | null = null
    this.#walk(
      seg,
      start,
      seg.size,
      (h) => {
        if (h.last >= offset) {
          found = { pos: h.pos, base: h.base, size: h.size }
          return false
        }
        return true
      },
      () => {},
    )
    return found
  }

  read(
    offset: number,
    maxBytes: number,
    maxOffset: number,
    minOneMessage: boolean,
    loans?: (() => void)[],
  ): Uint8Array | Promise<Uint8Array> {
    return this.#readFrom(
      segmentIndexFor(this.#segments, offset),
      offset,
      maxBytes,
      maxOffset,
      minOneMessage,
      loans,
    )
  }

  /** read, from the segment at index `from` on. */
  #readFrom(
    from: number,
    offset: number,
    maxBytes: number,
    maxOffset: number,
    minOneMessage: boolean,
    loans: (() => void)[] | undefined,
  ): Uint8Array | Promise<Uint8Array> {
    for (let si = from; si < this.#segments.length; si++) {
      const seg = this.#segments[si]
      if (offset >= seg.nextOffset) continue
      const active = si === this.#segments.length - 1
      // Finding the first batch reads nothing near the log end (RecentBatches) or just after the
      // segment's last read (readEnd: a reader going through it in order). Elsewhere it reads
      // headers from the offset index's floor entry, through the walk's window: at once when the
      // read is small or in the active segment's written-lately window (in the page cache), else
      // on the threadpool before the read itself, since on a busy disk one cold header read can
      // hold the event loop for tens of milliseconds.
      let first = seg.recent?.locate(offset) ?? afterLastRead(seg, offset)
      if (first === null) {
        const start = this.#floorPosition(seg, offset)
        const large = Math.min(maxBytes, seg.size - start) > SYNC_READ_BYTES
        if (large && !(active && this.#storage.inTailWindow(seg.size - start)))
          return this.#locateThenRead(seg, start, offset, maxBytes, maxOffset, minOneMessage, loans)
        first = this.#walkTo(seg, start, offset)
        if (first === null) continue
      }
      const len = readLength(seg, first, maxBytes, maxOffset, minOneMessage)
      if (len === 0) return EMPTY
      // A small read (a consumer at the log end: a batch or a few) is done at once; a large one
      // (a consumer catching up: up to fetch.max.bytes) runs on libuv's threadpool, so that the
      // event loop is not held for the copy of megabytes while Produce requests wait. The segment
      // is pinned meanwhile: retention, the cleaner's swap or a close leave its file open until
      // the read is done (an unlinked file stays readable), so the bytes are the segment's.
      // With loans, the buffer is the storage's pool's (given back by the caller).
      // A read that starts in the active segment's last 16 MiB (a consumer near the log end, or
      // catching up after a stall) is done at once too, within the turn's budget
      // (TAIL_READ_BYTES): it is in the page cache, written lately (TAIL_WINDOW_BYTES).
      const buf = this.#readBuffer(len, loans)
      const atOnce =
        len <= SYNC_READ_BYTES || (active && this.#storage.tailReadAtOnce(seg.size - first.pos, len))
      if (atOnce)
        return cutRead(seg, offset, first.pos, buf, this.#readFully(seg.fd, buf, first.pos), maxOffset)
      return this.#readLater(seg, offset, first.pos, buf, maxOffset)
    }
    return EMPTY
  }

  /** A read's buffer: the storage's pool's with loans (given back by the caller), else a new one. */
  #readBuffer(len: number, loans: (() => void)[] | undefined): Buffer {
    return loans === undefined ? Buffer.allocUnsafe(len) : this.#storage.readBuffers.lend(len, loans)
  }

  /**
   * read's large case away from the log end: the first batch found on the threadpool, then read
   * there. The segment stays pinned from the first header read to the last byte.
   */
  async #locateThenRead(
    seg: FileSegment,
    start: number,
    offset: number,
    maxBytes: number,
    maxOffset: number,
    minOneMessage: boolean,
    loans: (() => void)[] | undefined,
  ): Promise<Uint8Array> {
    seg.readers++
    try {
      const first = await this.#walkLater(seg, start, offset)
      if (first === null) {
        // No batch of the segment holds `offset` or a later one: the next segment's first does.
        const at = this.#segments.indexOf(seg)
        const next = at >= 0 ? at + 1 : segmentIndexFor(this.#segments, offset)
        return await this.#readFrom(next, offset, maxBytes, maxOffset, minOneMessage, loans)
      }
      const len = readLength(seg, first, maxBytes, maxOffset, minOneMessage)
      if (len === 0) return EMPTY
      const buf = this.#readBuffer(len, loans)
      return await this.#readLater(seg, offset, first.pos, buf, maxOffset)
    } finally {
      this.#unpin(seg)
    }
  }

  /** #walkTo on the threadpool: headers read a window at a time with fs.read. */
  #walkLater(seg: FileSegment, start: number, offset: number): Promise<BatchAt | null> {
    const window = Buffer.allocUnsafe(WALK_WINDOW)
    const end = seg.size
    return new Promise<BatchAt | null>((resolvePromise, reject) => {
      const from = (pos: number): void => {
        if (end - pos < RECORD_BATCH_OVERHEAD) {
          resolvePromise(null)
          return
        }
        this.#fs.read(seg.fd, window, 0, Math.min(WALK_WINDOW, end - pos), pos, (err, n) => {
          if (err !== null) return reject(err)
          if (n < RECORD_BATCH_OVERHEAD) return resolvePromise(null)
          let found: BatchAt | null = null
          const next = walkWindow(
            window,
            n,
            pos,
            end,
            (h) => {
              if (h.last < offset) return true
              found = { pos: h.pos, base: h.base, size: h.size }
              return false
            },
            () => {},
          )
          if (next < 0) resolvePromise(found)
          else from(next)
        })
      }
      from(start)
    })
  }

  /** read's large case: `buf` filled from `pos` off the event loop, cut at the last whole batch below maxOffset. */
  #readLater(
    seg: FileSegment,
    offset: number,
    pos: number,
    buf: Buffer,
    maxOffset: number,
  ): Promise<Uint8Array> {
    seg.readers++
    const len = buf.byteLength
    const fs = this.#fs
    return new Promise<Uint8Array>((resolvePromise, reject) => {
      const step = (got: number): void => {
        fs.read(seg.fd, buf, got, len - got, pos + got, (err, n) => {
          if (err !== null) return reject(err)
          if (n === 0 || got + n === len)
            return resolvePromise(cutRead(seg, offset, pos, buf, got + n, maxOffset))
          step(got + n)
        })
      }
      step(0)
    }).finally(() => this.#unpin(seg))
  }

  /** A read of `seg` ended: its file is closed now if it was let go meanwhile. */
  #unpin(seg: FileSegment): void {
    seg.readers--
    if (seg.readers === 0 && seg.released) {
      try {
        this.#closeFile(seg)
      } catch {
        // the segment is no longer the partition's: a failure to close it is no storage fault
      }
    }
  }

  /** Lets a segment's file go: closed at once, or by the last read still in flight on it. */
  #release(seg: FileSegment): void {
    if (seg.released) return
    seg.released = true
    if (seg.readers === 0) this.#closeFile(seg)
  }

  #closeFile(seg: FileSegment): void {
    if (seg.deleted) this.#storage.discard(seg.fd, [])
    else this.#fs.closeSync(seg.fd)
  }

  bytesFrom(offset: number): number {
    let n = 0
    for (let si = segmentIndexFor(this.#segments, offset); si < this.#segments.length; si++) {
      const seg = this.#segments[si]
      if (offset <= seg.baseOffset) n += seg.size
      else if (offset < seg.nextOffset) {
        const pos = this.#positionOf(seg, offset)
        if (pos >= 0) n += seg.size - pos
      }
    }
    return n
  }

  *batchesFrom(offset: number): Iterable<StoredBatch> {
    for (let si = segmentIndexFor(this.#segments, offset); si < this.#segments.length; si++) {
      const seg = this.#segments[si]
      if (offset >= seg.nextOffset) continue
      let pos = this.#positionOf(seg, offset)
      if (pos < 0) continue
      const end = seg.size
      while (pos < end) {
        const len = Math.min(CHUNK, end - pos)
        let buf = Buffer.allocUnsafe(len)
        const got = this.#readFully(seg.fd, buf, pos)
        let p = 0
        while (p + RECORD_BATCH_OVERHEAD <= got) {
          const h = scanHeader(buf, p)
          if (p + h.size > got) break
          yield { bytes: buf.subarray(p, p + h.size), baseOffset: h.base, lastOffset: h.last }
          p += h.size
        }
        if (p === 0) {
          // One batch larger than the chunk.
          const h = scanHeader(buf, 0)
          if (h.size <= got || pos + h.size > end) return
          buf = Buffer.allocUnsafe(h.size)
          this.#readFully(seg.fd, buf, pos)
          yield { bytes: buf, baseOffset: h.base, lastOffset: h.last }
          p = h.size
        }
        pos += p
      }
    }
  }

  timestampLookup(segmentBaseOffset: number, timestamp: number): number {
    const seg = this.#segments.find((s) => s.baseOffset === segmentBaseOffset)
    if (seg === undefined) return segmentBaseOffset
    // Entries (max timestamp so far, its offset): the greatest one below the target tells where
    // every earlier record is older than the target.
    const i = seg.times.floor(timestamp - 1)
    return i < 0 ? segmentBaseOffset : seg.times.value(i)
  }

  deleteOldestSegments(count: number): void {
    // Never the segment a cleaned copy is being swapped in for, nor any after it (the partition
    // runs no retention while it is cleaned; this holds whoever calls).
    const swapping = this.#swapping === null ? -1 : this.#segments.indexOf(this.#swapping.seg)
    const n = Math.min(count, this.#segments.length - 1, swapping < 0 ? count : swapping)
    const gone = this.#segments.splice(0, n)
    // Renamed `.deleted` as Kafka renames them, then closed and removed, all off the event loop,
    // where freeing a large file's blocks takes hundreds of milliseconds (DISCARD_CONCURRENCY). A
    // read in flight keeps the file open, and readable, until it ends. A crash before the rename
    // leaves the segment under its name (below the log start offset once that is checkpointed):
    // the next retention deletes it again. One after it leaves `.deleted` files, which opening the
    // partition removes.
    for (const seg of gone) {
      seg.deleted = true
      this.#release(seg)
    }
    this.#retire(
      gone.flatMap((seg) =>
        ['.log', '.index', '.timeindex'].map((suffix) => segmentFileName(seg.baseOffset, suffix)),
      ),
    )
    void this.#dropSnapshotsBelow(this.#segments[0].baseOffset)
  }

  /**
   * Lets files of the partition go: renamed `<name>.deleted` on the threadpool (a rename in the
   * partition's directory waits for a busy disk as long as a create does), then removed by the
   * storage off the event loop. A close and a delete of the partition wait for the renames, so
   * that none runs once the directory is renamed away or the partition opened again.
   */
  #retire(names: readonly string[]): void {
    if (names.length === 0) return
    const renaming = this.#storage.retire(names.map((n) => join(this.#dir, n)))
    const before = this.#retiring
    const all = before === null ? renaming : Promise.all([before, renaming]).then(() => {})
    this.#retiring = all
    void all.then(() => {
      if (this.#retiring === all) this.#retiring = null
    })
  }

  /** Lets the producer snapshots below `offset` go, but the newest. */
  #dropSnapshotsBelow(offset: number): Promise<void> {
    return this.#dropSnapshots((off) => off < offset)
  }

  /** Lets the producer snapshots at the offsets `doomed` tells go, but the newest (the directory read off the event loop). */
  async #dropSnapshots(doomed: (offset: number) => boolean): Promise<void> {
    let names: string[]
    try {
      names = await call<string[]>((cb) => this.#fs.readdir(this.#dir, cb))
    } catch {
      return // the partition was deleted meanwhile
    }
    if (this.#closed) return
    const snaps = names
      .map((n) => parseBase(n, '.snapshot'))
      .filter((b): b is number => b !== null)
      .sort((a, b) => b - a)
    // Keep the newest snapshot whatever its offset (it is still the state to start from). One
    // written meanwhile is newer still: the newest listed is kept all the same.
    const gone: string[] = []
    for (const off of snaps.slice(1))
      if (doomed(off)) gone.push(segmentFileName(off, '.snapshot'), segmentFileName(off, '.aborted'))
    this.#retire(gone)
  }

  async replaceSegment(baseOffset: number, rewrite: SegmentRewrite): Promise<SegmentReplacement> {
    const start = this.#segments.findIndex((s) => s.baseOffset === baseOffset)
    if (start < 0 || start === this.#segments.length - 1) return 'kept'
    const old = this.#segments[start]
    const indexPaths = ['.index', '.timeindex'].map((suffix) =>
      join(this.#dir, segmentFileName(baseOffset, suffix)),
    )
    // The copy's files have names of their own (a serial): one not swapped in is removed off the
    // event loop, where a later copy of the same segment cannot be made under its name meanwhile.
    const serial = `.${this.#storage.nextSerial()}${CLEANED_SUFFIX}`
    const cleanedPath = old.path + serial
    const cleanedIndexPaths = indexPaths.map((p) => p + serial)
    // Creating the copy can wait for the disk as long as a write can: not the cleaner's time on
    // the event loop.
    rewrite.offLoop?.before()
    const fd = await call<number>((cb) => this.#fs.open(cleanedPath, 'w+', cb))
    const seg: FileSegment = {
      ...this.#newSegment(baseOffset, old.path, fd, old.createdMs),
      nextOffset: old.nextOffset,
    }
    // The copy is written CLEAN_WRITE_BYTES at a time on libuv's threadpool: a new file's blocks
    // are allocated as it is written back, and a write into it can wait for that (or for the
    // memory to hold it) as long as the disk is slow. The batches are gathered in one of two
    // buffers while the other is written: one write in flight, awaited before the next starts.
    const stages = [Buffer.allocUnsafe(CLEAN_WRITE_BYTES), Buffer.allocUnsafe(CLEAN_WRITE_BYTES)]
    let stage = 0
    let staged = 0
    let writtenTo = 0
    let inflight: Promise<void> | null = null
    const settle = async (): Promise<void> => {
      if (inflight === null) return
      rewrite.offLoop?.before()
      try {
        await inflight
      } finally {
        inflight = null
      }
      rewrite.offLoop?.after()
    }
    const writeOut = async (bytes: Uint8Array, length: number): Promise<void> => {
      await settle()
      const at = writtenTo
      writtenTo += length
      const write = (async () => {
        let done = 0
        while (done < length)
          done += await call<number>((cb) => this.#fs.write(fd, bytes, done, length - done, at + done, cb))
      })()
      // Awaited by the next settle; a failure meanwhile is not an unhandled rejection.
      write.catch(() => {})
      inflight = write
    }
    try {
      // In the try: a log that went offline meanwhile (after() throws) lets the copy go.
      rewrite.offLoop?.after()
      for await (const b of rewrite.batches) {
        const n = b.bytes.byteLength
        if (staged > 0 && staged + n > CLEAN_WRITE_BYTES) {
          await writeOut(stages[stage], staged)
          stage ^= 1
          staged = 0
        }
        if (n > CLEAN_WRITE_BYTES) await writeOut(b.bytes, n)
        else {
          stages[stage].set(b.bytes, staged)
          staged += n
        }
        this.#index(seg, b.info.lastOffset, b.info.maxTimestamp, seg.size, n)
        seg.size += n
      }
      if (staged > 0) await writeOut(stages[stage], staged)
      await settle()
      if (seg.size === 0) {
        const idx = this.#segments.indexOf(old)
        if (idx > 0 && idx < this.#segments.length - 1) {
          this.#storage.discard(fd, [cleanedPath])
          await this.#removeSegment(old)
          return 'removed'
        }
      }
      if (!rewrite.changed()) {
        this.#storage.discard(fd, [cleanedPath])
        return 'kept'
      }
      // The copy and its index files are made durable off the event loop (an fsync on a busy
      // disk can take hundreds of milliseconds), the index files as `.cleaned` files beside it:
      // not the cleaner's time on the event loop either.
      this.#finalTimeEntry(seg)
      const { ib, tb } = this.#indexBytes(seg)
      rewrite.offLoop?.before()
      await Promise.all([
        this.#fsyncFd(fd),
        writeFileAtomicLater(this.#fs, cleanedIndexPaths[0], ib),
        writeFileAtomicLater(this.#fs, cleanedIndexPaths[1], tb),
      ])
      rewrite.offLoop?.after()
    } catch (e) {
      // A write still in flight ends before its descriptor is let go.
      await (inflight as Promise<void> | null)?.catch(() => {})
      this.#storage.discard(fd, [cleanedPath, ...cleanedIndexPaths])
      throw e
    }
    // Appends may have rolled new segments meanwhile: find the old one again.
    const idx = this.#segments.indexOf(old)
    if (idx < 0) {
      this.#storage.discard(fd, [cleanedPath, ...cleanedIndexPaths])
      return 'kept'
    }
    seg.flushedSize = seg.size
    // The segment's offsets range stays what it was even if its last batches were removed.
    seg.nextOffset = old.nextOffset
    seg.indexDirty = false
    // The old segment's index writes still in flight (a flush's) are stale from here on: their
    // renames would land on the copy's names.
    old.indexWrites++
    seg.indexWrites = old.indexWrites + 1
    // The swap, renames only, on the threadpool: a rename in the partition's directory waits for
    // a busy disk as long as a create does (hundreds of milliseconds). Meanwhile the old segment
    // serves reads from its descriptor, which a rename leaves open, and flushes, retention and a
    // close leave its files alone (#swapping). The old index files go first, so that a crash at
    // any point leaves the segment's file with its own index files or with none (rebuilt by a
    // scan at open), never with the other file's: the old file until its rename, the new one
    // after. `.cleaned` files a crash left are removed at open.
    rewrite.offLoop?.before()
    let oldIndexes: string[] = []
    let named = false
    const swap = (async () => {
      // A flush's write of the old index files, stale now, may still be renaming.
      await this.#indexWritesSettled(old)
      oldIndexes = await renameToDeleted(this.#fs, indexPaths)
      await call((cb) => this.#fs.rename(cleanedPath, old.path, cb))
      named = true
      for (const [i, p] of indexPaths.entries())
        await call((cb) => this.#fs.rename(cleanedIndexPaths[i], p, cb))
    })()
    // Settled once the segment list holds the copy (or the swap failed), not before: a close or
    // a delete that waits for it then finds the list as the swap left it.
    let swapped = () => {}
    this.#swapping = { seg: old, done: new Promise<void>((r) => (swapped = r)) }
    try {
      try {
        await swap
      } catch (e) {
        // The files are left as a crash at that point would leave them. Until the copy took the
        // segment's name it is dropped as any copy not swapped in. After, the old segment still
        // serves reads from its descriptor until the partition is next opened, and never writes
        // its index files again: they would be taken for the copy's.
        if (named) {
          old.indexDirty = false
          this.#storage.discard(fd, [])
        } else this.#storage.discard(fd, [cleanedPath, ...cleanedIndexPaths])
        throw e
      }
      // Retention, a close and a delete wait for the swap or leave the segment alone.
      this.#segments[this.#segments.indexOf(old)] = seg
      // The old file lost its name to the new one: its last close frees it.
      old.deleted = true
      this.#release(old)
      this.#storage.discard(undefined, oldIndexes)
      return 'replaced'
    } finally {
      this.#swapping = null
      swapped()
    }
  }

  /**
   * Removes a segment the cleaner left with no batch, as retention removes one, once a flush's
   * write of its index files has ended (#swapping meanwhile, as for a swap). Its index files are
   * renamed `.deleted` before its file: a crash at any point leaves the segment whole (indexes
   * missing are rebuilt by a scan at open) or gone; the next clean removes one left again. Its
   * producer snapshot goes too, but the newest.
   */
  async #removeSegment(old: FileSegment): Promise<void> {
    let removed = () => {}
    this.#swapping = { seg: old, done: new Promise<void>((r) => (removed = r)) }
    try {
      old.indexWrites++
      await this.#indexWritesSettled(old)
      const at = this.#segments.indexOf(old)
      if (at < 0) return
      this.#segments.splice(at, 1)
      old.deleted = true
      this.#release(old)
      this.#retire(['.index', '.timeindex', '.log'].map((suffix) => segmentFileName(old.baseOffset, suffix)))
      void this.#dropSnapshots((offset) => offset === old.baseOffset)
    } finally {
      this.#swapping = null
      removed()
    }
  }

  #fsyncFd(fd: number): Promise<void> {
    return new Promise((resolvePromise, reject) =>
      this.#fs.fsync(fd, (err) => (err === null ? resolvePromise() : reject(err))),
    )
  }

  setLogStartOffset(offset: number): Promise<void> {
    return this.#storage.setLogStartOffset(this.#tp, offset)
  }

  cleanerCheckpoint(): number {
    return this.#storage.readCleanerCheckpoint(this.#tp) ?? 0
  }

  setCleanerCheckpoint(offset: number): Promise<void> {
    return this.#storage.writeCleanerCheckpoint(this.#tp, offset)
  }

  async flush(): Promise<void> {
    const end = this.logEndOffset
    // Retention may delete a segment (and close its file) while this flush waits on an fsync:
    // the work on a segment that is gone is skipped, and its failure is not a storage fault.
    const live = (seg: FileSegment) => this.#segments.includes(seg)
    for (const seg of [...this.#segments]) {
      if (seg.flushedSize === seg.size || !live(seg)) continue
      const size = seg.size
      try {
        await this.#fsyncFd(seg.fd)
      } catch (e) {
        if (live(seg)) throw e
        continue
      }
      seg.flushedSize = Math.max(seg.flushedSize, size)
    }
    // Index files of rolled segments not written yet (roll leaves them to the flush).
    const active = this.#segments[this.#segments.length - 1]
    for (const seg of [...this.#segments]) {
      if (seg === active || !seg.indexDirty || this.#closed || !live(seg) || this.#swapping?.seg === seg)
        continue
      try {
        await this.#writeIndexFilesLater(seg)
      } catch (e) {
        if (live(seg)) throw e
      }
    }
    this.#storage.setRecoveryPoint(this.#tp, end)
  }

  async writeProducerSnapshot(offset: number, bytes: Uint8Array, aborted: Uint8Array): Promise<void> {
    if (this.#closed) return
    // The aborted list first: a snapshot never exists without the list that goes with it. The
    // fsyncs run off the event loop (a snapshot is taken at every roll).
    await writeFileAtomicLater(this.#fs, join(this.#dir, segmentFileName(offset, '.aborted')), aborted)
    await writeFileAtomicLater(this.#fs, join(this.#dir, segmentFileName(offset, '.snapshot')), bytes)
    if (this.#closed && this.#segments.length === 0) return
    void this.#dropSnapshotsBelow(this.#segments[0].baseOffset)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    // A cleaned copy's swap in flight, and a flush's index writes (stale now), end first: their
    // renames must not cross the index files written here.
    if (this.#swapping !== null) await this.#swapping.done
    if (this.#indexWritesInFlight !== null) await this.#indexWritesSettled()
    while (this.#retiring !== null) await this.#retiring
    let error: unknown
    for (const seg of this.#segments) {
      try {
        this.#trim(seg)
      } catch (e) {
        error ??= e
      }
      try {
        if (seg === this.#segments[this.#segments.length - 1] || seg.indexDirty)
          this.#writeIndexFiles(seg, true)
      } catch (e) {
        error ??= e
      }
      try {
        this.#release(seg)
      } catch (e) {
        error ??= e
      }
    }
    if (error !== undefined) throw error
  }

  async delete(): Promise<void> {
    if (this.#swapping !== null) await this.#swapping.done
    const open = !this.#closed
    this.#closed = true
    // Renames of deleted files still running end before the directory is renamed away: none may
    // land in a new partition of this name. (Closed, the partition starts no more.)
    while (this.#retiring !== null) await this.#retiring
    if (open) {
      for (const seg of this.#segments) {
        try {
          this.#release(seg)
        } catch {
          // already gone
        }
      }
    }
    this.#segments = []
    const forgotten = this.#storage.forget(this.#tp)
    const doomed = `${this.#dir}.${Date.now().toString(36)}-delete`
    // The directory is renamed away on the threadpool, and a new partition of this name opens only
    // once that is done (renamedAway); the tree then goes off the event loop, a few at a time: a
    // DeleteTopics of thousands of partitions must hold no connection, nor fill the threadpool's
    // queue ahead of other file work. A tree left by a crash is removed when the storage opens
    // (`-delete`); a directory a crash left under its own name, as a stray partition.
    if (await this.#storage.renameAway(this.#dir, doomed)) await this.#storage.removeTree(doomed)
    await forgotten
  }
}

export interface FileLogStorageOptions {
  readonly fs?: FileLayer
  readonly crc32c?: Crc32c
  readonly logger?: LogLogger
  /** Bytes the pool of Fetch read buffers owns at most (default READ_POOL_BYTES). */
  readonly readBufferBytes?: number
  /** Bytes of reads at once a turn, from an active segment's last tailWindowBytes (TAIL_READ_BYTES; 0: none). */
  readonly tailReadBytes?: number
  /** How far back from an active segment's end a read may start and be done at once (TAIL_WINDOW_BYTES). */
  readonly tailWindowBytes?: number
  /** Bytes of an active segment's pages read ahead at a time (READ_AHEAD_BYTES; 0: none). */
  readonly readAheadBytes?: number
  /** Bytes appended between two background write-backs of an active segment (WRITE_BACK_BYTES; 0: none). */
  readonly writeBackBytes?: number
  /** A monotonic clock in milliseconds, for the read ahead's pace (performance.now by default). */
  readonly now?: () => number
}

/** The file engine over one or more log directories. */
export class FileLogStorage implements LogStorage {
  readonly #dirs: string[]
  readonly #fs: FileLayer
  readonly #crc32c: Crc32c
  readonly #recoveryPoints: Map<string, number>[] = []
  readonly #logStarts: Map<string, number>[] = []
  /** topic-partition → directory index */
  readonly #placement = new Map<string, number>()
  #cleanShutdown = true
  #recoveryDirty = false
  /** Each directory's recovery-point and log-start-offset checkpoint files. */
  readonly #recoveryFiles: CheckpointFile[]
  readonly #logStartFiles: CheckpointFile[]
  /** Each directory's cleaner offsets (cleaner-offset-checkpoint), kept here and written off the loop. */
  readonly #cleanerOffsets: Map<string, number>[] = []
  readonly #cleanerFiles: CheckpointFile[]
  /** Deleted partitions' directories being renamed away, by path (see renameAway). */
  readonly #renaming = new Map<string, Promise<void>>()
  /** The last checkpoint() (see there). */
  #checkpoints: Promise<void> = Promise.resolve()
  /** The lock on each directory's `.lock` while the storage is open. */
  #locks: FileLock[] = []
  /** Trees being removed (at most REMOVE_CONCURRENCY) and the ones waiting for a turn. */
  readonly #trees = new ConcurrencyLimit(REMOVE_CONCURRENCY)
  /** Deleted segments' descriptors and files being closed and removed (DISCARD_CONCURRENCY). */
  readonly #discards = new ConcurrencyLimit(DISCARD_CONCURRENCY)
  #discardSerial = 0
  /** retire's renames still running. */
  readonly #retiring = new Set<Promise<void>>()
  readonly #logger: LogLogger | undefined
  /** The buffers Fetch reads of every partition borrow (see ReadOptions.loans). */
  readonly readBuffers: ReadBufferPool
  /** See TAIL_READ_BYTES. */
  readonly #tailReadBytes: number
  /** See TAIL_WINDOW_BYTES. */
  readonly #tailWindowBytes: number
  /** Bytes of tail reads still allowed at once in this turn of the event loop. */
  #tailLeft = 0
  /** A turn with tail reads is under way; it ends at the check phase. */
  #tailTurn = false
  readonly #endTailTurn = (): void => {
    this.#tailTurn = false
  }
  /** See READ_AHEAD_BYTES. */
  readonly readAheadBytes: number
  /** See WRITE_BACK_BYTES. */
  readonly writeBackBytes: number
  readonly now: () => number
  /** The buffer every read ahead reads into (its bytes are never looked at), made at first use. */
  #readAheadScratch: Uint8Array | null = null

  constructor(logDirs: readonly string[], opts: FileLogStorageOptions = {}) {
    if (logDirs.length === 0) throw new RangeError('log.dirs names no directory')
    this.#dirs = logDirs.map((d) => resolve(d))
    this.#fs = opts.fs ?? NODE_FILE_LAYER
    this.#crc32c = opts.crc32c ?? defaultCrc32c
    this.readBuffers = new ReadBufferPool(opts.readBufferBytes)
    this.#tailReadBytes = opts.tailReadBytes ?? TAIL_READ_BYTES
    this.#tailWindowBytes = opts.tailWindowBytes ?? TAIL_WINDOW_BYTES
    this.readAheadBytes = opts.readAheadBytes ?? READ_AHEAD_BYTES
    this.writeBackBytes = opts.writeBackBytes ?? WRITE_BACK_BYTES
    this.now = opts.now ?? (() => performance.now())
    this.#logger = opts.logger
    this.#recoveryFiles = this.#dirs.map(
      (dir, i) =>
        new CheckpointFile(this.#fs, join(dir, RECOVERY_POINT_FILE), () =>
          formatCheckpoint(this.#recoveryPoints[i]),
        ),
    )
    this.#logStartFiles = this.#dirs.map(
      (dir, i) =>
        new CheckpointFile(this.#fs, join(dir, LOG_START_FILE), () => formatCheckpoint(this.#logStarts[i])),
    )
    this.#cleanerFiles = this.#dirs.map(
      (dir, i) =>
        new CheckpointFile(this.#fs, join(dir, CLEANER_FILE), () =>
          formatCheckpoint(this.#cleanerOffsets[i]),
        ),
    )
  }

  get cleanShutdown(): boolean {
    return this.#cleanShutdown
  }

  /** A buffer of at least `len` bytes for reads ahead, shared by all (they write, nobody reads). */
  readAheadScratch(len: number): Uint8Array {
    if (this.#readAheadScratch === null || this.#readAheadScratch.byteLength < len)
      this.#readAheadScratch = new Uint8Array(Math.max(len, 2 * this.readAheadBytes))
    return this.#readAheadScratch
  }

  /**
   * Whether a read of `len` bytes that starts `fromEnd` bytes before the end of a partition's
   * active segment may be done at once: it starts in the window ({@link TAIL_WINDOW_BYTES}) and
   * fits what is left of this turn's budget ({@link TAIL_READ_BYTES}), which it then takes.
   * Otherwise it goes to the threadpool.
   */
  /** Whether a read `fromEnd` bytes before the active segment's end is in its written-lately window. */
  inTailWindow(fromEnd: number): boolean {
    return fromEnd <= this.#tailWindowBytes
  }

  tailReadAtOnce(fromEnd: number, len: number): boolean {
    if (!this.inTailWindow(fromEnd)) return false
    if (!this.#tailTurn) {
      this.#tailTurn = true
      this.#tailLeft = this.#tailReadBytes
      setImmediate(this.#endTailTurn)
    }
    if (len > this.#tailLeft) return false
    this.#tailLeft -= len
    return true
  }

  async open(): Promise<{ readonly cleanShutdown: boolean }> {
    const fs = this.#fs
    let clean = true
    let anyData = false
    this.#lockDirs()
    for (let i = 0; i < this.#dirs.length; i++) {
      const dir = this.#dirs[i]
      const names = fs.readdirSync(dir)
      const marker = join(dir, CLEAN_SHUTDOWN)
      const hasMarker = fs.existsSync(marker)
      const partitions = names.filter((n) => /-\d+$/.test(n))
      if (partitions.length > 0) anyData = true
      if (partitions.length > 0 && !hasMarker) clean = false
      if (hasMarker) fs.unlinkSync(marker)
      for (const n of names) {
        if (n.endsWith('-delete')) fs.rmSync(join(dir, n), { recursive: true, force: true })
      }
      for (const p of partitions) this.#placement.set(p, i)
      // Entries of partitions not on disk are a deleted partition's whose removal from the file a
      // crash cut short (forget writes it while the directory is renamed away): a new partition of
      // that name starts from nothing.
      const onDisk = new Set(partitions)
      const known = (m: Map<string, number>) => new Map([...m].filter(([tp]) => onDisk.has(tp)))
      this.#recoveryPoints[i] = known(this.#readCheckpoint(join(dir, RECOVERY_POINT_FILE)))
      this.#logStarts[i] = known(this.#readCheckpoint(join(dir, LOG_START_FILE)))
      this.#cleanerOffsets[i] = known(this.#readCheckpoint(join(dir, CLEANER_FILE)))
    }
    this.#cleanShutdown = clean || !anyData
    return { cleanShutdown: this.#cleanShutdown }
  }

  /**
   * Takes every directory's lock, as Kafka does: a second server on one of them would append to the
   * same segments, and remove the data of a partition whose directory holds a topic id it does not
   * know when it creates a topic of that name (the manager's createPartitions).
   */
  #lockDirs(): void {
    for (const dir of this.#dirs) {
      this.#fs.mkdirSync(dir, { recursive: true })
      try {
        this.#locks.push(acquireFileLock(join(dir, LOCK_FILE)))
      } catch (cause) {
        this.#releaseLocks()
        throw new Error(
          cause instanceof FileLockBusyError
            ? `Failed to acquire lock on file ${LOCK_FILE} in ${dir}. Another Topograph server is using this directory.`
            : `Failed to lock ${join(dir, LOCK_FILE)}: ${(cause as Error).message}`,
          { cause },
        )
      }
    }
  }

  #releaseLocks(): void {
    for (const lock of this.#locks) lock.release()
    this.#locks = []
  }

  #readCheckpoint(path: string): Map<string, number> {
    if (!this.#fs.existsSync(path)) return new Map()
    return parseCheckpoint(this.#fs.readFileSync(path).toString('utf8'))
  }

  /** Directory index of a partition: where its data is, else the directory with the fewest partitions. */
  dirIndexOf(topic: string, partition: number): number {
    const tp = `${topic}-${partition}`
    const known = this.#placement.get(tp)
    if (known !== undefined) return known
    if (this.#dirs.length === 1) {
      this.#placement.set(tp, 0)
      return 0
    }
    const counts = this.#dirs.map(() => 0)
    for (const i of this.#placement.values()) counts[i]++
    let best = 0
    for (let i = 1; i < counts.length; i++) if (counts[i] < counts[best]) best = i
    this.#placement.set(tp, best)
    return best
  }

  partition(
    topic: string,
    partition: number,
    topicId: string,
    settings?: FilePartitionSettings,
  ): PartitionStore {
    const tp = `${topic}-${partition}`
    const dir = join(this.#dirs[this.dirIndexOf(topic, partition)], tp)
    return new FilePartitionStore(
      this,
      this.#fs,
      dir,
      tp,
      topicId,
      this.#crc32c,
      settings ?? { indexIntervalBytes: 4096 },
    )
  }

  async storedTopicId(topic: string, partition: number): Promise<string | null> {
    const tp = `${topic}-${partition}`
    const i = this.#placement.get(tp)
    if (i === undefined) return null
    const fs = this.#fs
    let text: string
    try {
      text = (
        await call<Buffer>((cb) => fs.readFile(join(this.#dirs[i], tp, 'partition.metadata'), cb))
      ).toString('utf8')
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return null
      throw e
    }
    const m = /topic_id:\s*(\S+)/.exec(text)
    return m === null ? null : m[1]
  }

  /** Removes a directory tree off the event loop, at most REMOVE_CONCURRENCY trees at a time. */
  async removeTree(path: string): Promise<void> {
    const fs = this.#fs
    const rm = fs.rm
    if (rm === undefined) {
      fs.rmSync(path, { recursive: true, force: true })
      return
    }
    await this.#trees.run(
      () => new Promise<void>((done) => rm.call(fs, path, { recursive: true, force: true }, () => done())),
    )
  }

  /**
   * Closes a deleted segment's descriptor (when given) and removes its renamed files, off the event
   * loop (DISCARD_CONCURRENCY). Nothing waits for it: a failure leaves `.deleted` files, which the
   * partition's next opening removes, and is logged.
   */
  discard(fd: number | undefined, paths: readonly string[]): void {
    if (fd === undefined && paths.length === 0) return
    const fs = this.#fs
    void this.#discards
      .run(async () => {
        if (fd !== undefined) await call((cb) => fs.close(fd, cb))
        for (const p of paths) {
          await call((cb) => fs.unlink(p, cb)).catch((e: unknown) => {
            if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
          })
        }
      })
      .catch((e: unknown) => this.#logger?.warn({ err: e, paths }, 'could not remove a deleted segment'))
  }

  /**
   * Renames files to `<name>.deleted` on the threadpool, then removes them as discard does; a file
   * that is not there is skipped. Settles (never rejects) once the renames are done; a failure is
   * logged, and leaves the files to the partition's next opening or retention.
   */
  retire(paths: readonly string[]): Promise<void> {
    const renaming: Promise<void> = renameToDeleted(this.#fs, paths).then(
      (renamed) => {
        this.#retiring.delete(renaming)
        this.discard(undefined, renamed)
      },
      (e: unknown) => {
        this.#retiring.delete(renaming)
        this.#logger?.warn({ err: e, paths }, 'could not rename a deleted segment')
      },
    )
    this.#retiring.add(renaming)
    return renaming
  }

  /** A number for a file's name, unique in this storage's life. */
  nextSerial(): number {
    return ++this.#discardSerial
  }

  /** Settles once every file let go so far (retired or discarded) is closed and removed. */
  async discarded(): Promise<void> {
    while (this.#retiring.size > 0) await Promise.all(this.#retiring)
    await this.#discards.idle()
  }

  storedPartitions(): { readonly topic: string; readonly partition: number }[] {
    const out: { topic: string; partition: number }[] = []
    for (const dir of this.#dirs) {
      for (const name of this.#fs.readdirSync(dir)) {
        if (!/^.+-\d+$/.test(name)) continue
        const [topic, partition] = splitTp(name)
        out.push({ topic, partition })
      }
    }
    return out
  }

  recoveryPointOf(tp: string): number | undefined {
    return this.#recoveryPoints[this.dirIndexOf(...splitTp(tp))]?.get(tp)
  }

  logStartOffsetOf(tp: string): number | undefined {
    return this.#logStarts[this.dirIndexOf(...splitTp(tp))]?.get(tp)
  }

  setRecoveryPoint(tp: string, offset: number): void {
    this.#recoveryPoints[this.dirIndexOf(...splitTp(tp))].set(tp, offset)
    this.#recoveryDirty = true
  }

  /** Persists a log start offset at once (DeleteRecords and retention): settles once durable. */
  setLogStartOffset(tp: string, offset: number): Promise<void> {
    const i = this.dirIndexOf(...splitTp(tp))
    this.#logStarts[i].set(tp, offset)
    return this.#logStartFiles[i].write()
  }

  /**
   * Settles when the log-start-offset and recovery-point checkpoints of a partition's directory
   * hold no entry this server has dropped: a new partition's directory is made only then, so that
   * a crash cannot leave it next to an older partition's start offset or recovery point (see
   * forget).
   */
  logStartWritten(tp: string): Promise<void> {
    const i = this.dirIndexOf(...splitTp(tp))
    return Promise.all([
      this.#logStartFiles[i].settled(),
      this.#recoveryFiles[i].settled(),
      this.#cleanerFiles[i].settled(),
    ]).then(() => {})
  }

  /**
   * Renames a deleted partition's directory away on the threadpool; resolves whether there was one.
   * Until it settles, renamedAway(dir) waits: the name is not reused under a directory still there.
   */
  renameAway(dir: string, to: string): Promise<boolean> {
    const done = call((cb) => this.#fs.rename(dir, to, cb)).then(
      () => true,
      (e: unknown) => {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false
        throw e
      },
    )
    const settled = done.then(
      () => {},
      () => {},
    )
    this.#renaming.set(dir, settled)
    void settled.then(() => {
      if (this.#renaming.get(dir) === settled) this.#renaming.delete(dir)
    })
    return done
  }

  /** Settles once no rename of `dir` away (a deleted partition's) is in flight. */
  renamedAway(dir: string): Promise<void> {
    return this.#renaming.get(dir) ?? Promise.resolve()
  }

  /** Writes the recovery-point checkpoints (log.flush.offset.checkpoint.interval.ms, and at close). */
  checkpoint(): Promise<void> {
    // Called again with nothing new, it returns the last write (a caller waits for one in flight).
    if (!this.#recoveryDirty) return this.#checkpoints
    this.#recoveryDirty = false
    this.#checkpoints = Promise.all(this.#recoveryFiles.map((f) => f.write())).then(
      () => {},
      (e: unknown) => {
        this.#recoveryDirty = true
        throw e
      },
    )
    return this.#checkpoints
  }

  /** Cleaner offset checkpoints (where each compacted log's clean part ends). */
  readCleanerCheckpoint(tp: string): number | undefined {
    return this.#cleanerOffsets[this.dirIndexOf(...splitTp(tp))].get(tp)
  }

  /** Sets where a compacted log's clean part ends; settles once the file holds it (off the event loop). */
  writeCleanerCheckpoint(tp: string, offset: number): Promise<void> {
    const i = this.dirIndexOf(...splitTp(tp))
    this.#cleanerOffsets[i].set(tp, offset)
    return this.#cleanerFiles[i].write()
  }

  /**
   * A partition was deleted: its checkpoint entries go, the log start offset's file written off the
   * event loop (a DeleteTopics of thousands of partitions wrote and fsynced it once per partition in
   * the caller's turn). Settles once that write is durable.
   */
  forget(tp: string): Promise<void> {
    const i = this.#placement.get(tp)
    if (i === undefined) return Promise.resolve()
    const hadRecoveryPoint = this.#recoveryPoints[i].delete(tp)
    this.#placement.delete(tp)
    this.#recoveryDirty = true
    // The cleaner's entry and the recovery point go from their files now (off the event loop), not
    // at the next periodic checkpoint: a new partition of this name waits for every file
    // (logStartWritten), so that a crash never leaves it next to the old log's cleaned-up-to offset
    // (the cleaner would take the new log below it as compacted) or its recovery point (recovery
    // would not scan the new log's segments below it).
    const writes: Promise<void>[] = []
    if (this.#cleanerOffsets[i].delete(tp)) writes.push(this.#cleanerFiles[i].write())
    if (hadRecoveryPoint) writes.push(this.#recoveryFiles[i].write())
    if (this.#logStarts[i].delete(tp)) writes.push(this.#logStartFiles[i].write())
    return Promise.all(writes).then(() => {})
  }

  async dirs(): Promise<{ path: string; online: boolean; totalBytes: number; usableBytes: number }[]> {
    return this.#dirs.map((path) => {
      let totalBytes = -1
      let usableBytes = -1
      let online = true
      try {
        const st = (this.#fs.statfsSync ?? nodeFs.statfsSync)(path)
        totalBytes = st.blocks * st.bsize
        usableBytes = st.bavail * st.bsize
      } catch {
        online = this.#fs.existsSync(path)
      }
      return { path, online, totalBytes, usableBytes }
    })
  }

  metadataDir(): string | null {
    return this.#dirs[0]
  }

  lentReadBytes(): number {
    return this.readBuffers.outstandingBytes
  }

  reserveReadBytes(bytes: number): () => void {
    return this.readBuffers.reserve(bytes)
  }

  /**
   * Writes checkpoints and the clean-shutdown marker (after every partition closed). Without the
   * marker (`clean` false: a partition went offline, say on a full disk, or failed to close, so
   * its index or producer-state files may not have been written) the next open recovers every
   * partition from its recovery point, as Kafka writes no marker for a log directory that failed.
   */
  async close(options: { readonly clean?: boolean } = {}): Promise<void> {
    this.#recoveryDirty = true
    await this.checkpoint()
    await Promise.all([...this.#renaming.values()])
    await Promise.all([...this.#logStartFiles, ...this.#cleanerFiles].map((f) => f.settled()))
    await this.discarded()
    if (options.clean !== false) {
      for (const dir of this.#dirs) writeFileAtomic(this.#fs, join(dir, CLEAN_SHUTDOWN), new Uint8Array(0))
    }
    this.#releaseLocks()
  }
}

function splitTp(tp: string): [string, number] {
  const i = tp.lastIndexOf('-')
  return [tp.slice(0, i), Number(tp.slice(i + 1))]
}
