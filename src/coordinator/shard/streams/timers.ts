/**
 * The streams group timers. The shard never touches a clock: a handler returns the timers to
 * schedule and cancel in its result (see ../result.ts), and the runtime runs a timer's operation
 * when its delay has passed, then appends and replays the records it returns like any write
 * operation's.
 */
import type { CoordinatorResult, TimerIntent, TimerIntents } from '../result.js'
import type { StreamsCoordinatorRecord } from './wire.js'

export { type ArmedTimers, NO_ARMED_TIMERS, NO_TIMERS } from '../result.js'

/** A streams timer's result: its records and further timers. */
export type StreamsTimerResult = CoordinatorResult<StreamsCoordinatorRecord, void>
/** A streams timer (key, delay, operation, watch). */
export type StreamsTimer = TimerIntent<StreamsCoordinatorRecord>
/** The timers a streams handler asks for. */
export type StreamsTimerIntents = TimerIntents<StreamsCoordinatorRecord>

export { MEMBER_TIMER_RETRY_BACKOFF_MS, rebalanceTimeoutKey, sessionTimeoutKey } from '../modern/timers.js'
export const initialRebalanceKey = (groupId: string): string => `initial-rebalance-timeout-${groupId}`
