// The soak's watch on its clocks. The soak delimits its minutes, and every interval it measures, on
// the monotonic clock; the wall clock can step (set by whoever keeps this machine's time, or caught
// up after the host paused the whole virtual machine), and a minute measured by it would be as much
// shorter or longer. A thread of its own in the load process (tools/soak/clock-worker.ts) ticks
// every 10 ms and reads both clocks at each tick: a step of the wall clock against the monotonic one
// is a wall-clock step, and a tick more than 100 ms after the one before is a gap of the whole
// process (a thread that does nothing else only misses its ticks when no thread of the process runs:
// the host paused the machine, or the machine paused the process). The main thread adds what it
// saw to the minute's row, so that a minute hit by the host is labelled as such; it is reported,
// never left out of a verdict.

import { Worker } from 'node:worker_threads'

/** The tick thread's period (ms). */
export const CLOCK_TICK_MS = 10
/** Ticks further apart than this (ms, monotonic) are a gap of the whole process. */
export const CLOCK_GAP_MS = 100
/** A move of the wall clock against the monotonic one larger than this (ms) between two ticks is a step. */
export const CLOCK_STEP_MS = 10
/** Both clocks are read between two monotonic reads at most this far apart (ms), or not at all. */
export const CLOCK_READ_SPREAD_MS = 1

/** Something the clock watch saw between two ticks. */
export interface ClockEvent {
  readonly kind: 'wall-step' | 'gap'
  /** The wall clock (ms since the epoch) at the tick that saw it. */
  readonly wallAt: number
  /**
   * A wall-clock step: how far the wall clock moved against the monotonic clock (ms, positive
   * forward). A gap: the monotonic time between the two ticks (ms).
   */
  readonly ms: number
}

/** Both clocks read together, or the monotonic one alone when the thread was held between the reads. */
export interface ClockReading {
  readonly mono: number
  readonly wall?: number
}

/**
 * Reads the monotonic clock, the wall clock and the monotonic clock again; the wall clock is kept
 * when the two monotonic reads are at most `spreadMs` apart (a thread held between the reads would
 * read as a step of that length), at the middle of the two.
 */
export function readClocks(
  mono: () => number = () => performance.now(),
  wall: () => number = Date.now,
  spreadMs = CLOCK_READ_SPREAD_MS,
): ClockReading {
  const before = mono()
  const w = wall()
  const after = mono()
  const at = (before + after) / 2
  return after - before <= spreadMs ? { mono: at, wall: w } : { mono: at }
}

/** Ticks of both clocks in, steps of the wall clock and gaps of the monotonic one out. */
export class ClockWatch {
  readonly #gapMs: number
  readonly #stepMs: number
  #lastMono = Number.NaN
  #lastOffset = Number.NaN

  constructor(o: { gapMs?: number; stepMs?: number } = {}) {
    this.#gapMs = o.gapMs ?? CLOCK_GAP_MS
    this.#stepMs = o.stepMs ?? CLOCK_STEP_MS
  }

  /** One tick's reading; what it saw since the tick before (nothing at the first). */
  tick(r: ClockReading): ClockEvent[] {
    const events: ClockEvent[] = []
    const gap = r.mono - this.#lastMono
    const wallAt = r.wall ?? this.#lastOffset + r.mono
    if (gap > this.#gapMs) events.push({ kind: 'gap', wallAt, ms: gap })
    this.#lastMono = r.mono
    if (r.wall === undefined) return events
    const offset = r.wall - r.mono
    const step = offset - this.#lastOffset
    if (Math.abs(step) > this.#stepMs) events.push({ kind: 'wall-step', wallAt, ms: step })
    this.#lastOffset = offset
    return events
  }
}

/** What the clock watch saw in one minute of the rows. */
export interface ClockSummary {
  /** Wall-clock steps, and their sum (ms, positive forward). */
  readonly wallSteps: number
  readonly wallStepMs: number
  /** Gaps of the whole process, and the longest (ms; 0 without any). */
  readonly gaps: number
  readonly longestGapMs: number
  /** One line for each (at most a few, then how many more), for the row's events. */
  readonly notes: string[]
}

const NOTES = 4

const utc = (wall: number) => (Number.isFinite(wall) ? new Date(wall).toISOString().slice(11, 23) : '?')

/** A clock event as a row's event says it. */
export function describeClockEvent(e: ClockEvent): string {
  if (e.kind === 'wall-step')
    return `host: the wall clock stepped ${e.ms > 0 ? '+' : '−'}${Math.abs(e.ms).toFixed(0)} ms against the monotonic clock (${utc(e.wallAt)} UTC)`
  return `host: the whole load process stalled ${e.ms.toFixed(0)} ms (its tick thread's ${CLOCK_TICK_MS}-ms ticks, until ${utc(e.wallAt)} UTC)`
}

/** The clock events of a minute, added as they arrive and taken when the row closes. */
export class ClockMinute {
  #events: ClockEvent[] = []

  add(e: ClockEvent): void {
    this.#events.push(e)
  }

  /** The minute's summary; the next minute starts empty. */
  take(): ClockSummary {
    const events = this.#events
    this.#events = []
    const steps = events.filter((e) => e.kind === 'wall-step')
    const gaps = events.filter((e) => e.kind === 'gap')
    const notes = events.slice(0, NOTES).map(describeClockEvent)
    if (events.length > NOTES) notes.push(`${events.length - NOTES} more clock events`)
    return {
      wallSteps: steps.length,
      wallStepMs: steps.reduce((a, e) => a + e.ms, 0),
      gaps: gaps.length,
      longestGapMs: gaps.reduce((a, e) => Math.max(a, e.ms), 0),
      notes,
    }
  }
}

/**
 * Starts the tick thread (tools/soak/clock-worker.ts) in this process; `onEvent` gets each event
 * as the thread posts it. `stop()` ends the thread.
 */
export function startClockThread(onEvent: (e: ClockEvent) => void): { stop(): Promise<void> } {
  const worker = new Worker(new URL('./clock-worker.mjs', import.meta.url))
  worker.on('message', (e: ClockEvent) => onEvent(e))
  worker.unref()
  return {
    stop: async () => {
      await worker.terminate()
    },
  }
}
