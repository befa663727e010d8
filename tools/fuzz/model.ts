/**
 * What the fuzzer knows of the wire: random valid requests of any API version, built from the schema
 * files and encoded with the generated codec, and a map of every encoded frame (where each length,
 * varint, tagged field, record batch and plain value sits), read back from the bytes with the
 * schema. The map is what the structure-aware mutations aim at.
 */
import { crc32c } from '@node-rs/crc32'
import { encodeRequestFrame } from '../../src/protocol/frames.js'
import * as gen from '../../src/protocol/generated/index.js'
import type { ApiMessageTypes } from '../../src/protocol/generated/registry.js'
import {
  type FieldDef,
  type FieldType,
  loadSchemas,
  type SchemaDef,
  type StructDef,
} from '../codegen/schema.js'
import type { Rng } from './rng.js'

type Range = { lo: number; hi: number } | null
const inRange = (r: Range, v: number): boolean => r !== null && v >= r.lo && v <= r.hi

/** The request schemas by API key. */
export function requestSchemas(root: string): Map<number, SchemaDef> {
  const out = new Map<number, SchemaDef>()
  for (const s of loadSchemas(root)) if (s.type === 'request' && s.apiKey !== null) out.set(s.apiKey, s)
  return out
}

type Create = () => Record<string, unknown>
const G = gen as unknown as Record<string, Create>

// ---------------------------------------------------------------------------------------------
// Random valid requests

/** Names drawn often, so that requests meet the groups, topics and members other requests made. */
const NAMES = [
  'g',
  'g1',
  'g2',
  't',
  't1',
  't2',
  'kfuzz',
  'consumer',
  'streams',
  'range',
  'PLAIN',
  '__consumer_offsets',
]

export const INTERESTING: Record<string, readonly (number | bigint)[]> = {
  int8: [0, 1, -1, 2, 127, -128],
  int16: [0, 1, -1, 2, 32767, -32768, 255, 256],
  uint16: [0, 1, 65535, 32768],
  int32: [0, 1, -1, -2, 2147483647, -2147483648, 65535, 65536, 16777216, 1000, 30000, 2147483646],
  int64: [0n, 1n, -1n, -2n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 31n, 2n ** 32n, 1767225600000n],
}

function randomString(rng: Rng): string {
  const r = rng.int(100)
  if (r < 45) return rng.pick(NAMES)
  if (r < 85) {
    let s = ''
    const n = rng.int(16)
    for (let i = 0; i < n; i++) s += String.fromCharCode(rng.range(0x21, 0x7e))
    return s
  }
  if (r < 93) return ['', ' ', '.', '..', 'é', '\u0000', '\u{1f600}', 'a\u0301'][rng.int(8)]!
  return 'x'.repeat(rng.range(200, 3000))
}

function randomInt(rng: Rng, prim: string): number | bigint {
  if (rng.chance(0.3)) return rng.pick(INTERESTING[prim]!)
  const small = rng.range(-1, 5)
  return prim === 'int64' ? BigInt(small) : prim === 'uint16' ? Math.max(0, small) : small
}

function randomPrim(rng: Rng, prim: string): unknown {
  switch (prim) {
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'int64':
      return randomInt(rng, prim)
    case 'float64':
      return rng.pick([0, 1, -1, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 1e300])
    case 'bool':
      return rng.chance(0.5)
    case 'string':
      return randomString(rng)
    case 'uuid':
      return (rng.chance(0.3) ? Buffer.alloc(16) : rng.bytes(16)).toString('base64url')
    case 'records':
      return randomRecordBatch(rng)
    default:
      return rng.chance(0.05) ? rng.bytes(rng.range(1000, 5000)) : rng.bytes(rng.int(24))
  }
}

function arrayLength(rng: Rng, depth: number): number {
  const r = rng.int(100)
  if (depth > 2) return rng.int(2)
  if (r < 70) return rng.int(3)
  if (r < 96) return rng.range(3, 6)
  return rng.range(10, 60)
}

function randomValue(rng: Rng, t: FieldType, v: number, flexible: boolean, depth: number): unknown {
  if (t.kind === 'prim') return randomPrim(rng, t.prim)
  if (t.kind === 'struct') return randomStruct(rng, t.struct, v, flexible, depth + 1)
  const n = arrayLength(rng, depth)
  const out: unknown[] = []
  for (let i = 0; i < n; i++) out.push(randomValue(rng, t.elem, v, flexible, depth))
  return out
}

function presentAt(f: FieldDef, v: number): boolean {
  return f.taggedVersions !== null ? inRange(f.taggedVersions, v) : inRange(f.versions, v)
}

