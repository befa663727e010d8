/**
 * The transaction coordinator service (Kafka's `TransactionCoordinator` outside its state machine,
 * `TransactionStateManager`'s log appends and `TransactionMarkerChannelManager`): it runs one
 * `TransactionCoordinatorShard` per `__transaction_state` partition on the coordinator runtime, over
 * logs of their own in the record store, and writes transaction markers.
 *
 * - Requests become named write and read operations on the transactional id's shard; they are
 *   answered once their records are durable (an EndTxn as soon as its Prepare record is).
 * - Markers: an operation that decides an outcome hands its `TxnMarkerIntent` to the runtime as a
 *   completion; once the Prepare record is durable the runtime passes it here, the markers are
 *   written through a `TransactionMarkerWriter` (the partition logs and the group coordinator), the
 *   results go through Kafka's table (`TxnMarkerTracker`), and when every partition has its marker
 *   the `complete-transaction` operation writes CompleteCommit/CompleteAbort.
 * - Loading re-sends the markers of every transaction left in PrepareCommit/PrepareAbort and arms
 *   the periodic timeout and expiration operations (the shard's `onLoaded`).
 */
import { ErrorCode } from '../../protocol/errors.js'
import { TRANSACTION_STATE_TOPIC_NAME } from '../../protocol/topics.js'
import { type RuntimeClock, systemClock, type TimerHandle } from '../runtime/clock.js'
import { CoordinatorRuntimeError } from '../runtime/errors.js'
import { CoordinatorRuntime } from '../runtime/runtime.js'
import type { RuntimeLogger } from '../runtime/types.js'
import type { CoordinatorRecord, RecordStore } from '../storage/types.js'
import {
  type AddPartitionsInput,
  type DescribedTransaction,
  describeTransactionError,
  type EndTxnInput,
  type InitProducerIdInput,
  type ListedTransaction,
  type ListTransactionsInput,
  type ListTransactionsOutcome,
  type MarkerPartitionResult,
  type ProducerIdAllocator,
  TransactionCoordinatorShard,
  transactionRecordSerde,
  transactionShardFor,
  type TxnMarkerIntent,
  TxnMarkerTracker,
  type TxnRecord,
  type TxnResult,
  type VerifyPartitionsOutcome,
} from '../txn/index.js'
import { toKafkaErrorCode } from './errors.js'

/** The transaction coordinator's settings (Kafka's names in the comments). */
export interface TransactionCoordinatorConfig {
  /** `transaction.state.log.num.partitions`: shards; must not change while transactional ids exist. */
  readonly transactionStateLogNumPartitions: number
  /** `transaction.max.timeout.ms` */
  readonly transactionMaxTimeoutMs: number
  /** `transactional.id.expiration.ms` */
  readonly transactionalIdExpirationMs: number
  /** `transaction.abort.timed.out.transaction.cleanup.interval.ms` */
  readonly abortTimedOutTransactionCleanupIntervalMs: number
  /** `transaction.remove.expired.transaction.cleanup.interval.ms` */
  readonly removeExpiredTransactionalIdsCleanupIntervalMs: number
  /** `offsets.topic.num.partitions`: where AddOffsetsToTxn's partition is */
  readonly offsetsTopicNumPartitions: number
}

export const DEFAULT_TRANSACTION_COORDINATOR_CONFIG: TransactionCoordinatorConfig = Object.freeze({
  transactionStateLogNumPartitions: 50,
  transactionMaxTimeoutMs: 900000,
  transactionalIdExpirationMs: 604800000,
  abortTimedOutTransactionCleanupIntervalMs: 10000,
  removeExpiredTransactionalIdsCleanupIntervalMs: 3600000,
  offsetsTopicNumPartitions: 50,
})

/**
 * Writes transaction markers: a control batch (COMMIT or ABORT, the intent's producer id, epoch and
 * coordinator epoch) appended with origin `coordinator` to each data partition, and the marker of a
 * `__consumer_offsets` partition handed to the group coordinator (its pending transactional offsets
 * become committed or are dropped). The partition logs implement it.
 */
