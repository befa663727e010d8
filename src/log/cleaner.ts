/**
 * The log cleaner: compaction of logs whose cleanup.policy has `compact` (data-plane.md §13).
 * Kafka: Cleaner, LogCleanerManager.
 *
 * A pass picks every log whose dirty ratio (bytes after the cleaner checkpoint / cleanable bytes)
 * reaches min.cleanable.dirty.ratio, or whose oldest dirty data is older than
 * max.compaction.lag.ms, dirtiest first, and for each:
 *
 * 1. The cleanable range ends at the first uncleanable offset: the active segment's base, the
 *    last stable offset, or the first segment with data younger than min.compaction.lag.ms,
 *    whichever comes first. Only whole segments below it are touched.
 * 2. An offset map (key → offset of its latest record) is built over the dirty segments, bounded
 *    by log.cleaner.dedupe.buffer.size (24 bytes + the key per entry); when it fills, the range
 *    ends at the last segment that fitted.
 * 3. Every segment from the log start up to the end of the range is rewritten: a record survives
 *    when no later record of its key is in the map; a tombstone survives until its batch's delete
 *    horizon (first clean time + delete.retention.ms, stamped in attribute bit 6 and
 *    baseTimestamp) has passed. Batches keep their base offset, last offset delta, producer fields
 *    and leader epoch; a batch that loses every record is dropped, unless it holds a producer's
 *    last sequence, or is the producer's last marker, or ends just below the log end (then it
 *    stays, empty, so producer state and the last offset survive a restart). Offsets never change.
 *    A batch whose records all survive keeps its bytes.
 *    Transactions, as Kafka's cleaner (CleanedTransactionMetadata): batches of aborted
 *    transactions are removed whatever their keys (and never enter the offset map: a record of an
 *    aborted transaction must not remove the committed record of its key). A marker stays while a
 *    batch of its transaction was seen in this pass (an ABORT marker: a batch of the aborted
 *    transaction, removed in this pass; a COMMIT marker: a transactional batch of the producer
 *    since its previous marker); once none was, the marker is removable: the first clean stamps
 *    it with a delete horizon (clean time + delete.retention.ms, as a tombstone) and a clean after
 *    the horizon drops it. An ABORT marker found removable also takes its transaction out of the
 *    aborted-transaction index (none of its data is left, so a read_committed Fetch no longer
 *    lists it), as Kafka's cleaner rewrites each segment's transaction index with only the aborted
 *    transactions whose marker it kept for their data.
 * 4. Each rewritten segment replaces the old one atomically (engine's replaceSegment); one left
 *    with no batch is removed instead, as retention removes a segment, unless it is the log's
 *    first (Kafka's cleaner groups segments, so its segment count follows the live data; here
 *    non-empty segments are not merged). Reads of a removed segment's offsets go on to the next
 *    batch. The index entries go (persisted with a producer snapshot at the log end when any
 *    went); the cleaner checkpoint moves to the end of the range.
 *
 * The work runs off the hot path in slices: it yields to the event loop whenever a slice has run
 * for SLICE_MS, so produce and fetch keep being served while a large segment is cleaned. The
 * segments are read through the store's `read` and the copies written by the engine, both off the
 * event loop in the file engine, so a segment the page cache no longer holds, or a slow disk, holds
 * no request. The active segment is never touched, so appends never wait for the cleaner.
 */
import { performance } from 'node:perf_hooks'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import {
  type BatchHeader,
  batchBody,
  batchSize,
  buildBatch,
  CompressionCodec,
  type Crc32c,
  codecOf,
  DELETE_HORIZON_FLAG_MASK,
  decodeRecords,
  encodeRecords,
  hasDeleteHorizon,
  isControl,
  isLogAppendTime,
  isTransactional,
  readBatchHeader,
} from './batch.js'
import { compress, decompress } from './compression.js'
import { hasCompact } from './config.js'
import type { PartitionLogImpl } from './partition-log.js'
import type { AppendBatchInfo, PartitionStore, SegmentInfo } from './storage.js'
import type { LogLogger } from './types.js'

/** Longest stretch of cleaning work between two yields to the event loop. */
export const SLICE_MS = 5

