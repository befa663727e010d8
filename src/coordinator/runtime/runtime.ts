import type { RecordStore } from '../storage/types.js'
import { type RuntimeClock, systemClock, type TimerHandle } from './clock.js'
import { CoordinatorRuntimeError, CoordinatorWriteError } from './errors.js'
import type {
  ReadOperation,
  RecordSerde,
  RuntimeLogger,
  ShardStateMachine,
  ShardTimer,
  TimerIntents,
  TimerOptions,
  TimerWatch,
  WriteOperation,
  WriteResult,
} from './types.js'

export interface CoordinatorRuntimeOptions<S extends ShardStateMachine<R>, R> {
  /** An opened store. */
  readonly store: RecordStore
  /** `offsets.topic.num.partitions`: shards are 0 … numShards − 1. */
  readonly numShards: number
  /** Builds an empty shard; `timer` schedules write operations on that shard. */
  readonly newShard: (shardId: number, timer: ShardTimer<S, R>) => S
  readonly serde: RecordSerde<R>
  /** Time and timers; default {@link systemClock}. */
  readonly clock?: RuntimeClock
  readonly logger?: RuntimeLogger
  /** Compacts every active shard this often (default: never; `compact(shardId)` still works). */
  readonly compactionIntervalMs?: number
  /** Whether `close()` closes the store too (default true). False when the store is shared. */
  readonly closeStore?: boolean
}

type ShardState = 'unloaded' | 'loading' | 'active' | 'failed' | 'closed'

interface TimerEntry {
  handle: TimerHandle
  /** When the clock timer behind `handle` fires. */
  armedDueMs: number
  /** When the timer is due: later than `armedDueMs` once it was replaced by a later deadline. */
  dueMs: number
  operation: WriteOperation<unknown, unknown, void>
  options: TimerOptions | undefined
  /** The clock timer fired and the operation is queued (or ran): it is no longer replaced in place. */
  fired: boolean
  /** Told when the entry stops being the key's timer (TimerOptions.watch). */
  watch: TimerWatch | undefined
}

interface ShardContext<S, R> {
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
  timer: ShardTimer<S, R> | undefined
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
 * - loading a shard is replaying its log into a fresh shard.
 *
 * Kafka replays records into timeline data structures before the append and rolls them back when
 * the append fails. Appending first and replaying after needs no rollback, at the price of one
 * append round-trip per operation in a shard's queue (SQLite appends take microseconds).
 */
export class CoordinatorRuntime<S extends ShardStateMachine<R>, R> {
  readonly #store: RecordStore
  readonly #numShards: number
  readonly #newShard: (shardId: number, timer: ShardTimer<S, R>) => S
  readonly #serde: RecordSerde<R>
  readonly #clock: RuntimeClock
  readonly #log: RuntimeLogger
  readonly #compactionIntervalMs: number | undefined
  readonly #closeStore: boolean
  readonly #shards: ShardContext<S, R>[] = []
  #compactionTimer: TimerHandle | undefined
  #closing: Promise<void> | undefined

