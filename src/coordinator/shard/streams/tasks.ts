/**
 * Task sets. A task is (subtopology id, partition). Sets are Maps keyed by subtopology id; every
 * function that produces wire lists sorts them (subtopology id, then partition), so output never
 * depends on insertion order.
 */
import type { TaskIds, TaskIdsWithEpochs } from './wire.js'

/** subtopology id → partitions */
export type TaskSet = ReadonlyMap<string, ReadonlySet<number>>
/** subtopology id → partition → assignment epoch */
export type TaskEpochs = ReadonlyMap<string, ReadonlyMap<number, number>>

/** Active, standby and warm-up tasks (Kafka's TasksTuple). */
export interface TasksTuple {
  readonly active: TaskSet
  readonly standby: TaskSet
  readonly warmup: TaskSet
}

/** Like TasksTuple, but every active task carries the epoch at which it was assigned (TasksTupleWithEpochs). */
export interface TasksTupleWithEpochs {
  readonly active: TaskEpochs
  readonly standby: TaskSet
  readonly warmup: TaskSet
}

// Empty sets and tuples are these shared values wherever the shard builds one (replay, builders):
// a stable member has empty standby, warm-up and pending-revocation sets, and a Map costs about
// 180 bytes of heap even when empty (its hash table is allocated with it). Task sets are never
// changed once built (they are read-only types; builders make new ones), so sharing is safe.
export const EMPTY_TASK_SET: TaskSet = new Map()
export const EMPTY_TASK_EPOCHS: TaskEpochs = new Map()
export const EMPTY_TASKS: TasksTuple = {
  active: EMPTY_TASK_SET,
  standby: EMPTY_TASK_SET,
  warmup: EMPTY_TASK_SET,
}
export const EMPTY_TASKS_WITH_EPOCHS: TasksTupleWithEpochs = {
  active: EMPTY_TASK_EPOCHS,
  standby: EMPTY_TASK_SET,
  warmup: EMPTY_TASK_SET,
}

/** A tuple of task sets; the shared empty tuple when all three are empty. */
export function tasksTuple(active: TaskSet, standby: TaskSet, warmup: TaskSet): TasksTuple {
  return active.size === 0 && standby.size === 0 && warmup.size === 0
    ? EMPTY_TASKS
    : { active, standby, warmup }
}

