// The latency load's consumer side, without per-answer work beyond the batch headers: a Fetch v12
// request encoded once and patched in place for each poll, and a reader that walks FetchResponse
// v12 answers of one partition as their bytes arrive. It copies only an answer's first bytes (up to
// its records) and the first bytes of each batch (the header and the stamp in the first record's
// key) and skips the rest where it lies, so a consumer reading 16.7 KB batches copies about
// 80 bytes of each instead of the whole answer, decodes no response object and makes no BigInt.
import { fetchRequest } from '../../test/helpers/data-plane.js'
import { requestFrame } from '../../test/server/wire-client.js'

/** A Fetch v12 request of one partition, encoded once; `frame(correlationId, offset)` patches it. */
export class FetchPoll {
  readonly #frame: Buffer
  readonly #offsetAt: number

  constructor(topic: string, partition: number, maxBytes: number, maxWaitMs: number, minBytes: number) {
    const probe = 0x0123_4567_89ab
    this.#frame = requestFrame(
      1,
      12,
      0,
      fetchRequest([{ topic, partition, offset: probe, maxBytes }], { maxWaitMs, minBytes }),
      'bench-consumer',
    )
    const bytes = Buffer.alloc(8)
    bytes.writeBigInt64BE(BigInt(probe))
    this.#offsetAt = this.#frame.indexOf(bytes)
    if (this.#offsetAt < 0 || this.#frame.indexOf(bytes, this.#offsetAt + 1) >= 0)
      throw new Error('FetchPoll: the fetch offset is not found once in the encoded request')
  }

