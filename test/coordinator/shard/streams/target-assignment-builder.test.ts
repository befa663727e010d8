// Direct tests of computeTargetAssignment (Kafka's TargetAssignmentBuilder): the assignor's view of
// the group, empty targets while the topology is not ready, the changed members, and an assignor
// failure answered UNKNOWN_SERVER_ERROR.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError } from '../../../../src/coordinator/shard/api-error.js'
import {
  type GroupSpec,
  StickyTaskAssignor,
  type TaskAssignor,
  TaskAssignorException,
} from '../../../../src/coordinator/shard/streams/assignor/index.js'
import type { ConfiguredTopology } from '../../../../src/coordinator/shard/streams/configured-topology.js'
import { newMember, type StreamsGroupMember } from '../../../../src/coordinator/shard/streams/member.js'
import type { TasksTuple } from '../../../../src/coordinator/shard/streams/tasks.js'
import { computeTargetAssignment } from '../../../../src/coordinator/shard/streams/target-assignment-builder.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'

const ready = (tasks: number, stateful = false): ConfiguredTopology => ({
  topologyEpoch: 0,
  subtopologies: new Map([
    [
      '0',
      {
        numberOfTasks: tasks,
        sourceTopics: ['input'],
        repartitionSinkTopics: [],
        repartitionSourceTopics: new Map(),
        stateChangelogTopics: stateful
          ? new Map([
              [
                'c',
                { name: 'c', numberOfPartitions: tasks, replicationFactor: null, topicConfigs: new Map() },
              ],
            ])
          : new Map(),
      },
    ],
  ]),
  internalTopicsToBeCreated: [],
  status: null,
  sourcePartitionCounts: new Map([['input', tasks]]),
})

const members = (...ids: string[]): Map<string, StreamsGroupMember> =>
  new Map(ids.map((id) => [id, { ...newMember(id), processId: `p-${id}` }]))
const activeOf = (t: TasksTuple | undefined) => [...(t?.active.bySubtopology().get('0') ?? [])].sort()

describe('computeTargetAssignment', () => {
  it('runs the assignor and reports every member whose target is new', () => {
    const r = computeTargetAssignment({
      members: members('a', 'b'),
      currentTargets: new Map(),
      taskOffsets: new Map(),
      configuredTopology: ready(4),
      assignmentConfigs: new Map(),
      assignor: new StickyTaskAssignor(),
    })
    assert.deepEqual(r.changed, ['a', 'b'])
    assert.deepEqual([...activeOf(r.targets.get('a')), ...activeOf(r.targets.get('b'))].sort(), [0, 1, 2, 3])
    assert.equal(activeOf(r.targets.get('a')).length, 2)
  })

  it('a member whose target did not change gets no record', () => {
    const first = computeTargetAssignment({
      members: members('a'),
      currentTargets: new Map(),
      taskOffsets: new Map(),
      configuredTopology: ready(2),
      assignmentConfigs: new Map(),
      assignor: new StickyTaskAssignor(),
    })
    const again = computeTargetAssignment({
      members: members('a'),
      currentTargets: first.targets,
      taskOffsets: new Map(),
      configuredTopology: ready(2),
      assignmentConfigs: new Map(),
      assignor: new StickyTaskAssignor(),
    })
    assert.deepEqual(again.changed, [])
  })

  it('a topology that is not ready gives every member an empty target, without the assignor', () => {
    const never: TaskAssignor = {
      name: () => 'never',
      assign: () => {
        throw new Error('not called')
      },
    }
    const r = computeTargetAssignment({
      members: members('a'),
      currentTargets: new Map(),
      taskOffsets: new Map(),
      configuredTopology: { ...ready(2), status: { statusCode: 1, statusDetail: 'x' } },
      assignmentConfigs: new Map(),
      assignor: never,
    })
    assert.deepEqual([r.changed, activeOf(r.targets.get('a'))], [['a'], []])
  })

  it('hands the assignor the group configs; warm-ups are never taken from it', () => {
    let seen: GroupSpec | undefined
    const spy: TaskAssignor = {
      name: () => 'spy',
      assign: (spec) => {
        seen = spec
        return {
          members: new Map([
            [
              'a',
              {
                activeTasks: new Map([['0', [0]]]),
                standbyTasks: new Map(),
                warmupTasks: new Map([['0', [1]]]),
              },
            ],
          ]),
        }
      },
    }
    const r = computeTargetAssignment({
      members: members('a'),
      currentTargets: new Map(),
      taskOffsets: new Map(),
      configuredTopology: ready(2, true),
      assignmentConfigs: new Map([
        ['num.standby.replicas', '1'],
        ['rack.aware.assignment.tags', 'zone,rack'],
      ]),
      assignor: spy,
    })
    assert.deepEqual(seen?.configs, { numStandbyReplicas: 1, rackAwareAssignmentTags: ['zone', 'rack'] })
    assert.deepEqual(seen?.members.get('a')?.processId, 'p-a')
    assert.equal(r.targets.get('a')?.warmup.size, 0)
  })

  it('an assignor failure is answered UNKNOWN_SERVER_ERROR without a message', () => {
    const failing: TaskAssignor = {
      name: () => 'failing',
      assign: () => {
        throw new TaskAssignorException('no process available')
      },
    }
    assert.throws(
      () =>
        computeTargetAssignment({
          members: members('a'),
          currentTargets: new Map(),
          taskOffsets: new Map(),
          configuredTopology: ready(2),
          assignmentConfigs: new Map(),
          assignor: failing,
        }),
      (e: unknown) =>
        e instanceof ApiError && e.errorCode === ErrorCode.UNKNOWN_SERVER_ERROR && e.errorMessage === null,
    )
  })
})
