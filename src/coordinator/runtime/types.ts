import type { CoordinatorRecord } from '../storage/types.js'

/**
 * A shard's in-memory state. `replay` is the only way it changes: the runtime calls it for every
 * record a write operation produced (after the store made them durable) and for every record of the
 * shard's log when it loads. Replay must be deterministic and must accept any record a write
 * operation may produce; a throw means a bug, and the shard stops serving.
 */
export interface ShardStateMachine<R, C = never> {
  replay(record: R): void
  /**
   * Runs once loading has replayed the whole log, as the shard's first write operation (named
   * `on-loaded`): it may arm timers (a session timeout per member) and write records like any
   * operation. A failure is logged; the shard still serves.
   */
  onLoaded?(nowMs: number): CoordinatorResult<R, void, C> | undefined
}

/** Turns a shard's records into store records and back. */
export interface RecordSerde<R> {
  serialize(record: R): CoordinatorRecord
  /**
   * The records of one write, as `serialize` gives each (the same bytes), when the serde can do it
   * in one go (one buffer for all of them); the runtime uses it when present.
   */
  serializeAll?(records: readonly R[]): CoordinatorRecord[]
  /**
   * Told once the store has settled (written or failed) the write of records `serializeAll`
   * returned, each once: the store keeps copies, so the serde may write over their bytes again.
   */
  release?(records: readonly CoordinatorRecord[]): void
  /** Returns undefined for a record this version does not know; loading skips it. */
  deserialize(record: CoordinatorRecord): R | undefined
  /**
   * Whether loading may replay only the latest record of this key (none at all when that one is a
   * tombstone), skipping the earlier ones unread: true for a key whose records each set or remove
   * one entry of the shard's state, so that the latest leaves the state as all of them do, also in
   * the order of the state's other entries. Absent, or false for a key: every record of it is
   * replayed. (A store may hand `load` a compacted log at any time; this lets the store leave out
   * the superseded records a log still holds, which a commit-heavy shard has by the thousands,
   * before it makes any object for them: the runtime hands it to `load` as `latestOnly`.) The key
   * is the `length` bytes from `start` in `bytes`, where the store holds them.
   */
  latestOnly?(bytes: Uint8Array, start: number, length: number): boolean
}

/**
 * What every shard operation returns (Kafka's `CoordinatorResult`): the records that express its
 * change, its response, the timers to arm and cancel, and the answers it completes for requests
 * parked earlier.
 *
 * - `records` are appended as one batch, then replayed; only then does anything else happen.
 * - `timers` are applied (cancels first, then schedules) once the records are durable and replayed,
 *   inside the shard's queue, so no later operation sees them in an older state. A failed append
 *   arms and cancels nothing.
 * - `completions` go to the runtime's `complete` hook once the records are durable, or with the
 *   append's error when it fails. A completion is data (a token and an answer): the shard holds no
 *   promises.
 */
export interface CoordinatorResult<R, T, C = never> {
  readonly records: readonly R[]
  readonly response: T
  readonly timers?: TimerIntents<R, C>
  readonly completions?: readonly C[]
}

/**
 * A timer's operation: runs as a write operation of its shard when the timer fires (`nowMs` is the
 * time it fired) and may ask for further timers. Synchronous and deterministic, like any operation.
 */
export type TimerOperation<R, C = never> = (nowMs: number) => CoordinatorResult<R, void, C>

/** A timer an operation asks for; see {@link ShardTimer.schedule}. */
export interface TimerIntent<R, C = never> {
  readonly key: string
  readonly delayMs: number
  readonly op: TimerOperation<R, C>
  readonly retryBackoffMs?: number
  /** See {@link TimerOptions.watch}. */
  readonly watch?: TimerWatch
}

export interface TimerIntents<R, C = never> {
  readonly schedule?: readonly TimerIntent<R, C>[]
  /** Keys to cancel (applied before the schedules); an unknown key is ignored. */
  readonly cancel?: readonly string[]
}

/**
 * A write operation: reads the shard and the current time and returns a {@link CoordinatorResult}.
 * It must not await and must not read the clock or draw random numbers. A shard whose state changes
 * only by replay leaves no trace of a failed append; soft state an operation changes in place (a
 * session deadline, a classic group's in-memory phase) stays changed.
 */
export type WriteOperation<S, R, T, C = never> = (shard: S, nowMs: number) => CoordinatorResult<R, T, C>

/** A read operation: runs in the shard's queue, after every operation scheduled before it. */
export type ReadOperation<S, T> = (shard: S, nowMs: number) => T

export interface TimerOptions {
  /**
   * When the timer's operation fails (its append, or the operation itself throws), schedule it again
   * after `retryBackoffMs` (default: no retry), as Kafka's coordinator timers do with `retry = true`.
   */
  readonly retryBackoffMs?: number
  /**
   * Kept informed whether this timer is armed and when it is due: the runtime sets `armed` to true
   * (and `dueMs`) when it schedules the timer, and `armed` to false once it is no longer the key's timer (it ran, was cancelled, was replaced
   * by a timer with another watch, or its shard stopped). A replacement that keeps the same watch
   * leaves it true. This lets the shard know, without asking, that a timer it scheduled is still
   * armed (a member's session timeout, checked on every heartbeat).
   */
  readonly watch?: TimerWatch
}

/** See {@link TimerOptions.watch}; written by the runtime only. */
export interface TimerWatch {
  armed: boolean
  /** When the timer is due, set with `armed` (also when a later deadline replaces it in place). */
  dueMs: number
}

/** Timers of one shard, handed to the shard when it is created. */
export interface ShardTimer<R, C = never> {
  /**
   * Runs `operation` as a write operation named `key` after `delayMs`. Scheduling a key that is
   * already scheduled replaces it (deadline and operation). A replacement with a later deadline keeps
   * the clock timer already armed, which re-arms for the rest when it fires before the deadline, so a
   * session timeout pushed out by every heartbeat costs no clock-timer churn. A timer whose shard is
   * closed or failed never runs.
   */
  schedule(key: string, delayMs: number, operation: TimerOperation<R, C>, options?: TimerOptions): void
  /** Schedules only when `key` is not scheduled yet. */
  scheduleIfAbsent(
    key: string,
    delayMs: number,
    operation: TimerOperation<R, C>,
    options?: TimerOptions,
  ): void
  cancel(key: string): void
  isScheduled(key: string): boolean
  /** When the key's timer is due, or undefined when none is scheduled. */
  dueMs(key: string): number | undefined
}

/** The part of a pino logger the runtime uses (pino's own logger fits). */
export interface RuntimeLogger {
  debug(obj: object, msg: string): void
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
  /**
   * Whether lines of `level` are written (pino's `isLevelEnabled`): a caller that would build many
   * lines asks first. Absent: every level is.
   */
  isLevelEnabled?(level: 'debug'): boolean
}
