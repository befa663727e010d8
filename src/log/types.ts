/**
 * The log's public types: what the Kafka handlers (Produce, Fetch, ListOffsets, DeleteRecords,
 * OffsetForLeaderEpoch, CreatePartitions, DescribeProducers, DescribeLogDirs, InitProducerId) and
 * the server wiring see. Offsets, timestamps and producer ids are JavaScript numbers (exact below
 * 2^53); the wire's int64 bigints are converted at the handler. Errors a client can cause are
 * results carrying a Kafka error code (`ErrorCode` of src/protocol/errors.ts), never exceptions.
 */
import type { TxnMarker } from './marker.js'

export type CleanupPolicy = 'delete' | 'compact'
export type TimestampType = 'CreateTime' | 'LogAppendTime'
/** `compression.type`: `producer` keeps the producer's codec; any other recompresses to that codec. */
export type CompressionType = 'producer' | 'uncompressed' | 'gzip' | 'snappy' | 'lz4' | 'zstd'

/**
 * The settings that shape one partition's log: the topic's configs resolved over the broker's
 * defaults, already parsed (the server maps Kafka's keys to these fields; see LOG_CONFIG_KEYS in
 * config.ts). Kafka's Long.MAX_VALUE may be given as any number ≥ 2^53 (or Infinity): unbounded.
 */
export interface LogConfig {
  /** cleanup.policy: empty = keep forever */
  readonly cleanupPolicy: readonly CleanupPolicy[]
  /** retention.ms; -1 = no limit */
  readonly retentionMs: number
  /** retention.bytes; -1 = no limit */
  readonly retentionBytes: number
  /** segment.bytes (roll size and the RECORD_LIST_TOO_LARGE limit) */
  readonly segmentBytes: number
  /** segment.ms */
  readonly segmentMs: number
  /** segment.jitter.ms */
  readonly segmentJitterMs: number
  /** segment.index.bytes: a segment whose offset (8 B/entry) or time (12 B/entry) index would outgrow it rolls */
  readonly segmentIndexBytes: number
  /** index.interval.bytes */
  readonly indexIntervalBytes: number
  /** max.message.bytes */
  readonly maxMessageBytes: number
  /** message.timestamp.type */
  readonly messageTimestampType: TimestampType
  /** message.timestamp.before.max.ms */
  readonly messageTimestampBeforeMaxMs: number
  /** message.timestamp.after.max.ms */
  readonly messageTimestampAfterMaxMs: number
  /** compression.type */
  readonly compressionType: CompressionType
  /** compression.gzip.level (-1 = codec default) */
  readonly compressionGzipLevel: number
  /** compression.lz4.level (accepted; the lz4 encoder has one level) */
  readonly compressionLz4Level: number
  /** compression.zstd.level */
  readonly compressionZstdLevel: number
  /** min.compaction.lag.ms */
  readonly minCompactionLagMs: number
  /** max.compaction.lag.ms */
  readonly maxCompactionLagMs: number
  /** delete.retention.ms */
  readonly deleteRetentionMs: number
  /** min.cleanable.dirty.ratio */
  readonly minCleanableDirtyRatio: number
  /** file.delete.delay.ms */
  readonly fileDeleteDelayMs: number
  /** flush.messages: fsync after this many messages (1 = every append before it is acknowledged) */
  readonly flushMessages: number
  /** flush.ms: fsync when the oldest unflushed data is this old */
  readonly flushMs: number
}

/** Settings of the whole log layer (broker level). */
export interface LogManagerConfig {
  /** `file` (segment files under logDirs) or `memory` (nothing on disk; tests) */
  readonly storage: 'file' | 'memory'
  /** log.dirs (absolute or relative paths); partitions are spread over them as Kafka does */
  readonly logDirs: readonly string[]
  /** Defaults for every topic (the broker's log.* settings, resolved) */
  readonly defaults: LogConfig
  /** log.retention.check.interval.ms */
  readonly retentionCheckIntervalMs: number
  /** log.cleaner.enable */
  readonly cleanerEnable: boolean
  /** log.cleaner.threads (0 = no cleaner) */
  readonly cleanerThreads: number
  /** log.cleaner.backoff.ms */
  readonly cleanerBackoffMs: number
  /** log.cleaner.dedupe.buffer.size: bytes of key hashes one cleaning pass may hold */
  readonly cleanerDedupeBufferSize: number
  /** log.cleaner.io.buffer.size: bytes the cleaner reads at a time */
  readonly cleanerIoBufferSize: number
  /** log.flush.scheduler.interval.ms: how often flush.ms is checked */
  readonly flushSchedulerIntervalMs: number
  /** log.flush.offset.checkpoint.interval.ms: recovery-point checkpoints */
  readonly flushOffsetCheckpointIntervalMs: number
  /** log.flush.start.offset.checkpoint.interval.ms (log start offsets are also written at once on DeleteRecords) */
  readonly flushStartOffsetCheckpointIntervalMs: number
  /** producer.id.expiration.ms */
  readonly producerIdExpirationMs: number
  /** producer.id.expiration.check.interval.ms */
  readonly producerIdExpirationCheckIntervalMs: number
  /** fetch.max.bytes is the fetcher's; here only the largest decompressed batch the validator accepts */
  readonly maxDecompressedBatchBytes?: number
}

