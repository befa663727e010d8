/**
 * The one result every shard operation returns, and the timers it asks for: the runtime's
 * {@link CoordinatorResult} and {@link TimerIntents}, over the group coordinator's records and
 * completions (the answers of parked classic JoinGroup / SyncGroup requests).
 */
import type { CoordinatorRecord } from '../../protocol/generated/coordinator-records.js'
import type { CoordinatorResult, TimerIntent, TimerIntents } from '../runtime/types.js'
import type { ClassicCompletion } from './classic/types.js'

export type { CoordinatorResult, TimerIntent, TimerIntents, TimerOperation } from '../runtime/types.js'

/** What a group coordinator shard operation returns. */
export type GroupCoordinatorResult<T> = CoordinatorResult<CoordinatorRecord, T, ClassicCompletion>

/** The timers a group coordinator shard operation asks for. */
export type GroupTimerIntents = TimerIntents<CoordinatorRecord, ClassicCompletion>

/** No timer to arm or cancel (most operations). */
export const NO_TIMERS: TimerIntents<never, never> = Object.freeze({
  schedule: Object.freeze([]) as readonly TimerIntent<never, never>[],
  cancel: Object.freeze([]) as readonly string[],
})

/**
 * Collects the timers one operation asks for. Scheduling a key replaces an earlier schedule of the
 * same key in this collection; cancelling a key drops its schedule here and cancels the runtime's.
 * `intents()` is {@link NO_TIMERS} when nothing was asked for (no allocation on the common path).
 */
export class TimerCollector<R, C = never> {
  #schedule: TimerIntent<R, C>[] | undefined
  #cancel: string[] | undefined

  schedule(timer: TimerIntent<R, C>): void {
    const list = (this.#schedule ??= [])
    for (let i = 0; i < list.length; i++) {
      if (list[i].key === timer.key) {
        list.splice(i, 1)
        break
      }
    }
    list.push(timer)
  }

  cancel(key: string): void {
    const list = this.#schedule
    if (list !== undefined) {
      for (let i = 0; i < list.length; i++) {
        if (list[i].key === key) {
          list.splice(i, 1)
          break
        }
      }
    }
    const cancel = (this.#cancel ??= [])
    if (!cancel.includes(key)) cancel.push(key)
  }

  /** Adds another operation's intents (its cancels, then its schedules). */
  add(intents: TimerIntents<R, C> | undefined): void {
    if (intents === undefined) return
    if (intents.cancel !== undefined) for (const key of intents.cancel) this.cancel(key)
    if (intents.schedule !== undefined) for (const t of intents.schedule) this.schedule(t)
  }

  /**
   * Forgets what was asked for, for the next operation: intents returned before keep their lists
   * (new ones are started), so one collector can serve operations one after the other.
   */
  clear(): this {
    this.#schedule = undefined
    this.#cancel = undefined
    return this
  }

  intents(): TimerIntents<R, C> {
    if (this.#schedule === undefined && this.#cancel === undefined) return NO_TIMERS
    return { schedule: this.#schedule ?? [], cancel: this.#cancel ?? [] }
  }
}

/**
 * The timers the runtime has armed for the shard (the runtime's ShardTimer fits). Managers ask it
 * instead of keeping their own list, so a write whose append failed (and whose timers were
 * therefore never armed) leaves no trace, and a timer that fired or was cancelled is gone.
 */
export interface ArmedTimers {
  isScheduled(key: string): boolean
}

/** No runtime: nothing is ever armed. */
export const NO_ARMED_TIMERS: ArmedTimers = Object.freeze({ isScheduled: () => false })
