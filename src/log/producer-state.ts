/**
 * Idempotent producer state of one partition (data-plane.md §5): per producer id the epoch, the
 * metadata of the last 5 batches (for duplicate detection), the last timestamp, the coordinator
 * epoch and the open transaction's first offset. Synchronous and deterministic: the clock is passed
 * in. Kafka: ProducerStateManager, ProducerAppendInfo, ProducerStateEntry, BatchMetadata.
 *
 * Snapshots use Kafka's `.snapshot` layout: int16 version 1, uint32 CRC-32C of everything after
 * byte 6, int32 entry count, then per producer: int64 producerId, int16 epoch, int32 lastSequence,
 * int64 lastOffset, int32 offsetDelta, int64 timestamp, int32 coordinatorEpoch,
 * int64 currentTxnFirstOffset. As in Kafka only the last batch per producer is kept.
 */
import { ErrorCode } from '../protocol/errors.js'
import {
  type BatchHeader,
  type Crc32c,
  incrementSequence,
  isControl,
  isTransactional,
  lastSequenceOf,
  NO_PRODUCER_EPOCH,
  NO_SEQUENCE,
} from './batch.js'
import type { ProducerStateInfo } from './types.js'

export const NUM_BATCHES_TO_RETAIN = 5

export interface BatchMetadata {
  readonly lastSeq: number
  readonly lastOffset: number
  readonly offsetDelta: number
  readonly timestamp: number
}

export function firstSeqOf(b: BatchMetadata): number {
  return decrementSequence(b.lastSeq, b.offsetDelta)
}
export function firstOffsetOf(b: BatchMetadata): number {
  return b.lastOffset - b.offsetDelta
}

function decrementSequence(sequence: number, decrement: number): number {
  if (sequence < decrement) return 2147483647 - (decrement - sequence) + 1
  return sequence - decrement
}

export interface ProducerStateEntry {
  readonly producerId: number
  producerEpoch: number
  batches: BatchMetadata[]
  lastTimestamp: number
  coordinatorEpoch: number
  currentTxnFirstOffset: number
}

export type ProducerCheck =
  | { readonly kind: 'ok' }
  | { readonly kind: 'duplicate'; readonly batch: BatchMetadata }
  | { readonly kind: 'error'; readonly errorCode: number; readonly message: string }

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === 2147483647)
}

/**
 * The producers of every partition that has none yet: one empty map, never written (#add makes a
 * partition its own at its first producer), so 100,000 idle partitions do not hold 100,000 maps.
 */
const NO_PRODUCERS: ReadonlyMap<number, ProducerStateEntry> = new Map()

export class ProducerStateManager {
  #producers = NO_PRODUCERS as Map<number, ProducerStateEntry>
  readonly #tp: string

  constructor(topicPartition: string) {
    this.#tp = topicPartition
  }

  #add(e: ProducerStateEntry): void {
    if (this.#producers === NO_PRODUCERS) this.#producers = new Map()
    this.#producers.set(e.producerId, e)
  }

  get size(): number {
    return this.#producers.size
  }

  entry(producerId: number): ProducerStateEntry | undefined {
    return this.#producers.get(producerId)
  }

  entries(): IterableIterator<ProducerStateEntry> {
    return this.#producers.values()
  }

  /** Whether the producer has an open transaction here at exactly this epoch. */
  hasOngoingTransaction(producerId: number, producerEpoch: number): boolean {
    const e = this.#producers.get(producerId)
    return e !== undefined && e.currentTxnFirstOffset >= 0 && e.producerEpoch === producerEpoch
  }

