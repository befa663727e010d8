/** Group-level pieces shared by the modern group managers (consumer and streams groups). */
import { ApiError } from '../api-error.js'
import type { ModernMember } from './members.js'
import { LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH } from './membership.js'

/**
 * The steps of one group type's heartbeat, made once per manager: a heartbeat then allocates no
 * functions of its own to run them.
 */
export interface HeartbeatSteps<X, Q, T> {
  /** Throws an ApiError when the request is invalid. */
  validate(ctx: X, request: Q): void
  /** A leave (epoch −1 or −2). */
  leave(ctx: X, request: Q): T
  heartbeat(ctx: X, request: Q): T
  /** The error answer, with no records and no timers. */
  failed(e: ApiError): T
}

/**
 * Runs a heartbeat: a leave (epoch −1 or −2) or a heartbeat proper, after `validate`; an ApiError
 * becomes the error answer `failed` builds.
 */
export function runHeartbeat<X, Q extends { readonly memberEpoch: number }, T>(
  steps: HeartbeatSteps<X, Q, T>,
  ctx: X,
  request: Q,
): T {
  try {
    steps.validate(ctx, request)
    const epoch = request.memberEpoch
    return epoch === LEAVE_GROUP_MEMBER_EPOCH || epoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH
      ? steps.leave(ctx, request)
      : steps.heartbeat(ctx, request)
  } catch (e) {
    if (e instanceof ApiError) return steps.failed(e)
    throw e
  }
}

/**
 * The members and targets of a group as they will be once a heartbeat's records are replayed: the
 * updated member in, and a static member it replaced out (its target moving to the new id).
 */
export function membersAfterHeartbeat<M extends ModernMember, T>(
  members: ReadonlyMap<string, M>,
  targets: ReadonlyMap<string, T>,
  replaced: M | null,
  updated: M,
): { members: Map<string, M>; targets: Map<string, T> } {
  const m = new Map(members)
  const t = new Map(targets)
  if (replaced !== null) {
    m.delete(replaced.memberId)
    const target = t.get(replaced.memberId)
    t.delete(replaced.memberId)
    if (target !== undefined) t.set(updated.memberId, target)
  }
  m.set(updated.memberId, updated)
  return { members: m, targets: t }
}

export interface ListedModernGroup<K extends string> {
  readonly groupId: string
  readonly protocolType: K
  readonly groupState: string
  readonly groupType: K
}

/** ListGroups rows of one group type, with the request's state and type filters (trimmed, any case). */
export function listModernGroups<K extends string, S extends string>(
  type: K,
  groups: Iterable<{ readonly groupId: string; state(): S }>,
  filterName: (state: S) => string,
  statesFilter: readonly string[],
  typesFilter: readonly string[],
): ListedModernGroup<K>[] {
  const states = new Set(statesFilter.map((s) => s.trim().toLowerCase()))
  const types = typesFilter.map((t) => t.trim().toLowerCase())
  if (types.length > 0 && !types.includes(type)) return []
  const out: ListedModernGroup<K>[] = []
  for (const g of groups) {
    const state = g.state()
    if (states.size > 0 && !states.has(filterName(state))) continue
    out.push({ groupId: g.groupId, protocolType: type, groupState: state, groupType: type })
  }
  return out
}

/** What a group checks of an OffsetCommit or TxnOffsetCommit (Kafka's validateOffsetCommit inputs). */
export interface MemberOffsetCommit {
  readonly memberId: string
  readonly memberEpoch: number
  readonly apiVersion: number
  readonly isTransactional: boolean
  readonly topics: readonly { readonly name: string; readonly partitions: readonly number[] }[]
}
