// Where one load thread's heartbeats leave within the interval. Members' phases come from the
// coordinator (a hash of the member id, docs/streams-groups.md "Heartbeat phases") and the ceiling
// members' from a random draw, so on one thread several fall due in the same millisecond now and
// then, and its timers send them back to back: the later ones' latency then holds the earlier ones'
// sending and answering. `SendSlots` is the load's own remedy, optional (`--spread-sends`): each
// phase is moved by a few milliseconds onto the least-taken millisecond of the interval near it
// (far inside the coordinator's tolerance of a fiftieth of the interval), the interval unchanged.
// `SendBursts` counts how bunched a thread's sends are, whichever way they are scheduled.

/** The nearest least-taken millisecond slot of the interval within a reach, for each phase placed. */
export class SendSlots {
  readonly #taken: Uint16Array

  constructor(
    readonly intervalMs: number,
    /** How far (ms) a phase may be moved either way. */
    readonly reachMs: number,
  ) {
    if (!Number.isInteger(intervalMs) || intervalMs < 1) throw new RangeError(`interval ${intervalMs}`)
    this.#taken = new Uint16Array(intervalMs)
  }

  /** The slot of a time (ms on the thread's monotonic clock). */
  slotOf(at: number): number {
    return ((Math.floor(at) % this.intervalMs) + this.intervalMs) % this.intervalMs
  }

  /** How many phases hold a slot. */
  taken(slot: number): number {
    return this.#taken[slot]
  }

  /**
   * Takes the least-taken slot within `reachMs` of `at`'s (the nearest of equals, the earlier of two
   * as near) and returns `at` moved onto it: its slot and the time, `at` plus a whole number of ms.
   */
  place(at: number): { at: number; slot: number } {
    const s0 = this.slotOf(at)
    let best = 0
    let bestTaken = this.#taken[s0]
    for (let d = 1; d <= this.reachMs && bestTaken > 0; d++) {
      for (const shift of [-d, d]) {
        const t = this.#taken[this.slotOf(at + shift)]
        if (t < bestTaken) {
          best = shift
          bestTaken = t
        }
      }
    }
    const slot = this.slotOf(at + best)
    this.#taken[slot]++
    return { at: at + best, slot }
  }

  /** Gives back a slot `place` took. */
  release(slot: number): void {
    if (this.#taken[slot] === 0) throw new RangeError(`slot ${slot} is not taken`)
    this.#taken[slot]--
  }
}

/**
 * Sends by the number of the thread's sends in their millisecond: `counts[k − 1]` sends went out in
 * a millisecond with k of them (the last for `counts.length` or more). A millisecond is counted once
 * the next send falls in a later one, or at `flush`.
 */
export class SendBursts {
  readonly counts: number[]
  #ms = Number.NaN
  #n = 0

  constructor(sizes = 4) {
    this.counts = new Array<number>(sizes).fill(0)
  }

  /** A send at `now` (ms, monotonic); how many of the thread's sends went out before it in its millisecond. */
  note(now: number): number {
    const ms = Math.floor(now)
    if (ms === this.#ms) return this.#n++
    this.flush()
    this.#ms = ms
    this.#n = 1
    return 0
  }

  /** Counts the millisecond in progress. */
  flush(): void {
    if (this.#n > 0) this.counts[Math.min(this.#n, this.counts.length) - 1] += this.#n
    this.#n = 0
    this.#ms = Number.NaN
  }

  /** The counts since the last take, which start again (the millisecond in progress is counted first). */
  take(): number[] {
    this.flush()
    const r = [...this.counts]
    this.counts.fill(0)
    return r
  }
}
