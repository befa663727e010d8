/**
 * Client-side framing on top of the generated codec: a request frame is `int32 size`, the request
 * header (v1 or v2) and the body; a response frame is `int32 size`, the response header (v0 or v1;
 * ApiVersions always v0) and the body.
 */
import { Buffer } from 'node:buffer'
import {
  DecodeError,
  UnsupportedVersionError as CodecUnsupportedVersionError,
} from '../../protocol/errors-codec.js'
import { writeRequestHeader } from '../../protocol/generated/messages/RequestHeader.js'
import { readResponseHeader } from '../../protocol/generated/messages/ResponseHeader.js'
import {
  API_DEFINITIONS,
  type ApiMessageTypes,
  requestHeaderVersion,
  responseHeaderVersion,
} from '../../protocol/generated/registry.js'
import { Reader } from '../../protocol/reader.js'
import { Writer } from '../../protocol/writer.js'
import { UnsupportedVersionError } from './errors.js'

export type ApiKeyNumber = keyof ApiMessageTypes
export type RequestOf<K extends ApiKeyNumber> = ApiMessageTypes[K]['request']
export type ResponseOf<K extends ApiKeyNumber> = ApiMessageTypes[K]['response']

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1)
}

/**
 * Encodes one request frame. A field the version cannot carry fails with Kafka's message
 * `Attempted to write a non-default <field> at version <v>`.
 */
export function encodeRequestFrame<K extends ApiKeyNumber>(
  apiKey: K,
  version: number,
  correlationId: number,
  clientId: string | null,
  request: RequestOf<K>,
): Buffer {
  const def = API_DEFINITIONS[apiKey]
  const w = new Writer(128)
  const sizeAt = w.length
  w.writeInt32(0)
  writeRequestHeader(
    w,
    { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId },
    requestHeaderVersion(apiKey, version),
  )
  try {
    ;(def.writeRequest as (w: Writer, m: RequestOf<K>, v: number) => void)(w, request, version)
  } catch (e) {
    if (e instanceof CodecUnsupportedVersionError) {
      throw new UnsupportedVersionError(
        `Attempted to write a non-default ${lowerFirst(e.field)} at version ${e.version}`,
        null,
        e,
      )
    }
    throw e
  }
  const out = Buffer.from(w.finish())
  out.writeInt32BE(out.length - 4, sizeAt)
  return out
}

/** Reads the correlation id of a response frame body (the bytes after the size). */
export function peekCorrelationId(frame: Uint8Array): number {
  if (frame.byteLength < 4) throw new DecodeError('TRUNCATED', 0, 'response frame shorter than a header')
  return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).readInt32BE(0)
}

/**
 * Decodes a response frame body. An ApiVersions answer to a version the broker does not support
 * has the v0 layout with error 35 (KIP-511), so that case is read as v0.
 */
export function decodeResponseFrame<K extends ApiKeyNumber>(
  apiKey: K,
  version: number,
  frame: Uint8Array,
): ResponseOf<K> {
  const def = API_DEFINITIONS[apiKey]
  const r = new Reader(frame)
  readResponseHeader(r, responseHeaderVersion(apiKey, version))
  let bodyVersion = version
  if (apiKey === 18 && version > 0 && r.remaining >= 2 && r.buf.readInt16BE(r.offset) === 35) bodyVersion = 0
  const m = def.readResponse(r, bodyVersion) as ResponseOf<K>
  r.expectEnd(def.name + 'Response')
  return m
}

/** Splits a byte stream into frames (size prefix removed), keeping partial frames across chunks. */
export class FrameDecoder {
  #chunks: Buffer[] = []
  #buffered = 0
  readonly #maxFrameSize: number

  constructor(maxFrameSize = 100 * 1024 * 1024) {
    this.#maxFrameSize = maxFrameSize
  }

  /** Adds a chunk and returns every complete frame now available. */
  push(chunk: Buffer): Buffer[] {
    this.#chunks.push(chunk)
    this.#buffered += chunk.length
    const out: Buffer[] = []
    for (;;) {
      if (this.#buffered < 4) break
      const head = this.#chunks[0]!.length >= 4 ? this.#chunks[0]! : this.#merge()
      const size = head.readInt32BE(0)
      if (size < 0 || size > this.#maxFrameSize) {
        throw new DecodeError('INVALID_VALUE', 0, `frame size ${size} is outside 0..${this.#maxFrameSize}`)
      }
      if (this.#buffered < size + 4) break
      const all = this.#merge()
      out.push(Buffer.from(all.subarray(4, 4 + size)))
      const rest = all.subarray(4 + size)
      this.#chunks = rest.length > 0 ? [rest] : []
      this.#buffered = rest.length
    }
    return out
  }

  #merge(): Buffer {
    if (this.#chunks.length > 1) this.#chunks = [Buffer.concat(this.#chunks)]
    return this.#chunks[0]!
  }
}