/** A tuple with active-task epochs; the shared empty tuple when all three are empty. */
export function tasksWithEpochs(active: TaskEpochs, standby: TaskSet, warmup: TaskSet): TasksTupleWithEpochs {
  return active.size === 0 && standby.size === 0 && warmup.size === 0
    ? EMPTY_TASKS_WITH_EPOCHS
    : { active, standby, warmup }
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export function sortedKeys<V>(map: ReadonlyMap<string, V>): string[] {
  return [...map.keys()].sort(byString)
}

export function taskSetFromList(
  list: readonly { subtopologyId: string; partitions: readonly number[] }[],
): TaskSet {
  const out = new Map<string, Set<number>>()
  for (const t of list) {
    if (t.partitions.length === 0) continue
    let s = out.get(t.subtopologyId)
    if (!s) out.set(t.subtopologyId, (s = new Set()))
    for (const p of t.partitions) s.add(p)
  }
  return out.size === 0 ? EMPTY_TASK_SET : out
}

export function taskSetToList(set: TaskSet): TaskIds[] {
  const out: TaskIds[] = []
  for (const id of sortedKeys(set)) {
    const ps = [...set.get(id)!].sort((a, b) => a - b)
    if (ps.length > 0) out.push({ subtopologyId: id, partitions: ps })
  }
  return out
}

export function taskSetSize(set: TaskSet | TaskEpochs): number {
  let n = 0
  for (const v of set.values()) n += v.size
  return n
}

export function taskSetHas(set: TaskSet | TaskEpochs, subtopologyId: string, partition: number): boolean {
  return set.get(subtopologyId)?.has(partition) ?? false
}

export function isTaskSetEmpty(set: TaskSet | TaskEpochs): boolean {
  for (const v of set.values()) if (v.size > 0) return false
  return true
}

/** Drops the epochs of an active-task map. */
export function taskEpochsKeys(epochs: TaskEpochs): TaskSet {
  const out = new Map<string, Set<number>>()
  for (const [id, m] of epochs) if (m.size > 0) out.set(id, new Set(m.keys()))
  return out.size === 0 ? EMPTY_TASK_SET : out
}

export function taskSetEquals(a: TaskSet, b: TaskSet): boolean {
  if (a === b) return true
  if (taskSetSize(a) !== taskSetSize(b)) return false
  for (const [id, ps] of a) for (const p of ps) if (!taskSetHas(b, id, p)) return false
  return true
}

export function taskEpochsEquals(a: TaskEpochs, b: TaskEpochs): boolean {
  if (a === b) return true
  if (taskSetSize(a) !== taskSetSize(b)) return false
  for (const [id, m] of a) for (const [p, e] of m) if (b.get(id)?.get(p) !== e) return false
  return true
}

export function tasksTupleEquals(a: TasksTuple, b: TasksTuple): boolean {
  return (
    taskSetEquals(a.active, b.active) &&
    taskSetEquals(a.standby, b.standby) &&
    taskSetEquals(a.warmup, b.warmup)
  )
}

export function tasksWithEpochsEquals(a: TasksTupleWithEpochs, b: TasksTupleWithEpochs): boolean {
  if (a === b) return true
  return (
    taskEpochsEquals(a.active, b.active) &&
    taskSetEquals(a.standby, b.standby) &&
    taskSetEquals(a.warmup, b.warmup)
  )
}

export function isTasksEmpty(t: TasksTuple | TasksTupleWithEpochs): boolean {
  return isTaskSetEmpty(t.active) && isTaskSetEmpty(t.standby) && isTaskSetEmpty(t.warmup)
}

/** Calls `fn` for every (subtopology, partition) of a set, in sorted order. */
export function forEachTask(
  set: TaskSet | TaskEpochs,
  fn: (subtopologyId: string, partition: number) => void,
): void {
  for (const id of sortedKeys(set as ReadonlyMap<string, unknown>)) {
    const inner = set.get(id)!
    const ps = [...inner.keys()].sort((a, b) => a - b)
    for (const p of ps) fn(id, p)
  }
}

/** A mutable builder for TaskSet. */
export class TaskSetBuilder {
  readonly #map = new Map<string, Set<number>>()
  add(subtopologyId: string, partition: number): this {
    let s = this.#map.get(subtopologyId)
    if (!s) this.#map.set(subtopologyId, (s = new Set()))
    s.add(partition)
    return this
  }
  build(): TaskSet {
    return this.#map.size === 0 ? EMPTY_TASK_SET : this.#map
  }
}

/** A mutable builder for TaskEpochs. */
export class TaskEpochsBuilder {
  readonly #map = new Map<string, Map<number, number>>()
  set(subtopologyId: string, partition: number, epoch: number): this {
    let m = this.#map.get(subtopologyId)
    if (!m) this.#map.set(subtopologyId, (m = new Map()))
    m.set(partition, epoch)
    return this
  }
  build(): TaskEpochs {
    return this.#map.size === 0 ? EMPTY_TASK_EPOCHS : this.#map
  }
}

/** Record form of an active-task map: partitions sorted, AssignmentEpochs aligned with them. */
export function taskEpochsToRecord(epochs: TaskEpochs): TaskIdsWithEpochs[] {
  const out: TaskIdsWithEpochs[] = []
  for (const id of sortedKeys(epochs)) {
    const m = epochs.get(id)!
    const ps = [...m.keys()].sort((a, b) => a - b)
    if (ps.length === 0) continue
    out.push({ subtopologyId: id, partitions: ps, assignmentEpochs: ps.map((p) => m.get(p)!) })
  }
  return out
}

/** Record form of a standby / warm-up set (no epochs: the empty default, which is not written). */
export function taskSetToRecord(set: TaskSet): TaskIdsWithEpochs[] {
  return taskSetToList(set).map((t) => ({
    subtopologyId: t.subtopologyId,
    partitions: t.partitions,
    assignmentEpochs: [],
  }))
}

/**
 * Reads an active-task list of a current-assignment record. A list without epochs, or whose epochs
 * do not line up with its partitions, gets `fallbackEpoch` for every task (Kafka's replay rule).
 */
export function taskEpochsFromRecord(list: readonly TaskIdsWithEpochs[], fallbackEpoch: number): TaskEpochs {
  const b = new TaskEpochsBuilder()
  for (const t of list) {
    const aligned = t.assignmentEpochs !== null && t.assignmentEpochs.length === t.partitions.length
    t.partitions.forEach((p, i) => {
      b.set(t.subtopologyId, p, aligned ? t.assignmentEpochs![i]! : fallbackEpoch)
    })
  }
  return b.build()
}
