import type {
  LoadOptions,
  CoordinatorRecord as StoredRecord,
  RecordStore,
  ShardBatch,
} from '../storage/types.js'
import { type RuntimeClock, systemClock, type TimerHandle } from './clock.js'
import { CoordinatorRuntimeError, CoordinatorTimeoutError, CoordinatorWriteError } from './errors.js'
import type {
  CoordinatorResult,
  ReadOperation,
  RecordSerde,
  RuntimeLogger,
  ShardStateMachine,
  ShardTimer,
  TimerIntents,
  TimerOperation,
  TimerOptions,
  TimerWatch,
  WriteOperation,
} from './types.js'

export interface CoordinatorRuntimeOptions<S extends ShardStateMachine<R, C>, R, C = never> {
  /** An opened store. */
  readonly store: RecordStore
  /** `offsets.topic.num.partitions`: shards are 0 … numShards − 1. */
  readonly numShards: number
  /** Builds an empty shard; `timer` tells it which of its timers are armed. */
  readonly newShard: (shardId: number, timer: ShardTimer<R, C>) => S
  readonly serde: RecordSerde<R>
  /** Time and timers; default {@link systemClock}. */
  readonly clock?: RuntimeClock
  readonly logger?: RuntimeLogger
  /**
   * The Kafka topic whose partitions the shards stand for (`__consumer_offsets`,
   * `__transaction_state`): log lines name shard N as `<topic>-N`, as Kafka's do. Default
   * `coordinator-shard`.
   */
  readonly logTopic?: string
  /** Compacts every active shard this often (default: never; `compact(shardId)` still works). */
  readonly compactionIntervalMs?: number
  /** Whether `close()` closes the store too (default true). False when the store is shared. */
  readonly closeStore?: boolean
  /**
   * How long a write operation may take, from its scheduling to its response, before its promise
   * rejects with {@link CoordinatorTimeoutError} (default: no limit). The operation itself still
   * completes, as in Kafka. `scheduleWriteOperation` may give another limit per operation.
   */
  readonly writeTimeoutMs?: number
  /**
   * How long a read operation may wait for its turn and run before its promise rejects with
   * {@link CoordinatorTimeoutError} (default: no limit). Reads queue behind the shard's writes,
   * so a store that stalls would hold them for as long as it stalls; the writes ahead time out
   * on their own limit, and this bounds the reads the same way.
   */
  readonly readTimeoutMs?: number
  /**
   * Receives the completions of every write and timer operation (see
   * {@link CoordinatorResult.completions}): `failure` is undefined once the operation's records are
   * durable and replayed, or the reason the operation failed (its append, its replay). Called in the
   * shard's queue, in the order of the operation's list. Default: completions are dropped.
   */
  readonly complete?: (shardId: number, completion: C, failure: unknown) => void
  /**
   * Told when a shard starts reloading from its log after a failed batch (its memory and timers
   * are discarded): requests parked on the discarded state must be answered now.
   */
  readonly onReload?: (shardId: number) => void
  /**
   * Called once a shard has replayed its log, before its on-loaded operation or any other runs:
   * the state loading rebuilt, for inspection only (the simulation's replay-equivalence check).
   */
  readonly onShardReplayed?: (shardId: number, shard: S) => void
  /**
   * When the writes that became ready are run as batches and go to the store (as Kafka's
   * `group.coordinator.append.linger.ms` bounds how long a batch waits for more writes):
   *
   * - `microtask` (default): in a microtask after the code that queued them, so the operations
   *   queued in one synchronous run (one connection's read of pipelined requests, the timers that
   *   fell due together) share a batch, and every chain settles in microtasks (the deterministic
   *   simulation relies on that);
   * - `turn`: once the I/O callbacks of the current turn of the event loop have run (a
   *   `setImmediate`, the check phase of the same turn), so the requests read from every
   *   connection in one turn share a batch per shard and one store write. A synchronous store
   *   (SQLite, memory) commits in that same turn, and the answers leave in it.
   */
  readonly appendLinger?: 'microtask' | 'turn'
}

type ShardState = 'unloaded' | 'loading' | 'active' | 'failed' | 'closed'

interface TimerEntry {
  handle: TimerHandle
  /** When the clock timer behind `handle` fires. */
  armedDueMs: number
  /** When the timer is due: later than `armedDueMs` once it was replaced by a later deadline. */
  dueMs: number
  operation: TimerOperation<unknown, unknown>
  options: TimerOptions | undefined
  /** The clock timer fired and the operation is queued (or ran): it is no longer replaced in place. */
  fired: boolean
  /** Told when the entry stops being the key's timer (TimerOptions.watch). */
  watch: TimerWatch | undefined
}

interface ShardContext<S, R, C> {
  readonly id: number
  state: ShardState
  shard: S | undefined
  /** The shard's operation queue; `tasks[head]` is the next to run. */
  tasks: Task<S, R, C>[]
  head: number
  /** A task or a batch of writes is running (or waits for the flush): the queue moves on by itself. */
  busy: boolean
  /**
   * Operations in the queue that have not finished (the running ones included): a write's count
   * drops only once its records are durable and replayed. Zero means the queue is idle.
   */
  queued: number
  /** Called once the queue is idle (close waits for it). */
  idle: (() => void)[]
  /** Memory holds records of a batch that are not durable yet (replayed before its write). */
  unwritten: boolean
  readonly timers: Map<string, TimerEntry>
  /** The shard's ShardTimer, built once. */
  timer: ShardTimer<R, C> | undefined
  failure: unknown
  /** When the shard's first load finished, until {@link CoordinatorRuntime.servingStarted}. */
  loadedAtMs: number | undefined
  /** The failed timer operations being retried, as last reported (see {@link TIMER_RETRY_REPORT_MS}). */
  readonly retries: { reportedAtMs: number | undefined; unreported: number }
}

/** Tells a timer entry's watch that the entry is no longer its key's timer. */
function disarmed(entry: TimerEntry): void {
  if (entry.watch !== undefined) entry.watch.armed = false
  entry.watch = undefined
}

/** A write operation's malformed timer intents (checked before anything is written). */
function badIntents(name: string, why: string): CoordinatorRuntimeError {
  return new CoordinatorRuntimeError(
    'COORDINATOR_INVALID_ARGUMENT',
    'NOT_COORDINATOR',
    `write operation ${name}: ${why}`,
  )
}

/**
 * One operation in a shard's queue. A write (`op`, or `result` when it was produced already) may
 * share a store write with the writes queued next to it; anything else (`run`: a read, a
 * compaction) runs alone, between writes.
 */
interface Task<S, R, C> {
  readonly name: string
  readonly op: WriteOperation<S, R, unknown, C> | undefined
  readonly result: CoordinatorResult<R, unknown, C> | undefined
  readonly run: ((ctx: ShardContext<S, R, C>) => unknown) | undefined
  readonly resolve: (value: unknown) => void
  readonly reject: (err: unknown) => void
  /** The operation's timeout, settled when the operation ends. */
  readonly deadline: PendingWrite | undefined
}

/** A write of a batch, produced: its result waits for the batch's store write. */
interface BatchedWrite<S, R, C> {
  readonly task: Task<S, R, C>
  readonly result: CoordinatorResult<R, unknown, C>
}

/**
 * Bounds on one shard's batch of queued writes (one store write): a larger backlog goes in the
 * next write, so one write never grows without bound and its operations' latency stays bounded.
 */
const MAX_BATCH_OPERATIONS = 512
const MAX_BATCH_RECORDS = 8192