function randomStruct(
  rng: Rng,
  s: StructDef,
  v: number,
  flexible: boolean,
  depth = 0,
): Record<string, unknown> {
  const create = G[`create${s.tsName}`]
  if (typeof create !== 'function') throw new Error(`generated create${s.tsName} not found`)
  const out = create()
  for (const f of s.fields) {
    if (!presentAt(f, v)) continue
    if (f.taggedVersions !== null && rng.chance(0.5)) continue
    out[f.camel] =
      inRange(f.nullableVersions, v) && rng.chance(0.1) ? null : randomValue(rng, f.type, v, flexible, depth)
  }
  if (flexible && rng.chance(0.1)) {
    const known = new Set(s.fields.map((f) => f.tag))
    const tags = [...new Set([rng.int(8), rng.int(300)])].filter((t) => !known.has(t)).sort((a, b) => a - b)
    out.unknownTaggedFields = tags.map((tag) => ({ tag, data: rng.bytes(rng.int(6)) }))
  }
  return out
}

/** A random request body of `schema` at `version`, valid for the codec (not for the server). */
export function randomRequest(rng: Rng, schema: SchemaDef, version: number): Record<string, unknown> {
  return randomStruct(rng, schema.root, version, inRange(schema.flexibleVersions, version))
}

/** A complete request frame (size prefix, header, body) from a body the codec accepts. */
export function encodeFrame(
  apiKey: number,
  version: number,
  correlationId: number,
  clientId: string | null,
  body: Record<string, unknown>,
): Buffer {
  return encodeRequestFrame(
    apiKey as keyof ApiMessageTypes,
    version,
    correlationId,
    clientId,
    body as unknown as ApiMessageTypes[keyof ApiMessageTypes]['request'],
  )
}

// ---------------------------------------------------------------------------------------------
// Record batches (magic 2), for fields of type records

function zigzag(n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1
}

function varint(n: number): Buffer {
  const out: number[] = []
  let u = zigzag(n)
  while (u >= 0x80) {
    out.push((u % 128) | 0x80)
    u = Math.floor(u / 128)
  }
  out.push(u)
  return Buffer.from(out)
}

/** A v2 record batch with a correct CRC-32C and 0 to 3 records. */
export function randomRecordBatch(rng: Rng): Buffer {
  const records: Buffer[] = []
  const count = rng.int(4)
  for (let i = 0; i < count; i++) {
    const key = rng.chance(0.3) ? null : rng.bytes(rng.int(8))
    const value = rng.bytes(rng.int(16))
    const body = Buffer.concat([
      Buffer.from([0]),
      varint(rng.int(100)),
      varint(i),
      key === null ? varint(-1) : Buffer.concat([varint(key.length), key]),
      varint(value.length),
      value,
      varint(0),
    ])
    records.push(Buffer.concat([varint(body.length), body]))
  }
  const recs = Buffer.concat(records)
  const head = Buffer.alloc(61)
  head.writeBigInt64BE(0n, 0) // baseOffset
  head.writeInt32BE(49 + recs.length, 8) // batchLength: from partitionLeaderEpoch to the end
  head.writeInt32BE(-1, 12) // partitionLeaderEpoch
  head.writeInt8(2, 16) // magic
  head.writeInt16BE(0, 21) // attributes
  head.writeInt32BE(Math.max(0, count - 1), 23) // lastOffsetDelta
  head.writeBigInt64BE(1767225600000n, 27)
  head.writeBigInt64BE(1767225600000n, 35)
  head.writeBigInt64BE(-1n, 43) // producerId
  head.writeInt16BE(-1, 51) // producerEpoch
  head.writeInt32BE(-1, 53) // baseSequence
  head.writeInt32BE(count, 57)
  const batch = Buffer.concat([head, recs])
  batch.writeUInt32BE(crc32c(batch.subarray(21)), 17)
  return batch
}

/** Offsets of a record batch's header fields, from its start. */
export const BATCH_FIELDS = [
  { name: 'batchLength', at: 8, width: 4 },
  { name: 'partitionLeaderEpoch', at: 12, width: 4 },
  { name: 'magic', at: 16, width: 1 },
  { name: 'crc', at: 17, width: 4 },
  { name: 'attributes', at: 21, width: 2 },
  { name: 'lastOffsetDelta', at: 23, width: 4 },
  { name: 'producerId', at: 43, width: 8 },
  { name: 'producerEpoch', at: 51, width: 2 },
  { name: 'recordsCount', at: 57, width: 4 },
] as const

// ---------------------------------------------------------------------------------------------
// The map of an encoded frame

export type SpanKind =
  | 'int' // a fixed-width integer (width 1, 2, 4 or 8), bool, float64 or uuid
  | 'len16' // an int16 string length
  | 'len32' // an int32 bytes or array length
  | 'uvlen' // a compact (unsigned varint, N+1) string, bytes or array length
  | 'tagcount' // the number of tagged fields of a struct
  | 'tag' // a tagged field's tag
  | 'tagsize' // a tagged field's size
  | 'data' // string or bytes content
  | 'records' // a record batch (the content of a records field)

export interface Span {
  readonly kind: SpanKind
  readonly at: number
  readonly size: number
}

export interface TaggedSection {
  /** where the count varint starts */
  readonly at: number
  /** the offset just past the last tagged field */
  readonly end: number
  /** each tagged field, from its tag to the end of its data */
  readonly fields: readonly { readonly at: number; readonly end: number; readonly tag: number }[]
}

