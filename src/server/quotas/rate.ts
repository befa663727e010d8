/**
 * A rate over sampled windows, measured as Kafka's `Rate` over a `SampledStat` measures it: the
 * sum of the samples kept divided by the time they cover, where that time is at least
 * `samples − 1` whole windows (so a first burst is not measured over a few milliseconds), and a
 * sample whose last event is `samples` windows old no longer counts. A sample is complete when
 * its window has passed; the next event then starts a new one, reusing the oldest (there are at
 * most `samples + 1`).
 *
 * Throttle time (Kafka's QuotaUtils.throttleTime): when the rate after recording a value is above
 * the bound, the time the recorded total would take at the bound beyond the measured window,
 * `(rate − bound) / bound × window`, rounded.
 */
export interface RateConfig {
  /** `quota.window.num` */
  readonly samples: number
  /** `quota.window.size.seconds`, in ms. */
  readonly windowMs: number
}

interface Sample {
  value: number
  startMs: number
  lastEventMs: number
}

export class SampledRate {
  readonly #config: RateConfig
  readonly #samples: Sample[] = []
  #current = 0
  /** Last time the rate was recorded into; lets an idle rate be dropped. */
  lastRecordMs = 0

  constructor(config: RateConfig) {
    this.#config = config
  }

  /** Adds `value` at `nowMs` (negative values take it back, as Kafka's unrecord does). */
  record(value: number, nowMs: number): void {
    let sample = this.#currentSample(nowMs)
    if (nowMs - sample.startMs >= this.#config.windowMs) sample = this.#advance(nowMs)
    sample.value += value
    sample.lastEventMs = nowMs
    this.lastRecordMs = nowMs
  }

  /** The rate per second at `nowMs`. */
  measure(nowMs: number): number {
    this.#purge(nowMs)
    let total = 0
    for (const s of this.#samples) total += s.value
    return total / (this.windowSizeMs(nowMs) / 1000)
  }

  /** The time the kept samples cover, at least `samples − 1` whole windows and at least 1 ms. */
  windowSizeMs(nowMs: number): number {
    this.#purge(nowMs)
    const { samples, windowMs } = this.#config
    let elapsed = nowMs - this.#oldest(nowMs).startMs
    const full = Math.floor(elapsed / windowMs)
    if (full < samples - 1) elapsed += (samples - 1 - full) * windowMs
    return Math.max(elapsed, 1)
  }

  /**
   * Records `value` and returns the throttle time in ms when the rate is then above `bound`, else 0
   * (Kafka's sensor record with the quota checked, then QuotaUtils.throttleTime).
   */
  recordAndThrottleMs(value: number, bound: number, nowMs: number): number {
    this.record(value, nowMs)
    const rate = this.measure(nowMs)
    if (rate <= bound) return 0
    return Math.round(((rate - bound) / bound) * this.windowSizeMs(nowMs))
  }

  #currentSample(nowMs: number): Sample {
    if (this.#samples.length === 0) this.#samples.push({ value: 0, startMs: nowMs, lastEventMs: nowMs })
    return this.#samples[this.#current]
  }

  #advance(nowMs: number): Sample {
    const max = this.#config.samples + 1
    this.#current = (this.#current + 1) % max
    if (this.#current >= this.#samples.length) {
      const s = { value: 0, startMs: nowMs, lastEventMs: nowMs }
      this.#samples.push(s)
      return s
    }
    const s = this.#samples[this.#current]
    s.value = 0
    s.startMs = nowMs
    s.lastEventMs = nowMs
    return s
  }

  #oldest(nowMs: number): Sample {
    let oldest = this.#currentSample(nowMs)
    for (const s of this.#samples) if (s.startMs < oldest.startMs) oldest = s
    return oldest
  }

  #purge(nowMs: number): void {
    const expireAge = this.#config.samples * this.#config.windowMs
    for (const s of this.#samples) {
      if (nowMs - s.lastEventMs >= expireAge) {
        s.value = 0
        s.startMs = nowMs
        s.lastEventMs = nowMs
      }
    }
  }
}
