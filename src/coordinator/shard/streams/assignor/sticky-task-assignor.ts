import { IndexHeap } from './heap.js'
import {
  type AssignedTasks,
  type AssignorLogger,
  compareStrings,
  type GroupAssignment,
  type GroupSpec,
  type MemberAssignment,
  type TaskAssignor,
  TaskAssignorException,
  type TopologyDescriber,
} from './types.js'

/** The name of the sticky assignor, the only built-in and the default of `group.streams.assignors`. */
export const STICKY_ASSIGNOR_NAME = 'sticky'

export interface StickyTaskAssignorOptions {
  /** Receives the "Unable to assign k of n standby tasks" warning. */
  readonly logger?: AssignorLogger
}

/**
 * Kafka's `StickyTaskAssignor` (spec §4.1): process-level balance, previous owners kept, standbys only
 * for stateful subtopologies and never on a process that already holds the task. Where Kafka's
 * choice depends on Java hash order, ties go to the smaller member id or process id (UTF-16 order);
 * docs/assignors.md lists each such place.
 *
 * Stateless and thread-safe in the Kafka sense: every call works on its own state.
 */
export class StickyTaskAssignor implements TaskAssignor {
  readonly #logger: AssignorLogger | undefined

  constructor(options: StickyTaskAssignorOptions = {}) {
    this.#logger = options.logger
  }

  name(): string {
    return STICKY_ASSIGNOR_NAME
  }

  toString(): string {
    return STICKY_ASSIGNOR_NAME
  }

  assign(groupSpec: GroupSpec, topologyDescriber: TopologyDescriber): GroupAssignment {
    const run = new StickyRun(groupSpec, topologyDescriber, this.#logger)
    run.assignActive()
    if (run.numStandbyReplicas > 0) run.assignStandby()
    return run.buildGroupAssignment(groupSpec)
  }
}

/** ceil(tasks / members), 0 when no member is left (Kafka `computeTasksPerMember`). */
function tasksPerMember(numberOfTasks: number, numberOfMembers: number): number {
  if (numberOfMembers === 0) return 0
  return Math.ceil(numberOfTasks / numberOfMembers)
}

interface StandbyCandidate {
  readonly member: number
  readonly isPrevStandby: boolean
  readonly offsetSum: bigint
}

/**
 * The state of one assignment. Tasks, members and processes are numbered so that the hot loops work on
 * typed arrays:
 * - task t is (subtopology taskSub[t], partition taskPart[t]); tasks are numbered in (subtopology id,
 *   partition) order, so ascending task number is Kafka's `TaskId` natural order;
 * - members are numbered in member-id order and processes in process-id order; these numbers are the
 *   deterministic tie-breaks that replace Java hash order.
 */
class StickyRun {
  readonly numStandbyReplicas: number
  readonly #logger: AssignorLogger | undefined

  // Tasks.
  readonly #subtopologyIds: string[]
  readonly #subtopologyStateful: boolean[]
  /** First task number of each subtopology. */
  readonly #subStart: number[]
  readonly #taskSub: Int32Array
  readonly #taskPart: Int32Array
  /**
   * Members holding each task: task t uses slots [t * #slots, t * #slots + #holderCount[t]). All
   * actives are placed before any standby, so slot 0 is the active owner and the others are standbys.
   * Flat typed arrays keep a 20,000-task assignment from allocating one array per task.
   */
  readonly #slots: number
  readonly #holders: Int32Array
  readonly #holderCount: Int32Array

  // Members.
  readonly #memberIds: string[]
  readonly #memberIndex = new Map<string, number>()
  readonly #memberProcess: Int32Array
  /** Tasks (active + standby) assigned so far per member (Kafka `memberToTaskCounts`). */
  readonly #memberTaskCount: Int32Array

  // Processes.
  readonly #processMembers: number[][]
  readonly #processTaskCount: Int32Array
  readonly #processLoad: Float64Array
  /** Per-process heap of members by task count; dropped whenever a task goes to a chosen member. */
  readonly #processMemberHeap: (IndexHeap | null)[]
  readonly #memberLess: (a: number, b: number) => boolean
  readonly #processLess: (a: number, b: number) => boolean

  // Previous owners.
  readonly #prevActive: Int32Array
  readonly #prevStandby: (number[] | undefined)[]

