/**
 * One partition's log on top of a PartitionStore: validation, offset assignment, producer state,
 * reads, ListOffsets, DeleteRecords, retention and the flush policy. Every decision is taken here,
 * once, for every engine. Kafka: UnifiedLog.
 *
 * Appends are synchronous up to the store write (validation, producer checks, offset assignment,
 * the write to the page cache), so appends of a partition apply in call order and a reader never
 * sees a half-appended batch; only an fsync demanded by flush.messages is awaited. Appends asked
 * with `coalesce` take everything but the write in the caller's turn and are written together, one
 * store write for the turn's appends to the partition (see {@link Stage}).
 */
import { ErrorCode } from '../protocol/errors.js'
import {
  type BatchHeader,
  batchBody,
  codecOf,
  CompressionCodec,
  type Crc32c,
  decodeRecords,
  isControl,
  isLogAppendTime,
  readBatchHeader,
  setBaseOffset,
  setMaxTimestamp,
  setPartitionLeaderEpoch,
  splitBatches,
} from './batch.js'
import { decompress } from './compression.js'
import { hasCompact, hasDelete } from './config.js'
import { ControlRecordType, type TxnMarker } from './marker.js'
import { ProducerStateManager } from './producer-state.js'
import type { AppendBatchSpan, PartitionStore, SegmentInfo } from './storage.js'
import type {
  AbortedTransaction,
  AppendOptions,
  AppendResult,
  DeleteRecordsResult,
  EpochEndOffset,
  IsolationLevel,
  ListOffsetsResult,
  LogConfig,
  MarkerAppendOptions,
  PartitionEvent,
  PartitionLog,
  ProducerStateInfo,
  ReadOptions,
  ReadResult,
} from './types.js'
import { ListOffsetsTimestamp } from './types.js'
import { type ValidatedBatch, validateRecords } from './validate.js'

/** The leader epoch of every partition on a single node (data-plane.md §9). */
export const LEADER_EPOCH = 0

export interface PartitionLogOptions {
  readonly topic: string
  readonly partition: number
  readonly topicId: string
  readonly store: PartitionStore
  readonly config: LogConfig
  readonly crc32c: Crc32c
  readonly producerIdExpirationMs: number
  readonly maxDecompressedBatchBytes: number
  /**
   * Called with an I/O error that took the partition offline (for logging). One function serves
   * every partition of a manager, so it is told which.
   */
  readonly onStorageError?: (log: PartitionLog, error: unknown) => void
}

const EMPTY: Uint8Array = new Uint8Array(0)

/** The first link of every partition's flush and snapshot chains (one promise, not two each). */
const SETTLED: Promise<void> = Promise.resolve()

/** Kafka's AbortedTxn entry: int16 version + 4 × int64. */
const ABORTED_TXN_BYTES = 34

interface AbortedTxn {
  readonly producerId: number
  readonly firstOffset: number
  /** Offset of the ABORT marker. */
  readonly lastOffset: number
  readonly lastStableOffset: number
}

/** The last offset of the last whole batch in `records`. */
function lastOffsetIn(records: Uint8Array): number {
  const { positions } = splitBatches(records)
  const h = readBatchHeader(records, positions[positions.length - 1])
  return h.baseOffset + h.lastOffsetDelta
}

function storageErrorAppend(errorCode: number = ErrorCode.KAFKA_STORAGE_ERROR): AppendResult {
  return {
    errorCode,
    baseOffset: -1,
    lastOffset: -1,
    logAppendTime: -1,
    logStartOffset: -1,
    recordErrors: [],
    errorMessage: null,
    duplicate: false,
  }
}

/**
 * The buffer staged batches are copied into ({@link StageArena}); a batch larger than this is
 * written at once, without staging.
 */
export const STAGE_ARENA_BYTES = 1024 * 1024

/**
 * The arenas kept for reuse once their stages are written, besides the current one: a turn whose
 * batches pass one arena's bytes (a backlog read at once) takes these before it makes new ones.
 */
export const STAGE_ARENA_SPARES = 3

/**
 * Where the staged batches of every partition are copied, back to back in the order they come:
 * one buffer for the process, reused from its start once every stage with bytes in it is written
 * (at the end of each turn, usually). A batch that does not fit goes to another buffer, a spare
 * one if an earlier such turn left one (up to STAGE_ARENA_SPARES are kept), else a new one. So
 * staging allocates nothing while a turn's batches fit the buffers it has, however many
 * partitions they go to: a new buffer's pages are each a page fault on the event loop the first
 * time they are written, over 200 of them for one buffer, and they came in the turns that read a
 * backlog (BENCHMARKS.md, "The latency runs' running stalls sampled with the kernel's stacks").
 */
export class StageArena {
  static current = new StageArena()
  /** Arenas not current whose stages are all written. */
  static readonly spares: StageArena[] = []
  readonly buf = Buffer.allocUnsafeSlow(STAGE_ARENA_BYTES)
  used = 0
  /** Stages with bytes in this buffer not yet written. */
  stages = 0

  /** A copy of `bytes` in the current buffer, which `stage` now has bytes in. */
  static copy(bytes: Uint8Array, stage: Pick<Stage, 'arenas'>): Buffer {
    let arena = StageArena.current
    if (arena.used + bytes.byteLength > STAGE_ARENA_BYTES) {
      arena = StageArena.spares.pop() ?? new StageArena()
      StageArena.current = arena
    }
    if (!stage.arenas.includes(arena)) {
      stage.arenas.push(arena)
      arena.stages++
    }
    const at = arena.used
    arena.buf.set(bytes, at)
    arena.used = at + bytes.byteLength
    return arena.buf.subarray(at, arena.used)
  }

  /** `stage` is written (or never will be): its bytes are no longer needed. */
  static release(stage: Pick<Stage, 'arenas'>): void {
    for (const arena of stage.arenas) {
      if (--arena.stages > 0) continue
      arena.used = 0
      // An arena leaves `current` only with stages in it: it comes here once, when they are written.
      if (arena !== StageArena.current && StageArena.spares.length < STAGE_ARENA_SPARES)
        StageArena.spares.push(arena)
    }
  }
}

