// A minimal raw Kafka-protocol client for tests, over TCP or TLS: frames requests with the generated
// codecs, reads size-prefixed responses, and reports when the server closes the connection.
import { readFileSync } from 'node:fs'
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { apiDefinition } from '../../src/protocol/generated/registry.js'
import { Reader } from '../../src/protocol/reader.js'
import { Writer } from '../../src/protocol/writer.js'

export function requestFrame(
  apiKey: number,
  version: number,
  correlationId: number,
  body: unknown,
  clientId = 'test',
): Buffer {
  const def = apiDefinition(apiKey)
  if (def === undefined) throw new Error(`no API ${apiKey}`)
  const w = new Writer()
  w.writeInt32(0)
  w.writeInt16(apiKey)
  w.writeInt16(version)
  w.writeInt32(correlationId)
  w.writeNullableString(clientId)
  const flexible = def.firstFlexibleVersion !== null && version >= def.firstFlexibleVersion
  if (flexible) w.writeUVarint(0)
  def.writeRequest(w, def.createRequest(body as Record<string, unknown>), version)
  const out = Buffer.from(w.finish())
  out.writeInt32BE(out.length - 4, 0)
  return out
}

/** A header-only frame with arbitrary body bytes. */
export function rawFrame(apiKey: number, version: number, correlationId: number, rest: Uint8Array): Buffer {
  const head = Buffer.alloc(14)
  head.writeInt32BE(10 + rest.length, 0)
  head.writeInt16BE(apiKey, 4)
  head.writeInt16BE(version, 6)
  head.writeInt32BE(correlationId, 8)
  head.writeInt16BE(-1, 12) // null client id
  return Buffer.concat([head, rest])
}

export interface DecodedResponse<T = Record<string, unknown>> {
  readonly correlationId: number
  readonly body: T
}

export function decodeResponse<T>(apiKey: number, version: number, frame: Buffer): DecodedResponse<T> {
  const def = apiDefinition(apiKey)
  if (def === undefined) throw new Error(`no API ${apiKey}`)
  const r = new Reader(frame)
  const correlationId = r.readInt32()
  const flexible = def.firstFlexibleVersion !== null && version >= def.firstFlexibleVersion
  if (flexible && apiKey !== 18) {
    const n = r.readUVarint()
    if (n !== 0) throw new Error('unexpected response header tags')
  }
  const body = def.readResponse(r, version) as T
  r.expectEnd('response')
  return { correlationId, body }
}

export interface TlsClientOptions {
  readonly ca: string
  readonly cert?: string
  readonly key?: string
}

/** A connection to the loopback port; over TLS (server name localhost) when `tls` is given. */
export function openSocket(port: number, tls?: TlsClientOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s =
      tls === undefined
        ? netConnect({ host: '127.0.0.1', port }, () => resolve(s))
        : tlsConnect(
            {
              host: '127.0.0.1',
              port,
              ca: readFileSync(tls.ca),
              cert: tls.cert === undefined ? undefined : readFileSync(tls.cert),
              key: tls.key === undefined ? undefined : readFileSync(tls.key),
              servername: 'localhost',
            },
            () => resolve(s),
          )
    s.once('error', reject)
  })
}

/** The size-prefixed response frames of one connection, in order, and the server's close. */
export class FrameConnection {
  /** How long `nextFrame` waits by default; a campaign on a loaded machine raises it. */
  static defaultResponseTimeoutMs = 5000
  readonly socket: Socket
  readonly closed: Promise<void>
  #buf = Buffer.alloc(0)
  #waiters: ((f: Buffer | null) => void)[] = []
  #frames: Buffer[] = []
  #closed = false
  #correlation = 1

  protected constructor(socket: Socket) {
    this.socket = socket
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()))
    socket.on('data', (chunk: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, chunk])
      while (this.#buf.length >= 4) {
        const size = this.#buf.readInt32BE(0)
        if (this.#buf.length < 4 + size) break
        const frame = this.#buf.subarray(4, 4 + size)
        this.#buf = this.#buf.subarray(4 + size)
        const w = this.#waiters.shift()
        if (w) w(frame)
        else this.#frames.push(frame)
      }
    })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      this.#closed = true
      for (const w of this.#waiters.splice(0)) w(null)
    })
  }

  get isClosed(): boolean {
    return this.#closed
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes)
  }

  /** The next response frame, or null when the server closed the connection first. */
  nextFrame(timeoutMs = FrameConnection.defaultResponseTimeoutMs): Promise<Buffer | null> {
    const f = this.#frames.shift()
    if (f) return Promise.resolve(f)
    if (this.#closed) return Promise.resolve(null)
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no response in time')), timeoutMs)
      this.#waiters.push((frame) => {
        clearTimeout(t)
        resolve(frame)
      })
    })
  }

  /** Sends one request: its decoded response, or null when the server closed the connection first. */
  protected async exchange<T>(
    apiKey: number,
    version: number,
    body: unknown,
  ): Promise<DecodedResponse<T> | null> {
    const id = this.#correlation++
    this.write(requestFrame(apiKey, version, id, body))
    const frame = await this.nextFrame()
    if (frame === null) return null
    const res = decodeResponse<T>(apiKey, version, frame)
    if (res.correlationId !== id) throw new Error(`correlation id ${res.correlationId}, expected ${id}`)
    return res
  }

  /** Resolves true when the server closes the connection within the time. */
  async closedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const r = await Promise.race([
      this.closed.then(() => true),
      new Promise<boolean>((res) => {
        timer = setTimeout(() => res(false), ms)
      }),
    ])
    clearTimeout(timer)
    return r
  }

  close(): void {
    this.socket.destroy()
  }
}

/** A plain-TCP client whose `request` fails when the server closes the connection instead. */
export class WireClient extends FrameConnection {
  static async connect(port: number): Promise<WireClient> {
    return new WireClient(await openSocket(port))
  }

  async request<T = Record<string, unknown>>(
    apiKey: number,
    version: number,
    body: unknown = {},
  ): Promise<DecodedResponse<T>> {
    const res = await this.exchange<T>(apiKey, version, body)
    if (res === null) throw new Error('connection closed by the server')
    return res
  }
}
