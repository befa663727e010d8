/**
 * The log manager: every partition of every topic, the storage engine under them, and the
 * background jobs (retention every log.retention.check.interval.ms, the cleaner, the flush
 * scheduler, producer-id expiration). Kafka: LogManager. Background jobs use unref'd timers; they
 * never spin: each runs at its interval and does its work in one pass.
 */
import { ErrorCode } from '../protocol/errors.js'
import { LogCleaner } from './cleaner.js'
import { crc32c } from './compression.js'
import { resolveLogConfig } from './config.js'
import { FileLogStorage } from './file.js'
import { MemoryLogStorage } from './memory.js'
import { PartitionLogImpl } from './partition-log.js'
import { ConcurrencyLimit } from './limit.js'
import type { LogStorage } from './storage.js'
import type {
  LogConfig,
  LogDirStats,
  LogLogger,
  LogManager,
  LogManagerConfig,
  PartitionLog,
} from './types.js'

const silent: LogLogger = { info() {}, warn() {}, error() {} }

/** Partitions a createPartitions opens at once (each writes and fsyncs two small files). */
const OPEN_CONCURRENCY = 32

export interface LogManagerOptions {
  /** The engine; default from config.storage (file under config.logDirs, or memory). */
  readonly storage?: LogStorage
  readonly logger?: LogLogger
  /** The clock (ms); default Date.now. */
  readonly clock?: () => number
  /** Start no background timers (tests drive runRetention / runCleaner themselves). */
  readonly noBackgroundJobs?: boolean
}

/** The default largest plaintext of one compressed batch (a bound against decompression bombs). */
const DEFAULT_MAX_DECOMPRESSED = 256 * 1024 * 1024

