import type { CoordinatorRecord as StoredRecord, RecordStore, ShardBatch } from '../storage/types.js'
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
   * Called once a shard has replayed its log, before its on-loaded operation or any other runs:
   * the state loading rebuilt, for inspection only (the simulation's replay-equivalence check).
   */
  readonly onShardReplayed?: (shardId: number, shard: S) => void
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
  /** The end of this shard's operation queue; never rejects. */
  tail: Promise<void>
  /**
   * Operations in the queue that have not finished (the running one included): a write's count
   * drops only once its records are durable and replayed. Zero means the queue is idle.
   */
  queued: number
  /** Ends one queued operation (built once; the tail's handler). */
  readonly dequeue: () => void
  readonly timers: Map<string, TimerEntry>
  /** The shard's ShardTimer, built once. */
  timer: ShardTimer<R, C> | undefined
  failure: unknown
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

/** One shard's batch waiting for the next group commit. */
interface QueuedAppend extends ShardBatch {
  readonly resolve: () => void
  readonly reject: (err: unknown) => void
}

/** A write waiting for its answer under a write timeout. */
interface PendingWrite {
  readonly name: string
  readonly timeoutMs: number
  readonly deadlineMs: number
  settled: boolean
  readonly reject: (err: unknown) => void
}

const NOTHING: CoordinatorResult<never, void, never> = Object.freeze({ records: [], response: undefined })

const silentLogger: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} }

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
 * Kafka replays records into timeline data structures before the append and rolls them back when
 * the append fails. Appending first and replaying after needs no rollback, at the price of one
 * append round-trip per operation in a shard's queue (SQLite appends take microseconds).
 */
