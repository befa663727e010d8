/**
 * At most `max` pieces of async work at a time, the others started in the order they came: what
 * bounds the partitions opening at once and the file removals on libuv's threadpool.
 */
export class ConcurrencyLimit {
  readonly #max: number
  #running = 0
  readonly #waiting: (() => void)[] = []
  /** Work queued or running. */
  readonly #pending = new Set<Promise<unknown>>()

  constructor(max: number) {
    this.#max = max
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    const done = this.#take().then(async () => {
      try {
        return await work()
      } finally {
        const next = this.#waiting.shift()
        if (next !== undefined) next()
        else this.#running--
      }
    })
    this.#pending.add(done)
    const forget = () => this.#pending.delete(done)
    done.then(forget, forget)
    return done
  }

  #take(): Promise<void> {
    if (this.#running < this.#max) {
      this.#running++
      return Promise.resolve()
    }
    return new Promise<void>((r) => this.#waiting.push(r))
  }

  /** Settles once every piece of work queued so far has ended (failed ones included). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending])
  }
}