/**
 * Bytes of a segment the cleaner reads at a time. The file engine reads more than SYNC_READ_BYTES
 * on libuv's threadpool: a read of a segment the page cache no longer holds waits for the disk
 * there, not on the event loop.
 */
const SCAN_BYTES = 1 << 20

/** Told when a read went off the event loop, before and after it: the slice ends there. */
interface OffLoop {
  before(): void
  after(): void
}

/**
 * The stored batches from the one holding `from` whose base offsets are below `end`, read
 * SCAN_BYTES at a time through the store's `read` (Fetch's path): each a view of its read's
 * buffer, with its header.
 */
async function* scanBatches(
  store: PartitionStore,
  from: number,
  end: number,
  offLoop: OffLoop,
): AsyncGenerator<{ readonly bytes: Uint8Array; readonly header: BatchHeader }> {
  // The next chunk is asked for before this one's batches are handed out, so that its read runs
  // on the threadpool while they are worked on.
  let pending: Uint8Array | Promise<Uint8Array> | null = store.read(from, SCAN_BYTES, end, true)
  while (pending !== null) {
    let bytes: Uint8Array
    if (pending instanceof Promise) {
      offLoop.before()
      bytes = await pending
      offLoop.after()
    } else bytes = pending
    pending = null
    if (bytes.byteLength === 0) return
    const positions: number[] = []
    for (let pos = 0; pos < bytes.byteLength; pos += batchSize(bytes, pos)) positions.push(pos)
    const headers = positions.map((pos) => readBatchHeader(bytes, pos))
    const last = headers[headers.length - 1]
    const next = last.baseOffset + last.lastOffsetDelta + 1
    if (next < end) {
      pending = store.read(next, SCAN_BYTES, end, true)
      // A caller that stops early (the offset map full) leaves it unawaited: not an unhandled
      // rejection should it fail.
      if (pending instanceof Promise) pending.catch(() => {})
    }
    for (let i = 0; i < positions.length; i++)
      yield {
        bytes: bytes.subarray(positions[i], positions[i] + batchSize(bytes, positions[i])),
        header: headers[i],
      }
  }
}

/** Bytes Kafka counts per offset-map entry (MD5 of the key + an int64 offset). */
const ENTRY_BYTES = 24

export interface LogCleanerOptions {
  readonly logs: () => readonly PartitionLogImpl[]
  readonly crc32c: Crc32c
  readonly dedupeBufferSize: number
  readonly maxDecompressedBatchBytes: number
  readonly logger: LogLogger
}

export interface CleanStats {
  readonly topic: string
  readonly partition: number
  readonly segments: number
  /** Of them, the segments removed: left with no batch (the log's first one is kept). */
  readonly segmentsRemoved: number
  readonly bytesBefore: number
  readonly bytesAfter: number
  readonly recordsRemoved: number
  readonly cleanedUpTo: number
  /** Longest time the cleaner held the event loop (ms) during this clean. */
  readonly longestSliceMs: number
}

function keyString(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1')
}

export class LogCleaner {
  readonly #opts: LogCleanerOptions
  #running: Promise<void> | null = null
  #stopped = false
  /** What the last clean of each log did (tests and metrics). */
  readonly lastStats: CleanStats[] = []

  constructor(opts: LogCleanerOptions) {
    this.#opts = opts
  }

