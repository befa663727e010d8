/** Timer keys of the modern group protocols (Kafka's, shared by consumer and streams groups). */
export const sessionTimeoutKey = (groupId: string, memberId: string): string =>
  `session-timeout-${groupId}-${memberId}`
export const rebalanceTimeoutKey = (groupId: string, memberId: string): string =>
  `rebalance-timeout-${groupId}-${memberId}`
