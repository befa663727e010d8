/**
 * The storage seam of the log: one partition's stored batches, in segments. Engines implement
 * PartitionStore and LogStorage; every engine passes the same contract suite
 * (test/log/contract.ts). Engines are mechanical: they store, read, roll and delete what they are
 * told to; the decisions (validation, offsets, producer state, when to roll, what retention
 * deletes, what the cleaner keeps) are taken above them, once, in partition-log.ts.
 *
 * Mutations are synchronous (a segment append is a write to the page cache, as Kafka's
 * FileChannel.write is; a failure throws and the caller takes the partition offline); fsync,
 * checkpoints and whole-file work are async.
 */

/** What the engine keeps about one segment (memory and file engines alike). */
export interface SegmentInfo {
  readonly baseOffset: number
  /** The offset after the segment's last batch (its base offset when empty). */
  readonly nextOffset: number
  readonly sizeInBytes: number
  /** Largest record timestamp in the segment, -1 when empty. */
  readonly maxTimestamp: number
  /**
   * Last offset of the batch holding maxTimestamp (what Kafka's time index entries carry, its
   * shallowOffsetOfMaxTimestampSoFar), -1 when empty.
   */
  readonly offsetOfMaxTimestamp: number
  /** maxTimestamp of the first batch (segment.ms age), -1 when empty. */
  readonly firstBatchTimestamp: number
  /** When the segment was created (ms). */
  readonly createdMs: number
  /** Entries of the offset and time indexes (engines with indexes; a full index forces a roll). */
  readonly offsetIndexEntries?: number
  readonly timeIndexEntries?: number
}

/** The bookkeeping both engines keep per segment (named as SegmentInfo, with `size`). */
export interface SegmentStats {
  readonly baseOffset: number
  nextOffset: number
  size: number
  maxTimestamp: number
  offsetOfMaxTimestamp: number
  firstBatchTimestamp: number
  createdMs: number
}

export function segmentInfoOf(s: SegmentStats): SegmentInfo {
  return {
    baseOffset: s.baseOffset,
    nextOffset: s.nextOffset,
    sizeInBytes: s.size,
    maxTimestamp: s.maxTimestamp,
    offsetOfMaxTimestamp: s.offsetOfMaxTimestamp,
    firstBatchTimestamp: s.firstBatchTimestamp,
    createdMs: s.createdMs,
  }
}

/** Index of the segment that may hold `offset` (greatest base offset ≤ offset), or 0. */
export function segmentIndexFor(segs: readonly { readonly baseOffset: number }[], offset: number): number {
  let lo = 0
  let hi = segs.length - 1
  let found = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (segs[mid].baseOffset <= offset) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}

/** Facts about a validated batch the engine indexes. */
export interface AppendBatchInfo {
  readonly baseOffset: number
  readonly lastOffset: number
  readonly maxTimestamp: number
}

/** One batch of several written together (`PartitionStore.appendBatches`): its facts and its length. */
export interface AppendBatchSpan extends AppendBatchInfo {
  readonly size: number
}

/** The new content of a segment the cleaner rewrites. */
export interface SegmentRewrite {
  /** The batches of the new segment, in order, produced while the engine writes them. */
  readonly batches: AsyncIterable<{ readonly bytes: Uint8Array; readonly info: AppendBatchInfo }>
  /** Asked once the batches are consumed: false means nothing changed (keep the old segment). */
  readonly changed: () => boolean
  /**
   * Told before and after each wait of the engine off the event loop (the file engine's writes of
   * the copy), so that the caller does not count it as time it held the loop.
   */
  readonly offLoop?: { before(): void; after(): void }
}

/** What `replaceSegment` did: nothing, swapped the copy in, or removed the segment. */
export type SegmentReplacement = 'kept' | 'replaced' | 'removed'

/** A stored batch as iterated: `bytes` is a view valid until the store changes. */
export interface StoredBatch {
  readonly bytes: Uint8Array
  readonly baseOffset: number
  readonly lastOffset: number
}

/** What a store found when it opened. */
export interface OpenedPartition {
  readonly logStartOffset: number
  /** Newest producer snapshot at or below the log end offset, or null. */
  readonly producerSnapshot: {
    readonly offset: number
    readonly bytes: Uint8Array
    /** The aborted transactions whose marker is below `offset` (AbortedTxn entries), null when none were stored. */
    readonly aborted: Uint8Array | null
  } | null
  /** True when the store recovered from an unclean shutdown (it truncated any torn tail). */
  readonly recovered: boolean
  /** Bytes dropped from the tail during recovery. */
  readonly truncatedBytes: number
}

