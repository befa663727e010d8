/**
 * The per-group back-off of topology-description solicitation (kip1331-broker.md §1.2, §2): Kafka's
 * StreamsGroupTopologyDescriptionBackoff over ExponentialBackoff(30 s, ×2, 1 h, ±20 % jitter).
 * In memory only, per coordinator, empty after a restart. Time and randomness are injected.
 */

export const BACKOFF_INITIAL_MS = 30_000
export const BACKOFF_MAX_MS = 3_600_000
export const BACKOFF_MULTIPLIER = 2
export const BACKOFF_JITTER = 0.2

export interface BackoffSettings {
  readonly initialMs: number
  readonly maxMs: number
  readonly multiplier: number
  readonly jitter: number
}

export const KAFKA_BACKOFF: BackoffSettings = Object.freeze({
  initialMs: BACKOFF_INITIAL_MS,
  maxMs: BACKOFF_MAX_MS,
  multiplier: BACKOFF_MULTIPLIER,
  jitter: BACKOFF_JITTER,
})

interface Entry {
  readonly topologyEpoch: number
  readonly attempts: number
  readonly nextAttemptMs: number
}

/**
 * Kafka's ExponentialBackoff.backoff(attempts): min(max, trunc(U(1−j, 1+j) · initial ·
 * multiplier^min(attempts, expMax))), expMax = ln(max/initial)/ln(multiplier).
 */
export function backoffDelayMs(settings: BackoffSettings, attempts: number, random: () => number): number {
  const { initialMs, maxMs, multiplier, jitter } = settings
  if (initialMs >= maxMs) return maxMs
  const expMax = Math.log(maxMs / initialMs) / Math.log(multiplier)
  const term = initialMs * multiplier ** Math.min(attempts, expMax)
  const factor = jitter > 0 ? 1 - jitter + random() * 2 * jitter : 1
  return Math.min(maxMs, Math.trunc(factor * term))
}

export class TopologyDescriptionBackoff {
  readonly #entries = new Map<string, Entry>()
  readonly #settings: BackoffSettings
  readonly #now: () => number
  readonly #random: () => number

  constructor(options: {
    readonly settings?: BackoffSettings
    readonly now: () => number
    readonly random: () => number
  }) {
    this.#settings = options.settings ?? KAFKA_BACKOFF
    this.#now = options.now
    this.#random = options.random
  }

  #next(previous: Entry | undefined, topologyEpoch: number, nowMs: number): Entry {
    const attempts =
      previous !== undefined && previous.topologyEpoch === topologyEpoch ? previous.attempts + 1 : 0
    return {
      topologyEpoch,
      attempts,
      nextAttemptMs: nowMs + backoffDelayMs(this.#settings, attempts, this.#random),
    }
  }

  /**
   * Arms a window unless one is active for this epoch: returns false (and changes nothing) when an
   * entry with the same epoch has not expired yet, so at most one heartbeat per window is flagged.
   */
  armIfNotActive(groupId: string, topologyEpoch: number): boolean {
    const now = this.#now()
    const previous = this.#entries.get(groupId)
    if (previous !== undefined && previous.topologyEpoch === topologyEpoch && now < previous.nextAttemptMs) {
      return false
    }
    this.#entries.set(groupId, this.#next(previous, topologyEpoch, now))
    return true
  }

  /** After a transient failure: the next window, whether or not one is active; a newer epoch's entry is kept. */
  armOrExtend(groupId: string, topologyEpoch: number): void {
    const previous = this.#entries.get(groupId)
    if (previous !== undefined && previous.topologyEpoch > topologyEpoch) return
    this.#entries.set(groupId, this.#next(previous, topologyEpoch, this.#now()))
  }

  /** Removes the group's entry if it is for this epoch. */
  clear(groupId: string, topologyEpoch: number): void {
    if (this.#entries.get(groupId)?.topologyEpoch === topologyEpoch) this.#entries.delete(groupId)
  }

  /** Removes the group's entry whatever its epoch. */
  clearGroup(groupId: string): void {
    this.#entries.delete(groupId)
  }

  isActive(groupId: string, topologyEpoch: number): boolean {
    const e = this.#entries.get(groupId)
    return e !== undefined && e.topologyEpoch === topologyEpoch && this.#now() < e.nextAttemptMs
  }

  /** The entry of a group (tests, troubleshooting). */
  entry(groupId: string): Readonly<Entry> | undefined {
    return this.#entries.get(groupId)
  }

  get size(): number {
    return this.#entries.size
  }
}
