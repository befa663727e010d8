/**
 * One partition's log on top of a PartitionStore: validation, offset assignment, producer state,
 * reads, ListOffsets, DeleteRecords, retention and the flush policy. Every decision is taken here,
 * once, for every engine. Kafka: UnifiedLog.
 *
 * Appends are synchronous up to the store write (validation, producer checks, offset assignment,
 * the write to the page cache), so appends of a partition apply in call order and a reader never
 * sees a half-appended batch; only an fsync demanded by flush.messages is awaited.
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
  isTransactional,
  isLogAppendTime,
  readBatchHeader,
  setBaseOffset,
  setPartitionLeaderEpoch,
} from './batch.js'
import { decompress } from './compression.js'
import { hasCompact, hasDelete } from './config.js'
import { ProducerStateManager } from './producer-state.js'
import type { PartitionStore, SegmentInfo } from './storage.js'
import type {
  AbortedTransaction,
  AppendOptions,
  AppendResult,
  DeleteRecordsResult,
  EpochEndOffset,
  IsolationLevel,
  ListOffsetsResult,
  LogConfig,
  PartitionEvent,
  PartitionLog,
  ProducerStateInfo,
  ReadOptions,
  ReadResult,
} from './types.js'
import { ListOffsetsTimestamp } from './types.js'
import { validateRecords } from './validate.js'

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
  /** Called with an I/O error that took the partition offline (for logging). */
  readonly onStorageError?: (error: unknown) => void
}

const EMPTY: Uint8Array = new Uint8Array(0)
/** The control record type of an ABORT marker (COMMIT is 1). */
const ABORT_MARKER = 0

/** One aborted transaction: its producer, first offset and the offset of its ABORT marker. */
interface AbortedTxn {
  readonly producerId: number
  readonly firstOffset: number
  readonly lastOffset: number
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

export class PartitionLogImpl implements PartitionLog {
  readonly topic: string
  readonly partition: number
  readonly topicId: string
  readonly leaderEpoch = LEADER_EPOCH
  readonly #store: PartitionStore
  readonly #crc32c: Crc32c
  readonly #producers: ProducerStateManager
  readonly #listeners = new Set<(event: PartitionEvent) => void>()
  readonly #expirationMs: number
  readonly #maxDecompressed: number
  readonly #onStorageError: ((error: unknown) => void) | undefined
  #config: LogConfig
  #logStartOffset = 0
  #online = true
  #deleted = false
  #unflushedMessages = 0
  #oldestUnflushedMs = -1
  #flushChain: Promise<void> = Promise.resolve()
  #snapshotChain: Promise<void> = Promise.resolve()
  /** Kafka's transaction index, built on first use (`#abortedIndex`). */
  #aborted: AbortedTxn[] | null = null
  /** Set while the cleaner rewrites a segment: retention leaves that partition alone. */
  cleaning = false

  constructor(o: PartitionLogOptions) {
    this.topic = o.topic
    this.partition = o.partition
    this.topicId = o.topicId
    this.#store = o.store
    this.#config = o.config
    this.#crc32c = o.crc32c
    this.#expirationMs = o.producerIdExpirationMs
    this.#maxDecompressed = o.maxDecompressedBatchBytes
    this.#onStorageError = o.onStorageError
    this.#producers = new ProducerStateManager(`${o.topic}-${o.partition}`)
  }

