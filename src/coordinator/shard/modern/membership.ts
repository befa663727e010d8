/**
 * Who a modern group heartbeat is from (Kafka's getOrMaybeCreate…Member and
 * getOrMaybeSubscribeStatic…Member for consumer and streams groups): the member, a static member
 * it replaces, and the checks with Kafka's errors and messages.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import { ApiError, invalidRequest } from '../api-error.js'
import { kept } from '../streams/strings.js'
import { throwIfMemberEpochIsInvalid } from './epochs.js'
import type { ModernMember } from './members.js'

export const LEAVE_GROUP_MEMBER_EPOCH = -1
export const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

export interface MemberDirectory<M> {
  member(memberId: string): M | undefined
  staticMemberId(instanceId: string | null): string | undefined
}

export interface HeartbeatIdentity {
  readonly groupId: string
  readonly memberId: string
  readonly memberEpoch: number
  readonly instanceId: string | null
}

export const unknownMember = (memberId: string, groupId: string): ApiError =>
  new ApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${groupId}.`)

/** The static member holding an instance id, checked as Kafka does for a non-joining request. */
export function staticOwner<M>(group: MemberDirectory<M>, memberId: string, instanceId: string): M {
  const ownerId = group.staticMemberId(instanceId)
  if (ownerId === undefined) {
    throw new ApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${instanceId} is unknown.`)
  }
  if (ownerId !== memberId) {
    throw new ApiError(
      ErrorCode.FENCED_INSTANCE_ID,
      `Static member ${memberId} with instance id ${instanceId} was fenced by member ${ownerId}.`,
    )
  }
  return group.member(ownerId)!
}

/**
 * The member a heartbeat is from: the stored one (its epoch checked), a new one on a join, or, for
 * a static member joining with an instance id another member holds, a copy of that member under
 * the new id at epoch 0 (`replaced` is the old one; `renamed` makes the copy, by default a spread).
 * `mayReplace` says whether the holder released the id (by default: it left with epoch −2);
 * otherwise UNRELEASED_INSTANCE_ID.
 */
export function heartbeatMember<M extends ModernMember, Q extends HeartbeatIdentity>(
  groupType: 'consumer' | 'streams',
  group: MemberDirectory<M>,
  req: Q,
  stored: M | undefined,
  create: (memberId: string) => M,
  ownsSubset: (member: M, req: Q) => boolean,
  mayReplace: (owner: M) => boolean = leftStatically,
  renamed: (owner: M, memberId: string) => M = renamedCopy,
): { member: M; replaced: M | null } {
  const { memberId, instanceId } = req
  const joining = req.memberEpoch === 0
  if (instanceId === null) {
    if (joining) return { member: stored ?? create(memberId), replaced: null }
    if (stored === undefined) throw unknownMember(memberId, req.groupId)
    return { member: checked(groupType, stored, req, ownsSubset), replaced: null }
  }
  if (!joining) {
    return {
      member: checked(groupType, staticOwner(group, memberId, instanceId), req, ownsSubset),
      replaced: null,
    }
  }
  const ownerId = group.staticMemberId(instanceId)
  const owner = ownerId === undefined ? undefined : group.member(ownerId)
  if (owner === undefined) return { member: stored ?? create(memberId), replaced: null }
  if (!mayReplace(owner)) {
    throw new ApiError(
      ErrorCode.UNRELEASED_INSTANCE_ID,
      `Static member ${memberId} with instance id ${instanceId} cannot join the group because the instance id is owned by ${owner.memberId} member.`,
    )
  }
  return { member: renamed(owner, memberId), replaced: owner }
}

/** The member, once its epoch is checked against the request's (Kafka's throwIfMemberEpochIsInvalid). */
function checked<M extends ModernMember, Q extends HeartbeatIdentity>(
  groupType: 'consumer' | 'streams',
  m: M,
  req: Q,
  ownsSubset: (member: M, req: Q) => boolean,
): M {
  // Nearly every heartbeat carries the member's epoch: the check, and its thunk, only when not.
  if (req.memberEpoch !== m.memberEpoch)
    throwIfMemberEpochIsInvalid(groupType, m, req.memberEpoch, () => ownsSubset(m, req))
  return m
}

/** By default, a static member's instance id is released when it left with epoch −2. */
function leftStatically(owner: ModernMember): boolean {
  return owner.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH
}

/** By default, the member that takes over an instance id is a copy of its holder at epoch 0. */
function renamedCopy<M extends ModernMember>(owner: M, memberId: string): M {
  return { ...owner, memberId, memberEpoch: 0, previousMemberEpoch: 0 }
}

/** The member a leave (epoch −1 or −2) is from, checked as Kafka does. */
export function leavingMember<M>(group: MemberDirectory<M>, req: HeartbeatIdentity): M {
  if (req.instanceId !== null) return staticOwner(group, req.memberId, req.instanceId)
  const m = group.member(req.memberId)
  if (m === undefined) throw unknownMember(req.memberId, req.groupId)
  return m
}

/** The member fields every modern heartbeat may carry, and the client it came from. */
export interface CommonHeartbeatFields {
  readonly memberEpoch: number
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly rebalanceTimeoutMs: number
}

export interface CommonMemberFields {
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly rebalanceTimeoutMs: number
  readonly clientId: string
  readonly clientHost: string
  /**
   * Whether this is the member's client id, for a member that keeps its client id in parts and
   * answers without building it (absent: `clientId` is compared).
   */
  hasClientId?(clientId: string): boolean
}

/**
 * Whether a (non-joining) heartbeat leaves the common fields as they are: none sent (null or −1)
 * and the same client. The caller adds its own type's fields.
 */
export function carriesNoCommonFields(
  req: CommonHeartbeatFields,
  client: { readonly clientId: string; readonly clientHost: string },
  member: CommonMemberFields,
): boolean {
  return (
    req.memberEpoch !== 0 &&
    req.instanceId === null &&
    req.rackId === null &&
    req.rebalanceTimeoutMs === -1 &&
    client.clientHost === member.clientHost &&
    (member.hasClientId === undefined
      ? client.clientId === member.clientId
      : member.hasClientId(client.clientId))
  )
}

/** The common fields of a member updated from a heartbeat (a field not sent keeps its value). */
export function updatedCommonFields(
  req: CommonHeartbeatFields,
  client: { readonly clientId: string; readonly clientHost: string },
  member: CommonMemberFields,
): CommonMemberFields {
  return {
    instanceId: req.instanceId ?? member.instanceId,
    rackId: req.rackId ?? member.rackId,
    rebalanceTimeoutMs: req.rebalanceTimeoutMs !== -1 ? req.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
    clientId: client.clientId,
    clientHost: client.clientHost,
  }
}

/** How a group type writes the records of a static member's replacement. */
export interface ReplacementRecords<R, M, T> {
  memberTombstones(groupId: string, memberId: string): R[]
  memberMetadata(groupId: string, member: M): R
  targetAssignment(groupId: string, memberId: string, target: T): R
  currentAssignment(groupId: string, member: M): R
}

/**
 * The records replacing a static member by a new member id (Kafka's replaceMember): the old
 * member's tombstones, then the new member's metadata, the old member's target under the new id,
 * and the new member's current assignment.
 */
export function replacementRecords<R, M extends ModernMember, T>(
  groupId: string,
  replaced: M,
  member: M,
  target: T,
  b: ReplacementRecords<R, M, T>,
): R[] {
  return [
    ...b.memberTombstones(groupId, replaced.memberId),
    b.memberMetadata(groupId, member),
    b.targetAssignment(groupId, member.memberId, target),
    b.currentAssignment(groupId, member),
  ]
}

/**
 * The member as a heartbeat leaves it: unchanged when nothing is sent (no common field, none of
 * the type's own fields: `ownFieldsSent` false) from the same client by a stored member, else a
 * copy with the common fields updated and the type's own fields (`own()`) applied.
 */
export function updatedMember<M extends CommonMemberFields, Q extends CommonHeartbeatFields>(
  member: M,
  isNewMember: boolean,
  req: Q,
  client: { readonly clientId: string; readonly clientHost: string },
  ownFieldsSent: boolean,
  own: (member: M, req: Q) => Partial<M>,
): M {
  if (!isNewMember && !ownFieldsSent && carriesNoCommonFields(req, client, member)) return member
  return { ...member, ...updatedCommonFields(req, client, member), ...own(member, req) }
}

/** Replays a member-metadata tombstone: the member must have been fenced and its target removed. */
export function replayMemberTombstone(
  groupId: string,
  memberId: string,
  group:
    | {
        member(memberId: string): ModernMember | undefined
        hasTarget(memberId: string): boolean
        removeMember(memberId: string): void
      }
    | undefined,
): void {
  const m = group?.member(memberId)
  if (!group || !m) return
  if (m.memberEpoch !== LEAVE_GROUP_MEMBER_EPOCH || group.hasTarget(memberId)) {
    throw new Error(
      `Received a member metadata tombstone for member ${memberId} of group ${groupId} too early.`,
    )
  }
  group.removeMember(memberId)
}

/** The common member fields of a member-metadata record, as strings the shard keeps. */
export function commonFieldsFromRecord(v: {
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly clientId: string
  readonly clientHost: string
  readonly rebalanceTimeoutMs: number
}): CommonMemberFields {
  return {
    instanceId: kept(v.instanceId),
    rackId: kept(v.rackId),
    clientId: kept(v.clientId),
    clientHost: kept(v.clientHost),
    rebalanceTimeoutMs: v.rebalanceTimeoutMs,
  }
}

const isBlank = (s: string | null): boolean => s !== null && s.trim() === ''

/**
 * Kafka's first checks of a modern heartbeat: a member id when one is required, no blank group,
 * instance or rack id, and a rebalance timeout on a join.
 */
export function validateCommonHeartbeat(
  req: {
    readonly memberId: string
    readonly groupId: string
    readonly instanceId: string | null
    readonly rackId: string | null
    readonly memberEpoch: number
    readonly rebalanceTimeoutMs: number
  },
  memberIdRequired: boolean,
): void {
  if (memberIdRequired && isBlank(req.memberId)) throw invalidRequest("MemberId can't be empty.")
  if (isBlank(req.groupId)) throw invalidRequest("GroupId can't be empty.")
  if (isBlank(req.instanceId)) throw invalidRequest("InstanceId can't be empty.")
  if (isBlank(req.rackId)) throw invalidRequest("RackId can't be empty.")
  if (req.memberEpoch === 0 && req.rebalanceTimeoutMs === -1)
    throw invalidRequest('RebalanceTimeoutMs must be provided in first request.')
}
