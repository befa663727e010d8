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
  /** Its array's size: how many values it takes before it grows. */
  get capacity(): number {
    return this.values.length
  }
  /** Empty again; its array is kept and overwritten. */
  clear(): this {
    this.length = 0
    return this
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
  /** Its ring's size: how many stamps it holds before it grows. */
  get capacity(): number {
    return this.ring.length
  }
  /** Empty again; its ring is kept and overwritten. */
  clear(): this {
    this.pushed = 0
    this.shifted = 0
    return this
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

/**
 * The arrays of one load, kept for the next: a load process runs every load of a benchmark one after
 * another (load.ts), and arrays of up to megabytes made afresh for each load (the latencies of a
 * closed loop start at 4 MiB) went straight to the old generation, whose growth then brought full
 * collections of the generator into later loads. A slot's array is kept while it is large enough.
 */
export class KeptArrays {
  readonly #samples: Samples[] = []
  readonly #stamps: Stamps[] = []

  /** Slot `slot`'s samples, emptied, with room for at least `capacity` values. */
  samples(slot: number, capacity: number): Samples {
    return kept(this.#samples, slot, capacity, (n) => new Samples(n))
  }

  /** Slot `slot`'s stamps, emptied, with room for at least `capacity` in flight. */
  stamps(slot: number, capacity: number): Stamps {
    return kept(this.#stamps, slot, capacity, (n) => new Stamps(n))
  }
}

/** `slots[slot]` emptied if it holds `capacity`, else a new one made by `make` and kept there. */
function kept<T extends { readonly capacity: number; clear(): T }>(
  slots: T[],
  slot: number,
  capacity: number,
  make: (capacity: number) => T,
): T {
  const old = slots[slot]
  if (old !== undefined && old.capacity >= capacity) return old.clear()
  const fresh = make(capacity)
  slots[slot] = fresh
  return fresh
}
