/**
 * Exponential back-off with jitter, the shape Kafka's clients use: `initial · base^attempts`, scaled
 * by a random factor in [1 − jitter, 1 + jitter], capped at `max`.
 */
export interface ExponentialBackoffOptions {
  readonly initialMs: number
  readonly maxMs: number
  readonly multiplier?: number
  readonly jitter?: number
  /** random source in [0, 1); injectable for tests */
  readonly random?: () => number
}

export class ExponentialBackoff {
  readonly #initial: number
  readonly #max: number
  readonly #multiplier: number
  readonly #jitter: number
  readonly #random: () => number
  readonly #expMax: number

  constructor(opts: ExponentialBackoffOptions) {
    this.#initial = Math.max(0, opts.initialMs)
    this.#max = Math.max(this.#initial, opts.maxMs)
    this.#multiplier = opts.multiplier ?? 2
    this.#jitter = opts.jitter ?? 0.2
    this.#random = opts.random ?? Math.random
    this.#expMax =
      this.#max > this.#initial && this.#initial > 0
        ? Math.log(this.#max / this.#initial) / Math.log(Math.max(this.#multiplier, 1.0000001))
        : 0
  }

  /** The wait after `attempts` failed attempts (0 → about `initial`). */
  backoff(attempts: number): number {
    if (this.#expMax === 0) return this.#initial
    const exp = Math.min(attempts, this.#expMax)
    const term = this.#initial * this.#multiplier ** exp
    const factor = this.#jitter < Number.MIN_VALUE ? 1 : 1 - this.#jitter + this.#random() * 2 * this.#jitter
    return Math.min(Math.floor(term * factor), this.#max)
  }
}

/**
 * Send bookkeeping for one kind of request, after Kafka's `RequestState`: at most one request in
 * flight, and a back-off measured from the last response.
 */
export class RequestState {
  readonly #backoff: ExponentialBackoff
  #inFlight = false
  #lastReceivedMs = -1
  #backoffMs = 0
  #attempts = 0

  constructor(backoff: ExponentialBackoff) {
    this.#backoff = backoff
  }

  get inFlight(): boolean {
    return this.#inFlight
  }

  remainingBackoffMs(nowMs: number): number {
    return Math.max(0, this.#backoffMs - (nowMs - this.#lastReceivedMs))
  }

  canSendRequest(nowMs: number): boolean {
    return !this.#inFlight && this.remainingBackoffMs(nowMs) <= 0
  }

  onSendAttempt(_nowMs: number): void {
    this.#inFlight = true
  }

  /** A completed attempt: the back-off resets to the minimum. */
  onSuccessfulAttempt(nowMs: number): void {
    this.#inFlight = false
    this.#lastReceivedMs = nowMs
    this.#attempts = 0
    this.#backoffMs = this.#backoff.backoff(0)
  }

  /** A failed attempt: the back-off grows. */
  onFailedAttempt(nowMs: number): void {
    this.#inFlight = false
    this.#lastReceivedMs = nowMs
    this.#backoffMs = this.#backoff.backoff(this.#attempts)
    this.#attempts++
  }
}
