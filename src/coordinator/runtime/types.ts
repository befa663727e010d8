import type { CoordinatorRecord } from '../storage/types.js'

/**
 * A shard's in-memory state. `replay` is the only way it changes: the runtime calls it for every
 * record a write operation produced (after the store made them durable) and for every record of the
 * shard's log when it loads. Replay must be deterministic and must accept any record a write
 * operation may produce; a throw means a bug, and the shard stops serving.
 */
export interface ShardStateMachine<R> {
  replay(record: R): void
  /** Called once after loading replayed the whole log (to arm timers, for example). */
  onLoaded?(nowMs: number): void
}

/** Turns a shard's records into store records and back. */
export interface RecordSerde<R> {
  serialize(record: R): CoordinatorRecord
  /** Returns undefined for a record this version does not know; loading skips it. */
  deserialize(record: CoordinatorRecord): R | undefined
}

/** What a write operation returns: the records that express its change, and its response. */
export interface WriteResult<R, T, S = unknown> {
  readonly records: readonly R[]
  readonly response: T
  /**
   * Timers to cancel, then to schedule, once the records are durable and replayed (dropped when the
   * append fails). This lets a pure operation arm timers without touching a timer object; it is
   * applied inside the shard's queue, so no later operation can see the timers in an older state.
   */
  readonly timers?: TimerIntents<S, R>
}

/** A timer an operation asks for; see {@link ShardTimer.schedule}. */
export interface TimerIntent<S, R> {
  readonly key: string
  readonly delayMs: number
  readonly op: WriteOperation<S, R, void>
  readonly retryBackoffMs?: number
  /** See {@link TimerOptions.watch}. */
  readonly watch?: TimerWatch
}

export interface TimerIntents<S, R> {
  readonly schedule?: readonly TimerIntent<S, R>[]
  /** Keys to cancel; an unknown key is ignored. */
  readonly cancel?: readonly string[]
}

/**
 * A write operation: reads the shard and the current time and returns records plus a response. It
 * must not change the shard (changes happen when the runtime replays the records after the append),
 * must not await, and must not read the clock or draw random numbers. Because it is pure, a failed
 * append leaves the shard exactly as it was.
 */
export type WriteOperation<S, R, T> = (shard: S, nowMs: number) => WriteResult<R, T, S>

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
export interface ShardTimer<S, R> {
  /**
   * Runs `operation` as a write operation named `key` after `delayMs`. Scheduling a key that is
   * already scheduled replaces it (deadline and operation). A replacement with a later deadline keeps
   * the clock timer already armed, which re-arms for the rest when it fires before the deadline, so a
   * session timeout pushed out by every heartbeat costs no clock-timer churn. A timer whose shard is
   * closed or failed never runs.
   */
  schedule(key: string, delayMs: number, operation: WriteOperation<S, R, void>, options?: TimerOptions): void
  /** Schedules only when `key` is not scheduled yet. */
  scheduleIfAbsent(
    key: string,
    delayMs: number,
    operation: WriteOperation<S, R, void>,
    options?: TimerOptions,
  ): void
  cancel(key: string): void
  isScheduled(key: string): boolean
}

/** The part of a pino logger the runtime uses (pino's own logger fits). */
export interface RuntimeLogger {
  debug(obj: object, msg: string): void
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}
