/**
 * The client side of the fuzzer: a connection that writes raw bytes and collects size-prefixed
 * response frames, and what a stream of bytes obliges a Kafka server to do (answer each complete
 * frame, or close the connection).
 */
import { connect, type Socket } from 'node:net'
import { decodeRequest } from '../../src/protocol/frames.js'
import { API_DEFINITIONS, type ApiMessageTypes } from '../../src/protocol/generated/registry.js'

/** Kafka's socket.request.max.bytes default: a size prefix above it (or below 0) is refused. */
export const DEFAULT_MAX_REQUEST_BYTES = 104857600

export interface Expectation {
  /**
   * complete frames in the stream that owe an answer: each must be answered, unless the server
   * closes (a Produce with acks=0 owes none; see {@link withoutAnswer})
   */
  readonly complete: number
  /** a size prefix below 0 or above the limit: the server must close the connection */
  readonly invalidSize: boolean
  /** bytes after the last complete frame that do not make a frame yet */
  readonly partial: boolean
}

export function expectationOf(stream: Buffer, maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES): Expectation {
  let p = 0
  let complete = 0
  while (p + 4 <= stream.length) {
    const size = stream.readInt32BE(p)
    if (size < 0 || size > maxRequestBytes) return { complete, invalidSize: true, partial: false }
    if (p + 4 + size > stream.length) break
    if (!withoutAnswer(stream.subarray(p + 4, p + 4 + size))) complete++
    p += 4 + size
  }
  return { complete, invalidSize: false, partial: p < stream.length }
}

/**
 * A request that decodes as Produce with acks=0: Kafka sends no answer to it, and when it fails
 * Kafka closes the connection (the only way an acks=0 producer learns of an error).
 */
function withoutAnswer(body: Buffer): boolean {
  if (body.length < 2 || body.readInt16BE(0) !== 0) return false
  try {
    const r = decodeRequest(body)
    return r.apiKey === 0 && (r.body as { acks?: number }).acks === 0
  } catch {
    return false
  }
}

/** SASL requests, which a server may answer by closing the connection (authentication state). */
const SASL_APIS = new Set([17, 36])

/**
 * The API of a single complete frame that decodes as a request of a served version (other than
 * SASL): Kafka answers such a request, with an error if need be, and never just closes.
 */
export function wellFormedRequest(
  frame: Buffer,
): { apiKey: keyof ApiMessageTypes; version: number; name: string } | null {
  if (frame.length < 4 || frame.readInt32BE(0) !== frame.length - 4) return null
  try {
    const r = decodeRequest(frame.subarray(4))
    if (SASL_APIS.has(r.apiKey) || withoutAnswer(frame.subarray(4))) return null
    return { apiKey: r.apiKey, version: r.apiVersion, name: API_DEFINITIONS[r.apiKey].name }
  } catch {
    return null
  }
}

/**
 * Whether a frame may be pipelined with others on a connection: one complete frame that owes an
 * answer, in one write, and not SASL (which the server may answer and then close). The server
 * answers the frames of a connection in order and, when it refuses one, closes after answering
 * every frame before it and reads nothing after it; so the number of answers says which frame was
 * refused. Anything else (a framing mutation, a partial frame, a Produce with acks=0, which owes no
 * answer and is closed when it fails) goes alone, on a connection that goes with it.
 */
export function pipelinable(stream: Buffer, expected: Expectation, family: string, writes: number): boolean {
  return (
    family !== 'framing' &&
    writes === 1 &&
    expected.complete === 1 &&
    !expected.partial &&
    !expected.invalidSize &&
    stream.readInt32BE(0) === stream.length - 4 &&
    !(stream.length >= 6 && SASL_APIS.has(stream.readInt16BE(4)))
  )
}

export interface Outcome {
  /** response frames received, without their size prefix */
  readonly responses: Buffer[]
  /** the server closed (or reset) the connection */
  readonly closed: boolean
  /** the wait ended by time */
  readonly timedOut: boolean
  readonly ms: number
  /** a response size prefix that cannot be right (below 4 or absurdly large) */
  readonly badResponseSize?: number
}

/** One client connection speaking raw bytes. */
export class FuzzConnection {
  readonly #socket: Socket
  #buffer: Buffer = Buffer.alloc(0)
  #responses: Buffer[] = []
  #closed = false
  #badSize: number | undefined
  #wake: (() => void) | null = null

  private constructor(socket: Socket) {
    this.#socket = socket
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk])
      while (this.#buffer.length >= 4) {
        const size = this.#buffer.readInt32BE(0)
        if (size < 4 || size > DEFAULT_MAX_REQUEST_BYTES) {
          this.#badSize = size
          this.#buffer = Buffer.alloc(0)
          socket.destroy()
          break
        }
        if (this.#buffer.length < 4 + size) break
        this.#responses.push(this.#buffer.subarray(4, 4 + size))
        this.#buffer = this.#buffer.subarray(4 + size)
      }
      this.#wake?.()
    })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      this.#closed = true
      this.#wake?.()
    })
  }

  static open(port: number, host = '127.0.0.1', timeoutMs = 10_000): Promise<FuzzConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host })
      const timer = setTimeout(() => {
        socket.destroy()
        reject(new Error(`no connection to ${host}:${port} within ${timeoutMs} ms`))
      }, timeoutMs)
      socket.once('connect', () => {
        clearTimeout(timer)
        resolve(new FuzzConnection(socket))
      })
      socket.once('error', (e) => {
        clearTimeout(timer)
        reject(e)
      })
    })
  }

  get closed(): boolean {
    return this.#closed
  }

  /** Writes the chunks in turn (each in its own write, a macrotask apart when there are several). */
  async write(chunks: readonly Buffer[]): Promise<void> {
    for (let i = 0; i < chunks.length; i++) {
      if (this.#closed) return
      if (i > 0) await new Promise((r) => setTimeout(r, 1))
      this.#socket.write(chunks[i]!)
    }
  }

  /**
   * Waits until `count` responses have arrived (since the last take), the connection closed, or
   * time ran out: `timeoutMs` after the call, or, with `eachMs`, `timeoutMs` after the call or the
   * last response, whichever is later (pipelined requests are answered one after the other, so
   * each has the whole timeout from the answer before it).
   */
  async take(count: number, timeoutMs: number, eachMs = false): Promise<Outcome> {
    const started = performance.now()
    let timedOut = false
    if (this.#responses.length < count && !this.#closed) {
      await new Promise<void>((resolve) => {
        let seen = this.#responses.length
        let deadline = started + timeoutMs
        const expire = (): void => {
          const left = deadline - performance.now()
          if (left > 0) {
            timer = setTimeout(expire, left)
            return
          }
          timedOut = true
          resolve()
        }
        let timer = setTimeout(expire, timeoutMs)
        this.#wake = () => {
          if (this.#responses.length >= count || this.#closed) {
            clearTimeout(timer)
            resolve()
          } else if (eachMs && this.#responses.length > seen) {
            // no new timer per response: the one running re-arms itself at the new deadline
            seen = this.#responses.length
            deadline = performance.now() + timeoutMs
          }
        }
      })
      this.#wake = null
    }
    const responses = this.#responses
    this.#responses = []
    const out: Outcome = { responses, closed: this.#closed, timedOut, ms: performance.now() - started }
    return this.#badSize === undefined ? out : { ...out, badResponseSize: this.#badSize }
  }

  destroy(): void {
    this.#socket.destroy()
  }
}
