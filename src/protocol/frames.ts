/**
 * Framing: the int32 size prefix, request/response headers, and whole-frame encode/decode.
 * Sans-io: no sockets here; a connection pushes chunks in and writes the returned buffers out.
 */
import { Buffer } from 'node:buffer'
import { DecodeError } from './errors-codec.js'
import {
  createApiVersionsResponse,
  createApiVersionsResponseApiVersion,
  writeApiVersionsResponse,
} from './generated/messages/ApiVersionsResponse.js'
import {
  type RequestHeader,
  readRequestHeader,
  writeRequestHeader,
} from './generated/messages/RequestHeader.js'
import { readResponseHeader, writeResponseHeader } from './generated/messages/ResponseHeader.js'
import {
  type ApiDefinition,
  type ApiMessageTypes,
  ApiKeys,
  apiDefinition,
  requestHeaderVersion,
  responseHeaderVersion,
} from './generated/registry.js'
import { Reader, type TaggedField } from './reader.js'
import { Writer } from './writer.js'

export const DEFAULT_MAX_FRAME_SIZE = 104857600

/** A size prefix that is negative or larger than the allowed maximum. The connection must be closed. */
export class FrameError extends Error {
  override name = 'FrameError'
  readonly size: number
  constructor(size: number, message: string) {
    super(message)
    this.size = size
  }
}

/**
 * Splits a byte stream into frames (the bytes after each int32 size prefix).
 *
 * A frame that lies inside one pushed chunk is returned as a view of that chunk (no copy); it stays
 * valid as long as the caller keeps that chunk unchanged. Bytes the decoder keeps past a `push`
 * call (an incomplete frame) are copied, never aliased, and a frame spread over several chunks is
 * assembled once, when it is complete — memory grows with the bytes received, not with the
 * announced size.
 */
export class FrameDecoder {
  readonly maxFrameSize: number
  #sizeBuf = Buffer.alloc(4)
  #sizeHave = 0
  #size = -1
  #pieces: Buffer[] = []
  #have = 0
  #failed: FrameError | null = null

  constructor(options: { maxFrameSize?: number } = {}) {
    this.maxFrameSize = options.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE
  }

  /** Bytes held for an incomplete frame. */
  get bufferedBytes(): number {
    return this.#sizeHave + this.#have
  }