/**
 * Timer operations started per turn of the event loop. Timers that fall due together (a shard's
 * members' session timers, armed in the one turn that loaded it, or the timers of members that
 * came back together after a restart and so heartbeat in step) fire in one timers phase; each
 * starts a write operation (its queue, its batch, its re-armed timer). Run all at once, 10,000 of
 * them held the loop for tens of ms, and every request waited (RELIABILITY.md, "Soak"). Beyond this
 * many, the rest start on the next turns, in the order they fired, with I/O served in between.
 */
export const TIMER_OPERATIONS_PER_TURN = 64

/**
 * A shard reports a failed timer operation that it retries at most once in this long (INFO, with
 * the count of those it did not report); the others go to DEBUG. While the store is down, every
 * member's session timer fails and is retried every 500 ms (Kafka logs each at INFO): with 10,000
 * members that was 20,000 lines a second.
 */
export const TIMER_RETRY_REPORT_MS = 10_000

/** One shard's batch waiting for the next group commit. */
interface QueuedAppend extends ShardBatch {
  readonly resolve: () => void
  readonly reject: (err: unknown) => void
}

/** An operation waiting for its answer under a timeout. */
interface PendingWrite {
  readonly name: string
  readonly timeoutMs: number
  readonly deadlineMs: number
  settled: boolean
  /** Rejects the operation's promise (a later answer then settles nothing more). */
  readonly reject: (err: unknown) => void
  /** The clock timer of a timeout other than the runtime's default one. */
  own: TimerHandle | undefined
}

const NOTHING: CoordinatorResult<never, void, never> = Object.freeze({ records: [], response: undefined })

const silentLogger: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} }

/**
 * `appendLinger: 'turn'`: the flush runs once the current turn's I/O callbacks have run. The
 * SQLite engine commits synchronously, so with flushes in microtasks every connection's read of
 * requests was a transaction of its own, each paying a transaction's fixed cost and rewriting its
 * pages whole (BENCHMARKS.md, "OffsetCommit: one batch a turn").
 */
function flushInTurn(flush: () => void): void {
  setImmediate(flush)
}

function isThenable(v: unknown): boolean {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function'
}

/**
 * Runs shards as deterministic state machines over a record store (Kafka's `CoordinatorRuntime`,
 * reduced to one process):
 *
 * - every shard has one queue; its operations (writes, reads, timers, compaction) run strictly one
 *   after another, in scheduling order; different shards run independently;
 * - a write operation runs against the shard's memory and returns records and a response; the
 *   records are appended to the store as one atomic batch, then replayed into the shard, and only
 *   then does the response resolve. A failed append replays nothing and rejects with
 *   {@link CoordinatorWriteError};
 * - appends go to the store by group commit (see `#append`): the batches of every shard that
 *   arrive while a store write is in flight are written together in the next one;
 * - loading a shard is replaying its log into a fresh shard.
 *
 * - the writes queued at the head of a shard's queue run as one batch with one store write (see
 *   `#runBatch`).
 *
 * Kafka replays records into timeline data structures before the append and rolls them back when
 * the append fails. A lone write here is appended first and replayed after, which needs no
 * rollback; a batch replays its earlier writes before the append, and a failed batch is rolled back
 * by reloading the shard from its log.
 */
export class CoordinatorRuntime<S extends ShardStateMachine<R, C>, R, C = never> {
  readonly #store: RecordStore
  readonly #numShards: number
  readonly #newShard: (shardId: number, timer: ShardTimer<R, C>) => S
  readonly #serde: RecordSerde<R>
  /** What loading asks of the store: the serde's `latestOnly`, when it has one. */
  readonly #loadOptions: LoadOptions | undefined
  readonly #clock: RuntimeClock
  readonly #log: RuntimeLogger
  readonly #logTopic: string
  readonly #compactionIntervalMs: number | undefined
  readonly #closeStore: boolean
  readonly #writeTimeoutMs: number | undefined
  readonly #readTimeoutMs: number | undefined
  readonly #complete: ((shardId: number, completion: C, failure: unknown) => void) | undefined
  readonly #onReload: ((shardId: number) => void) | undefined
  readonly #onShardReplayed: ((shardId: number, shard: S) => void) | undefined
  /** Writes waiting for their answer under the default timeout, oldest first; settled ones are skipped. */
  readonly #pendingWrites: PendingWrite[] = []
  #pendingHead = 0
  /** The one clock timer behind every default write timeout, armed for the oldest pending deadline. */
  #writeTimer: TimerHandle | undefined
  #writeTimerDueMs = 0
  readonly #shards: ShardContext<S, R, C>[] = []
  /** Batches that arrived while a store write was in flight: the next group commit writes them. */
  #queuedAppends: QueuedAppend[] = []
  /** Whether a store write is in flight. */
  #writing = false
  /** Shards whose queue has a write at its head, for the next flush. */
  #ready: ShardContext<S, R, C>[] = []
  #flushScheduled = false
  /** How the flush is scheduled (CoordinatorRuntimeOptions.appendLinger). */
  readonly #scheduleFlush: (flush: () => void) => void
  #compactionTimer: TimerHandle | undefined
  #closing: Promise<void> | undefined
  /** {@link servingStarted} was called. */
  #serving = false
  /** Timers that fired and whose operations have not started yet (see TIMER_OPERATIONS_PER_TURN). */
  #due: ((() => void) | undefined)[] = []
  #dueHead = 0
  /** Timer operations started in this turn. */
  #startedThisTurn = 0
  /** A zero-delay clock timer: the turn is over when it runs; it starts the next of them. */
  #dueTimer: TimerHandle | undefined

  constructor(options: CoordinatorRuntimeOptions<S, R, C>) {
    const { numShards, compactionIntervalMs } = options
    if (!Number.isInteger(numShards) || numShards < 1 || numShards > 0x7fffffff) {
      throw new CoordinatorRuntimeError(
        'COORDINATOR_INVALID_ARGUMENT',
        'COORDINATOR_NOT_AVAILABLE',
        `numShards must be a positive 32-bit integer, got ${String(numShards)}`,
      )
    }
    if (
      compactionIntervalMs !== undefined &&
      !(Number.isFinite(compactionIntervalMs) && compactionIntervalMs > 0)
    ) {
      throw new CoordinatorRuntimeError(
        'COORDINATOR_INVALID_ARGUMENT',
        'COORDINATOR_NOT_AVAILABLE',
        `compactionIntervalMs must be a positive number, got ${String(compactionIntervalMs)}`,
      )
    }
    this.#store = options.store
    this.#numShards = numShards
    this.#newShard = options.newShard
    this.#serde = options.serde
    const latestOnly = options.serde.latestOnly
    this.#loadOptions = latestOnly === undefined ? undefined : { latestOnly: latestOnly.bind(options.serde) }
    this.#clock = options.clock ?? systemClock
    this.#log = options.logger ?? silentLogger
    this.#logTopic = options.logTopic ?? 'coordinator-shard'
    this.#compactionIntervalMs = compactionIntervalMs
    this.#closeStore = options.closeStore ?? true
    const writeTimeoutMs = options.writeTimeoutMs
    if (writeTimeoutMs !== undefined && !(Number.isFinite(writeTimeoutMs) && writeTimeoutMs > 0)) {
      throw new CoordinatorRuntimeError(
        'COORDINATOR_INVALID_ARGUMENT',
        'COORDINATOR_NOT_AVAILABLE',
        `writeTimeoutMs must be a positive number, got ${String(writeTimeoutMs)}`,
      )
    }
    this.#writeTimeoutMs = writeTimeoutMs
    const readTimeoutMs = options.readTimeoutMs
    if (readTimeoutMs !== undefined && !(Number.isFinite(readTimeoutMs) && readTimeoutMs > 0)) {
      throw new CoordinatorRuntimeError(
        'COORDINATOR_INVALID_ARGUMENT',
        'COORDINATOR_NOT_AVAILABLE',
        `readTimeoutMs must be a positive number, got ${String(readTimeoutMs)}`,
      )
    }
    this.#readTimeoutMs = readTimeoutMs
    this.#complete = options.complete
    this.#onReload = options.onReload
    this.#onShardReplayed = options.onShardReplayed
    const linger = options.appendLinger ?? 'microtask'
    if (linger !== 'microtask' && linger !== 'turn') {
      throw new CoordinatorRuntimeError(
        'COORDINATOR_INVALID_ARGUMENT',
        'COORDINATOR_NOT_AVAILABLE',
        `appendLinger must be 'microtask' or 'turn', got ${String(linger)}`,
      )
    }
    this.#scheduleFlush = linger === 'turn' ? flushInTurn : queueMicrotask
    for (let id = 0; id < numShards; id++) {
      const ctx: ShardContext<S, R, C> = {
        id,
        state: 'unloaded',
        shard: undefined,
        tasks: [],
        head: 0,
        busy: false,
        queued: 0,
        idle: [],
        unwritten: false,
        timers: new Map(),
        retries: { reportedAtMs: undefined, unreported: 0 },
        loadedAtMs: undefined,
        timer: undefined,
        failure: undefined,
      }
      this.#shards.push(ctx)
    }
  }

