/**
 * The `range` assignor (Kafka's server-side RangeAssignor): members are sorted (members with an
 * instance id first, by instance id, then by member id), and each topic's partitions are split into
 * contiguous ranges in that order, the first `partitions % subscribers` members getting one more.
 * It does not look at the current assignment (as Kafka's does not).
 */
import type { PartitionSet } from '../partitions.js'
import {
  byString,
  type ConsumerGroupPartitionAssignor,
  type GroupSpec,
  PartitionAssignorException,
  type SubscribedTopicDescriber,
} from './types.js'

export class RangeAssignor implements ConsumerGroupPartitionAssignor {
  static readonly NAME = 'range'

  name(): string {
    return RangeAssignor.NAME
  }

  assign(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, PartitionSet> {
    const result = new Map<string, Map<string, Set<number>>>()
    if (group.members.size === 0) return result
    const memberIds = [...group.members.keys()].sort((a, b) => {
      const ia = group.members.get(a)!.instanceId
      const ib = group.members.get(b)!.instanceId
      if (ia !== null && ib !== null) return byString(ia, ib)
      if (ia !== null) return -1
      if (ib !== null) return 1
      return byString(a, b)
    })
    const state = new Map<
      string,
      { n: number; subscribers: number; minQuota: number; extra: number; next: number }
    >()
    for (const memberId of memberIds) {
      for (const id of group.members.get(memberId)!.subscribedTopicIds) {
        let s = state.get(id)
        if (!s) {
          const n = topics.numPartitions(id)
          if (n === -1) throw new PartitionAssignorException('Member is subscribed to a non-existent topic')
          state.set(id, (s = { n, subscribers: 0, minQuota: -1, extra: -1, next: 0 }))
        }
        s.subscribers++
      }
    }
    for (const memberId of memberIds) {
      const next = new Map<string, Set<number>>()
      for (const id of [...group.members.get(memberId)!.subscribedTopicIds].sort(byString)) {
        const s = state.get(id)!
        if (s.minQuota === -1) {
          s.minQuota = Math.floor(s.n / s.subscribers)
          s.extra = s.n % s.subscribers
        }
        let quota = s.minQuota
        if (s.extra > 0) {
          quota++
          s.extra--
        }
        const start = s.next
        const end = Math.min(start + quota, s.n)
        s.next = end
        if (start < end) next.set(id, new Set(Array.from({ length: end - start }, (_, i) => start + i)))
      }
      result.set(memberId, next)
    }
    return result
  }
}