export class LogManagerImpl implements LogManager {
  readonly #config: LogManagerConfig
  readonly #storage: LogStorage
  readonly #logger: LogLogger
  /** Logs the I/O error that took a partition offline (one function for every partition). */
  readonly #onStorageError = (log: PartitionLog, e: unknown): void =>
    this.#logger.error(
      { err: e, topic: log.topic, partition: log.partition },
      `Error while appending to or reading ${log.topic}-${log.partition}; the partition is offline (KAFKA_STORAGE_ERROR)`,
    )
  readonly #clock: () => number
  readonly #background: boolean
  readonly #topics = new Map<
    string,
    { topicId: string; overrides: Partial<LogConfig>; partitions: PartitionLogImpl[] }
  >()
  readonly #timers: NodeJS.Timeout[] = []
  #cleaner: LogCleaner | undefined
  #opened = false
  #closed = false
  #retentionRunning: Promise<void> | null = null
  /** Per topic, the end of its last change (create, delete): a topic's changes run in call order. */
  readonly #changes = new Map<string, Promise<void>>()
  /**
   * Per topic with changes pending, how many deletions were asked: a creation asked before a
   * deletion stops opening partitions as soon as the deletion is asked (its opens in flight
   * finish, and the deletion takes them).
   */
  readonly #deletions = new Map<string, number>()
  /** Partition opens in flight, across every topic (at most OPEN_CONCURRENCY) and the ones waiting. */
  readonly #opens = new ConcurrencyLimit(OPEN_CONCURRENCY)

  constructor(config: LogManagerConfig, opts: LogManagerOptions = {}) {
    this.#config = config
    this.#logger = opts.logger ?? silent
    this.#clock = opts.clock ?? Date.now
    this.#background = opts.noBackgroundJobs !== true
    this.#storage =
      opts.storage ??
      (config.storage === 'memory'
        ? new MemoryLogStorage()
        : new FileLogStorage(config.logDirs, { logger: this.#logger }))
  }

  get config(): LogManagerConfig {
    return this.#config
  }

  /** The engine (the ProducerIdManager keeps its block file in storage.metadataDir()). */
  get storage(): LogStorage {
    return this.#storage
  }

  async open(): Promise<void> {
    if (this.#opened) return
    const { cleanShutdown } = await this.#storage.open()
    this.#opened = true
    if (!cleanShutdown)
      this.#logger.warn({}, 'Log directories were not shut down cleanly; partitions recover as they open.')
    this.#cleaner = new LogCleaner({
      logs: () => this.#allPartitions(),
      crc32c,
      dedupeBufferSize: this.#config.cleanerDedupeBufferSize,
      logger: this.#logger,
      maxDecompressedBatchBytes: this.#config.maxDecompressedBatchBytes ?? DEFAULT_MAX_DECOMPRESSED,
    })
    if (!this.#background) return
    const every = (ms: number, job: () => Promise<unknown> | unknown): void => {
      if (!(ms > 0) || ms >= 2 ** 31) return
      const t = setInterval(() => {
        void Promise.resolve()
          .then(job)
          .catch((e) => this.#logger.error({ err: e }, 'Log background job failed'))
      }, ms)
      t.unref()
      this.#timers.push(t)
    }
    every(this.#config.retentionCheckIntervalMs, () => this.runRetention(this.#clock()))
    if (this.#config.cleanerEnable && this.#config.cleanerThreads > 0) {
      every(this.#config.cleanerBackoffMs, () => this.runCleaner(this.#clock()))
    }
    every(this.#config.flushSchedulerIntervalMs, () => this.#flushDue())
    every(this.#config.flushOffsetCheckpointIntervalMs, () => this.#storage.checkpoint())
    every(this.#config.producerIdExpirationCheckIntervalMs, () => {
      const now = this.#clock()
      for (const p of this.#allPartitions()) p.expireProducers(now)
    })
  }

  #allPartitions(): PartitionLogImpl[] {
    const out: PartitionLogImpl[] = []
    for (const t of this.#topics.values()) out.push(...t.partitions.filter((p) => p !== undefined))
    return out
  }

  async #flushDue(): Promise<void> {
    const now = this.#clock()
    for (const p of this.#allPartitions()) {
      if (p.online && p.flushDue(now)) await p.flush().catch(() => {})
    }
  }

  async close(): Promise<void> {
    if (this.#closed || !this.#opened) return
    this.#closed = true
    for (const t of this.#timers) clearInterval(t)
    await this.#cleaner?.stop()
    await this.#retentionRunning
    // Topic changes still running (partitions being opened after their CreateTopics was answered)
    // end first; the ones not started yet do nothing now that the manager is closed.
    while (this.#changes.size > 0) await Promise.all(this.#changes.values())
    // A partition that went offline (a failed write) or fails to close leaves files the next start
    // cannot trust: no clean-shutdown marker then, so that start recovers the logs.
    let clean = true
    for (const p of this.#allPartitions()) {
      if (!p.online) clean = false
      try {
        await p.close()
      } catch (e) {
        clean = false
        this.#logger.error({ err: e, topic: p.topic, partition: p.partition }, 'Closing a partition failed')
      }
    }
    if (!clean)
      this.#logger.warn({}, 'A partition was offline or failed to close: the next start recovers the logs')
    await this.#storage.close({ clean })
  }

  /**
   * A topic's changes (create, delete) run one at a time, in call order; changes of different
   * topics run side by side (a topic being created does not hold back another one's deletion).
   */
  #serial<T>(topic: string, job: () => Promise<T>): Promise<T> {
    const run = (this.#changes.get(topic) ?? Promise.resolve()).then(job)
    const settled = run.then(
      () => undefined,
      () => undefined,
    )
    this.#changes.set(topic, settled)
    void settled.then(() => {
      if (this.#changes.get(topic) === settled) {
        this.#changes.delete(topic)
        this.#deletions.delete(topic)
      }
    })
    return run
  }

  createPartitions(...args: Parameters<LogManager['createPartitions']>): Promise<void> {
    const deletions = this.#deletions.get(args[0]) ?? 0
    const current = () => (this.#deletions.get(args[0]) ?? 0) === deletions
    return this.#serial(args[0], () => this.#createPartitions(current, ...args))
  }

  /** Runs `open` when fewer than OPEN_CONCURRENCY partitions are opening, across every topic. */
  #throttled(open: () => Promise<void>): Promise<void> {
    return this.#opens.run(open)
  }

  async #createPartitions(
    current: () => boolean,
    ...[topic, topicId, fromCount, toCount, configs]: Parameters<LogManager['createPartitions']>
  ): Promise<void> {
    if (this.#closed || !current()) return
    let t = this.#topics.get(topic)
    if (t !== undefined && t.topicId !== topicId) {
      // The older topic's files are renamed away at once; their removal goes on meanwhile.
      void this.#deleteTopic(topic)
      t = undefined
    }
    if (t === undefined) {
      t = { topicId, overrides: configs ?? {}, partitions: [] }
      this.#topics.set(topic, t)
    } else if (configs !== undefined) {
      t.overrides = configs
    }
    const config = resolveLogConfig(this.#config.defaults, t.overrides)
    for (const p of t.partitions) if (p !== undefined) p.config = config
    const part = t
    const openOne = async (i: number): Promise<void> => {
      // The manager closed, or the topic was deleted or replaced, while this partition waited.
      if (this.#closed || !current() || this.#topics.get(topic) !== part) return
      const stored = await this.#storage.storedTopicId(topic, i)
      if (stored !== null && stored !== topicId) {
        this.#logger.warn(
          { topic, partition: i, topicId: stored },
          `Removing data of an older topic ${topic} left in ${topic}-${i}`,
        )
        await this.#storage.partition(topic, i, stored).delete()
      }
      const log = new PartitionLogImpl({
        topic,
        partition: i,
        topicId,
        store: this.#storage.partition(topic, i, topicId, { indexIntervalBytes: config.indexIntervalBytes }),
        config,
        crc32c,
        producerIdExpirationMs: this.#config.producerIdExpirationMs,
        maxDecompressedBatchBytes: this.#config.maxDecompressedBatchBytes ?? DEFAULT_MAX_DECOMPRESSED,
        onStorageError: this.#onStorageError,
      })
      try {
        const r = await log.open(this.#clock())
        if (r.recovered) {
          this.#logger.info(
            { topic, partition: i, truncatedBytes: r.truncatedBytes },
            `Recovered ${topic}-${i} after an unclean shutdown (log end offset ${log.logEndOffset}, ${r.truncatedBytes} bytes truncated)`,
          )
        }
      } catch (e) {
        log.fail(e)
      }
      part.partitions[i] = log
    }
    // Partitions open a bounded number at a time across every topic: their files' fsyncs overlap
    // (a topic of thousands of partitions is created in seconds, not minutes) without thousands of
    // open files, and the opens of topics created at once share the slots in turn.
    const pending: Promise<void>[] = []
    for (let i = fromCount; i < toCount; i++)
      if (t.partitions[i] === undefined) pending.push(this.#throttled(() => openOne(i)))
    await Promise.all(pending)
  }

  deleteTopic(topic: string, options: { readonly untilRemoved?: boolean } = {}): Promise<void> {
    this.#deletions.set(topic, (this.#deletions.get(topic) ?? 0) + 1)
    let removed: Promise<void> = Promise.resolve()
    const takenOut = this.#serial(topic, async () => {
      removed = this.#deleteTopic(topic)
    })
    return options.untilRemoved === false ? takenOut : takenOut.then(() => removed)
  }

  /**
   * Takes a topic's partitions out at once (listeners get 'deleted', the stores rename their data
   * away: a restart removes what is left); the returned promise settles when the files are gone.
   * The topic's next change need not wait for that.
   */
  #deleteTopic(topic: string): Promise<void> {
    const t = this.#topics.get(topic)
    if (t === undefined) return Promise.resolve()
    this.#topics.delete(topic)
    const removals: Promise<void>[] = []
    for (const p of t.partitions) {
      if (p === undefined) continue
      p.markDeleted()
      removals.push(
        p.store
          .delete()
          .catch((e: unknown) =>
            this.#logger.error({ err: e, topic, partition: p.partition }, 'Deleting a partition failed'),
          ),
      )
    }
    return Promise.all(removals).then(() => undefined)
  }

  /**
   * Removes the data of partitions that are on disk but not open: what a crash left of a topic
   * deleted (or shrunk away) before its files were. Call once every catalog topic is open.
   * Returns the partitions removed, as "topic-partition".
   */
  async removeStrayPartitions(): Promise<string[]> {
    const strays = this.#storage
      .storedPartitions()
      .filter(({ topic, partition }) => this.partition(topic, partition) === undefined)
    await Promise.all(
      strays.map(({ topic, partition }) =>
        this.#storage
          .partition(topic, partition, '')
          .delete()
          .catch((e: unknown) =>
            this.#logger.error({ err: e, topic, partition }, 'Removing a stray partition failed'),
          ),
      ),
    )
    return strays.map(({ topic, partition }) => `${topic}-${partition}`)
  }

  partition(topic: string, index: number): PartitionLog | undefined {
    return this.#topics.get(topic)?.partitions[index]
  }

  /** Every partition of a topic (in index order). */
  partitions(topic: string): readonly PartitionLog[] {
    return this.#topics.get(topic)?.partitions ?? []
  }

  updateTopicConfig(topic: string, configs: Partial<LogConfig>): void {
    const t = this.#topics.get(topic)
    if (t === undefined) return
    t.overrides = configs
    const config = resolveLogConfig(this.#config.defaults, configs)
    for (const p of t.partitions) if (p !== undefined) p.config = config
  }

  async logDirs(): Promise<LogDirStats[]> {
    const dirs = await this.#storage.dirs()
    const parts = this.#allPartitions()
    return dirs.map((d, i) => ({
      path: d.path,
      errorCode: d.online ? ErrorCode.NONE : ErrorCode.KAFKA_STORAGE_ERROR,
      // Partitions live in the directory the engine chose; with one directory that is all of them.
      partitions: parts
        .filter((p) => dirs.length === 1 || this.#dirIndexOf(p) === i)
        .map((p) => ({ topic: p.topic, partition: p.partition, size: p.sizeInBytes })),
      totalBytes: d.totalBytes,
      usableBytes: d.usableBytes,
    }))
  }

  #dirIndexOf(p: PartitionLogImpl): number {
    return this.#storage.dirIndexOf(p.topic, p.partition)
  }

  async runRetention(now: number): Promise<void> {
    if (this.#retentionRunning !== null) return this.#retentionRunning
    const run = async (): Promise<void> => {
      for (const p of this.#allPartitions()) {
        const n = await p.applyRetention(now)
        if (n > 0) {
          this.#logger.info(
            { topic: p.topic, partition: p.partition, segments: n, logStartOffset: p.logStartOffset },
            `Deleted ${n} segment(s) of ${p.topic}-${p.partition} by retention; log start offset ${p.logStartOffset}`,
          )
        }
      }
    }
    this.#retentionRunning = run().finally(() => {
      this.#retentionRunning = null
    })
    return this.#retentionRunning
  }

  metadataDir(): string | null {
    return this.#storage.metadataDir()
  }

  lentReadBytes(): number {
    return this.#storage.lentReadBytes()
  }

  reserveReadBytes(bytes: number): () => void {
    return this.#storage.reserveReadBytes(bytes)
  }

  /** The cleaner (its lastStats tell what recent cleans did). */
  get cleaner(): LogCleaner | undefined {
    return this.#cleaner
  }

  async runCleaner(now: number): Promise<void> {
    if (this.#cleaner === undefined || this.#closed) return
    await this.#cleaner.runOnce(now)
  }
}

/** A LogManager for the given settings (file engine under logDirs, or memory). */
export function createLogManager(config: LogManagerConfig, opts: LogManagerOptions = {}): LogManagerImpl {
  return new LogManagerImpl(config, opts)
}
