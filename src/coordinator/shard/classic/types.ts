/**
 * The result shapes of the classic group manager.
 *
 * JoinGroup and SyncGroup answers are deferred in Kafka: a JoinGroup waits until the join phase
 * completes, a SyncGroup from a follower waits for the leader's assignment. The manager stays
 * synchronous by never holding promises. The service gives each JoinGroup/SyncGroup request a
 * {@link RequestToken} and keeps the request's promise under it; the manager parks the token on the
 * member and, whenever an operation (the same request, a later request of another member, or a
 * timer) produces the answer, returns it as a {@link ClassicCompletion}. A request whose answer is
 * not among its operation's completions stays parked.
 *
 * Completions are part of the write: the service delivers them only after the operation's records
 * are stored (with no records, at once). When the store fails, every completion of that operation
 * is answered with the storage error instead (Kafka: COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR).
 */
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'
import type { HeartbeatResponse } from '../../../protocol/generated/messages/HeartbeatResponse.js'
import type { JoinGroupResponse } from '../../../protocol/generated/messages/JoinGroupResponse.js'
import type { LeaveGroupResponse } from '../../../protocol/generated/messages/LeaveGroupResponse.js'
import type { SyncGroupResponse } from '../../../protocol/generated/messages/SyncGroupResponse.js'
import type { RequestToken } from './group.js'

export type ClassicCompletion =
  | { readonly api: 'JoinGroup'; readonly token: RequestToken; readonly response: JoinGroupResponse }
  | { readonly api: 'SyncGroup'; readonly token: RequestToken; readonly response: SyncGroupResponse }

/** What a timer's operation returns; `nowMs` is when the timer fired. */
export interface ClassicTimerOpResult {
  readonly records: CoordinatorRecord[]
  readonly completions: ClassicCompletion[]
  readonly timers: ClassicTimerIntents
}

export interface ClassicScheduledTimer {
  /** Kafka's keys: `heartbeat-<groupId>-<memberId>`, `join-<groupId>`, `sync-<groupId>`. */
  readonly key: string
  readonly delayMs: number
  /** Synchronous and deterministic; runs as a write operation of the shard. */
  readonly op: (nowMs: number) => ClassicTimerOpResult
}

/**
 * Same contract as the streams manager's timer intents: scheduling a key that is scheduled replaces
 * it; cancelling an unknown key does nothing. Cancels apply before schedules.
 */
export interface ClassicTimerIntents {
  readonly schedule: ClassicScheduledTimer[]
  readonly cancel: string[]
}

/** JoinGroup and SyncGroup: the request's own answer may be among `completions`, or come later. */
export interface ClassicDeferredResult {
  readonly records: CoordinatorRecord[]
  readonly completions: ClassicCompletion[]
  readonly timers: ClassicTimerIntents
}

export interface ClassicJoinResult extends ClassicDeferredResult {
  /**
   * Set when the group id belongs to an empty group of another type that must be converted first
   * (`'streams'`): nothing happened, the request's token is not parked, and the service runs the
   * join again with `conversionReady` once the other group's external state is cleaned up.
   */
  readonly conversionRequired: 'streams' | null
}

export interface ClassicHeartbeatResult {
  readonly records: CoordinatorRecord[]
  readonly response: HeartbeatResponse
  readonly completions: ClassicCompletion[]
  readonly timers: ClassicTimerIntents
}

export interface ClassicLeaveResult {
  readonly records: CoordinatorRecord[]
  readonly response: LeaveGroupResponse
  readonly completions: ClassicCompletion[]
  readonly timers: ClassicTimerIntents
}

export const heartbeatKey = (groupId: string, memberId: string): string => `heartbeat-${groupId}-${memberId}`
export const joinKey = (groupId: string): string => `join-${groupId}`
export const syncKey = (groupId: string): string => `sync-${groupId}`
