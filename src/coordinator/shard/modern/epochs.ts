/**
 * Member-epoch rules shared by the modern group protocols (KIP-848 consumer groups, KIP-1071
 * streams groups): the fencing check of a heartbeat and the assignment-interval check.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import { ApiError } from '../api-error.js'

export interface EpochedMember {
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
}

/**
 * FENCED_MEMBER_EPOCH when the received epoch is ahead of the member's, or behind it unless it is
 * the previous epoch and the member owns no more than it was given (the response with the bump may
 * have been lost). `ownsSubset` is asked only in that case.
 */
export function throwIfMemberEpochIsInvalid(
  groupType: 'consumer' | 'streams',
  member: EpochedMember,
  received: number,
  ownsSubset: () => boolean,
): void {
  if (received > member.memberEpoch) {
    throw new ApiError(
      ErrorCode.FENCED_MEMBER_EPOCH,
      `The ${groupType} group member has a greater member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
    )
  }
  if (received < member.memberEpoch && (received !== member.previousMemberEpoch || !ownsSubset())) {
    throw new ApiError(
      ErrorCode.FENCED_MEMBER_EPOCH,
      `The ${groupType} group member has a smaller member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
    )
  }
}

/**
 * Whether the next target assignment may be computed now: there is none yet (or its time is
 * unknown), the interval is 0, or the interval has passed since the last one.
 */
export function canComputeAssignment(lastTimestamp: bigint, intervalMs: number, nowMs: number): boolean {
  return lastTimestamp === 0n || intervalMs === 0 || BigInt(nowMs) >= lastTimestamp + BigInt(intervalMs)
}
