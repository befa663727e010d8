// The soak's watch on its clocks. The soak delimits its minutes, and every interval it measures, on
// the monotonic clock; the wall clock can step (set by whoever keeps this machine's time, or caught
// up after the host paused the whole virtual machine), and a minute measured by it would be as much
// shorter or longer. A thread of its own in the load process (tools/soak/clock-worker.ts) ticks
// every 10 ms and reads both clocks at each tick: a step of the wall clock against the monotonic one
// is a wall-clock step, and a tick more than 100 ms after the one before is a gap. A thread that does
// nothing else misses its ticks only when it gets no core: either it was runnable and waited for
// one (its own wait in /proc/thread-self/schedstat covers at least half of the gap: the guest's own
// contention, other threads holding both cores), or nothing in the guest ran it although it was due
// (the host held the virtual machine, or the whole process was stopped): a stall of the whole
// process. The main thread adds what it saw to the minute's row, so that a minute hit by the host
// is labelled as such; it is reported, never left out of a verdict.

import { Worker } from 'node:worker_threads'
import { threadSchedstat } from './measures.js'

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
  /** `gap`: a stall of the whole process; `wait`: a gap in which the tick thread waited for a core. */
  readonly kind: 'wall-step' | 'gap' | 'wait'
  /** The wall clock (ms since the epoch) at the tick that saw it. */
  readonly wallAt: number
  /**
   * A wall-clock step: how far the wall clock moved against the monotonic clock (ms, positive
   * forward). A gap or a wait: the monotonic time between the two ticks (ms).
   */
  readonly ms: number
  /** A gap or a wait: how long of it the tick thread was runnable and waited for a core (ms; NaN unknown). */
  readonly waitedMs?: number
}

/** Both clocks read together, or the monotonic one alone when the thread was held between the reads. */
export interface ClockReading {
  readonly mono: number
  readonly wall?: number
  /** The reading thread's time runnable but waiting for a core since it started (ms), where known. */
  readonly waitMs?: number
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
  waitMs: () => number | undefined = () => threadSchedstat()?.waitMs,
): ClockReading {
  const waited = waitMs()
  const before = mono()
  const w = wall()
  const after = mono()
  const at = (before + after) / 2
  return after - before <= spreadMs ? { mono: at, wall: w, waitMs: waited } : { mono: at, waitMs: waited }
}

/** A clock watch's thresholds: the soak's by default. */
export interface ClockWatchOptions {
  /** Ticks further apart than this (ms, monotonic) are a gap or a wait. */
  readonly gapMs?: number
  /** A move of the wall clock against the monotonic one larger than this (ms) is a step. */
  readonly stepMs?: number
  /**
   * The part of a gap that is the tick's own period (ms; 0 by default): a gap is a wait when the
   * tick thread waited for a core for at least half of the time past it.
   */
  readonly periodMs?: number
}

/** Ticks of both clocks in, steps of the wall clock and gaps of the monotonic one out. */
export class ClockWatch {
  readonly #gapMs: number
  readonly #stepMs: number
  readonly #periodMs: number
  #lastMono = Number.NaN
  #lastOffset = Number.NaN
  #lastWait = Number.NaN

  constructor(o: ClockWatchOptions = {}) {
    this.#gapMs = o.gapMs ?? CLOCK_GAP_MS
    this.#stepMs = o.stepMs ?? CLOCK_STEP_MS
    this.#periodMs = o.periodMs ?? 0
  }

  /** One tick's reading; what it saw since the tick before (nothing at the first). */
  tick(r: ClockReading): ClockEvent[] {
    const events: ClockEvent[] = []
    const gap = r.mono - this.#lastMono
    const wallAt = r.wall ?? this.#lastOffset + r.mono
    const waitedMs = (r.waitMs ?? Number.NaN) - this.#lastWait
    if (gap > this.#gapMs)
      events.push({
        kind: waitedMs >= (gap - this.#periodMs) / 2 ? 'wait' : 'gap',
        wallAt,
        ms: gap,
        waitedMs,
      })
    this.#lastMono = r.mono
    this.#lastWait = r.waitMs ?? Number.NaN
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
  /** Gaps in which the tick thread waited for a core (the guest's own contention), and the longest. */
  readonly waits: number
  readonly longestWaitMs: number
  /** One line for each (at most a few, then how many more), for the row's events. */
  readonly notes: string[]
}

const NOTES = 4

const utc = (wall: number) => (Number.isFinite(wall) ? new Date(wall).toISOString().slice(11, 23) : '?')

/** A clock event as a row's event says it. */
export function describeClockEvent(e: ClockEvent): string {
  if (e.kind === 'wall-step')
    return `host: the wall clock stepped ${e.ms > 0 ? '+' : '−'}${Math.abs(e.ms).toFixed(0)} ms against the monotonic clock (${utc(e.wallAt)} UTC)`
  if (e.kind === 'wait')
    return `the load process's tick thread waited ${(e.waitedMs ?? Number.NaN).toFixed(0)} ms of ${e.ms.toFixed(0)} for a core (${utc(e.wallAt)} UTC)`
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
    const waits = events.filter((e) => e.kind === 'wait')
    // The host's events first: they are the ones a row must name.
    const named = [...steps, ...gaps].sort((a, b) => a.wallAt - b.wallAt)
    const notes = named.slice(0, NOTES).map(describeClockEvent)
    if (named.length > NOTES) notes.push(`${named.length - NOTES} more of the host's clock events`)
    return {
      wallSteps: steps.length,
      wallStepMs: steps.reduce((a, e) => a + e.ms, 0),
      gaps: gaps.length,
      longestGapMs: gaps.reduce((a, e) => Math.max(a, e.ms), 0),
      waits: waits.length,
      longestWaitMs: waits.reduce((a, e) => Math.max(a, e.ms), 0),
      notes,
    }
  }
}

/**
 * The tick loop: reads the clocks every `tickMs` (CLOCK_TICK_MS by default) on this thread's event
 * loop, which must do nothing else, and hands each event to `post` with the reading that saw it.
 * `mono` is the monotonic clock it reads (this process's `performance.now()` by default;
 * `process.hrtime` for a clock that other processes share). `ticks()` counts the readings so far.
 */
export function tickClocks(
  post: (e: ClockEvent, at: ClockReading) => void,
  o: ClockWatchOptions & { readonly tickMs?: number; readonly mono?: () => number } = {},
): { ticks(): number; stop(): void } {
  const watch = new ClockWatch(o)
  const read = () => (o.mono === undefined ? readClocks() : readClocks(o.mono))
  let ticks = 1
  watch.tick(read())
  const timer = setInterval(() => {
    ticks++
    const r = read()
    for (const e of watch.tick(r)) post(e, r)
  }, o.tickMs ?? CLOCK_TICK_MS)
  return {
    ticks: () => ticks,
    stop: () => clearInterval(timer),
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
