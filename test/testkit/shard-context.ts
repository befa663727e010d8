/**
 * A shard test context (Kafka's GroupMetadataManagerTestContext): one shard driven by the REAL
 * CoordinatorRuntime over a memory record store, on a manual clock. Operations run in the shard's
 * queue, records are encoded, appended, decoded and replayed as in production, timers are the
 * runtime's own (armed only once an operation's records are durable) and fire when the test moves
 * the clock, and completions are delivered by the runtime. No test re-implements any of that.
 */
import { ManualClock } from '../../src/coordinator/runtime/clock.js'
import { CoordinatorRuntime } from '../../src/coordinator/runtime/runtime.js'
import type {
  ReadOperation,
  RecordSerde,
  ShardStateMachine,
  ShardTimer,
  WriteOperation,
} from '../../src/coordinator/runtime/types.js'
import { coordinatorRecordSerde } from '../../src/coordinator/service/records.js'
import { MemoryRecordStore } from '../../src/coordinator/storage/memory.js'
import type { CoordinatorRecord } from '../../src/protocol/generated/coordinator-records.js'

/** The time a context starts at, unless told otherwise. */
export const START_MS = 1_000_000

export interface ShardTestContextOptions<S, R, C> {
  /** Builds the shard; `timers` tells it which of its timers the runtime has armed. */
  readonly newShard: (timers: ShardTimer<R, C>) => S
  /** Default: the coordinator record serde (Kafka's key/value framing). */
  readonly serde?: RecordSerde<R>
  readonly startMs?: number
  /** A store to start from (its records are loaded); default: a fresh memory store. */
  readonly store?: MemoryRecordStore
  /** Also called for every completion the runtime delivers. */
  readonly onComplete?: (completion: C, failure: unknown) => void
  /** The runtime's write timeout (default: none). */
  readonly writeTimeoutMs?: number
}

/** A completion as the runtime delivered it. */
export interface Delivered<C> {
  readonly completion: C
  /** Undefined when the operation's records were stored. */
  readonly failure: unknown
}

export class ShardTestContext<S extends ShardStateMachine<R, C>, R, C = never> {
  readonly clock: ManualClock
  readonly store: MemoryRecordStore
  readonly runtime: CoordinatorRuntime<S, R, C>
  /** Every completion delivered so far, in order. */
  readonly delivered: Delivered<C>[] = []
  readonly #options: ShardTestContextOptions<S, R, C>
  #shard: S | undefined
  #timers: ShardTimer<R, C> | undefined
  #failing: ((name: string) => boolean) | undefined

  private constructor(
    options: ShardTestContextOptions<S, R, C>,
    store: MemoryRecordStore,
    clock: ManualClock,
  ) {
    this.#options = options
    this.store = store
    this.clock = clock
    this.runtime = new CoordinatorRuntime<S, R, C>({
      store,
      numShards: 1,
      clock,
      serde: options.serde ?? (coordinatorRecordSerde as unknown as RecordSerde<R>),
      closeStore: false,
      writeTimeoutMs: options.writeTimeoutMs,
      newShard: (_id, timers) => {
        this.#timers = timers
        this.#shard = options.newShard(timers)
        return this.#shard
      },
      complete: (_shardId, completion, failure) => {
        this.delivered.push({ completion, failure })
        options.onComplete?.(completion, failure)
      },
    })
  }

  /** Opens a store (or takes the given one), loads the shard and runs its on-loaded operation. */
  static async start<S extends ShardStateMachine<R, C>, R, C = never>(
    options: ShardTestContextOptions<S, R, C>,
  ): Promise<ShardTestContext<S, R, C>> {
    let store = options.store
    if (store === undefined) {
      store = new MemoryRecordStore()
      await store.open()
    }
    const ctx = new ShardTestContext(options, store, new ManualClock(options.startMs ?? START_MS))
    await ctx.runtime.load()
    return ctx
  }

  /** The shard (as the runtime built it). */
  get shard(): S {
    if (this.#shard === undefined) throw new Error('the shard is not loaded')
    return this.#shard
  }

  get nowMs(): number {
    return this.clock.now()
  }

  /** Whether the runtime has a timer with this key armed. */
  isScheduled(key: string): boolean {
    return this.#timers?.isScheduled(key) ?? false
  }

  /** Runs a write operation; resolves once its records are durable and replayed. */
  write<T>(name: string, op: WriteOperation<S, R, T, C>): Promise<T> {
    const failing = this.#failing
    if (failing === undefined) return this.runtime.scheduleWriteOperation(name, 0, op)
    return this.runtime.scheduleWriteOperation(name, 0, (shard, nowMs) => {
      const result = op(shard, nowMs)
      // The append that follows is this operation's: the queue runs one operation at a time.
      if (result.records.length > 0 && failing(name)) this.store.failNextAppend()
      return result
    })
  }

  /** Runs a write operation now when the queue is idle (see writeOperationNowOrLater). */
  writeNowOrLater<T>(name: string, op: WriteOperation<S, R, T, C>): T | Promise<T> {
    return this.runtime.writeOperationNowOrLater(name, 0, op)
  }

  read<T>(name: string, op: ReadOperation<S, T>): Promise<T> {
    return this.runtime.scheduleReadOperation(name, 0, op)
  }

  /** From now on, the append of every operation named so that `failing(name)` fails. */
  failAppendsOf(failing: ((name: string) => boolean) | undefined): void {
    this.#failing = failing
  }

  /** Makes the next append fail (whichever operation it belongs to). */
  failNextAppend(): void {
    this.store.failNextAppend()
  }

  /** Waits until every operation queued so far (timers that fired included) has finished. */
  async flush(): Promise<void> {
    // Twice: an operation that finishes may let a waiting caller schedule one more.
    for (let i = 0; i < 2; i++) await this.runtime.scheduleReadOperation('flush', 0, () => undefined)
  }

  /** Moves the clock forward, firing due timers in due order, and waits for their operations. */
  async advance(ms: number): Promise<void> {
    await this.flush()
    const end = this.clock.now() + ms
    // One timer at a time: a timer's operation may arm another that falls due within `ms`.
    for (;;) {
      const next = this.#nextDue(end)
      if (next === undefined) break
      this.clock.advance(Math.max(0, next - this.clock.now()))
      await this.flush()
    }
    this.clock.advance(end - this.clock.now())
    await this.flush()
  }

  /** The records in the store, decoded, in log order. */
  async log(): Promise<R[]> {
    const serde = this.#options.serde ?? (coordinatorRecordSerde as unknown as RecordSerde<R>)
    const out: R[] = []
    for (const stored of await this.store.load(0)) {
      const r = serde.deserialize(stored)
      if (r !== undefined) out.push(r)
    }
    return out
  }

  /**
   * Loads a second context from this one's store (a restart): its shard is what replaying the log
   * gives, so comparing it with this one's proves replay equivalence.
   */
  reload(): Promise<ShardTestContext<S, R, C>> {
    return ShardTestContext.start({ ...this.#options, store: this.store, startMs: this.clock.now() })
  }

  async close(): Promise<void> {
    await this.runtime.close()
  }

  #nextDue(end: number): number | undefined {
    const due = this.clock.nextDueMs()
    return due !== undefined && due <= end ? due : undefined
  }
}

export type GroupRecord = CoordinatorRecord
