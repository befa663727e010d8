/**
 * GroupMetadata records for classic groups, in the shape Kafka writes them (Kafka's
 * GroupCoordinatorRecordHelpers.newGroupMetadataRecord / newEmptyGroupMetadataRecord /
 * newGroupMetadataTombstoneRecord). Kafka's coordinator writes GroupMetadataValue version 3 whatever
 * the request version; so do we.
 */
import type { CoordinatorRecord } from '../../../protocol/generated/coordinator-records.js'
import type { GroupMetadataValueMemberMetadata } from '../../../protocol/generated/records/GroupMetadataValue.js'
import type { ClassicGroup } from './group.js'

export type GroupMetadataRecord = Extract<CoordinatorRecord, { type: 'GroupMetadata' }>

export const GROUP_METADATA_VALUE_VERSION = 3

/**
 * The group with `assignment` (member id → bytes) as its members' assignments. Every member must
 * have an assignment, and a non-empty group must have a selected protocol (Kafka throws likewise).
 */
export function groupMetadataRecord(
  group: ClassicGroup,
  assignment: ReadonlyMap<string, Uint8Array>,
): GroupMetadataRecord {
  const members: GroupMetadataValueMemberMetadata[] = []
  for (const m of group.members.values()) {
    if (group.protocolName === null) {
      throw new Error('Attempted to write non-empty group metadata with no defined protocol.')
    }
    const a = assignment.get(m.memberId)
    if (a === undefined) {
      throw new Error(`Attempted to write member ${m.memberId} of group ${group.groupId} with no assignment.`)
    }
    members.push({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeout: m.rebalanceTimeoutMs,
      sessionTimeout: m.sessionTimeoutMs,
      subscription: m.metadata(group.protocolName),
      assignment: a,
    })
  }
  return {
    type: 'GroupMetadata',
    key: { group: group.groupId },
    value: {
      protocolType: group.protocolType ?? '',
      generation: group.generationId,
      protocol: group.protocolName,
      leader: group.leaderId,
      currentStateTimestamp: BigInt(group.currentStateTimestamp ?? -1),
      members,
    },
    valueVersion: GROUP_METADATA_VALUE_VERSION,
  }
}

/** The record that makes a new group durable before it has a generation. */
export function emptyGroupMetadataRecord(group: ClassicGroup): GroupMetadataRecord {
  return {
    type: 'GroupMetadata',
    key: { group: group.groupId },
    value: {
      protocolType: '',
      generation: 0,
      protocol: null,
      leader: null,
      currentStateTimestamp: BigInt(group.currentStateTimestamp ?? -1),
      members: [],
    },
    valueVersion: GROUP_METADATA_VALUE_VERSION,
  }
}

export const groupMetadataTombstone = (groupId: string): GroupMetadataRecord => ({
  type: 'GroupMetadata',
  key: { group: groupId },
  value: null,
})

/** The members' current assignments (what Kafka's groupAssignment() returns). */
export function currentAssignment(group: ClassicGroup): Map<string, Uint8Array> {
  return new Map([...group.members.values()].map((m) => [m.memberId, m.assignment]))
}
