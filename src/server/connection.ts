import type { Socket } from 'node:net'
import { FrameError } from '../protocol/frames.js'
import { Writer } from '../protocol/writer.js'

/**
 * One client connection: frames in, responses out, answered in the order they were sent.
 *
 * As Kafka mutes a channel while a request of it is being handled, a connection handles its
 * requests one after the other: the next frame is read only once the previous request has been
 * answered and its response handed to the socket. A client that pipelines requests therefore
 * holds the memory of one request at a time, whatever it sends; the socket is paused while a
 * request is in flight, from the first bytes that arrive behind it (one read, kept), so the rest
 * waits in the kernel's buffers and, beyond them, in the client's. The socket is also paused while
 * its write buffer is full (a client that sends without reading).
 *
 * The one exception is a run of *pipelined* requests (the `pipelined` option: OffsetCommit and
 * OffsetFetch, each one operation in the queue of its group's coordinator shard, which keeps them
 * in order; Produce without a transactional id, whose appends take their offsets in its dispatch):
 * while only such requests are in flight, the next frame, if it is one too, is dispatched without
 * waiting, up to {@link PIPELINED_PER_CONNECTION} in flight. Their answers are still written in the
 * order the requests came; any other frame waits until every answer before it is written. A client
 * committing offsets or producing back to back thus shares store writes (a coordinator batch, a
 * segment write) and socket writes across its requests instead of paying a round trip through the
 * event loop for each.
 *
 * Server-wide, at most `queued.max.requests` requests are worked on at once (the {@link RequestGate}
 * every connection of a server shares, as Kafka's request queue is shared by its network threads):
 * at the bound a connection holds its next frame until another request is answered or parks.
 *
 * Frames already buffered are handled in bounded runs (at most {@link FRAMES_PER_TURN} frames and
 * about {@link MS_PER_TURN} of work per turn of the event loop, over all the socket reads of that
 * turn), so one connection's pipelined flood cannot hold the loop against the others.
 *
 * A frame the server refuses (oversized, unknown API key, unsupported version, unparseable) ends the
 * connection the way Kafka ends it: everything sent before the bad frame has been answered when it
 * closes, and nothing after it is read.
 */

/** What the router makes of one frame. */
export type DispatchResult =
  /** `closeAfter`: write the response, then close (a refused SASL exchange, as Kafka answers it). */
  | {
      readonly kind: 'response'
      /** The answer frame, or its chunks in order (a Fetch answer's records are the log's own buffers). */
      readonly bytes: Uint8Array | readonly Uint8Array[]
      readonly closeAfter?: string
      /** A client quota's throttle: the connection reads nothing more for this long (Kafka mutes it). */
      readonly throttleMs?: number
      /**
       * Gives back buffers the answer references (a Fetch answer's records): called once its socket
       * write has completed, or when the answer is dropped unwritten (the connection closed). Until
       * then the bytes may still be on their way to the kernel.
       */
      readonly release?: () => void
    }
  | {
      readonly kind: 'pending'
      readonly promise: Promise<DispatchResult>
      /**
       * True when the request reads nothing of its frame any more (its dispatch copied what it
       * needs): the frame's bytes may be reused for the next frame. Otherwise they stay its own.
       */
      readonly frameFree?: boolean
      /**
       * The same answer, to be encoded by the connection when its turn to be written comes (see
       * {@link LaterAnswer}); the connection then leaves `promise` alone.
       */
      readonly later?: LaterAnswer
    }
  /** The answer is encoded into the {@link AnswerOutput} given with the frame (committed there). */
  | { readonly kind: 'written' }
  /** The request is consumed and needs no answer (Kafka's produce acks=0 style). */
  | { readonly kind: 'none'; readonly throttleMs?: number }
  | { readonly kind: 'close'; readonly reason: string }

/** An answer as the connection writes it. */
export type Settled = Exclude<DispatchResult, { kind: 'pending' }>

/**
 * A request answered later whose answer the connection encodes itself once the answer's turn to be
 * written has come (the router's, for every handler that returns a promise): in place, after the
 * answers before it, so the answers that settle together (the Produce requests one segment write
 * releases, the commits of one coordinator batch) leave a connection in one buffer and one socket
 * write, with no promise, buffer or result of their own.
 */
export interface LaterAnswer {
  /** Settles with what the handler answered (not yet encoded). */
  readonly value: Promise<unknown>
  /**
   * The answer to `value`: written into `out` when given and it fits there ({@link WRITTEN}), else
   * as `promise` would have resolved. Called once, with the answers before it written.
   */
  answer(value: unknown, out: AnswerOutput | undefined): Settled
  /** The answer to a `value` that rejected. */
  fail(err: unknown): Settled
  /** The answer to a settled `value` will never be written (the connection closed): give back what it holds. */
  drop(): void
}