export class CoordinatorRuntime<S extends ShardStateMachine<R, C>, R, C = never> {
  readonly #store: RecordStore
  readonly #numShards: number
  readonly #newShard: (shardId: number, timer: ShardTimer<R, C>) => S
  readonly #serde: RecordSerde<R>
  readonly #clock: RuntimeClock
  readonly #log: RuntimeLogger
  readonly #compactionIntervalMs: number | undefined
  readonly #closeStore: boolean
  readonly #writeTimeoutMs: number | undefined
  readonly #readTimeoutMs: number | undefined
  readonly #complete: ((shardId: number, completion: C, failure: unknown) => void) | undefined
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
  #compactionTimer: TimerHandle | undefined
  #closing: Promise<void> | undefined

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
    this.#clock = options.clock ?? systemClock
    this.#log = options.logger ?? silentLogger
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
    this.#onShardReplayed = options.onShardReplayed
    for (let id = 0; id < numShards; id++) {
      const ctx: ShardContext<S, R, C> = {
        id,
        state: 'unloaded',
        shard: undefined,
        tail: Promise.resolve(),
        queued: 0,
        dequeue: () => {
          ctx.queued--
        },
        timers: new Map(),
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
   * the shard is built.
   */
  peekShard(shardId: number): S | undefined {
    return this.#context(shardId).shard
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
    await Promise.all(
      this.#shards.map((ctx) =>
        this.#loadShard(ctx).catch((e: unknown) => {
          errors.push(e)
        }),
      ),
    )
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
    const write = this.#enqueue(shardId, name, (ctx) => this.#runWrite(ctx, name, op))
    return timeoutMs === undefined ? write : this.#withTimeout(name, write, timeoutMs)
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
    if (ctx.queued > 0) {
      const later = this.#enqueueOn(ctx, name, (c) => this.#runWrite(c, name, op))
      return timeoutMs === undefined ? later : this.#withTimeout(name, later, timeoutMs)
    }
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
    const committed = this.#enqueueOn(ctx, name, (c) => this.#commit(c, name, result))
    return timeoutMs === undefined ? committed : this.#withTimeout(name, committed, timeoutMs)
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
    const read = this.#enqueue(shardId, name, async (ctx) => {
      const result = op(ctx.shard as S, this.#clock.now())
      if (isThenable(result)) throw this.#asyncOperation(name)
      return result
    })
    return timeoutMs === undefined ? read : this.#withTimeout(name, read, timeoutMs)
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

  /** Compacts a shard's log in its queue (between operations). */
  compact(shardId: number): Promise<void> {
    return this.#enqueue(shardId, 'compact', (ctx) => this.#store.compact(ctx.id))
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
    // Writes still pending keep their deadlines until the queues drain.
    for (const ctx of this.#shards) {
      this.#clearTimers(ctx)
    }
    await Promise.all(this.#shards.map((ctx) => ctx.tail))
    if (this.#writeTimer !== undefined) this.#clock.clearTimer(this.#writeTimer)
    this.#writeTimer = undefined
    for (const ctx of this.#shards) {
      ctx.state = 'closed'
      ctx.shard = undefined
    }
    if (this.#closeStore) await this.#store.close()
  }

  async #loadShard(ctx: ShardContext<S, R, C>): Promise<void> {
    if (ctx.state !== 'unloaded' || this.#closing !== undefined) return
    ctx.state = 'loading'
    const started = this.#clock.now()
    try {
      const shard = this.#newShard(ctx.id, this.#timerFor(ctx))
      const records = await this.#store.load(ctx.id)
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
      if (this.#closing !== undefined) return
      ctx.shard = shard
      ctx.state = 'active'
      this.#onShardReplayed?.(ctx.id, shard)
      this.#log.info(
        { shard: ctx.id, records: records.length, skipped, elapsedMs: this.#clock.now() - started },
        'Finished loading of coordinator shard',
      )
    } catch (e) {
      ctx.state = 'failed'
      ctx.failure = e
      this.#log.error({ shard: ctx.id, err: e }, 'Failed to load coordinator shard')
      throw e
    }
    if (ctx.shard?.onLoaded === undefined) return
    // The shard's first operation: operations scheduled from now on queue behind it.
    await this.#enqueueOn(ctx, 'on-loaded', (c) =>
      this.#runWrite(c, 'on-loaded', (shard, nowMs) => shard.onLoaded?.(nowMs) ?? NOTHING),
    ).catch((err: unknown) => {
      this.#log.error({ shard: ctx.id, err }, 'The on-loaded operation of coordinator shard failed')
    })
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

  #enqueue<T>(shardId: number, name: string, run: (ctx: ShardContext<S, R, C>) => Promise<T>): Promise<T> {
    let ctx: ShardContext<S, R, C>
    try {
      ctx = this.#context(shardId)
      this.#checkActive(ctx, name)
    } catch (e) {
      return Promise.reject(e)
    }
    return this.#enqueueOn(ctx, name, run)
  }

  /** Appends `run` to an active shard's queue. */
  #enqueueOn<T>(
    ctx: ShardContext<S, R, C>,
    name: string,
    run: (ctx: ShardContext<S, R, C>) => Promise<T>,
  ): Promise<T> {
    // The state is checked again when the operation's turn comes: the shard may have failed or the
    // runtime started closing meanwhile (operations already queued at close still run: close drains).
    ctx.queued++
    const result = ctx.tail.then(() => {
      if (ctx.state !== 'active') this.#checkActive(ctx, name)
      return run(ctx)
    })
    ctx.tail = result.then(ctx.dequeue, ctx.dequeue)
    return result
  }

  async #runWrite<T>(ctx: ShardContext<S, R, C>, name: string, op: WriteOperation<S, R, T, C>): Promise<T> {
    const result = this.#produce(ctx, name, op)
    if (result.records.length === 0) {
      this.#applyTimerIntents(ctx, result.timers)
      this.#deliver(ctx, result.completions, undefined)
      return result.response
    }
    return this.#commit(ctx, name, result)
  }

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
   * Rejects with {@link CoordinatorTimeoutError} when `write` has not settled `timeoutMs` from now.
   * Writes under the runtime's default timeout get deadlines in the order they start, so one queue
   * and one clock timer (armed for the oldest pending deadline) serve them all, instead of a timer
   * set and cleared per write; another timeout gets a clock timer of its own.
   */
  #withTimeout<T>(name: string, write: Promise<T>, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: PendingWrite = {
        name,
        timeoutMs,
        deadlineMs: this.#clock.now() + timeoutMs,
        settled: false,
        reject,
      }
      let own: TimerHandle | undefined
      if (timeoutMs === this.#writeTimeoutMs) {
        this.#pendingWrites.push(entry)
        // (An earlier deadline than the armed one only comes from a wall clock set back.)
        if (this.#writeTimer === undefined) this.#armWriteTimer(entry.deadlineMs)
        else if (entry.deadlineMs < this.#writeTimerDueMs) {
          this.#clock.clearTimer(this.#writeTimer)
          this.#armWriteTimer(entry.deadlineMs)
        }
      } else {
        own = this.#clock.setTimer(() => {
          if (entry.settled) return
          entry.settled = true
          reject(new CoordinatorTimeoutError(name, timeoutMs))
        }, timeoutMs)
      }
      // A write that fails after its timeout answered settles nothing more (no unhandled rejection).
      write.then(
        (v) => {
          if (own !== undefined) this.#clock.clearTimer(own)
          this.#settleWrite(entry)
          resolve(v)
        },
        (e: unknown) => {
          if (own !== undefined) this.#clock.clearTimer(own)
          this.#settleWrite(entry)
          reject(e)
        },
      )
    })
  }

  #settleWrite(entry: PendingWrite): void {
    entry.settled = true
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

  /** Runs a timer's operation as a write operation (in the shard's queue). */
  #runTimer(ctx: ShardContext<S, R, C>, name: string, op: TimerOperation<R, C>): Promise<void> {
    const result = this.#checked(ctx, name, op(this.#clock.now()))
    if (result.records.length === 0) {
      this.#applyTimerIntents(ctx, result.timers)
      this.#deliver(ctx, result.completions, undefined)
      return Promise.resolve()
    }
    return this.#commit(ctx, name, result)
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

  /** Appends a write's records, replays them, applies its timer intents; resolves with its response. */
  async #commit<T>(ctx: ShardContext<S, R, C>, name: string, result: CoordinatorResult<R, T, C>): Promise<T> {
    const shard = ctx.shard as S
    const records = result.records
    // A serializer throw is the operation's bug; nothing has been written yet.
    const encoded = records.map((r) => this.#serde.serialize(r))
    try {
      await this.#append(ctx.id, encoded)
    } catch (cause) {
      this.#log.warn(
        { shard: ctx.id, operation: name, err: cause },
        'Failed to write records of coordinator operation',
      )
      const failure = new CoordinatorWriteError(name, ctx.id, cause)
      // Nothing was written: the timers it asked for are not armed, its completions fail.
      this.#deliver(ctx, result.completions, failure)
      throw failure
    }
    try {
      for (const r of records) shard.replay(r)
    } catch (cause) {
      // The records are durable but memory holds only part of them: the shard no longer matches its
      // log, so it stops serving (a restart reloads it from the log).
      ctx.state = 'failed'
      ctx.failure = cause
      this.#clearTimers(ctx)
      this.#log.error(
        { shard: ctx.id, operation: name, err: cause },
        'Failed to replay records; shard stopped',
      )
      const failure = new CoordinatorRuntimeError(
        'COORDINATOR_SHARD_FAILED',
        'NOT_COORDINATOR',
        `write operation ${name}: replay on shard ${ctx.id} failed: ${(cause as Error)?.message ?? String(cause)}`,
        { cause, shardId: ctx.id },
      )
      this.#deliver(ctx, result.completions, failure)
      throw failure
    }
    this.#applyTimerIntents(ctx, result.timers)
    this.#deliver(ctx, result.completions, undefined)
    return result.response
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
    return new Promise<void>((resolve, reject) => {
      this.#queuedAppends.push({ shard, records, resolve, reject })
      if (!this.#writing) void this.#writeQueued()
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
        const operation = entry.operation as TimerOperation<R, C>
        const options = entry.options
        const retry = options?.retryBackoffMs
        // Enqueued when it fires; skipped if cancelled or replaced before its turn (as Kafka does).
        this.#enqueue(ctx.id, key, async (c) => {
          if (c.timers.get(key) !== entry) return
          c.timers.delete(key)
          disarmed(entry)
          await this.#runTimer(c, key, operation)
        }).catch((err: unknown) => {
          if (this.#closing !== undefined || ctx.state !== 'active') return
          if (retry !== undefined && !ctx.timers.has(key)) {
            this.#log.info({ shard: ctx.id, timer: key, err }, 'Timer operation failed; retrying')
            schedule(key, retry, operation, options)
          } else {
            this.#log.error({ shard: ctx.id, timer: key, err }, 'Timer operation failed')
          }
        })
      }, delayMs)
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
