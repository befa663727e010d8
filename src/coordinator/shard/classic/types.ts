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
 * Completions are part of the operation's result: the runtime delivers them only after the
 * operation's records are stored (with no records, at once). When the store fails, every completion
 * of that operation is answered with the storage error instead (Kafka: COORDINATOR_NOT_AVAILABLE or
 * NOT_COORDINATOR).
 */
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'
import type { JoinGroupResponse } from '../../../protocol/generated/messages/JoinGroupResponse.js'
import type { SyncGroupResponse } from '../../../protocol/generated/messages/SyncGroupResponse.js'
import type { CoordinatorResult, TimerIntent, TimerIntents } from '../../runtime/types.js'
import type { RequestToken } from './group.js'

export type ClassicCompletion =
  | { readonly api: 'JoinGroup'; readonly token: RequestToken; readonly response: JoinGroupResponse }
  | { readonly api: 'SyncGroup'; readonly token: RequestToken; readonly response: SyncGroupResponse }

/** A classic operation's result: records, response, timers and completions (see ../result.ts). */
export type ClassicResult<T> = CoordinatorResult<CoordinatorRecord, T, ClassicCompletion>

/** A classic timer (Kafka's keys: `heartbeat-<groupId>-<memberId>`, `join-<groupId>`, `sync-<groupId>`). */
export type ClassicTimer = TimerIntent<CoordinatorRecord, ClassicCompletion>

/** The timers a classic operation asks for. */
export type ClassicTimerIntents = TimerIntents<CoordinatorRecord, ClassicCompletion>

/** JoinGroup's response to the service (the request's own answer is a completion). */
export interface ClassicJoinOutcome {
  /**
   * Set when the group id belongs to an empty group of another type that must be converted first
   * (`'streams'`): nothing happened, the request's token is not parked, and the service runs the
   * join again with `conversionReady` once the other group's external state is cleaned up.
   */
  readonly conversionRequired: 'streams' | null
}

export const heartbeatKey = (groupId: string, memberId: string): string => `heartbeat-${groupId}-${memberId}`
export const joinKey = (groupId: string): string => `join-${groupId}`
export const syncKey = (groupId: string): string => `sync-${groupId}`