/** What a dispatch returns when it wrote its answer into the connection's {@link AnswerOutput}. */
export const WRITTEN: Settled = Object.freeze({ kind: 'written' })

/**
 * Where an answer ready at once may be encoded in place: the connection's answer buffer, from which
 * the answers of one run of frames leave in one socket write. The connection offers it with a frame
 * only when nothing is owed before that frame's answer, so an answer written there is in order. A
 * dispatch uses it before it returns or not at all: `begin`, the answer's bytes, then `commit` (the
 * answer is the connection's; the dispatch returns {@link WRITTEN}) or `abort` (nothing was written).
 */
export interface AnswerOutput {
  /** A writer positioned for one answer (size prefix included), or null when none fits now. */
  begin(): Writer | null
  commit(): void
  abort(): void
}

export interface FrameSource {
  /** Bytes received and not yet returned as frames (unknown when absent: counted as some). */
  readonly buffered?: number
  /** Adds received bytes. */
  push(chunk: Uint8Array): void
  /**
   * The next complete frame (size prefix removed), or null when more bytes are needed. Throws when
   * the next size prefix is negative or above the maximum; the connection is then closed. A frame's
   * bytes may be reused by the next call that returns a frame, unless `keep` was called first.
   */
  next(): Uint8Array | null
  /** The frame `next` returned last is read after the next call of `next`: its bytes stay its own. */
  keep(): void
  /**
   * The bytes pushed since the last call are about to be overwritten (read into a buffer the
   * socket reuses): the source copies what it still needs of them. A source that is given only
   * chunks of its own need not have it.
   */
  release?(): void
}

/** Pipelined requests one connection may have in flight at once (see {@link Connection}). */
export const PIPELINED_PER_CONNECTION = 16

/**
 * A request dispatched and not yet answered; answers are written in dispatch order. It is ready to
 * be written once it has a `result`, or a `later` answer whose value came (encoded when written).
 */
interface Slot {
  result: Settled | null
  later: LaterAnswer | null
  value: unknown
  permit: Permit | null
  readonly pipelined: boolean
}

/** Frames handled back to back before a connection lets the event loop serve others. */
export const FRAMES_PER_TURN = 16
/** Time after which a run of frames stops at the next frame and lets the event loop serve others. */
export const MS_PER_TURN = 1

/**
 * A request's claim on the gate, from its dispatch until its answer is written. Permits taken in
 * the same interval of the parked-request check share one object, so taking and returning one
 * costs two counters.
 */
export interface Permit {
  /** Permits of this interval still held. */
  held: number
  /** Set once these permits no longer count (their requests are parked). */
  parked: boolean
}

/**
 * The server-wide bound on requests being worked on (`queued.max.requests`), as Kafka's request
 * queue bounds the requests its handler threads have not finished. A connection takes a permit
 * before it dispatches a frame and returns it (once) when the answer is written; without a permit
 * it waits, in arrival order, for one to be returned.
 *
 * A request that waits on purpose (a JoinGroup parked until its rebalance completes, a long poll)
 * is, in Kafka, no longer in the queue: it sits in a purgatory, bounded by the connections (one
 * per connection here). So while connections wait for a permit, a check every
 * {@link PARKED_AFTER_MS}/2 lets the permits held since before the previous check stop counting:
 * parked requests never starve the others. The check runs only while someone waits.
 */
export class RequestGate {
  readonly #max: number
  #inFlight = 0
  /** Permits taken since the last check. */
  #current: Permit = { held: 0, parked: false }
  /** Permits taken in the interval before it (parked at the next check). */
  #previous: Permit | null = null
  readonly #waiting: ((permit: Permit) => void)[] = []
  #head = 0
  #sweep: NodeJS.Timeout | null = null

  constructor(max: number) {
    this.#max = Math.max(1, max)
  }

  /** Permits that count. */
  get inFlight(): number {
    return this.#inFlight
  }

  tryAcquire(): Permit | null {
    if (this.#inFlight >= this.#max || this.#head < this.#waiting.length) return null
    return this.#grant()
  }

  /** Calls `ready` with a permit once one is free. */
  wait(ready: (permit: Permit) => void): void {
    this.#waiting.push(ready)
    if (this.#sweep === null) {
      this.#sweep = setInterval(() => this.#check(), PARKED_AFTER_MS / 2)
      this.#sweep.unref()
    }
  }

  /** Returns a permit; the caller returns each permit it took once. */
  release(permit: Permit): void {
    if (permit.parked) return
    permit.held--
    this.#inFlight--
    this.#handOut()
  }

  #grant(): Permit {
    this.#inFlight++
    this.#current.held++
    return this.#current
  }

