/**
 * Builders for every streams coordinator record, in the shape Kafka writes them (Kafka's
 * StreamsCoordinatorRecordHelpers), and the group tombstones in Kafka's order.
 */
import type { StreamsGroup } from './group.js'
import type { StreamsGroupMember } from './member.js'
import { taskEpochsToRecord, taskSetToList, taskSetToRecord, type TasksTuple } from './tasks.js'
import type { KeyValue, StreamsCoordinatorRecord, StreamsGroupTopologyValue } from './wire.js'

const sortedEntries = (m: ReadonlyMap<string, string>): KeyValue[] =>
  [...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([key, value]) => ({ key, value }))

export interface GroupMetadataFields {
  readonly epoch: number
  readonly metadataHash: bigint
  readonly validatedTopologyEpoch: number
  readonly lastAssignmentConfigs: ReadonlyMap<string, string>
  readonly storedDescriptionTopologyEpoch: number
  readonly failedDescriptionTopologyEpoch: number
}

/** LastAssignmentConfigs is always set as a key-sorted list; an empty list is the default and, as in Kafka, not written. */
export function groupMetadataRecord(groupId: string, f: GroupMetadataFields): StreamsCoordinatorRecord {
  return {
    type: 'StreamsGroupMetadata',
    key: { groupId },
    value: {
      epoch: f.epoch,
      metadataHash: f.metadataHash,
      validatedTopologyEpoch: f.validatedTopologyEpoch,
      lastAssignmentConfigs: sortedEntries(f.lastAssignmentConfigs),
      storedDescriptionTopologyEpoch: f.storedDescriptionTopologyEpoch,
      failedDescriptionTopologyEpoch: f.failedDescriptionTopologyEpoch,
    },
  }
}

/** The group's metadata with a new epoch and everything else copied (used by fencing). */
export function groupMetadataRecordFrom(group: StreamsGroup, epoch: number): StreamsCoordinatorRecord {
  return groupMetadataRecord(group.groupId, {
    epoch,
    metadataHash: group.metadataHash,
    validatedTopologyEpoch: group.validatedTopologyEpoch,
    lastAssignmentConfigs: group.lastAssignmentConfigs,
    storedDescriptionTopologyEpoch: group.storedDescriptionTopologyEpoch,
    failedDescriptionTopologyEpoch: group.failedDescriptionTopologyEpoch,
  })
}

export function memberMetadataRecord(groupId: string, m: StreamsGroupMember): StreamsCoordinatorRecord {
  return {
    type: 'StreamsGroupMemberMetadata',
    key: { groupId, memberId: m.memberId },
    value: {
      instanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      topologyEpoch: m.topologyEpoch,
      processId: m.processId,
      userEndpoint: m.userEndpoint === null ? null : { host: m.userEndpoint.host, port: m.userEndpoint.port },
      clientTags: sortedEntries(m.clientTags),
    },
  }
}

export function topologyRecord(
  groupId: string,
  topology: StreamsGroupTopologyValue,
): StreamsCoordinatorRecord {
  return { type: 'StreamsGroupTopology', key: { groupId }, value: topology }
}

export function targetAssignmentMemberRecord(
  groupId: string,
  memberId: string,
  t: TasksTuple,
): StreamsCoordinatorRecord {
  return {
    type: 'StreamsGroupTargetAssignmentMember',
    key: { groupId, memberId },
    value: {
      activeTasks: taskSetToList(t.active),
      standbyTasks: taskSetToList(t.standby),
      warmupTasks: taskSetToList(t.warmup),
    },
  }
}

export function targetAssignmentMetadataRecord(
  groupId: string,
  assignmentEpoch: number,
  assignmentTimestamp: bigint,
): StreamsCoordinatorRecord {
  return {
    type: 'StreamsGroupTargetAssignmentMetadata',
    key: { groupId },
    value: { assignmentEpoch, assignmentTimestamp },
  }
}

export function currentAssignmentRecord(groupId: string, m: StreamsGroupMember): StreamsCoordinatorRecord {
  return {
    type: 'StreamsGroupCurrentMemberAssignment',
    key: { groupId, memberId: m.memberId },
    value: {
      memberEpoch: m.memberEpoch,
      previousMemberEpoch: m.previousMemberEpoch,
      state: m.state,
      activeTasks: taskEpochsToRecord(m.assignedTasks.active),
      standbyTasks: taskSetToRecord(m.assignedTasks.standby),
      warmupTasks: taskSetToRecord(m.assignedTasks.warmup),
      activeTasksPendingRevocation: taskEpochsToRecord(m.tasksPendingRevocation.active),
      standbyTasksPendingRevocation: taskSetToRecord(m.tasksPendingRevocation.standby),
      warmupTasksPendingRevocation: taskSetToRecord(m.tasksPendingRevocation.warmup),
    },
  }
}

export const currentAssignmentTombstone = (groupId: string, memberId: string): StreamsCoordinatorRecord => ({
  type: 'StreamsGroupCurrentMemberAssignment',
  key: { groupId, memberId },
  value: null,
})
export const targetAssignmentTombstone = (groupId: string, memberId: string): StreamsCoordinatorRecord => ({
  type: 'StreamsGroupTargetAssignmentMember',
  key: { groupId, memberId },
  value: null,
})
export const memberMetadataTombstone = (groupId: string, memberId: string): StreamsCoordinatorRecord => ({
  type: 'StreamsGroupMemberMetadata',
  key: { groupId, memberId },
  value: null,
})
export const targetAssignmentMetadataTombstone = (groupId: string): StreamsCoordinatorRecord => ({
  type: 'StreamsGroupTargetAssignmentMetadata',
  key: { groupId },
  value: null,
})
export const groupMetadataTombstone = (groupId: string): StreamsCoordinatorRecord => ({
  type: 'StreamsGroupMetadata',
  key: { groupId },
  value: null,
})
export const topologyTombstone = (groupId: string): StreamsCoordinatorRecord => ({
  type: 'StreamsGroupTopology',
  key: { groupId },
  value: null,
})

/** The three tombstones that remove one member: current assignment, target assignment, metadata. */
export function memberTombstones(groupId: string, memberId: string): StreamsCoordinatorRecord[] {
  return [
    currentAssignmentTombstone(groupId, memberId),
    targetAssignmentTombstone(groupId, memberId),
    memberMetadataTombstone(groupId, memberId),
  ]
}

/**
 * Every tombstone that deletes the group, in Kafka's order: per-member current assignments, per-member
 * targets, target metadata, per-member metadata, group metadata, topology.
 */
export function groupTombstones(group: StreamsGroup): StreamsCoordinatorRecord[] {
  const ids = [...group.members.keys()]
  return [
    ...ids.map((id) => currentAssignmentTombstone(group.groupId, id)),
    ...ids.map((id) => targetAssignmentTombstone(group.groupId, id)),
    targetAssignmentMetadataTombstone(group.groupId),
    ...ids.map((id) => memberMetadataTombstone(group.groupId, id)),
    groupMetadataTombstone(group.groupId),
    topologyTombstone(group.groupId),
  ]
}
