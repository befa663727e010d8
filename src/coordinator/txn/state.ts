/**
 * Transaction states and the metadata of one transactional id (Kafka's `TransactionState` and
 * `TransactionMetadata`). Metadata objects are immutable snapshots: a transition builds a new one,
 * which becomes the shard's state only when its record is replayed.
 */
import { LocalError } from '../../errors.js'

/** Kafka's state ids, as written in `TransactionLogValue.TransactionStatus`. */
export const TransactionState = {
  EMPTY: 0,
  ONGOING: 1,
  PREPARE_COMMIT: 2,
  PREPARE_ABORT: 3,
  COMPLETE_COMMIT: 4,
  COMPLETE_ABORT: 5,
  /** The id is being expired: never written as a value (a tombstone is), never visible here. */
  DEAD: 6,
  /** Only ever a pending state in Kafka, replaced by PrepareAbort in the same step. */
  PREPARE_EPOCH_FENCE: 7,
} as const
export type TransactionState = (typeof TransactionState)[keyof typeof TransactionState]

/** The names DescribeTransactions and ListTransactions use, by state id. */
export const TRANSACTION_STATE_NAMES: readonly string[] = [
  'Empty',
  'Ongoing',
  'PrepareCommit',
  'PrepareAbort',
  'CompleteCommit',
  'CompleteAbort',
  'Dead',
  'PrepareEpochFence',
]

/** The state of a name, or undefined (ListTransactions reports such filters as unknown). */
export function transactionStateFromName(name: string): TransactionState | undefined {
  const i = TRANSACTION_STATE_NAMES.indexOf(name)
  return i < 0 ? undefined : (i as TransactionState)
}

const S = TransactionState

/** The states each state may be entered from (Kafka's `VALID_PREVIOUS_STATES`). */
export const VALID_PREVIOUS_STATES: ReadonlyMap<TransactionState, ReadonlySet<TransactionState>> = new Map<
  TransactionState,
  ReadonlySet<TransactionState>
>([
  [S.EMPTY, new Set([S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT])],
  [S.ONGOING, new Set([S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT])],
  [S.PREPARE_COMMIT, new Set([S.ONGOING])],
  [
    S.PREPARE_ABORT,
    new Set([S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT]),
  ],
  [S.COMPLETE_COMMIT, new Set([S.PREPARE_COMMIT])],
  [S.COMPLETE_ABORT, new Set([S.PREPARE_ABORT])],
  [S.DEAD, new Set([S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT])],
  [S.PREPARE_EPOCH_FENCE, new Set([S.ONGOING])],
])

/** Whether a transactional id in `state` may expire (§10.2). */
export function isExpirationAllowed(state: TransactionState): boolean {
  return state === S.EMPTY || state === S.COMPLETE_COMMIT || state === S.COMPLETE_ABORT
}

/** Whether `state` is PrepareCommit or PrepareAbort: the decision is written, the markers are not. */
export function isPrepare(state: TransactionState): boolean {
  return state === S.PREPARE_COMMIT || state === S.PREPARE_ABORT
}

/** Empty, CompleteCommit or CompleteAbort: no transaction is open. */
export function isIdle(state: TransactionState): boolean {
  return isExpirationAllowed(state)
}

/** `RecordBatch.NO_PRODUCER_ID` / `NO_PRODUCER_EPOCH`. */
export const NO_PRODUCER_ID = -1n
export const NO_PRODUCER_EPOCH = -1
/** `Short.MAX_VALUE`. */
export const MAX_PRODUCER_EPOCH = 32767

/**
 * Kafka never hands out epoch 32767: a producer at 32766 gets a new producer id, so the
 * coordinator can always bump once more to fence it.
 */
export function isEpochExhausted(epoch: number): boolean {
  return epoch >= MAX_PRODUCER_EPOCH - 1
}

/** Partitions of a transaction: topic → partition ids, both in the order they were added. */
export type TopicPartitions = ReadonlyMap<string, ReadonlySet<number>>

export const NO_PARTITIONS: TopicPartitions = new Map()

export function partitionCount(tps: TopicPartitions): number {
  let n = 0
  for (const ps of tps.values()) n += ps.size
  return n
}

