/**
 * Timer intents. The shard never touches a clock: a handler returns what to schedule and what to
 * cancel, and the runtime runs `op` when the delay has passed, then appends and replays the
 * records it returns (like any write operation). Scheduling a key that is already scheduled
 * replaces it; cancelling an unknown key does nothing.
 */
import type { TimerWatch } from '../../runtime/types.js'
import type { StreamsCoordinatorRecord } from './wire.js'

export interface TimerOpResult {
  readonly records: StreamsCoordinatorRecord[]
  readonly timers: TimerIntents
}

export interface ScheduledTimer {
  /** e.g. `session-timeout-<groupId>-<memberId>` */
  readonly key: string
  readonly delayMs: number
  /** Synchronous and deterministic; `nowMs` is the time at which the timer fired. */
  readonly op: (nowMs: number) => TimerOpResult
  /** Kept informed whether this timer is armed (the runtime's TimerOptions.watch). */
  readonly watch?: TimerWatch
}

export interface TimerIntents {
  readonly schedule: ScheduledTimer[]
  readonly cancel: string[]
}

/**
 * The timers the runtime has armed for the shard (the runtime's ShardTimer fits). The manager asks
 * it instead of keeping its own list, so a write whose append failed (and whose timers were
 * therefore never armed) leaves no trace, and a timer that fired or was cancelled is gone.
 */
export interface ArmedTimers {
  isScheduled(key: string): boolean
}

/** No runtime: nothing is ever armed. */
export const NO_ARMED_TIMERS: ArmedTimers = Object.freeze({ isScheduled: () => false })

export const NO_TIMERS: TimerIntents = Object.freeze({ schedule: [], cancel: [] }) as TimerIntents

export const sessionTimeoutKey = (groupId: string, memberId: string): string =>
  `session-timeout-${groupId}-${memberId}`
export const rebalanceTimeoutKey = (groupId: string, memberId: string): string =>
  `rebalance-timeout-${groupId}-${memberId}`
export const initialRebalanceKey = (groupId: string): string => `initial-rebalance-timeout-${groupId}`