  // Quotas.
  #totalActiveTasks = 0
  #totalTasks = 0
  #membersWithActiveTaskCapacity: number
  #membersWithTaskCapacity: number
  #activeTasksPerMember: number
  #totalTasksPerMember: number

  constructor(
    groupSpec: GroupSpec,
    topologyDescriber: TopologyDescriber,
    logger: AssignorLogger | undefined,
  ) {
    this.#logger = logger
    this.numStandbyReplicas = groupSpec.configs.numStandbyReplicas

    // Tasks, numbered in (subtopology id, partition) order.
    this.#subtopologyIds = [...new Set(topologyDescriber.subtopologies())].sort(compareStrings)
    const subIndex = new Map<string, number>()
    const subStart: number[] = []
    this.#subStart = subStart
    this.#subtopologyStateful = []
    let numTasks = 0
    for (const [i, id] of this.#subtopologyIds.entries()) {
      const partitions = Math.max(0, topologyDescriber.maxNumInputPartitions(id))
      const stateful = topologyDescriber.isStateful(id)
      subIndex.set(id, i)
      subStart.push(numTasks)
      this.#subtopologyStateful.push(stateful)
      numTasks += partitions
      this.#totalActiveTasks += partitions
      this.#totalTasks += partitions
      if (stateful) this.#totalTasks += partitions * this.numStandbyReplicas
    }
    subStart.push(numTasks)
    this.#taskSub = new Int32Array(numTasks)
    this.#taskPart = new Int32Array(numTasks)
    for (let s = 0; s < this.#subtopologyIds.length; s++) {
      for (let t = subStart[s]; t < subStart[s + 1]; t++) {
        this.#taskSub[t] = s
        this.#taskPart[t] = t - subStart[s]
      }
    }
    this.#slots = 1 + Math.max(0, this.numStandbyReplicas)
    this.#holders = new Int32Array(numTasks * this.#slots)
    this.#holderCount = new Int32Array(numTasks)
    const taskOf = (subtopologyId: string, partition: number): number => {
      const s = subIndex.get(subtopologyId)
      // Tasks outside the topology are never assigned, so their previous owners do not matter.
      if (s === undefined || !Number.isInteger(partition) || partition < 0) return -1
      const t = subStart[s] + partition
      return t < subStart[s + 1] ? t : -1
    }

    // Members and processes, numbered in id order.
    this.#memberIds = [...groupSpec.members.keys()].sort(compareStrings)
    const numMembers = this.#memberIds.length
    this.#memberProcess = new Int32Array(numMembers)
    this.#memberTaskCount = new Int32Array(numMembers)
    const processIds = [...new Set([...groupSpec.members.values()].map((m) => m.processId))].sort(
      compareStrings,
    )
    const processIndex = new Map(processIds.map((id, i) => [id, i]))
    this.#processMembers = processIds.map(() => [])
    this.#processTaskCount = new Int32Array(processIds.length)
    this.#processLoad = new Float64Array(processIds.length)
    this.#processMemberHeap = processIds.map(() => null)
    const counts = this.#memberTaskCount
    const loads = this.#processLoad
    this.#memberLess = (a, b) => counts[a] < counts[b] || (counts[a] === counts[b] && a < b)
    this.#processLess = (a, b) => loads[a] < loads[b] || (loads[a] === loads[b] && a < b)

    this.#membersWithActiveTaskCapacity = numMembers
    this.#membersWithTaskCapacity = numMembers
    this.#activeTasksPerMember = tasksPerMember(this.#totalActiveTasks, numMembers)
    this.#totalTasksPerMember = tasksPerMember(this.#totalTasks, numMembers)

    this.#prevActive = new Int32Array(numTasks).fill(-1)
    const candidates: (StandbyCandidate[] | undefined)[] = new Array(numTasks)
    const addCandidate = (t: number, candidate: StandbyCandidate): void => {
      const list = candidates[t]
      if (list === undefined) candidates[t] = [candidate]
      else list.push(candidate)
    }

    for (const [m, memberId] of this.#memberIds.entries()) {
      const spec = groupSpec.members.get(memberId)!
      const p = processIndex.get(spec.processId)!
      this.#memberIndex.set(memberId, m)
      this.#memberProcess[m] = p
      this.#processMembers[p].push(m)

      // A task claimed as active by several members goes to the last one, as with Kafka's map put;
      // "last" is in member-id order here.
      for (const [subtopologyId, partitions] of spec.activeTasks) {
        for (const partition of partitions) {
          const t = taskOf(subtopologyId, partition)
          if (t >= 0) this.#prevActive[t] = m
        }
      }

      // First tier: current standbys, with the offset they reported (0 when none).
      const standbys = new Set<number>()
      for (const [subtopologyId, partitions] of spec.standbyTasks) {
        for (const partition of partitions) {
          const t = taskOf(subtopologyId, partition)
          if (t >= 0) standbys.add(t)
        }
      }
      for (const t of standbys) {
        const offsetSum =
          spec.taskOffsets.get(this.#subtopologyIds[this.#taskSub[t]])?.get(this.#taskPart[t]) ?? 0n
        addCandidate(t, { member: m, isPrevStandby: true, offsetSum })
      }
      // Second tier: tasks with state on the member's disk (reported offsets) that it does not hold as
      // standby, so a restarted member with a new id can regain them.
      for (const [subtopologyId, offsets] of spec.taskOffsets) {
        for (const [partition, offsetSum] of offsets) {
          const t = taskOf(subtopologyId, partition)
          if (t >= 0 && !standbys.has(t)) addCandidate(t, { member: m, isPrevStandby: false, offsetSum })
        }
      }
    }

    // Rank: standbys before offset-only candidates, then by offset descending. The sort is stable, so
    // equal candidates stay in member-id order.
    this.#prevStandby = new Array(numTasks)
    for (let t = 0; t < numTasks; t++) {
      const list = candidates[t]
      if (list === undefined) continue
      list.sort(
        (a, b) =>
          Number(b.isPrevStandby) - Number(a.isPrevStandby) ||
          (a.offsetSum > b.offsetSum ? -1 : a.offsetSum < b.offsetSum ? 1 : 0),
      )
      this.#prevStandby[t] = list.map((c) => c.member)
    }
  }

  get #numTasks(): number {
    return this.#taskSub.length
  }

