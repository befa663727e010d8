import { type Server, Socket } from 'node:net'
import {
  asBuffer,
  BoundedFrames,
  FrameBuffers,
  type FrameSource,
  REUSED_FRAME_MAX_BYTES,
} from './connection.js'

/**
 * Reading every connection of a listener into one buffer.
 *
 * Left to itself, Node allocates a fresh ArrayBuffer for every read of a socket (up to 64 KiB, the
 * size libuv asks for): at half load that is some 360 MB in 4 s, and V8 counts those bytes
 * towards starting its collections. net.Socket's `onread` option makes a socket read into a
 * buffer given once instead, and hand each read to a callback. The bytes are valid only during
 * that callback, which is what lets one buffer serve every connection of a listener: reads are
 * delivered one at a time on the event loop, and a connection copies what it still needs before
 * its callback returns ({@link ReadBufferFrames}). An idle connection thus costs no buffer at all.
 */

/** The shared read buffer's size: as much as libuv reads at once. */
export const READ_BUFFER_BYTES = 64 * 1024

/** What a connection may be re-created with. */
interface AcceptedSocket {
  _handle: { useUserBuffer?: unknown } | null
  server: Server | null
  _server: Server | null
}

/**
 * The accepted `socket`, re-created around its handle so that it reads into `buffer` and hands
 * each read to `callback` (`onread`). Node takes `onread` only for sockets it creates for
 * `connect`, not for those a server accepts, so the new socket is built as Node builds an accepted
 * one (from the handle, counted in the server's connections) and the old one is left without a
 * handle. The socket must not have been read yet: the server accepts with `pauseOnConnect`, and
 * the new socket is paused too (`resume()` starts reading). Null when the handle is not one that
 * can read into a buffer of ours (the caller then reads the socket's `'data'` events).
 */
export function readingInto(
  accepted: Socket,
  buffer: Buffer,
  callback: (nread: number, buffer: Buffer) => void,
): Socket | null {
  const old = accepted as unknown as AcceptedSocket
  const handle = old._handle
  if (handle === null || typeof handle.useUserBuffer !== 'function' || accepted.destroyed) return null
  const server = old._server
  old._handle = null
  old.server = null
  old._server = null
  const socket = new Socket({
    handle,
    allowHalfOpen: true,
    // As `pauseOnConnect`: the handle does not read until the socket is resumed.
    pauseOnCreate: true,
    readable: true,
    writable: true,
    onread: {
      buffer,
      callback: (nread: number) => {
        callback(nread, buffer)
        // Pausing is the connection's: it pauses the socket, which stops the reads at once.
        return true
      },
    },
  } as ConstructorParameters<typeof Socket>[0])
  const adopted = socket as unknown as AcceptedSocket
  adopted.server = server
  adopted._server = server
  return socket
}

/**
 * A carry larger than this is not kept once it is empty (as the reused frame buffer, at most
 * 1 MiB stays with a connection); one up to it is, so that a producer's frames spanning reads
 * cost no allocation after the first.
 */
const CARRY_KEPT_BYTES = REUSED_FRAME_MAX_BYTES
const CARRY_MIN_BYTES = 1024

/**
 * Size-prefixed frames from bytes read into a buffer the socket reuses ({@link readingInto}): a
 * pushed chunk is valid only until `release()`, which the connection calls before its read
 * callback returns. Every frame is therefore copied out of the chunk once, frames of 4 KiB to
 * 1 MiB into the connection's reused buffer ({@link FrameBuffers}), smaller ones into slices of
 * Node's pool. What is left of a chunk at `release()` (the start of the next frame, or frames not
 * handled yet because the connection paused) is copied to a carry buffer of the connection's own,
 * which grows with the bytes received, never with an announced size: at most one frame (bounded
 * by `maxFrameSize`) plus one read is ever held, as the connection reads only once it has handled
 * every complete frame.
 */