/**
 * Coalesced appends of one partition (AppendOptions.coalesce) waiting for their write: validated,
 * given their offsets, applied to the producer state, copied ({@link StageArena}), and written to
 * the store together once the turn's socket reads are done (a setImmediate), or earlier when
 * something must see them written first (a roll, an fsync, a marker, an append that is not
 * coalesced, a producer snapshot, close). Until then nothing of them is visible: the log end
 * offset, the high watermark, reads and listeners are the store's, the written data's. Offsets are
 * taken past them, and the producer state already holds them, so a retried batch among them is a
 * duplicate, answered once they are written.
 */
interface Stage {
  /** The staged bytes in order: one chunk while they lie back to back in one buffer. */
  readonly chunks: Uint8Array[]
  readonly arenas: StageArena[]
  /** Bytes staged. */
  size: number
  readonly spans: AppendBatchSpan[]
  /** The offset after the last staged batch. */
  nextOffset: number
  messages: number
  /** When the first append was staged (flush.ms). */
  readonly now: number
  /** Settled with NONE once written (and fsynced when flush.messages asks), else the error code. */
  readonly written: Promise<number>
  readonly settle: (errorCode: number) => void
}

function newStage(nextOffset: number, now: number): Stage {
  let settle!: (errorCode: number) => void
  const written = new Promise<number>((resolve) => {
    settle = resolve
  })
  return { chunks: [], arenas: [], size: 0, spans: [], nextOffset, messages: 0, now, written, settle }
}

/** Copies a batch into the stage's bytes, next to its previous chunk when they touch. */
function stageCopy(stage: Stage, bytes: Uint8Array): Buffer {
  const copy = StageArena.copy(bytes, stage)
  const chunks = stage.chunks
  const last = chunks[chunks.length - 1]
  if (
    last !== undefined &&
    last.buffer === copy.buffer &&
    last.byteOffset + last.byteLength === copy.byteOffset
  )
    chunks[chunks.length - 1] = new Uint8Array(
      last.buffer,
      last.byteOffset,
      last.byteLength + copy.byteLength,
    )
  else chunks.push(copy)
  stage.size += copy.byteLength
  return copy
}

export class PartitionLogImpl implements PartitionLog {
  readonly topic: string
  readonly partition: number
  readonly topicId: string
  readonly leaderEpoch = LEADER_EPOCH
  readonly #store: PartitionStore
  readonly #crc32c: Crc32c
  readonly #producers: ProducerStateManager
  /** Made by the first listener: most partitions of a large server never have one. */
  #listeners: Set<(event: PartitionEvent) => void> | null = null
  /**
   * The listeners as an array, made when the set has changed since the last emit: every append
   * emits, and copying the set each time was garbage per batch.
   */
  #listenersCopy: readonly ((event: PartitionEvent) => void)[] | null = null
  /** "<topic>-<partition>", as Kafka names a partition in messages. */
  readonly #topicPartition: string
  readonly #expirationMs: number
  readonly #maxDecompressed: number
  readonly #onStorageError: ((log: PartitionLog, error: unknown) => void) | undefined
  #config: LogConfig
  #logStartOffset = 0
  #online = true
  #deleted = false
  #unflushedMessages = 0
  #oldestUnflushedMs = -1
  #flushChain: Promise<void> = SETTLED
  /** Aborted transactions (Kafka's transaction index), by marker offset. */
  #aborted: AbortedTxn[] = []
  #snapshotChain: Promise<void> = SETTLED
  /** Coalesced appends not yet written, or null. */
  #stage: Stage | null = null
  #writeScheduled = false
  /** The callback that writes the stage out, made at the first append. */
  #writeOut: (() => void) | null = null
  /** Set while the cleaner rewrites a segment: retention leaves that partition alone. */
  cleaning = false

  constructor(o: PartitionLogOptions) {
    this.topic = o.topic
    this.partition = o.partition
    this.#topicPartition = `${o.topic}-${o.partition}`
    this.topicId = o.topicId
    this.#store = o.store
    this.#config = o.config
    this.#crc32c = o.crc32c
    this.#expirationMs = o.producerIdExpirationMs
    this.#maxDecompressed = o.maxDecompressedBatchBytes
    this.#onStorageError = o.onStorageError
    this.#producers = new ProducerStateManager(this.#topicPartition)
  }

  /** Opens the store and rebuilds producer state: newest snapshot, then the batches after it. */
  async open(now: number): Promise<{ recovered: boolean; truncatedBytes: number }> {
    const opened = await this.#store.open(now)
    // Never past the log end: a machine crash can lose an unflushed tail that a DeleteRecords
    // had already moved the start offset into.
    this.#logStartOffset = Math.min(
      Math.max(opened.logStartOffset, this.#firstSegmentBase()),
      this.#store.logEndOffset,
    )
    let replayFrom = this.#logStartOffset
    const snap = opened.producerSnapshot
    if (snap !== null && snap.offset <= this.#store.logEndOffset) {
      if (this.#producers.load(snap.bytes, this.#crc32c, now, this.#expirationMs)) {
        replayFrom = snap.offset
        if (snap.aborted !== null) this.#aborted = this.#decodeAborted(snap.aborted, snap.offset)
      }
    }
    this.#replayProducerState(replayFrom)
    return { recovered: opened.recovered, truncatedBytes: opened.truncatedBytes }
  }

