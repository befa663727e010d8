// A tiny in-test broker built on the generated codec, for fault injection: every request is decoded,
// handed to a handler, and the handler's response is encoded back. Unhandled APIs get no answer.
import { Buffer } from 'node:buffer'
import net from 'node:net'
import { readRequestHeader, type RequestHeader } from '../../src/protocol/generated/messages/RequestHeader.js'
import { writeResponseHeader } from '../../src/protocol/generated/messages/ResponseHeader.js'
import {
  API_DEFINITIONS,
  type ApiMessageTypes,
  requestHeaderVersion,
  responseHeaderVersion,
} from '../../src/protocol/generated/registry.js'
import { Reader } from '../../src/protocol/reader.js'
import { Writer } from '../../src/protocol/writer.js'
import { FrameDecoder } from '../../src/clients/network/framing.js'

type Key = keyof ApiMessageTypes

export interface Received {
  readonly apiKey: number
  readonly version: number
  readonly header: RequestHeader
  readonly request: unknown
}

/** What a handler returns: a response body, 'drop' (no answer), 'close' (close the socket). */
export type Reply = object | 'drop' | 'close' | { readonly delayMs: number; readonly response: object }

export type Handler = (req: Received) => Reply | Promise<Reply>

export interface FakeBrokerOptions {
  /** version ranges advertised in ApiVersions; default = every API at the codec's full range */
  readonly apiVersions?: ReadonlyMap<number, { min: number; max: number }>
  readonly handlers?: Partial<Record<number, Handler>>
}

export class FakeBroker {
  readonly received: Received[] = []
  readonly #server: net.Server
  readonly #sockets = new Set<net.Socket>()
  readonly handlers = new Map<number, Handler>()
  apiVersions: Map<number, { min: number; max: number }>
  port = 0

  constructor(opts: FakeBrokerOptions = {}) {
    this.apiVersions = new Map(
      opts.apiVersions ??
        Object.values(API_DEFINITIONS).map(
          (d) => [d.apiKey, { min: d.minVersion, max: d.maxVersion }] as const,
        ),
    )
    for (const [k, h] of Object.entries(opts.handlers ?? {})) if (h) this.handlers.set(Number(k), h)
    this.#server = net.createServer((s) => this.#onSocket(s))
  }

  static async start(opts: FakeBrokerOptions = {}): Promise<FakeBroker> {
    const b = new FakeBroker(opts)
    await new Promise<void>((resolve) => b.#server.listen(0, '127.0.0.1', resolve))
    b.port = (b.#server.address() as net.AddressInfo).port
    // Metadata and FindCoordinator point at this broker unless a test overrides them.
    if (!b.handlers.has(3)) {
      b.handlers.set(3, () => ({
        ...API_DEFINITIONS[3].createResponse(),
        brokers: [{ nodeId: 1, host: '127.0.0.1', port: b.port, rack: null }],
        clusterId: 'fake',
        controllerId: 1,
      }))
    }
    if (!b.handlers.has(10)) {
      b.handlers.set(10, (r) => {
        const req = r.request as ApiMessageTypes[10]['request']
        if (r.version < 4) {
          return { ...API_DEFINITIONS[10].createResponse(), nodeId: 1, host: '127.0.0.1', port: b.port }
        }
        return {
          ...API_DEFINITIONS[10].createResponse(),
          coordinators: req.coordinatorKeys.map((key) => ({
            key,
            nodeId: 1,
            host: '127.0.0.1',
            port: b.port,
            errorCode: 0,
            errorMessage: null,
          })),
        }
      })
    }
    return b
  }

  on<K extends Key>(
    apiKey: K,
    handler: (
      req: Received & { request: ApiMessageTypes[K]['request'] },
    ) =>
      | Partial<ApiMessageTypes[K]['response']>
      | 'drop'
      | 'close'
      | Promise<Partial<ApiMessageTypes[K]['response']> | 'drop' | 'close'>,
  ): void {
    this.handlers.set(apiKey, async (r) => {
      const out = await handler(r as Received & { request: ApiMessageTypes[K]['request'] })
      if (out === 'drop' || out === 'close') return out
      return API_DEFINITIONS[apiKey].createResponse(out as never)
    })
  }

  requestsOf(apiKey: number): Received[] {
    return this.received.filter((r) => r.apiKey === apiKey)
  }

  /** Closes every client socket (the server keeps listening). */
  dropConnections(): void {
    for (const s of this.#sockets) s.destroy()
  }

  async close(): Promise<void> {
    this.dropConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  #onSocket(socket: net.Socket): void {
    this.#sockets.add(socket)
    socket.on('close', () => this.#sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    const decoder = new FrameDecoder()
    let chain = Promise.resolve()
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        // Answer in order, as a broker does.
        chain = chain
          .then(() => this.#handle(socket, frame))
          .catch(() => {
            socket.destroy()
          })
      }
    })
  }

  async #handle(socket: net.Socket, frame: Buffer): Promise<void> {
    const r = new Reader(frame)
    const apiKey = r.readInt16()
    const version = r.readInt16()
    r.offset = 0
    const def = API_DEFINITIONS[apiKey as Key]
    if (apiKey === 18) {
      const adv = this.apiVersions.get(18)
      if (adv !== undefined && version > adv.max) {
        // KIP-511: answer in the v0 layout with UNSUPPORTED_VERSION and our range.
        const header = readRequestHeader(r, 1)
        this.received.push({ apiKey, version, header, request: null })
        this.#write(socket, 18, 0, header.correlationId, {
          ...API_DEFINITIONS[18].createResponse(),
          errorCode: 35,
          apiKeys: [{ apiKey: 18, minVersion: adv.min, maxVersion: adv.max }],
        })
        return
      }
    }
    const header = readRequestHeader(r, requestHeaderVersion(apiKey, version))
    const request = def.readRequest(r, version)
    const received = { apiKey, version, header, request }
    this.received.push(received)
    let reply: Reply
    if (apiKey === 18 && !this.handlers.has(18)) {
      reply = {
        ...API_DEFINITIONS[18].createResponse(),
        apiKeys: [...this.apiVersions].map(([k, v]) => ({ apiKey: k, minVersion: v.min, maxVersion: v.max })),
      }
    } else {
      const h = this.handlers.get(apiKey)
      if (h === undefined) return
      reply = await h(received)
    }
    if (reply === 'drop') return
    if (reply === 'close') {
      socket.destroy()
      return
    }
    if ('delayMs' in reply && 'response' in reply) {
      const delayed = reply as { readonly delayMs: number; readonly response: object }
      await new Promise((res) => setTimeout(res, delayed.delayMs))
      reply = delayed.response
    }
    this.#write(socket, apiKey, version, header.correlationId, reply)
  }

  #write(socket: net.Socket, apiKey: number, version: number, correlationId: number, body: object): void {
    const def = API_DEFINITIONS[apiKey as Key]
    const w = new Writer()
    w.writeInt32(0)
    writeResponseHeader(w, { correlationId }, responseHeaderVersion(apiKey, version))
    ;(def.writeResponse as (w: Writer, m: object, v: number) => void)(w, body, version)
    const out = Buffer.from(w.finish())
    out.writeInt32BE(out.length - 4, 0)
    if (!socket.destroyed) socket.write(out)
  }
}
