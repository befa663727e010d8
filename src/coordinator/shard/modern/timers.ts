/** Timer keys of the modern group protocols (Kafka's, shared by consumer and streams groups). */

/**
 * How soon a member's session, rebalance, join or sync timeout runs again when its operation
 * failed (its records could not be appended: the record store is down): Kafka schedules these
 * timers with `retry = true` and the timer's default backoff of 500 ms, so a member that left
 * while the store was down is still fenced once the store is back. Without it the failed timer
 * was gone and the member stayed in its group, owning its tasks or partitions, until the server
 * restarted.
 */
export const MEMBER_TIMER_RETRY_BACKOFF_MS = 500
export const sessionTimeoutKey = (groupId: string, memberId: string): string =>
  `session-timeout-${groupId}-${memberId}`
export const rebalanceTimeoutKey = (groupId: string, memberId: string): string =>
  `rebalance-timeout-${groupId}-${memberId}`
/** A classic-protocol member of a consumer group that must rejoin (Kafka's consumerGroupJoinKey). */
export const classicJoinTimeoutKey = (groupId: string, memberId: string): string =>
  `join-${groupId}-${memberId}`
/** A classic-protocol member of a consumer group that must sync (Kafka's consumerGroupSyncKey). */
export const classicSyncTimeoutKey = (groupId: string, memberId: string): string =>
  `sync-${groupId}-${memberId}`
