/**
 * Random messages valid for one version of a schema, for the Kafka cross-check. Wider than the
 * property tests' arbitraries (test/protocol/schema-arbitrary.ts): empty, unicode and long strings
 * (lengths past one varint byte), long arrays and bytes, known tagged fields both at and away from
 * their defaults, unknown tagged fields with large tags and sizes, nulls where the version allows.
 */
import fc from 'fast-check'
import * as gen from '../../src/protocol/generated/index.js'
import type { FieldDef, FieldType, Range, SchemaDef, StructDef } from '../codegen/schema.js'

type Fn = (...args: unknown[]) => unknown
const G = gen as unknown as Record<string, Fn>

export function generated(name: string): Fn {
  const f = G[name]
  if (typeof f !== 'function') throw new Error(`generated function ${name} not found`)
  return f
}

export const inRange = (r: Range | null, v: number): boolean => r !== null && v >= r.lo && v <= r.hi

export function isTaggedAt(f: FieldDef, v: number): boolean {
  return f.tag !== null && inRange(f.taggedVersions, v)
}

/** the value create<Struct>() gives a field */
export function defaultOf(s: StructDef, f: FieldDef): unknown {
  return (generated(`create${s.tsName}`)() as Record<string, unknown>)[f.camel]
}

const text = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  // 64..200 code units: past one length byte (non-compact: int16, compact: varint of length + 1)
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 64, maxLength: 200 }) },
)

const bytes = fc.oneof(
  { weight: 2, arbitrary: fc.constant(new Uint8Array(0)) },
  { weight: 6, arbitrary: fc.uint8Array({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 126, maxLength: 300 }) },
)

const uuid = fc
  .oneof(
    { weight: 1, arbitrary: fc.constant(new Uint8Array(16)) },
    { weight: 6, arbitrary: fc.uint8Array({ minLength: 16, maxLength: 16 }) },
  )
  .map((b) => Buffer.from(b).toString('base64url'))

function primitive(p: string): fc.Arbitrary<unknown> {
  switch (p) {
    case 'int8':
      return fc.integer({ min: -128, max: 127 })
    case 'int16':
      return fc.integer({ min: -32768, max: 32767 })
    case 'int32':
      return fc.integer({ min: -2147483648, max: 2147483647 })
    case 'int64':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
    case 'uint16':
      return fc.integer({ min: 0, max: 65535 })
    case 'float64':
      return fc.double({ noNaN: true, noDefaultInfinity: true })
    case 'bool':
      return fc.boolean()
    case 'string':
      return text
    case 'uuid':
      return uuid
    case 'bytes':
      return bytes
    default:
      throw new Error(`no arbitrary for ${p} fields`)
  }
}

function typeArb(t: FieldType, v: number, depth: number): fc.Arbitrary<unknown> {
  if (t.kind === 'prim') return primitive(t.prim)
  if (t.kind === 'struct') return structArb(t.struct, v, depth + 1)
  const elem = typeArb(t.elem, v, depth)
  const small = fc.array(elem, { maxLength: depth > 1 ? 1 : 3 })
  if (t.elem.kind !== 'prim' || depth > 1) return small
  // arrays of primitives also cross the one-byte length boundary (127 / 128 elements)
  return fc.oneof(
    { weight: 12, arbitrary: small },
    { weight: 1, arbitrary: fc.array(elem, { minLength: 126, maxLength: 130 }) },
  )
}

function unknownTags(s: StructDef): fc.Arbitrary<{ tag: number; data: Uint8Array }[]> {
  const known = new Set(s.fields.filter((f) => f.tag !== null).map((f) => f.tag!))
  // Kafka's writer uses tag 2^31-1 as its end marker (RawTaggedFieldWriter), so it cannot carry it
  const tag = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 40 }) },
    { weight: 1, arbitrary: fc.integer({ min: 41, max: 2 ** 31 - 2 }) },
  )
  const data = fc.oneof(
    { weight: 6, arbitrary: fc.uint8Array({ maxLength: 5 }) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 127, maxLength: 140 }) },
  )
  return fc
    .uniqueArray(fc.record({ tag, data }), { selector: (u) => u.tag, maxLength: 3 })
    .map((us) => us.filter((u) => !known.has(u.tag)).sort((a, b) => a.tag - b.tag))
}

const flexibleVersions = new WeakMap<StructDef, Range | null>()

/** a random instance of struct `s`, valid at version `v` of its schema */
export function structArb(s: StructDef, v: number, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {}
  for (const f of s.fields) {
    if (!inRange(f.versions, v)) continue
    let a = typeArb(f.type, v, depth)
    if (inRange(f.nullableVersions, v)) a = fc.option(a, { nil: null, freq: 4 })
    // a known tagged field is written only away from its default: try both
    if (isTaggedAt(f, v)) a = fc.oneof(a, fc.constant(defaultOf(s, f)))
    parts[f.camel] = a
  }
  const flexible = inRange(flexibleVersions.get(s) ?? null, v)
  const create = () => generated(`create${s.tsName}`)() as Record<string, unknown>
  if (!flexible) return fc.record(parts).map((values) => Object.assign(create(), values))
  return fc.tuple(fc.record(parts), fc.option(unknownTags(s), { freq: 2 })).map(([values, u]) => {
    const m = Object.assign(create(), values)
    if (u !== null && u.length > 0) m.unknownTaggedFields = u
    return m
  })
}

/** a random message of schema `s` at version `v` */
export function messageArb(s: SchemaDef, v: number): fc.Arbitrary<Record<string, unknown>> {
  for (const st of s.structs) flexibleVersions.set(st, s.flexibleVersions)
  return structArb(s.root, v)
}