  assignActive(): void {
    // Sorted by partition first: if the previous assignment was range-like, so stays this one.
    const tasks = this.#byPartitionThenSubtopology(false)

    // 1. Back to the previous active owner while it is under the active quota.
    let remaining: number[] = []
    for (const t of tasks) {
      const m = this.#prevActive[t]
      if (m >= 0 && this.#memberTaskCount[m] < this.#activeTasksPerMember) {
        this.#assignedActive(this.#addTask(m, t, true))
      } else {
        remaining.push(t)
      }
    }

    // 2. To a previous standby (or a member with local state), the least loaded one.
    const stillRemaining: number[] = []
    for (const t of remaining) {
      const m = this.#findPrevMemberWithLeastLoad(this.#prevStandby[t], -1)
      if (m >= 0 && this.#memberTaskCount[m] < this.#activeTasksPerMember) {
        this.#assignedActive(this.#addTask(m, t, true))
      } else {
        stillRemaining.push(t)
      }
    }
    remaining = stillRemaining

    // 3. The rest, in (subtopology, partition) order for a range-like spread, to the least-loaded
    // member of the least-loaded process.
    remaining.sort((a, b) => a - b)
    const processes = new IndexHeap(this.#processLess)
    processes.reset(this.#processMembers.keys())
    for (const t of remaining) {
      // Kafka polls the process, assigns, and adds it back; updating the top in place is equivalent.
      const p = processes.peek()
      if (p < 0)
        throw new TaskAssignorException(`No process available to assign active task ${this.#taskName(t)}.`)
      const count = this.#addTaskToLeastLoadedMember(p, t, true)
      if (count < 0)
        throw new TaskAssignorException(`No member available to assign active task ${this.#taskName(t)}.`)
      this.#assignedActive(count)
      processes.updateTop()
    }
  }

  assignStandby(): void {
    // (partition, subtopology) descending.
    const stateful = this.#byPartitionThenSubtopology(true).reverse()

    const toLeastLoaded: { task: number; remainingReplicas: number }[] = []
    for (const t of stateful) {
      for (let i = 0; i < this.numStandbyReplicas; i++) {
        const prevActive = this.#prevActive[t]
        if (
          prevActive >= 0 &&
          !this.#hasTask(this.#memberProcess[prevActive], t) &&
          this.#memberTaskCount[prevActive] < this.#totalTasksPerMember
        ) {
          this.#maybeUpdateTotalTasksPerMember(this.#addTask(prevActive, t, false))
          continue
        }
        const prevStandby = this.#findPrevMemberWithLeastLoad(this.#prevStandby[t], t)
        if (prevStandby >= 0 && this.#memberTaskCount[prevStandby] < this.#totalTasksPerMember) {
          this.#maybeUpdateTotalTasksPerMember(this.#addTask(prevStandby, t, false))
          continue
        }
        toLeastLoaded.push({ task: t, remainingReplicas: this.numStandbyReplicas - i })
        break
      }
    }

    // (subtopology, partition) descending, which is descending task number.
    toLeastLoaded.sort((a, b) => b.task - a.task)
    const processes = new IndexHeap(this.#processLess)
    processes.reset(this.#processMembers.keys())
    const skipped: number[] = []
    for (const { task, remainingReplicas } of toLeastLoaded) {
      for (let i = 0; i < remainingReplicas; i++) {
        // The least-loaded process that does not hold the task yet; the ones passed over go back.
        let assigned = false
        for (let p = processes.poll(); p >= 0; p = processes.poll()) {
          skipped.push(p)
          if (this.#hasTask(p, task)) continue
          const count = this.#addTaskToLeastLoadedMember(p, task, false)
          if (count >= 0) {
            assigned = true
            this.#maybeUpdateTotalTasksPerMember(count)
          }
          break
        }
        for (const p of skipped) processes.push(p)
        skipped.length = 0
        if (!assigned) {
          const missing = remainingReplicas - i
          this.#logger?.warn(
            { task: this.#taskName(task), missing, numStandbyReplicas: this.numStandbyReplicas },
            `Unable to assign ${missing} of ${this.numStandbyReplicas} standby tasks for task [${this.#taskName(task)}]. ` +
              'There is not enough available capacity. You should increase the number of threads and/or ' +
              'application instances to maintain the requested number of standby replicas.',
          )
          break
        }
      }
    }
  }

  buildGroupAssignment(groupSpec: GroupSpec): GroupAssignment {
    const numMembers = this.#memberIds.length
    const active: AssignedTasks[] = []
    const standby: AssignedTasks[] = []
    for (let m = 0; m < numMembers; m++) {
      active.push(new Map())
      standby.push(new Map())
    }
    // Ascending task number is (subtopology, partition) order, so every list comes out sorted.
    for (let t = 0; t < this.#numTasks; t++) {
      const subtopologyId = this.#subtopologyIds[this.#taskSub[t]]
      const partition = this.#taskPart[t]
      for (let k = 0; k < this.#holderCount[t]; k++) {
        const byMember = k === 0 ? active : standby
        const tasks = byMember[this.#holders[t * this.#slots + k]]
        const partitions = tasks.get(subtopologyId)
        if (partitions === undefined) tasks.set(subtopologyId, [partition])
        else partitions.push(partition)
      }
    }
    const members = new Map<string, MemberAssignment>()
    for (const memberId of groupSpec.members.keys()) {
      const m = this.#memberIndex.get(memberId)!
      members.set(memberId, { activeTasks: active[m], standbyTasks: standby[m], warmupTasks: new Map() })
    }
    return { members }
  }

  /**
   * Task numbers in (partition, subtopology) order, optionally only stateful ones. Built in one pass
   * without sorting: for partition 0, 1, … every subtopology (in id order) that still has that
   * partition contributes its task; a subtopology leaves the pass once its partitions run out.
   */
  #byPartitionThenSubtopology(statefulOnly: boolean): Int32Array {
    const numSubtopologies = this.#subtopologyIds.length
    let live: number[] = []
    let count = 0
    for (let s = 0; s < numSubtopologies; s++) {
      if (statefulOnly && !this.#subtopologyStateful[s]) continue
      const partitions = this.#subStart[s + 1] - this.#subStart[s]
      if (partitions === 0) continue
      live.push(s)
      count += partitions
    }
    const out = new Int32Array(count)
    let i = 0
    for (let p = 0; live.length > 0; p++) {
      let ended = false
      for (const s of live) {
        const t = this.#subStart[s] + p
        if (t < this.#subStart[s + 1]) out[i++] = t
        if (t + 1 >= this.#subStart[s + 1]) ended = true
      }
      if (ended) live = live.filter((s) => this.#subStart[s] + p + 1 < this.#subStart[s + 1])
    }
    return out
  }

  /** Kafka's `TaskId.toString`: `<subtopology>_<partition>`. */
  #taskName(t: number): string {
    return `${this.#subtopologyIds[this.#taskSub[t]]}_${this.#taskPart[t]}`
  }

  #hasTask(p: number, t: number): boolean {
    const base = t * this.#slots
    for (let k = 0; k < this.#holderCount[t]; k++) {
      if (this.#memberProcess[this.#holders[base + k]] === p) return true
    }
    return false
  }

  /** Gives task t to member m; returns the member's new task count. */
  #addTask(m: number, t: number, active: boolean): number {
    // The member heap cannot follow a change to an arbitrary member; it is rebuilt on next use.
    this.#processMemberHeap[this.#memberProcess[m]] = null
    return this.#addTaskInternal(m, t, active)
  }

  #addTaskInternal(m: number, t: number, active: boolean): number {
    const p = this.#memberProcess[m]
    this.#processTaskCount[p]++
    this.#processLoad[p] = this.#processTaskCount[p] / this.#processMembers[p].length
    // Actives all come first (see #holders); a second active or a standby beyond the configured
    // replicas would be a bug in this file.
    if ((this.#holderCount[t] === 0) !== active || this.#holderCount[t] >= this.#slots) {
      throw new TaskAssignorException(`Internal error: cannot place task ${this.#taskName(t)}`)
    }
    this.#holders[t * this.#slots + this.#holderCount[t]++] = m
    return ++this.#memberTaskCount[m]
  }

  /** Gives task t to the member of process p with the fewest tasks; -1 if p has no member. */
  #addTaskToLeastLoadedMember(p: number, t: number, active: boolean): number {
    const members = this.#processMembers[p]
    if (members.length === 0) return -1
    if (members.length === 1) return this.#addTaskInternal(members[0], t, active)
    let heap = this.#processMemberHeap[p]
    if (heap === null) {
      heap = new IndexHeap(this.#memberLess)
      heap.reset(members)
      this.#processMemberHeap[p] = heap
    }
    const count = this.#addTaskInternal(heap.peek(), t, active)
    heap.updateTop()
    return count
  }

  /**
   * The first candidate, replaced by a later one only if both its process load and its own task count
   * are strictly lower. With a standby task given, candidates whose process holds it are skipped.
   */
  #findPrevMemberWithLeastLoad(candidates: readonly number[] | undefined, standbyTask: number): number {
    if (candidates === undefined) return -1
    let best = -1
    let bestProcessLoad = 0
    let bestMemberLoad = 0
    for (const m of candidates) {
      const p = this.#memberProcess[m]
      if (standbyTask >= 0 && this.#hasTask(p, standbyTask)) continue
      const processLoad = this.#processLoad[p]
      const memberLoad = this.#memberTaskCount[m]
      if (best < 0 || (processLoad < bestProcessLoad && memberLoad < bestMemberLoad)) {
        best = m
        bestProcessLoad = processLoad
        bestMemberLoad = memberLoad
      }
    }
    return best
  }

  #assignedActive(newTaskCount: number): void {
    this.#maybeUpdateActiveTasksPerMember(newTaskCount)
    this.#maybeUpdateTotalTasksPerMember(newTaskCount)
  }

  /** A member that reaches the quota exactly leaves the pool; the quota is recomputed over the rest. */
  #maybeUpdateActiveTasksPerMember(count: number): void {
    if (count === this.#activeTasksPerMember) {
      this.#membersWithActiveTaskCapacity--
      this.#totalActiveTasks -= count
      this.#activeTasksPerMember = tasksPerMember(this.#totalActiveTasks, this.#membersWithActiveTaskCapacity)
    }
  }

  #maybeUpdateTotalTasksPerMember(count: number): void {
    if (count === this.#totalTasksPerMember) {
      this.#membersWithTaskCapacity--
      this.#totalTasks -= count
      this.#totalTasksPerMember = tasksPerMember(this.#totalTasks, this.#membersWithTaskCapacity)
    }
  }
}
