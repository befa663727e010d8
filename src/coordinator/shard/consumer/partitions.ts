/**
 * Partition sets of consumer groups, keyed by topic id: topic id → partitions, and topic id →
 * partition → the epoch at which it was assigned. This file has the helpers and the conversions to
 * and from the consumer records and messages, whose lists carry `topicId`.
 */

/** topic id → partitions */
export type PartitionSet = ReadonlyMap<string, ReadonlySet<number>>
/** topic id → partition → the epoch at which it was assigned */
export type PartitionEpochs = ReadonlyMap<string, ReadonlyMap<number, number>>

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

function sortedKeys<V>(map: ReadonlyMap<string, V>): string[] {
  return [...map.keys()].sort(byString)
}

export function partitionSetSize(set: PartitionSet | PartitionEpochs): number {
  let n = 0
  for (const v of set.values()) n += v.size
  return n
}

export function partitionSetHas(
  set: PartitionSet | PartitionEpochs,
  topicId: string,
  partition: number,
): boolean {
  return set.get(topicId)?.has(partition) ?? false
}

export function isPartitionSetEmpty(set: PartitionSet | PartitionEpochs): boolean {
  for (const v of set.values()) if (v.size > 0) return false
  return true
}

export function partitionSetEquals(a: PartitionSet, b: PartitionSet): boolean {
  if (a === b) return true
  if (partitionSetSize(a) !== partitionSetSize(b)) return false
  for (const [id, ps] of a) for (const p of ps) if (!partitionSetHas(b, id, p)) return false
  return true
}

export function partitionEpochsEquals(a: PartitionEpochs, b: PartitionEpochs): boolean {
  if (a === b) return true
  if (partitionSetSize(a) !== partitionSetSize(b)) return false
  for (const [id, m] of a) for (const [p, e] of m) if (b.get(id)?.get(p) !== e) return false
  return true
}

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
  const out = new Map<string, Map<number, number>>()
  for (const t of list) {
    const aligned = t.assignmentEpochs !== null && t.assignmentEpochs.length === t.partitions.length
    t.partitions.forEach((p, i) => {
      let m = out.get(t.topicId)
      if (!m) out.set(t.topicId, (m = new Map()))
      m.set(p, aligned ? t.assignmentEpochs![i]! : fallbackEpoch)
    })
  }
  return out.size === 0 ? EMPTY_PARTITION_EPOCHS : out
}

/** Drops the epochs. */
export function partitionEpochsKeys(epochs: PartitionEpochs): PartitionSet {
  const out = new Map<string, Set<number>>()
  for (const [id, m] of epochs) if (m.size > 0) out.set(id, new Set(m.keys()))
  return out.size === 0 ? EMPTY_PARTITIONS : out
}

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
