/**
 * The transaction coordinator shard: every transactional id of one `__transaction_state` partition
 * (Kafka's `TransactionCoordinator` and `TransactionStateManager`, one partition of them).
 *
 * Every operation is synchronous and deterministic: it reads the state, the time and the producer
 * ids it is given and returns `{ records, response }`; the state changes only in `replay`, which the
 * runtime calls once the records are durable, and when the shard loads. An operation that decides a
 * transaction's outcome returns the markers to write as data (`TxnMarkerIntent`); once they are
 * written, the service calls `completeTransaction`, which writes CompleteCommit or CompleteAbort.
 *
 * Kafka's two-phase transitions (a pending state while the record is appended) need no counterpart
 * here: operations on a shard run one at a time and the next one starts after the previous one's
 * records are replayed. What Kafka's pending state still decides for clients is kept: while the
 * markers of a PrepareCommit or PrepareAbort are written, Kafka holds the pending state
 * CompleteCommit/CompleteAbort (also after loading), so a transaction in a Prepare state answers
 * CONCURRENT_TRANSACTIONS wherever Kafka checks for a pending transition.
 */
import { ErrorCode } from '../../protocol/errors.js'
import { GROUP_METADATA_TOPIC_NAME } from '../../protocol/topics.js'
import { shardFor } from '../runtime/hash.js'
import type { CoordinatorResult, ShardStateMachine, TimerIntent } from '../runtime/types.js'
import {
  transactionLogValueVersion,
  metadataFromRecord,
  transactionRecord,
  transactionTombstone,
  type TxnRecord,
} from './records.js'
import {
  containsAll,
  isEpochExhausted,
  isExpirationAllowed,
  isIdle,
  isPrepare,
  MAX_PRODUCER_EPOCH,
  NO_PARTITIONS,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  TRANSACTION_STATE_NAMES,
  TransactionState,
  type TransactionMetadata,
  topicPartitionList,
  topicPartitionsOf,
  transactionStateFromName,
  transition,
  union,
} from './state.js'

const S = TransactionState

/**
 * Hands out producer ids (Kafka's `ProducerIdManager.generateProducerId`): unique across the
 * cluster and never reused. Null when no id is available right now (Kafka: the next block is still
 * being allocated), which the operation answers with COORDINATOR_LOAD_IN_PROGRESS.
 */
export interface ProducerIdAllocator {
  generateProducerId(): bigint | null
}

export interface TransactionCoordinatorShardOptions {
  readonly producerIds: ProducerIdAllocator
  /**
   * The finalized `transaction.version` (0–2), read by every operation that writes: it picks the
   * value version (1 from level 1) and how the coordinator aborts on its own (timeouts, fencing: with
   * epoch-bump semantics from level 2). Default 2.
   */
  readonly transactionVersionLevel?: () => number
  /** `transaction.max.timeout.ms` (default 900000). */
  readonly transactionMaxTimeoutMs?: number
  /** `transactional.id.expiration.ms` (default 604800000). */
  readonly transactionalIdExpirationMs?: number
  /** `offsets.topic.num.partitions`, to place AddOffsetsToTxn's partition (default 50). */
  readonly offsetsTopicNumPartitions?: number
  /** Written into every marker; must never decrease (default 0). */
  readonly coordinatorEpoch?: number
  /** `transaction.abort.timed.out.transaction.cleanup.interval.ms` (default 10000). */
  readonly abortTimedOutTransactionsIntervalMs?: number
  /** `transaction.remove.expired.transaction.cleanup.interval.ms` (default 3600000). */
  readonly removeExpiredTransactionalIdsIntervalMs?: number
}

/**
 * What an operation returns (the runtime's result): records to append (then replay), the response,
 * and for the periodic operations their next timer and the markers to write, as completions the
 * runtime hands to the service once the records are durable.
 */
export type TxnResult<T> = CoordinatorResult<TxnRecord, T, TxnMarkerIntent>

/** Timer keys of the periodic operations. */
export const ABORT_TIMED_OUT_TRANSACTIONS_TIMER = 'transaction-abort'
export const REMOVE_EXPIRED_TRANSACTIONAL_IDS_TIMER = 'transactionalId-expiration'

/** Markers to write for a transaction whose Prepare record is durable (a WriteTxnMarkers entry). */
export interface TxnMarkerIntent {
  readonly transactionalId: string
  readonly producerId: bigint
  /** With TV2 the bumped epoch (one above the data's), with TV0/1 the data's epoch. */
  readonly producerEpoch: number
  /** true: COMMIT markers; false: ABORT markers (WriteTxnMarkers `TransactionResult`). */
  readonly committed: boolean
  readonly coordinatorEpoch: number
  /** The transaction's `clientTransactionVersion` (WriteTxnMarkers v2 `TransactionVersion`). */
  readonly transactionVersion: number
  /** Every partition of the transaction, grouped by topic; may be empty (a TV2 abort with nothing added). */
  readonly topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[]
}