export interface TransactionMarkerWriter {
  /** Writes the markers of `marker` to `topics` (some of its partitions); one result per partition. */
  writeTxnMarkers(
    marker: TxnMarkerIntent,
    topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[],
  ): Promise<readonly MarkerPartitionResult[]>
  /** Whether the partition exists (a deleted topic's partitions get no marker, as in Kafka). */
  partitionExists(topic: string, partition: number): boolean
}

/**
 * The first store log of the transaction shards: shard `i` is log `first + i`, just below the three
 * reserved logs at the top of the id space (docs/storage.md), far above the group shards.
 */
export function transactionLogsStart(numPartitions: number): number {
  return 2147483645 - numPartitions
}

/** A view of a record store whose shard `i` is the store's log `first + i`. */
export function offsetRecordStore(store: RecordStore, first: number): RecordStore {
  return {
    open: () => store.open(),
    append: (shard: number, records: readonly CoordinatorRecord[]) => store.append(first + shard, records),
    load: (shard: number) => store.load(first + shard),
    compact: (shard: number) => store.compact(first + shard),
    // The store belongs to the server; the runtime is told not to close it.
    close: async () => {},
  }
}

/**
 * A synchronous allocator over an asynchronous source of producer ids (the node's durable one,
 * shared with idempotent producers): it keeps a few ids ready and refills in the background. When
 * none is ready the shard answers COORDINATOR_LOAD_IN_PROGRESS, which clients retry.
 */
export class PrefetchingProducerIds implements ProducerIdAllocator {
  readonly #next: () => Promise<bigint | number>
  readonly #target: number
  readonly #ready: bigint[] = []
  #refilling: Promise<void> | undefined
  readonly #onError: (err: unknown) => void

  constructor(
    next: () => Promise<bigint | number>,
    options: { prefetch?: number; onError?: (err: unknown) => void } = {},
  ) {
    this.#next = next
    this.#target = options.prefetch ?? 16
    this.#onError = options.onError ?? (() => {})
  }

  generateProducerId(): bigint | null {
    const id = this.#ready.shift()
    if (this.#ready.length < this.#target / 2) void this.fill()
    return id ?? null
  }

  /** Fills the reserve (at start, before the first InitProducerId). */
  fill(): Promise<void> {
    this.#refilling ??= (async () => {
      try {
        while (this.#ready.length < this.#target) this.#ready.push(BigInt(await this.#next()))
      } catch (err) {
        this.#onError(err)
      } finally {
        this.#refilling = undefined
      }
    })()
    return this.#refilling
  }
}

export interface TransactionCoordinatorServiceOptions {
  /** The server's record store, opened; the service uses the logs from {@link transactionLogsStart}. */
  readonly store: RecordStore
  readonly config?: Partial<TransactionCoordinatorConfig>
  readonly producerIds: ProducerIdAllocator
  readonly markers: TransactionMarkerWriter
  /** The finalized `transaction.version` (0–2); default 2. */
  readonly transactionVersionLevel?: () => number
  /** Written into every marker; must never decrease (default 0). */
  readonly coordinatorEpoch?: number
  /** Wait between rounds of marker writes with partitions left (default 100 ms). */
  readonly markerRetryBackoffMs?: number
  /** Write timeout of request operations (Kafka: `request.timeout.ms`); default none. */
  readonly writeTimeoutMs?: number
  readonly clock?: RuntimeClock
  readonly logger?: RuntimeLogger
  /** See CoordinatorRuntimeOptions.onShardReplayed (inspection only). */
  readonly onShardReplayed?: (shardId: number, shard: TransactionCoordinatorShard) => void
}

export interface InitProducerIdAnswer {
  readonly errorCode: number
  readonly producerId: bigint
  readonly producerEpoch: number
}

export interface EndTxnAnswer {
  readonly errorCode: number
  readonly producerId: bigint
  readonly producerEpoch: number
}

const silentLogger: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} }

type Shard = TransactionCoordinatorShard

/** A request operation's result with its markers (if any) handed on as the completion. */
function withMarkers<T extends { readonly markers: TxnMarkerIntent | null }>(r: TxnResult<T>): TxnResult<T> {
  const m = r.response.markers
  return m === null ? r : { records: r.records, response: r.response, completions: [m] }
}