  /**
   * The checks of §5.3 for a client batch about to be appended at `firstOffset` (duplicates first,
   * then epoch, then sequence, then transaction state). Batches without a producer id pass.
   */
  check(h: BatchHeader, firstOffset: number, transactionVerified: boolean | undefined): ProducerCheck {
    if (h.producerId < 0) return { kind: 'ok' }
    const e = this.#producers.get(h.producerId)
    if (e !== undefined && e.producerEpoch === h.producerEpoch) {
      const last = lastSequenceOf(h)
      for (const b of e.batches) {
        if (b.lastSeq === last && firstSeqOf(b) === h.baseSequence) return { kind: 'duplicate', batch: b }
      }
    }
    const transactional = isTransactional(h.attributes)
    const epoch = e?.producerEpoch ?? NO_PRODUCER_EPOCH
    if (transactional && transactionVerified === false && (e === undefined || e.currentTxnFirstOffset < 0)) {
      if (h.producerEpoch < epoch) return this.#fencedEpoch(h, firstOffset, epoch)
      return {
        kind: 'error',
        errorCode: ErrorCode.INVALID_TXN_STATE,
        message: 'Record was not part of an ongoing transaction',
      }
    }
    if (h.producerEpoch < epoch) return this.#fencedEpoch(h, firstOffset, epoch)
    if (epoch !== NO_PRODUCER_EPOCH) {
      if (h.producerEpoch !== epoch) {
        if (h.baseSequence !== 0) {
          return {
            kind: 'error',
            errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            message: `Invalid sequence number for new epoch of producer ${h.producerId}at offset ${firstOffset} in partition ${this.#tp}: ${h.producerEpoch} (request epoch), ${h.baseSequence} (seq. number), ${epoch} (current producer epoch)`,
          }
        }
      } else {
        const lastSeq = e!.batches.length > 0 ? e!.batches[e!.batches.length - 1].lastSeq : NO_SEQUENCE
        if (!inSequence(lastSeq, h.baseSequence)) {
          return {
            kind: 'error',
            errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            message: `Out of order sequence number for producer ${h.producerId} at offset ${firstOffset} in partition ${this.#tp}: ${h.baseSequence} (incoming seq. number), ${lastSeq} (current end sequence number)`,
          }
        }
      }
    }
    if (!transactional && e !== undefined && e.currentTxnFirstOffset >= 0) {
      return {
        kind: 'error',
        errorCode: ErrorCode.INVALID_TXN_STATE,
        message: `Expected transactional write from producer ${h.producerId} at offset ${firstOffset} in partition ${this.#tp}`,
      }
    }
    return { kind: 'ok' }
  }

