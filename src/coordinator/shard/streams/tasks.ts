/**
 * Task sets. A task is (subtopology id, partition). A set is a TaskList: an immutable, sorted, packed
 * list of (subtopology id, partition, assignment epoch) triples. Only the active tasks of a member's
 * current assignment (and of its tasks pending revocation) carry epochs; other sets have none
 * (-1). Every function that produces wire lists walks the sorted order (subtopology id, then
 * partition), so output never depends on insertion order.
 *
 * Why packed: a member keeps a few of these for as long as it lives. A JavaScript Map or Set costs
 * at least about 150 bytes of hash table however few entries it holds (a Map of Maps, two of
 * those), and even a flat array of triples costs 8 bytes an element plus its array object. So the
 * numbers live in a string of 16-bit code units, which V8 keeps at one byte a unit while every unit
 * is below 256 (small partitions and epochs): two units a task (partition, epoch + 1) while every
 * partition and epoch fits in one, 16 bytes plus 2 a task; else four (partition and epoch, each as
 * 32 bits) and one unit more, so the two forms differ in the parity of their length. The subtopology
 * ids are kept as strings (the topology's own, shared by the group's members): one when the whole
 * list has one subtopology, else one per task.
 */
import type { TaskIds, TaskIdsWithEpochs } from './wire.js'

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** The epoch of a task in a set that carries none. */
const NO_EPOCH = -1

/** Code units per task in TaskList's packed numbers: narrow (partition, epoch + 1) or wide (see pushWide). */
const NARROW = 2
const WIDE = 4

/** Whether a task's partition and epoch fit the narrow form (one 16-bit unit each; epoch + 1). */
const fitsNarrow = (partition: number, epoch: number): boolean =>
  partition >= 0 && partition <= 0xffff && epoch >= -1 && epoch <= 0xfffe

/** The packed numbers of one task in the wide form: each a 32-bit integer as two units, high first. */
function pushWide(out: number[], partition: number, epoch: number): void {
  out.push((partition >>> 16) & 0xffff, partition & 0xffff, (epoch >>> 16) & 0xffff, epoch & 0xffff)
}

/** A flat string of the code units (made in slices: a call takes a bounded number of arguments). */
function unitsToString(units: readonly number[]): string {
  const SLICE = 8192
  if (units.length <= SLICE) return String.fromCharCode(...units)
  let s = ''
  for (let i = 0; i < units.length; i += SLICE) s += String.fromCharCode(...units.slice(i, i + SLICE))
  // A string of its own (not a tree of concatenations: each node would cost an object).
  return structuredClone(s)
}

export class TaskList {
  /** The subtopology id of every task ('' when empty), or one per task when they differ. */
  readonly #ids: string | readonly string[]
  /**
   * Partition and epoch of each task: NARROW code units a task (even length), or WIDE a task and one
   * unit more (odd length) when a partition or epoch does not fit the narrow form.
   */
  readonly #pe: string

  /**
   * Use TaskListBuilder or the conversions below; `triples` ([subtopologyId, partition, epoch, …])
   * must already be sorted by subtopology id then partition, without duplicates.
   */
  private constructor(triples: readonly (string | number)[]) {
    const n = triples.length / 3
    const units: number[] = []
    let single = true
    let narrow = true
    for (let k = 0; k < n; k++) {
      const partition = triples[k * 3 + 1] as number
      const epoch = triples[k * 3 + 2] as number
      if ((partition | 0) !== partition || (epoch | 0) !== epoch)
        throw new RangeError(`A task's partition and epoch are 32-bit integers: ${partition}, ${epoch}`)
      if (narrow && !fitsNarrow(partition, epoch)) narrow = false
      if (triples[k * 3] !== triples[0]) single = false
    }
    for (let k = 0; k < n; k++) {
      const partition = triples[k * 3 + 1] as number
      const epoch = triples[k * 3 + 2] as number
      if (narrow) units.push(partition, epoch + 1)
      else pushWide(units, partition, epoch)
    }
    if (!narrow) units.push(0)
    if (n === 0) this.#ids = ''
    else if (single) this.#ids = triples[0] as string
    else this.#ids = Array.from({ length: n }, (_, k) => triples[k * 3] as string)
    this.#pe = unitsToString(units)
  }

  /** The empty list, shared. */
  static readonly EMPTY: TaskList = new TaskList([])