export class TransactionCoordinatorService {
  readonly #runtime: CoordinatorRuntime<Shard, TxnRecord, TxnMarkerIntent>
  readonly #config: TransactionCoordinatorConfig
  readonly #markers: TransactionMarkerWriter
  readonly #clock: RuntimeClock
  readonly #log: RuntimeLogger
  readonly #backoffMs: number
  /** The marker writing in progress per transactional id (a newer intent replaces an older one). */
  readonly #inFlight = new Map<string, TxnMarkerTracker>()
  /**
   * Per transactional id, the transaction being completed (markers, then the Complete record) and
   * the requests waiting for it to end ({@link waitForCompletion}).
   */
  readonly #completing = new Map<string, { tracker: TxnMarkerTracker; waiters: (() => void)[] }>()
  readonly #sleeps = new Map<TimerHandle, () => void>()
  readonly #background = new Set<Promise<unknown>>()
  #closed: Promise<void> | undefined

  private constructor(options: TransactionCoordinatorServiceOptions) {
    const config = { ...DEFAULT_TRANSACTION_COORDINATOR_CONFIG, ...options.config }
    this.#config = config
    this.#markers = options.markers
    this.#clock = options.clock ?? systemClock
    this.#log = options.logger ?? silentLogger
    this.#backoffMs = options.markerRetryBackoffMs ?? 100
    const producerIds = options.producerIds
    const level = options.transactionVersionLevel ?? (() => 2)
    this.#runtime = new CoordinatorRuntime<Shard, TxnRecord, TxnMarkerIntent>({
      store: offsetRecordStore(options.store, transactionLogsStart(config.transactionStateLogNumPartitions)),
      numShards: config.transactionStateLogNumPartitions,
      newShard: () =>
        new TransactionCoordinatorShard({
          producerIds,
          transactionVersionLevel: level,
          transactionMaxTimeoutMs: config.transactionMaxTimeoutMs,
          transactionalIdExpirationMs: config.transactionalIdExpirationMs,
          offsetsTopicNumPartitions: config.offsetsTopicNumPartitions,
          coordinatorEpoch: options.coordinatorEpoch ?? 0,
          abortTimedOutTransactionsIntervalMs: config.abortTimedOutTransactionCleanupIntervalMs,
          removeExpiredTransactionalIdsIntervalMs: config.removeExpiredTransactionalIdsCleanupIntervalMs,
        }),
      serde: transactionRecordSerde,
      clock: this.#clock,
      logger: this.#log,
      logTopic: TRANSACTION_STATE_TOPIC_NAME,
      closeStore: false,
      writeTimeoutMs: options.writeTimeoutMs,
      readTimeoutMs: options.writeTimeoutMs,
      complete: (shardId, marker, failure) => this.#onMarkers(shardId, marker, failure),
      onShardReplayed: options.onShardReplayed,
    })
  }

  /**
   * The marker writer this coordinator writes through; WriteTxnMarkers (27) writes the markers an
   * admin client sends through the same writer.
   */
  get markerWriter(): TransactionMarkerWriter {
    return this.#markers
  }

  /** Builds the runtime and loads every shard (which re-sends pending markers and arms the timers). */
  static async start(options: TransactionCoordinatorServiceOptions): Promise<TransactionCoordinatorService> {
    const service = new TransactionCoordinatorService(options)
    await service.#runtime.load()
    return service
  }

  get numShards(): number {
    return this.#config.transactionStateLogNumPartitions
  }

  /** A shard's replayed state, outside its queue: for inspection only (see CoordinatorRuntime.peekShard). */
  peekShard(shardId: number): Shard | undefined {
    return this.#runtime.peekShard(shardId)
  }

  /** Whether a shard's replayed state is ahead of its log (CoordinatorRuntime.hasUnwrittenRecords). */
  hasUnwrittenRecords(shardId: number): boolean {
    return this.#runtime.hasUnwrittenRecords(shardId)
  }

  /** The `__transaction_state` partition of a transactional id. */
  shardFor(transactionalId: string): number {
    return transactionShardFor(transactionalId, this.#config.transactionStateLogNumPartitions)
  }

  /** Whether every shard has loaded (ListTransactions answers COORDINATOR_LOAD_IN_PROGRESS until then). */
  isLoaded(): boolean {
    for (let i = 0; i < this.numShards; i++) if (!this.#runtime.isActive(i)) return false
    return true
  }

  errorCode(err: unknown, operation: string): number {
    return toKafkaErrorCode(err, operation, this.#log)
  }

  // ---- requests ----

  /** InitProducerId with a transactional id (the handler checked authorization). */
  async initProducerId(input: InitProducerIdInput): Promise<InitProducerIdAnswer> {
    try {
      const r = await this.#runtime.scheduleWriteOperation(
        'init-producer-id',
        this.shardFor(input.transactionalId),
        (s, now) => withMarkers(s.initProducerId(input, now)),
      )
      return { errorCode: r.errorCode, producerId: r.producerId, producerEpoch: r.producerEpoch }
    } catch (e) {
      return { errorCode: this.errorCode(e, 'init-producer-id'), producerId: -1n, producerEpoch: -1 }
    }
  }

  /** AddPartitionsToTxn v0–3, or a v4+ add (`VerifyOnly` false): one error for the transaction. */
  async addPartitionsToTxn(input: AddPartitionsInput): Promise<number> {
    try {
      const r = await this.#runtime.scheduleWriteOperation(
        'add-partitions-to-txn',
        this.shardFor(input.transactionalId),
        (s, now) => s.addPartitions(input, now),
      )
      return r.errorCode
    } catch (e) {
      return this.errorCode(e, 'add-partitions-to-txn')
    }
  }

  /** AddPartitionsToTxn v4+ with `VerifyOnly`: per partition, whether it is in the transaction. */
  async verifyPartitionsInTxn(
    input: Omit<AddPartitionsInput, 'clientTransactionVersion'>,
  ): Promise<VerifyPartitionsOutcome> {
    try {
      return await this.#runtime.scheduleReadOperation(
        'verify-partitions-in-txn',
        this.shardFor(input.transactionalId),
        (s) => s.verifyPartitions(input),
      )
    } catch (e) {
      const code = this.errorCode(e, 'verify-partitions-in-txn')
      return {
        topics: input.topics.map((t) => ({
          topic: t.topic,
          partitions: t.partitions.map((p) => ({ partitionIndex: p, errorCode: code })),
        })),
      }
    }
  }

  /** AddOffsetsToTxn. */
  async addOffsetsToTxn(input: {
    transactionalId: string
    producerId: bigint
    producerEpoch: number
    groupId: string
  }): Promise<number> {
    try {
      const r = await this.#runtime.scheduleWriteOperation(
        'add-offsets-to-txn',
        this.shardFor(input.transactionalId),
        (s, now) => s.addOffsets(input, now),
      )
      return r.errorCode
    } catch (e) {
      return this.errorCode(e, 'add-offsets-to-txn')
    }
  }

  /** EndTxn; answered once the Prepare record is durable, before the markers are written. */
  async endTxn(input: EndTxnInput): Promise<EndTxnAnswer> {
    try {
      const r = await this.#runtime.scheduleWriteOperation(
        'end-txn',
        this.shardFor(input.transactionalId),
        (s, now) => withMarkers(s.endTxn(input, now)),
      )
      return { errorCode: r.errorCode, producerId: r.producerId, producerEpoch: r.producerEpoch }
    } catch (e) {
      return { errorCode: this.errorCode(e, 'end-txn'), producerId: -1n, producerEpoch: -1 }
    }
  }

  /** DescribeTransactions, in request order (the handler checked authorization per id). */
  describeTransactions(transactionalIds: readonly string[]): Promise<DescribedTransaction[]> {
    return Promise.all(
      transactionalIds.map(async (id) => {
        try {
          return await this.#runtime.scheduleReadOperation('describe-transactions', this.shardFor(id), (s) =>
            s.describeTransaction(id),
          )
        } catch (e) {
          return describeTransactionError(id, this.errorCode(e, 'describe-transactions'))
        }
      }),
    )
  }

  /** ListTransactions over every shard; COORDINATOR_LOAD_IN_PROGRESS while any shard loads. */
  async listTransactions(input: ListTransactionsInput): Promise<ListTransactionsOutcome> {
    const failed = (errorCode: number): ListTransactionsOutcome => ({
      errorCode,
      unknownStateFilters: [],
      transactionStates: [],
    })
    const outcomes: ListTransactionsOutcome[] = []
    try {
      for (let i = 0; i < this.numShards; i++) {
        outcomes.push(
          await this.#runtime.scheduleReadOperation('list-transactions', i, (s, now) =>
            s.listTransactions(input, now),
          ),
        )
      }
    } catch (e) {
      return failed(this.errorCode(e, 'list-transactions'))
    }
    const states: ListedTransaction[] = []
    for (const o of outcomes) {
      if (o.errorCode !== ErrorCode.NONE) return failed(o.errorCode)
      states.push(...o.transactionStates)
    }
    return {
      errorCode: ErrorCode.NONE,
      unknownStateFilters: outcomes[0]!.unknownStateFilters,
      transactionStates: states,
    }
  }

  // ---- markers ----

  /** The runtime's completion hook: the Prepare record of `marker` is durable (or failed to be). */
  #onMarkers(shardId: number, marker: TxnMarkerIntent, failure: unknown): void {
    // Not durable: nothing was decided, so there is nothing to write.
    if (failure !== undefined || this.#closed !== undefined) return
    const tracker = new TxnMarkerTracker(marker)
    const previous = this.#inFlight.get(marker.transactionalId)
    if (previous !== undefined) {
      this.#log.info(
        { transactionalId: marker.transactionalId },
        'Replaced an existing pending complete txn while adding markers to send',
      )
    }
    this.#inFlight.set(marker.transactionalId, tracker)
    const waiters = this.#completing.get(marker.transactionalId)?.waiters ?? []
    this.#completing.set(marker.transactionalId, { tracker, waiters })
    // The markers are written once the request that decided them is answered (this hook runs
    // before the EndTxn response is sent), as Kafka answers EndTxn once the Prepare record is
    // appended and hands the markers to its sender thread.
    setImmediate(() => {
      this.#track(this.#writeMarkers(shardId, tracker).finally(() => this.#completed(tracker)))
    })
  }

  /** The transaction of `tracker` is complete or abandoned: wakes the requests waiting for it. */
  #completed(tracker: TxnMarkerTracker): void {
    const id = tracker.intent.transactionalId
    const entry = this.#completing.get(id)
    if (entry === undefined || entry.tracker !== tracker) return
    this.#completing.delete(id)
    for (const wake of entry.waiters) wake()
  }

  /**
   * Runs `attempt` (an add to the transaction); when it answers CONCURRENT_TRANSACTIONS while the
   * id's previous transaction is completing, waits for it (at most `maxWaitMs`) and runs `attempt`
   * once more. EndTxn is answered before its markers are written, so a client's next add may meet
   * them; Kafka's client then backs off 20 ms (`retry.backoff.ms` for later requests), while the
   * markers of one node take well under a millisecond.
   */
  async afterCompletion(
    transactionalId: string,
    maxWaitMs: number,
    attempt: () => Promise<number>,
  ): Promise<number> {
    const code = await attempt()
    if (code !== ErrorCode.CONCURRENT_TRANSACTIONS || !this.isCompleting(transactionalId)) return code
    await this.waitForCompletion(transactionalId, maxWaitMs)
    return attempt()
  }

  /** Whether the transaction of `transactionalId` has markers or its Complete record being written. */
  isCompleting(transactionalId: string): boolean {
    return this.#completing.has(transactionalId)
  }

  /**
   * Resolves once the transaction of `transactionalId` whose markers are being written is complete
   * (its Complete record written, or its markers given up), after `maxWaitMs` at the latest, and at
   * once when none is being completed. A request that met CONCURRENT_TRANSACTIONS because the
   * previous transaction was still completing retries right when it ends instead of after a fixed
   * backoff (on one node the coordinator knows when that is).
   */
  waitForCompletion(transactionalId: string, maxWaitMs: number): Promise<void> {
    const entry = this.#completing.get(transactionalId)
    if (entry === undefined || this.#closed !== undefined || maxWaitMs <= 0) return Promise.resolve()
    return new Promise((resolve) => {
      let handle: TimerHandle | undefined
      const wake = () => {
        if (handle === undefined) return
        this.#clock.clearTimer(handle)
        this.#sleeps.delete(handle)
        handle = undefined
        resolve()
      }
      handle = this.#clock.setTimer(() => {
        if (handle !== undefined) this.#sleeps.delete(handle)
        handle = undefined
        const i = entry.waiters.indexOf(wake)
        if (i >= 0) entry.waiters.splice(i, 1)
        resolve()
      }, maxWaitMs)
      this.#sleeps.set(handle, resolve)
      entry.waiters.push(wake)
    })
  }

  /** Writes a transaction's markers until every partition has one, then completes the transaction. */
  async #writeMarkers(shardId: number, tracker: TxnMarkerTracker): Promise<void> {
    const { transactionalId } = tracker.intent
    const current = () => this.#closed === undefined && this.#inFlight.get(transactionalId) === tracker
    while (current()) {
      tracker.dropMissing((topic, partition) => this.#markers.partitionExists(topic, partition))
      if (tracker.done) break
      let results: readonly MarkerPartitionResult[]
      try {
        results = await this.#markers.writeTxnMarkers(tracker.intent, tracker.remaining())
      } catch (err) {
        this.#log.warn({ transactionalId, err }, 'Writing transaction markers failed; retrying')
        await this.#sleep(this.#backoffMs)
        continue
      }
      const progress = tracker.onResults(results)
      if (progress.kind === 'complete') break
      if (progress.kind === 'abandoned') {
        this.#log.info(
          { transactionalId, errorCode: progress.errorCode },
          'Sending transaction markers has permanently failed; cancel sending any more transaction markers',
        )
        if (this.#inFlight.get(transactionalId) === tracker) this.#inFlight.delete(transactionalId)
        return
      }
      if (progress.kind === 'fatal') {
        this.#log.error(
          {
            transactionalId,
            errorCode: progress.errorCode,
            topic: progress.topic,
            partition: progress.partition,
          },
          'Received fatal error while sending txn marker',
        )
        if (this.#inFlight.get(transactionalId) === tracker) this.#inFlight.delete(transactionalId)
        return
      }
      await this.#sleep(this.#backoffMs)
    }
    if (!current()) return
    this.#inFlight.delete(transactionalId)
    await this.#complete(shardId, tracker.intent)
  }

  /**
   * Writes the Complete record. A failed write is retried while the shard serves: Kafka leaves a
   * NOT_COORDINATOR to the next leader's load, but a single node has no next leader, and the
   * transactional id would answer CONCURRENT_TRANSACTIONS until a restart.
   */
  async #complete(shardId: number, marker: TxnMarkerIntent): Promise<void> {
    while (this.#closed === undefined) {
      try {
        await this.#runtime.scheduleWriteOperation('complete-transaction', shardId, (s, now) =>
          s.completeTransaction(
            {
              transactionalId: marker.transactionalId,
              producerId: marker.producerId,
              producerEpoch: marker.producerEpoch,
              committed: marker.committed,
            },
            now,
          ),
        )
        return
      } catch (err) {
        if (
          err instanceof CoordinatorRuntimeError &&
          err.code !== 'COORDINATOR_WRITE_FAILED' &&
          err.code !== 'COORDINATOR_WRITE_TIMEOUT'
        ) {
          // Closed, failed or not hosted: the next load completes it.
          return
        }
        this.#log.warn(
          { transactionalId: marker.transactionalId, err },
          'Completing the transaction failed; retrying',
        )
        await this.#sleep(this.#backoffMs)
      }
    }
  }

  /** Waits `ms` on the service's clock; ends early when the service closes. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const handle = this.#clock.setTimer(() => {
        this.#sleeps.delete(handle)
        resolve()
      }, ms)
      this.#sleeps.set(handle, resolve)
    })
  }

  #track(p: Promise<unknown>): void {
    const tracked = p.catch((err: unknown) => this.#log.error({ err }, 'Transaction marker writing failed'))
    this.#background.add(tracked)
    void tracked.finally(() => this.#background.delete(tracked))
  }

  /** Stops: marker writing ends (the next start re-sends what is left), queued operations drain. */
  /** The server accepts connections now: see {@link CoordinatorRuntime.servingStarted}. */
  servingStarted(): void {
    this.#runtime.servingStarted()
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      for (const [handle, resolve] of this.#sleeps) {
        this.#clock.clearTimer(handle)
        resolve()
      }
      this.#sleeps.clear()
      this.#inFlight.clear()
      for (const entry of this.#completing.values()) for (const wake of entry.waiters) wake()
      this.#completing.clear()
      await this.#runtime.close()
      await Promise.allSettled([...this.#background])
    })()
    return this.#closed
  }
}
