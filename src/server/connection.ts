import type { Socket } from 'node:net'

/**
 * One client connection: frames in, responses out, in request order.
 *
 * Requests are pipelined: every complete frame is dispatched as soon as it is read, so a slow
 * request does not hold up the decoding of the next. Responses are written strictly in request
 * order. At most `queued.max.requests` requests are in flight per connection; at that bound the
 * socket is paused until the oldest is answered. The socket is also paused while its write buffer
 * is full (a client that sends without reading), so memory per connection stays bounded.
 *
 * A frame the server refuses (oversized, unknown API key, unsupported version, unparseable) ends the
 * connection the way Kafka ends it: Kafka reads one request at a time per connection, so everything
 * sent before the bad frame has been answered when it closes. Here the earlier requests are answered
 * and written first, then the socket is closed; nothing after the bad frame is read.
 */

/** What the router makes of one frame. */
export type DispatchResult =
  /** `closeAfter`: write the response, then close (a refused SASL exchange, as Kafka answers it). */
  | { readonly kind: 'response'; readonly bytes: Uint8Array; readonly closeAfter?: string }
  | { readonly kind: 'pending'; readonly promise: Promise<DispatchResult> }
  /** The request is consumed and needs no answer (Kafka's produce acks=0 style); unused today. */
  | { readonly kind: 'none' }
  | { readonly kind: 'close'; readonly reason: string }

export interface FrameSource {
  /** Adds received bytes. */
  push(chunk: Uint8Array): void
  /**
   * The next complete frame (size prefix removed), or null when more bytes are needed. Throws when
   * the next size prefix is negative or above the maximum; the connection is then closed.
   */
  next(): Uint8Array | null
}

export interface ConnectionOptions {
  readonly socket: Socket
  readonly frames: FrameSource
  readonly dispatch: (frame: Uint8Array) => DispatchResult
  readonly maxInFlight: number
  readonly idleTimeoutMs: number
  /** Called once with the reason when the connection ends (client close included). */
  readonly onClose: (reason: string) => void
}

interface Slot {
  done: boolean
  bytes: Uint8Array | null
  close: string | null
}

export class Connection {
  readonly #socket: Socket
  readonly #frames: FrameSource
  readonly #dispatch: (frame: Uint8Array) => DispatchResult
  readonly #maxInFlight: number
  readonly #onClose: (reason: string) => void
  /** Requests read and not yet written, oldest first. */
  readonly #slots: Slot[] = []
  #head = 0
  /** Set when a refused frame or a shutdown means: answer what was read, then close. */
  #closeAfterDrain: string | null = null
  #closed = false
  #pausedForInFlight = false
  #pausedForWrite = false
  /** A flush of asynchronously answered responses is scheduled for the end of this turn. */
  #flushScheduled = false