export interface InitProducerIdInput {
  readonly transactionalId: string
  readonly transactionTimeoutMs: number
  /** -1 for a new producer (v0–2 always); the current id when a producer recovers (v3+). */
  readonly producerId: bigint
  readonly producerEpoch: number
}

export interface InitProducerIdOutcome {
  readonly errorCode: number
  /** -1 on error */
  readonly producerId: bigint
  /** -1 on error */
  readonly producerEpoch: number
  /** An open transaction of the previous producer was aborted: write these markers. */
  readonly markers: TxnMarkerIntent | null
}

export interface AddPartitionsInput {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[]
  /** 0 for AddPartitionsToTxn v0–3 and AddOffsetsToTxn, 2 for a v4+ add (Produce v12+, TxnOffsetCommit v5+). */
  readonly clientTransactionVersion: number
}

export interface VerifyPartitionsOutcome {
  /** One error per partition, in request order (duplicates collapsed). */
  readonly topics: { topic: string; partitions: { partitionIndex: number; errorCode: number }[] }[]
}

export interface AddOffsetsInput {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly groupId: string
}

export interface EndTxnInput {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly committed: boolean
  /** 0 for EndTxn v0–4, 2 for v5+. */
  readonly clientTransactionVersion: number
}

export interface EndTxnOutcome {
  readonly errorCode: number
  /** TV2: the producer id to use next; -1 on error and with TV0/1. */
  readonly producerId: bigint
  /** TV2: the epoch to use next; -1 on error and with TV0/1. */
  readonly producerEpoch: number
  readonly markers: TxnMarkerIntent | null
}

export interface CompleteTransactionInput {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly committed: boolean
}

export interface DescribedTransaction {
  readonly transactionalId: string
  readonly errorCode: number
  readonly transactionState: string
  readonly transactionTimeoutMs: number
  readonly transactionStartTimeMs: bigint
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly topics: { topic: string; partitions: number[] }[]
}

export interface ListTransactionsInput {
  /** State names; an unknown one is reported back and matches nothing. */
  readonly stateFilters: readonly string[]
  readonly producerIdFilters: readonly bigint[]
  /** ≥ 0: only transactions running longer than this (v1+); -1: no filter. */
  readonly durationFilter: bigint
  /** A regular expression the whole id must match (v2+); null or "": no filter. */
  readonly transactionalIdPattern: string | null
}

export interface ListedTransaction {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly transactionState: string
}

export interface ListTransactionsOutcome {
  readonly errorCode: number
  readonly unknownStateFilters: string[]
  readonly transactionStates: ListedTransaction[]
}

/**
 * Compiles ListTransactions' `TransactionalIdPattern`, which must match the whole id (Java's
 * `Matcher.matches`). Topograph reads it with JavaScript's regular expression syntax, which agrees
 * with Java's for the usual patterns (classes, groups, alternation, quantifiers); Java-only syntax
 * (possessive quantifiers, `\p{Alpha}`-style classes, inline flags) is INVALID_REGULAR_EXPRESSION.
 * Returns null for an invalid pattern.
 */
export function compileTransactionalIdPattern(pattern: string): RegExp | null {
  try {
    return new RegExp(`^(?:${pattern})$`, 'u')
  } catch {
    return null
  }
}

const NONE = ErrorCode.NONE
const error = <T>(errorCode: number, response: T): TxnResult<T> => ({
  records: [],
  response: { ...response, errorCode },
})

function initError(errorCode: number): TxnResult<InitProducerIdOutcome> {
  return {
    records: [],
    response: { errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH, markers: null },
  }
}

function endError(errorCode: number): TxnResult<EndTxnOutcome> {
  return {
    records: [],
    response: { errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH, markers: null },
  }
}

export class TransactionCoordinatorShard implements ShardStateMachine<TxnRecord, TxnMarkerIntent> {
  readonly #transactions = new Map<string, TransactionMetadata>()
  readonly #producerIds: ProducerIdAllocator
  readonly #level: () => number
  readonly #maxTimeoutMs: number
  readonly #expirationMs: number
  readonly #offsetsPartitions: number
  readonly #coordinatorEpoch: number
  readonly #abortIntervalMs: number
  readonly #expireIntervalMs: number