export interface FrameMap {
  readonly spans: Span[]
  readonly sections: TaggedSection[]
  /** where the body starts (just past the request header) */
  readonly bodyAt: number
}

export class FrameMapError extends Error {}

/** Reads an encoded request frame back against its schema and returns where every part sits. */
export function mapFrame(frame: Buffer, schema: SchemaDef, version: number): FrameMap {
  const spans: Span[] = []
  const sections: TaggedSection[] = []
  const flexible = inRange(schema.flexibleVersions, version)
  let pos = 4
  const need = (n: number) => {
    if (n < 0 || pos + n > frame.length) throw new FrameMapError(`runs past the frame at ${pos} (+${n})`)
  }
  const fixed = (kind: SpanKind, size: number): number => {
    need(size)
    spans.push({ kind, at: pos, size })
    const at = pos
    pos += size
    return size === 2 ? frame.readInt16BE(at) : size === 4 ? frame.readInt32BE(at) : 0
  }
  const uvarint = (kind: SpanKind): number => {
    const at = pos
    let value = 0
    let shift = 0
    for (;;) {
      need(1)
      const b = frame[pos++]!
      value += (b & 0x7f) * 2 ** shift
      if ((b & 0x80) === 0) break
      shift += 7
      if (shift > 28) throw new FrameMapError(`varint too long at ${at}`)
    }
    spans.push({ kind, at, size: pos - at })
    return value
  }
  const data = (kind: SpanKind, n: number) => {
    need(n)
    if (n > 0) spans.push({ kind, at: pos, size: n })
    pos += n
  }
  /** A field: a nullable struct is preceded by an int8 presence marker (-1: null). */
  const field = (f: FieldDef) => {
    if (f.type.kind === 'struct' && inRange(f.nullableVersions, version)) {
      need(1)
      const present = frame.readInt8(pos) >= 0
      fixed('int', 1)
      if (!present) return
    }
    type(f.type, f)
  }
  const type = (t: FieldType, f: FieldDef) => {
    const flexField = f.flexibleOverride === undefined ? flexible : inRange(f.flexibleOverride, version)
    if (t.kind === 'struct') return struct(t.struct)
    if (t.kind === 'array') {
      const n = flexible ? uvarint('uvlen') - 1 : fixed('len32', 4)
      for (let i = 0; i < n; i++) type(t.elem, f)
      return
    }
    switch (t.prim) {
      case 'int8':
      case 'bool':
        return void fixed('int', 1)
      case 'int16':
      case 'uint16':
        return void fixed('int', 2)
      case 'int32':
        return void fixed('int', 4)
      case 'int64':
      case 'float64':
        return void fixed('int', 8)
      case 'uuid':
        return void fixed('int', 16)
      case 'string': {
        const n = flexField ? uvarint('uvlen') - 1 : fixed('len16', 2)
        return n > 0 ? data('data', n) : undefined
      }
      default: {
        const n = flexField ? uvarint('uvlen') - 1 : fixed('len32', 4)
        return n > 0 ? data(t.prim === 'records' ? 'records' : 'data', n) : undefined
      }
    }
  }
  const struct = (s: StructDef) => {
    for (const f of s.fields) {
      if (!inRange(f.versions, version)) continue
      if (flexible && inRange(f.taggedVersions, version)) continue
      field(f)
    }
    if (!flexible) return
    const at = pos
    const count = uvarint('tagcount')
    const fields: { at: number; end: number; tag: number }[] = []
    for (let i = 0; i < count; i++) {
      const fieldAt = pos
      const tag = uvarint('tag')
      const size = uvarint('tagsize')
      const start = pos
      const known = s.fields.find((f) => f.tag === tag && inRange(f.taggedVersions, version))
      if (known) {
        field(known)
        if (pos !== start + size)
          throw new FrameMapError(`tagged field ${tag} at ${fieldAt} is not ${size} bytes`)
      } else data('data', size)
      fields.push({ at: fieldAt, end: pos, tag })
    }
    sections.push({ at, end: pos, fields })
  }

  // Request header: api key, version, correlation id, client id (always an int16-length string),
  // and tagged fields in header v2 (flexible versions).
  fixed('int', 2)
  fixed('int', 2)
  fixed('int', 4)
  const clientId = fixed('len16', 2)
  if (clientId > 0) data('data', clientId)
  if (flexible) {
    const at = pos
    const count = uvarint('tagcount')
    const fields: { at: number; end: number; tag: number }[] = []
    for (let i = 0; i < count; i++) {
      const fieldAt = pos
      const tag = uvarint('tag')
      data('data', uvarint('tagsize'))
      fields.push({ at: fieldAt, end: pos, tag })
    }
    sections.push({ at, end: pos, fields })
  }
  const bodyAt = pos
  struct(schema.root)
  if (pos !== frame.length) throw new FrameMapError(`${frame.length - pos} bytes left after the body`)
  return { spans, sections, bodyAt }
}