  /** Opens the store and rebuilds producer state: newest snapshot, then the batches after it. */
  async open(now: number): Promise<{ recovered: boolean; truncatedBytes: number }> {
    const opened = await this.#store.open(now)
    this.#logStartOffset = Math.max(opened.logStartOffset, this.#firstSegmentBase())
    let replayFrom = this.#logStartOffset
    const snap = opened.producerSnapshot
    if (snap !== null && snap.offset <= this.#store.logEndOffset) {
      if (this.#producers.load(snap.bytes, this.#crc32c, now, this.#expirationMs)) replayFrom = snap.offset
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
      if (isControl(h.attributes)) {
        const marker = this.#readMarker(b.bytes, h)
        this.#producers.completeTransaction(
          h.producerId,
          h.producerEpoch,
          marker?.coordinatorEpoch ?? -1,
          h.maxTimestamp,
        )
      } else {
        this.#producers.update(h, h.baseOffset, h.maxTimestamp)
      }
    }
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
   * watermark, else the high watermark. read_committed reads stop there.
   */
  get lastStableOffset(): number {
    const hw = this.highWatermark
    const first = this.#producers.firstUnstableOffset()
    return first >= 0 && first < hw ? first : hw
  }

  /**
   * The aborted transactions of the log (Kafka's transaction index), in marker order. Built on the
   * first read_committed read by one scan of the stored batches, then kept up to date by appends;
   * entries whose marker is below the log start offset are dropped as reads pass them.
   */
  #abortedIndex(): AbortedTxn[] {
    if (this.#aborted !== null) return this.#aborted
    const aborted: AbortedTxn[] = []
    const open = new Map<number, number>()
    for (const b of this.#store.batchesFrom(this.#logStartOffset)) {
      const h = readBatchHeader(b.bytes, 0)
      if (h.producerId < 0 || !isTransactional(h.attributes)) continue
      if (isControl(h.attributes)) {
        const first = open.get(h.producerId)
        open.delete(h.producerId)
        if (first !== undefined && this.#readMarker(b.bytes, h)?.type === ABORT_MARKER)
          aborted.push({ producerId: h.producerId, firstOffset: first, lastOffset: h.baseOffset })
      } else if (!open.has(h.producerId)) {
        open.set(h.producerId, h.baseOffset)
      }
    }
    this.#aborted = aborted
    return aborted
  }

  /** The aborted transactions overlapping [from, to): a marker at or after `from`, a start before `to`. */
  #abortedBetween(from: number, to: number): AbortedTransaction[] {
    const index = this.#abortedIndex()
    let drop = 0
    while (drop < index.length && index[drop].lastOffset < this.#logStartOffset) drop++
    if (drop > 0) index.splice(0, drop)
    const out: AbortedTransaction[] = []
    for (const a of index) {
      if (a.lastOffset >= from && a.firstOffset < to)
        out.push({ producerId: a.producerId, firstOffset: a.firstOffset })
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
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** Tells listeners; a throwing listener does not stop the others. */
  emit(event: PartitionEvent): void {
    for (const l of [...this.#listeners]) {
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
    this.#onStorageError?.(error)
    this.emit('offline')
  }

  /** The error of an operation on a partition that cannot serve: deleted, or offline after an I/O error. */
  #unavailable(): number {
    return this.#deleted ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.KAFKA_STORAGE_ERROR
  }

  markDeleted(): void {
    this.#deleted = true
    this.#online = false
    this.emit('deleted')
  }

  async append(records: Uint8Array, opts: AppendOptions): Promise<AppendResult> {
    if (!this.#online) return storageErrorAppend(this.#unavailable())
    const now = opts.now
    const v = validateRecords(records, {
      config: this.#config,
      now,
      topicPartition: `${this.topic}-${this.partition}`,
      produceVersion: opts.produceVersion ?? 9,
      origin: opts.origin ?? 'client',
      crc32c: this.#crc32c,
      maxDecompressedBytes: this.#maxDecompressed,
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
    let next = this.#store.logEndOffset
    const client = (opts.origin ?? 'client') === 'client'
    for (const b of v.batches) {
      if (client) {
        const check = this.#producers.check(b.header, next, opts.transactionVerified)
        if (check.kind === 'duplicate') {
          const d = check.batch
          return {
            errorCode: ErrorCode.NONE,
            baseOffset: d.lastOffset - d.offsetDelta,
            lastOffset: d.lastOffset,
            logAppendTime: d.timestamp,
            logStartOffset: this.#logStartOffset,
            recordErrors: [],
            errorMessage: null,
            duplicate: true,
          }
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
    // Write.
    const baseOffset = this.#store.logEndOffset
    let messages = 0
    try {
      for (const b of v.batches) {
        this.#maybeRoll(now, b.header.maxTimestamp, b.bytes.byteLength, b.header.lastOffsetDelta)
        const off = this.#store.logEndOffset
        setBaseOffset(b.bytes, 0, off)
        setPartitionLeaderEpoch(b.bytes, 0, LEADER_EPOCH)
        const maxTimestamp = b.header.maxTimestamp
        this.#store.append(b.bytes, {
          baseOffset: off,
          lastOffset: off + b.header.lastOffsetDelta,
          maxTimestamp,
          offsetOfMaxTimestamp: off + b.offsetDeltaOfMaxTimestamp,
        })
        const h = readBatchHeader(b.bytes, 0)
        if (isControl(h.attributes)) {
          const marker = this.#readMarker(b.bytes, h)
          const first = this.#producers.completeTransaction(
            h.producerId,
            h.producerEpoch,
            marker?.coordinatorEpoch ?? -1,
            maxTimestamp,
          )
          if (this.#aborted !== null && first >= 0 && marker?.type === ABORT_MARKER)
            this.#aborted.push({ producerId: h.producerId, firstOffset: first, lastOffset: off })
        } else {
          this.#producers.update(h, off, maxTimestamp)
        }
        messages += h.recordsCount
      }
    } catch (e) {
      this.fail(e)
      return storageErrorAppend()
    }
    const lastOffset = this.#store.logEndOffset - 1
    this.emit('append')
    // Flush policy (flush.messages; flush.ms is checked by the manager's scheduler).
    if (this.#unflushedMessages === 0) this.#oldestUnflushedMs = now
    this.#unflushedMessages += messages
    if (this.#unflushedMessages >= this.#config.flushMessages) {
      try {
        await this.flush()
      } catch {
        return storageErrorAppend()
      }
    }
    return {
      errorCode: ErrorCode.NONE,
      baseOffset,
      lastOffset,
      logAppendTime: v.logAppendTime,
      logStartOffset: this.#logStartOffset,
      recordErrors: [],
      errorMessage: null,
      duplicate: false,
    }
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

  /** Rolls the active segment when the incoming batch would not fit or it is too old (Kafka's shouldRoll). */
  #maybeRoll(now: number, incomingMaxTimestamp: number, incoming: number, lastOffsetDelta: number): void {
    const active = this.#store.activeSegment()
    if (active.sizeInBytes === 0) return
    const c = this.#config
    // Kafka's timeWaitedForRoll: from the first batch's timestamp to the incoming batch's, or from
    // the segment's creation to now when the segment has no timestamp.
    const waited =
      active.firstBatchTimestamp >= 0
        ? incomingMaxTimestamp - active.firstBatchTimestamp
        : now - active.createdMs
    const jitter = c.segmentJitterMs > 0 ? this.#jitter(active.baseOffset, c.segmentJitterMs) : 0
    const tooBig = active.sizeInBytes > c.segmentBytes - incoming
    const tooOld = waited > c.segmentMs - jitter
    const overflow = this.#store.logEndOffset + lastOffsetDelta - active.baseOffset > 2147483647
    if (tooBig || tooOld || overflow) this.roll(now)
  }

  /** A stable per-segment jitter in [0, max): Kafka draws it at random per segment. */
  #jitter(base: number, max: number): number {
    return Math.abs((base * 2654435761) % max)
  }

  /** Rolls now: new active segment, producer snapshot at its base, older data flushed in the background. */
  roll(now: number): void {
    const before = this.#store.segmentCount
    this.#store.roll(now)
    if (this.#store.segmentCount === before) return
    const offset = this.#store.logEndOffset
    const snap = this.#producers.snapshot(this.#crc32c)
    this.#snapshotChain = this.#snapshotChain
      .then(() => this.#store.writeProducerSnapshot(offset, snap))
      .catch((e) => this.fail(e))
    void this.flush().catch(() => {})
  }

  /** fsync everything appended so far (calls are serialised). */
  flush(): Promise<void> {
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
        records = this.#store.read(fetchOffset, Math.max(0, maxBytes), maxOffset, opts.minOneMessage)
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
        opts.isolationLevel === 'read_committed' ? this.#abortedBetween(fetchOffset, maxOffset) : null,
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
      // On a single node the readable end is the log end (until open transactions hold the LSO
      // back): count stored bytes without reading them.
      if (end >= this.#store.logEndOffset) return Math.min(this.#store.bytesFrom(fetchOffset), cap)
      let n = 0
      for (const b of this.#store.batchesFrom(fetchOffset)) {
        if (b.baseOffset >= end) break
        n += b.bytes.byteLength
        if (n >= cap) break
      }
      return n
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

  /** The record with the largest timestamp, the earliest one if tied. */
  #maxTimestampRecord(): { offset: number; timestamp: number; leaderEpoch: number } | null {
    let best: SegmentInfo | undefined
    for (const s of this.#store.segments()) {
      if (s.maxTimestamp >= 0 && (best === undefined || s.maxTimestamp > best.maxTimestamp)) best = s
    }
    if (best === undefined) return null
    for (const b of this.#store.batchesFrom(Math.max(best.baseOffset, this.#logStartOffset))) {
      const h = readBatchHeader(b.bytes, 0)
      if (h.maxTimestamp !== best.maxTimestamp) continue
      for (const r of this.#recordTimestamps(b.bytes)) {
        if (r.timestamp === best.maxTimestamp) {
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
      deleted += this.#deletePrefix(
        now,
        (_s, next) => next !== undefined && next.baseOffset <= this.#logStartOffset,
      )
      if (hasDelete(c) && c.retentionBytes >= 0) {
        let diff = this.#store.sizeInBytes - c.retentionBytes
        deleted += this.#deletePrefix(now, (s) => {
          if (diff - s.sizeInBytes >= 0) {
            diff -= s.sizeInBytes
            return true
          }
          return false
        })
      }
      if (hasDelete(c) && c.retentionMs >= 0) {
        deleted += this.#deletePrefix(now, (s) => {
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
        this.emit('start-offset')
      }
    }
    return deleted
  }

  /** Deletes the longest prefix of segments satisfying `predicate` (Kafka's deletableSegments). */
  #deletePrefix(now: number, predicate: (s: SegmentInfo, next: SegmentInfo | undefined) => boolean): number {
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
    if (n === segs.length) this.roll(now)
    this.#store.deleteOldestSegments(n)
    return n
  }

  /** Writes a producer snapshot at the log end and flushes (clean shutdown). */
  async close(): Promise<void> {
    if (this.#deleted) return
    if (this.#online) {
      try {
        await this.#snapshotChain
        await this.#store.writeProducerSnapshot(
          this.#store.logEndOffset,
          this.#producers.snapshot(this.#crc32c),
        )
        await this.flush()
      } catch (e) {
        this.fail(e)
      }
    }
    await this.#store.close()
  }
}
