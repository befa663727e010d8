/**
 * Heartbeat phases of the modern group protocols (consumer and streams groups): the
 * `HeartbeatIntervalMs` a heartbeat is answered with. A deliberate difference from Kafka, which
 * answers every heartbeat with the group's interval; `group.heartbeat.spread.enable=false` does the
 * same here.
 *
 * Kafka's clients send a member's next heartbeat one interval after its previous one
 * (`AbstractHeartbeatRequestManager` resets `HeartbeatRequestState`'s timer to the interval it
 * holds when it sends; an answer carrying another interval resets the timer to that interval from
 * the answer's arrival, `updateHeartbeatIntervalMs`; an answer carrying the same one leaves the
 * timer as the send set it). So members whose heartbeats once fell together (the members of every
 * instance after a coordinator restart, or instances started together) keep heartbeating together
 * for good, and the coordinator serves bursts where it could serve an even stream.
 *
 * Here each member has a phase within the interval, from a hash of its member id, and each
 * successful heartbeat is answered with the interval that makes the member's next heartbeat fall on
 * it: the next heartbeat leaves the client about the answered interval after the coordinator
 * answered (after the answer's arrival when the interval changed, after the request's sending when
 * it did not; both are the coordinator's time within the network's delay), so the target is
 * reckoned from the shard's current time. The answered interval is bounded: at least half the
 * interval, at most one and a half (and never more than halfway from the interval to the session
 * timeout, so a member is not kept near its session's end); a member within a fiftieth of the
 * interval of its phase gets the plain interval. A member whose phase lies within the bounds gets
 * there with one answer, any other with two.
 *
 * Stateless: the answer is a function of the member id, the interval, the session timeout and the
 * shard's current time; no record is written and nothing is kept, so a reloaded shard answers as the
 * old one would have.
 */
import { fmix32 } from '../../runtime/hash.js'
import { FNV1A_32_SEED, hashString } from './string-hash.js'

/** The settings the answered interval depends on (both groups' configs have them). */
export interface HeartbeatSpreadConfig {
  /** The group's heartbeat interval (`group.<type>.heartbeat.interval.ms` or the group's own). */
  readonly heartbeatIntervalMs: number
  /** The group's session timeout. */
  readonly sessionTimeoutMs: number
  /** `group.heartbeat.spread.enable`: false answers `heartbeatIntervalMs` itself, as Kafka does. */
  readonly heartbeatSpreadEnable: boolean
}

/** A member is on its phase within this fraction of the interval (100 ms of 5 s). */
const ON_PHASE_DIVISOR = 50

/** The member's phase: the times `t` of the shard's clock with `t mod intervalMs` equal to it. */
export function heartbeatPhaseMs(memberId: string, intervalMs: number): number {
  return (fmix32(hashString(FNV1A_32_SEED, memberId)) >>> 0) % intervalMs
}

/** The tolerance within which a member counts as on its phase. */
export function onPhaseToleranceMs(intervalMs: number): number {
  return Math.floor(intervalMs / ON_PHASE_DIVISOR)
}

/** The shortest and longest interval a heartbeat may be answered with. */
export function heartbeatIntervalBounds(
  intervalMs: number,
  sessionTimeoutMs: number,
): { readonly minMs: number; readonly maxMs: number } {
  const half = Math.floor(intervalMs / 2)
  const longer = Math.max(0, Math.min(half, Math.floor((sessionTimeoutMs - intervalMs) / 2)))
  return { minMs: intervalMs - half, maxMs: intervalMs + longer }
}

/** The interval a member's successful heartbeat at `nowMs` is answered with (see above). */
export function answeredHeartbeatIntervalMs(
  config: HeartbeatSpreadConfig,
  memberId: string,
  nowMs: number,
): number {
  const intervalMs = config.heartbeatIntervalMs
  if (!config.heartbeatSpreadEnable || intervalMs < 2) return intervalMs
  const plainNext = Math.floor(nowMs) + intervalMs
  // How far the phase lies after the plain next heartbeat, then the nearer way round: (−I/2, I/2].
  let shift = (((heartbeatPhaseMs(memberId, intervalMs) - plainNext) % intervalMs) + intervalMs) % intervalMs
  if (2 * shift > intervalMs) shift -= intervalMs
  if (Math.abs(shift) <= onPhaseToleranceMs(intervalMs)) return intervalMs
  const { minMs, maxMs } = heartbeatIntervalBounds(intervalMs, config.sessionTimeoutMs)
  // Too far to wait for within the session's margin: go the other way round, as far as allowed
  // (the next answer does the rest).
  if (intervalMs + shift > maxMs) shift = Math.max(shift - intervalMs, minMs - intervalMs)
  return intervalMs + shift
}
