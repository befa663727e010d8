/**
 * Who runs what: the members' assignments inverted into subtopology partitions, and the flags the
 * group view raises (STALE_TOPOLOGY members, a drawn description of another topology epoch).
 * Pure and DOM-free: the browser bundle and the tests use it.
 */
import type { StreamsGroupDescription, StreamsGroupMemberDescription } from '../clients/admin/index.js'
import type { ShownDescription } from './api-types.js'

export type TaskRole = 'active' | 'standby' | 'warmup'

export interface PartitionOwners {
  readonly partition: number
  /** member ids, in member order */
  readonly active: readonly string[]
  readonly standby: readonly string[]
  readonly warmup: readonly string[]
}

export interface SubtopologyTasks {
  readonly subtopologyId: string
  readonly partitions: readonly PartitionOwners[]
}

const byNumericThenText = (a: string, b: string): number => {
  const na = Number(a)
  const nb = Number(b)
  if (Number.isInteger(na) && Number.isInteger(nb)) return na - nb
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * The current (not target) assignment per subtopology and partition, subtopologies in id order,
 * partitions ascending. Subtopologies named in `subtopologyIds` appear even when nobody runs them.
 */
export function taskOwnership(
  members: readonly StreamsGroupMemberDescription[],
  subtopologyIds: readonly string[] = [],
): SubtopologyTasks[] {
  type Owners = { active: string[]; standby: string[]; warmup: string[] }
  const bySub = new Map<string, Map<number, Owners>>()
  for (const id of subtopologyIds) bySub.set(id, new Map())
  const add = (role: TaskRole, memberId: string, subtopologyId: string, partition: number): void => {
    const parts = bySub.get(subtopologyId) ?? new Map<number, Owners>()
    bySub.set(subtopologyId, parts)
    const owners = parts.get(partition) ?? { active: [], standby: [], warmup: [] }
    parts.set(partition, owners)
    if (!owners[role].includes(memberId)) owners[role].push(memberId)
  }
  for (const m of members) {
    for (const t of m.assignment.activeTasks)
      for (const p of t.partitions) add('active', m.memberId, t.subtopologyId, p)
    for (const t of m.assignment.standbyTasks)
      for (const p of t.partitions) add('standby', m.memberId, t.subtopologyId, p)
    for (const t of m.assignment.warmupTasks)
      for (const p of t.partitions) add('warmup', m.memberId, t.subtopologyId, p)
  }
  return [...bySub.keys()].sort(byNumericThenText).map((subtopologyId) => ({
    subtopologyId,
    partitions: [...bySub.get(subtopologyId)!.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([partition, o]) => ({ partition, ...o })),
  }))
}

export type GroupFlag =
  | {
      readonly kind: 'stale-topology'
      readonly memberId: string
      readonly memberEpoch: number
      readonly groupEpoch: number
    }
  | { readonly kind: 'description-epoch'; readonly descriptionEpoch: number; readonly groupEpoch: number }

/**
 * STALE_TOPOLOGY members (a topology epoch behind the group's, the condition under which the
 * coordinator answers them STALE_TOPOLOGY) and a drawn description stored for another epoch.
 */
export function groupFlags(group: StreamsGroupDescription, shown: ShownDescription | null): GroupFlag[] {
  const flags: GroupFlag[] = []
  for (const m of group.members) {
    if (m.topologyEpoch < group.topologyEpoch) {
      flags.push({
        kind: 'stale-topology',
        memberId: m.memberId,
        memberEpoch: m.topologyEpoch,
        groupEpoch: group.topologyEpoch,
      })
    }
  }
  if (shown !== null && shown.topologyEpoch !== group.topologyEpoch) {
    flags.push({
      kind: 'description-epoch',
      descriptionEpoch: shown.topologyEpoch,
      groupEpoch: group.topologyEpoch,
    })
  }
  return flags
}

/** `0: [0, 1]; 1: [2]` — the compact task list the members table shows. */
export function formatTasks(
  tasks: ReadonlyArray<{ subtopologyId: string; partitions: readonly number[] }>,
): string {
  if (tasks.length === 0) return '—'
  return tasks
    .map((t) => `${t.subtopologyId}: [${[...t.partitions].sort((a, b) => a - b).join(', ')}]`)
    .join('; ')
}