export class ReadBufferFrames extends BoundedFrames implements FrameSource {
  /** The chunk pushed last, until it is released, and the read position in it. */
  #chunk: Buffer | null = null
  #at = 0
  /** Bytes carried over from released chunks, from a frame's start: #carry[#carryStart, #carryEnd). */
  #carry: Buffer | null = null
  #carryStart = 0
  #carryEnd = 0
  readonly #buffers = new FrameBuffers()

  /** Bytes received and not yet returned as frames. */
  get buffered(): number {
    const chunk = this.#chunk
    return this.#carryEnd - this.#carryStart + (chunk === null ? 0 : chunk.length - this.#at)
  }

  /** The bytes are read only until `release()`; a second chunk may be pushed only after it. */
  push(chunk: Uint8Array): void {
    if (this.#chunk !== null) throw new Error('a read was pushed before the one before it was released')
    if (chunk.byteLength === 0) return
    this.#chunk = asBuffer(chunk)
    this.#at = 0
  }

  keep(): void {
    this.#buffers.keep()
  }

  next(): Uint8Array | null {
    if (this.#carryEnd > this.#carryStart) return this.#nextCarried()
    const chunk = this.#chunk
    if (chunk === null) return null
    const at = this.#at
    if (chunk.length - at < 4) return null
    const size = this.checkSize(chunk.readInt32BE(at))
    if (chunk.length - at - 4 < size) return null
    this.#at = at + 4 + size
    return this.#buffers.copy(chunk, at + 4, size)
  }

  release(): void {
    const chunk = this.#chunk
    if (chunk === null) return
    this.#chunk = null
    const rest = chunk.length - this.#at
    if (rest > 0) this.#append(chunk, this.#at, rest)
  }

  /** The frame at the carry's start, completed from the chunk where it is not complete yet. */
  #nextCarried(): Uint8Array | null {
    if (!this.#fill(4)) return null
    const size = this.checkSize((this.#carry as Buffer).readInt32BE(this.#carryStart))
    if (!this.#fill(4 + size)) return null
    // Filling may have moved the bytes to a larger carry.
    const carry = this.#carry as Buffer
    const from = this.#carryStart + 4
    this.#carryStart = from + size
    const frame = this.#buffers.copy(carry, from, size)
    if (this.#carryStart === this.#carryEnd) {
      this.#carryStart = 0
      this.#carryEnd = 0
      if (carry.length > CARRY_KEPT_BYTES) this.#carry = null
    }
    return frame
  }

  /** Moves bytes from the chunk to the carry until it holds `n`; true once it does. */
  #fill(n: number): boolean {
    const have = this.#carryEnd - this.#carryStart
    if (have >= n) return true
    const chunk = this.#chunk
    if (chunk === null) return false
    const k = Math.min(n - have, chunk.length - this.#at)
    if (k > 0) {
      this.#append(chunk, this.#at, k)
      this.#at += k
    }
    return have + k >= n
  }

  #append(source: Buffer, from: number, n: number): void {
    let carry = this.#carry
    if (carry === null || carry.length - this.#carryEnd < n) {
      const have = this.#carryEnd - this.#carryStart
      if (carry !== null && carry.length >= have + n) {
        carry.copyWithin(0, this.#carryStart, this.#carryEnd)
      } else {
        // Doubling, but never beyond the most it can hold (one frame and one read).
        const most = this.maxFrameSize + 4 + READ_BUFFER_BYTES
        const size = Math.max(
          have + n,
          Math.min(most, Math.max(CARRY_MIN_BYTES, 2 ** Math.ceil(Math.log2(have + n)))),
        )
        const grown = Buffer.allocUnsafeSlow(size)
        carry?.copy(grown, 0, this.#carryStart, this.#carryEnd)
        carry = grown
        this.#carry = grown
      }
      this.#carryStart = 0
      this.#carryEnd = have
    }
    source.copy(carry, this.#carryEnd, from, from + n)
    this.#carryEnd += n
  }
}