  #fencedEpoch(h: BatchHeader, offset: number, epoch: number): ProducerCheck {
    return {
      kind: 'error',
      errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
      message: `Epoch of producer ${h.producerId} at offset ${offset} in ${this.#tp} is ${h.producerEpoch}, which is smaller than the last seen epoch ${epoch}`,
    }
  }

  /**
   * Records an appended data batch (also used when replaying the log). Control batches only
   * update the epoch, timestamp and open transaction (the transaction layer completes them).
   */
  update(h: BatchHeader, firstOffset: number, maxTimestamp: number): void {
    if (h.producerId < 0) return
    let e = this.#producers.get(h.producerId)
    if (e === undefined) {
      e = {
        producerId: h.producerId,
        producerEpoch: NO_PRODUCER_EPOCH,
        batches: [],
        lastTimestamp: -1,
        coordinatorEpoch: -1,
        currentTxnFirstOffset: -1,
      }
      this.#add(e)
    }
    if (e.producerEpoch !== h.producerEpoch) {
      e.batches = []
      e.producerEpoch = h.producerEpoch
    }
    e.lastTimestamp = maxTimestamp
    if (h.baseSequence !== NO_SEQUENCE) {
      const lastOffset = firstOffset + h.lastOffsetDelta
      e.batches.push({
        lastSeq: incrementSequence(h.baseSequence, h.lastOffsetDelta),
        lastOffset,
        offsetDelta: h.lastOffsetDelta,
        timestamp: maxTimestamp,
      })
      if (e.batches.length > NUM_BATCHES_TO_RETAIN) e.batches.shift()
    }
    if (isTransactional(h.attributes) && !isControl(h.attributes) && e.currentTxnFirstOffset < 0) {
      e.currentTxnFirstOffset = firstOffset
    }
  }

  /**
   * The checks of a transaction marker (transactions.md §8.3): its epoch against the producer's
   * (strictly above with transaction version 2, unless no transaction is open and it is a re-sent
   * marker; at least equal before), then its coordinator epoch against the last one seen.
   */
  checkMarker(
    producerId: number,
    producerEpoch: number,
    coordinatorEpoch: number,
    transactionVersion: number,
  ): ProducerCheck {
    const e = this.#producers.get(producerId)
    if (e === undefined) return { kind: 'ok' }
    const open = e.currentTxnFirstOffset >= 0
    const epochOk =
      transactionVersion >= 2
        ? producerEpoch > e.producerEpoch || (producerEpoch === e.producerEpoch && !open)
        : producerEpoch >= e.producerEpoch
    if (!epochOk) {
      return {
        kind: 'error',
        errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
        message: `Invalid producer epoch for transaction marker of producer ${producerId} in ${this.#tp}: ${producerEpoch} (marker epoch), ${e.producerEpoch} (current producer epoch)`,
      }
    }
    if (coordinatorEpoch < e.coordinatorEpoch) {
      return {
        kind: 'error',
        errorCode: ErrorCode.TRANSACTION_COORDINATOR_FENCED,
        message: `Invalid coordinator epoch for producer ${producerId} in ${this.#tp}: ${coordinatorEpoch} (zombie), ${e.coordinatorEpoch} (current)`,
      }
    }
    return { kind: 'ok' }
  }

  /**
   * Transactions hook: a control batch (transaction marker) ends the producer's open transaction.
   * Returns the transaction's first offset, or -1 when none was open.
   */
  completeTransaction(
    producerId: number,
    producerEpoch: number,
    coordinatorEpoch: number,
    timestamp: number,
  ): number {
    let e = this.#producers.get(producerId)
    if (e === undefined) {
      e = {
        producerId,
        producerEpoch,
        batches: [],
        lastTimestamp: timestamp,
        coordinatorEpoch,
        currentTxnFirstOffset: -1,
      }
      this.#add(e)
    }
    if (e.producerEpoch !== producerEpoch) {
      e.batches = []
      e.producerEpoch = producerEpoch
    }
    e.coordinatorEpoch = coordinatorEpoch
    e.lastTimestamp = timestamp
    const first = e.currentTxnFirstOffset
    e.currentTxnFirstOffset = -1
    return first
  }

  /** The smallest first offset among open transactions, or -1. */
  firstUnstableOffset(): number {
    let min = -1
    for (const e of this.#producers.values()) {
      if (e.currentTxnFirstOffset >= 0 && (min < 0 || e.currentTxnFirstOffset < min))
        min = e.currentTxnFirstOffset
    }
    return min
  }

  /** Removes producers idle longer than `expirationMs` with no open transaction. Returns how many. */
  expire(now: number, expirationMs: number): number {
    let n = 0
    for (const [pid, e] of this.#producers) {
      if (e.currentTxnFirstOffset < 0 && now - e.lastTimestamp >= expirationMs) {
        this.#producers.delete(pid)
        n++
      }
    }
    return n
  }

  /** Drops every entry (before replaying a log from scratch). */
  clear(): void {
    this.#producers = NO_PRODUCERS as Map<number, ProducerStateEntry>
  }

  /** Forgets batches at or after `offset` (the log was truncated there); producers with nothing left go. */
  truncateFrom(offset: number): void {
    for (const [pid, e] of this.#producers) {
      e.batches = e.batches.filter((b) => b.lastOffset < offset)
      if (e.currentTxnFirstOffset >= offset) e.currentTxnFirstOffset = -1
      if (e.batches.length === 0 && e.currentTxnFirstOffset < 0) this.#producers.delete(pid)
    }
  }

  describe(): ProducerStateInfo[] {
    const out: ProducerStateInfo[] = []
    for (const e of this.#producers.values()) {
      out.push({
        producerId: e.producerId,
        producerEpoch: e.producerEpoch,
        lastSequence: e.batches.length > 0 ? e.batches[e.batches.length - 1].lastSeq : -1,
        lastTimestamp: e.lastTimestamp,
        coordinatorEpoch: e.coordinatorEpoch,
        currentTxnStartOffset: e.currentTxnFirstOffset,
      })
    }
    return out
  }

  /** Kafka's snapshot bytes of the current state. */
  snapshot(crc32c: Crc32c): Uint8Array {
    const ENTRY = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
    const out = new Uint8Array(2 + 4 + 4 + ENTRY * this.#producers.size)
    const dv = new DataView(out.buffer)
    dv.setInt16(0, 1)
    dv.setInt32(6, this.#producers.size)
    let pos = 10
    const i64 = (v: number): void => {
      const hi = Math.floor(v / 4294967296)
      dv.setInt32(pos, hi)
      dv.setUint32(pos + 4, v - hi * 4294967296)
      pos += 8
    }
    for (const e of this.#producers.values()) {
      const last = e.batches.length > 0 ? e.batches[e.batches.length - 1] : undefined
      i64(e.producerId)
      dv.setInt16(pos, e.producerEpoch)
      pos += 2
      dv.setInt32(pos, last?.lastSeq ?? -1)
      pos += 4
      i64(last?.lastOffset ?? -1)
      dv.setInt32(pos, last?.offsetDelta ?? 0)
      pos += 4
      i64(e.lastTimestamp)
      dv.setInt32(pos, e.coordinatorEpoch)
      pos += 4
      i64(e.currentTxnFirstOffset)
    }
    dv.setUint32(2, crc32c(out.subarray(6)) >>> 0)
    return out
  }

  /**
   * Loads a snapshot (replacing the state). Returns false, changing nothing, when it is corrupt.
   * Producers whose last timestamp is older than `now - expirationMs` are skipped, as Kafka does.
   */
  load(bytes: Uint8Array, crc32c: Crc32c, now: number, expirationMs: number): boolean {
    if (bytes.byteLength < 10) return false
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    if (dv.getInt16(0) !== 1) return false
    if (dv.getUint32(2) !== crc32c(bytes.subarray(6)) >>> 0) return false
    const count = dv.getInt32(6)
    const ENTRY = 46
    if (count < 0 || bytes.byteLength !== 10 + count * ENTRY) return false
    const loaded: ProducerStateEntry[] = []
    let pos = 10
    const i64 = (): number => {
      const v = dv.getInt32(pos) * 4294967296 + dv.getUint32(pos + 4)
      pos += 8
      return v
    }
    for (let i = 0; i < count; i++) {
      const producerId = i64()
      const producerEpoch = dv.getInt16(pos)
      pos += 2
      const lastSeq = dv.getInt32(pos)
      pos += 4
      const lastOffset = i64()
      const offsetDelta = dv.getInt32(pos)
      pos += 4
      const timestamp = i64()
      const coordinatorEpoch = dv.getInt32(pos)
      pos += 4
      const currentTxnFirstOffset = i64()
      if (currentTxnFirstOffset < 0 && now - timestamp >= expirationMs) continue
      loaded.push({
        producerId,
        producerEpoch,
        batches: lastSeq >= 0 && lastOffset >= 0 ? [{ lastSeq, lastOffset, offsetDelta, timestamp }] : [],
        lastTimestamp: timestamp,
        coordinatorEpoch,
        currentTxnFirstOffset,
      })
    }
    this.#producers = NO_PRODUCERS as Map<number, ProducerStateEntry>
    for (const e of loaded) this.#add(e)
    return true
  }
}
