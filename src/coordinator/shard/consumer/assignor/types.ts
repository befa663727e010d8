import { LocalError } from '../../../../errors.js'
/**
 * The server-side partition assignor interface of consumer groups (Kafka's
 * ConsumerGroupPartitionAssignor, GroupSpec, SubscribedTopicDescriber).
 */
import type { PartitionSet } from '../partitions.js'

export interface MemberSubscriptionSpec {
  readonly instanceId: string | null
  readonly rackId: string | null
  /** Ids of the topics the member subscribes to that exist. */
  readonly subscribedTopicIds: ReadonlySet<string>
  /** The member's current target assignment. */
  readonly assignment: PartitionSet
}

export interface GroupSpec {
  /** In the group's member order. */
  readonly members: ReadonlyMap<string, MemberSubscriptionSpec>
  /** Whether every member subscribes to the same topics. */
  readonly homogeneous: boolean
}

export interface SubscribedTopicDescriber {
  /** The topic's partition count, or -1 when it does not exist. */
  numPartitions(topicId: string): number
}

export interface ConsumerGroupPartitionAssignor {
  name(): string
  /** The new target of every member (members without partitions may be absent). */
  assign(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, PartitionSet>
}

/** The assignor could not compute an assignment (Kafka's PartitionAssignorException). */
export class PartitionAssignorException extends LocalError {
  override readonly name = 'PartitionAssignorException'

  constructor(message: string, options?: { cause?: unknown }) {
    super('PARTITION_ASSIGNOR_FAILED', message, options)
  }
}

export const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** A mutable copy of a partition set. */
export function copyPartitions(set: PartitionSet): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>()
  for (const [id, ps] of set) if (ps.size > 0) out.set(id, new Set(ps))
  return out
}