/** One problem record of a rejected batch (Produce v8+ RecordErrors). */
export interface RecordError {
  readonly batchIndex: number
  readonly message: string | null
}

/** How a transaction marker is appended (`PartitionLog.appendMarker`). */
export interface MarkerAppendOptions {
  /** The clock (ms): LogAppendTime and the producer's last timestamp. */
  readonly now: number
  /** The transaction's client transaction version; see AppendOptions.transactionVersion. */
  readonly transactionVersion: number
}

export interface AppendOptions {
  /** The clock (ms). Used for LogAppendTime, timestamp bounds, producer state. */
  readonly now: number
  /** Produce request version, for Kafka's messages that name it. */
  readonly produceVersion?: number
  /**
   * `client` (Produce: control batches refused) or `coordinator` (the transaction coordinator
   * writing markers; no producer-sequence checks).
   */
  readonly origin?: 'client' | 'coordinator'
  /**
   * Transactions hook: true when the partition was verified as part of the producer's ongoing
   * transaction (AddPartitionsToTxn / implicit add). Unused until transactions land; transactional
   * batches are stored and open a transaction in the producer state either way.
   */
  readonly transactionVerified?: boolean
  /**
   * Transaction markers (origin `coordinator`): the transaction's client transaction version.
   * With 2 (KIP-890) a marker's epoch must be above the producer's, or equal when no transaction
   * is open; below 2 it must be at least the producer's (transactions.md §8.3).
   */
  readonly transactionVersion?: number
  /**
   * True when the caller hands `records` over to the log (a Produce request's view of its own
   * frame, which nothing reads afterwards): a batch kept as it is is then rewritten in place (base
   * offset, leader epoch, max timestamp) instead of copied first. Otherwise `records` is left
   * unchanged.
   */
  readonly recordsOwned?: boolean
  /**
   * True to have the batches written together with the partition's other coalesced appends of
   * this turn of the event loop, one store write for them all (the Produce handler), instead of
   * one write each. Everything else is done when `append` returns (validation, offsets, producer
   * state: a retried batch of the same turn is a duplicate); the result is then a promise, settled
   * once the batches are written (and fsynced when `flush.messages` asks). Until then they are not
   * visible: not in the log end offset, the high watermark, reads or listeners. A failed write
   * fails every append of it with KAFKA_STORAGE_ERROR and takes the partition offline.
   */
  readonly coalesce?: boolean
}

export interface AppendResult {
  /** NONE (0) when appended or a duplicate of a recent batch; a Kafka error code otherwise. */
  readonly errorCode: number
  /** Offset of the first record appended (or of the duplicate's original); -1 on error. */
  readonly baseOffset: number
  /** Offset of the last record appended; -1 on error. */
  readonly lastOffset: number
  /** Append time for LogAppendTime topics (or a duplicate's max timestamp), -1 otherwise. */
  readonly logAppendTime: number
  /** The log start offset, or -1 for errors Kafka answers with -1 (§3.1 notes). */
  readonly logStartOffset: number
  readonly recordErrors: readonly RecordError[]
  readonly errorMessage: string | null
  /** True when the batch was a retry of a recent batch and nothing was appended. */
  readonly duplicate: boolean
}

export type IsolationLevel = 'read_uncommitted' | 'read_committed'