  constructor(options: ConnectionOptions) {
    this.#socket = options.socket
    this.#frames = options.frames
    this.#dispatch = options.dispatch
    this.#maxInFlight = options.maxInFlight
    this.#onClose = options.onClose
    const socket = this.#socket
    socket.setNoDelay(true)
    if (options.idleTimeoutMs > 0) socket.setTimeout(options.idleTimeoutMs)
    socket.on('data', (chunk: Buffer) => this.#onData(chunk))
    socket.on('timeout', () => {
      // Kafka counts a connection idle when nothing was read or written for the period; a
      // request still being worked on keeps it open.
      if (this.inFlight === 0) this.#destroy('idle timeout (connections.max.idle.ms)')
    })
    socket.on('drain', () => {
      if (this.#pausedForWrite) {
        this.#pausedForWrite = false
        this.#readFrames()
        this.#updatePause()
      }
    })
    socket.on('error', (err) => this.#destroy(`socket error: ${err.message}`))
    socket.on('end', () => this.#finishOrClose('client closed its side'))
    socket.on('close', () => this.#destroy('closed'))
  }

  /** Requests read and not yet answered. */
  get inFlight(): number {
    return this.#slots.length - this.#head
  }

  get closed(): boolean {
    return this.#closed
  }

  /** Stops reading, answers what was read, then closes. Resolves when the socket is closed. */
  shutdown(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#closed) return resolve()
      this.#socket.once('close', () => resolve())
      this.#finishOrClose('server shutting down')
    })
  }

  #onData(chunk: Buffer): void {
    if (this.#closeAfterDrain !== null || this.#closed) return
    this.#frames.push(chunk)
    // Responses answered synchronously while this chunk is handled leave in one write.
    this.#socket.cork()
    this.#readFrames()
    this.#socket.uncork()
    this.#updatePause()
  }

  #readFrames(): void {
    while (this.#closeAfterDrain === null && !this.#closed && this.inFlight < this.#maxInFlight) {
      let frame: Uint8Array | null
      try {
        frame = this.#frames.next()
      } catch (err) {
        this.#finishOrClose((err as Error).message)
        return
      }
      if (frame === null) return
      this.#handle(frame)
    }
  }

  #handle(frame: Uint8Array): void {
    let result: DispatchResult
    try {
      result = this.#dispatch(frame)
    } catch (err) {
      // The router answers every expected failure; reaching here is a bug, and the connection
      // cannot know whether a response is owed, so it closes as Kafka does on an internal error.
      this.#finishOrClose(`unexpected error: ${(err as Error).message}`)
      return
    }
    if (result.kind === 'none') return
    if (result.kind === 'close') {
      this.#finishOrClose(result.reason)
      return
    }
    if (
      result.kind === 'response' &&
      result.closeAfter === undefined &&
      this.#head === this.#slots.length &&
      !this.#closed
    ) {
      // Answered at once with nothing before it waiting: written now (inside the read's cork).
      if (!this.#socket.write(result.bytes)) {
        this.#pausedForWrite = true
        this.#updatePause()
      }
      return
    }
    const slot: Slot = { done: false, bytes: null, close: null }
    this.#slots.push(slot)
    if (result.kind === 'response') {
      slot.done = true
      slot.bytes = result.bytes
      slot.close = result.closeAfter ?? null
      this.#flush()
      return
    }
    this.#settle(slot, result.promise)
  }

  #settle(slot: Slot, promise: Promise<DispatchResult>): void {
    promise.then(
      (r) => {
        if (r.kind === 'pending') return this.#settle(slot, r.promise)
        slot.done = true
        if (r.kind === 'response') {
          slot.bytes = r.bytes
          slot.close = r.closeAfter ?? null
        } else if (r.kind === 'close') slot.close = r.reason
        this.#flushSoon()
      },
      (err: unknown) => {
        slot.done = true
        slot.close = `unexpected error: ${(err as Error)?.message ?? String(err)}`
        this.#flushSoon()
      },
    )
  }

  /**
   * Flushes once the current turn of the event loop is over, so every response that completed in
   * it (asynchronous answers settle one promise at a time) leaves in one write instead of one
   * system call each. Order is unchanged: #flush only ever writes from the head of the queue.
   */
  #flushSoon(): void {
    if (this.#flushScheduled) return
    this.#flushScheduled = true
    setImmediate(() => {
      this.#flushScheduled = false
      this.#flush()
    })
  }

  /** Writes every answered response at the head of the queue, in order. */
  #flush(): void {
    if (this.#closed) return
    const before = this.inFlight
    const socket = this.#socket
    // Several answers ready at once are written together (one writev).
    const batch = this.#head + 1 < this.#slots.length && this.#slots[this.#head + 1].done
    if (batch) socket.cork()
    while (this.#head < this.#slots.length && this.#slots[this.#head].done) {
      const slot = this.#slots[this.#head++]
      if (slot.close !== null) {
        if (slot.bytes !== null) socket.write(slot.bytes)
        if (batch) socket.uncork()
        this.#compact()
        this.#finishOrClose(slot.close)
        return
      }
      if (slot.bytes !== null && !socket.write(slot.bytes)) this.#pausedForWrite = true
    }
    if (batch) socket.uncork()
    this.#compact()
    if (this.#closeAfterDrain !== null && this.inFlight === 0) {
      this.#socket.end()
      this.#socket.destroySoon()
      return
    }
    // Room freed: frames already buffered may now be handled.
    if (before >= this.#maxInFlight && this.inFlight < this.#maxInFlight) this.#readFrames()
    this.#updatePause()
  }

  #compact(): void {
    if (this.#head === this.#slots.length) {
      this.#slots.length = 0
      this.#head = 0
    } else if (this.#head > 1024) {
      this.#slots.splice(0, this.#head)
      this.#head = 0
    }
  }

  #updatePause(): void {
    if (this.#closed) return
    const wantPause = this.inFlight >= this.#maxInFlight || this.#pausedForWrite
    if (wantPause && !this.#pausedForInFlight) {
      this.#pausedForInFlight = true
      this.#socket.pause()
    } else if (!wantPause && this.#pausedForInFlight && this.#closeAfterDrain === null) {
      this.#pausedForInFlight = false
      this.#socket.resume()
    }
  }

  #finishOrClose(reason: string): void {
    if (this.#closed) return
    if (this.#closeAfterDrain === null) this.#closeAfterDrain = reason
    this.#socket.pause()
    if (this.inFlight === 0) {
      this.#socket.end()
      this.#socket.destroySoon()
    }
    // Otherwise #flush ends the socket once the earlier requests are written.
  }

  #destroy(reason: string): void {
    if (this.#closed) return
    this.#closed = true
    this.#socket.destroy()
    this.#onClose(this.#closeAfterDrain ?? reason)
  }
}