export interface PartitionStore {
  /** Opens (creating when missing) and recovers the partition; `now` stamps a new segment. */
  open(now: number): Promise<OpenedPartition>
  readonly logEndOffset: number
  readonly sizeInBytes: number
  /** Oldest first; the last one is the active segment. Never empty once open. */
  segments(): readonly SegmentInfo[]
  /** The active segment (cheap: called before every append). */
  activeSegment(): SegmentInfo
  readonly segmentCount: number
  /**
   * Bytes stored from the batch holding `offset` to the log end (long-poll accounting without
   * reading the data); 0 when `offset` is at or past the end.
   */
  bytesFrom(offset: number): number
  /**
   * Appends one batch (offsets already assigned) to the active segment. Throws on I/O failure.
   * `batch` may be a view of a request's frame, valid only during the call: an engine that keeps
   * the bytes keeps a copy.
   */
  append(batch: Uint8Array, info: AppendBatchInfo): void
  /**
   * Appends batches (offsets assigned) to the active segment as one write: their bytes back to
   * back in `chunks`, in order (a batch may span chunks), described by `spans` in the same order
   * (their sizes add up to the chunks' length). All of them, or, when it throws, none: the segment
   * is cut back to its size before the call. The chunks are valid only during the call, as
   * `append`'s batch.
   */
  appendBatches(chunks: readonly Uint8Array[], spans: readonly AppendBatchSpan[]): void
  /** Starts a new active segment at the log end offset (nothing when the active one is empty). */
  roll(now: number): void
  /**
   * Whole batches of one segment from the batch holding `offset`: at most `maxBytes` of them, or
   * exactly the first when it alone is larger and `minOneMessage`; none whose base offset is
   * ≥ `maxOffset`. Empty when no batch at or after `offset` is below `maxOffset`. A value when the
   * engine read at once; a promise when it reads off the event loop (the file engine's large
   * reads), and then a segment deleted, replaced or closed meanwhile is still read whole. With
   * `loans`, the bytes may be lent (see ReadOptions.loans).
   */
  read(
    offset: number,
    maxBytes: number,
    maxOffset: number,
    minOneMessage: boolean,
    loans?: (() => void)[],
  ): Uint8Array | Promise<Uint8Array>
  /** Stored batches whose last offset is ≥ `offset`, in order, across segments. */
  batchesFrom(offset: number): Iterable<StoredBatch>
  /** A position to start a time scan in the segment with this base offset: an offset ≤ the first record with timestamp ≥ ts. */
  timestampLookup(segmentBaseOffset: number, timestamp: number): number
  /**
   * Deletes the `count` oldest segments (the caller never deletes the active one); an engine keeps
   * a segment a cleaned copy is being swapped in for, and those after it, for a later call.
   */
  deleteOldestSegments(count: number): void
  /**
   * Replaces a non-active segment's batches (compaction), atomically: the new batches are
   * consumed one at a time (never all in memory), then, if `rewrite.changed()`, swapped in.
   * When they are none, the segment is removed instead (as retention removes one), unless it is
   * the first segment: its base offset is where the log starts at open. Reads of its offsets then
   * go on to the next segment. Returns what became of the segment.
   */
  replaceSegment(baseOffset: number, rewrite: SegmentRewrite): Promise<SegmentReplacement>
  /** Where the compacted part of the log ends (Kafka's cleaner-offset-checkpoint), 0 when never cleaned. */
  cleanerCheckpoint(): number
  setCleanerCheckpoint(offset: number): Promise<void>
  /** Persists the log start offset. */
  setLogStartOffset(offset: number): Promise<void>
  /** Makes everything appended durable (fsync) and moves the recovery point to the log end. */
  flush(): Promise<void>
  /**
   * Starts writing the active segment's data back to disk in the background when the engine sees
   * fit (the file engine: WRITE_BACK_BYTES), so that a later flush has little left to write; null
   * when it starts nothing. Not a flush: the recovery point stays. The promise rejects on an I/O
   * failure, which the caller treats as a failed flush. Called after every write.
   */
  writeBack(): Promise<void> | null
  /**
   * Stores a producer-state snapshot taken at `offset` (older ones may be dropped), with the
   * aborted transactions whose marker is below `offset` (34-byte AbortedTxn entries).
   */
  writeProducerSnapshot(offset: number, bytes: Uint8Array, aborted: Uint8Array): Promise<void>
  /** Flushes and releases files; `clean` lets the next open skip recovery. */
  close(): Promise<void>
  /** Removes everything of the partition. */
  delete(): Promise<void>
}

/** One engine for the whole log layer. */
export interface LogStorage {
  /** Opens the log directories; returns whether the last shutdown was clean. */
  open(): Promise<{ readonly cleanShutdown: boolean }>
  /**
   * A partition store (not yet opened). `topicId` is recorded with the data (partition.metadata).
   * `settings.indexIntervalBytes` is the topic's index.interval.bytes (engines with indexes use it).
   */
  partition(
    topic: string,
    partition: number,
    topicId: string,
    settings?: { readonly indexIntervalBytes: number },
  ): PartitionStore
  /** Topic id stored with a partition's data, or null when the partition has no data here. */
  storedTopicId(topic: string, partition: number): Promise<string | null>
  /** Every partition that has data here (open or not). */
  storedPartitions(): { readonly topic: string; readonly partition: number }[]
  /** Directory stats for DescribeLogDirs: path → bytes. */
  dirs(): Promise<{ path: string; online: boolean; totalBytes: number; usableBytes: number }[]>
  /** Where durable small files of the log layer live (the producer-id block file), or null (memory). */
  metadataDir(): string | null
  /**
   * Bytes of reads lent under `ReadOptions.loans` and not yet given back (what unsent Fetch answers
   * hold); 0 for an engine whose reads hold no memory of their own.
   */
  lentReadBytes(): number
  /**
   * Counts `bytes` in lentReadBytes until the returned function is called: what a read under loans
   * may lend, reserved before it starts. Does nothing for an engine whose reads hold no memory.
   */
  reserveReadBytes(bytes: number): () => void
  /** Writes periodic checkpoints (recovery points); log.flush.offset.checkpoint.interval.ms. */
  checkpoint(): Promise<void>
  /** Directory index of a partition (DescribeLogDirs); 0 with one directory. */
  dirIndexOf(topic: string, partition: number): number
  /**
   * Writes the checkpoints and, unless `clean` is false (a partition went offline or failed to
   * close), the clean-shutdown marker, after every partition closed.
   */
  close(options?: { readonly clean?: boolean }): Promise<void>
}