  get numShards(): number {
    return this.#numShards
  }

  /**
   * The shard's in-memory state as replayed so far, read outside its queue: for inspection only
   * (the deterministic simulation's invariants, diagnostics), never to change it. Undefined before
   * the shard is built. While {@link hasUnwrittenRecords} is true it is ahead of the log.
   */
  peekShard(shardId: number): S | undefined {
    return this.#context(shardId).shard
  }

  /**
   * Whether the shard's memory holds records that are not durable yet: a batch of writes is in
   * flight whose earlier writes were replayed before the write (see `#runBatch`). None of them is
   * answered before it is durable; a restart now would load the log without them.
   */
  hasUnwrittenRecords(shardId: number): boolean {
    return this.#context(shardId).unwritten
  }

  /** Whether the shard has loaded and serves operations. */
  isActive(shardId: number): boolean {
    return this.#context(shardId).state === 'active'
  }

  /**
   * Loads every shard: a fresh shard replays its log, records the serde does not know are skipped.
   * Operations scheduled on a shard before it is active reject with COORDINATOR_LOAD_IN_PROGRESS.
   * Rejects when a shard cannot be loaded (that shard is then failed; the others still load).
   */
  async load(): Promise<void> {
    const errors: unknown[] = []
    // One shard at a time: a shard's records are in memory only until it has replayed them, so the
    // peak is the largest shard's log, not the whole log. (The SQLite store reads a shard in one
    // synchronous call: loading every shard at once read the whole log before replaying any of it,
    // and the process kept that peak in its RSS long after: RELIABILITY.md, "Soak".) The shards'
    // on-loaded operations do not hold up the next shard's load.
    const onLoaded: Promise<void>[] = []
    for (const ctx of this.#shards) {
      try {
        const started = await this.#loadShard(ctx)
        if (started !== undefined) onLoaded.push(started)
      } catch (e) {
        errors.push(e)
      }
    }
    await Promise.all(onLoaded)
    if (
      this.#closing === undefined &&
      this.#compactionIntervalMs !== undefined &&
      this.#compactionTimer === undefined
    ) {
      this.#armCompaction(this.#compactionIntervalMs)
    }
    if (errors.length > 0) {
      throw new AggregateError(errors, `${errors.length} coordinator shard(s) failed to load`)
    }
  }

  /**
   * Runs a write operation on a shard, in the shard's order. Resolves with its response once its
   * records are durable and replayed; rejects with the operation's own error (nothing written), a
   * {@link CoordinatorWriteError} (append failed, nothing replayed), a
   * {@link CoordinatorRuntimeError} (shard not active) or a {@link CoordinatorTimeoutError} when it
   * took longer than `timeoutMs` (default: the runtime's `writeTimeoutMs`) from now.
   */
  scheduleWriteOperation<T>(
    name: string,
    shardId: number,
    op: WriteOperation<S, R, T, C>,
    timeoutMs: number | undefined = this.#writeTimeoutMs,
  ): Promise<T> {
    return this.#enqueue(shardId, name, op, undefined, timeoutMs)
  }

  /**
   * A write operation that may complete at once: when nothing is queued on the shard (no earlier
   * operation is waiting, running or committing its records), the operation runs now, in the
   * caller's turn, and if it produced no records its timer intents are applied and its response is
   * returned as is, without a promise. Otherwise the result is a promise with the semantics of
   * {@link scheduleWriteOperation}: behind queued operations the operation waits its turn, and an
   * operation that produced records becomes the shard's running operation and resolves once they
   * are durable and replayed.
   *
   * Ordering is the queue's: the operation sees every earlier write's records replayed, and since
   * an earlier write leaves the queue only once its records are durable, a response returned at once
   * never overtakes an earlier write's commit (Kafka completes a write without records only after
   * the writes before it are committed). Failures (the operation's own error, a shard that is not
   * active) always come as a rejected promise. The response itself must not be a promise. A promise
   * carries the write timeout as {@link scheduleWriteOperation} does.
   */
  writeOperationNowOrLater<T>(
    name: string,
    shardId: number,
    op: WriteOperation<S, R, T, C>,
    timeoutMs: number | undefined = this.#writeTimeoutMs,
  ): T | Promise<T> {
    let ctx: ShardContext<S, R, C>
    try {
      ctx = this.#context(shardId)
      this.#checkActive(ctx, name)
    } catch (e) {
      return Promise.reject(e)
    }
    if (ctx.queued > 0) return this.#push<T>(ctx, name, op, undefined, undefined, timeoutMs)
    let result: CoordinatorResult<R, T, C>
    try {
      result = this.#produce(ctx, name, op)
    } catch (e) {
      return Promise.reject(e)
    }
    if (result.records.length === 0) {
      this.#applyTimerIntents(ctx, result.timers)
      this.#deliver(ctx, result.completions, undefined)
      return result.response
    }
    // The queue is idle, so the commit starts at its head: later operations wait for it.
    return this.#push<T>(ctx, name, undefined, result, undefined, timeoutMs)
  }

  /**
   * Runs a read operation on a shard, after every operation scheduled before it; rejects with
   * {@link CoordinatorTimeoutError} when it has not run within `timeoutMs` (default: the runtime's
   * `readTimeoutMs`) from now.
   */
  scheduleReadOperation<T>(
    name: string,
    shardId: number,
    op: ReadOperation<S, T>,
    timeoutMs: number | undefined = this.#readTimeoutMs,
  ): Promise<T> {
    return this.#enqueue(
      shardId,
      name,
      undefined,
      (ctx) => {
        const result = op(ctx.shard as S, this.#clock.now())
        if (isThenable(result)) throw this.#asyncOperation(name)
        return result
      },
      timeoutMs,
    )
  }

  /** The timers of one shard (the same object the shard received when it was created). */
  timer(shardId: number): ShardTimer<R, C> {
    return this.#timerFor(this.#context(shardId))
  }

