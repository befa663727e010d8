/** Timer keys of the modern group protocols (Kafka's, shared by consumer and streams groups). */
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
