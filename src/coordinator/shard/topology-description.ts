/**
 * KIP-1331 on the shard: the StoredDescriptionTopologyEpoch / FailedDescriptionTopologyEpoch
 * bookkeeping of streams groups, as synchronous operations the service runs by name
 * (kip1331-broker.md §1.8). The plugin calls, the back-off and the timers live in the service
 * (service/topology-description-manager.ts); the results come back here as writes.
 *
 * Stored epoch values (§1.4):
 * - −1 (NONE): the plugin definitely holds nothing for the group;
 * - −2 (UNCERTAIN): the plugin may or may not hold an entry. It solicits a push like −1 and keeps
 *   the group delete-eligible like a real epoch (the #22777 barrier design, §9.4);
 * - ≥ 0: the plugin holds exactly that epoch.
 *
 * Every write copies epoch, metadata hash, validated topology epoch and last assignment configs
 * from the group unchanged (§8.2). The runtime replays after the append, so the state these
 * operations read is both "latest" and "committed" in Kafka's terms.
 */
import type { CoordinatorRecord } from '../../protocol/generated/coordinator-records.js'
import type { GroupCoordinatorShard } from './group-coordinator-shard.js'
import { type GroupCoordinatorResult, NO_TIMERS } from './result.js'
import { ErrorCode } from '../../protocol/errors.js'
import { type StreamsGroup, StreamsGroupState } from './streams/group.js'
import { groupMetadataRecord } from './streams/records.js'

export const STORED_TOPOLOGY_EPOCH_NONE = -1
export const STORED_TOPOLOGY_EPOCH_UNCERTAIN = -2
/** FailedDescriptionTopologyEpoch when no epoch was rejected. */
export const FAILED_TOPOLOGY_EPOCH_NONE = -1

/** Kafka's `StreamsGroup.isReliablyStoredTopologyEpoch`: only a real epoch says "the plugin holds it". */
export function isReliablyStoredTopologyEpoch(epoch: number): boolean {
  return epoch >= 0
}

/** Operation names (kip1331-broker.md §1.8), plus Topograph's own D2 write. */
export const TopologyDescriptionOp = {
  VALIDATE: 'streams-group-topology-description-validate',
  MARK_UNCERTAIN: 'mark-topology-uncertain',
  SET_STORED: 'streams-group-set-stored-topology-epoch',
  SET_FAILED: 'streams-group-set-failed-topology-epoch',
  LIST_CLEANUP: 'list-streams-groups-needing-topology-cleanup',
  MARK_UNCERTAIN_BATCH: 'mark-topology-uncertain-batch',
  FINALIZE_BATCH: 'finalize-stored-topology-epoch-after-delete-batch',
  PRE_DELETE: 'streams-group-topology-pre-delete',
  /** Topograph D2: the conditional −2 write after getTopology lost the stored description. */
  MARK_UNCERTAIN_AFTER_LOSS: 'mark-topology-uncertain-after-lost-description',
  /** The exception label of the push RPC. */
  UPDATE: 'streams-group-topology-description-update',
} as const

/** A Kafka error with its message, as the push answers it. */
export interface TopologyDescriptionError {
  readonly errorCode: number
  readonly errorMessage: string | null
}

/** The gate inputs of one heartbeat (Kafka's StreamsGroupHeartbeatResult epochs). */
export interface HeartbeatGateInputs {
  /** The epoch of the group's topology after the heartbeat, −1 when it has none. */
  readonly currentTopologyEpoch: number
  readonly storedDescriptionTopologyEpoch: number
  readonly failedDescriptionTopologyEpoch: number
}

type WriteResult<T> = GroupCoordinatorResult<T>

const result = <T>(records: CoordinatorRecord[], response: T): WriteResult<T> => ({
  records,
  response,
  timers: NO_TIMERS,
})

/** The group's metadata record with new description epochs and everything else copied. */
export function descriptionEpochsRecord(
  group: StreamsGroup,
  stored: number,
  failed: number,
): CoordinatorRecord {
  return groupMetadataRecord(group.groupId, {
    epoch: group.groupEpoch,
    metadataHash: group.metadataHash,
    validatedTopologyEpoch: group.validatedTopologyEpoch,
    lastAssignmentConfigs: group.lastAssignmentConfigs,
    storedDescriptionTopologyEpoch: stored,
    failedDescriptionTopologyEpoch: failed,
  })
}

function notFound(shard: GroupCoordinatorShard, groupId: string): TopologyDescriptionError {
  return {
    errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
    errorMessage: shard.hasGroup(groupId)
      ? `Group ${groupId} is not a streams group.`
      : `Group ${groupId} not found.`,
  }
}

function isEmptyGroup(group: StreamsGroup): boolean {
  return group.state() === StreamsGroupState.EMPTY
}

/**
 * The epochs the heartbeat gate reads, computed inside the heartbeat write from the group and the
 * records the heartbeat is about to append (a join may create the topology or the group).
 */