  /**
   * Schedules a timer on a shard; see {@link ShardTimer.schedule}. Shard operations ask for timers
   * in their results instead; this is for the layer that drives the runtime.
   */
  scheduleTimer(
    shardId: number,
    key: string,
    delayMs: number,
    op: TimerOperation<R, C>,
    options?: TimerOptions,
  ): void {
    this.timer(shardId).schedule(key, delayMs, op, options)
  }

  cancelTimer(shardId: number, key: string): void {
    this.timer(shardId).cancel(key)
  }

  /**
   * Tells the runtime that clients can reach it now (the server's listeners are up). Start-up loads
   * every shard before the server listens, and a shard arms its members' session timers when it
   * loads; so that a long start-up fences no member that never had the chance to heartbeat, the
   * deadline of every timer pending then is pushed back by the time since its shard loaded. The
   * shards' own soft deadlines follow through the timers' watches. Later loads are not affected.
   */
  servingStarted(): void {
    if (this.#serving) return
    this.#serving = true
    const now = this.#clock.now()
    for (const ctx of this.#shards) {
      const loadedAt = ctx.loadedAtMs
      ctx.loadedAtMs = undefined
      if (loadedAt === undefined || now <= loadedAt) continue
      const delta = now - loadedAt
      for (const entry of ctx.timers.values()) {
        if (entry.fired) continue
        // The clock timer stays armed; firing before the new deadline re-arms it for the rest.
        entry.dueMs += delta
        if (entry.watch !== undefined) entry.watch.dueMs = entry.dueMs
      }
    }
  }

  /** Compacts a shard's log in its queue (between operations). */
  compact(shardId: number): Promise<void> {
    return this.#enqueue(shardId, 'compact', undefined, (ctx) => this.#store.compact(ctx.id))
  }

  /**
   * Stops accepting operations, cancels timers and periodic compaction, waits for every operation
   * already scheduled, then closes the store (unless `closeStore: false`). Safe to call twice.
   */
  close(): Promise<void> {
    if (this.#closing === undefined) this.#closing = this.#doClose()
    return this.#closing
  }

  async #doClose(): Promise<void> {
    if (this.#compactionTimer !== undefined) this.#clock.clearTimer(this.#compactionTimer)
    this.#compactionTimer = undefined
    if (this.#dueTimer !== undefined) this.#clock.clearTimer(this.#dueTimer)
    this.#dueTimer = undefined
    this.#due = []
    this.#dueHead = 0
    this.#startedThisTurn = 0
    // Writes still pending keep their deadlines until the queues drain.
    for (const ctx of this.#shards) {
      this.#clearTimers(ctx)
    }
    await Promise.all(this.#shards.map((ctx) => this.#whenIdle(ctx)))
    if (this.#writeTimer !== undefined) this.#clock.clearTimer(this.#writeTimer)
    this.#writeTimer = undefined
    for (const ctx of this.#shards) {
      ctx.state = 'closed'
      ctx.shard = undefined
    }
    if (this.#closeStore) await this.#store.close()
  }

  /**
   * Reads and replays a shard's log; resolves once it is replayed, with its on-loaded operation (to
   * wait for) when it has one.
   */
  async #loadShard(ctx: ShardContext<S, R, C>): Promise<Promise<void> | undefined> {
    if (ctx.state !== 'unloaded' || this.#closing !== undefined) return undefined
    ctx.state = 'loading'
    const started = this.#clock.now()
    try {
      const shard = this.#newShard(ctx.id, this.#timerFor(ctx))
      // Of the keys the serde allows, only the latest record: the store leaves the others out.
      const records = await this.#store.load(ctx.id, this.#loadOptions)
      let skipped = 0
      for (let i = 0; i < records.length; i++) {
        let record: R | undefined
        try {
          record = this.#serde.deserialize(records[i])
          if (record === undefined) {
            skipped++
            continue
          }
          shard.replay(record)
        } catch (cause) {
          throw new CoordinatorRuntimeError(
            'COORDINATOR_SHARD_FAILED',
            'NOT_COORDINATOR',
            `shard ${ctx.id}: record ${i} of ${records.length} could not be replayed: ${(cause as Error)?.message ?? String(cause)}`,
            { cause, shardId: ctx.id },
          )
        }
      }
      if (this.#closing !== undefined) return undefined
      ctx.shard = shard
      ctx.state = 'active'
      if (!this.#serving) ctx.loadedAtMs = this.#clock.now()
      this.#onShardReplayed?.(ctx.id, shard)
      this.#log.info(
        {
          shard: ctx.id,
          records: records.length,
          skipped,
          elapsedMs: this.#clock.now() - started,
        },
        `Finished loading of metadata from ${this.#logTopic}-${ctx.id}`,
      )
    } catch (e) {
      ctx.state = 'failed'
      ctx.failure = e
      this.#log.error({ shard: ctx.id, err: e }, `Failed to load metadata from ${this.#logTopic}-${ctx.id}`)
      throw e
    }
    if (ctx.shard?.onLoaded === undefined) return undefined
    // The shard's first operation: operations scheduled from now on queue behind it.
    return this.#push(ctx, 'on-loaded', this.#onLoadedOp, undefined, undefined).then(
      () => undefined,
      (err: unknown) => {
        this.#log.error({ shard: ctx.id, err }, 'The on-loaded operation of coordinator shard failed')
      },
    )
  }

  #context(shardId: number): ShardContext<S, R, C> {
    const ctx = Number.isInteger(shardId) ? this.#shards[shardId] : undefined
    if (ctx === undefined) {
      throw new CoordinatorRuntimeError(
        'COORDINATOR_INVALID_ARGUMENT',
        'NOT_COORDINATOR',
        `shard ${String(shardId)} is not hosted here (shards are 0 … ${this.#numShards - 1})`,
      )
    }
    return ctx
  }

  /** Throws unless the shard serves operations. */
  #checkActive(ctx: ShardContext<S, R, C>, name: string): void {
    if (ctx.state === 'active' && this.#closing === undefined) return
    if (ctx.state === 'loading' || ctx.state === 'unloaded') {
      throw new CoordinatorRuntimeError(
        'COORDINATOR_LOADING',
        'COORDINATOR_LOAD_IN_PROGRESS',
        `${name}: shard ${ctx.id} is loading`,
        { shardId: ctx.id },
      )
    }
    if (ctx.state === 'failed') {
      throw new CoordinatorRuntimeError(
        'COORDINATOR_NOT_ACTIVE',
        'NOT_COORDINATOR',
        `${name}: shard ${ctx.id} failed`,
        {
          shardId: ctx.id,
          cause: ctx.failure,
        },
      )
    }
    throw new CoordinatorRuntimeError(
      'COORDINATOR_NOT_ACTIVE',
      'NOT_COORDINATOR',
      `${name}: the coordinator runtime is closed`,
      { shardId: ctx.id },
    )
  }

  /**
   * Queues a write (`op`), or a read or compaction (`run`: it runs alone, after every operation
   * queued before it), on an active shard.
   */
  #enqueue<T>(
    shardId: number,
    name: string,
    op: WriteOperation<S, R, T, C> | undefined,
    run?: (ctx: ShardContext<S, R, C>) => T | Promise<T>,
    timeoutMs?: number,
  ): Promise<T> {
    let ctx: ShardContext<S, R, C>
    try {
      ctx = this.#context(shardId)
      this.#checkActive(ctx, name)
    } catch (e) {
      return Promise.reject(e)
    }
    return this.#push<T>(ctx, name, op, undefined, run, timeoutMs)
  }

  /**
   * Appends a task to an active shard's queue. The state is checked again when the task's turn
   * comes: the shard may have failed or the runtime started closing meanwhile (operations already
   * queued at close still run: close drains).
   */
  #push<T>(
    ctx: ShardContext<S, R, C>,
    name: string,
    op: WriteOperation<S, R, T, C> | undefined,
    result: CoordinatorResult<R, T, C> | undefined,
    run: ((ctx: ShardContext<S, R, C>) => T | Promise<T>) | undefined,
    timeoutMs?: number,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      ctx.tasks.push({
        name,
        op: op as WriteOperation<S, R, unknown, C> | undefined,
        result,
        run,
        resolve: resolve as (value: unknown) => void,
        reject,
        deadline: timeoutMs === undefined ? undefined : this.#deadline(name, timeoutMs, reject),
      })
      ctx.queued++
      if (!ctx.busy) {
        ctx.busy = true
        // The caller's turn goes on first (as with a promise chain): the queue moves in a microtask.
        queueMicrotask(() => this.#pump(ctx))
      }
    })
  }

  /** Ends a task: one operation fewer in the queue. */
  #done(ctx: ShardContext<S, R, C>, task: Task<S, R, C>, failed: boolean, value: unknown): void {
    ctx.queued--
    if (task.deadline !== undefined) this.#settleWrite(task.deadline)
    if (failed) task.reject(value)
    else task.resolve(value)
  }

  /** Resolves once the shard's queue is idle. */
  #whenIdle(ctx: ShardContext<S, R, C>): Promise<void> {
    if (!ctx.busy && ctx.queued === 0) return Promise.resolve()
    return new Promise<void>((resolve) => ctx.idle.push(resolve))
  }

