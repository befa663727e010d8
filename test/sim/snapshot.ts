/**
 * The replayed state of a shard as JSON, soft state left out (session deadlines, a classic
 * group's in-memory phase): what must be the same before a restart and after loading.
 */
import type { GroupCoordinatorShard } from '../../src/coordinator/shard/group-coordinator-shard.js'
import type { TaskList } from '../../src/coordinator/shard/streams/tasks.js'
import type { TransactionCoordinatorShard } from '../../src/coordinator/txn/shard.js'

export const STREAMS_GROUPS = ['s0', 's1', 's2']
export const CONSUMER_GROUPS = ['c0', 'c1']

/** A group coordinator shard's replayed state (soft state left out), as JSON. */
export function groupSnapshot(shard: GroupCoordinatorShard): string {
  const streams = shard.streams.groupIds().map((id) => {
    const g = shard.streams.group(id)!
    return {
      id,
      groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch,
      stored: g.storedDescriptionTopologyEpoch,
      failed: g.failedDescriptionTopologyEpoch,
      topology: g.topology?.value ?? null,
      members: [...g.members.values()].map((m) => ({
        id: m.memberId,
        epoch: m.memberEpoch,
        state: m.state,
        assigned: tasks(asMap(m.assignedTasks.active)),
        pending: tasks(asMap(m.tasksPendingRevocation.active)),
      })),
      targets: [...g.targetAssignments].map(([k, t]) => [k, tasks(asMap(t.active))]),
    }
  })
  const consumer = shard.consumer.groupIds().map((id) => {
    const g = shard.consumer.group(id)!
    return {
      id,
      groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch,
      members: [...g.members.values()].map((m) => ({
        id: m.memberId,
        epoch: m.memberEpoch,
        state: m.state,
        assigned: tasks(m.assignedPartitions),
        pending: tasks(m.partitionsPendingRevocation),
      })),
    }
  })
  // A classic group lives in memory from its first JoinGroup and reaches the log only when a
  // generation completes (as in Kafka): its existence and phase are soft state. Its offsets
  // are not.
  const listed = shard.listGroups([], [])
  const groups = listed
    .filter((g) => g.groupType !== 'classic')
    .map((g) => [g.groupId, g.groupType])
    .sort()
  const ids = new Set([
    ...listed.map((g) => g.groupId),
    ...STREAMS_GROUPS,
    ...CONSUMER_GROUPS,
    'simple',
    'txg',
  ])
  const offsets = [...ids]
    .map((groupId) => shard.fetchOffsets({ groupId, memberId: null, memberEpoch: -1, topics: null }))
    .filter((o) => o.topics.length > 0)
    .sort((a, b) => (a.groupId < b.groupId ? -1 : 1))
  return JSON.stringify({ streams, consumer, groups, offsets }, bigints)
}

/** A transaction coordinator shard's replayed state, as JSON. */
export function txnSnapshot(t: TransactionCoordinatorShard): string {
  const rows = [...t.transactionalIds()].sort().map((id) => {
    const md = t.transaction(id)!
    return {
      ...md,
      lastProducerEpoch: -1,
      topicPartitions: [...md.topicPartitions].map(([k, v]) => [k, [...v].sort()]).sort(),
    }
  })
  return JSON.stringify(rows, bigints)
}

/**
 * Every task (streams) or partition (consumer) that two members of one group own at once, assigned
 * or pending revocation: one line each.
 */
export function doubleOwners(shard: GroupCoordinatorShard): string[] {
  const out: string[] = []
  const scan = (
    what: string,
    id: string,
    members: Iterable<{ readonly memberId: string; readonly owned: ReadonlyMap<string, unknown>[] }>,
  ) => {
    const owner = new Map<string, string>()
    for (const m of members) {
      for (const t of m.owned) {
        for (const [k0, parts] of t) {
          for (const part of keys(parts)) {
            const k = `${k0}-${part}`
            const o = owner.get(k)
            if (o !== undefined && o !== m.memberId) out.push(`${what} ${id} ${k}: ${o} and ${m.memberId}`)
            owner.set(k, m.memberId)
          }
        }
      }
    }
  }
  for (const id of shard.streams.groupIds()) {
    const g = shard.streams.group(id)
    if (g === undefined) continue
    scan(
      'streams group',
      `${id} task`,
      [...g.members.values()].map((m) => ({
        memberId: m.memberId,
        owned: [asMap(m.assignedTasks.active), asMap(m.tasksPendingRevocation.active)],
      })),
    )
  }
  for (const id of shard.consumer.groupIds()) {
    const g = shard.consumer.group(id)
    if (g === undefined) continue
    scan(
      'consumer group',
      `${id} partition`,
      [...g.members.values()].map((m) => ({
        memberId: m.memberId,
        owned: [m.assignedPartitions, m.partitionsPendingRevocation],
      })),
    )
  }
  return out
}

/** A streams task list as subtopology id → partitions. */
function asMap(l: TaskList): Map<string, Set<number>> {
  return new Map([...l.bySubtopology()].map(([id, ps]) => [id, new Set(ps)]))
}

export function keys(x: unknown): number[] {
  if (x instanceof Map) return [...x.keys()] as number[]
  if (x instanceof Set) return [...x] as number[]
  return []
}

function tasks(m: ReadonlyMap<string, unknown>): [string, number[]][] {
  return [...m]
    .map(([k, v]): [string, number[]] => [k, keys(v).sort((a, b) => a - b)])
    .filter(([, v]) => v.length > 0)
    .sort()
}

export function bigints(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? `${v}n` : v
}