/** A frame size prefix the server refuses (negative, or above socket.request.max.bytes). */
export class InvalidFrameSizeError extends Error {
  override name = 'InvalidFrameSizeError'
}

/**
 * Splits a byte stream into size-prefixed frames. Chunks are kept as received; a frame that lies
 * inside one chunk is returned as a view of it (no copy), one that spans chunks is copied once.
 * At most one frame (bounded by `maxFrameSize`) plus one chunk is ever buffered.
 */
export class SizePrefixedFrames implements FrameSource {
  #maxFrameSize: number
  #chunks: Buffer[] = []
  /** Read position inside #chunks[0]. */
  #offset = 0
  #buffered = 0

  constructor(maxFrameSize: number) {
    this.#maxFrameSize = maxFrameSize
  }

  /** The bound may change between frames (a smaller one applies before SASL authentication). */
  set maxFrameSize(n: number) {
    this.#maxFrameSize = n
  }

  get buffered(): number {
    return this.#buffered
  }

  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return
    this.#chunks.push(
      Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
    )
    this.#buffered += chunk.byteLength
  }

  next(): Uint8Array | null {
    if (this.#buffered < 4) return null
    const size = this.#peekInt32()
    if (size < 0 || size > this.#maxFrameSize) {
      // Kafka's texts for the same refusal.
      throw new InvalidFrameSizeError(
        size < 0
          ? `Invalid receive (size = ${size})`
          : `Invalid receive (size = ${size} larger than ${this.#maxFrameSize})`,
      )
    }
    if (this.#buffered < 4 + size) return null
    this.#take(4)
    return this.#take(size)
  }

  #peekInt32(): number {
    const first = this.#chunks[0]
    if (first.length - this.#offset >= 4) return first.readInt32BE(this.#offset)
    const head = Buffer.allocUnsafe(4)
    let filled = 0
    let offset = this.#offset
    for (const c of this.#chunks) {
      const n = Math.min(4 - filled, c.length - offset)
      c.copy(head, filled, offset, offset + n)
      filled += n
      offset = 0
      if (filled === 4) break
    }
    return head.readInt32BE(0)
  }

  #take(n: number): Buffer {
    // A zero-length frame is legal framing (its header check then closes the connection).
    if (n === 0) return Buffer.alloc(0)
    this.#buffered -= n
    const first = this.#chunks[0]
    if (first.length - this.#offset >= n) {
      const out = first.subarray(this.#offset, this.#offset + n)
      this.#offset += n
      if (this.#offset === first.length) {
        this.#chunks.shift()
        this.#offset = 0
      }
      return out
    }
    const out = Buffer.allocUnsafe(n)
    let filled = 0
    while (filled < n) {
      const c = this.#chunks[0]
      const k = Math.min(n - filled, c.length - this.#offset)
      c.copy(out, filled, this.#offset, this.#offset + k)
      filled += k
      this.#offset += k
      if (this.#offset === c.length) {
        this.#chunks.shift()
        this.#offset = 0
      }
    }
    return out
  }
}