  #checkSize(size: number): void {
    if (size < 0) this.#fail(size, `negative frame size ${size}`)
    if (size > this.maxFrameSize)
      this.#fail(size, `frame size ${size} exceeds the maximum ${this.maxFrameSize}`)
  }

  #fail(size: number, message: string): never {
    this.#failed = new FrameError(size, message)
    throw this.#failed
  }

  /** Feeds a chunk and returns every frame it completes, in order. Throws FrameError on a bad size. */
  push(chunk: Uint8Array): Buffer[] {
    if (this.#failed) throw this.#failed
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const frames: Buffer[] = []
    let off = 0
    const len = buf.length
    while (off < len) {
      if (this.#size < 0) {
        if (this.#sizeHave === 0 && len - off >= 4) {
          const size = buf.readInt32BE(off)
          this.#checkSize(size)
          if (len - off - 4 >= size) {
            frames.push(buf.subarray(off + 4, off + 4 + size))
            off += 4 + size
            continue
          }
          this.#size = size
          off += 4
        } else {
          const n = Math.min(4 - this.#sizeHave, len - off)
          buf.copy(this.#sizeBuf, this.#sizeHave, off, off + n)
          this.#sizeHave += n
          off += n
          if (this.#sizeHave < 4) break
          const size = this.#sizeBuf.readInt32BE(0)
          this.#sizeHave = 0
          this.#checkSize(size)
          this.#size = size
        }
      }
      const need = this.#size - this.#have
      const n = Math.min(need, len - off)
      if (n > 0) {
        this.#pieces.push(Buffer.from(buf.subarray(off, off + n))) // copy: the caller may reuse its chunk
        this.#have += n
        off += n
      }
      if (this.#have === this.#size) {
        frames.push(this.#pieces.length === 1 ? this.#pieces[0]! : Buffer.concat(this.#pieces, this.#size))
        this.#pieces = []
        this.#have = 0
        this.#size = -1
      }
    }
    return frames
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

/** Base class of the errors `decodeRequest` throws. `correlationId` is null when not even that could be read. */
export class RequestDecodeError extends Error {
  override name = 'RequestDecodeError'
  readonly apiKey: number | null
  readonly apiVersion: number | null
  readonly correlationId: number | null
  readonly header: RequestHeader | null
  constructor(
    message: string,
    fields: {
      apiKey: number | null
      apiVersion: number | null
      correlationId: number | null
      header: RequestHeader | null
      cause?: unknown
    },
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause })
    this.apiKey = fields.apiKey
    this.apiVersion = fields.apiVersion
    this.correlationId = fields.correlationId
    this.header = fields.header
  }
}

/** The API key has no definition here. Kafka closes the connection. */
export class UnknownApiKeyError extends RequestDecodeError {
  override name = 'UnknownApiKeyError'
}

/**
 * The API is known but not at this version. For ApiVersions, answer with
 * `encodeApiVersionsFallbackResponseFrame` (KIP-511); for anything else Kafka closes the connection.
 */
export class UnsupportedApiVersionError extends RequestDecodeError {
  override name = 'UnsupportedApiVersionError'
  readonly minVersion: number
  readonly maxVersion: number
  constructor(
    message: string,
    fields: ConstructorParameters<typeof RequestDecodeError>[1] & { minVersion: number; maxVersion: number },
  ) {
    super(message, fields)
    this.minVersion = fields.minVersion
    this.maxVersion = fields.maxVersion
  }
}

/** The header or body does not decode (`cause` is the DecodeError). Kafka answers INVALID_REQUEST or closes. */
export class MalformedRequestError extends RequestDecodeError {
  override name = 'MalformedRequestError'
}

export type DecodedRequest = {
  [K in keyof ApiMessageTypes]: {
    apiKey: K
    apiVersion: number
    header: RequestHeader
    body: ApiMessageTypes[K]['request']
  }
}[keyof ApiMessageTypes]

function isFlexibleVersion(def: ApiDefinition, version: number): boolean {
  return def.firstFlexibleVersion !== null && version >= def.firstFlexibleVersion
}

/**
 * Decodes one request frame (without its size prefix): header, then body at the header's version.
 * Bytes left after the body are ignored, as Kafka's broker does (it parses the body from the frame
 * and never checks what remains), so a client that pads its frames is still served.
 */
export function decodeRequest(frame: Uint8Array): DecodedRequest {
  const r = new Reader(frame)
  if (r.remaining < 8) {
    throw new MalformedRequestError('request frame shorter than its fixed header', {
      apiKey: r.remaining >= 2 ? r.buf.readInt16BE(0) : null,
      apiVersion: r.remaining >= 4 ? r.buf.readInt16BE(2) : null,
      correlationId: null,
      header: null,
      cause: new DecodeError('TRUNCATED', r.remaining, 'request header truncated'),
    })
  }
  const apiKey = r.buf.readInt16BE(0)
  const apiVersion = r.buf.readInt16BE(2)
  const correlationId = r.buf.readInt32BE(4)
  const def = apiDefinition(apiKey)
  if (def === undefined) {
    throw new UnknownApiKeyError(`unknown API key ${apiKey}`, {
      apiKey,
      apiVersion,
      correlationId,
      header: null,
    })
  }
  let header: RequestHeader
  try {
    header = readRequestHeader(r, isFlexibleVersion(def, apiVersion) ? 2 : 1)
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e
    const fields = { apiKey, apiVersion, correlationId, header: null, cause: e }
    if (apiVersion < def.minVersion || apiVersion > def.maxVersion)
      throw new UnsupportedApiVersionError(`${def.name} version ${apiVersion} is not supported`, {
        ...fields,
        minVersion: def.minVersion,
        maxVersion: def.maxVersion,
      })
    throw new MalformedRequestError(
      `malformed ${def.name} v${apiVersion} request header: ${e.message}`,
      fields,
    )
  }
  if (apiVersion < def.minVersion || apiVersion > def.maxVersion) {
    throw new UnsupportedApiVersionError(
      `${def.name} version ${apiVersion} is not supported (supported: ${def.minVersion}-${def.maxVersion})`,
      { apiKey, apiVersion, correlationId, header, minVersion: def.minVersion, maxVersion: def.maxVersion },
    )
  }
  let body: unknown
  try {
    body = def.readRequest(r, apiVersion)
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e
    throw new MalformedRequestError(`malformed ${def.name} v${apiVersion} request: ${e.message}`, {
      apiKey,
      apiVersion,
      correlationId,
      header,
      cause: e,
    })
  }
  return { apiKey, apiVersion, header, body } as DecodedRequest
}

function requireApi(apiKey: number): ApiDefinition {
  const def = apiDefinition(apiKey)
  if (def === undefined) throw new RangeError(`unknown API key ${apiKey}`)
  return def
}

/** A complete request frame: size prefix, request header (v1 or v2), body. */
export function encodeRequestFrame<K extends keyof ApiMessageTypes>(
  apiKey: K,
  version: number,
  correlationId: number,
  clientId: string | null,
  body: ApiMessageTypes[K]['request'],
): Buffer {
  const def = requireApi(apiKey)
  const w = new Writer()
  const at = w.reserveInt32()
  writeRequestHeader(
    w,
    { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId },
    requestHeaderVersion(apiKey, version),
  )
  def.writeRequest(w, body, version)
  w.patchInt32(at, w.length - 4)
  return w.finish()
}

// ---------------------------------------------------------------------------------------------
// Responses

/** A complete response frame: size prefix, response header (v0 or v1; ApiVersions always v0), body. */
export function encodeResponseFrame<K extends keyof ApiMessageTypes>(
  apiKey: K,
  version: number,
  correlationId: number,
  body: ApiMessageTypes[K]['response'],
): Buffer {
  const def = requireApi(apiKey)
  const w = new Writer()
  const at = w.reserveInt32()
  writeResponseHeader(w, { correlationId }, responseHeaderVersion(apiKey, version))
  def.writeResponse(w, body, version)
  w.patchInt32(at, w.length - 4)
  return w.finish()
}

export interface DecodedResponse<K extends keyof ApiMessageTypes> {
  correlationId: number
  headerUnknownTaggedFields?: TaggedField[]
  body: ApiMessageTypes[K]['response']
}

/** Decodes a response frame (without its size prefix) for a request sent at `version`. Throws DecodeError. */
export function decodeResponse<K extends keyof ApiMessageTypes>(
  apiKey: K,
  version: number,
  frame: Uint8Array,
): DecodedResponse<K> {
  const def = requireApi(apiKey)
  const r = new Reader(frame)
  const h = readResponseHeader(r, responseHeaderVersion(apiKey, version))
  const body = def.readResponse(r, version) as ApiMessageTypes[K]['response']
  r.expectEnd(`${def.name}Response`)
  const out: DecodedResponse<K> = { correlationId: h.correlationId, body }
  if (h.unknownTaggedFields !== undefined) out.headerUnknownTaggedFields = h.unknownTaggedFields
  return out
}

/** Reads the correlation id of a response frame without decoding the rest. */
export function peekCorrelationId(frame: Uint8Array): number {
  return new Reader(frame).readInt32()
}

/**
 * KIP-511: the answer to an ApiVersions request at a version this server does not support — a
 * v0-layout ApiVersionsResponse with UNSUPPORTED_VERSION (35) and ApiKeys holding only the
 * supported ApiVersions range, behind a v0 response header. The client retries with a lower version.
 */
export function encodeApiVersionsFallbackResponseFrame(
  correlationId: number,
  range: { minVersion: number; maxVersion: number } = requireApi(ApiKeys.ApiVersions),
): Buffer {
  const body = createApiVersionsResponse({
    errorCode: 35,
    apiKeys: [createApiVersionsResponseApiVersion({ apiKey: ApiKeys.ApiVersions, ...pickRange(range) })],
  })
  const w = new Writer(64)
  const at = w.reserveInt32()
  writeResponseHeader(w, { correlationId }, 0)
  writeApiVersionsResponse(w, body, 0)
  w.patchInt32(at, w.length - 4)
  return w.finish()
}

function pickRange(r: { minVersion: number; maxVersion: number }): {
  minVersion: number
  maxVersion: number
} {
  return { minVersion: r.minVersion, maxVersion: r.maxVersion }
}