  /**
   * Moves the shard's queue on (`ctx.busy` is set): runs reads and compactions one by one; a write
   * at the head waits for the flush, which runs it with the writes queued behind it as one batch.
   */
  #pump(ctx: ShardContext<S, R, C>): void {
    for (;;) {
      const task = ctx.tasks[ctx.head]
      if (task === undefined) {
        ctx.tasks.length = 0
        ctx.head = 0
        ctx.busy = false
        if (ctx.idle.length > 0) {
          const waiting = ctx.idle
          ctx.idle = []
          for (const w of waiting) w()
        }
        return
      }
      if (task.run === undefined) {
        this.#ready.push(ctx)
        if (!this.#flushScheduled) {
          this.#flushScheduled = true
          this.#scheduleFlush(this.#flush)
        }
        return
      }
      ctx.head++
      let value: unknown
      try {
        if (ctx.state !== 'active') this.#checkActive(ctx, task.name)
        value = task.run(ctx)
      } catch (err) {
        this.#done(ctx, task, true, err)
        continue
      }
      if (isThenable(value)) {
        ;(value as Promise<unknown>).then(
          (v) => {
            this.#done(ctx, task, false, v)
            this.#pump(ctx)
          },
          (err: unknown) => {
            this.#done(ctx, task, true, err)
            this.#pump(ctx)
          },
        )
        return
      }
      this.#done(ctx, task, false, value)
    }
  }

  /**
   * Runs the writes at the head of every ready shard's queue, one batch per shard, and starts the
   * store write. It runs in a microtask after the code that queued the writes (`appendLinger`
   * `microtask`) or once the I/O callbacks of the event loop's turn have run (`turn`): every
   * operation queued meanwhile (the pipelined requests of one connection that the server
   * dispatched together, or of every connection read in the turn; the timers that fell due
   * together) shares one store write, and the batches of the shards that became ready one group
   * commit.
   */
  readonly #flush = (): void => {
    this.#flushScheduled = false
    const ready = this.#ready
    this.#ready = []
    for (let i = 0; i < ready.length; i++) this.#runBatch(ready[i])
    if (!this.#writing && this.#queuedAppends.length > 0) void this.#writeQueued()
  }

  /**
   * Produces the writes at the head of a shard's queue as one batch and queues its records for the
   * next store write. Each write runs against the shard with the records of the writes before it
   * replayed, so a write after the first replays the earlier ones' records before they are durable
   * (speculatively); the last write's records are replayed once durable. No answer, timer or
   * completion of the batch is given before its records are durable. A write that throws fails
   * alone (it wrote nothing); a write without records that follows others waits for their write.
   */
  #runBatch(ctx: ShardContext<S, R, C>): void {
    const batch: BatchedWrite<S, R, C>[] = []
    const encoded: StoredRecord[] = []
    /** The produced write whose records are not replayed yet. */
    let unreplayed: BatchedWrite<S, R, C> | undefined
    let speculative = false
    while (batch.length < MAX_BATCH_OPERATIONS && encoded.length < MAX_BATCH_RECORDS) {
      const task = ctx.tasks[ctx.head]
      if (task === undefined || task.run !== undefined) break
      ctx.head++
      if (ctx.state !== 'active') {
        try {
          this.#checkActive(ctx, task.name)
        } catch (err) {
          this.#done(ctx, task, true, err)
        }
        continue
      }
      if (unreplayed !== undefined) {
        // The next write must see the previous one's state.
        const previous = unreplayed
        unreplayed = undefined
        speculative = true
        ctx.unwritten = true
        if (!this.#replayAll(ctx, previous)) {
          // Memory now holds part of records that were never written: the shard stops, and every
          // write of the batch fails with it (nothing of it was written).
          this.#failBatch(ctx, batch, ctx.failure, true)
          this.#done(ctx, task, true, this.#notActive(ctx, task.name))
          this.#pump(ctx)
          return
        }
      }
      let result: CoordinatorResult<R, unknown, C>
      let records: StoredRecord[]
      try {
        result = task.result ?? this.#produce(ctx, task.name, task.op as WriteOperation<S, R, unknown, C>)
        // A serializer throw is the operation's bug; nothing of it has been written.
        records = this.#serializeAll(result.records)
      } catch (err) {
        this.#done(ctx, task, true, err)
        continue
      }
      if (records.length === 0 && batch.length === 0) {
        // Nothing before it waits for a write: answered now.
        this.#applyTimerIntents(ctx, result.timers)
        this.#deliver(ctx, result.completions, undefined)
        this.#done(ctx, task, false, result.response)
        continue
      }
      const w: BatchedWrite<S, R, C> = { task, result }
      batch.push(w)
      for (let i = 0; i < records.length; i++) encoded.push(records[i])
      if (records.length > 0) unreplayed = w
    }
    if (batch.length === 0) {
      this.#pump(ctx)
      return
    }
    this.#append(ctx.id, encoded).then(
      () => {
        this.#release(encoded)
        this.#committed(ctx, batch, unreplayed)
      },
      (cause: unknown) => {
        this.#release(encoded)
        this.#writeFailed(ctx, batch, cause, speculative)
      },
    )
  }

  /** The store has settled a write: the serde may reuse the bytes of its records. */
  #release(encoded: readonly StoredRecord[]): void {
    if (this.#serde.release === undefined) return
    try {
      this.#serde.release(encoded)
    } catch (err) {
      this.#log.error({ err }, 'Releasing encoded records failed')
    }
  }

  #serializeAll(records: readonly R[]): StoredRecord[] {
    if (records.length === 0) return []
    const serde = this.#serde
    return serde.serializeAll !== undefined
      ? serde.serializeAll(records)
      : records.map((r) => serde.serialize(r))
  }

  /** Replays a produced write's records; false (and the shard failed) when replay threw. */
  #replayAll(ctx: ShardContext<S, R, C>, w: BatchedWrite<S, R, C>): boolean {
    const shard = ctx.shard as S
    const records = w.result.records
    try {
      for (let i = 0; i < records.length; i++) shard.replay(records[i])
      return true
    } catch (cause) {
      ctx.state = 'failed'
      ctx.failure = new CoordinatorRuntimeError(
        'COORDINATOR_SHARD_FAILED',
        'NOT_COORDINATOR',
        `write operation ${w.task.name}: replay on shard ${ctx.id} failed: ${(cause as Error)?.message ?? String(cause)}`,
        { cause, shardId: ctx.id },
      )
      this.#clearTimers(ctx)
      this.#log.error(
        { shard: ctx.id, operation: w.task.name, err: cause },
        'Failed to replay records; shard stopped',
      )
      return false
    }
  }

  #notActive(ctx: ShardContext<S, R, C>, name: string): unknown {
    try {
      this.#checkActive(ctx, name)
    } catch (err) {
      return err
    }
    return ctx.failure
  }

  /** A batch's records are durable: replays the last write's, then answers every write in order. */
  #committed(
    ctx: ShardContext<S, R, C>,
    batch: readonly BatchedWrite<S, R, C>[],
    unreplayed: BatchedWrite<S, R, C> | undefined,
  ): void {
    ctx.unwritten = false
    let failedAt = batch.length
    if (unreplayed !== undefined && !this.#replayAll(ctx, unreplayed)) {
      // The records are durable but memory holds only part of the last write's: that write fails
      // with the shard; the writes before it are durable and replayed.
      failedAt = batch.indexOf(unreplayed)
    }
    for (let i = 0; i < batch.length; i++) {
      const { task, result } = batch[i]
      if (i >= failedAt) {
        this.#deliver(ctx, result.completions, ctx.failure)
        this.#done(ctx, task, true, ctx.failure)
        continue
      }
      this.#applyTimerIntents(ctx, result.timers)
      this.#deliver(ctx, result.completions, undefined)
      this.#done(ctx, task, false, result.response)
    }
    this.#pump(ctx)
  }

  /**
   * A batch's store write failed: every write of it fails, and nothing of it happens (no timer, its
   * completions get the failure). When earlier writes of the batch were replayed before the write
   * (speculatively), memory no longer matches the log: the shard is reloaded from its log before its
   * queue moves on.
   */
  #writeFailed(
    ctx: ShardContext<S, R, C>,
    batch: readonly BatchedWrite<S, R, C>[],
    cause: unknown,
    speculative: boolean,
  ): void {
    if (speculative) {
      // Set first: timers a failed write's handlers re-arm now would bind to the discarded shard.
      ctx.state = 'loading'
      this.#clearTimers(ctx)
    }
    this.#failBatch(ctx, batch, cause, false)
    ctx.unwritten = false
    if (!speculative) {
      this.#pump(ctx)
      return
    }
    void this.#reload(ctx).then(() => this.#pump(ctx))
  }

  /** Fails every write of a batch: its completions get the failure; nothing of it happened. */
  #failBatch(
    ctx: ShardContext<S, R, C>,
    batch: readonly BatchedWrite<S, R, C>[],
    cause: unknown,
    shardFailed: boolean,
  ): void {
    if (!shardFailed && batch.length > 0) {
      // One line a failed write, as Kafka logs one a failed batch: not one an operation of it.
      const operations = batch.length
      this.#log.warn(
        { shard: ctx.id, operation: batch[0].task.name, operations, err: cause },
        operations === 1
          ? 'Failed to write records of coordinator operation'
          : `Failed to write records of ${operations} coordinator operations`,
      )
    }
    for (let i = 0; i < batch.length; i++) {
      const { task, result } = batch[i]
      const failure = shardFailed ? cause : new CoordinatorWriteError(task.name, ctx.id, cause)
      this.#deliver(ctx, result.completions, failure)
      this.#done(ctx, task, true, failure)
    }
  }

  /**
   * Rebuilds a shard from its log after a failed batch left records in memory that are not in the
   * log: a fresh shard replays the log, and its `onLoaded` runs first in the queue again (re-arming
   * its timers). Operations scheduled meanwhile answer COORDINATOR_LOAD_IN_PROGRESS; those already
   * queued run on the reloaded shard. A log that cannot be loaded fails the shard.
   */
  async #reload(ctx: ShardContext<S, R, C>): Promise<void> {
    try {
      this.#onReload?.(ctx.id)
    } catch (err) {
      this.#log.error({ shard: ctx.id, err }, 'The reload hook failed')
    }
    try {
      const shard = this.#newShard(ctx.id, this.#timerFor(ctx))
      const records = await this.#store.load(ctx.id, this.#loadOptions)
      for (let i = 0; i < records.length; i++) {
        const record = this.#serde.deserialize(records[i])
        if (record !== undefined) shard.replay(record)
      }
      this.#onShardReplayed?.(ctx.id, shard)
      // Timers armed while it loaded (a failed timer operation's retry) belong to the old shard.
      this.#clearTimers(ctx)
      ctx.shard = shard
      ctx.state = 'active'
      this.#log.warn(
        { shard: ctx.id, records: records.length },
        'Reloaded coordinator shard after a failed write',
      )
    } catch (cause) {
      ctx.state = 'failed'
      ctx.failure = cause
      this.#log.error({ shard: ctx.id, err: cause }, 'Failed to reload coordinator shard')
      return
    }
    if (ctx.shard?.onLoaded === undefined) return
    // The reloaded shard's first operation, ahead of everything queued.
    const onLoaded = this.#onLoadedOp
    ctx.tasks.splice(ctx.head, 0, {
      name: 'on-loaded',
      op: onLoaded,
      result: undefined,
      run: undefined,
      resolve: () => {},
      reject: (err: unknown) => {
        this.#log.error({ shard: ctx.id, err }, 'The on-loaded operation of coordinator shard failed')
      },
      deadline: undefined,
    })
    ctx.queued++
  }

  readonly #onLoadedOp: WriteOperation<S, R, unknown, C> = (shard, nowMs) =>
    shard.onLoaded?.(nowMs) ?? (NOTHING as CoordinatorResult<R, void, C>)

  /** Hands an operation's completions to the `complete` hook (failure: undefined once committed). */
  #deliver(ctx: ShardContext<S, R, C>, completions: readonly C[] | undefined, failure: unknown): void {
    if (completions === undefined || completions.length === 0) return
    const complete = this.#complete
    if (complete === undefined) return
    for (let i = 0; i < completions.length; i++) {
      try {
        complete(ctx.id, completions[i], failure)
      } catch (err) {
        this.#log.error({ shard: ctx.id, err }, 'Delivering a completion failed')
      }
    }
  }

  /**
   * The timeout of an operation that `reject` fails with {@link CoordinatorTimeoutError} unless it
   * has ended (`#settleWrite`) `timeoutMs` from now; the operation itself still completes. The
   * timeout belongs to the operation's task: no promise wraps the operation's own (a promise, its
   * two reactions and an entry per commit were a sixth of the runtime's share of a commit's
   * allocations). Operations under the runtime's default write timeout get deadlines in the order
   * they start, so one queue and one clock timer (armed for the oldest pending deadline) serve them
   * all, instead of a timer set and cleared per write; another timeout gets a clock timer of its own.
   */
  #deadline(name: string, timeoutMs: number, reject: (err: unknown) => void): PendingWrite {
    const entry: PendingWrite = {
      name,
      timeoutMs,
      deadlineMs: this.#clock.now() + timeoutMs,
      settled: false,
      reject,
      own: undefined,
    }
    if (timeoutMs === this.#writeTimeoutMs) {
      this.#pendingWrites.push(entry)
      // (An earlier deadline than the armed one only comes from a wall clock set back.)
      if (this.#writeTimer === undefined) this.#armWriteTimer(entry.deadlineMs)
      else if (entry.deadlineMs < this.#writeTimerDueMs) {
        this.#clock.clearTimer(this.#writeTimer)
        this.#armWriteTimer(entry.deadlineMs)
      }
    } else {
      entry.own = this.#clock.setTimer(() => {
        entry.own = undefined
        if (entry.settled) return
        entry.settled = true
        reject(new CoordinatorTimeoutError(name, timeoutMs))
      }, timeoutMs)
    }
    return entry
  }

  /** An operation ended: its timeout no longer applies (a later rejection of it settles nothing). */
  #settleWrite(entry: PendingWrite): void {
    entry.settled = true
    if (entry.own !== undefined) {
      this.#clock.clearTimer(entry.own)
      entry.own = undefined
      return
    }
    const q = this.#pendingWrites
    while (this.#pendingHead < q.length && q[this.#pendingHead].settled) this.#pendingHead++
    if (this.#pendingHead === q.length) {
      q.length = 0
      this.#pendingHead = 0
    } else if (this.#pendingHead > 1024) {
      q.splice(0, this.#pendingHead)
      this.#pendingHead = 0
    }
  }

  #armWriteTimer(deadlineMs: number): void {
    this.#writeTimerDueMs = deadlineMs
    this.#writeTimer = this.#clock.setTimer(
      () => this.#onWriteTimer(),
      Math.max(0, deadlineMs - this.#clock.now()),
    )
  }

  /** Times out every pending write whose deadline has passed, then re-arms for the next one. */
  #onWriteTimer(): void {
    this.#writeTimer = undefined
    const now = this.#clock.now()
    const q = this.#pendingWrites
    while (this.#pendingHead < q.length) {
      const entry = q[this.#pendingHead]
      if (!entry.settled) {
        if (entry.deadlineMs > now) break
        entry.settled = true
        entry.reject(new CoordinatorTimeoutError(entry.name, entry.timeoutMs))
      }
      this.#pendingHead++
    }
    if (this.#pendingHead === q.length) {
      q.length = 0
      this.#pendingHead = 0
      return
    }
    this.#armWriteTimer(q[this.#pendingHead].deadlineMs)
  }

  /** Runs a write operation against the shard's memory and checks what it returned. */
  #produce<T>(
    ctx: ShardContext<S, R, C>,
    name: string,
    op: WriteOperation<S, R, T, C>,
  ): CoordinatorResult<R, T, C> {
    return this.#checked(ctx, name, op(ctx.shard as S, this.#clock.now()))
  }

  /** Checks what an operation returned, before anything is written. */
  #checked<T>(
    ctx: ShardContext<S, R, C>,
    name: string,
    result: CoordinatorResult<R, T, C>,
  ): CoordinatorResult<R, T, C> {
    if (isThenable(result)) throw this.#asyncOperation(name)
    if (result === null || typeof result !== 'object' || !Array.isArray(result.records)) {
      throw new CoordinatorRuntimeError(
        'COORDINATOR_INVALID_ARGUMENT',
        'NOT_COORDINATOR',
        `write operation ${name} must return { records: [], response }`,
        { shardId: ctx.id },
      )
    }
    // Checked before the append: once the records are durable, the operation must not fail.
    this.#checkTimerIntents(name, result.timers)
    if (result.completions !== undefined && !Array.isArray(result.completions))
      throw badIntents(name, 'completions must be an array')
    return result
  }

  /**
   * Group commit. A batch that arrives while no store write is in flight is written at once (as its
   * own write: no wait when the store keeps up); batches of every shard that arrive while a write is
   * in flight are written together in the next one (`appendBatches`: one transaction, one round
   * trip). Each batch's promise settles with the write that held it, so a failed write fails exactly
   * the operations whose records were in it. A shard has at most one batch waiting (its queue runs
   * one operation at a time), so a shard's batches reach the store in its queue's order.
   */
  #append(shard: number, records: readonly StoredRecord[]): Promise<void> {
    // The flush that queued it starts the store write unless one is in flight.
    return new Promise<void>((resolve, reject) => {
      this.#queuedAppends.push({ shard, records, resolve, reject })
    })
  }

  /** Writes the queued batches, then whatever queued up meanwhile, until nothing waits. */
  async #writeQueued(): Promise<void> {
    this.#writing = true
    try {
      while (this.#queuedAppends.length > 0) {
        const batches = this.#queuedAppends
        this.#queuedAppends = []
        if (batches.length === 1) {
          await this.#appendOne(batches[0])
          continue
        }
        if (this.#store.appendBatches === undefined) {
          // A store without group commit: each batch is its own append, all at once.
          await Promise.all(batches.map((b) => this.#appendOne(b)))
          continue
        }
        try {
          await this.#store.appendBatches(batches)
        } catch (err) {
          for (const b of batches) b.reject(err)
          continue
        }
        for (const b of batches) b.resolve()
      }
    } finally {
      this.#writing = false
    }
  }

  /** One batch as its own append; settles the batch's promise, never rejects. */
  #appendOne(b: QueuedAppend): Promise<void> {
    let written: Promise<void>
    try {
      written = this.#store.append(b.shard, b.records)
    } catch (err) {
      written = Promise.reject(err)
    }
    return written.then(b.resolve, b.reject)
  }

  #checkTimerIntents(name: string, intents: TimerIntents<R, C> | undefined): void {
    if (intents === undefined) return
    if (intents === null || typeof intents !== 'object') throw badIntents(name, 'timers must be an object')
    const { cancel, schedule } = intents
    if (cancel !== undefined && !Array.isArray(cancel))
      throw badIntents(name, 'timers.cancel must be an array')
    if (schedule !== undefined && !Array.isArray(schedule))
      throw badIntents(name, 'timers.schedule must be an array')
    if (cancel !== undefined) {
      for (let i = 0; i < cancel.length; i++) {
        if (typeof cancel[i] !== 'string') throw badIntents(name, 'timer keys must be strings')
      }
    }
    if (schedule === undefined) return
    for (let i = 0; i < schedule.length; i++) {
      const t = schedule[i]
      if (t === null || typeof t !== 'object' || typeof t.key !== 'string' || typeof t.op !== 'function') {
        throw badIntents(name, 'every scheduled timer needs a string key and an op function')
      }
      if (!Number.isFinite(t.delayMs) || t.delayMs < 0)
        throw badIntents(name, `timer ${t.key}: delayMs must be >= 0`)
      const r = t.retryBackoffMs
      if (r !== undefined && !(Number.isFinite(r) && r >= 0))
        throw badIntents(name, `timer ${t.key}: retryBackoffMs must be >= 0`)
      const w = t.watch
      if (w !== undefined && (w === null || typeof w !== 'object'))
        throw badIntents(name, `timer ${t.key}: watch must be an object`)
    }
  }

  #applyTimerIntents(ctx: ShardContext<S, R, C>, intents: TimerIntents<R, C> | undefined): void {
    if (intents === undefined) return
    const { cancel, schedule } = intents
    if ((cancel === undefined || cancel.length === 0) && (schedule === undefined || schedule.length === 0))
      return
    const timer = this.#timerFor(ctx)
    if (cancel !== undefined) for (let i = 0; i < cancel.length; i++) timer.cancel(cancel[i])
    if (schedule === undefined) return
    for (let i = 0; i < schedule.length; i++) {
      const t = schedule[i]
      // The intent carries the options (retryBackoffMs, watch) itself.
      timer.schedule(
        t.key,
        t.delayMs,
        t.op,
        t.retryBackoffMs === undefined && t.watch === undefined ? undefined : t,
      )
    }
  }

  #asyncOperation(name: string): CoordinatorRuntimeError {
    return new CoordinatorRuntimeError(
      'COORDINATOR_INVALID_ARGUMENT',
      'NOT_COORDINATOR',
      `operation ${name} returned a promise: shard operations must be synchronous`,
    )
  }

  #timerFor(ctx: ShardContext<S, R, C>): ShardTimer<R, C> {
    if (ctx.timer === undefined) ctx.timer = this.#buildTimer(ctx)
    return ctx.timer
  }

  #buildTimer(ctx: ShardContext<S, R, C>): ShardTimer<R, C> {
    const schedule = (
      key: string,
      delayMs: number,
      operation: TimerOperation<R, C>,
      options: TimerOptions | undefined,
    ): void => {
      if (typeof key !== 'string') throw new TypeError('timer key must be a string')
      if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`timer ${key}: delayMs must be >= 0`)
      const retry = options?.retryBackoffMs
      if (retry !== undefined && !(Number.isFinite(retry) && retry >= 0)) {
        throw new RangeError(`timer ${key}: retryBackoffMs must be >= 0`)
      }
      if (this.#closing !== undefined || ctx.state === 'failed' || ctx.state === 'closed') return
      const watch = options?.watch
      const dueMs = this.#clock.now() + delayMs
      const previous = ctx.timers.get(key)
      if (previous !== undefined && !previous.fired && previous.armedDueMs <= dueMs) {
        // Replaced by a later deadline (a session timeout pushed out by a heartbeat): the clock
        // timer already armed stays, and re-arms for the rest when it fires before the deadline.
        // This saves a clear and a set of a clock timer per replacement.
        previous.dueMs = dueMs
        previous.operation = operation as TimerOperation<unknown, unknown>
        previous.options = options
        if (previous.watch !== watch) {
          disarmed(previous)
          previous.watch = watch
        }
        if (watch !== undefined) {
          watch.armed = true
          watch.dueMs = dueMs
        }
        return
      }
      if (previous !== undefined) {
        this.#clock.clearTimer(previous.handle)
        disarmed(previous)
      }
      const entry: TimerEntry = {
        handle: undefined,
        armedDueMs: dueMs,
        dueMs,
        operation: operation as TimerOperation<unknown, unknown>,
        options,
        fired: false,
        watch,
      }
      if (watch !== undefined) {
        watch.armed = true
        watch.dueMs = dueMs
      }
      ctx.timers.set(key, entry)
      arm(key, entry, delayMs)
    }
    const arm = (key: string, entry: TimerEntry, delayMs: number): void => {
      entry.handle = this.#clock.setTimer(() => {
        const early = entry.dueMs - this.#clock.now()
        if (early > 0) {
          entry.armedDueMs = entry.dueMs
          arm(key, entry, early)
          return
        }
        entry.fired = true
        this.#startLater(() => start(key, entry))
      }, delayMs)
    }
    /** Starts a fired timer's operation (see {@link TIMER_OPERATIONS_PER_TURN}). */
    const start = (key: string, entry: TimerEntry): void => {
      const operation = entry.operation as TimerOperation<R, C>
      const options = entry.options
      const retry = options?.retryBackoffMs
      // Enqueued when it starts; skipped if cancelled or replaced before its turn (as Kafka does).
      this.#enqueue<void>(ctx.id, key, (_shard, nowMs) => {
        if (ctx.timers.get(key) !== entry) return NOTHING as CoordinatorResult<R, void, C>
        ctx.timers.delete(key)
        disarmed(entry)
        return operation(nowMs)
      }).catch((err: unknown) => {
        if (this.#closing !== undefined || ctx.state !== 'active') return
        if (retry !== undefined && !ctx.timers.has(key)) {
          this.#reportRetry(ctx, key, err)
          schedule(key, retry, operation, options)
        } else {
          this.#log.error({ shard: ctx.id, timer: key, err }, 'Timer operation failed')
        }
      })
    }
    return {
      schedule: (key, delayMs, operation, options) => schedule(key, delayMs, operation, options),
      scheduleIfAbsent: (key, delayMs, operation, options) => {
        if (!ctx.timers.has(key)) schedule(key, delayMs, operation, options)
      },
      cancel: (key) => {
        const entry = ctx.timers.get(key)
        if (entry === undefined) return
        this.#clock.clearTimer(entry.handle)
        ctx.timers.delete(key)
        disarmed(entry)
      },
      isScheduled: (key) => ctx.timers.has(key),
      dueMs: (key) => ctx.timers.get(key)?.dueMs,
    }
  }

  /** Logs a failed timer operation that is retried (see {@link TIMER_RETRY_REPORT_MS}). */
  #reportRetry(ctx: ShardContext<S, R, C>, key: string, err: unknown): void {
    const retries = ctx.retries
    const now = this.#clock.now()
    if (retries.reportedAtMs !== undefined && now - retries.reportedAtMs < TIMER_RETRY_REPORT_MS) {
      retries.unreported++
      this.#log.debug({ shard: ctx.id, timer: key, err }, 'Timer operation failed; retrying')
      return
    }
    const unreported = retries.unreported
    retries.reportedAtMs = now
    retries.unreported = 0
    this.#log.info(
      { shard: ctx.id, timer: key, err, unreported },
      unreported === 0
        ? 'Timer operation failed; retrying'
        : `Timer operation failed; retrying (${unreported} more failed and were retried since the last report)`,
    )
  }

  /**
   * Starts a fired timer's operation: now, unless {@link TIMER_OPERATIONS_PER_TURN} have started in
   * this turn already; then on a later turn, in firing order.
   */
  #startLater(start: () => void): void {
    if (this.#dueTimer === undefined) this.#dueTimer = this.#clock.setTimer(this.#startDue, 0)
    if (this.#dueHead === this.#due.length && this.#startedThisTurn < TIMER_OPERATIONS_PER_TURN) {
      this.#startedThisTurn++
      start()
      return
    }
    this.#due.push(start)
  }

  /** A new turn: starts the next of the timer operations waiting, up to the bound. */
  readonly #startDue = (): void => {
    this.#dueTimer = undefined
    this.#startedThisTurn = 0
    const due = this.#due
    const end = Math.min(due.length, this.#dueHead + TIMER_OPERATIONS_PER_TURN)
    while (this.#dueHead < end) {
      const start = due[this.#dueHead] as () => void
      due[this.#dueHead++] = undefined
      this.#startedThisTurn++
      start()
    }
    if (this.#dueHead === due.length) {
      due.length = 0
      this.#dueHead = 0
    }
    // Armed again while some started: the count of this turn ends when it runs.
    if (this.#startedThisTurn > 0) this.#dueTimer = this.#clock.setTimer(this.#startDue, 0)
  }

  /** Stops and forgets every timer of a shard. */
  #clearTimers(ctx: ShardContext<S, R, C>): void {
    for (const entry of ctx.timers.values()) {
      this.#clock.clearTimer(entry.handle)
      disarmed(entry)
    }
    ctx.timers.clear()
  }

  #armCompaction(intervalMs: number): void {
    this.#compactionTimer = this.#clock.setTimer(() => {
      this.#compactionTimer = undefined
      if (this.#closing !== undefined) return
      for (const ctx of this.#shards) {
        if (ctx.state !== 'active') continue
        this.compact(ctx.id).catch((err: unknown) => {
          this.#log.warn({ shard: ctx.id, err }, 'Compaction of coordinator shard failed')
        })
      }
      this.#armCompaction(intervalMs)
    }, intervalMs)
  }
}
