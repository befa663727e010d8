/**
 * Member sessions of the modern group protocols (consumer and streams groups, Kafka's
 * ModernGroup members): the session-timeout timer of each member and the soft deadline a heartbeat
 * that writes nothing moves instead of re-arming that timer.
 */
import type { CoordinatorResult, TimerIntent } from '../../runtime/types.js'
import type { TimerWatch } from '../../runtime/types.js'

/**
 * A member's session timeout. Its timer (key `sessionTimeoutKey(groupId, memberId)`, operation
 * `op`, this object as its watch) is armed through timer intents, applied once a heartbeat's records
 * are durable; the runtime keeps `armed` up to date. A heartbeat that writes nothing while the timer
 * is armed moves `deadlineMs` instead (soft state), and the timer, when it fires before that
 * deadline, re-arms itself for the rest. So a steady heartbeat leaves no timer work behind, and the
 * member still expires one session timeout after its last successful heartbeat.
 */
export class MemberSession<R = CoordinatorResult<unknown, void>> implements TimerWatch {
  readonly key: string
  readonly op: (nowMs: number) => R
  /** The session deadline set by the last heartbeat that wrote nothing; 0 before any. */
  deadlineMs = 0
  /** Whether the runtime has this session's timer armed (it keeps this up to date). */
  armed = false
  /**
   * When the armed timer is due (the runtime keeps this up to date too). A soft deadline may only
   * move later than this: a shorter session timeout (a group config change) must re-arm the timer.
   */
  dueMs = 0

  constructor(key: string, op: (nowMs: number) => R) {
    this.key = key
    this.op = op
  }
}

/** A stored member with its session bookkeeping, found with one lookup. */
export class MemberSlot<M, R = CoordinatorResult<unknown, void>> extends MemberSession<R> {
  member: M

  constructor(member: M, key: string, op: (nowMs: number) => R) {
    super(key, op)
    this.member = member
  }
}

/** Where a heartbeat's session timer goes (a TimerCollector fits). */
export interface SessionTimers<Rec, C> {
  schedule(timer: TimerIntent<Rec, C>): void
}

/**
 * The session part of a heartbeat: a heartbeat that wrote nothing while the member's timer is armed
 * moves the soft deadline; any other re-arms the timer for a full session timeout.
 */
export function extendSession<Rec, C>(
  timers: SessionTimers<Rec, C>,
  session: MemberSession<CoordinatorResult<Rec, void, C>>,
  nowMs: number,
  sessionTimeoutMs: number,
  wroteRecords: boolean,
): void {
  const deadlineMs = nowMs + sessionTimeoutMs
  if (!wroteRecords && session.armed && deadlineMs >= session.dueMs) {
    session.deadlineMs = deadlineMs
    return
  }
  // A soft deadline later than this one (the group's session timeout was shortened) must not
  // re-arm the new timer past it. A later one is left alone: if this write fails, the session
  // still ends at the last successful heartbeat's deadline.
  if (session.deadlineMs > deadlineMs) session.deadlineMs = deadlineMs
  timers.schedule({ key: session.key, delayMs: sessionTimeoutMs, op: session.op, watch: session })
}

/**
 * When a session timer fires before the soft deadline a later heartbeat set, it re-arms itself for
 * the rest and the member stays: returns true then.
 */
export function sessionStillAlive<Rec, C>(
  timers: SessionTimers<Rec, C>,
  session: MemberSession<CoordinatorResult<Rec, void, C>>,
  nowMs: number,
): boolean {
  if (session.deadlineMs <= nowMs) return false
  timers.schedule({
    key: session.key,
    delayMs: session.deadlineMs - nowMs,
    op: session.op,
    watch: session,
  })
  return true
}