  /** One pass over every cleanable log. Concurrent calls share the pass in progress. */
  runOnce(now: number): Promise<void> {
    if (this.#stopped) return Promise.resolve()
    this.#running ??= this.#pass(now).finally(() => {
      this.#running = null
    })
    return this.#running
  }

  async stop(): Promise<void> {
    this.#stopped = true
    await this.#running
  }

  async #pass(now: number): Promise<void> {
    const candidates: { log: PartitionLogImpl; ratio: number }[] = []
    for (const log of this.#opts.logs()) {
      if (!log.online || !hasCompact(log.config)) continue
      const r = this.#cleanable(log, now)
      if (r !== null) candidates.push({ log, ratio: r.ratio })
    }
    candidates.sort((a, b) => b.ratio - a.ratio)
    for (const { log } of candidates) {
      if (this.#stopped) return
      try {
        const stats = await this.clean(log, now)
        if (stats !== null) {
          this.lastStats.push(stats)
          if (this.lastStats.length > 100) this.lastStats.shift()
          this.#opts.logger.info(
            { ...stats },
            `Cleaned log ${stats.topic}-${stats.partition}: ${stats.segments} segment(s) (${stats.segmentsRemoved} removed, empty), ${stats.bytesBefore} → ${stats.bytesAfter} bytes, ${stats.recordsRemoved} record(s) removed, up to offset ${stats.cleanedUpTo}`,
          )
        }
      } catch (e) {
        if (log.online) {
          this.#opts.logger.error(
            { err: e, topic: log.topic, partition: log.partition },
            `Cleaning ${log.topic}-${log.partition} failed`,
          )
        }
      }
    }
  }

  /** The cleanable segments and dirty ratio of a log, or null when it need not be cleaned now. */
  #cleanable(
    log: PartitionLogImpl,
    now: number,
  ): { segments: SegmentInfo[]; firstDirty: number; ratio: number } | null {
    const c = log.config
    const segs = log.store.segments()
    const firstDirty = Math.max(log.store.cleanerCheckpoint(), log.logStartOffset)
    const limit = log.lastStableOffset
    const cleanable: SegmentInfo[] = []
    for (let i = 0; i < segs.length - 1; i++) {
      const s = segs[i]
      const end = segs[i + 1].baseOffset
      if (end > limit) break
      if (c.minCompactionLagMs > 0 && s.maxTimestamp >= 0 && now - s.maxTimestamp < c.minCompactionLagMs)
        break
      cleanable.push(s)
    }
    if (cleanable.length === 0) return null
    let clean = 0
    let dirty = 0
    let oldestDirty = Number.POSITIVE_INFINITY
    for (let i = 0; i < cleanable.length; i++) {
      const s = cleanable[i]
      const end = segs[i + 1].baseOffset
      if (end <= firstDirty) clean += s.sizeInBytes
      else {
        dirty += s.sizeInBytes
        const ts = s.firstBatchTimestamp >= 0 ? s.firstBatchTimestamp : s.createdMs
        oldestDirty = Math.min(oldestDirty, ts)
      }
    }
    if (dirty === 0) return null
    const ratio = dirty / (clean + dirty)
    const forced = now - oldestDirty > c.maxCompactionLagMs
    if (ratio < c.minCleanableDirtyRatio && !forced) return null
    return { segments: cleanable, firstDirty, ratio }
  }

  /** Cleans one log now (steps 1-4 of the header). Null when there was nothing to clean. */
  async clean(log: PartitionLogImpl, now: number): Promise<CleanStats | null> {
    const plan = this.#cleanable(log, now)
    if (plan === null || log.cleaning) return null
    log.cleaning = true
    try {
      return await this.#clean(log, now, plan.segments, plan.firstDirty)
    } finally {
      log.cleaning = false
    }
  }

  async #clean(
    log: PartitionLogImpl,
    now: number,
    segments: SegmentInfo[],
    firstDirty: number,
  ): Promise<CleanStats> {
    const all = log.store.segments()
    const endOf = (s: SegmentInfo): number =>
      all[all.findIndex((x) => x.baseOffset === s.baseOffset) + 1].baseOffset
    let sliceStart = performance.now()
    let longest = 0
    const maybeYield = async (): Promise<void> => {
      const spent = performance.now() - sliceStart
      if (spent < SLICE_MS) return
      longest = Math.max(longest, spent)
      await yieldToLoop()
      if (!log.online) throw new Error('the log went offline while it was cleaned')
      sliceStart = performance.now()
    }
    const offLoop: OffLoop = {
      before: () => {
        longest = Math.max(longest, performance.now() - sliceStart)
      },
      after: () => {
        if (!log.online) throw new Error('the log went offline while it was cleaned')
        sliceStart = performance.now()
      },
    }

    // 2. Offset map over the dirty segments, bounded by the dedupe buffer.
    const map = new Map<string, number>()
    let mapBytes = 0
    let cleanedUpTo = firstDirty
    for (const s of segments) {
      const end = endOf(s)
      if (end <= firstDirty) continue
      const before = new Map<string, number>()
      let fits = true
      for await (const b of scanBatches(log.store, Math.max(s.baseOffset, firstDirty), end, offLoop)) {
        const h = b.header
        if (isControl(h.attributes)) continue
        // Records of aborted transactions never supersede anything: a read_committed reader
        // skips them, so the record they would replace must stay (Kafka's buildOffsetMap).
        if (isTransactional(h.attributes) && log.isAborted(h.producerId, h.baseOffset)) continue
        for (const r of this.#records(b.bytes, h)) {
          if (r.key === null) continue
          const k = keyString(r.key)
          if (!map.has(k)) {
            mapBytes += ENTRY_BYTES + k.length
            if (mapBytes > this.#opts.dedupeBufferSize) {
              fits = false
              break
            }
          }
          if (!before.has(k)) before.set(k, map.get(k) ?? -1)
          map.set(k, h.baseOffset + r.offsetDelta)
        }
        if (!fits) break
        await maybeYield()
      }
      if (!fits) {
        // Undo this segment's entries: the range ends before it.
        for (const [k, prev] of before) {
          if (prev < 0) map.delete(k)
          else map.set(k, prev)
        }
        break
      }
      cleanedUpTo = end
    }
    if (cleanedUpTo === firstDirty && firstDirty > 0 && map.size === 0) {
      return this.#stats(log, 0, 0, 0, 0, 0, cleanedUpTo, longest)
    }

    // 3. Rewrite every segment below the end of the range.
    const producerLastOffsets = new Set<number>()
    /** Producers whose last entry is a marker: producer id → epoch (that marker is kept). */
    const producerLastMarkers = new Map<number, number>()
    for (const p of log.producerStateManager.entries()) {
      const last = p.batches[p.batches.length - 1]
      if (last !== undefined) producerLastOffsets.add(last.lastOffset)
      else producerLastMarkers.set(p.producerId, p.producerEpoch)
    }
    const retention: BatchRetention = {
      producerLastOffsets,
      producerLastMarkers,
      logEndOffset: log.logEndOffset,
      transactions: new CleanedTransactions((producerId, offset) => log.isAborted(producerId, offset)),
    }
    let bytesBefore = 0
    let bytesAfter = 0
    let removed = 0
    let count = 0
    let segmentsRemoved = 0
    for (const s of segments) {
      const end = endOf(s)
      if (s.baseOffset >= cleanedUpTo) break
      let changed = false
      let written = 0
      const filter = this.#filterBatch.bind(this)
      const deleteRetentionMs = log.config.deleteRetentionMs
      // The kept batches are produced one at a time while the engine writes them: a segment is
      // never held in memory whole.
      async function* kept(): AsyncGenerator<{ bytes: Uint8Array; info: AppendBatchInfo }> {
        for await (const b of scanBatches(log.store, s.baseOffset, end, offLoop)) {
          const h = b.header
          const out = filter(b.bytes, h, map, now, deleteRetentionMs, retention)
          removed += out.removed
          if (out.bytes !== b.bytes) changed = true
          if (out.bytes !== null) {
            const same = out.bytes === b.bytes
            const oh = same ? h : readBatchHeader(out.bytes, 0)
            const bytes = same ? b.bytes.slice() : out.bytes
            written += bytes.byteLength
            yield {
              bytes,
              info: {
                baseOffset: oh.baseOffset,
                lastOffset: oh.baseOffset + oh.lastOffsetDelta,
                maxTimestamp: oh.maxTimestamp,
              },
            }
          }
          await maybeYield()
        }
      }
      bytesBefore += s.sizeInBytes
      if (!log.online) throw new Error('the log went offline while it was cleaned')
      const done = await log.store.replaceSegment(s.baseOffset, {
        batches: kept(),
        changed: () => changed,
        offLoop,
      })
      if (done === 'kept') bytesAfter += s.sizeInBytes
      else {
        count++
        bytesAfter += written
        if (done === 'removed') segmentsRemoved++
      }
      sliceStart = performance.now()
    }
    // 4. The aborted-transaction index loses the transactions with no data left, then the
    // checkpoint.
    log.dropAbortedTransactions(retention.transactions.settledAborts)
    // No listener event: compaction changes no offset a reader positions itself by.
    await log.store.setCleanerCheckpoint(cleanedUpTo)
    return this.#stats(log, count, segmentsRemoved, bytesBefore, bytesAfter, removed, cleanedUpTo, longest)
  }

  #stats(
    log: PartitionLogImpl,
    segments: number,
    segmentsRemoved: number,
    bytesBefore: number,
    bytesAfter: number,
    recordsRemoved: number,
    cleanedUpTo: number,
    longestSliceMs: number,
  ): CleanStats {
    return {
      topic: log.topic,
      partition: log.partition,
      segments,
      segmentsRemoved,
      bytesBefore,
      bytesAfter,
      recordsRemoved,
      cleanedUpTo,
      longestSliceMs,
    }
  }

  #records(bytes: Uint8Array, h: BatchHeader): ReturnType<typeof decodeRecords> {
    const codec = codecOf(h.attributes)
    const body = batchBody(bytes, 0)
    const plain =
      codec === CompressionCodec.none ? body : decompress(codec, body, this.#opts.maxDecompressedBatchBytes)
    return decodeRecords(plain, h.recordsCount)
  }

  /**
   * What of one batch survives: the same bytes (nothing removed, no horizon to stamp), a rebuilt
   * batch, or null (dropped).
   */
  #filterBatch(
    bytes: Uint8Array,
    h: BatchHeader,
    map: ReadonlyMap<string, number>,
    now: number,
    deleteRetentionMs: number,
    retention: BatchRetention,
  ): { bytes: Uint8Array | null; removed: number } {
    const lastOffset = h.baseOffset + h.lastOffsetDelta
    // Kept, even empty: the producer's last sequence, its last marker, the batch below the log end.
    const retainEmpty =
      (h.producerId >= 0 &&
        (isControl(h.attributes)
          ? retention.producerLastMarkers.get(h.producerId) === h.producerEpoch
          : retention.producerLastOffsets.has(lastOffset))) ||
      lastOffset + 1 === retention.logEndOffset
    const records = this.#records(bytes, h)
    const horizonSet = hasDeleteHorizon(h.attributes)
    if (isControl(h.attributes)) {
      if (!retention.transactions.onControlBatch(h, records)) return { bytes, removed: 0 }
      // A removable marker: stamped with a delete horizon first, dropped once it has passed.
      if (!horizonSet) return { bytes: this.#rebuild(h, records, now + deleteRetentionMs), removed: 0 }
      if (now < h.baseTimestamp) return { bytes, removed: 0 }
      if (records.length === 0 && retainEmpty) return { bytes, removed: 0 }
      return { bytes: retainEmpty ? this.#rebuild(h, [], h.baseTimestamp) : null, removed: records.length }
    }
    if (retention.transactions.onDataBatch(h)) {
      // A batch of an aborted transaction: removed whatever its keys.
      if (records.length === 0 && retainEmpty) return { bytes, removed: 0 }
      return {
        bytes: retainEmpty ? this.#rebuild(h, [], horizonSet ? h.baseTimestamp : -1) : null,
        removed: records.length,
      }
    }
    const horizonPassed = horizonSet && now > h.baseTimestamp
    let hasTombstone = false
    const keep = records.filter((r) => {
      if (r.key !== null) {
        const latest = map.get(keyString(r.key))
        if (latest !== undefined && latest > h.baseOffset + r.offsetDelta) return false
      }
      if (r.value === null) {
        if (horizonPassed) return false
        hasTombstone = true
      }
      return true
    })
    const removed = records.length - keep.length
    const stampHorizon = hasTombstone && !horizonSet
    if (removed === 0 && !stampHorizon) return { bytes, removed: 0 }
    if (keep.length === 0 && !retainEmpty) return { bytes: null, removed }
    const horizon = stampHorizon ? now + deleteRetentionMs : horizonSet ? h.baseTimestamp : -1
    return { bytes: this.#rebuild(h, keep, horizon), removed }
  }

  /**
   * A batch with only `keep` of its records: absolute timestamps kept, deltas against the new base
   * (the delete horizon when there is one, -1 for none).
   */
  #rebuild(h: BatchHeader, keep: ReturnType<typeof decodeRecords>, horizon: number): Uint8Array {
    const timestamps = keep.map((r) =>
      isLogAppendTime(h.attributes) ? h.maxTimestamp : h.baseTimestamp + r.timestampDelta,
    )
    const baseTimestamp = horizon >= 0 ? horizon : timestamps.length > 0 ? timestamps[0] : h.baseTimestamp
    const body = encodeRecords(
      keep.map((r, i) => ({
        timestampDelta: timestamps[i] - baseTimestamp,
        offsetDelta: r.offsetDelta,
        key: r.key,
        value: r.value,
        headers: r.headers,
      })),
    )
    const codec = codecOf(h.attributes)
    const attributes =
      horizon >= 0 ? h.attributes | DELETE_HORIZON_FLAG_MASK : h.attributes & ~DELETE_HORIZON_FLAG_MASK
    const maxTimestamp = isLogAppendTime(h.attributes)
      ? h.maxTimestamp
      : timestamps.length > 0
        ? Math.max(...timestamps)
        : h.maxTimestamp
    const rebuilt = buildBatch(
      {
        baseOffset: h.baseOffset,
        partitionLeaderEpoch: h.partitionLeaderEpoch,
        attributes,
        lastOffsetDelta: h.lastOffsetDelta,
        baseTimestamp,
        maxTimestamp,
        producerId: h.producerId,
        producerEpoch: h.producerEpoch,
        baseSequence: h.baseSequence,
        recordsCount: keep.length,
      },
      compress(codec, body),
      this.#opts.crc32c,
    )
    return rebuilt
  }
}

/** What decides which batches of one clean stay. */
interface BatchRetention {
  /** Last offsets of every producer's last batch (its last sequence). */
  readonly producerLastOffsets: ReadonlySet<number>
  readonly producerLastMarkers: ReadonlyMap<number, number>
  readonly logEndOffset: number
  readonly transactions: CleanedTransactions
}

/**
 * The transactions seen by one clean, batch by batch in offset order (Kafka's
 * CleanedTransactionMetadata): which data batches belong to aborted transactions and which markers
 * have no batch of their transaction left.
 */
class CleanedTransactions {
  readonly #isAborted: (producerId: number, offset: number) => boolean
  /** Producers with a batch of an aborted transaction seen since their last ABORT marker. */
  readonly #abortedSeen = new Set<number>()
  /** Producers with a committed (or open) transactional batch seen since their last marker. */
  readonly #committedSeen = new Set<number>()
  /**
   * The ABORT markers found with no batch of their transaction left: their aborted-transaction
   * index entries go (Kafka's cleaner writes into the cleaned index only the aborted transactions
   * whose marker it keeps because a batch of theirs was removed in the same clean).
   */
  readonly settledAborts: { producerId: number; lastOffset: number }[] = []

  constructor(isAborted: (producerId: number, offset: number) => boolean) {
    this.#isAborted = isAborted
  }

  /** A data batch: true when it belongs to an aborted transaction (it is removed). */
  onDataBatch(h: BatchHeader): boolean {
    if (!isTransactional(h.attributes)) return false
    if (this.#isAborted(h.producerId, h.baseOffset)) {
      this.#abortedSeen.add(h.producerId)
      return true
    }
    this.#committedSeen.add(h.producerId)
    return false
  }

  /** A control batch: true when no batch of its transaction was seen (the marker is removable). */
  onControlBatch(h: BatchHeader, records: ReturnType<typeof decodeRecords>): boolean {
    const first = records[0]
    // An emptied control batch was cleaned before (if it was an ABORT, its entry goes too).
    if (first === undefined) {
      this.settledAborts.push({ producerId: h.producerId, lastOffset: h.baseOffset })
      return true
    }
    const key = first.key
    if (key === null || key.byteLength < 4) return false
    const type = (key[2]! << 8) | key[3]!
    if (type === 0) {
      if (this.#abortedSeen.delete(h.producerId)) return false
      this.settledAborts.push({ producerId: h.producerId, lastOffset: h.baseOffset })
      return true
    }
    if (type === 1) return !this.#committedSeen.delete(h.producerId)
    return false
  }
}
