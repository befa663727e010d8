/** fast-check arbitraries built from the schema files: a random valid message for a given version. */
import fc from 'fast-check'
import * as gen from '../../src/protocol/generated/index.js'
import {
  type FieldDef,
  type FieldType,
  type SchemaDef,
  type StructDef,
  loadSchemas,
} from '../../tools/codegen/schema.js'

export const schemas: SchemaDef[] = loadSchemas(process.cwd())

type Fn = (...args: unknown[]) => unknown
const G = gen as unknown as Record<string, Fn>

export function fn(name: string): Fn {
  const f = G[name]
  if (typeof f !== 'function') throw new Error(`generated function ${name} not found`)
  return f
}

const inRange = (r: { lo: number; hi: number } | null, v: number) => r !== null && v >= r.lo && v <= r.hi

function isFlexible(s: SchemaDef, v: number): boolean {
  return inRange(s.flexibleVersions, v)
}

function prim(p: string): fc.Arbitrary<unknown> {
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
      return fc.double()
    case 'bool':
      return fc.boolean()
    case 'string':
      return fc.string({ unit: 'grapheme', maxLength: 6 })
    case 'uuid':
      return fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64url'))
    default:
      return fc.uint8Array({ maxLength: 6 })
  }
}

function knownTags(s: StructDef): Set<number> {
  return new Set(s.fields.filter((f) => f.tag !== null).map((f) => f.tag!))
}

export function unknownTagsArb(s: StructDef): fc.Arbitrary<{ tag: number; data: Uint8Array }[]> {
  const known = knownTags(s)
  return fc.uniqueArray(fc.integer({ min: 0, max: 200 }), { maxLength: 3 }).chain((tags) => {
    const t = tags.filter((x) => !known.has(x)).sort((a, b) => a - b)
    return fc.tuple(...t.map((tag) => fc.uint8Array({ maxLength: 4 }).map((data) => ({ tag, data }))))
  })
}

function typeArb(
  schema: SchemaDef,
  t: FieldType,
  v: number,
  withUnknown: boolean,
  depth: number,
): fc.Arbitrary<unknown> {
  if (t.kind === 'prim') return prim(t.prim)
  if (t.kind === 'struct') return structArb(schema, t.struct, v, withUnknown, depth + 1)
  return fc.array(typeArb(schema, t.elem, v, withUnknown, depth), { maxLength: depth > 2 ? 1 : 3 })
}

function presentAt(f: FieldDef, v: number): boolean {
  return f.taggedVersions !== null ? inRange(f.taggedVersions, v) : inRange(f.versions, v)
}

export function structArb(
  schema: SchemaDef,
  s: StructDef,
  v: number,
  withUnknown: boolean,
  depth = 0,
): fc.Arbitrary<Record<string, unknown>> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {}
  for (const f of s.fields) {
    if (!presentAt(f, v)) continue
    let a = typeArb(schema, f.type, v, withUnknown, depth)
    if (inRange(f.nullableVersions, v)) a = fc.option(a, { nil: null, freq: 4 })
    parts[f.camel] = a
  }
  const flex = withUnknown && isFlexible(schema, v)
  return fc.record(parts).chain((vals) => {
    const base = fn(`create${s.tsName}`)() as Record<string, unknown>
    Object.assign(base, vals)
    if (!flex) return fc.constant(base)
    return unknownTagsArb(s).map((u) => (u.length > 0 ? { ...base, unknownTaggedFields: u } : base))
  })
}

export function versionsOf(s: SchemaDef): number[] {
  const out: number[] = []
  for (let v = s.validVersions.lo; v <= s.validVersions.hi; v++) out.push(v)
  return out
}
