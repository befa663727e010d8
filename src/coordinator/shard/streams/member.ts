/** A streams group member (Kafka's StreamsGroupMember): an immutable value; updates make copies. */
import {
  EMPTY_TASKS_WITH_EPOCHS,
  taskSetToList,
  type TasksTuple,
  type TasksTupleWithEpochs,
} from './tasks.js'
import type { DescribedAssignment, DescribedMember, Endpoint, TaskOffset } from './wire.js'

/** Member reconciliation states as stored in the current-assignment record (int8). */
export const MemberState = {
  /** Any value this version does not know (a record written by a newer coordinator). */
  UNKNOWN: 0,
  STABLE: 1,
  UNREVOKED_TASKS: 2,
  UNRELEASED_TASKS: 3,
} as const
export type MemberStateValue = (typeof MemberState)[keyof typeof MemberState]

export function memberStateFromRecord(v: number): MemberStateValue {
  return v === 1 || v === 2 || v === 3 ? v : MemberState.UNKNOWN
}

export interface StreamsGroupMember {
  readonly memberId: string
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
  readonly state: MemberStateValue
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly rebalanceTimeoutMs: number
  readonly topologyEpoch: number
  readonly processId: string
  readonly clientId: string
  readonly clientHost: string
  readonly userEndpoint: Endpoint | null
  /** Sorted by key. */
  readonly clientTags: ReadonlyMap<string, string>
  readonly assignedTasks: TasksTupleWithEpochs
  readonly tasksPendingRevocation: TasksTupleWithEpochs
}

/** The member a join starts from when the member id is new (§3.2). */
export function newMember(memberId: string): StreamsGroupMember {
  return {
    memberId,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: MemberState.STABLE,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    topologyEpoch: -1,
    processId: '',
    clientId: '',
    clientHost: '',
    userEndpoint: null,
    clientTags: NO_TAGS,
    assignedTasks: EMPTY_TASKS_WITH_EPOCHS,
    tasksPendingRevocation: EMPTY_TASKS_WITH_EPOCHS,
  }
}

/** The client tags of a member without any: one shared empty map (most members have none). */
export const NO_TAGS: ReadonlyMap<string, string> = new Map()

export function sortedTags(tags: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
  if (tags.size === 0) return NO_TAGS
  return new Map([...tags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)))
}

function endpointEquals(a: Endpoint | null, b: Endpoint | null): boolean {
  if (a === null || b === null) return a === b
  return a.host === b.host && a.port === b.port
}

function tagsEqual(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false
  for (const [k, v] of a) if (b.get(k) !== v) return false
  return true
}

/** Whether the fields persisted by the member-metadata record differ. */
export function memberMetadataDiffers(a: StreamsGroupMember, b: StreamsGroupMember): boolean {
  return (
    a.instanceId !== b.instanceId ||
    a.rackId !== b.rackId ||
    a.clientId !== b.clientId ||
    a.clientHost !== b.clientHost ||
    a.rebalanceTimeoutMs !== b.rebalanceTimeoutMs ||
    a.topologyEpoch !== b.topologyEpoch ||
    a.processId !== b.processId ||
    !endpointEquals(a.userEndpoint, b.userEndpoint) ||
    !tagsEqual(a.clientTags, b.clientTags)
  )
}

/** The subset of metadata whose change bumps the group epoch for a static member (§3.3). */
export function epochRelevantConfigDiffers(a: StreamsGroupMember, b: StreamsGroupMember): boolean {
  return (
    a.topologyEpoch !== b.topologyEpoch ||
    a.rackId !== b.rackId ||
    a.processId !== b.processId ||
    !tagsEqual(a.clientTags, b.clientTags)
  )
}

export function userEndpointEquals(a: Endpoint | null, b: Endpoint | null): boolean {
  return endpointEquals(a, b)
}

export function isReconciledTo(member: StreamsGroupMember, assignmentEpoch: number): boolean {
  return member.state === MemberState.STABLE && member.memberEpoch === assignmentEpoch
}

/**
 * The member's StreamsGroupDescribe row (Kafka's StreamsGroupMember.asStreamsGroupDescribeMember):
 * its target assignment and the task offsets it last reported are kept by the group.
 */
export function asDescribedMember(
  m: StreamsGroupMember,
  targetAssignment: TasksTuple,
  offsets:
    | {
        readonly taskOffsets: ReadonlyMap<string, bigint>
        readonly taskEndOffsets: ReadonlyMap<string, bigint>
      }
    | undefined,
): DescribedMember {
  return {
    memberId: m.memberId,
    memberEpoch: m.memberEpoch,
    instanceId: m.instanceId,
    rackId: m.rackId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    topologyEpoch: m.topologyEpoch,
    processId: m.processId,
    userEndpoint: m.userEndpoint === null ? null : { ...m.userEndpoint },
    clientTags: [...m.clientTags].map(([key, value]) => ({ key, value })),
    taskOffsets: offsetsList(offsets?.taskOffsets),
    taskEndOffsets: offsetsList(offsets?.taskEndOffsets),
    assignment: describedAssignment(m.assignedTasks),
    targetAssignment: describedAssignment(targetAssignment),
    isClassic: false,
  }
}

function describedAssignment(t: TasksTuple): DescribedAssignment {
  return {
    activeTasks: taskSetToList(t.active),
    standbyTasks: taskSetToList(t.standby),
    warmupTasks: taskSetToList(t.warmup),
  }
}

/** "subtopologyId\u0000partition" → offset, as a list sorted by subtopology and partition. */
function offsetsList(m: ReadonlyMap<string, bigint> | undefined): TaskOffset[] {
  if (!m) return []
  return [...m]
    .map(([k, offset]) => {
      const i = k.lastIndexOf('\u0000')
      return { subtopologyId: k.slice(0, i), partition: Number(k.slice(i + 1)), offset }
    })
    .sort(
      (a, b) =>
        (a.subtopologyId < b.subtopologyId ? -1 : a.subtopologyId > b.subtopologyId ? 1 : 0) ||
        a.partition - b.partition,
    )
}
