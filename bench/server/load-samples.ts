// The load generator's per-request bookkeeping (load-worker.ts), kept in typed arrays: the generator
// shares the machine with the server it measures, and its own allocations and copies showed in the
// tail it reports (BENCHMARKS.md, "OffsetCommit: the generator's bookkeeping in typed arrays").

/** A list of numbers in a Float64Array, doubled when full: no boxing, no copy until then. */
export class Samples {
  private values: Float64Array
  length = 0
  constructor(capacity: number) {
    this.values = new Float64Array(Math.max(16, capacity))
  }
  push(x: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2)
      grown.set(this.values)
      this.values = grown
    }
    this.values[this.length++] = x
  }
  /** The values so far sorted ascending, in place: a view that later pushes may detach. */
  sorted(): Float64Array {
    return this.values.subarray(0, this.length).sort()
  }
}

/**
 * One connection's stamps of its requests in flight, oldest first: its answers come back in request
 * order, so each answer takes the oldest stamp. A ring of a power-of-two size, doubled only if more
 * requests are in flight than it holds.
 */
export class Stamps {
  private ring: Float64Array
  private mask: number
  /** Stamps pushed and shifted so far: the ring's write and read positions. */
  private pushed = 0
  private shifted = 0
  constructor(capacity: number) {
    let size = 16
    while (size < capacity) size *= 2
    this.ring = new Float64Array(size)
    this.mask = size - 1
  }
  get inFlight(): number {
    return this.pushed - this.shifted
  }
  push(at: number): void {
    if (this.pushed - this.shifted === this.ring.length) this.grow()
    this.ring[this.pushed++ & this.mask] = at
  }
  /** The oldest stamp, left in place (NaN when there is none). */
  peek(): number {
    return this.pushed === this.shifted ? Number.NaN : this.ring[this.shifted & this.mask]
  }
  /** Drops the oldest stamp. */
  shift(): void {
    if (this.pushed > this.shifted) this.shifted++
  }
  private grow(): void {
    const grown = new Float64Array(this.ring.length * 2)
    const mask = grown.length - 1
    for (let i = this.shifted; i < this.pushed; i++) grown[i & mask] = this.ring[i & this.mask]
    this.ring = grown
    this.mask = mask
  }
}
