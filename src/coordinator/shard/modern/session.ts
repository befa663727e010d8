/**
 * Member sessions of the modern group protocols (consumer and streams groups, Kafka's
 * ModernGroup members): the session-timeout timer of each member and the soft deadline a heartbeat
 * that writes nothing moves instead of re-arming that timer.
 */
import type { CoordinatorResult, TimerIntent } from '../../runtime/types.js'
import type { TimerWatch } from '../../runtime/types.js'
import { heartbeatPhaseMs } from './heartbeat-phase.js'
import { MEMBER_TIMER_RETRY_BACKOFF_MS } from './timers.js'

/**
 * The soft state of a member's session: the runtime's watch of its session timer (`armed`, `dueMs`)
 * and the soft deadline a heartbeat that writes nothing moves instead of re-arming that timer
 * (see MemberSession).
 */
export interface SessionWatch extends TimerWatch {
  /** The session deadline set by the last heartbeat that wrote nothing; 0 before any. */
  deadlineMs: number
}

/**
 * A member's session timeout. Its timer (key `sessionTimeoutKey(groupId, memberId)`, operation
 * `op`, this object or the member's slot as its watch) is armed through timer intents, applied once
 * a heartbeat's records are durable; the runtime keeps `armed` up to date. A heartbeat that writes
 * nothing while the timer is armed moves `deadlineMs` instead (soft state), and the timer, when it
 * fires before that deadline, re-arms itself for the rest. So a steady heartbeat leaves no timer
 * work behind, and the member still expires one session timeout after its last successful
 * heartbeat.
 *
 * A stored member's key and operation are made when its timer is armed (see MemberSlot), not kept
 * with the member: the runtime holds them while the timer is armed, and a steady heartbeat arms
 * nothing.
 */
export interface MemberSession<R = CoordinatorResult<unknown, void>> extends SessionWatch {
  readonly key: string
  readonly op: (nowMs: number) => R
}

/** The session bookkeeping fields of a session or slot, as a new member starts. */
export abstract class SessionFields implements SessionWatch {
  deadlineMs = 0
  /** Whether the runtime has this session's timer armed (it keeps this up to date). */
  armed = false
  /**
   * When the armed timer is due (the runtime keeps this up to date too). A soft deadline may only
   * move later than this: a shorter session timeout (a group config change) must re-arm the timer.
   */
  dueMs = 0
}

/** The session of a member that is not stored (yet): its key and operation, made for one request. */
export class DetachedSession<R = CoordinatorResult<unknown, void>>
  extends SessionFields
  implements MemberSession<R>
{
  readonly key: string
  readonly op: (nowMs: number) => R

  constructor(key: string, op: (nowMs: number) => R) {
    super()
    this.key = key
    this.op = op
  }
}

/**
 * The session of a stored slot that does not make its own key and operation (a streams member's,
 * which keeps no reference to its table): the slot's bookkeeping, read and written through, with
 * the key and operation its table made. Made when asked for; the shard's own timers take the slot
 * itself as their watch.
 */
export class SlotSession<R = CoordinatorResult<unknown, void>> implements MemberSession<R> {
  readonly #slot: SessionWatch
  readonly key: string
  readonly op: (nowMs: number) => R

  constructor(slot: SessionWatch, key: string, op: (nowMs: number) => R) {
    this.#slot = slot
    this.key = key
    this.op = op
  }
  get deadlineMs(): number {
    return this.#slot.deadlineMs
  }
  set deadlineMs(ms: number) {
    this.#slot.deadlineMs = ms
  }
  get armed(): boolean {
    return this.#slot.armed
  }
  set armed(armed: boolean) {
    this.#slot.armed = armed
  }
  get dueMs(): number {
    return this.#slot.dueMs
  }
  set dueMs(ms: number) {
    this.#slot.dueMs = ms
  }
}

/** Makes the session-timeout key and operation of a group's member (the group's member table). */
export interface SessionTimers<R> {
  sessionKey(memberId: string): string
  sessionOp(memberId: string): (nowMs: number) => R
}

/**
 * What a member table keeps for each member: the member and its session bookkeeping, found with
 * one lookup by `memberId` (its member's id). The slot stays the same object while the member is
 * in the table (it is its session timer's watch); `replace` puts the member a record made in it.
 */
export interface MemberSlotOf<M> extends SessionWatch {
  readonly memberId: string
  readonly member: M
  /** Makes `member` the slot's member; returns the member it replaces, as a value of its own. */
  replace(member: M): M
}

/**
 * A stored member with its session bookkeeping, found with one lookup; its session too (it makes
 * its key and operation through its table).
 */
export class MemberSlot<M extends { readonly memberId: string }, R = CoordinatorResult<unknown, void>>
  extends SessionFields
  implements MemberSlotOf<M>, MemberSession<R>
{
  member: M
  readonly #timers: SessionTimers<R>

  constructor(member: M, timers: SessionTimers<R>) {
    super()
    this.member = member
    this.#timers = timers
  }

  get memberId(): string {
    return this.member.memberId
  }

  replace(member: M): M {
    const old = this.member
    this.member = member
    return old
  }

  /** `sessionTimeoutKey(groupId, memberId)`, made from the stored member id. */
  get key(): string {
    return this.#timers.sessionKey(this.member.memberId)
  }

  get op(): (nowMs: number) => R {
    return this.#timers.sessionOp(this.member.memberId)
  }
}

