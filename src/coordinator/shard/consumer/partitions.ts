/**
 * Partition sets of consumer groups, keyed by topic id. They have the shape of the streams task
 * sets (id → partitions, id → partition → epoch), so the same helpers serve both; this file adds
 * the conversions to and from the consumer records and messages, whose lists carry `topicId`.
 */
import {
  type TaskEpochs,
  TaskEpochsBuilder,
  type TaskSet,
  sortedKeys,
  taskEpochsKeys,
} from '../streams/tasks.js'

/** topic id → partitions */
export type PartitionSet = TaskSet
/** topic id → partition → the epoch at which it was assigned */
export type PartitionEpochs = TaskEpochs

export {
  isTaskSetEmpty as isPartitionSetEmpty,
  taskEpochsEquals as partitionEpochsEquals,
  taskSetEquals as partitionSetEquals,
  taskSetHas as partitionSetHas,
  taskSetSize as partitionSetSize,
} from '../streams/tasks.js'

export const EMPTY_PARTITIONS: PartitionSet = new Map()
export const EMPTY_PARTITION_EPOCHS: PartitionEpochs = new Map()

export interface TopicIdPartitions {
  readonly topicId: string
  readonly partitions: readonly number[]
}

export function partitionSetFromList(list: readonly TopicIdPartitions[]): PartitionSet {
  const out = new Map<string, Set<number>>()
  for (const t of list) {
    if (t.partitions.length === 0) continue
    let s = out.get(t.topicId)
    if (!s) out.set(t.topicId, (s = new Set()))
    for (const p of t.partitions) s.add(p)
  }
  return out
}

/** Sorted by topic id, partitions ascending. */
export function partitionSetToList(
  set: PartitionSet | PartitionEpochs,
): { topicId: string; partitions: number[] }[] {
  const out: { topicId: string; partitions: number[] }[] = []
  for (const id of sortedKeys(set as ReadonlyMap<string, unknown>)) {
    const ps = [...set.get(id)!.keys()].sort((a, b) => a - b)
    if (ps.length > 0) out.push({ topicId: id, partitions: ps })
  }
  return out
}

/** Record form with AssignmentEpochs aligned with Partitions. */
export function partitionEpochsToRecord(
  epochs: PartitionEpochs,
): { topicId: string; partitions: number[]; assignmentEpochs: number[] }[] {
  return partitionSetToList(epochs).map((t) => ({
    topicId: t.topicId,
    partitions: t.partitions,
    assignmentEpochs: t.partitions.map((p) => epochs.get(t.topicId)!.get(p)!),
  }))
}

/**
 * Reads a partition list of a current-assignment record. Without epochs, or with epochs that do not
 * line up with the partitions, every partition gets `fallbackEpoch` (Kafka's replay rule).
 */
export function partitionEpochsFromRecord(
  list: readonly {
    topicId: string
    partitions: readonly number[]
    assignmentEpochs: readonly number[] | null
  }[],
  fallbackEpoch: number,
): PartitionEpochs {
  const b = new TaskEpochsBuilder()
  for (const t of list) {
    const aligned = t.assignmentEpochs !== null && t.assignmentEpochs.length === t.partitions.length
    t.partitions.forEach((p, i) => {
      b.set(t.topicId, p, aligned ? t.assignmentEpochs![i]! : fallbackEpoch)
    })
  }
  return b.build()
}

/** Drops the epochs. */
export const partitionEpochsKeys: (epochs: PartitionEpochs) => PartitionSet = taskEpochsKeys

/** Every partition of `epochs` at epoch `epoch`. */
export function withEpoch(epochs: PartitionEpochs, epoch: number): PartitionEpochs {
  const out = new Map<string, Map<number, number>>()
  for (const [id, m] of epochs) out.set(id, new Map([...m.keys()].map((p) => [p, epoch])))
  return out
}

/** Every partition of `set` at epoch `epoch`. */
export function partitionSetWithEpoch(set: PartitionSet, epoch: number): PartitionEpochs {
  const out = new Map<string, Map<number, number>>()
  for (const [id, ps] of set) out.set(id, new Map([...ps].map((p) => [p, epoch])))
  return out
}
