/**
 * Target assignment computation (Kafka's TargetAssignmentBuilder): builds the assignor's view of
 * the group, runs the assignor (or gives everyone an empty target when the topology is not ready),
 * and returns the target-assignment records for the members whose target changed.
 */
import type { ConfiguredTopology } from './configured-topology.js'
import { ErrorCode } from '../../../protocol/errors.js'
import { ApiError } from '../api-error.js'
import type { StreamsGroupMember } from './member.js'
import {
  type AssignmentMemberSpec,
  createTopologyDescriber,
  type TaskAssignor,
  TaskAssignorException,
} from './assignor/index.js'
import type { MemberTaskOffsets } from './group.js'
import { EMPTY_TASK_SET, type TasksTuple, tasksTupleEquals, taskSetFromMap } from './tasks.js'

export interface TargetAssignmentInput {
  readonly members: ReadonlyMap<string, StreamsGroupMember>
  readonly currentTargets: ReadonlyMap<string, TasksTuple>
  readonly taskOffsets: ReadonlyMap<string, MemberTaskOffsets>
  readonly configuredTopology: ConfiguredTopology | null
  readonly assignmentConfigs: ReadonlyMap<string, string>
  readonly assignor: TaskAssignor
}

export interface TargetAssignmentResult {
  /** The new target of every member, in member order. */
  readonly targets: Map<string, TasksTuple>
  /** Members whose target is new or changed (the ones that get a record), in member order. */
  readonly changed: string[]
}

function offsetsBySubtopology(m: ReadonlyMap<string, bigint> | undefined): Map<string, Map<number, bigint>> {
  const out = new Map<string, Map<number, bigint>>()
  if (!m) return out
  for (const [key, offset] of m) {
    const i = key.lastIndexOf('\u0000')
    const id = key.slice(0, i)
    let inner = out.get(id)
    if (!inner) out.set(id, (inner = new Map()))
    inner.set(Number(key.slice(i + 1)), offset)
  }
  return out
}

export function computeTargetAssignment(input: TargetAssignmentInput): TargetAssignmentResult {
  const targets = new Map<string, TasksTuple>()
  const topology = input.configuredTopology
  if (topology === null || topology.status !== null || topology.subtopologies === null) {
    for (const id of input.members.keys()) {
      targets.set(id, { active: EMPTY_TASK_SET, standby: EMPTY_TASK_SET, warmup: EMPTY_TASK_SET })
    }
  } else {
    const specs = new Map<string, AssignmentMemberSpec>()
    for (const [id, m] of input.members) {
      const offsets = input.taskOffsets.get(id)
      specs.set(id, {
        instanceId: m.instanceId,
        rackId: m.rackId,
        processId: m.processId,
        clientTags: m.clientTags,
        activeTasks: m.assignedTasks.active.bySubtopology(),
        standbyTasks: m.assignedTasks.standby.bySubtopology(),
        warmupTasks: m.assignedTasks.warmup.bySubtopology(),
        taskOffsets: offsetsBySubtopology(offsets?.taskOffsets),
        taskEndOffsets: offsetsBySubtopology(offsets?.taskEndOffsets),
      })
    }
    const describer = createTopologyDescriber(
      new Map(
        [...topology.subtopologies].map(([id, s]) => [
          id,
          { numberOfTasks: s.numberOfTasks, isStateful: s.stateChangelogTopics.size > 0 },
        ]),
      ),
    )
    const standby = Number(input.assignmentConfigs.get('num.standby.replicas') ?? '0')
    const tags = input.assignmentConfigs.get('rack.aware.assignment.tags')
    let result: ReturnType<TaskAssignor['assign']>
    try {
      result = input.assignor.assign(
        {
          members: specs,
          configs: {
            numStandbyReplicas: Number.isFinite(standby) ? standby : 0,
            rackAwareAssignmentTags: tags ? tags.split(',') : [],
          },
        },
        describer,
      )
    } catch (e) {
      if (e instanceof TaskAssignorException)
        throw new ApiError(ErrorCode.UNKNOWN_SERVER_ERROR, null, { cause: e })
      throw e
    }
    const toSet = taskSetFromMap
    for (const id of input.members.keys()) {
      const a = result.members.get(id)
      // Warm-ups are never taken from the assignor (Kafka empties them too).
      targets.set(id, {
        active: a ? toSet(a.activeTasks) : EMPTY_TASK_SET,
        standby: a ? toSet(a.standbyTasks) : EMPTY_TASK_SET,
        warmup: EMPTY_TASK_SET,
      })
    }
  }
  const changed: string[] = []
  for (const [id, t] of targets) {
    const old = input.currentTargets.get(id)
    if (!old || !tasksTupleEquals(old, t)) changed.push(id)
  }
  return { targets, changed }
}