export interface ReadOptions {
  /** Return the first batch whole even when it is larger than maxBytes (KIP-74). */
  readonly minOneMessage: boolean
  readonly isolationLevel: IsolationLevel
  /** Read no batch starting at or after this offset (default: the readable end by isolation). */
  readonly maxOffset?: number
  /**
   * When given, the engine may read into a buffer it lends (the file engine's pool, see
   * log/read-buffers.ts) and pushes here the function that gives it back. The caller calls every
   * function once nothing reads the records any more: a Fetch answer references them, so once its
   * socket write has completed. Without it, the records are the caller's to keep.
   */
  readonly loans?: (() => void)[]
}

export interface AbortedTransaction {
  readonly producerId: number
  readonly firstOffset: number
}

export interface ReadResult {
  /** NONE, OFFSET_OUT_OF_RANGE (1) or KAFKA_STORAGE_ERROR (56). */
  readonly errorCode: number
  /**
   * Whole stored batches, byte for byte, starting with the batch holding fetchOffset; never a
   * partial batch (the cut is at a batch boundary, a documented difference from Kafka which may
   * cut the last one). Empty when nothing is readable.
   */
  readonly records: Uint8Array
  readonly highWatermark: number
  readonly lastStableOffset: number
  readonly logStartOffset: number
  /** read_committed: aborted transactions overlapping the data (empty list); read_uncommitted: null. */
  readonly abortedTransactions: readonly AbortedTransaction[] | null
}

/** A ListOffsets answer for one partition. */
export interface ListOffsetsResult {
  /** NONE or UNSUPPORTED_VERSION (35) for an unknown negative timestamp, or KAFKA_STORAGE_ERROR. */
  readonly errorCode: number
  readonly offset: number
  readonly timestamp: number
  readonly leaderEpoch: number
}

export const ListOffsetsTimestamp = Object.freeze({
  LATEST: -1,
  EARLIEST: -2,
  MAX_TIMESTAMP: -3,
  EARLIEST_LOCAL: -4,
  LATEST_TIERED: -5,
  EARLIEST_PENDING_UPLOAD: -6,
} as const)

export interface DeleteRecordsResult {
  /** NONE, OFFSET_OUT_OF_RANGE, POLICY_VIOLATION or KAFKA_STORAGE_ERROR. */
  readonly errorCode: number
  readonly errorMessage: string | null
  /** The log start offset after the call; -1 on error. */
  readonly lowWatermark: number
}

export interface EpochEndOffset {
  readonly errorCode: number
  readonly leaderEpoch: number
  readonly endOffset: number
}

/** One producer as DescribeProducers reports it. */
export interface ProducerStateInfo {
  readonly producerId: number
  readonly producerEpoch: number
  readonly lastSequence: number
  readonly lastTimestamp: number
  readonly coordinatorEpoch: number
  readonly currentTxnStartOffset: number
}

/** What happened to a partition, for listeners (long-polling fetches wake on any of these). */
export type PartitionEvent = 'append' | 'truncate' | 'start-offset' | 'offline' | 'deleted'

export interface PartitionLog {
  readonly topic: string
  readonly partition: number
  readonly topicId: string
  /** Always 0 on a single node (data-plane.md §9). */
  readonly leaderEpoch: number
  readonly logStartOffset: number
  readonly logEndOffset: number
  /** = log end offset on a single node. */
  readonly highWatermark: number
  /** First offset of the earliest open transaction, else the high watermark (until transactions land: the high watermark). */
  readonly lastStableOffset: number
  /** Bytes of stored batches (DescribeLogDirs PartitionSize). */
  readonly sizeInBytes: number
  /** False once an I/O error took the partition offline: every operation answers KAFKA_STORAGE_ERROR. */
  readonly online: boolean
  readonly config: LogConfig