export function heartbeatGateInputs(
  shard: GroupCoordinatorShard,
  groupId: string,
  records: readonly CoordinatorRecord[],
): HeartbeatGateInputs {
  const group = shard.streams.group(groupId)
  let current = group?.topology?.epoch ?? -1
  let stored = group?.storedDescriptionTopologyEpoch ?? STORED_TOPOLOGY_EPOCH_NONE
  let failed = group?.failedDescriptionTopologyEpoch ?? FAILED_TOPOLOGY_EPOCH_NONE
  for (const r of records) {
    if (r.type === 'StreamsGroupTopology' && r.key.groupId === groupId && r.value !== null) {
      current = r.value.epoch
    } else if (r.type === 'StreamsGroupMetadata' && r.key.groupId === groupId && r.value !== null) {
      stored = r.value.storedDescriptionTopologyEpoch
      failed = r.value.failedDescriptionTopologyEpoch
    }
  }
  return {
    currentTopologyEpoch: current,
    storedDescriptionTopologyEpoch: stored,
    failedDescriptionTopologyEpoch: failed,
  }
}

/**
 * `streams-group-topology-description-validate` (§3.2 step 3): null when the push may proceed.
 * Neither the member epoch, the member's own topology epoch nor the failed epoch is checked.
 */
export function validateTopologyDescriptionUpdate(
  shard: GroupCoordinatorShard,
  groupId: string,
  memberId: string,
  topologyEpoch: number,
): TopologyDescriptionError | null {
  const group = shard.streams.group(groupId)
  if (group === undefined) return notFound(shard, groupId)
  if (group.member(memberId) === undefined) {
    return {
      errorCode: ErrorCode.UNKNOWN_MEMBER_ID,
      errorMessage: `Member ${memberId} is not a member of group ${groupId}.`,
    }
  }
  const current = group.topology?.epoch ?? -1
  if (topologyEpoch !== current) {
    return {
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: `Topology epoch ${topologyEpoch} does not match the group's current topology epoch ${current}.`,
    }
  }
  return null
}

function markOne(
  shard: GroupCoordinatorShard,
  groupId: string,
  markWhenNone: boolean,
  records: CoordinatorRecord[],
): boolean {
  const group = shard.streams.group(groupId)
  if (group === undefined) return false
  const stored = group.storedDescriptionTopologyEpoch
  if (!markWhenNone) {
    // Delete paths: only an empty group that may hold a description is marked.
    if (!isEmptyGroup(group) || stored === STORED_TOPOLOGY_EPOCH_NONE) return false
  }
  if (stored === STORED_TOPOLOGY_EPOCH_UNCERTAIN) return true
  records.push(
    descriptionEpochsRecord(group, STORED_TOPOLOGY_EPOCH_UNCERTAIN, group.failedDescriptionTopologyEpoch),
  )
  return true
}

/**
 * `mark-topology-uncertain`: the durable −2 barrier before a plugin call. False (no record) when the
 * group is gone or not a streams group; with `markWhenNone` false also when the group is not empty
 * or its stored epoch is −1. A group already at −2 gets no new record.
 */
export function markTopologyUncertain(
  shard: GroupCoordinatorShard,
  groupId: string,
  markWhenNone: boolean,
): WriteResult<boolean> {
  const records: CoordinatorRecord[] = []
  const marked = markOne(shard, groupId, markWhenNone, records)
  return result(records, marked)
}

/**
 * `mark-topology-uncertain-batch` (cleanup cycle, DeleteGroups): the single mark with
 * `markWhenNone = false` for each group; returns the groups that stay eligible.
 */
export function markTopologyUncertainBatch(
  shard: GroupCoordinatorShard,
  groupIds: readonly string[],
): WriteResult<string[]> {
  const records: CoordinatorRecord[] = []
  const eligible: string[] = []
  for (const groupId of new Set(groupIds)) {
    if (markOne(shard, groupId, false, records)) eligible.push(groupId)
  }
  return result(records, eligible)
}

/**
 * `streams-group-set-stored-topology-epoch` after a successful setTopology. Stored becomes
 * max(stored, pushed), except that a stored −1 becomes −2: only a delete's finalize moves −2 to −1,
 * so a delete raced this push and may have removed what it stored. A record is always written.
 */
export function setStoredTopologyEpoch(
  shard: GroupCoordinatorShard,
  groupId: string,
  topologyEpoch: number,
): WriteResult<TopologyDescriptionError | null> {
  const group = shard.streams.group(groupId)
  if (group === undefined) return result([], notFound(shard, groupId))
  const stored = group.storedDescriptionTopologyEpoch
  const next =
    stored === STORED_TOPOLOGY_EPOCH_NONE ? STORED_TOPOLOGY_EPOCH_UNCERTAIN : Math.max(stored, topologyEpoch)
  return result([descriptionEpochsRecord(group, next, group.failedDescriptionTopologyEpoch)], null)
}

