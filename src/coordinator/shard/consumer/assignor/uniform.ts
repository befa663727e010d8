/**
 * The `uniform` assignor (Kafka's UniformAssignor): a balanced assignment that moves as few
 * partitions as it can. When every member subscribes to the same topics it follows Kafka's
 * homogeneous builder: each member keeps its current partitions up to its quota (total / members,
 * and one more for the first members in order that can still take one), then the partitions left
 * over go to members below quota. With different subscriptions, each member keeps the partitions of
 * its current target it still subscribes to, free partitions go to the least-loaded subscriber, and
 * partitions then move from a member to a subscriber with at least two fewer until none can.
 */
import { IndexHeap } from '../../streams/assignor/heap.js'
import type { PartitionSet } from '../partitions.js'
import {
  byString,
  type ConsumerGroupPartitionAssignor,
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
  const specs = [...group.members.values()]
  // Members are numbered in group order; that order breaks every tie.
  const subscribers = new Map<string, number[]>()
  specs.forEach((spec, m) => {
    for (const id of spec.subscribedTopicIds) {
      let list = subscribers.get(id)
      if (!list) subscribers.set(id, (list = []))
      list.push(m)
    }
  })
  const topicIds = [...subscribers.keys()].sort(byString)
  /** topic id → partition → owning member, -1 when free. */
  const owner = new Map<string, Int32Array>()
  for (const id of topicIds) owner.set(id, new Int32Array(partitionCount(topics, id)).fill(-1))
  const load = new Int32Array(specs.length)
  const result = specs.map(() => new Map<string, Set<number>>())
  const give = (m: number, id: string, p: number): void => {
    let set = result[m]!.get(id)
    if (!set) result[m]!.set(id, (set = new Set()))
    set.add(p)
    owner.get(id)![p] = m
    load[m]!++
  }
  const take = (m: number, id: string, p: number): void => {
    const set = result[m]!.get(id)!
    set.delete(p)
    if (set.size === 0) result[m]!.delete(id)
    owner.get(id)![p] = -1
    load[m]!--
  }

  // 1. Each member keeps the partitions of its current target it still subscribes to (a partition
  // two targets claim stays with the first member in order).
  specs.forEach((spec, m) => {
    for (const [id, ps] of spec.assignment) {
      const own = owner.get(id)
      if (own === undefined || !spec.subscribedTopicIds.has(id)) continue
      for (const p of ps) if (p < own.length && own[p] === -1) give(m, id, p)
    }
  })

  // Heaps of (member, load at push) entries; an entry whose load is no longer the member's is stale
  // and dropped when it comes to the top, so a member's load can change while it is in a heap.
  const entryMember: number[] = []
  const entryLoad: number[] = []
  const entry = (m: number): number => {
    entryMember.push(m)
    entryLoad.push(load[m]!)
    return entryMember.length - 1
  }
  const fewest = new IndexHeap(
    (a, b) =>
      entryLoad[a]! < entryLoad[b]! || (entryLoad[a] === entryLoad[b] && entryMember[a]! < entryMember[b]!),
  )
  const most = new IndexHeap(
    (a, b) =>
      entryLoad[a]! > entryLoad[b]! || (entryLoad[a] === entryLoad[b] && entryMember[a]! < entryMember[b]!),
  )
  /** The heap's top member whose entry is current and that passes `ok`, or -1. */
  const top = (heap: IndexHeap, ok: (m: number) => boolean): number => {
    for (let e = heap.peek(); e !== -1; e = heap.peek()) {
      const m = entryMember[e]!
      if (entryLoad[e] === load[m] && ok(m)) return m
      heap.poll()
    }
    return -1
  }

  // 2. Free partitions go, in partition order, to the subscriber holding the fewest partitions.
  for (const id of topicIds) {
    const own = owner.get(id)!
    entryMember.length = 0
    entryLoad.length = 0
    fewest.reset(subscribers.get(id)!.map(entry))
    for (let p = 0; p < own.length; p++) {
      if (own[p] !== -1) continue
      const e = fewest.peek()
      give(entryMember[e]!, id, p)
      entryLoad[e] = load[entryMember[e]!]!
      fewest.updateTop()
    }
  }

  // 3. A partition moves from the member holding the most of a topic's subscribers to the one holding
  // the fewest while they differ by two or more, topic by topic, until a pass over every topic moves
  // none. Every move lowers the sum of squared loads, so this ends; when it does, no partition can go
  // to a subscriber holding at least two fewer than its owner.
  for (let moved = true; moved; ) {
    moved = false
    for (const id of topicIds) {
      const subs = subscribers.get(id)!
      const holds = (m: number): boolean => result[m]!.has(id)
      entryMember.length = 0
      entryLoad.length = 0
      fewest.reset(subs.map(entry))
      most.reset(subs.filter(holds).map(entry))
      for (;;) {
        const from = top(most, holds)
        const to = top(fewest, () => true)
        if (from === -1 || to === -1 || load[from]! - load[to]! < 2) break
        let p = -1
        for (const q of result[from]!.get(id)!) if (q > p) p = q
        take(from, id, p)
        give(to, id, p)
        moved = true
        most.push(entry(to))
        fewest.push(entry(to))
        if (holds(from)) most.push(entry(from))
        fewest.push(entry(from))
      }
    }
  }
  return new Map(memberIds.map((memberId, m) => [memberId, result[m]!]))
}