  #handOut(): void {
    while (this.#inFlight < this.#max && this.#head < this.#waiting.length) {
      const next = this.#waiting[this.#head++]
      if (this.#head === this.#waiting.length) {
        this.#waiting.length = 0
        this.#head = 0
      }
      next(this.#grant())
    }
    if (this.#head === this.#waiting.length && this.#sweep !== null) {
      clearInterval(this.#sweep)
      this.#sweep = null
      this.#previous = null
    }
  }

  /** Permits held since before the previous check stop counting (their requests wait on purpose). */
  #check(): void {
    const old = this.#previous
    if (old !== null && old.held > 0) {
      old.parked = true
      this.#inFlight -= old.held
      old.held = 0
    }
    this.#previous = this.#current
    this.#current = { held: 0, parked: false }
    this.#handOut()
  }
}

/** How long a request may hold a permit before, with others waiting, it counts as parked. */
export const PARKED_AFTER_MS = 200

export interface ConnectionOptions {
  readonly socket: Socket
  readonly frames: FrameSource
  /** `out`: where an answer ready at once may be written (see {@link AnswerOutput}). */
  readonly dispatch: (frame: Uint8Array, out?: AnswerOutput) => DispatchResult
  /** Shared by every connection of the server; a connection of its own when absent. */
  readonly gate?: RequestGate
  readonly idleTimeoutMs: number
  /**
   * Called once with the reason when the connection ends (client close included); `invalidFrame`
   * when it ended because a frame's size prefix was invalid (Kafka's InvalidReceiveException).
   */
  readonly onClose: (reason: string, invalidFrame: boolean) => void
  /** Whether a frame may be pipelined (see {@link Connection}); default: none. */
  readonly pipelined?: (frame: Uint8Array) => boolean
  /**
   * `'onread'`: the socket reads into a buffer it reuses (net.Socket's `onread`, see
   * read-buffer.ts), whose callback hands the bytes to {@link Connection.receive}; `frames` must
   * then copy what it keeps (`release`). Default `'data'`: the socket's `'data'` events.
   */
  readonly reads?: 'data' | 'onread'
}

