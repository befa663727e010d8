// The soak's long-lived bookkeeping in fixed-size or typed storage, so that what the load process
// keeps for thirty minutes neither grows its traced heap nor its garbage per minute: a latency
// histogram in place of an array of every sample, and per-producer counts by sequence number in
// place of maps keyed by "p0:123" strings (RELIABILITY.md, "Soak": "The load process's own delay").

/** Buckets per doubling: a bucket is 2^(1/64) wide, so a quantile is within 1.1 % of the sample's. */
const PER_DOUBLING = 64
/** Doublings above 1 µs: the last bucket starts at 2^27 µs (134 s) and takes everything longer. */
const DOUBLINGS = 28

/**
 * Latencies in ms, counted in fixed logarithmic buckets from 1 µs. `quantile(q)` picks the sample
 * `quantile()` over the sorted samples would (the one at rank ⌊n·q⌋), to within its bucket, and
 * returns the bucket's geometric middle. Recording allocates nothing.
 */
export class LatencyHistogram {
  readonly #counts = new Uint32Array(PER_DOUBLING * DOUBLINGS)
  #n = 0

  get count(): number {
    return this.#n
  }

  record(ms: number): void {
    const us = ms * 1000
    const i = us <= 1 ? 0 : Math.min(this.#counts.length - 1, Math.floor(Math.log2(us) * PER_DOUBLING))
    this.#counts[i]++
    this.#n++
  }

  quantile(q: number): number {
    if (this.#n === 0) return Number.NaN
    const rank = Math.min(this.#n - 1, Math.floor(this.#n * q))
    let seen = 0
    for (let i = 0; i < this.#counts.length; i++) {
      seen += this.#counts[i]
      if (seen > rank) return 2 ** ((i + 0.5) / PER_DOUBLING) / 1000
    }
    return Number.NaN
  }

  reset(): void {
    this.#counts.fill(0)
    this.#n = 0
  }
}

/**
 * How many times each record of each producer was seen (acked, consumed, found in the log),
 * by producer index and sequence number: one growable Uint16Array a producer (saturating at
 * 65,535), so half an hour of records is a few hundred KB that the garbage collector never traces.
 */
export class SeqCounts {
  readonly #byProducer: Uint16Array[] = []
  /** Records seen at least once. */
  size = 0

  add(producer: number, seq: number): void {
    let a = this.#byProducer[producer]
    if (a === undefined) {
      a = new Uint16Array(1024)
      this.#byProducer[producer] = a
    }
    if (seq >= a.length) {
      let length = a.length
      while (seq >= length) length *= 2
      const grown = new Uint16Array(length)
      grown.set(a)
      a = grown
      this.#byProducer[producer] = a
    }
    if (a[seq] === 0) this.size++
    if (a[seq] < 0xffff) a[seq]++
  }

  /** Adds a record by the soak's key and value (`p<producer>` and the sequence number); false if they are not the soak's. */
  addRecord(key: string | null, value: string | null): boolean {
    if (key === null || value === null || key[0] !== 'p') return false
    const producer = Number(key.slice(1))
    const seq = Number(value)
    if (!Number.isInteger(producer) || producer < 0 || !Number.isInteger(seq) || seq < 0) return false
    this.add(producer, seq)
    return true
  }

  get(producer: number, seq: number): number {
    const a = this.#byProducer[producer]
    return a === undefined || seq >= a.length ? 0 : a[seq]
  }

  /** The records seen here that `other` has not seen. */
  missingFrom(other: SeqCounts): number {
    let missing = 0
    this.#byProducer.forEach((a, producer) => {
      for (let seq = 0; seq < a.length; seq++) if (a[seq] > 0 && other.get(producer, seq) === 0) missing++
    })
    return missing
  }

  /** Copies beyond the first, over every record. */
  extra(): number {
    let extra = 0
    for (const a of this.#byProducer) {
      if (a === undefined) continue
      for (let seq = 0; seq < a.length; seq++) if (a[seq] > 1) extra += a[seq] - 1
    }
    return extra
  }
}