  constructor(options: CoordinatorRuntimeOptions<S, R>) {
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
    for (let id = 0; id < numShards; id++) {
      const ctx: ShardContext<S, R> = {
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
   * {@link CoordinatorWriteError} (append failed, nothing replayed) or a
   * {@link CoordinatorRuntimeError} (shard not active).
   */
  scheduleWriteOperation<T>(name: string, shardId: number, op: WriteOperation<S, R, T>): Promise<T> {
    return this.#enqueue(shardId, name, (ctx) => this.#runWrite(ctx, name, op))
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
   * active) always come as a rejected promise. The response itself must not be a promise.
   */
  writeOperationNowOrLater<T>(name: string, shardId: number, op: WriteOperation<S, R, T>): T | Promise<T> {
    let ctx: ShardContext<S, R>
    try {
      ctx = this.#context(shardId)
      this.#checkActive(ctx, name)
    } catch (e) {
      return Promise.reject(e)
    }
    if (ctx.queued > 0) return this.#enqueueOn(ctx, name, (c) => this.#runWrite(c, name, op))
    let result: WriteResult<R, T, S>
    try {
      result = this.#produce(ctx, name, op)
    } catch (e) {
      return Promise.reject(e)
    }
    if (result.records.length === 0) {
      this.#applyTimerIntents(ctx, result.timers)
      return result.response
    }
    // The queue is idle, so the commit starts at its head: later operations wait for it.
    return this.#enqueueOn(ctx, name, (c) => this.#commit(c, name, result))
  }

  /** Runs a read operation on a shard, after every operation scheduled before it. */
  scheduleReadOperation<T>(name: string, shardId: number, op: ReadOperation<S, T>): Promise<T> {
    return this.#enqueue(shardId, name, async (ctx) => {
      const result = op(ctx.shard as S, this.#clock.now())
      if (isThenable(result)) throw this.#asyncOperation(name)
      return result
    })
  }

  /** The timers of one shard (the same object the shard received when it was created). */
  timer(shardId: number): ShardTimer<S, R> {
    return this.#timerFor(this.#context(shardId))
  }

  /** Schedules a timer on a shard; see {@link ShardTimer.schedule}. */
  scheduleTimer(
    shardId: number,
    key: string,
    delayMs: number,
    op: WriteOperation<S, R, void>,
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
    for (const ctx of this.#shards) {
      this.#clearTimers(ctx)
    }
    await Promise.all(this.#shards.map((ctx) => ctx.tail))
    for (const ctx of this.#shards) {
      ctx.state = 'closed'
      ctx.shard = undefined
    }
    if (this.#closeStore) await this.#store.close()
  }

  async #loadShard(ctx: ShardContext<S, R>): Promise<void> {
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
      shard.onLoaded?.(this.#clock.now())
      ctx.shard = shard
      ctx.state = 'active'
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
  }

  #context(shardId: number): ShardContext<S, R> {
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
  #checkActive(ctx: ShardContext<S, R>, name: string): void {
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

  #enqueue<T>(shardId: number, name: string, run: (ctx: ShardContext<S, R>) => Promise<T>): Promise<T> {
    let ctx: ShardContext<S, R>
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
    ctx: ShardContext<S, R>,
    name: string,
    run: (ctx: ShardContext<S, R>) => Promise<T>,
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

  async #runWrite<T>(ctx: ShardContext<S, R>, name: string, op: WriteOperation<S, R, T>): Promise<T> {
    const result = this.#produce(ctx, name, op)
    if (result.records.length === 0) {
      this.#applyTimerIntents(ctx, result.timers)
      return result.response
    }
    return this.#commit(ctx, name, result)
  }

  /** Runs a write operation against the shard's memory and checks what it returned. */
  #produce<T>(ctx: ShardContext<S, R>, name: string, op: WriteOperation<S, R, T>): WriteResult<R, T, S> {
    const result = op(ctx.shard as S, this.#clock.now())
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
    return result
  }

  /** Appends a write's records, replays them, applies its timer intents; resolves with its response. */
  async #commit<T>(ctx: ShardContext<S, R>, name: string, result: WriteResult<R, T, S>): Promise<T> {
    const shard = ctx.shard as S
    const records = result.records
    // A serializer throw is the operation's bug; nothing has been written yet.
    const encoded = records.map((r) => this.#serde.serialize(r))
    try {
      await this.#store.append(ctx.id, encoded)
    } catch (cause) {
      this.#log.warn(
        { shard: ctx.id, operation: name, err: cause },
        'Failed to write records of coordinator operation',
      )
      throw new CoordinatorWriteError(name, ctx.id, cause)
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
      throw new CoordinatorRuntimeError(
        'COORDINATOR_SHARD_FAILED',
        'NOT_COORDINATOR',
        `write operation ${name}: replay on shard ${ctx.id} failed: ${(cause as Error)?.message ?? String(cause)}`,
        { cause, shardId: ctx.id },
      )
    }
    this.#applyTimerIntents(ctx, result.timers)
    return result.response
  }

  #checkTimerIntents(name: string, intents: TimerIntents<S, R> | undefined): void {
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

  #applyTimerIntents(ctx: ShardContext<S, R>, intents: TimerIntents<S, R> | undefined): void {
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

  #timerFor(ctx: ShardContext<S, R>): ShardTimer<S, R> {
    if (ctx.timer === undefined) ctx.timer = this.#buildTimer(ctx)
    return ctx.timer
  }

  #buildTimer(ctx: ShardContext<S, R>): ShardTimer<S, R> {
    const schedule = (
      key: string,
      delayMs: number,
      operation: WriteOperation<S, R, void>,
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
        previous.operation = operation as WriteOperation<unknown, unknown, void>
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
        operation: operation as WriteOperation<unknown, unknown, void>,
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
        const operation = entry.operation as WriteOperation<S, R, void>
        const options = entry.options
        const retry = options?.retryBackoffMs
        // Enqueued when it fires; skipped if cancelled or replaced before its turn (as Kafka does).
        this.#enqueue(ctx.id, key, async (c) => {
          if (c.timers.get(key) !== entry) return
          c.timers.delete(key)
          disarmed(entry)
          await this.#runWrite(c, key, operation)
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
    }
  }

  /** Stops and forgets every timer of a shard. */
  #clearTimers(ctx: ShardContext<S, R>): void {
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