/** Whether every partition of `added` is in `tps`. */
export function containsAll(tps: TopicPartitions, added: TopicPartitions): boolean {
  for (const [topic, ps] of added) {
    const have = tps.get(topic)
    if (ps.size === 0) continue
    if (have === undefined) return false
    for (const p of ps) if (!have.has(p)) return false
  }
  return true
}

/** `tps` ∪ `added`, keeping the order of first addition. */
export function union(tps: TopicPartitions, added: TopicPartitions): TopicPartitions {
  const out = new Map<string, Set<number>>()
  for (const [topic, ps] of tps) out.set(topic, new Set(ps))
  for (const [topic, ps] of added) {
    let set = out.get(topic)
    if (set === undefined) {
      // A topic with no partitions is kept out: it adds nothing to the transaction.
      if (ps.size === 0) continue
      set = new Set()
      out.set(topic, set)
    }
    for (const p of ps) set.add(p)
  }
  return out
}

/** Builds a partition set from `{ topic, partitions }` lists (duplicates collapse, empty topics drop). */
export function topicPartitionsOf(
  topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[],
): TopicPartitions {
  const out = new Map<string, Set<number>>()
  for (const t of topics) {
    if (t.partitions.length === 0) continue
    let set = out.get(t.topic)
    if (set === undefined) out.set(t.topic, (set = new Set()))
    for (const p of t.partitions) set.add(p)
  }
  return out
}

/** The partitions as `{ topic, partitions }` lists, topics and partitions in the order they were added. */
export function topicPartitionList(tps: TopicPartitions): { topic: string; partitions: number[] }[] {
  const out: { topic: string; partitions: number[] }[] = []
  for (const [topic, ps] of tps) out.push({ topic, partitions: [...ps] })
  return out
}

/** The state of one transactional id (Kafka's `TransactionMetadata`; see the specification §3.1). */
export interface TransactionMetadata {
  readonly transactionalId: string
  readonly producerId: bigint
  /** The producer id before the last transition (written as PreviousProducerId). */
  readonly prevProducerId: bigint
  /** TV2: the id to switch to when this transaction completes (the epoch is exhausted), else -1. */
  readonly nextProducerId: bigint
  readonly producerEpoch: number
  /**
   * The epoch before the last bump, to recognise a retried InitProducerId. Kafka does not persist
   * it: -1 after loading. It travels with the records in memory (see records.ts), never on disk.
   */
  readonly lastProducerEpoch: number
  readonly txnTimeoutMs: number
  readonly state: TransactionState
  readonly topicPartitions: TopicPartitions
  /** When the first partition of the transaction was added; -1 in Empty. */
  readonly txnStartTimestamp: number
  /** When the id last changed state; drives expiration. */
  readonly txnLastUpdateTimestamp: number
  /** The transaction version the client used for the current transaction: 0 or 2. */
  readonly clientTransactionVersion: number
}

/**
 * Kafka's `prepareTransitionTo`: the metadata after a transition to `changes.state`, with
 * `prevProducerId` set to the producer id before it. Throws when the table forbids the transition or
 * the new producer id or epoch is negative.
 */
export function transition(
  from: TransactionMetadata,
  changes: Partial<Omit<TransactionMetadata, 'transactionalId' | 'prevProducerId'>> & {
    readonly state: TransactionState
  },
): TransactionMetadata {
  const to: TransactionMetadata = { ...from, ...changes, prevProducerId: from.producerId }
  if (!VALID_PREVIOUS_STATES.get(to.state)!.has(from.state)) {
    throw new LocalError(
      'TXN_ILLEGAL_TRANSITION',
      `transactional id ${from.transactionalId}: ${TRANSACTION_STATE_NAMES[to.state]} cannot follow ${TRANSACTION_STATE_NAMES[from.state]}`,
    )
  }
  if (to.producerId < 0n) {
    throw new LocalError(
      'TXN_ILLEGAL_TRANSITION',
      `transactional id ${from.transactionalId}: producer id ${to.producerId}`,
    )
  }
  if (to.state !== S.DEAD && to.producerEpoch < 0) {
    throw new LocalError(
      'TXN_ILLEGAL_TRANSITION',
      `transactional id ${from.transactionalId}: producer epoch ${to.producerEpoch}`,
    )
  }
  return to
}