  /**
   * Validates (data-plane.md §3, §5) and appends the records of one Produce partition (one or
   * more v2 batches as received). Appends of one partition are applied in call order.
   *
   * The append is done when this returns: the result is a value, so a caller answers in the same
   * turn. Only when the flush policy (`flush.messages`) asks for an fsync before the
   * acknowledgement, or the append is coalesced (`AppendOptions.coalesce`), is it a promise,
   * settled once the fsync, or the write, is done.
   */
  append(records: Uint8Array, opts: AppendOptions): AppendResult | Promise<AppendResult>
  /**
   * Appends a transaction marker built by the coordinator (`txnMarker`): the producer-state checks
   * and effects of a marker appended with origin `coordinator` (transactions.md §8.3), without the
   * validation a client's batch needs. Settles as `append` does.
   */
  appendMarker(marker: TxnMarker, opts: MarkerAppendOptions): AppendResult | Promise<AppendResult>
  /** Reads whole batches from the one holding fetchOffset (data-plane.md §6.2 steps 5-7). */
  read(fetchOffset: number, maxBytes: number, opts: ReadOptions): Promise<ReadResult>
  /** ListOffsets for one partition (data-plane.md §7), timestamp ≥ 0 or one of ListOffsetsTimestamp. */
  listOffsets(timestamp: number, isolationLevel: IsolationLevel): Promise<ListOffsetsResult>
  /** DeleteRecords (data-plane.md §8); offset -1 means the high watermark. */
  deleteRecordsBefore(offset: number): Promise<DeleteRecordsResult>
  /** OffsetForLeaderEpoch (data-plane.md §9) for a requested epoch (currentLeaderEpoch is the handler's check). */
  endOffsetForLeaderEpoch(leaderEpoch: number): EpochEndOffset
  /** Active producers (DescribeProducers). */
  producerStates(): ProducerStateInfo[]
  /**
   * Whether the producer has a transaction open here at this epoch (Kafka's
   * `UnifiedLog.hasOngoingTransaction`): its later batches need no verification by the coordinator.
   */
  hasOngoingTransaction(producerId: number, producerEpoch: number): boolean
  /**
   * Calls `listener` on every append, truncation, log-start-offset move, offline transition or
   * deletion, synchronously after the change is visible to reads. Returns the unsubscribe function.
   */
  addListener(listener: (event: PartitionEvent) => void): () => void
  /** Bytes readable from `fetchOffset` up to the readable end (long-poll MinBytes accounting). */
  bytesAvailable(fetchOffset: number, isolationLevel: IsolationLevel): number
}

export interface LogDirPartitionStats {
  readonly topic: string
  readonly partition: number
  readonly size: number
}

/** DescribeLogDirs of one directory. */
export interface LogDirStats {
  /** Absolute path. */
  readonly path: string
  /** NONE or KAFKA_STORAGE_ERROR when the directory is offline. */
  readonly errorCode: number
  readonly partitions: readonly LogDirPartitionStats[]
  /** From the file system; -1 for the memory engine. */
  readonly totalBytes: number
  readonly usableBytes: number
}

export interface LogManager {
  /** Opens the log directories (creating them), recovers after an unclean shutdown, starts background jobs. */
  open(): Promise<void>
  /** Stops background jobs, flushes, writes checkpoints and the clean-shutdown marker. Idempotent. */
  close(): Promise<void>
  /**
   * Ensures partitions [fromCount, toCount) of a topic exist: opens a partition's existing log when
   * its directory holds this topic id's data, else creates it empty (and removes data left by an
   * older topic of the same name). `configs` are the topic's own settings over the broker defaults.
   */
  createPartitions(
    topic: string,
    topicId: string,
    fromCount: number,
    toCount: number,
    configs?: Partial<LogConfig>,
  ): Promise<void>
  /**
   * Removes every partition of a topic: listeners get 'deleted' and the data is renamed away at
   * once; settles when the files are gone, or with `untilRemoved: false` once the partitions are
   * out (renamed; a restart removes what is left). A topic's changes run in call order, changes of
   * different topics side by side.
   */
  deleteTopic(topic: string, options?: { readonly untilRemoved?: boolean }): Promise<void>
  /** Removes the data of partitions on disk that are not open (call once every topic is open). */
  removeStrayPartitions(): Promise<string[]>
  partition(topic: string, index: number): PartitionLog | undefined
  /** Replaces a topic's own settings (resolved over the broker defaults again). */
  updateTopicConfig(topic: string, configs: Partial<LogConfig>): void
  /** DescribeLogDirs: one entry per log directory. */
  logDirs(): Promise<LogDirStats[]>
  /** Runs one retention pass over every partition now (also scheduled every log.retention.check.interval.ms). */
  runRetention(now: number): Promise<void>
  /** Runs one compaction pass over every cleanable partition now (also scheduled by the cleaner). */
  runCleaner(now: number): Promise<void>
  /** Where the log layer's own small files live (the first log directory), null for the memory engine: give it to ProducerIdManager. */
  metadataDir(): string | null
  /** Bytes of Fetch reads lent out and not yet given back (see LogStorage.lentReadBytes). */
  lentReadBytes(): number
  /** Reserves bytes a read may lend until the returned function is called (see LogStorage.reserveReadBytes). */
  reserveReadBytes(bytes: number): () => void
}

/** The logging the log layer does (pino's Logger fits). */
export interface LogLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}