export class Connection {
  readonly #socket: Socket
  readonly #frames: FrameSource
  readonly #dispatch: (frame: Uint8Array, out?: AnswerOutput) => DispatchResult
  /** Answers encoded in place; made with the first. */
  #answers: AnswerBuffer | null = null
  readonly #gate: RequestGate
  readonly #onClose: (reason: string, invalidFrame: boolean) => void
  /** Whether the close came from a frame's invalid size prefix. */
  #invalidFrame = false
  readonly #pipelined: (frame: Uint8Array) => boolean
  /** Requests dispatched and not yet answered, oldest first. */
  readonly #slots: Slot[] = []
  /** A frame read while pipelined requests were in flight that may not join them. */
  #deferred: Uint8Array | null = null
  /** The socket is corked until the current run of the microtask queue ends. */
  #writesHeld = false
  /** A frame read while the gate had no permit; dispatched when one is granted. */
  #held: Uint8Array | null = null
  /** The permit of the request in flight. */
  #permit: Permit | null = null
  /** Set when a refused frame or a shutdown means: answer what was read, then close. */
  #closeAfterDrain: string | null = null
  #closed = false
  #paused = false
  #pausedForWrite = false
  #pumpScheduled = false
  /** Muted for a client quota's throttle time, after the answer that carried it was written. */
  #throttled = false
  /** A turn of the event loop in which this connection handled frames is under way (see #pump). */
  #turnOpen = false
  /** Frames handled in it, and when its time is up. */
  #turnFrames = 0
  #turnDeadline = 0
  readonly #endTurn = (): void => {
    this.#turnOpen = false
  }

  constructor(options: ConnectionOptions) {
    this.#socket = options.socket
    this.#frames = options.frames
    this.#dispatch = options.dispatch
    this.#gate = options.gate ?? new RequestGate(1)
    this.#onClose = options.onClose
    this.#pipelined = options.pipelined ?? (() => false)
    const socket = this.#socket
    socket.setNoDelay(true)
    if (options.idleTimeoutMs > 0) socket.setTimeout(options.idleTimeoutMs)
    if (options.reads === 'onread') {
      if (this.#frames.release === undefined)
        throw new TypeError('reads into a reused buffer need frames that copy')
    } else {
      socket.on('data', (chunk: Buffer) => this.receive(chunk))
    }
    socket.on('timeout', () => {
      // Kafka counts a connection idle when nothing was read or written for the period; a
      // request still being worked on keeps it open.
      if (this.inFlight === 0) this.#destroy('idle timeout (connections.max.idle.ms)')
    })
    socket.on('drain', () => {
      if (this.#pausedForWrite) {
        this.#pausedForWrite = false
        this.#pump()
      }
    })
    socket.on('error', (err) => this.#destroy(`socket error: ${err.message}`))
    socket.on('end', () => this.#finishOrClose('client closed its side'))
    socket.on('close', () => this.#destroy('closed'))
  }

  /** Requests read and not yet answered. */
  get inFlight(): number {
    return this.#slots.length + (this.#held !== null || this.#deferred !== null ? 1 : 0)
  }

  /** A request is dispatched and its answer not yet written. */
  get #busy(): boolean {
    return this.#slots.length > 0
  }

  /** Whether another frame may be dispatched now: nothing in flight, or a run of pipelined ones. */
  #canTakeMore(): boolean {
    const n = this.#slots.length
    return n === 0 || (this.#slots[0].pipelined && n < PIPELINED_PER_CONNECTION)
  }

  get closed(): boolean {
    return this.#closed
  }

  /** Stops reading, answers the request in flight, then closes. Resolves when the socket is closed. */
  shutdown(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#closed) return resolve()
      this.#socket.once('close', () => resolve())
      this.#finishOrClose('server shutting down')
    })
  }

  /**
   * Bytes read from the socket. With `reads: 'onread'` they lie in a buffer the socket reads into
   * again once this returns (other connections too, where the buffer is shared): the frames are
   * told to copy what they still need of them first.
   */
  receive(chunk: Buffer): void {
    if (this.#closeAfterDrain !== null || this.#closed) return
    const frames = this.#frames
    frames.push(chunk)
    try {
      this.#pump()
    } finally {
      frames.release?.()
    }
  }

  /**
   * Handles buffered frames one at a time while each is answered at once; stops at a request that
   * is answered later (it resumes when the answer is written), at a full write buffer, at the gate
   * and once this turn of the event loop has handled {@link FRAMES_PER_TURN} frames of the
   * connection or {@link MS_PER_TURN} has passed since its first (resumed on the next turn). The
   * socket is read only while nothing is in flight (or a run of pipelined requests that may grow).
   */
  #pump(): void {
    if (
      this.#closed ||
      this.#closeAfterDrain !== null ||
      !this.#canTakeMore() ||
      this.#held !== null ||
      this.#deferred !== null ||
      this.#throttled
    ) {
      this.#setPaused(true)
      return
    }
    const socket = this.#socket
    // The bound is per turn, not per call: a socket with a backlog is read up to 32 times (64 KiB
    // each) in one turn by libuv, and each read comes here. The turn ends at the check phase.
    if (!this.#turnOpen) {
      this.#turnOpen = true
      this.#turnFrames = 0
      this.#turnDeadline = performance.now() + MS_PER_TURN
      setImmediate(this.#endTurn)
    }
    // Responses answered synchronously in one run leave in one write.
    socket.cork()
    try {
      for (;;) {
        if (this.#pausedForWrite || this.#closeAfterDrain !== null || this.#closed || this.#throttled) break
        const n = this.#turnFrames
        if (n >= FRAMES_PER_TURN || (n > 0 && performance.now() >= this.#turnDeadline)) {
          // The rest waits for the next turn; with nothing buffered there is no rest, and the
          // socket reads on unpaused.
          if ((this.#frames.buffered ?? 1) > 0) this.#schedulePump()
          break
        }
        if (!this.#canTakeMore()) break
        let frame: Uint8Array | null
        try {
          frame = this.#frames.next()
        } catch (err) {
          if (err instanceof FrameError) this.#invalidFrame = true
          this.#finishOrClose((err as Error).message)
          break
        }
        if (frame === null) break
        this.#turnFrames++
        if (this.#busy && !this.#pipelined(frame)) {
          // Waits until every answer before it is written.
          this.#deferred = frame
          break
        }
        if (!this.#take(frame)) break
      }
    } finally {
      this.#flushAnswers()
      socket.uncork()
    }
    // A request answered later (a long poll, a coordinator write) pauses the socket only once bytes
    // wait behind it: a client mostly sends nothing until its answer (a consumer's next Fetch), and
    // a pause and a resume cost a request two epoll_ctl calls and a round of Node's stream code.
    // Bytes that arrive meanwhile are kept, one read at most: that read pauses it (the check above).
    this.#setPaused(
      (!this.#canTakeMore() && (this.#frames.buffered ?? 1) > 0) ||
        this.#held !== null ||
        this.#deferred !== null ||
        this.#pausedForWrite ||
        this.#pumpScheduled ||
        this.#throttled,
    )
  }

  /** Takes a permit for a frame and dispatches it, or holds it until the gate grants one. */
  #take(frame: Uint8Array): boolean {
    const permit = this.#gate.tryAcquire()
    if (permit === null) {
      this.#held = frame
      this.#gate.wait((p) => this.#onPermit(p))
      return false
    }
    this.#permit = permit
    return this.#handle(frame)
  }

  #schedulePump(): void {
    if (this.#pumpScheduled) return
    this.#pumpScheduled = true
    setImmediate(() => {
      this.#pumpScheduled = false
      this.#pump()
    })
  }

  #onPermit(permit: Permit): void {
    const frame = this.#held
    this.#held = null
    this.#permit = permit
    if (frame === null || this.#closed || this.#closeAfterDrain !== null) {
      this.#releasePermit()
      if (this.#closeAfterDrain !== null && !this.#closed && !this.#busy) this.#end()
      return
    }
    const goOn = this.#handle(frame)
    this.#flushAnswers()
    if (goOn) this.#pump()
  }

  /**
   * Dispatches one frame (its permit taken). True when it was answered at once and the next frame
   * may be handled.
   */
  #handle(frame: Uint8Array): boolean {
    let result: DispatchResult
    try {
      // With nothing owed before it, an answer ready at once may be written in place.
      result = this.#dispatch(frame, this.#busy || this.#closed ? undefined : this.#answerBuffer())
    } catch (err) {
      // The router answers every expected failure; reaching here is a bug, and the connection
      // cannot know whether a response is owed, so it closes as Kafka does on an internal error.
      this.#releasePermit()
      this.#finishOrClose(`unexpected error: ${(err as Error).message}`)
      return false
    }
    // A request answered later may still read its frame (a transactional Produce's records are
    // views of it) while the next frames are read, unless its dispatch says it is done with it.
    if (result.kind === 'pending' && result.frameFree !== true) this.#frames.keep()
    if (result.kind === 'pending' || this.#busy) {
      // Answered later, or behind answers still owed: it waits for its turn to be written.
      const slot: Slot = {
        result: null,
        later: null,
        value: undefined,
        permit: this.#permit,
        pipelined: this.#pipelined(frame),
      }
      this.#permit = null
      this.#slots.push(slot)
      if (result.kind !== 'pending') this.#settled(slot, result)
      else if (result.later !== undefined) this.#settleLater(slot, result.later)
      else this.#settle(slot, result.promise)
      // A refused frame: nothing after it is read; it is answered (or closes) in its turn.
      const refusal =
        result.kind === 'close' ? result.reason : result.kind === 'response' ? result.closeAfter : undefined
      if (refusal !== undefined) {
        this.#closeAfterDrain ??= refusal
        return false
      }
      return this.#canTakeMore()
    }
    this.#releasePermit()
    return this.#complete(result)
  }

  #settle(slot: Slot, promise: Promise<DispatchResult>): void {
    promise.then(
      (r) => {
        if (r.kind === 'pending')
          return r.later !== undefined ? this.#settleLater(slot, r.later) : this.#settle(slot, r.promise)
        this.#settled(slot, r)
        this.#holdWrites()
        this.#answer()
      },
      (err: unknown) => {
        this.#settled(slot, {
          kind: 'close',
          reason: `unexpected error: ${(err as Error)?.message ?? String(err)}`,
        })
        this.#answer()
      },
    )
  }

  /** As {@link #settle}, for an answer the connection encodes when its turn comes. */
  #settleLater(slot: Slot, later: LaterAnswer): void {
    later.value.then(
      (value) => {
        slot.value = value
        slot.later = later
        this.#releaseSlotPermit(slot)
        this.#holdWrites()
        this.#answer()
      },
      (err: unknown) => {
        this.#settled(slot, later.fail(err))
        this.#answer()
      },
    )
  }

  /**
   * Answers that settle in one run of the microtask queue (a batch of coordinator writes or one
   * segment write completes them together) leave in one socket write: the socket stays corked, and
   * the answers encoded in place are handed to it, once the queue has run.
   */
  #holdWrites(): void {
    if (this.#writesHeld || this.#closed) return
    this.#writesHeld = true
    this.#socket.cork()
    process.nextTick(this.#releaseWrites)
  }

  readonly #releaseWrites = (): void => {
    this.#writesHeld = false
    this.#flushAnswers()
    this.#socket.uncork()
  }

  #settled(slot: Slot, result: Settled): void {
    slot.result = result
    this.#releaseSlotPermit(slot)
  }

  #releaseSlotPermit(slot: Slot): void {
    const permit = slot.permit
    slot.permit = null
    if (permit !== null) this.#gate.release(permit)
  }

  /**
   * Writes every answer at the head of the line that is ready, in order; once none is owed, a
   * frame that waited for that goes next, and reading goes on.
   */
  #answer(): void {
    const slots = this.#slots
    if (this.#closed) {
      this.#dropAnswers()
      return
    }
    let goOn = true
    const socket = this.#socket
    socket.cork()
    try {
      while (slots.length > 0 && (slots[0].result !== null || slots[0].later !== null)) {
        const slot = slots.shift() as Slot
        goOn = this.#complete(slot.result ?? this.#encodeLater(slot))
        if (this.#closed) {
          this.#dropAnswers()
          return
        }
      }
    } finally {
      // Answers encoded in place while writes are held leave together when they are released.
      if (!this.#writesHeld) this.#flushAnswers()
      socket.uncork()
    }
    if (slots.length > 0 || this.#closeAfterDrain !== null) return
    const deferred = this.#deferred
    if (deferred !== null) {
      this.#deferred = null
      const taken = this.#take(deferred)
      this.#flushAnswers()
      if (!taken) return
      goOn = !this.#pausedForWrite && !this.#throttled
    }
    if (goOn) this.#pump()
  }

  /** A later answer at the head of the line: nothing is owed before it, so it may go in place. */
  #encodeLater(slot: Slot): Settled {
    const later = slot.later as LaterAnswer
    const value = slot.value
    slot.later = null
    slot.value = undefined
    try {
      return later.answer(value, this.#answerBuffer())
    } catch (err) {
      // As in #handle: the router answers every expected failure.
      return { kind: 'close', reason: `unexpected error: ${(err as Error).message}` }
    }
  }

  #answerBuffer(): AnswerBuffer {
    if (this.#answers === null) this.#answers = new AnswerBuffer(this.#socket)
    return this.#answers
  }

  /** Hands the answers written in place to the socket (before any other write, and after a run). */
  #flushAnswers(): void {
    const answers = this.#answers
    if (answers !== null && !this.#closed && !answers.flush()) this.#pausedForWrite = true
  }

  /** Once closed: answers that will never be written give back the buffers they reference. */
  #dropAnswers(): void {
    const slots = this.#slots
    let kept = 0
    for (const slot of slots) {
      const result = slot.result
      if (slot.later !== null) slot.later.drop()
      else if (result === null) slots[kept++] = slot
      else if (result.kind === 'response') result.release?.()
    }
    slots.length = kept
  }

  #releasePermit(): void {
    const permit = this.#permit
    this.#permit = null
    if (permit !== null) this.#gate.release(permit)
  }

  /** Writes an answer; true when the connection may go on to the next frame. */
  #complete(result: Settled): boolean {
    // Written in place: it leaves with the answers next to it (#flushAnswers).
    if (result.kind === 'written') return this.#afterAnswer()
    if (result.kind === 'none') {
      this.#throttle(result.throttleMs)
      return this.#afterAnswer()
    }
    if (result.kind === 'close') {
      this.#finishOrClose(result.reason)
      return false
    }
    if (this.#closed) {
      result.release?.()
      return false
    }
    // Answers written in place before this one go first.
    this.#flushAnswers()
    const bytes = result.bytes
    // The write's callback runs once the kernel has the bytes (or the write failed, or the socket
    // was destroyed): only then may buffers the answer references be given back and reused.
    const release = result.release
    if (bytes instanceof Uint8Array) {
      if (!this.#socket.write(bytes, release)) this.#pausedForWrite = true
    } else {
      // Corked (again, where #pump or #answer already did): the chunks leave in one writev, and
      // the last chunk's callback runs after every chunk's.
      const socket = this.#socket
      let room = true
      socket.cork()
      const last = bytes.length - 1
      for (let i = 0; i <= last; i++) room = socket.write(bytes[i], i === last ? release : undefined)
      socket.uncork()
      if (!room) this.#pausedForWrite = true
    }
    if (result.closeAfter !== undefined) {
      this.#finishOrClose(result.closeAfter)
      return false
    }
    this.#throttle(result.throttleMs)
    return this.#afterAnswer()
  }

  /** Mutes the connection for a quota's throttle time; it reads on once the time has passed. */
  #throttle(ms: number | undefined): void {
    if (ms === undefined || ms <= 0 || this.#closed) return
    this.#throttled = true
    const timer = setTimeout(() => {
      this.#throttled = false
      this.#pump()
    }, ms)
    timer.unref()
  }

  #afterAnswer(): boolean {
    if (this.#closeAfterDrain !== null) {
      // Answers still owed are written first.
      if (!this.#busy) this.#end()
      return false
    }
    return !this.#pausedForWrite && !this.#throttled
  }

  #setPaused(pause: boolean): void {
    if (this.#closed) return
    if (pause && !this.#paused) {
      this.#paused = true
      this.#socket.pause()
    } else if (!pause && this.#paused && this.#closeAfterDrain === null) {
      this.#paused = false
      this.#socket.resume()
    }
  }

  #end(): void {
    this.#flushAnswers()
    this.#socket.end()
    this.#socket.destroySoon()
  }

  #finishOrClose(reason: string): void {
    if (this.#closed) return
    if (this.#closeAfterDrain === null) this.#closeAfterDrain = reason
    this.#paused = true
    this.#socket.pause()
    // A request in flight is answered first; its completion ends the socket.
    if (!this.#busy && this.#held === null) this.#end()
  }

  #destroy(reason: string): void {
    if (this.#closed) return
    this.#closed = true
    this.#socket.destroy()
    this.#answers?.close()
    this.#dropAnswers()
    this.#onClose(this.#closeAfterDrain ?? reason, this.#invalidFrame)
  }
}

/**
 * Records fields (a Fetch answer's batches) of at least this many bytes are written to the socket
 * as the log returned them, between the answer's other bytes, instead of being copied into one
 * buffer with them (the router's `encodeResponseChunks`; an answer written in place that holds one
 * is encoded that way instead).
 */
export const REFERENCE_RECORDS_FROM = 4096

/** The buffer a connection encodes its answers in while it has answers to write (see AnswerBuffer). */
export const ANSWER_SLAB_BYTES = 16 * 1024
/** The room an answer starts with in place; one that needs more moves to a buffer of its own. */
const ANSWER_MIN_ROOM = 1024
/** Answer buffers no connection holds, kept for the next (more are left to the collector). */
const FREE_SLABS_KEPT = 32

interface AnswerSlab {
  readonly buf: Buffer
  /** A DataView over `buf`, kept with it: a writer moved onto the slab makes none. */
  readonly view: DataView
}

/** Answer buffers of connections that had nothing to write; shared by the process's servers. */
const freeSlabs: AnswerSlab[] = []

function newSlab(): AnswerSlab {
  const buf = Buffer.allocUnsafeSlow(ANSWER_SLAB_BYTES)
  return { buf, view: new DataView(buf.buffer, buf.byteOffset, buf.byteLength) }
}

/**
 * A connection's answers encoded in place ({@link AnswerOutput}): one writer, reused, writes each
 * answer into a buffer the connection borrows from a free list while it has answers to write, and
 * the answers of one run of frames leave in one socket write of that buffer's bytes. Bytes handed to
 * the socket are not overwritten until the socket has taken them (the write's callback, which also
 * runs when the write fails or the socket is destroyed); with no write outstanding and nothing left
 * to write, the buffer goes back to the free list. So a steady flow of answers allocates no buffer,
 * no view and no result object per answer, and an idle connection holds no buffer.
 */
class AnswerBuffer implements AnswerOutput {
  readonly #socket: Socket
  readonly #writer = new Writer(0, REFERENCE_RECORDS_FROM)
  #slab: AnswerSlab | null = null
  /** Bytes [#from, #to) of the slab are answers not yet handed to the socket. */
  #from = 0
  #to = 0
  /** Writes of the slab's bytes handed to the socket and not yet completed. */
  #writing = 0
  /** A write since the last flush found the socket's buffer full. */
  #full = false
  #closed = false
  readonly #written = (): void => {
    this.#writing--
    this.#giveBackIfIdle()
  }

  constructor(socket: Socket) {
    this.#socket = socket
  }

  begin(): Writer | null {
    if (this.#closed) return null
    let slab = this.#slab
    if (slab === null) {
      slab = freeSlabs.pop() ?? newSlab()
      this.#slab = slab
      this.#from = 0
      this.#to = 0
    } else if (slab.buf.length - this.#to < ANSWER_MIN_ROOM) {
      // Full: it starts over only once every byte of it has been taken by the socket.
      if (this.#writing > 0 || this.#from < this.#to) return null
      this.#from = 0
      this.#to = 0
    }
    this.#writer.resetInto(slab.buf, this.#to, slab.view)
    return this.#writer
  }

  commit(): void {
    const w = this.#writer
    const slab = this.#slab as AnswerSlab
    if (w.buffer === slab.buf) {
      this.#to = w.end
      return
    }
    // The answer outgrew the room: the answers before it go first, then its own buffer.
    const room = this.flush()
    if (!this.#socket.write(w.buffer.subarray(w.start, w.end)) || !room) this.#full = true
    this.#giveBackIfIdle()
  }

  abort(): void {
    // Nothing was committed: the bytes after #to are overwritten by the next answer.
    this.#giveBackIfIdle()
  }

  /** Hands the answers not yet written to the socket; false when its buffer is full. */
  flush(): boolean {
    let room = !this.#full
    this.#full = false
    if (this.#from < this.#to) {
      const bytes = (this.#slab as AnswerSlab).buf.subarray(this.#from, this.#to)
      this.#from = this.#to
      this.#writing++
      if (!this.#socket.write(bytes, this.#written)) room = false
    }
    return room
  }

  /** The connection is closed: what was not written never will be. */
  close(): void {
    this.#closed = true
    this.#from = this.#to
    this.#giveBackIfIdle()
  }

  #giveBackIfIdle(): void {
    const slab = this.#slab
    if (slab === null || this.#writing > 0 || this.#from < this.#to) return
    this.#slab = null
    if (freeSlabs.length < FREE_SLABS_KEPT) freeSlabs.push(slab)
  }
}

/**
 * Frames from this size up to {@link REUSED_FRAME_MAX_BYTES} that are copied out of what was read
 * (they span socket reads, or were read into a buffer the socket reuses) are put in a buffer the
 * connection reuses; smaller ones are slices of Node's shared pool.
 */
export const REUSED_FRAME_MIN_BYTES = 4 * 1024
export const REUSED_FRAME_MAX_BYTES = 1024 * 1024

/**
 * Room for the frames a source copies out of received bytes: one buffer reused for the next such
 * frame (V8 counts every fresh ArrayBuffer towards starting a full collection), until a frame in
 * it is kept.
 */
export class FrameBuffers {
  #reused: Buffer | null = null
  /** The frame handed out last lies in #reused. */
  #lastReused = false

  /** A frame that is not a copy (a view of a received chunk) is handed out next. */
  viewed(): void {
    this.#lastReused = false
  }

  /** Room for a frame of `n` bytes: the reused buffer where it fits its bounds. */
  room(n: number): Buffer {
    this.#lastReused = false
    if (n < REUSED_FRAME_MIN_BYTES || n > REUSED_FRAME_MAX_BYTES) return Buffer.allocUnsafe(n)
    let buf = this.#reused
    if (buf === null || buf.byteLength < n) {
      // A power of two: frames of about one size (a producer's) fit from the first on.
      buf = Buffer.allocUnsafeSlow(Math.min(REUSED_FRAME_MAX_BYTES, 2 ** Math.ceil(Math.log2(n))))
      this.#reused = buf
    }
    this.#lastReused = true
    return buf.subarray(0, n)
  }

  /** `n` bytes of `source` from `from`, copied into {@link room}. */
  copy(source: Buffer, from: number, n: number): Buffer {
    const out = this.room(n)
    source.copy(out, 0, from, from + n)
    return out
  }

  /** The frame handed out last stays as it is: the next one goes to a new buffer. */
  keep(): void {
    if (!this.#lastReused) return
    this.#reused = null
    this.#lastReused = false
  }
}

/** What the frame sources share: the bound on a frame's size, which may change between frames. */
export abstract class BoundedFrames {
  #maxFrameSize: number

  constructor(maxFrameSize: number) {
    this.#maxFrameSize = maxFrameSize
  }

  /** A smaller bound applies before SASL authentication. */
  set maxFrameSize(n: number) {
    this.#maxFrameSize = n
  }

  get maxFrameSize(): number {
    return this.#maxFrameSize
  }

  /** The size prefix, or Kafka's refusal when it is negative or above the bound. */
  protected checkSize(size: number): number {
    return checkFrameSize(size, this.#maxFrameSize)
  }
}

/**
 * Splits a byte stream into size-prefixed frames. Chunks are kept as received; a frame that lies
 * inside one chunk is returned as a view of it (no copy), one that spans chunks is copied once.
 * At most one frame (bounded by `maxFrameSize`) plus one chunk is ever buffered.
 *
 * A frame that spans chunks (a 16 KiB Produce request read 64 KiB at a time spans two reads every
 * few frames) is copied into one buffer the source keeps and reuses for the next such frame
 * ({@link FrameBuffers}). Its bytes are therefore valid until the next frame is returned, which is
 * enough for a request handled at once: the connection reads its next frame only after
 * dispatching this one, and a handler keeps nothing of a frame but views of a Produce's records,
 * which the log consumes in the append. A request answered later calls `keep()`: the buffer is
 * its own and the next frame is assembled in a new one.
 *
 * The chunks must stay as they are while the source holds them (Node's `'data'` chunks do); for
 * bytes read into a buffer the socket reuses see {@link ReadBufferFrames} (read-buffer.ts).
 */
export class SizePrefixedFrames extends BoundedFrames implements FrameSource {
  #chunks: Buffer[] = []
  /** Read position inside #chunks[0]. */
  #offset = 0
  #buffered = 0
  readonly #buffers = new FrameBuffers()

  get buffered(): number {
    return this.#buffered
  }

  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return
    this.#chunks.push(asBuffer(chunk))
    this.#buffered += chunk.byteLength
  }

  keep(): void {
    this.#buffers.keep()
  }

  next(): Uint8Array | null {
    if (this.#buffered < 4) return null
    const size = this.checkSize(this.#peekInt32())
    if (this.#buffered < 4 + size) return null
    this.#buffers.viewed()
    this.#skip(4)
    return this.#take(size)
  }

  /** Drops `n` buffered bytes (a size prefix: no view of them is made). */
  #skip(n: number): void {
    this.#buffered -= n
    while (n > 0) {
      const first = this.#chunks[0]
      const k = Math.min(n, first.length - this.#offset)
      this.#offset += k
      n -= k
      if (this.#offset === first.length) {
        this.#chunks.shift()
        this.#offset = 0
      }
    }
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
    const out = this.#buffers.room(n)
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

/** A Buffer over the same bytes. */
export function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
}

/** The size prefix, or Kafka's refusal when it is negative or above the bound. */
export function checkFrameSize(size: number, maxFrameSize: number): number {
  if (size < 0 || size > maxFrameSize) {
    // Kafka's texts for the same refusal.
    throw new FrameError(
      size,
      size < 0
        ? `Invalid receive (size = ${size})`
        : `Invalid receive (size = ${size} larger than ${maxFrameSize})`,
    )
  }
  return size
}
