/** An opaque handle of a scheduled callback. */
export type TimerHandle = unknown

/**
 * Time as the runtime sees it: the current time handed to operations, and the timer source behind
 * `scheduleTimer` and periodic compaction. Production uses {@link systemClock}; tests use
 * {@link ManualClock} so timers fire exactly when the test advances time.
 */
export interface RuntimeClock {
  /** Milliseconds since the epoch. */
  now(): number
  /** Calls `callback` once, `delayMs` from now. */
  setTimer(callback: () => void, delayMs: number): TimerHandle
  /** Cancels a callback that has not run yet; a handle that already ran is ignored. */
  clearTimer(handle: TimerHandle): void
}

/** Wall-clock time and Node's timers. Timers are unref'd: they never keep the process alive. */
export const systemClock: RuntimeClock = {
  now: () => Date.now(),
  setTimer: (callback, delayMs) => {
    const t = setTimeout(callback, delayMs)
    t.unref()
    return t
  },
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
}

interface ManualTimer {
  readonly id: number
  readonly dueMs: number
  readonly callback: () => void
}

/**
 * A clock that only moves when told to. `advance(ms)` runs every callback that falls due, in due
 * order (ties in scheduling order), with `now()` set to each callback's due time while it runs; a
 * callback scheduled by another callback runs in the same `advance` if it falls due within it.
 */
export class ManualClock implements RuntimeClock {
  #nowMs: number
  #nextId = 1
  #timers: ManualTimer[] = []

  constructor(startMs = 0) {
    if (!Number.isFinite(startMs)) throw new RangeError('startMs must be a finite number')
    this.#nowMs = startMs
  }

  now(): number {
    return this.#nowMs
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`delayMs must be >= 0, got ${delayMs}`)
    const timer: ManualTimer = { id: this.#nextId++, dueMs: this.#nowMs + delayMs, callback }
    this.#timers.push(timer)
    return timer.id
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle)
  }

  /** Number of callbacks waiting. */
  get pendingTimers(): number {
    return this.#timers.length
  }

  /** When the next callback falls due, or undefined when none is waiting. */
  nextDueMs(): number | undefined {
    let next: number | undefined
    for (const t of this.#timers) if (next === undefined || t.dueMs < next) next = t.dueMs
    return next
  }

  /** Moves time forward by `ms`, running the callbacks that fall due. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`ms must be >= 0, got ${ms}`)
    const target = this.#nowMs + ms
    for (;;) {
      let next: ManualTimer | undefined
      for (const t of this.#timers) {
        if (t.dueMs <= target && (next === undefined || t.dueMs < next.dueMs)) next = t
      }
      if (next === undefined) break
      const due = next
      this.#timers = this.#timers.filter((t) => t !== due)
      this.#nowMs = Math.max(this.#nowMs, due.dueMs)
      due.callback()
    }
    this.#nowMs = target
  }
}
