/** Loads Kafka-style JSON message/record schemas into a resolved model the emitter walks. */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Range {
  lo: number
  hi: number // Infinity for "N+"
}

/** Parses Kafka's version syntax: "N", "N+", "N-M", "none". Returns null for "none". */
export function parseVersions(s: string | undefined): Range | null {
  if (s === undefined || s === 'none' || s === '') return null
  const t = s.trim()
  let m = /^(\d+)\+$/.exec(t)
  if (m) return { lo: Number(m[1]), hi: Number.POSITIVE_INFINITY }
  m = /^(\d+)-(\d+)$/.exec(t)
  if (m) return { lo: Number(m[1]), hi: Number(m[2]) }
  m = /^(\d+)$/.exec(t)
  if (m) return { lo: Number(m[1]), hi: Number(m[1]) }
  throw new Error(`bad version range ${JSON.stringify(s)}`)
}

export function intersect(a: Range | null, b: Range | null): Range | null {
  if (a === null || b === null) return null
  const lo = Math.max(a.lo, b.lo)
  const hi = Math.min(a.hi, b.hi)
  return lo <= hi ? { lo, hi } : null
}

export function contains(outer: Range | null, inner: Range | null): boolean {
  if (inner === null) return true
  if (outer === null) return false
  return outer.lo <= inner.lo && outer.hi >= inner.hi
}

export const PRIMITIVES = [
  'int8',
  'int16',
  'int32',
  'int64',
  'uint16',
  'float64',
  'bool',
  'string',
  'uuid',
  'bytes',
  'records',
] as const
export type Primitive = (typeof PRIMITIVES)[number]

export type FieldType =
  | { kind: 'prim'; prim: Primitive }
  | { kind: 'array'; elem: FieldType }
  | { kind: 'struct'; struct: StructDef }

export interface FieldDef {
  name: string
  camel: string
  type: FieldType
  versions: Range | null
  nullableVersions: Range | null
  taggedVersions: Range | null
  tag: number | null
  rawDefault: unknown
  ignorable: boolean
  /** field-level flexibleVersions (only changes string/bytes encodings; RequestHeader.ClientId is "none") */
  flexibleOverride: Range | null | undefined
}

export interface StructDef {
  name: string
  tsName: string
  fields: FieldDef[]
}

export interface SchemaDef {
  file: string
  kind: 'message' | 'record'
  name: string
  type: string
  apiKey: number | null
  validVersions: Range
  flexibleVersions: Range | null
  root: StructDef
  structs: StructDef[] // root first, then nested in definition order
}

interface RawField {
  name: string
  type: string
  versions?: string
  nullableVersions?: string
  taggedVersions?: string
  tag?: number
  default?: unknown
  ignorable?: boolean
  flexibleVersions?: string
  fields?: RawField[]
}

interface RawSchema {
  name: string
  type: string
  apiKey?: number
  validVersions: string
  flexibleVersions?: string
  fields: RawField[]
  commonStructs?: { name: string; versions?: string; fields: RawField[] }[]
}

/** Kafka's schema files may carry // line comments. */
export function stripComments(text: string): string {
  return text.replace(/^\s*\/\/.*$/gm, '')
}

export function camelCase(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1)
}

export function parseSchema(file: string, kind: 'message' | 'record', text: string): SchemaDef {
  const raw = JSON.parse(stripComments(text)) as RawSchema
  const valid = parseVersions(raw.validVersions)
  if (valid === null) throw new Error(`${file}: no validVersions`)
  const structs: StructDef[] = []
  const byName = new Map<string, StructDef>()
  const pending: { def: StructDef; fields: RawField[] }[] = []

  const declare = (name: string, fields: RawField[]): StructDef => {
    if (byName.has(name)) throw new Error(`${file}: struct ${name} defined twice`)
    const def: StructDef = { name, tsName: raw.name + name, fields: [] }
    byName.set(name, def)
    pending.push({ def, fields })
    return def
  }
  for (const c of raw.commonStructs ?? []) declare(c.name, c.fields)

  const root: StructDef = { name: raw.name, tsName: raw.name, fields: [] }
  const resolveType = (f: RawField): FieldType => {
    let t = f.type
    const isArray = t.startsWith('[]')
    if (isArray) t = t.slice(2)
    let elem: FieldType
    if ((PRIMITIVES as readonly string[]).includes(t)) {
      if (f.fields) throw new Error(`${file}: ${f.name} is primitive but has fields`)
      elem = { kind: 'prim', prim: t as Primitive }
    } else {
      const def = f.fields ? declare(t, f.fields) : byName.get(t)
      if (!def) throw new Error(`${file}: unknown struct type ${t} (field ${f.name})`)
      elem = { kind: 'struct', struct: def }
    }
    return isArray ? { kind: 'array', elem } : elem
  }
  const convertFields = (fields: RawField[]): FieldDef[] =>
    fields.map((f) => {
      const taggedVersions = parseVersions(f.taggedVersions)
      // a tagged field may omit `versions`; it then exists exactly in its tagged versions
      const versions = f.versions === undefined ? taggedVersions : parseVersions(f.versions)
      return {
        name: f.name,
        camel: camelCase(f.name),
        type: resolveType(f),
        versions,
        nullableVersions: parseVersions(f.nullableVersions),
        taggedVersions,
        tag: f.tag ?? null,
        rawDefault: f.default,
        ignorable: f.ignorable === true,
        flexibleOverride: f.flexibleVersions === undefined ? undefined : parseVersions(f.flexibleVersions),
      }
    })

  // root fields first so inline structs are declared in schema order; common structs are
  // resolved lazily (declared up front so references resolve regardless of order).
  root.fields = convertFields(raw.fields)
  for (let i = 0; i < pending.length; i++) {
    const p = pending[i]!
    p.def.fields = convertFields(p.fields)
  }
  // order: root, then inline/common structs in declaration-resolution order, sorted for determinism by appearance
  const ordered: StructDef[] = [root]
  const seen = new Set<StructDef>([root])
  const visit = (s: StructDef) => {
    for (const f of s.fields) {
      const t = f.type.kind === 'array' ? f.type.elem : f.type
      if (t.kind === 'struct' && !seen.has(t.struct)) {
        seen.add(t.struct)
        ordered.push(t.struct)
        visit(t.struct)
      }
    }
  }
  visit(root)
  structs.push(...ordered)
  return {
    file,
    kind,
    name: raw.name,
    type: raw.type,
    apiKey: raw.apiKey ?? null,
    validVersions: valid,
    flexibleVersions: parseVersions(raw.flexibleVersions),
    root,
    structs,
  }
}

export function loadSchemas(root: string): SchemaDef[] {
  const out: SchemaDef[] = []
  for (const [dir, kind] of [
    ['messages', 'message'],
    ['records', 'record'],
    // Topograph's own coordinator records (no Kafka counterpart, so not compared with Kafka's).
    ['topograph-records', 'record'],
  ] as const) {
    const d = join(root, 'schemas', dir)
    if (!existsSync(d)) continue
    for (const f of readdirSync(d).sort()) {
      if (!f.endsWith('.json')) continue
      out.push(parseSchema(`schemas/${dir}/${f}`, kind, readFileSync(join(d, f), 'utf8')))
    }
  }
  return out
}