  /**
   * The request with this correlation id and fetch offset. The same buffer every time: the caller
   * sends the next poll only after the answer to this one, when the kernel has long had its bytes.
   */
  frame(correlationId: number, offset: number): Buffer {
    const f = this.#frame
    // Size (4), ApiKey (2), ApiVersion (2), then CorrelationId.
    f.writeInt32BE(correlationId, 8)
    f.writeUInt32BE(Math.floor(offset / 2 ** 32), this.#offsetAt)
    f.writeUInt32BE(offset >>> 0, this.#offsetAt + 4)
    return f
  }
}

/** What the reader reports. */
export interface FetchAnswerEvents {
  /** An answer's size prefix was read (its first bytes arrived). */
  start(): void
  /** A whole batch's header was read: its base offset, last offset delta and stamp. */
  batch(baseOffset: number, lastOffsetDelta: number, stamp: number): void
  /** The answer was read to its end; `errorCode` is the first error in it, 0 when none. */
  end(errorCode: number): void
}

enum State {
  Size,
  Prefix,
  BatchHead,
  BatchSkip,
  Tail,
}

/** The most an answer's bytes before its records take (header, one topic, one partition). */
const PREFIX_MAX = 512

/**
 * Splits a stream of FetchResponse v12 frames of one topic and partition and walks the batches of
 * each (see the file's comment). `stampAt`: where, from a batch's start, its 8-byte stamp lies.
 * A frame of any other shape ends with an error code of -1.
 */
export class FetchAnswerReader {
  readonly #events: FetchAnswerEvents
  readonly #stampAt: number
  /** The bytes of a batch read before it is skipped: its header and the stamp. */
  readonly #headBytes: number
  #state = State.Size
  readonly #size = Buffer.alloc(4)
  #got = 0
  /** Bytes of the current frame not yet read. */
  #frameLeft = 0
  readonly #prefix = Buffer.alloc(PREFIX_MAX)
  #prefixWant = 0
  /** Bytes of records not yet read. */
  #recordsLeft = 0
  readonly #head: Buffer
  #headWant = 0
  #skipLeft = 0
  #error = 0

  constructor(stampAt: number, events: FetchAnswerEvents) {
    this.#stampAt = stampAt
    this.#events = events
    // Through LastOffsetDelta (at 23), and through the stamp.
    this.#headBytes = Math.max(27, stampAt + 8)
    this.#head = Buffer.alloc(this.#headBytes)
  }

  push(chunk: Buffer): void {
    let i = 0
    const n = chunk.length
    while (i < n) {
      switch (this.#state) {
        case State.Size: {
          const k = Math.min(4 - this.#got, n - i)
          chunk.copy(this.#size, this.#got, i, i + k)
          this.#got += k
          i += k
          if (this.#got < 4) break
          this.#frameLeft = this.#size.readInt32BE(0)
          this.#got = 0
          this.#error = 0
          this.#prefixWant = Math.min(PREFIX_MAX, this.#frameLeft)
          this.#state = State.Prefix
          this.#events.start()
          if (this.#frameLeft === 0) this.#endFrame()
          break
        }
        case State.Prefix: {
          i += this.#gather(chunk, i, this.#prefix, this.#prefixWant)
          if (this.#got === this.#prefixWant) this.#afterPrefix()
          break
        }
        case State.BatchHead: {
          const k = this.#gather(chunk, i, this.#head, this.#headWant)
          i += k
          this.#recordsLeft -= k
          if (this.#got === this.#headWant) this.#afterHead()
          break
        }
        case State.BatchSkip:
        case State.Tail: {
          const k = Math.min(this.#skipLeft, n - i)
          i += k
          this.#skipLeft -= k
          this.#frameLeft -= k
          if (this.#state === State.BatchSkip) this.#recordsLeft -= k
          if (this.#skipLeft > 0) break
          if (this.#state === State.BatchSkip) this.#nextBatch()
          else this.#endFrame()
          break
        }
      }
    }
  }

  /** Copies bytes of the frame from `chunk` at `i` into `into`, up to `want` there; returns how many. */
  #gather(chunk: Buffer, i: number, into: Buffer, want: number): number {
    const k = Math.min(want - this.#got, chunk.length - i)
    chunk.copy(into, this.#got, i, i + k)
    this.#got += k
    this.#frameLeft -= k
    return k
  }

  /** The answer's first bytes are in #prefix: find its records and walk the bytes after them. */
  #afterPrefix(): void {
    const p = this.#prefix
    const got = this.#got
    const at = { pos: 0 }
    const ok = (need: number) => at.pos + need <= got
    const uvarint = (): number => {
      let v = 0
      for (let shift = 0; shift < 35; shift += 7) {
        if (!ok(1)) return -1
        const b = p[at.pos++]
        v += (b & 0x7f) * 2 ** shift
        if ((b & 0x80) === 0) return v
      }
      return -1
    }
    const shape = (): number => {
      // Response header v1: CorrelationId, tagged fields.
      if (!ok(4)) return -1
      at.pos += 4
      if (!skipTags()) return -1
      // ThrottleTimeMs, ErrorCode, SessionId.
      if (!ok(10)) return -1
      const top = p.readInt16BE(at.pos + 4)
      at.pos += 10
      if (top !== 0) return top
      if (uvarint() !== 2) return -1
      const name = uvarint()
      if (name < 1 || !ok(name - 1)) return -1
      at.pos += name - 1
      if (uvarint() !== 2) return -1
      // PartitionIndex, ErrorCode, HighWatermark, LastStableOffset, LogStartOffset.
      if (!ok(30)) return -1
      const code = p.readInt16BE(at.pos + 4)
      at.pos += 30
      if (code !== 0) return code
      // AbortedTransactions: null for read_uncommitted.
      if (uvarint() !== 0) return -1
      // PreferredReadReplica, then Records (compact nullable).
      if (!ok(4)) return -1
      at.pos += 4
      const records = uvarint()
      if (records < 0) return -1
      this.#recordsLeft = Math.max(0, records - 1)
      return 0
    }
    const skipTags = (): boolean => {
      const tags = uvarint()
      if (tags < 0) return false
      for (let t = 0; t < tags; t++) {
        if (uvarint() < 0) return false
        const size = uvarint()
        if (size < 0 || !ok(size)) return false
        at.pos += size
      }
      return true
    }
    const code = shape()
    if (code !== 0) {
      this.#error = code
      this.#recordsLeft = 0
      this.#skipTail(this.#frameLeft)
      return
    }
    // What was read past the records' length is records (and perhaps the tail after them).
    // Feed those bytes back through the walk, as if they came now.
    const extra = got - at.pos
    this.#frameLeft += extra
    this.#nextBatch()
    if (extra > 0) this.push(Buffer.from(p.subarray(at.pos, got)))
  }

  /** The next batch's header is read next, or the frame's tail when the records are done. */
  #nextBatch(): void {
    this.#got = 0
    if (this.#recordsLeft < 12) {
      // Done (a whole number of batches), or a cut batch at the end: skipped with the tail.
      this.#skipTail(this.#frameLeft)
      return
    }
    this.#headWant = 12
    this.#state = State.BatchHead
  }

  #afterHead(): void {
    const h = this.#head
    const whole = 12 + h.readInt32BE(8)
    if (this.#headWant === 12) {
      // The batch's length is known: read the rest of its head, as much of it as the batch has.
      const want = Math.min(this.#headBytes, whole, 12 + this.#recordsLeft)
      if (want > 12) {
        this.#headWant = want
        return
      }
    }
    const got = this.#got
    if (got >= this.#stampAt + 8 && whole - got <= this.#recordsLeft) {
      const base = h.readUInt32BE(0) * 2 ** 32 + h.readUInt32BE(4)
      this.#events.batch(base, h.readInt32BE(23), h.readDoubleLE(this.#stampAt))
    }
    this.#skipLeft = Math.min(whole - got, this.#recordsLeft)
    this.#state = State.BatchSkip
    if (this.#skipLeft === 0) this.#nextBatch()
  }

  #skipTail(n: number): void {
    this.#skipLeft = n
    this.#state = State.Tail
    if (n === 0) this.#endFrame()
  }

  #endFrame(): void {
    this.#state = State.Size
    this.#got = 0
    this.#events.end(this.#error)
  }
}