/**
 * `streams-group-set-failed-topology-epoch` after a permanent setTopology failure: failed becomes
 * max(failed, pushed); stored stays (normally at the −2 barrier). A record is always written.
 */
export function setFailedTopologyEpoch(
  shard: GroupCoordinatorShard,
  groupId: string,
  topologyEpoch: number,
): WriteResult<TopologyDescriptionError | null> {
  const group = shard.streams.group(groupId)
  if (group === undefined) return result([], notFound(shard, groupId))
  const failed = Math.max(group.failedDescriptionTopologyEpoch, topologyEpoch)
  return result([descriptionEpochsRecord(group, group.storedDescriptionTopologyEpoch, failed)], null)
}

/**
 * `finalize-stored-topology-epoch-after-delete-batch` (§6.3), after successful plugin deletes:
 * −2 → −1 (nothing raced); a real epoch → −2 (a push raced the delete, so ask again); −1, a missing
 * group or another group type → no record. Emptiness is not checked.
 */
export function finalizeStoredTopologyEpochAfterDeleteBatch(
  shard: GroupCoordinatorShard,
  groupIds: readonly string[],
): WriteResult<void> {
  const records: CoordinatorRecord[] = []
  for (const groupId of new Set(groupIds)) {
    const group = shard.streams.group(groupId)
    if (group === undefined) continue
    const stored = group.storedDescriptionTopologyEpoch
    if (stored === STORED_TOPOLOGY_EPOCH_NONE) continue
    const next =
      stored === STORED_TOPOLOGY_EPOCH_UNCERTAIN
        ? STORED_TOPOLOGY_EPOCH_NONE
        : STORED_TOPOLOGY_EPOCH_UNCERTAIN
    records.push(descriptionEpochsRecord(group, next, group.failedDescriptionTopologyEpoch))
  }
  return result(records, undefined)
}

/**
 * Topograph D2 (a difference from Kafka 4.4, which only answers NOT_STORED): getTopology returned
 * null for the epoch the group believes stored, so the plugin lost the description. Stored becomes
 * −2, only if it still equals `topologyEpoch`, so the next heartbeat solicits a push again while the
 * group stays delete-eligible. Returns whether a record was written.
 */
export function markTopologyUncertainAfterLostDescription(
  shard: GroupCoordinatorShard,
  groupId: string,
  topologyEpoch: number,
): WriteResult<boolean> {
  const group = shard.streams.group(groupId)
  if (group === undefined || group.storedDescriptionTopologyEpoch !== topologyEpoch) return result([], false)
  return result(
    [descriptionEpochsRecord(group, STORED_TOPOLOGY_EPOCH_UNCERTAIN, group.failedDescriptionTopologyEpoch)],
    true,
  )
}

/**
 * `streams-group-topology-pre-delete` (§5 step 2.1): the requested groups that are streams groups
 * with stored ≠ −1 (so −2 included). Missing and other groups are skipped.
 */
export function streamsGroupsWithStoredTopologyDescription(
  shard: GroupCoordinatorShard,
  groupIds: readonly string[],
): string[] {
  const out: string[] = []
  for (const groupId of new Set(groupIds)) {
    const group = shard.streams.group(groupId)
    if (group !== undefined && group.storedDescriptionTopologyEpoch !== STORED_TOPOLOGY_EPOCH_NONE) {
      out.push(groupId)
    }
  }
  return out
}

export interface CleanupScan {
  readonly eligible: string[]
  /** Groups whose scan threw (logged by the service and skipped). */
  readonly failed: { readonly groupId: string; readonly error: unknown }[]
}

/**
 * `list-streams-groups-needing-topology-cleanup` (§6.2 step 3): empty streams groups whose stored
 * epoch is not −1 and that have no committed offsets (transactions are not served, so none is open).
 */
export function listStreamsGroupsNeedingTopologyCleanup(shard: GroupCoordinatorShard): CleanupScan {
  const eligible: string[] = []
  const failed: { groupId: string; error: unknown }[] = []
  for (const groupId of shard.streams.groupIds()) {
    try {
      const group = shard.streams.group(groupId)
      if (group === undefined) continue
      if (!isEmptyGroup(group)) continue
      if (group.storedDescriptionTopologyEpoch === STORED_TOPOLOGY_EPOCH_NONE) continue
      if (shard.offsets.hasOffsets(groupId)) continue
      eligible.push(groupId)
    } catch (error) {
      failed.push({ groupId, error })
    }
  }
  return { eligible, failed }
}

/** The stored epoch of each requested streams group (describe reads it with the rows). */
export function storedDescriptionTopologyEpochs(
  shard: GroupCoordinatorShard,
  groupIds: readonly string[],
): Map<string, number> {
  const out = new Map<string, number>()
  for (const groupId of groupIds) {
    const group = shard.streams.group(groupId)
    if (group !== undefined) out.set(groupId, group.storedDescriptionTopologyEpoch)
  }
  return out
}
