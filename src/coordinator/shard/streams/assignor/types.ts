/**
 * The streams-group task assignor SPI: what the coordinator hands an assignor and what it gets back.
 * Names follow Kafka's `org.apache.kafka.coordinator.group.api.streams.assignor` package in camelCase.
 * Plain data only: the assignor folder imports nothing from the protocol or the rest of the shard.
 */
import { LocalError } from '../../../../errors.js'

/** The partitions (task numbers) of one subtopology, as a set or a list. */
export type TaskPartitions = ReadonlySet<number> | readonly number[]

/** Tasks keyed by subtopology id. */
export type TasksBySubtopology = ReadonlyMap<string, TaskPartitions>

/** Reported cumulative offsets keyed by subtopology id, then by partition. */
export type TaskOffsetsBySubtopology = ReadonlyMap<string, ReadonlyMap<number, bigint>>

/** The assignment configs passed to an assignor (Kafka `AssignmentConfigs`). */
export interface AssignmentConfigs {
  /** `num.standby.replicas`: standby replicas wanted for each stateful task. */
  readonly numStandbyReplicas: number
  /** `rack.aware.assignment.tags`: client tag keys for rack-aware standby placement. */
  readonly rackAwareAssignmentTags: readonly string[]
}

/** The per-member metadata that does not change during one assignment (Kafka `MemberAssignmentMetadata`). */
export interface MemberAssignmentMetadata {
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly processId: string
  readonly clientTags: ReadonlyMap<string, string>
}

/** The member's current tasks and reported offsets (Kafka `MemberAssignmentState`). */
export interface MemberAssignmentState {
  /** Current active tasks, assignment epochs dropped. */
  readonly activeTasks: TasksBySubtopology
  readonly standbyTasks: TasksBySubtopology
  readonly warmupTasks: TasksBySubtopology
  /** Last reported cumulative task offsets (state on the member's local disk). */
  readonly taskOffsets: TaskOffsetsBySubtopology
  /** Last reported cumulative task end offsets. */
  readonly taskEndOffsets: TaskOffsetsBySubtopology
}

/** Everything the assignor knows about one member. */
export interface AssignmentMemberSpec extends MemberAssignmentMetadata, MemberAssignmentState {}

/** The group as seen by the assignor (Kafka `GroupSpec`). */
export interface GroupSpec {
  /** Members keyed by member id; the output lists members in this map's order. */
  readonly members: ReadonlyMap<string, AssignmentMemberSpec>
  readonly configs: AssignmentConfigs
}

/** The task metadata of the group's configured topology (Kafka `TopologyDescriber`). */
export interface TopologyDescriber {
  /** The subtopology ids. */
  subtopologies(): readonly string[]
  /** The number of tasks of a subtopology (its largest source-topic partition count). */
  maxNumInputPartitions(subtopologyId: string): number
  /** Whether the subtopology has at least one changelog topic. */
  isStateful(subtopologyId: string): boolean
}

/** Plain-data description of one subtopology, the input of {@link createTopologyDescriber}. */
export interface SubtopologyTasks {
  readonly numberOfTasks: number
  readonly isStateful: boolean
}

/** Tasks assigned to one member, keyed by subtopology id (ascending), partitions ascending. */
export type AssignedTasks = Map<string, number[]>

/** The new target of one member (Kafka `MemberAssignment`). */
export interface MemberAssignment {
  readonly activeTasks: AssignedTasks
  readonly standbyTasks: AssignedTasks
  /** Always empty: on Kafka trunk the assignor never assigns warm-up tasks (spec §3.11, §4.4). */
  readonly warmupTasks: AssignedTasks
}

/** The new target assignment of the group (Kafka `GroupAssignment`). */
export interface GroupAssignment {
  /** One entry per member of the group spec, in the group spec's order. */
  readonly members: Map<string, MemberAssignment>
}

/** A server-side task assignor (Kafka `TaskAssignor`). One instance is shared by all groups. */
export interface TaskAssignor {
  /** The name under which the assignor is selected (`streams.assignor.name`, `group.streams.assignors`). */
  name(): string
  /** Computes the group's new target assignment. Throws {@link TaskAssignorException} when it cannot. */
  assign(groupSpec: GroupSpec, topologyDescriber: TopologyDescriber): GroupAssignment
}

/** Thrown by an assignor that cannot compute an assignment (Kafka `TaskAssignorException`). */
export class TaskAssignorException extends LocalError {
  override readonly name = 'TaskAssignorException'

  constructor(message: string, options?: { cause?: unknown }) {
    super('TASK_ASSIGNOR_FAILED', message, options)
  }
}

/** Where an assignor reports what it could not do (Kafka logs a WARN). */
export interface AssignorLogger {
  warn(fields: Readonly<Record<string, unknown>>, message: string): void
}

/**
 * Builds a {@link TopologyDescriber} over plain data. `subtopologies()` returns the ids sorted (UTF-16
 * code-unit order, as Java's `String.compareTo`); an unknown id throws, like Kafka's
 * `NoSuchElementException`.
 */
export function createTopologyDescriber(
  subtopologies: ReadonlyMap<string, SubtopologyTasks> | Readonly<Record<string, SubtopologyTasks>>,
): TopologyDescriber {
  const byId = new Map<string, SubtopologyTasks>(
    subtopologies instanceof Map ? subtopologies : Object.entries(subtopologies),
  )
  const ids = [...byId.keys()].sort(compareStrings)
  const get = (id: string): SubtopologyTasks => {
    const s = byId.get(id)
    if (s === undefined) throw new RangeError(`Unknown subtopology ${id}`)
    return s
  }
  return {
    subtopologies: () => ids,
    maxNumInputPartitions: (id) => get(id).numberOfTasks,
    isStateful: (id) => get(id).isStateful,
  }
}

/** UTF-16 code-unit order, the order of Java's `String.compareTo`. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** A member assignment with no tasks. */
export function emptyMemberAssignment(): MemberAssignment {
  return { activeTasks: new Map(), standbyTasks: new Map(), warmupTasks: new Map() }
}