  #firstSegmentBase(): number {
    const segs = this.#store.segments()
    return segs.length > 0 ? segs[0].baseOffset : 0
  }

  #replayProducerState(from: number): void {
    for (const b of this.#store.batchesFrom(from)) {
      if (b.baseOffset < from) continue
      const h = readBatchHeader(b.bytes, 0)
      if (h.producerId < 0) continue
      if (isControl(h.attributes))
        this.#applyMarker(h, h.baseOffset, h.maxTimestamp, this.#readMarker(b.bytes, h))
      else this.#producers.update(h, h.baseOffset, h.maxTimestamp)
    }
  }

  /**
   * A transaction marker at `offset` ends its producer's open transaction; an ABORT that ends one
   * adds it to the aborted transactions (Kafka's transaction index entry).
   */
  #applyMarker(
    h: BatchHeader,
    offset: number,
    timestamp: number,
    marker: { type: number; coordinatorEpoch: number } | null,
  ): void {
    const first = this.#producers.completeTransaction(
      h.producerId,
      h.producerEpoch,
      marker?.coordinatorEpoch ?? -1,
      timestamp,
    )
    if (first >= 0 && marker?.type === ControlRecordType.ABORT) {
      const unstable = this.#producers.firstUnstableOffset()
      this.#aborted.push({
        producerId: h.producerId,
        firstOffset: first,
        lastOffset: offset,
        lastStableOffset: unstable >= 0 ? unstable : offset + 1,
      })
    }
  }

  /** Aborted transactions as stored with a snapshot: 34-byte entries (version 0, Kafka's AbortedTxn). */
  #encodeAborted(): Uint8Array {
    const live = this.#aborted.filter((a) => a.lastOffset >= this.#logStartOffset)
    const out = new Uint8Array(live.length * ABORTED_TXN_BYTES)
    const dv = new DataView(out.buffer)
    const i64 = (pos: number, v: number): void => {
      const hi = Math.floor(v / 4294967296)
      dv.setInt32(pos, hi)
      dv.setUint32(pos + 4, v - hi * 4294967296)
    }
    live.forEach((a, i) => {
      const pos = i * ABORTED_TXN_BYTES
      dv.setInt16(pos, 0)
      i64(pos + 2, a.producerId)
      i64(pos + 10, a.firstOffset)
      i64(pos + 18, a.lastOffset)
      i64(pos + 26, a.lastStableOffset)
    })
    return out
  }

  #decodeAborted(bytes: Uint8Array, below: number): AbortedTxn[] {
    const out: AbortedTxn[] = []
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const i64 = (pos: number): number => dv.getInt32(pos) * 4294967296 + dv.getUint32(pos + 4)
    for (let pos = 0; pos + ABORTED_TXN_BYTES <= bytes.byteLength; pos += ABORTED_TXN_BYTES) {
      const a = {
        producerId: i64(pos + 2),
        firstOffset: i64(pos + 10),
        lastOffset: i64(pos + 18),
        lastStableOffset: i64(pos + 26),
      }
      if (a.lastOffset < below) out.push(a)
    }
    return out
  }

  /** The (type, coordinator epoch) of a transaction marker, or null when it cannot be read. */
  #readMarker(bytes: Uint8Array, h: BatchHeader): { type: number; coordinatorEpoch: number } | null {
    try {
      const recs = decodeRecords(batchBody(bytes, 0), h.recordsCount)
      const r = recs[0]
      if (r === undefined || r.key === null || r.key.byteLength < 4) return null
      const kv = new DataView(r.key.buffer, r.key.byteOffset, r.key.byteLength)
      let coordinatorEpoch = -1
      if (r.value !== null && r.value.byteLength >= 6) {
        coordinatorEpoch = new DataView(r.value.buffer, r.value.byteOffset, r.value.byteLength).getInt32(2)
      }
      return { type: kv.getInt16(2), coordinatorEpoch }
    } catch {
      return null
    }
  }

  get config(): LogConfig {
    return this.#config
  }
  set config(c: LogConfig) {
    this.#config = c
  }
  get online(): boolean {
    return this.#online
  }
  get logStartOffset(): number {
    return this.#logStartOffset
  }
  get logEndOffset(): number {
    return this.#store.logEndOffset
  }
  get highWatermark(): number {
    return this.#store.logEndOffset
  }
  /**
   * Kafka's LSO: the first offset of the earliest open transaction when it is below the high
   * watermark, else the high watermark; never below the log start offset. On a single node a
   * transaction stops holding it back as soon as its marker is appended.
   */
  get lastStableOffset(): number {
    const hw = this.highWatermark
    const unstable = this.#producers.firstUnstableOffset()
    if (unstable < 0 || unstable >= hw) return hw
    return Math.max(unstable, this.#logStartOffset)
  }

  /**
   * The cleaner found these ABORT markers (producer id, marker offset) with no batch of their
   * transaction left: their aborted-transaction entries go. When any went, the list is persisted
   * with a producer snapshot at the log end (taken now, so it matches the producer state), so a
   * restart starts from it instead of an older snapshot's list. Returns how many went.
   */
  dropAbortedTransactions(markers: readonly { producerId: number; lastOffset: number }[]): number {
    if (markers.length === 0 || this.#aborted.length === 0) return 0
    const settled = new Set(markers.map((m) => `${m.producerId}:${m.lastOffset}`))
    const before = this.#aborted.length
    this.#aborted = this.#aborted.filter((a) => !settled.has(`${a.producerId}:${a.lastOffset}`))
    const dropped = before - this.#aborted.length
    if (dropped > 0 && this.#online) this.#snapshotAtLogEnd()
    return dropped
  }

  /** True when the batch of `producerId` at `offset` belongs to an aborted transaction. */
  isAborted(producerId: number, offset: number): boolean {
    for (const a of this.#aborted) {
      if (a.producerId === producerId && a.firstOffset <= offset && offset < a.lastOffset) return true
    }
    return false
  }

  /**
   * Aborted transactions a read_committed read from `fetchOffset` returning data up to
   * `upperBound` (exclusive) must list: marker at or after fetchOffset, first offset below the
   * bound (Kafka's collectAbortedTxns).
   */
  abortedTransactionsFor(fetchOffset: number, upperBound: number): AbortedTransaction[] {
    const out: AbortedTransaction[] = []
    for (const a of this.#aborted) {
      if (a.lastOffset >= fetchOffset && a.firstOffset < upperBound) {
        out.push({ producerId: a.producerId, firstOffset: a.firstOffset })
      }
    }
    return out
  }

  get sizeInBytes(): number {
    return this.#store.sizeInBytes
  }

  /** The store (for the cleaner and the manager). */
  get store(): PartitionStore {
    return this.#store
  }
  get producerStateManager(): ProducerStateManager {
    return this.#producers
  }

  addListener(listener: (event: PartitionEvent) => void): () => void {
    const listeners = (this.#listeners ??= new Set())
    listeners.add(listener)
    this.#listenersCopy = null
    return () => {
      if (listeners.delete(listener)) this.#listenersCopy = null
    }
  }

  /**
   * Tells listeners; a throwing listener does not stop the others. Those registered when it starts
   * are told, also one that an earlier one removes; one added meanwhile is not.
   */
  emit(event: PartitionEvent): void {
    if (this.#listeners === null || this.#listeners.size === 0) return
    this.#listenersCopy ??= [...this.#listeners]
    for (const l of this.#listenersCopy) {
      try {
        l(event)
      } catch {
        // listeners are the caller's; their failures are theirs
      }
    }
  }

  /** Takes the partition offline after an I/O failure. */
  fail(error: unknown): void {
    if (!this.#online) return
    this.#online = false
    this.#onStorageError?.(this, error)
    this.emit('offline')
  }

  /** The error of an operation on a partition that cannot serve: deleted, or offline after an I/O error. */
  #unavailable(): number {
    return this.#deleted ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.KAFKA_STORAGE_ERROR
  }

  markDeleted(): void {
    this.#deleted = true
    this.#online = false
    // Staged appends are never written: they answer UNKNOWN_TOPIC_OR_PARTITION.
    this.#writeStage()
    this.emit('deleted')
  }

  append(records: Uint8Array, opts: AppendOptions): AppendResult | Promise<AppendResult> {
    if (!this.#online) return storageErrorAppend(this.#unavailable())
    const now = opts.now
    const v = validateRecords(records, {
      config: this.#config,
      now,
      topicPartition: this.#topicPartition,
      produceVersion: opts.produceVersion ?? 9,
      origin: opts.origin ?? 'client',
      crc32c: this.#crc32c,
      maxDecompressedBytes: this.#maxDecompressed,
      recordsOwned: opts.recordsOwned,
    })
    if (!v.ok) {
      return {
        errorCode: v.errorCode,
        baseOffset: -1,
        lastOffset: -1,
        logAppendTime: -1,
        logStartOffset: v.withLogStartOffset ? this.#logStartOffset : -1,
        recordErrors: v.recordErrors,
        errorMessage: v.errorMessage,
        duplicate: false,
      }
    }
    // Producer-state checks need the offsets the batches would get.
    let next = this.#nextOffset()
    const client = (opts.origin ?? 'client') === 'client'
    for (const b of v.batches) {
      if (client) {
        const check = this.#producers.check(b.header, next, opts.transactionVerified)
        if (check.kind === 'duplicate') {
          const d = check.batch
          const duplicate: AppendResult = {
            errorCode: ErrorCode.NONE,
            baseOffset: d.lastOffset - d.offsetDelta,
            lastOffset: d.lastOffset,
            logAppendTime: d.timestamp,
            logStartOffset: this.#logStartOffset,
            recordErrors: [],
            errorMessage: null,
            duplicate: true,
          }
          // The original is staged, not yet written: the duplicate is answered as it will be.
          const stage = this.#stage
          if (stage !== null && d.lastOffset >= this.#store.logEndOffset)
            return stage.written.then((code) =>
              code === ErrorCode.NONE ? duplicate : storageErrorAppend(code),
            )
          return duplicate
        }
        if (check.kind === 'error') return this.#producerError(check.errorCode)
      } else if (isControl(b.header.attributes) && b.header.producerId >= 0) {
        const marker = this.#readMarker(b.bytes, b.header)
        const check = this.#producers.checkMarker(
          b.header.producerId,
          b.header.producerEpoch,
          marker?.coordinatorEpoch ?? -1,
          opts.transactionVersion ?? 0,
        )
        if (check.kind === 'error') return this.#producerError(check.errorCode)
      }
      next += b.header.lastOffsetDelta + 1
    }
    if (opts.coalesce === true) return this.#stageBatches(v.batches, now, v.logAppendTime)
    return this.#write(v.batches, now, v.logAppendTime, null)
  }

  /** The offset the next append gets: past the written data and the staged appends. */
  #nextOffset(): number {
    return this.#stage === null ? this.#store.logEndOffset : this.#stage.nextOffset
  }

  /**
   * Stages checked batches for the turn's write (see {@link Stage}): offsets, the copy, producer
   * state; the result once they are written. A request larger than a stage is written at once.
   */
  #stageBatches(
    batches: readonly ValidatedBatch[],
    now: number,
    logAppendTime: number,
  ): AppendResult | Promise<AppendResult> {
    for (const b of batches)
      if (b.bytes.byteLength > STAGE_ARENA_BYTES) return this.#write(batches, now, logAppendTime, null)
    const baseOffset = this.#nextOffset()
    let stage: Stage | null = null
    try {
      for (const b of batches) {
        const h = b.header
        this.#maybeRoll(now, h.maxTimestamp, b.bytes.byteLength, h.lastOffsetDelta)
        // A roll writes the stage first.
        if (!this.#online) return storageErrorAppend(this.#unavailable())
        if (this.#stage === null) {
          this.#stage = newStage(this.#store.logEndOffset, now)
          if (!this.#writeScheduled) {
            this.#writeScheduled = true
            setImmediate(
              (this.#writeOut ??= () => {
                this.#writeScheduled = false
                this.#writeStage()
              }),
            )
          }
        }
        stage = this.#stage
        const off = stage.nextOffset
        const copy = stageCopy(stage, b.bytes)
        setBaseOffset(copy, 0, off)
        setPartitionLeaderEpoch(copy, 0, LEADER_EPOCH)
        const lastOffset = off + h.lastOffsetDelta
        stage.spans.push({
          baseOffset: off,
          lastOffset,
          maxTimestamp: h.maxTimestamp,
          size: copy.byteLength,
        })
        stage.nextOffset = lastOffset + 1
        stage.messages += h.recordsCount
        this.#producers.update(h, off, h.maxTimestamp)
      }
    } catch (e) {
      this.fail(e)
      return storageErrorAppend()
    }
    if (stage === null) return this.#write(batches, now, logAppendTime, null)
    const appended: AppendResult = {
      errorCode: ErrorCode.NONE,
      baseOffset,
      lastOffset: stage.nextOffset - 1,
      logAppendTime,
      logStartOffset: this.#logStartOffset,
      recordErrors: [],
      errorMessage: null,
      duplicate: false,
    }
    return stage.written.then((code) => (code === ErrorCode.NONE ? appended : storageErrorAppend(code)))
  }

  /**
   * Writes the staged appends in one store write, then makes them visible (listeners) and applies
   * the flush policy; their results follow. A failed write takes the partition offline and fails
   * every append of the stage; the store leaves nothing of it behind. False when the partition is
   * offline (or deleted) afterwards.
   */
  #writeStage(): boolean {
    const stage = this.#stage
    if (stage === null) return this.#online
    this.#stage = null
    if (!this.#online) {
      StageArena.release(stage)
      stage.settle(this.#unavailable())
      return false
    }
    try {
      this.#store.appendBatches(stage.chunks, stage.spans)
    } catch (e) {
      StageArena.release(stage)
      this.fail(e)
      stage.settle(ErrorCode.KAFKA_STORAGE_ERROR)
      return false
    }
    StageArena.release(stage)
    this.#writeBack()
    this.emit('append')
    if (this.#counted(stage.now, stage.messages)) {
      this.flush().then(
        () => stage.settle(ErrorCode.NONE),
        () => stage.settle(ErrorCode.KAFKA_STORAGE_ERROR),
      )
    } else stage.settle(ErrorCode.NONE)
    return true
  }

  /**
   * Appends a transaction marker the coordinator built (transactions.md §8.3). The batch is the
   * server's own, so none of the checks a client batch needs (framing, CRC, records, timestamps) run
   * and nothing is decoded: the producer state is checked against the marker's fields, then a copy
   * of its bytes is stored, as `append` with origin `coordinator` would store it.
   */
  appendMarker(marker: TxnMarker, opts: MarkerAppendOptions): AppendResult | Promise<AppendResult> {
    if (!this.#online) return storageErrorAppend(this.#unavailable())
    const size = marker.bytes.byteLength
    // The size limits of any batch: a topic may be configured below a marker's 78 bytes.
    if (size > this.#config.maxMessageBytes) return this.#rejected(ErrorCode.MESSAGE_TOO_LARGE)
    if (size > this.#config.segmentBytes) return this.#rejected(ErrorCode.RECORD_LIST_TOO_LARGE)
    if (marker.producerId >= 0) {
      const check = this.#producers.checkMarker(
        marker.producerId,
        marker.producerEpoch,
        marker.coordinatorEpoch,
        opts.transactionVersion,
      )
      if (check.kind === 'error') return this.#producerError(check.errorCode)
    }
    const bytes = marker.bytes.slice()
    // A LogAppendTime topic stamps the marker as it stamps every batch.
    const logAppendTime = this.#config.messageTimestampType === 'LogAppendTime'
    if (logAppendTime) setMaxTimestamp(bytes, 0, opts.now, true, this.#crc32c)
    const batch = { bytes, header: readBatchHeader(bytes, 0) }
    const type = marker.committed ? ControlRecordType.COMMIT : ControlRecordType.ABORT
    return this.#write([batch], opts.now, logAppendTime ? opts.now : -1, {
      type,
      coordinatorEpoch: marker.coordinatorEpoch,
    })
  }

  /** A failure before anything was written, answered with no log start offset. */
  #rejected(errorCode: number): AppendResult {
    return { ...storageErrorAppend(errorCode), logStartOffset: -1 }
  }

  /**
   * Writes checked batches: offsets, the store, producer state (a marker's fields, when the caller
   * has them, save reading its record back), listeners and the flush policy.
   */
  #write(
    batches: readonly ValidatedBatch[],
    now: number,
    logAppendTime: number,
    marker: { type: number; coordinatorEpoch: number } | null,
  ): AppendResult | Promise<AppendResult> {
    // Staged appends came first: they are written before this one.
    if (!this.#writeStage()) return storageErrorAppend(this.#unavailable())
    const baseOffset = this.#store.logEndOffset
    let messages = 0
    try {
      for (const b of batches) {
        this.#maybeRoll(now, b.header.maxTimestamp, b.bytes.byteLength, b.header.lastOffsetDelta)
        const off = this.#store.logEndOffset
        setBaseOffset(b.bytes, 0, off)
        setPartitionLeaderEpoch(b.bytes, 0, LEADER_EPOCH)
        const maxTimestamp = b.header.maxTimestamp
        this.#store.append(b.bytes, {
          baseOffset: off,
          lastOffset: off + b.header.lastOffsetDelta,
          maxTimestamp,
        })
        // The validated header: the base offset and leader epoch just set are not among what the
        // producer state and the markers read.
        const h = b.header
        if (isControl(h.attributes))
          this.#applyMarker(h, off, maxTimestamp, marker ?? this.#readMarker(b.bytes, h))
        else this.#producers.update(h, off, maxTimestamp)
        messages += h.recordsCount
      }
    } catch (e) {
      this.fail(e)
      return storageErrorAppend()
    }
    const lastOffset = this.#store.logEndOffset - 1
    this.#writeBack()
    this.emit('append')
    const mustFlush = this.#counted(now, messages)
    const appended: AppendResult = {
      errorCode: ErrorCode.NONE,
      baseOffset,
      lastOffset,
      logAppendTime,
      logStartOffset: this.#logStartOffset,
      recordErrors: [],
      errorMessage: null,
      duplicate: false,
    }
    // Everything above ran in the caller's turn; only an fsync the acknowledgement must wait for
    // makes the answer a promise.
    if (mustFlush) {
      return this.flush().then(
        () => appended,
        () => storageErrorAppend(),
      )
    }
    return appended
  }

  /**
   * Lets the store write the active segment back in the background (PartitionStore.writeBack):
   * never awaited, no flush, but a failure of it takes the partition offline as a failed flush does.
   */
  #writeBack(): void {
    const p = this.#store.writeBack()
    if (p !== null) p.catch((e: unknown) => this.fail(e))
  }

  /**
   * Counts written messages for the flush policy (flush.messages; flush.ms is checked by the
   * manager's scheduler): true when their acknowledgement must wait for an fsync.
   */
  #counted(now: number, messages: number): boolean {
    if (this.#unflushedMessages === 0) this.#oldestUnflushedMs = now
    this.#unflushedMessages += messages
    return this.#unflushedMessages >= this.#config.flushMessages
  }

  #producerError(errorCode: number): AppendResult {
    return {
      errorCode,
      baseOffset: -1,
      lastOffset: -1,
      logAppendTime: -1,
      logStartOffset: this.#logStartOffset,
      recordErrors: [],
      errorMessage: null,
      duplicate: false,
    }
  }

  /**
   * Rolls the active segment when the incoming batch would not fit or it is too old (Kafka's
   * shouldRoll). Staged appends count as the active segment's (they are written to it first).
   */
  #maybeRoll(now: number, incomingMaxTimestamp: number, incoming: number, lastOffsetDelta: number): void {
    const active = this.#store.activeSegment()
    const stage = this.#stage
    const size = active.sizeInBytes + (stage === null ? 0 : stage.size)
    if (size === 0) return
    const c = this.#config
    const first =
      active.firstBatchTimestamp >= 0 || stage === null || active.sizeInBytes > 0
        ? active.firstBatchTimestamp
        : stage.spans[0].maxTimestamp
    // Kafka's timeWaitedForRoll: from the first batch's timestamp to the incoming batch's, or from
    // the segment's creation to now when the segment has no timestamp.
    const waited = first >= 0 ? incomingMaxTimestamp - first : now - active.createdMs
    const jitter = c.segmentJitterMs > 0 ? this.#jitter(active.baseOffset, c.segmentJitterMs) : 0
    const tooBig = size > c.segmentBytes - incoming
    const tooOld = waited > c.segmentMs - jitter
    const overflow = this.#nextOffset() + lastOffsetDelta - active.baseOffset > 2147483647
    // Kafka preallocates each index to segment.index.bytes: 8-byte offset entries, 12-byte time
    // entries. A staged batch adds at most one entry to each.
    const staged = stage === null ? 0 : stage.spans.length
    const indexFull =
      (active.offsetIndexEntries ?? 0) + staged >= Math.floor(c.segmentIndexBytes / 8) ||
      (active.timeIndexEntries ?? 0) + staged >= Math.floor(c.segmentIndexBytes / 12)
    if (tooBig || tooOld || overflow || indexFull) this.roll(now)
  }

  /** A stable per-segment jitter in [0, max): Kafka draws it at random per segment. */
  #jitter(base: number, max: number): number {
    return Math.abs((base * 2654435761) % max)
  }

  /** Rolls now: new active segment, producer snapshot at its base, older data flushed in the background. */
  roll(now: number): void {
    if (!this.#writeStage()) return
    const before = this.#store.segmentCount
    this.#store.roll(now)
    if (this.#store.segmentCount === before) return
    this.#snapshotAtLogEnd()
    void this.flush().catch(() => {})
  }

  /** A producer snapshot (with the aborted list) at the log end, taken now, written in order. */
  #snapshotAtLogEnd(): void {
    // The producer state holds the staged appends: they are written first.
    if (!this.#writeStage()) return
    const offset = this.#store.logEndOffset
    const snap = this.#producers.snapshot(this.#crc32c)
    const aborted = this.#encodeAborted()
    this.#snapshotChain = this.#snapshotChain
      .then(() => this.#store.writeProducerSnapshot(offset, snap, aborted))
      .catch((e) => this.fail(e))
  }

  /** fsync everything appended so far (calls are serialised). */
  flush(): Promise<void> {
    this.#writeStage()
    const messages = this.#unflushedMessages
    this.#unflushedMessages = 0
    this.#oldestUnflushedMs = -1
    const p = this.#flushChain.then(() => this.#store.flush())
    this.#flushChain = p.catch((e) => {
      this.#unflushedMessages += messages
      this.fail(e)
    })
    return p
  }

  /** For the flush scheduler: true when flush.ms says the unflushed data is due. */
  flushDue(now: number): boolean {
    return this.#unflushedMessages > 0 && now - this.#oldestUnflushedMs >= this.#config.flushMs
  }

  async read(fetchOffset: number, maxBytes: number, opts: ReadOptions): Promise<ReadResult> {
    if (!this.#online) return this.#readError(this.#unavailable())
    const leo = this.#store.logEndOffset
    if (fetchOffset < this.#logStartOffset || fetchOffset > leo)
      return this.#readError(ErrorCode.OFFSET_OUT_OF_RANGE)
    const hw = this.highWatermark
    const lso = this.lastStableOffset
    const end = opts.isolationLevel === 'read_committed' ? lso : hw
    const maxOffset = Math.min(opts.maxOffset ?? end, end)
    let records = EMPTY
    if (fetchOffset < maxOffset) {
      try {
        const read = this.#store.read(
          fetchOffset,
          Math.max(0, maxBytes),
          maxOffset,
          opts.minOneMessage,
          opts.loans,
        )
        if (read instanceof Uint8Array) records = read
        else {
          // Read off the event loop: appends, rolls and retention went on meanwhile. The bytes
          // are the segment's as they were (a deleted segment stays readable until the read
          // ends); a partition deleted or taken offline meanwhile answers as it would now.
          records = await read.catch((e: unknown) => {
            if (this.#online) throw e
            return EMPTY
          })
          if (!this.#online) return this.#readError(this.#unavailable())
        }
      } catch (e) {
        this.fail(e)
        return this.#readError(ErrorCode.KAFKA_STORAGE_ERROR)
      }
    }
    return {
      errorCode: ErrorCode.NONE,
      records,
      highWatermark: hw,
      lastStableOffset: lso,
      logStartOffset: this.#logStartOffset,
      abortedTransactions:
        opts.isolationLevel === 'read_committed'
          ? records.byteLength === 0
            ? []
            : this.abortedTransactionsFor(fetchOffset, lastOffsetIn(records) + 1)
          : null,
    }
  }

  #readError(errorCode: number): ReadResult {
    return {
      errorCode,
      records: EMPTY,
      highWatermark: -1,
      lastStableOffset: -1,
      logStartOffset: -1,
      abortedTransactions: null,
    }
  }

  bytesAvailable(fetchOffset: number, isolationLevel: IsolationLevel, cap = Number.MAX_SAFE_INTEGER): number {
    if (!this.#online) return 0
    const end = isolationLevel === 'read_committed' ? this.lastStableOffset : this.highWatermark
    if (fetchOffset >= end || fetchOffset < this.#logStartOffset) return 0
    try {
      // Stored bytes are counted without reading them (this runs at every append while a Fetch
      // is parked). On a single node the readable end is the log end, or, while a transaction is
      // open, the LSO: the base offset of that transaction's first batch, so the bytes before it
      // are those from the fetch offset's batch less those from the batch at the LSO.
      const store = this.#store
      if (end >= store.logEndOffset) return Math.min(store.bytesFrom(fetchOffset), cap)
      return Math.min(Math.max(0, store.bytesFrom(fetchOffset) - store.bytesFrom(end)), cap)
    } catch (e) {
      this.fail(e)
      return 0
    }
  }

  async listOffsets(timestamp: number, isolationLevel: IsolationLevel): Promise<ListOffsetsResult> {
    const none = (offset: number, ts: number, epoch: number): ListOffsetsResult => ({
      errorCode: ErrorCode.NONE,
      offset,
      timestamp: ts,
      leaderEpoch: epoch,
    })
    if (!this.#online)
      return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, offset: -1, timestamp: -1, leaderEpoch: -1 }
    const end = isolationLevel === 'read_committed' ? this.lastStableOffset : this.highWatermark
    switch (timestamp) {
      case ListOffsetsTimestamp.LATEST:
        return none(end, -1, LEADER_EPOCH)
      case ListOffsetsTimestamp.EARLIEST:
      case ListOffsetsTimestamp.EARLIEST_LOCAL:
        return none(this.#logStartOffset, -1, LEADER_EPOCH)
      case ListOffsetsTimestamp.LATEST_TIERED:
      case ListOffsetsTimestamp.EARLIEST_PENDING_UPLOAD:
        return none(-1, -1, -1)
      case ListOffsetsTimestamp.MAX_TIMESTAMP: {
        try {
          const found = this.#maxTimestampRecord()
          if (found === null || found.offset >= end) return none(-1, -1, -1)
          return none(found.offset, found.timestamp, found.leaderEpoch)
        } catch (e) {
          this.fail(e)
          return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, offset: -1, timestamp: -1, leaderEpoch: -1 }
        }
      }
    }
    if (timestamp < 0)
      return { errorCode: ErrorCode.UNSUPPORTED_VERSION, offset: -1, timestamp: -1, leaderEpoch: -1 }
    try {
      const found = this.#offsetForTimestamp(timestamp)
      if (found === null || found.offset >= end) return none(-1, -1, -1)
      return none(found.offset, found.timestamp, found.leaderEpoch)
    } catch (e) {
      this.fail(e)
      return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, offset: -1, timestamp: -1, leaderEpoch: -1 }
    }
  }

  /** Record timestamps of a batch with their offsets, in order (decompressing when needed). */
  #recordTimestamps(bytes: Uint8Array): { offset: number; timestamp: number }[] {
    const h = readBatchHeader(bytes, 0)
    if (isLogAppendTime(h.attributes)) {
      return [{ offset: h.baseOffset, timestamp: h.maxTimestamp }]
    }
    const codec = codecOf(h.attributes)
    const body =
      codec === CompressionCodec.none
        ? batchBody(bytes, 0)
        : decompress(codec, batchBody(bytes, 0), this.#maxDecompressed)
    return decodeRecords(body, h.recordsCount).map((r) => ({
      offset: h.baseOffset + r.offsetDelta,
      timestamp: h.baseTimestamp + r.timestampDelta,
    }))
  }

  /** First record with timestamp ≥ target and offset ≥ log start offset (Kafka's findOffsetByTimestamp). */
  #offsetForTimestamp(target: number): { offset: number; timestamp: number; leaderEpoch: number } | null {
    const segs = this.#store.segments()
    const seg = segs.find((s) => s.maxTimestamp >= target && s.nextOffset > this.#logStartOffset)
    if (seg === undefined) return null
    const from = Math.max(this.#store.timestampLookup(seg.baseOffset, target), this.#logStartOffset)
    for (const b of this.#store.batchesFrom(from)) {
      const h = readBatchHeader(b.bytes, 0)
      if (h.maxTimestamp < target) continue
      for (const r of this.#recordTimestamps(b.bytes)) {
        if (r.timestamp >= target && r.offset >= this.#logStartOffset) {
          return { offset: r.offset, timestamp: r.timestamp, leaderEpoch: h.partitionLeaderEpoch }
        }
      }
    }
    return null
  }

  /**
   * The record with the largest timestamp at or after the log start offset, the earliest one if
   * tied. A segment's largest timestamp counts records that DeleteRecords (or retention) put below
   * the log start, so the segment the log start falls in is scanned for the largest one left.
   */
  #maxTimestampRecord(): { offset: number; timestamp: number; leaderEpoch: number } | null {
    const start = this.#logStartOffset
    let best: { offset: number; timestamp: number; leaderEpoch: number } | null = null
    for (const s of this.#store.segments()) {
      if (s.maxTimestamp < 0 || s.nextOffset <= start) continue
      if (best !== null && s.maxTimestamp <= best.timestamp) continue
      const whole = s.baseOffset >= start
      const largest = whole ? s.maxTimestamp : this.#largestTimestampFrom(start, s.nextOffset)
      if (largest < 0 || (best !== null && largest <= best.timestamp)) continue
      // A whole segment's first batch with its largest timestamp holds offsetOfMaxTimestamp.
      const scanFrom = whole && s.offsetOfMaxTimestamp >= s.baseOffset ? s.offsetOfMaxTimestamp : start
      best = this.#firstRecordWithTimestamp(largest, scanFrom, start, s.nextOffset) ?? best
    }
    return best
  }

  /** The largest timestamp of the records in [from, to). -1 when there is none. */
  #largestTimestampFrom(from: number, to: number): number {
    let largest = -1
    for (const b of this.#store.batchesFrom(from)) {
      const h = readBatchHeader(b.bytes, 0)
      if (h.baseOffset >= to) break
      if (h.baseOffset + h.lastOffsetDelta < from || h.maxTimestamp <= largest) continue
      if (h.baseOffset >= from) largest = h.maxTimestamp
      else {
        for (const r of this.#recordTimestamps(b.bytes)) {
          if (r.offset >= from && r.timestamp > largest) largest = r.timestamp
        }
      }
    }
    return largest
  }

  /**
   * The first record at or after `from`, before `to`, whose timestamp is `timestamp`, scanning the
   * batches from the one holding `scanFrom`.
   */
  #firstRecordWithTimestamp(
    timestamp: number,
    scanFrom: number,
    from: number,
    to: number,
  ): { offset: number; timestamp: number; leaderEpoch: number } | null {
    for (const b of this.#store.batchesFrom(Math.max(scanFrom, from))) {
      const h = readBatchHeader(b.bytes, 0)
      if (h.baseOffset >= to) break
      if (h.maxTimestamp < timestamp) continue
      for (const r of this.#recordTimestamps(b.bytes)) {
        if (r.offset >= from && r.timestamp === timestamp) {
          return { offset: r.offset, timestamp: r.timestamp, leaderEpoch: h.partitionLeaderEpoch }
        }
      }
    }
    return null
  }

  async deleteRecordsBefore(offset: number): Promise<DeleteRecordsResult> {
    const tp = `${this.topic}-${this.partition}`
    if (!this.#online)
      return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, errorMessage: null, lowWatermark: -1 }
    if (hasCompact(this.#config) && !hasDelete(this.#config)) {
      return {
        errorCode: ErrorCode.POLICY_VIOLATION,
        errorMessage: `Records of partition ${tp} can not be deleted due to the configured policy`,
        lowWatermark: -1,
      }
    }
    const hw = this.highWatermark
    const target = offset === -1 ? hw : offset
    if (target < 0) {
      return {
        errorCode: ErrorCode.OFFSET_OUT_OF_RANGE,
        errorMessage: `The offset ${target} for partition ${tp} is not valid`,
        lowWatermark: -1,
      }
    }
    if (target > hw) {
      return {
        errorCode: ErrorCode.OFFSET_OUT_OF_RANGE,
        errorMessage: `Cannot increment the log start offset to ${target} of partition ${tp} since it is larger than the high watermark ${hw}`,
        lowWatermark: -1,
      }
    }
    if (target <= this.#logStartOffset) {
      return { errorCode: ErrorCode.NONE, errorMessage: null, lowWatermark: this.#logStartOffset }
    }
    try {
      this.#logStartOffset = target
      await this.#store.setLogStartOffset(target)
    } catch (e) {
      this.fail(e)
      return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, errorMessage: null, lowWatermark: -1 }
    }
    this.#aborted = this.#aborted.filter((a) => a.lastOffset >= this.#logStartOffset)
    this.emit('start-offset')
    return { errorCode: ErrorCode.NONE, errorMessage: null, lowWatermark: this.#logStartOffset }
  }

  endOffsetForLeaderEpoch(leaderEpoch: number): EpochEndOffset {
    if (!this.#online) return { errorCode: this.#unavailable(), leaderEpoch: -1, endOffset: -1 }
    if (leaderEpoch === LEADER_EPOCH) {
      return { errorCode: ErrorCode.NONE, leaderEpoch: LEADER_EPOCH, endOffset: this.#store.logEndOffset }
    }
    return { errorCode: ErrorCode.NONE, leaderEpoch: -1, endOffset: -1 }
  }

  producerStates(): ProducerStateInfo[] {
    return this.#producers.describe()
  }

  hasOngoingTransaction(producerId: number, producerEpoch: number): boolean {
    return this.#producers.hasOngoingTransaction(producerId, producerEpoch)
  }

  /** Removes producers idle longer than producer.id.expiration.ms. */
  expireProducers(now: number): number {
    return this.#producers.expire(now, this.#expirationMs)
  }

  /**
   * One retention pass (data-plane.md §12.4): segments wholly below the log start offset, then,
   * with `delete` in the policy, by size and by time. The active segment goes only after a roll
   * leaves an empty one behind. Returns the number of segments deleted.
   */
  async applyRetention(now: number): Promise<number> {
    if (!this.#online || this.#deleted || this.cleaning) return 0
    const c = this.#config
    let deleted = 0
    try {
      deleted += await this.#deletePrefix(
        now,
        (_s, next) => next !== undefined && next.baseOffset <= this.#logStartOffset,
      )
      if (hasDelete(c) && c.retentionBytes >= 0) {
        let diff = this.#store.sizeInBytes - c.retentionBytes
        deleted += await this.#deletePrefix(now, (s) => {
          if (diff - s.sizeInBytes >= 0) {
            diff -= s.sizeInBytes
            return true
          }
          return false
        })
      }
      if (hasDelete(c) && c.retentionMs >= 0) {
        deleted += await this.#deletePrefix(now, (s) => {
          const largest = s.maxTimestamp >= 0 ? s.maxTimestamp : s.createdMs
          return now - largest > c.retentionMs
        })
      }
    } catch (e) {
      this.fail(e)
      return deleted
    }
    if (deleted > 0) {
      const first = this.#firstSegmentBase()
      if (first > this.#logStartOffset) {
        this.#logStartOffset = first
        try {
          await this.#store.setLogStartOffset(first)
        } catch (e) {
          this.fail(e)
        }
        this.#aborted = this.#aborted.filter((a) => a.lastOffset >= this.#logStartOffset)
        this.emit('start-offset')
      }
    }
    return deleted
  }

  /**
   * Deletes the longest prefix of segments satisfying `predicate` (Kafka's deletableSegments).
   * The producer state must outlive the batches it was rebuilt from: a producer snapshot at the
   * log end is made durable before the segments go, so a crash right after the deletion restarts
   * from that snapshot instead of an older one whose batches are gone (the state would go back).
   */
  async #deletePrefix(
    now: number,
    predicate: (s: SegmentInfo, next: SegmentInfo | undefined) => boolean,
  ): Promise<number> {
    const segs = this.#store.segments()
    const hw = this.highWatermark
    let n = 0
    for (let i = 0; i < segs.length; i++) {
      const s = segs[i]
      const next = segs[i + 1]
      const upper = next?.baseOffset ?? this.#store.logEndOffset
      const lastAndEmpty = next === undefined && s.sizeInBytes === 0
      if (hw >= upper && !lastAndEmpty && predicate(s, next)) n++
      else break
    }
    if (n === 0) return 0
    // A roll takes the snapshot at the new active segment's base; otherwise one is taken now.
    if (n === segs.length) this.roll(now)
    else this.#snapshotAtLogEnd()
    await this.#snapshotChain
    if (!this.#online || this.#deleted) return 0
    // Appends may have rolled segments meanwhile: the doomed ones are those below the first kept.
    const keep = n < segs.length ? segs[n].baseOffset : segs[segs.length - 1].nextOffset
    const doomed = this.#store.segments().filter((s) => s.nextOffset <= keep && s.baseOffset < keep).length
    if (doomed === 0) return 0
    this.#store.deleteOldestSegments(doomed)
    return doomed
  }

  /** Writes a producer snapshot at the log end and flushes (clean shutdown). */
  async close(): Promise<void> {
    this.#writeStage()
    if (this.#deleted) return
    if (this.#online) {
      try {
        await this.#snapshotChain
        await this.#store.writeProducerSnapshot(
          this.#store.logEndOffset,
          this.#producers.snapshot(this.#crc32c),
          this.#encodeAborted(),
        )
        await this.flush()
      } catch (e) {
        this.fail(e)
      }
    }
    await this.#store.close()
  }
}