/** Where a heartbeat's session timer goes (a TimerCollector fits). */
export interface SessionTimerSink<Rec, C> {
  schedule(timer: TimerIntent<Rec, C>): void
}

/**
 * The soft-deadline part of a heartbeat's session (see extendSession): a heartbeat that wrote
 * nothing while the member's timer is armed moves the soft deadline, and false is returned; else
 * true: the timer must be scheduled for a full session timeout.
 */
export function mustArmSession(
  session: SessionWatch,
  nowMs: number,
  sessionTimeoutMs: number,
  wroteRecords: boolean,
): boolean {
  const deadlineMs = nowMs + sessionTimeoutMs
  if (!wroteRecords && session.armed && deadlineMs >= session.dueMs) {
    session.deadlineMs = deadlineMs
    return false
  }
  // A soft deadline later than this one (the group's session timeout was shortened) must not
  // re-arm the new timer past it. A later one is left alone: if this write fails, the session
  // still ends at the last successful heartbeat's deadline.
  if (session.deadlineMs > deadlineMs) session.deadlineMs = deadlineMs
  return true
}

/**
 * The session part of a heartbeat: a heartbeat that wrote nothing while the member's timer is armed
 * moves the soft deadline; any other re-arms the timer for a full session timeout.
 */
export function extendSession<Rec, C>(
  timers: SessionTimerSink<Rec, C>,
  session: MemberSession<CoordinatorResult<Rec, void, C>>,
  nowMs: number,
  sessionTimeoutMs: number,
  wroteRecords: boolean,
): void {
  if (!mustArmSession(session, nowMs, sessionTimeoutMs, wroteRecords)) return
  timers.schedule({
    key: session.key,
    delayMs: sessionTimeoutMs,
    op: session.op,
    watch: session,
    retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
  })
}

/**
 * When a session timer fires before the soft deadline a later heartbeat set, the time left until
 * that deadline (the timer re-arms itself for it and the member stays); else 0.
 */
export function sessionTimeLeft(session: SessionWatch, nowMs: number): number {
  return session.deadlineMs <= nowMs ? 0 : session.deadlineMs - nowMs
}

/**
 * The period of a steady member's session timer: the session timeout less the heartbeat interval
 * (at least 1 ms). A steady member's soft deadline is never less than that ahead of a firing.
 */
export function sessionFirePeriodMs(config: {
  readonly sessionTimeoutMs: number
  readonly heartbeatIntervalMs: number
}): number {
  return Math.max(1, config.sessionTimeoutMs - config.heartbeatIntervalMs)
}

/**
 * When a session timer that fired before its soft deadline fires next, in ms from `nowMs` (0: the
 * session is over). Not the deadline itself: the last time at or before it that falls on the
 * member's own phase of `periodMs` (a hash of its member id, as its heartbeat phase), when that is
 * still ahead; the deadline otherwise. Re-armed for the deadline, every member's timer fires one
 * session timeout after a heartbeat of its, so the timers of members whose sessions started
 * together (every member of a shard loaded after a restart, whose timers are armed at the same
 * moment, or a join storm's) keep firing together, a burst every 40 s or so that the heartbeats'
 * jitter spreads only over many minutes. On their phases they fire evenly over the period from
 * their second firing on, as often as before (once a period), and a member still expires at its
 * deadline: a firing at or after it finds no time left.
 */
export function sessionRearmDelayMs(
  session: SessionWatch,
  nowMs: number,
  memberId: string,
  periodMs: number,
): number {
  const left = sessionTimeLeft(session, nowMs)
  if (left === 0 || periodMs < 2) return left
  const deadlineMs = session.deadlineMs
  const onPhaseMs =
    deadlineMs - ((((deadlineMs - heartbeatPhaseMs(memberId, periodMs)) % periodMs) + periodMs) % periodMs)
  return onPhaseMs > nowMs ? onPhaseMs - nowMs : left
}

/**
 * When a session timer fires before the soft deadline a later heartbeat set, it re-arms itself
 * ({@link sessionRearmDelayMs}) and the member stays: returns true then.
 */
export function sessionStillAlive<Rec, C>(
  timers: SessionTimerSink<Rec, C>,
  session: MemberSession<CoordinatorResult<Rec, void, C>>,
  nowMs: number,
  memberId: string,
  periodMs: number,
): boolean {
  const delayMs = sessionRearmDelayMs(session, nowMs, memberId, periodMs)
  if (delayMs === 0) return false
  timers.schedule({
    key: session.key,
    delayMs,
    op: session.op,
    watch: session,
    retryBackoffMs: MEMBER_TIMER_RETRY_BACKOFF_MS,
  })
  return true
}