  constructor(options: TransactionCoordinatorShardOptions) {
    this.#producerIds = options.producerIds
    this.#level = options.transactionVersionLevel ?? (() => 2)
    this.#maxTimeoutMs = options.transactionMaxTimeoutMs ?? 900000
    this.#expirationMs = options.transactionalIdExpirationMs ?? 604800000
    this.#offsetsPartitions = options.offsetsTopicNumPartitions ?? 50
    this.#coordinatorEpoch = options.coordinatorEpoch ?? 0
    this.#abortIntervalMs = options.abortTimedOutTransactionsIntervalMs ?? 10000
    this.#expireIntervalMs = options.removeExpiredTransactionalIdsIntervalMs ?? 3600000
  }

  // ---- state ----

  /** The metadata of a transactional id, or undefined. */
  transaction(transactionalId: string): TransactionMetadata | undefined {
    return this.#transactions.get(transactionalId)
  }

  /** Every transactional id of the shard, in the order they were first written. */
  transactionalIds(): IterableIterator<string> {
    return this.#transactions.keys()
  }

  get size(): number {
    return this.#transactions.size
  }

  /** Applies one record: a value replaces the id's metadata, a tombstone removes the id. */
  replay(record: TxnRecord): void {
    const id = record.key.transactionalId
    if (record.value === null) {
      this.#transactions.delete(id)
      return
    }
    this.#transactions.set(id, metadataFromRecord(id, record))
  }