  // A list is also the tuple of its tasks as active tasks, with no standby or warm-up tasks: a
  // member with only active tasks (nearly every member) keeps its list as its tuple, without a
  // tuple object of its own (see tasksTuple).
  /** This list (see TasksTuple). */
  get active(): TaskList {
    return this
  }
  /** The empty list (see TasksTuple). */
  get standby(): TaskList {
    return TaskList.EMPTY
  }
  /** The empty list (see TasksTuple). */
  get warmup(): TaskList {
    return TaskList.EMPTY
  }

  /** Wraps sorted, duplicate-free triples (the shared empty list when there are none). */
  static ofSorted(triples: readonly (string | number)[]): TaskList {
    return triples.length === 0 ? TaskList.EMPTY : new TaskList(triples)
  }

  /** The number of tasks. */
  get size(): number {
    const n = this.#pe.length
    return (n & 1) === 0 ? n / NARROW : (n - 1) / WIDE
  }

  // The methods below are static: an instance method that is private gives every instance a field
  // of its own (the class's brand, 8 bytes a list).
  static #id(l: TaskList, k: number): string {
    const ids = l.#ids
    return typeof ids === 'string' ? ids : ids[k]!
  }
  static #partition(l: TaskList, k: number): number {
    const s = l.#pe
    if ((s.length & 1) === 0) return s.charCodeAt(k * NARROW)
    return (s.charCodeAt(k * WIDE) << 16) | s.charCodeAt(k * WIDE + 1) | 0
  }
  static #epochAt(l: TaskList, k: number): number {
    const s = l.#pe
    if ((s.length & 1) === 0) return s.charCodeAt(k * NARROW + 1) - 1
    return (s.charCodeAt(k * WIDE + 2) << 16) | s.charCodeAt(k * WIDE + 3) | 0
  }

  /** The index of the task, or -1. */
  static #find(l: TaskList, subtopologyId: string, partition: number): number {
    const ids = l.#ids
    if (typeof ids === 'string' && ids !== subtopologyId) return -1
    let lo = 0
    let hi = l.size - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const id = typeof ids === 'string' ? ids : ids[mid]!
      const c = id < subtopologyId ? -1 : id > subtopologyId ? 1 : TaskList.#partition(l, mid) - partition
      if (c === 0) return mid
      if (c < 0) lo = mid + 1
      else hi = mid - 1
    }
    return -1
  }

  has(subtopologyId: string, partition: number): boolean {
    return TaskList.#find(this, subtopologyId, partition) >= 0
  }

  /** The task's assignment epoch (-1 in a list without epochs); undefined when it is not in the list. */
  epoch(subtopologyId: string, partition: number): number | undefined {
    const k = TaskList.#find(this, subtopologyId, partition)
    return k < 0 ? undefined : TaskList.#epochAt(this, k)
  }

  /** Calls `fn` for every task in sorted order (`epoch` is -1 in a list without epochs). */
  forEach(fn: (subtopologyId: string, partition: number, epoch: number) => void): void {
    const n = this.size
    for (let k = 0; k < n; k++)
      fn(TaskList.#id(this, k), TaskList.#partition(this, k), TaskList.#epochAt(this, k))
  }

  static #sameIds(l: TaskList, other: TaskList): boolean {
    const a = l.#ids
    const b = other.#ids
    if (typeof a === 'string' || typeof b === 'string') return a === b
    if (a.length !== b.length) return false
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false
    return true
  }

  /** Whether both lists hold the same tasks (epochs ignored). */
  sameTasks(other: TaskList): boolean {
    if (this === other) return true
    const n = this.size
    if (n !== other.size || !TaskList.#sameIds(this, other)) return false
    for (let k = 0; k < n; k++)
      if (TaskList.#partition(this, k) !== TaskList.#partition(other, k)) return false
    return true
  }

  /** Whether both lists hold the same tasks at the same epochs. */
  sameTasksAndEpochs(other: TaskList): boolean {
    return this === other || (this.#pe === other.#pe && TaskList.#sameIds(this, other))
  }

  /** Whether every task of this list is in `other`. */
  isSubsetOf(other: TaskList): boolean {
    const n = this.size
    for (let k = 0; k < n; k++)
      if (!other.has(TaskList.#id(this, k), TaskList.#partition(this, k))) return false
    return true
  }

  /** The same tasks, every one at `epoch` (-1: without epochs). */
  withEpoch(epoch: number): TaskList {
    const t: (string | number)[] = []
    this.forEach((id, p) => {
      t.push(id, p, epoch)
    })
    return TaskList.ofSorted(t)
  }

  /** The same tasks without epochs (this list when it has none). */
  withoutEpochs(): TaskList {
    const n = this.size
    for (let k = 0; k < n; k++) if (TaskList.#epochAt(this, k) !== NO_EPOCH) return this.withEpoch(NO_EPOCH)
    return this
  }

  /** Subtopology id → partitions (ascending), subtopologies in ascending order. */
  bySubtopology(): Map<string, number[]> {
    const out = new Map<string, number[]>()
    let ps: number[] | undefined
    let last: string | undefined
    const n = this.size
    for (let k = 0; k < n; k++) {
      const id = TaskList.#id(this, k)
      if (id !== last) out.set((last = id), (ps = []))
      ps!.push(TaskList.#partition(this, k))
    }
    return out
  }
}

/** The shared empty list (most standby, warm-up and pending sets). */
const EMPTY_TASK_LIST: TaskList = TaskList.EMPTY

/** A set of tasks (epochs, if any, are ignored). */
export type TaskSet = TaskList
/** Active tasks, each with the epoch at which it was assigned. */
export type TaskEpochs = TaskList

/** Active, standby and warm-up tasks (Kafka's TasksTuple). */
export interface TasksTuple {
  readonly active: TaskSet
  readonly standby: TaskSet
  readonly warmup: TaskSet
}

/**
 * Like TasksTuple, but every active task carries the epoch at which it was assigned
 * (TasksTupleWithEpochs). It is also a TasksTuple: a stable member's target is its current
 * assignment's tuple when they hold the same tasks (see StreamsGroup).
 */
export interface TasksTupleWithEpochs {
  readonly active: TaskEpochs
  readonly standby: TaskSet
  readonly warmup: TaskSet
}

export const EMPTY_TASK_SET: TaskSet = EMPTY_TASK_LIST
export const EMPTY_TASK_EPOCHS: TaskEpochs = EMPTY_TASK_LIST
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

/**
 * A tuple of task sets: the shared empty tuple when all three are empty, the active list itself (a
 * TaskList is the tuple of its tasks as active tasks) when only it has tasks.
 */
export function tasksTuple(active: TaskSet, standby: TaskSet, warmup: TaskSet): TasksTuple {
  if (standby.size !== 0 || warmup.size !== 0) return { active, standby, warmup }
  return active.size === 0 ? EMPTY_TASKS : active
}

/** A tuple with active-task epochs, made as tasksTuple makes one. */
export function tasksWithEpochs(active: TaskEpochs, standby: TaskSet, warmup: TaskSet): TasksTupleWithEpochs {
  if (standby.size !== 0 || warmup.size !== 0) return { active, standby, warmup }
  return active.size === 0 ? EMPTY_TASKS_WITH_EPOCHS : active
}

/**
 * A mutable builder for a TaskList. Adding a task twice keeps one; with epochs, the last one set.
 * `intern` gives the string to keep for a subtopology id (the topology's own, shared by the group's
 * members).
 */
export class TaskListBuilder {
  readonly #t: (string | number)[] = []
  readonly #intern: ((subtopologyId: string) => string) | undefined

  constructor(intern?: (subtopologyId: string) => string) {
    this.#intern = intern
  }

  add(subtopologyId: string, partition: number, epoch: number = NO_EPOCH): this {
    this.#t.push(this.#intern === undefined ? subtopologyId : this.#intern(subtopologyId), partition, epoch)
    return this
  }

  /** Alias of add, for active tasks with epochs. */
  set(subtopologyId: string, partition: number, epoch: number): this {
    return this.add(subtopologyId, partition, epoch)
  }

  build(): TaskList {
    const t = this.#t
    const n = t.length / 3
    if (n === 0) return EMPTY_TASK_LIST
    // Most lists arrive sorted and unique (records and requests list them so): check before sorting.
    let sorted = true
    for (let i = 3; i < t.length && sorted; i += 3) {
      const a = t[i - 3] as string
      const b = t[i] as string
      sorted = a < b || (a === b && (t[i - 2] as number) < (t[i + 1] as number))
    }
    if (sorted) return TaskList.ofSorted(t)
    const order = Array.from({ length: n }, (_, k) => k)
    // Stable sort: among duplicates, the last added wins below.
    order.sort(
      (x, y) =>
        byString(t[x * 3] as string, t[y * 3] as string) ||
        (t[x * 3 + 1] as number) - (t[y * 3 + 1] as number),
    )
    const out: (string | number)[] = []
    for (const k of order) {
      const id = t[k * 3] as string
      const p = t[k * 3 + 1] as number
      const j = out.length
      if (j > 0 && out[j - 3] === id && out[j - 2] === p) out[j - 1] = t[k * 3 + 2]!
      else out.push(id, p, t[k * 3 + 2]!)
    }
    return TaskList.ofSorted(out)
  }
}

/** Builders by their former names: a set (no epochs) and active tasks with epochs. */
export { TaskListBuilder as TaskSetBuilder, TaskListBuilder as TaskEpochsBuilder }

export function taskSetFromList(
  list: readonly { subtopologyId: string; partitions: readonly number[] }[],
  intern?: (subtopologyId: string) => string,
): TaskSet {
  if (list.length === 0) return EMPTY_TASK_SET
  const b = new TaskListBuilder(intern)
  for (const t of list) for (const p of t.partitions) b.add(t.subtopologyId, p)
  return b.build()
}

/** A set from a map of subtopology id → partitions (an assignor's answer). */
export function taskSetFromMap(m: ReadonlyMap<string, readonly number[]>): TaskSet {
  if (m.size === 0) return EMPTY_TASK_SET
  const b = new TaskListBuilder()
  for (const [id, ps] of m) for (const p of ps) b.add(id, p)
  return b.build()
}

export function taskSetToList(set: TaskSet): TaskIds[] {
  const out: TaskIds[] = []
  for (const [subtopologyId, partitions] of set.bySubtopology()) out.push({ subtopologyId, partitions })
  return out
}

export function taskSetSize(set: TaskSet): number {
  return set.size
}

export function taskSetHas(set: TaskSet, subtopologyId: string, partition: number): boolean {
  return set.has(subtopologyId, partition)
}

export function isTaskSetEmpty(set: TaskSet): boolean {
  return set.size === 0
}

export function taskSetEquals(a: TaskSet, b: TaskSet): boolean {
  return a.sameTasks(b)
}

export function taskEpochsEquals(a: TaskEpochs, b: TaskEpochs): boolean {
  return a.sameTasksAndEpochs(b)
}

export function tasksTupleEquals(a: TasksTuple, b: TasksTuple): boolean {
  return (
    a === b ||
    (a.active.sameTasks(b.active) && a.standby.sameTasks(b.standby) && a.warmup.sameTasks(b.warmup))
  )
}

export function tasksWithEpochsEquals(a: TasksTupleWithEpochs, b: TasksTupleWithEpochs): boolean {
  return (
    a === b ||
    (a.active.sameTasksAndEpochs(b.active) && a.standby.sameTasks(b.standby) && a.warmup.sameTasks(b.warmup))
  )
}

export function isTasksEmpty(t: TasksTuple | TasksTupleWithEpochs): boolean {
  return t.active.size === 0 && t.standby.size === 0 && t.warmup.size === 0
}

/** Calls `fn` for every (subtopology, partition) of a set, in sorted order. */
export function forEachTask(set: TaskSet, fn: (subtopologyId: string, partition: number) => void): void {
  set.forEach((id, p) => {
    fn(id, p)
  })
}

/** Record form of an active-task list: partitions sorted, AssignmentEpochs aligned with them. */
export function taskEpochsToRecord(epochs: TaskEpochs): TaskIdsWithEpochs[] {
  const out: TaskIdsWithEpochs[] = []
  let last: TaskIdsWithEpochs | undefined
  epochs.forEach((id, p, e) => {
    if (last === undefined || last.subtopologyId !== id) {
      last = { subtopologyId: id, partitions: [], assignmentEpochs: [] }
      out.push(last)
    }
    last.partitions.push(p)
    last.assignmentEpochs!.push(e)
  })
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
export function taskEpochsFromRecord(
  list: readonly TaskIdsWithEpochs[],
  fallbackEpoch: number,
  intern?: (subtopologyId: string) => string,
): TaskEpochs {
  if (list.length === 0) return EMPTY_TASK_EPOCHS
  const b = new TaskListBuilder(intern)
  for (const t of list) {
    const aligned = t.assignmentEpochs !== null && t.assignmentEpochs.length === t.partitions.length
    t.partitions.forEach((p, i) => {
      b.set(t.subtopologyId, p, aligned ? t.assignmentEpochs![i]! : fallbackEpoch)
    })
  }
  return b.build()
}
