/**
 * The `uniform` assignor (Kafka's UniformAssignor): a balanced assignment that moves as few
 * partitions as it can. When every member subscribes to the same topics it follows Kafka's
 * homogeneous builder: each member keeps its current partitions up to its quota (total / members,
 * and one more for the first members in order that can still take one), then the partitions left
 * over go to members below quota. With different subscriptions, each member keeps the partitions of
 * its current target it still subscribes to, free partitions go to the least-loaded subscriber, and
 * partitions then move from a member to a subscriber with at least two fewer until none can.
 */
import type { PartitionSet } from '../partitions.js'
import {
  byString,
  type ConsumerGroupPartitionAssignor,
  copyPartitions,
  type GroupSpec,
  PartitionAssignorException,
  type SubscribedTopicDescriber,
} from './types.js'

export class UniformAssignor implements ConsumerGroupPartitionAssignor {
  static readonly NAME = 'uniform'

  name(): string {
    return UniformAssignor.NAME
  }

  assign(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, PartitionSet> {
    if (group.members.size === 0) return new Map()
    return group.homogeneous ? assignHomogeneous(group, topics) : assignHeterogeneous(group, topics)
  }
}

function partitionCount(topics: SubscribedTopicDescriber, topicId: string): number {
  const n = topics.numPartitions(topicId)
  if (n === -1) {
    throw new PartitionAssignorException(
      `Members are subscribed to topic ${topicId} which doesn't exist in the topic metadata.`,
    )
  }
  return n
}

function assignHomogeneous(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, PartitionSet> {
  const first = group.members.values().next().value!
  const subscribed = [...first.subscribedTopicIds].sort(byString)
  if (subscribed.length === 0) return new Map()
  const subscribedSet = new Set(subscribed)
  // Partitions no member's current target holds, in topic-id then partition order.
  const held = new Map<string, Set<number>>()
  for (const m of group.members.values()) {
    for (const [id, ps] of m.assignment) {
      let s = held.get(id)
      if (!s) held.set(id, (s = new Set()))
      for (const p of ps) s.add(p)
    }
  }
  const unassigned: [string, number][] = []
  let total = 0
  const counts = new Map<string, number>()
  for (const id of subscribed) {
    const n = partitionCount(topics, id)
    counts.set(id, n)
    total += n
    for (let p = 0; p < n; p++) if (!held.get(id)?.has(p)) unassigned.push([id, p])
  }
  const numMembers = group.members.size
  const minQuota = Math.floor(total / numMembers)
  let extra = total % numMembers
  const result = new Map<string, Map<string, Set<number>>>()
  const unfilled: [string, number][] = []
  let index = -1
  for (const [memberId, spec] of group.members) {
    index++
    let quota = minQuota
    let hasExtra = false
    if (extra > 0) {
      quota++
      hasExtra = true
    }
    const next = new Map<string, Set<number>>()
    for (const id of [...spec.assignment.keys()].sort(byString)) {
      if (!subscribedSet.has(id)) continue
      const n = counts.get(id)!
      const ps = [...spec.assignment.get(id)!].filter((p) => p < n).sort((a, b) => a - b)
      const keep = new Set<number>()
      for (const p of ps) {
        if (quota > 0) {
          keep.add(p)
          quota--
        } else unassigned.push([id, p])
      }
      if (keep.size > 0) next.set(id, keep)
    }
    // Give up the extra slot unless this member is one of the last that must take one.
    if (quota > 0 && hasExtra && numMembers - index > extra) {
      quota--
      hasExtra = false
    }
    if (quota > 0) unfilled.push([memberId, quota])
    if (hasExtra) extra--
    result.set(memberId, next)
  }
  let i = 0
  for (const [memberId, quota] of unfilled) {
    const next = result.get(memberId)!
    for (let q = 0; q < quota && i < unassigned.length; q++, i++) {
      const [id, p] = unassigned[i]!
      let s = next.get(id)
      if (!s) next.set(id, (s = new Set()))
      s.add(p)
    }
  }
  if (i < unassigned.length) throw new PartitionAssignorException('Partitions were left unassigned')
  return result
}

function assignHeterogeneous(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, PartitionSet> {
  const memberIds = [...group.members.keys()]
  const order = new Map(memberIds.map((id, i) => [id, i]))
  const subscribers = new Map<string, string[]>()
  for (const [memberId, spec] of group.members) {
    for (const id of spec.subscribedTopicIds) {
      let list = subscribers.get(id)
      if (!list) subscribers.set(id, (list = []))
      list.push(memberId)
    }
  }
  const topicIds = [...subscribers.keys()].sort(byString)
  const counts = new Map<string, number>()
  for (const id of topicIds) counts.set(id, partitionCount(topics, id))

  const result = new Map<string, Map<string, Set<number>>>()
  const load = new Map<string, number>()
  const owner = new Map<string, Map<number, string>>()
  for (const id of topicIds) owner.set(id, new Map())
  for (const [memberId, spec] of group.members) {
    const next = new Map<string, Set<number>>()
    let n = 0
    for (const [id, ps] of copyPartitions(spec.assignment)) {
      if (!spec.subscribedTopicIds.has(id) || !counts.has(id)) continue
      const kept = new Set<number>()
      for (const p of [...ps].sort((a, b) => a - b)) {
        if (p >= counts.get(id)! || owner.get(id)!.has(p)) continue
        owner.get(id)!.set(p, memberId)
        kept.add(p)
      }
      if (kept.size > 0) {
        next.set(id, kept)
        n += kept.size
      }
    }
    result.set(memberId, next)
    load.set(memberId, n)
  }
  const give = (memberId: string, id: string, p: number): void => {
    const next = result.get(memberId)!
    let s = next.get(id)
    if (!s) next.set(id, (s = new Set()))
    s.add(p)
    owner.get(id)!.set(p, memberId)
    load.set(memberId, load.get(memberId)! + 1)
  }
  const take = (memberId: string, id: string, p: number): void => {
    const next = result.get(memberId)!
    const s = next.get(id)!
    s.delete(p)
    if (s.size === 0) next.delete(id)
    owner.get(id)!.delete(p)
    load.set(memberId, load.get(memberId)! - 1)
  }
  const leastLoaded = (candidates: readonly string[]): string => {
    let best = candidates[0]!
    for (const c of candidates) {
      const d = load.get(c)! - load.get(best)!
      if (d < 0 || (d === 0 && order.get(c)! < order.get(best)!)) best = c
    }
    return best
  }
  for (const id of topicIds) {
    const subs = subscribers.get(id)!
    for (let p = 0; p < counts.get(id)!; p++) {
      if (!owner.get(id)!.has(p)) give(leastLoaded(subs), id, p)
    }
  }
  // Move partitions from a member to a subscriber holding at least two fewer, most loaded first,
  // until no such move is left. Every move lowers the sum of squared loads, so this ends.
  for (;;) {
    let moved = false
    const byLoad = [...memberIds].sort((a, b) => load.get(b)! - load.get(a)! || order.get(a)! - order.get(b)!)
    for (const from of byLoad) {
      const next = result.get(from)!
      for (const id of [...next.keys()].sort(byString)) {
        for (const p of [...next.get(id)!].sort((a, b) => b - a)) {
          const to = leastLoaded(subscribers.get(id)!)
          if (load.get(to)! + 1 < load.get(from)!) {
            take(from, id, p)
            give(to, id, p)
            moved = true
          }
          if (!next.has(id)) break
        }
      }
      if (moved) break
    }
    if (!moved) break
  }
  return result
}