  /**
   * The markers of every transaction the log left in PrepareCommit or PrepareAbort (§3.4): after
   * loading they are written again, then the Complete record (a duplicate marker is harmless).
   */
  pendingMarkers(): TxnMarkerIntent[] {
    const out: TxnMarkerIntent[] = []
    for (const md of this.#transactions.values()) if (isPrepare(md.state)) out.push(this.#markers(md))
    return out
  }

  /**
   * The shard's first operation once loaded: the markers of every Prepare state are written again
   * (completions; §3.4), and the two periodic operations are armed.
   */
  onLoaded(_nowMs: number): TxnResult<void> {
    return {
      records: [],
      response: undefined,
      timers: { schedule: [this.#abortTimer(), this.#expireTimer()] },
      completions: this.pendingMarkers(),
    }
  }

  /** Aborts timed-out transactions every interval; a failed append is retried after one interval. */
  #abortTimer(): TimerIntent<TxnRecord, TxnMarkerIntent> {
    return {
      key: ABORT_TIMED_OUT_TRANSACTIONS_TIMER,
      delayMs: this.#abortIntervalMs,
      retryBackoffMs: this.#abortIntervalMs,
      op: (nowMs) => {
        const r = this.abortTimedOutTransactions(nowMs)
        return {
          records: r.records,
          response: undefined,
          completions: r.response.markers,
          timers: { schedule: [this.#abortTimer()] },
        }
      },
    }
  }

  /** Expires transactional ids every interval; a failed append is retried after one interval. */
  #expireTimer(): TimerIntent<TxnRecord, TxnMarkerIntent> {
    return {
      key: REMOVE_EXPIRED_TRANSACTIONAL_IDS_TIMER,
      delayMs: this.#expireIntervalMs,
      retryBackoffMs: this.#expireIntervalMs,
      op: (nowMs) => ({
        records: this.expireTransactionalIds(nowMs).records,
        response: undefined,
        timers: { schedule: [this.#expireTimer()] },
      }),
    }
  }

  #record(md: TransactionMetadata): TxnRecord {
    return transactionRecord(md, transactionLogValueVersion(this.#level()))
  }

  #markers(md: TransactionMetadata): TxnMarkerIntent {
    return {
      transactionalId: md.transactionalId,
      producerId: md.producerId,
      producerEpoch: md.producerEpoch,
      committed: md.state === S.PREPARE_COMMIT,
      coordinatorEpoch: this.#coordinatorEpoch,
      transactionVersion: md.clientTransactionVersion,
      topics: topicPartitionList(md.topicPartitions),
    }
  }

  // ---- InitProducerId (§4) ----

  /**
   * InitProducerId with a transactional id (Kafka's `handleInitProducerId` and
   * `prepareInitProducerIdTransit`). An unknown id gets a new producer id and epoch 0; an idle id a
   * bumped epoch (or a new producer id when the epoch is exhausted); an Ongoing id is fenced: its
   * transaction is aborted with a bumped epoch and the answer is CONCURRENT_TRANSACTIONS, so the
   * client retries once the abort completed.
   */
  initProducerId(input: InitProducerIdInput, nowMs: number): TxnResult<InitProducerIdOutcome> {
    const { transactionalId, transactionTimeoutMs } = input
    const hasPid = input.producerId !== NO_PRODUCER_ID
    const hasEpoch = input.producerEpoch !== NO_PRODUCER_EPOCH
    // 1. Request checks (KafkaApis, then the coordinator).
    if (hasPid !== hasEpoch) return initError(ErrorCode.INVALID_REQUEST)
    if (transactionalId === '') return initError(ErrorCode.INVALID_REQUEST)
    if (!(transactionTimeoutMs > 0 && transactionTimeoutMs <= this.#maxTimeoutMs)) {
      return initError(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
    }
    const expected = hasPid ? { producerId: input.producerId, producerEpoch: input.producerEpoch } : null

    // 2. An unknown id starts as Empty with a fresh producer id and no epoch yet (not persisted).
    let md = this.#transactions.get(transactionalId)
    if (md === undefined) {
      const pid = this.#producerIds.generateProducerId()
      if (pid === null) return initError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
      md = {
        transactionalId,
        producerId: pid,
        prevProducerId: NO_PRODUCER_ID,
        nextProducerId: NO_PRODUCER_ID,
        producerEpoch: NO_PRODUCER_EPOCH,
        lastProducerEpoch: NO_PRODUCER_EPOCH,
        txnTimeoutMs: transactionTimeoutMs,
        state: S.EMPTY,
        topicPartitions: NO_PARTITIONS,
        txnStartTimestamp: -1,
        txnLastUpdateTimestamp: nowMs,
        clientTransactionVersion: 0,
      }
    }

    // 3. A transaction whose markers are being written: retry later.
    if (isPrepare(md.state)) return initError(ErrorCode.CONCURRENT_TRANSACTIONS)

    // 4. A given producer id must be this id's (or its previous one, retried after a rotation).
    if (
      expected !== null &&
      !(
        md.producerEpoch === NO_PRODUCER_EPOCH ||
        expected.producerId === md.producerId ||
        (expected.producerId === md.prevProducerId && isEpochExhausted(expected.producerEpoch))
      )
    ) {
      return initError(ErrorCode.PRODUCER_FENCED)
    }

    // 5. Ongoing: fence the previous producer by aborting its transaction with a bumped epoch.
    if (md.state === S.ONGOING) {
      const fenced = this.#abortWithServerVersion(md, nowMs)
      if (typeof fenced === 'number') return initError(fenced)
      return {
        records: [this.#record(fenced)],
        response: {
          errorCode: ErrorCode.CONCURRENT_TRANSACTIONS,
          producerId: NO_PRODUCER_ID,
          producerEpoch: NO_PRODUCER_EPOCH,
          markers: this.#markers(fenced),
        },
      }
    }

    // 6. Empty, CompleteCommit, CompleteAbort: a new producer id when the epoch is exhausted and the
    // producer (if it gave one) is at the current epoch; else an epoch bump.
    let next: TransactionMetadata
    if (
      isEpochExhausted(md.producerEpoch) &&
      (expected === null || expected.producerEpoch === md.producerEpoch)
    ) {
      const pid = this.#producerIds.generateProducerId()
      if (pid === null) return initError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
      next = transition(md, {
        state: S.EMPTY,
        producerId: pid,
        producerEpoch: 0,
        lastProducerEpoch: expected !== null ? md.producerEpoch : NO_PRODUCER_EPOCH,
        txnTimeoutMs: transactionTimeoutMs,
        topicPartitions: NO_PARTITIONS,
        txnStartTimestamp: -1,
        txnLastUpdateTimestamp: nowMs,
      })
    } else {
      // Kafka's prepareIncrementProducerEpoch refuses an exhausted epoch with an IllegalStateException,
      // which the coordinator answers as UNKNOWN_SERVER_ERROR (an exhausted epoch and a stale retry).
      if (isEpochExhausted(md.producerEpoch)) return initError(ErrorCode.UNKNOWN_SERVER_ERROR)
      let epoch: number
      let last: number
      if (expected === null) {
        epoch = md.producerEpoch + 1
        last = NO_PRODUCER_EPOCH
      } else if (md.producerEpoch === NO_PRODUCER_EPOCH || expected.producerEpoch === md.producerEpoch) {
        epoch = md.producerEpoch + 1
        last = md.producerEpoch
      } else if (expected.producerEpoch === md.lastProducerEpoch) {
        // A retry of a bump whose answer was lost: the current epoch again.
        epoch = md.producerEpoch
        last = md.lastProducerEpoch
      } else {
        return initError(ErrorCode.PRODUCER_FENCED)
      }
      next = transition(md, {
        state: S.EMPTY,
        producerEpoch: epoch,
        lastProducerEpoch: last,
        txnTimeoutMs: transactionTimeoutMs,
        topicPartitions: NO_PARTITIONS,
        txnStartTimestamp: -1,
        txnLastUpdateTimestamp: nowMs,
      })
    }
    return {
      records: [this.#record(next)],
      response: {
        errorCode: NONE,
        producerId: next.producerId,
        producerEpoch: next.producerEpoch,
        markers: null,
      },
    }
  }

  /**
   * The coordinator's own abort of an Ongoing transaction (fencing in InitProducerId, a timeout),
   * with the finalized transaction version: Kafka's `prepareFenceProducerEpoch` followed by
   * `endTransaction(ABORT, isFromClient = false)`. Returns the PrepareAbort metadata, or an error code
   * when a new producer id was needed and none is available.
   */
  #abortWithServerVersion(md: TransactionMetadata, nowMs: number): TransactionMetadata | number {
    if (this.#level() >= 2) {
      // TV2: prepareAbortOrCommit bumps the epoch itself (once); an exhausted epoch rotates the id.
      let nextProducerId = NO_PRODUCER_ID
      if (isEpochExhausted(md.producerEpoch)) {
        const pid = this.#producerIds.generateProducerId()
        if (pid === null) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        nextProducerId = pid
      }
      return transition(md, {
        state: S.PREPARE_ABORT,
        producerEpoch: md.producerEpoch === MAX_PRODUCER_EPOCH ? md.producerEpoch : md.producerEpoch + 1,
        lastProducerEpoch: md.producerEpoch,
        nextProducerId,
        txnLastUpdateTimestamp: nowMs,
        clientTransactionVersion: 2,
      })
    }
    // TV0/1: the fence's bumped epoch is written with the abort, lastProducerEpoch cleared.
    return transition(md, {
      state: S.PREPARE_ABORT,
      producerEpoch: md.producerEpoch === MAX_PRODUCER_EPOCH ? md.producerEpoch : md.producerEpoch + 1,
      lastProducerEpoch: NO_PRODUCER_EPOCH,
      nextProducerId: NO_PRODUCER_ID,
      txnLastUpdateTimestamp: nowMs,
      clientTransactionVersion: 0,
    })
  }

  // ---- AddPartitionsToTxn, AddOffsetsToTxn (§5, §6.1) ----

  /**
   * Adds partitions to the transaction (AddPartitionsToTxn v0–3, a v4+ add with `VerifyOnly` false,
   * AddOffsetsToTxn). The handler checked authorization and that the partitions exist; the answer is
   * one error code for every partition of the request.
   */
  addPartitions(input: AddPartitionsInput, nowMs: number): TxnResult<{ errorCode: number }> {
    const none = { errorCode: NONE }
    if (input.transactionalId === '') return error(ErrorCode.INVALID_REQUEST, none)
    const md = this.#transactions.get(input.transactionalId)
    if (md === undefined) return error(ErrorCode.INVALID_PRODUCER_ID_MAPPING, none)
    if (isPrepare(md.state)) return error(ErrorCode.CONCURRENT_TRANSACTIONS, none)
    if (md.producerId !== input.producerId) return error(ErrorCode.INVALID_PRODUCER_ID_MAPPING, none)
    if (md.producerEpoch !== input.producerEpoch) return error(ErrorCode.PRODUCER_FENCED, none)
    const added = topicPartitionsOf(input.topics)
    // Already in the transaction: nothing to write.
    if (md.state === S.ONGOING && containsAll(md.topicPartitions, added))
      return { records: [], response: none }
    const next = transition(md, {
      state: S.ONGOING,
      topicPartitions: union(md.topicPartitions, added),
      txnStartTimestamp: isIdle(md.state) ? nowMs : md.txnStartTimestamp,
      txnLastUpdateTimestamp: nowMs,
      clientTransactionVersion: input.clientTransactionVersion,
    })
    return { records: [this.#record(next)], response: none }
  }

  /** AddOffsetsToTxn: adds the group's `__consumer_offsets` partition, with TV0 semantics (§6.1). */
  addOffsets(input: AddOffsetsInput, nowMs: number): TxnResult<{ errorCode: number }> {
    return this.addPartitions(
      {
        transactionalId: input.transactionalId,
        producerId: input.producerId,
        producerEpoch: input.producerEpoch,
        topics: [{ topic: GROUP_METADATA_TOPIC_NAME, partitions: [this.offsetsPartitionFor(input.groupId)] }],
        clientTransactionVersion: 0,
      },
      nowMs,
    )
  }

  /** The `__consumer_offsets` partition of a group (`offsets.topic.num.partitions`). */
  offsetsPartitionFor(groupId: string): number {
    return shardFor(groupId, this.#offsetsPartitions)
  }

  /**
   * AddPartitionsToTxn v4+ with `VerifyOnly` (§5.2): whether each partition is already in the open
   * transaction (NONE) or not (TRANSACTION_ABORTABLE). Reads only.
   */
  verifyPartitions(input: Omit<AddPartitionsInput, 'clientTransactionVersion'>): VerifyPartitionsOutcome {
    const requested = topicPartitionsOf(input.topics)
    const all = (code: number): VerifyPartitionsOutcome => ({
      topics: topicPartitionList(requested).map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) => ({ partitionIndex: p, errorCode: code })),
      })),
    })
    if (input.transactionalId === '') return all(ErrorCode.INVALID_REQUEST)
    const md = this.#transactions.get(input.transactionalId)
    if (md === undefined || md.producerId !== input.producerId)
      return all(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if (md.producerEpoch !== input.producerEpoch) return all(ErrorCode.PRODUCER_FENCED)
    if (isPrepare(md.state)) return all(ErrorCode.CONCURRENT_TRANSACTIONS)
    return {
      topics: topicPartitionList(requested).map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p,
          errorCode: md.topicPartitions.get(t.topic)?.has(p) ? NONE : ErrorCode.TRANSACTION_ABORTABLE,
        })),
      })),
    }
  }

  // ---- EndTxn (§7) ----

  /** EndTxn v0–4 (TV0/1) or v5+ (TV2, the epoch bumped by every completed EndTxn). */
  endTxn(input: EndTxnInput, nowMs: number): TxnResult<EndTxnOutcome> {
    if (input.transactionalId === '') return endError(ErrorCode.INVALID_REQUEST)
    const md = this.#transactions.get(input.transactionalId)
    if (md === undefined) return endError(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    return input.clientTransactionVersion >= 2
      ? this.#endTxnV2(md, input, nowMs)
      : this.#endTxnV1(md, input, nowMs)
  }

  #endTxnV1(md: TransactionMetadata, input: EndTxnInput, nowMs: number): TxnResult<EndTxnOutcome> {
    if (md.producerId !== input.producerId) return endError(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if (md.producerEpoch !== input.producerEpoch) return endError(ErrorCode.PRODUCER_FENCED)
    if (isPrepare(md.state)) return endError(ErrorCode.CONCURRENT_TRANSACTIONS)
    switch (md.state) {
      case S.ONGOING: {
        const next = transition(md, {
          state: input.committed ? S.PREPARE_COMMIT : S.PREPARE_ABORT,
          nextProducerId: NO_PRODUCER_ID,
          txnLastUpdateTimestamp: nowMs,
          clientTransactionVersion: 0,
        })
        return {
          records: [this.#record(next)],
          response: {
            errorCode: NONE,
            producerId: NO_PRODUCER_ID,
            producerEpoch: NO_PRODUCER_EPOCH,
            markers: this.#markers(next),
          },
        }
      }
      case S.COMPLETE_COMMIT:
        return endError(input.committed ? NONE : ErrorCode.INVALID_TXN_STATE)
      case S.COMPLETE_ABORT:
        return endError(input.committed ? ErrorCode.INVALID_TXN_STATE : NONE)
      default:
        // Empty
        return endError(ErrorCode.INVALID_TXN_STATE)
    }
  }

  #endTxnV2(md: TransactionMetadata, input: EndTxnInput, nowMs: number): TxnResult<EndTxnOutcome> {
    const { producerId, producerEpoch, committed } = input
    // A retry whose first attempt rotated the producer id (the client saw epoch 32766 last).
    const retryOnOverflow =
      md.prevProducerId === producerId && producerEpoch === MAX_PRODUCER_EPOCH - 1 && md.producerEpoch === 0
    // A retry whose first attempt bumped the epoch.
    const retryOnEpochBump = md.producerEpoch === producerEpoch + 1
    const isRetry = retryOnEpochBump || retryOnOverflow
    // Kafka checks the pending transition first: a Prepare state is completing (see the header).
    if (isPrepare(md.state)) return endError(ErrorCode.CONCURRENT_TRANSACTIONS)
    if (md.producerId !== producerId && !retryOnOverflow)
      return endError(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    // Ongoing and Empty accept the current epoch only; Complete states also a retry.
    const validEpoch =
      producerEpoch === md.producerEpoch || (!(md.state === S.ONGOING || md.state === S.EMPTY) && isRetry)
    if (!validEpoch) return endError(ErrorCode.PRODUCER_FENCED)

    const current: TxnResult<EndTxnOutcome> = {
      records: [],
      response: {
        errorCode: NONE,
        producerId: md.producerId,
        producerEpoch: md.producerEpoch,
        markers: null,
      },
    }
    switch (md.state) {
      case S.ONGOING:
        return this.#prepareV2(md, committed ? S.PREPARE_COMMIT : S.PREPARE_ABORT, false, nowMs)
      case S.COMPLETE_COMMIT:
        if (committed) return isRetry ? current : endError(ErrorCode.INVALID_TXN_STATE)
        return isRetry
          ? endError(ErrorCode.INVALID_TXN_STATE)
          : this.#prepareV2(md, S.PREPARE_ABORT, true, nowMs)
      case S.COMPLETE_ABORT:
        if (!committed) return isRetry ? current : this.#prepareV2(md, S.PREPARE_ABORT, true, nowMs)
        return endError(ErrorCode.INVALID_TXN_STATE)
      default:
        // Empty: an abort with nothing added is accepted and bumps the epoch.
        return committed
          ? endError(ErrorCode.INVALID_TXN_STATE)
          : this.#prepareV2(md, S.PREPARE_ABORT, true, nowMs)
    }
  }

  /**
   * TV2's Prepare transition (Kafka's `prepareAbortOrCommit` with epoch bump): epoch + 1, the old
   * epoch as `lastProducerEpoch`, a new producer id as `nextProducerId` when the epoch is exhausted.
   * The answer is what the client uses next: the Complete state's producer id and epoch.
   */
  #prepareV2(
    md: TransactionMetadata,
    state: typeof S.PREPARE_COMMIT | typeof S.PREPARE_ABORT,
    noPartitionAdded: boolean,
    nowMs: number,
  ): TxnResult<EndTxnOutcome> {
    let nextProducerId = NO_PRODUCER_ID
    if (isEpochExhausted(md.producerEpoch)) {
      const pid = this.#producerIds.generateProducerId()
      if (pid === null) return endError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
      nextProducerId = pid
    }
    const next = transition(md, {
      state,
      // Only a fence reaches 32767, and an exhausted epoch rotates to nextProducerId, so the
      // bump stops at Short.MAX_VALUE for a commit as for an abort (the field is an int16).
      producerEpoch: Math.min(md.producerEpoch + 1, MAX_PRODUCER_EPOCH),
      lastProducerEpoch: md.producerEpoch,
      nextProducerId,
      txnStartTimestamp: noPartitionAdded ? nowMs : md.txnStartTimestamp,
      txnLastUpdateTimestamp: nowMs,
      clientTransactionVersion: 2,
    })
    const rotated = nextProducerId !== NO_PRODUCER_ID
    return {
      records: [this.#record(next)],
      response: {
        errorCode: NONE,
        producerId: rotated ? nextProducerId : next.producerId,
        producerEpoch: rotated ? 0 : next.producerEpoch,
        markers: this.#markers(next),
      },
    }
  }

  // ---- markers written (§7.3, §8.4) ----

  /**
   * Every marker of a transaction is written: CompleteCommit or CompleteAbort (Kafka's
   * `prepareComplete`). With TV2 a pending `nextProducerId` becomes the producer id, at epoch 0.
   * Nothing happens (`completed` false) unless the id is still in the Prepare state the markers were
   * for, with the same producer id and epoch.
   */
  completeTransaction(input: CompleteTransactionInput, nowMs: number): TxnResult<{ completed: boolean }> {
    const md = this.#transactions.get(input.transactionalId)
    const prepare = input.committed ? S.PREPARE_COMMIT : S.PREPARE_ABORT
    if (
      md === undefined ||
      md.state !== prepare ||
      md.producerId !== input.producerId ||
      md.producerEpoch !== input.producerEpoch
    ) {
      return { records: [], response: { completed: false } }
    }
    const rotate = md.clientTransactionVersion >= 2 && md.nextProducerId !== NO_PRODUCER_ID
    const next = transition(md, {
      state: input.committed ? S.COMPLETE_COMMIT : S.COMPLETE_ABORT,
      producerId: rotate ? md.nextProducerId : md.producerId,
      producerEpoch: rotate ? 0 : md.producerEpoch,
      nextProducerId: NO_PRODUCER_ID,
      topicPartitions: NO_PARTITIONS,
      txnLastUpdateTimestamp: nowMs,
    })
    return { records: [this.#record(next)], response: { completed: true } }
  }

  // ---- timeouts and expiration (§10) ----

  /**
   * Aborts every Ongoing transaction open longer than its timeout (`txnStartTimestamp +
   * txnTimeoutMs < now`), fencing its producer with a bumped epoch (Kafka's
   * `abortTimedOutTransactions`). The runtime's periodic timer calls it every
   * `transaction.abort.timed.out.transaction.cleanup.interval.ms`.
   */
  abortTimedOutTransactions(nowMs: number): TxnResult<{ markers: TxnMarkerIntent[] }> {
    const records: TxnRecord[] = []
    const markers: TxnMarkerIntent[] = []
    for (const md of this.#transactions.values()) {
      // A transaction with the two-phase-commit timeout (Int.MaxValue) never times out.
      if (md.state !== S.ONGOING || md.txnTimeoutMs === 0x7fffffff) continue
      if (!(md.txnStartTimestamp + md.txnTimeoutMs < nowMs)) continue
      const aborted = this.#abortWithServerVersion(md, nowMs)
      // No producer id to rotate to right now: the next check tries again.
      if (typeof aborted === 'number') continue
      records.push(this.#record(aborted))
      markers.push(this.#markers(aborted))
    }
    return { records, response: { markers } }
  }

  /**
   * Expires every idle transactional id not updated for `transactional.id.expiration.ms`
   * (`txnLastUpdateTimestamp <= now - expiration`): a tombstone each (Kafka's
   * `removeExpiredTransactionalIds`). The runtime's periodic timer calls it every
   * `transaction.remove.expired.transaction.cleanup.interval.ms`.
   */
  expireTransactionalIds(nowMs: number): TxnResult<{ expired: string[] }> {
    const expired: string[] = []
    for (const md of this.#transactions.values()) {
      if (isExpirationAllowed(md.state) && md.txnLastUpdateTimestamp <= nowMs - this.#expirationMs) {
        expired.push(md.transactionalId)
      }
    }
    return { records: expired.map(transactionTombstone), response: { expired } }
  }

  // ---- DescribeTransactions, ListTransactions (§11) ----

  /** DescribeTransactions for one id of this shard (the handler checked authorization). */
  describeTransaction(transactionalId: string): DescribedTransaction {
    if (transactionalId === '') return describeTransactionError(transactionalId, ErrorCode.INVALID_REQUEST)
    const md = this.#transactions.get(transactionalId)
    if (md === undefined)
      return describeTransactionError(transactionalId, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
    return {
      transactionalId,
      errorCode: NONE,
      transactionState: TRANSACTION_STATE_NAMES[md.state]!,
      transactionTimeoutMs: md.txnTimeoutMs,
      transactionStartTimeMs: BigInt(md.txnStartTimestamp),
      producerId: md.producerId,
      producerEpoch: md.producerEpoch,
      topics: topicPartitionList(md.topicPartitions),
    }
  }

  /**
   * ListTransactions over this shard (Kafka's `listTransactionStates`; the service merges shards).
   * Filters: state names (unknown ones reported back), producer ids, running longer than
   * `durationFilter`, and a pattern the whole id must match.
   */
  listTransactions(input: ListTransactionsInput, nowMs: number): ListTransactionsOutcome {
    const unknownStateFilters: string[] = []
    const states = new Set<TransactionState>()
    for (const name of input.stateFilters) {
      const s = transactionStateFromName(name)
      if (s === undefined) unknownStateFilters.push(name)
      else states.add(s)
    }
    let pattern: RegExp | null = null
    if (input.transactionalIdPattern !== null && input.transactionalIdPattern !== '') {
      pattern = compileTransactionalIdPattern(input.transactionalIdPattern)
      if (pattern === null) {
        return {
          errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION,
          unknownStateFilters: [],
          transactionStates: [],
        }
      }
    }
    const pids = new Set(input.producerIdFilters)
    const duration = input.durationFilter
    const transactionStates: ListedTransaction[] = []
    for (const md of this.#transactions.values()) {
      if (pids.size > 0 && !pids.has(md.producerId)) continue
      if (input.stateFilters.length > 0 && !states.has(md.state)) continue
      if (duration >= 0n && BigInt(nowMs - md.txnStartTimestamp) <= duration) continue
      if (pattern !== null && !pattern.test(md.transactionalId)) continue
      transactionStates.push({
        transactionalId: md.transactionalId,
        producerId: md.producerId,
        transactionState: TRANSACTION_STATE_NAMES[md.state]!,
      })
    }
    return { errorCode: NONE, unknownStateFilters, transactionStates }
  }
}

/** A DescribeTransactions entry for an error: the response's defaults besides the id and the code. */
export function describeTransactionError(transactionalId: string, errorCode: number): DescribedTransaction {
  return {
    transactionalId,
    errorCode,
    transactionState: '',
    transactionTimeoutMs: 0,
    transactionStartTimeMs: 0n,
    producerId: 0n,
    producerEpoch: 0,
    topics: [],
  }
}

/** The `__transaction_state` partition (shard) of a transactional id (Kafka's `partitionFor`, §2). */
export function transactionShardFor(transactionalId: string, numPartitions: number): number {
  return shardFor(transactionalId, numPartitions)
}
