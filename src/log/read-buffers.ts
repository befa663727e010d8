/**
 * Buffers for the file engine's Fetch reads, lent out and given back.
 *
 * Every Fetch read used to get a fresh buffer: at half load about 0.5 GB a 4 s run (a consumer at
 * the log end reads a batch or two at once, one catching up 1 MiB per partition). V8 counts the
 * ArrayBuffer bytes allocated outside its heap towards starting the next full collection, so fresh
 * read buffers alone set off incremental marking and mark-compacts several times a second while
 * the heap itself hardly grew (BENCHMARKS.md, "Why full collections come so often at half load").
 *
 * A read whose caller promises to give its bytes back (`ReadOptions.loans`: the Fetch handler,
 * which gives them back once the answer's socket write has completed, since the answer references
 * them instead of copying them) takes a buffer from here. Sizes are powers of two from
 * {@link MIN_POOLED_BYTES} to {@link MAX_POOLED_BYTES}; a read takes the smallest that holds it.
 * The pool owns at most `limit` bytes, lent or free; to make room for a size it has no free buffer
 * of, it lets free buffers of other sizes go. A read it cannot serve within that (larger than the
 * largest size, or too much lent) gets a fresh buffer as before, whose loan only stops counting it
 * in {@link ReadBufferPool.outstandingBytes} (what the Fetch handler bounds).
 */

/** The smallest pooled buffer: smaller reads would come from Node's shared 8 KiB pool anyway. */
export const MIN_POOLED_BYTES = 4 * 1024
/** The largest pooled buffer: the Java consumer's default max.partition.fetch.bytes. */
export const MAX_POOLED_BYTES = 1024 * 1024
/** Bytes a pool owns at most by default (lent and free). */
export const READ_POOL_BYTES = 32 * 1024 * 1024

const MIN_SHIFT = 12
const MAX_SHIFT = 20

/** The size class of `len` bytes: log2 of the smallest pooled size that holds them. */
function shiftOf(len: number): number {
  return len <= MIN_POOLED_BYTES ? MIN_SHIFT : 32 - Math.clz32(len - 1)
}

export class ReadBufferPool {
  readonly #limit: number
  /** Free buffers by size class (index: shift - MIN_SHIFT), the last given back on top. */
  readonly #free: Buffer[][] = []
  #owned = 0
  #lent = 0
  /** Bytes of fresh buffers lent under a loan (not the pool's) and not yet given back. */
  #lentFresh = 0
  /** Bytes reads are about to lend (see {@link reserve}). */
  #reserved = 0
  #peak = 0

  constructor(limit = READ_POOL_BYTES) {
    this.#limit = limit
    for (let s = MIN_SHIFT; s <= MAX_SHIFT; s++) this.#free.push([])
  }

  /** Bytes of the pool's buffers that are lent out. */
  get lentBytes(): number {
    return this.#lent
  }

  /**
   * Bytes lent and not yet given back, the pool's and fresh ones alike (what the readers' answers
   * hold in memory), and the bytes reserved by reads under way.
   */
  get outstandingBytes(): number {
    return this.#lent + this.#lentFresh + this.#reserved
  }

  /**
   * Counts `len` bytes in {@link outstandingBytes} until the returned function is called (again
   * does nothing): a read reserves what it may lend before it starts, since it may lend only after
   * a wait, and reads planned meanwhile must see those bytes as taken.
   */
  reserve(len: number): () => void {
    this.#reserved += len
    let out = true
    return () => {
      if (!out) return
      out = false
      this.#reserved -= len
    }
  }

  /** The most bytes lent at once (the pool's and fresh ones) since the pool was made. */
  get peakLentBytes(): number {
    return this.#peak
  }

  /** Bytes of every buffer the pool holds, lent or free. */
  get ownedBytes(): number {
    return this.#owned
  }

  /**
   * `len` bytes to read into. When they come from the pool, the function that gives them back is
   * pushed onto `loans` (calling it again does nothing); the caller calls it once nothing reads the
   * bytes any more; a fresh buffer (too large, or the pool is full) gets a loan too, which only stops
   * counting it in {@link outstandingBytes}.
   */
  lend(len: number, loans: (() => void)[]): Buffer {
    if (len > MAX_POOLED_BYTES) return this.#fresh(len, loans)
    const shift = shiftOf(len)
    const size = 1 << shift
    const free = this.#free[shift - MIN_SHIFT]
    let buf = free.pop()
    if (buf === undefined) {
      if (!this.#makeRoom(size)) return this.#fresh(len, loans)
      // Its own ArrayBuffer (allocUnsafeSlow: never a slice of Node's shared pool).
      buf = Buffer.allocUnsafeSlow(size)
      this.#owned += size
    }
    this.#lent += size
    this.#notePeak()
    const lent = buf
    let out = true
    loans.push(() => {
      if (!out) return
      out = false
      this.#lent -= size
      free.push(lent)
    })
    return len === size ? buf : buf.subarray(0, len)
  }

  /** A buffer of its own, counted as outstanding until its loan is given back. */
  #fresh(len: number, loans: (() => void)[]): Buffer {
    this.#lentFresh += len
    this.#notePeak()
    let out = true
    loans.push(() => {
      if (!out) return
      out = false
      this.#lentFresh -= len
    })
    return Buffer.allocUnsafe(len)
  }

  #notePeak(): void {
    if (this.#lent + this.#lentFresh > this.#peak) this.#peak = this.#lent + this.#lentFresh
  }

  /** Lets free buffers of any size go until `size` more bytes fit the limit; false if they cannot. */
  #makeRoom(size: number): boolean {
    if (this.#owned + size <= this.#limit) return true
    if (this.#lent + size > this.#limit) return false
    // The largest first: the fewest buffers to let go.
    for (let i = this.#free.length - 1; i >= 0 && this.#owned + size > this.#limit; i--) {
      const free = this.#free[i]
      while (free.length > 0 && this.#owned + size > this.#limit) {
        free.pop()
        this.#owned -= 1 << (i + MIN_SHIFT)
      }
    }
    return this.#owned + size <= this.#limit
  }
}
