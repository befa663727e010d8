import { IndexHeap } from './heap.js'
import {
  type AssignedTasks,
  compareStrings,
  type GroupAssignment,
  type GroupSpec,
  type MemberAssignment,
  type TaskAssignor,
  TaskAssignorException,
  type TopologyDescriber,
} from './types.js'

/** The name of Kafka's `MockAssignor`. */
export const MOCK_ASSIGNOR_NAME = 'mock'

/**
 * Kafka's `MockAssignor` (spec §4.2): active tasks only. Every member keeps its current active tasks;
 * each unowned task goes to the member with the fewest active tasks. No standbys.
 *
 * Kafka walks subtopologies in hash-map order and breaks ties between members by heap layout; here
 * subtopologies go in id order and ties go to the smaller member id.
 */
export class MockAssignor implements TaskAssignor {
  name(): string {
    return MOCK_ASSIGNOR_NAME
  }

  toString(): string {
    return MOCK_ASSIGNOR_NAME
  }

  assign(groupSpec: GroupSpec, topologyDescriber: TopologyDescriber): GroupAssignment {
    const subtopologyIds = [...new Set(topologyDescriber.subtopologies())].sort(compareStrings)
    const owners = new Map<string, (string | undefined)[]>()
    for (const id of subtopologyIds) {
      owners.set(id, new Array<string | undefined>(Math.max(0, topologyDescriber.maxNumInputPartitions(id))))
    }

    const memberIds = [...groupSpec.members.keys()]
    const active = new Map<string, Map<string, Set<number>>>()
    const counts: number[] = []
    for (const memberId of memberIds) {
      const tasks = new Map<string, Set<number>>()
      let count = 0
      for (const [subtopologyId, partitions] of groupSpec.members.get(memberId)!.activeTasks) {
        const set = new Set(partitions)
        tasks.set(subtopologyId, set)
        const subOwners = owners.get(subtopologyId)
        for (const partition of set) {
          // Kafka fails here with an unchecked exception (no such subtopology, index out of bounds).
          if (subOwners === undefined || !(partition >= 0 && partition < subOwners.length)) {
            throw new TaskAssignorException(
              `Task ${partition} of subtopology ${subtopologyId} is not a task of the topology`,
            )
          }
          if (subOwners[partition] !== undefined) {
            throw new TaskAssignorException(
              `Task ${partition} of subtopology ${subtopologyId} is assigned to multiple members`,
            )
          }
          subOwners[partition] = memberId
        }
        count += set.size
      }
      active.set(memberId, tasks)
      counts.push(count)
    }

    const byCount = new IndexHeap(
      (a, b) =>
        counts[a] < counts[b] || (counts[a] === counts[b] && compareStrings(memberIds[a], memberIds[b]) < 0),
    )
    byCount.reset(memberIds.keys())
    for (const subtopologyId of subtopologyIds) {
      const subOwners = owners.get(subtopologyId)!
      for (let partition = 0; partition < subOwners.length; partition++) {
        if (subOwners[partition] !== undefined) continue
        const m = byCount.poll()
        if (m < 0) {
          throw new TaskAssignorException(
            `No member available to assign task ${partition} of subtopology ${subtopologyId}`,
          )
        }
        const tasks = active.get(memberIds[m])!
        let set = tasks.get(subtopologyId)
        if (set === undefined) tasks.set(subtopologyId, (set = new Set()))
        set.add(partition)
        subOwners[partition] = memberIds[m]
        counts[m]++
        byCount.push(m)
      }
    }

    const members = new Map<string, MemberAssignment>()
    for (const memberId of memberIds) {
      members.set(memberId, {
        activeTasks: sortedTasks(active.get(memberId)!),
        standbyTasks: new Map(),
        warmupTasks: new Map(),
      })
    }
    return { members }
  }
}

function sortedTasks(tasks: ReadonlyMap<string, ReadonlySet<number>>): AssignedTasks {
  const out: AssignedTasks = new Map()
  for (const id of [...tasks.keys()].sort(compareStrings)) {
    const partitions = [...tasks.get(id)!].sort((a, b) => a - b)
    // Kafka keeps a subtopology entry with an empty set if the member reported one; an empty list says
    // nothing to a client, so it is left out.
    if (partitions.length > 0) out.set(id, partitions)
  }
  return out
}
