// Compares Topograph's schema files (schemas/messages, schemas/records) with Kafka's reference
// definitions. Every fact must be equal as Kafka's message generator would read it; only the
// "about" texts (and the reference's comments) are ignored.
//
// Two reference folders are used:
//   - the full set (../shared/reference/kafka-all): Kafka's messages/ and records/<coordinator>/
//     of one trunk commit. EVERY schema file of ours must have a counterpart there and equal it,
//     so nothing is defined by hand.
//   - the core set (../shared/reference/kafka-messages, records in its records/ subfolder): the
//     files Topograph must carry. Each must exist in ours and equal it.
// When neither folder exists (a checkout without ../shared), the check says it was not run (and
// fails when TOPOGRAPH_REQUIRE_SHARED=1, as the tests that need ../shared do).
//
// Usage: npx tsx tools/codegen/check-schemas.ts [--all DIR] [--reference DIR] [--schemas DIR]
//   --all        the full reference folder; default ../shared/reference/kafka-all.
//   --reference  the core reference folder; default ../shared/reference/kafka-messages.
//   --schemas    our schema directory (messages/ and records/); default schemas/.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const DEFAULT_REFERENCE_DIR = resolve(REPO_ROOT, '../shared/reference/kafka-messages')
export const DEFAULT_ALL_DIR = resolve(REPO_ROOT, '../shared/reference/kafka-all')
export const DEFAULT_SCHEMAS_DIR = resolve(REPO_ROOT, 'schemas')

/** Keys that carry no fact and are never compared. */
const IGNORED_KEYS = new Set(['about'])
/** Keys whose absence Kafka reads as false. */
const FALSE_BY_DEFAULT = new Set(['ignorable', 'mapKey', 'zeroCopy', 'latestVersionUnstable'])
/** Version-range keys whose absence Kafka reads as "none". */
const NONE_BY_DEFAULT = new Set(['nullableVersions', 'taggedVersions'])
/** Keys holding a version range. */
const VERSION_KEYS = new Set([
  'versions',
  'nullableVersions',
  'taggedVersions',
  'flexibleVersions',
  'validVersions',
])
const INT_TYPES = new Set(['int8', 'int16', 'int32', 'int64', 'uint16'])

/**
 * Removes `//` line comments and `/* *\/` block comments outside of strings, as Kafka's JSON reader
 * (Jackson with comments allowed) skips them.
 */
export function stripJsonComments(text: string): string {
  let out = ''
  let i = 0
  let inString = false
  while (i < text.length) {
    const c = text[i]
    if (inString) {
      out += c
      if (c === '\\') {
        out += text[i + 1] ?? ''
        i += 2
        continue
      }
      if (c === '"') inString = false
      i++
      continue
    }
    if (c === '"') {
      inString = true
      out += c
      i++
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      i = end === -1 ? text.length : end + 2
    } else {
      out += c
      i++
    }
  }
  return out
}

/** Parses a schema file that may contain comments (Kafka's reference files do). */
export function parseSchemaText(text: string): JsonObject {
  const value = JSON.parse(stripJsonComments(text)) as Json
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error('schema is not a JSON object')
  }
  return value
}

function isObject(v: Json | undefined): v is JsonObject {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v)
}

function show(v: Json | undefined): string {
  return v === undefined ? '(absent)' : JSON.stringify(v)
}

/** Canonical form of a version range: "none", "N", "N+" or "N-M". */
function normaliseVersions(v: Json | undefined): string {
  if (typeof v !== 'string') return `raw:${JSON.stringify(v ?? null)}`
  const s = v.trim()
  if (s === 'none') return 'none'
  let m = /^(\d+)\+$/.exec(s)
  if (m) return `${Number(m[1])}+`
  m = /^(\d+)-(\d+)$/.exec(s)
  if (m) return Number(m[1]) === Number(m[2]) ? `${Number(m[1])}` : `${Number(m[1])}-${Number(m[2])}`
  m = /^(\d+)$/.exec(s)
  if (m) return `${Number(m[1])}`
  return `raw:${s}`
}

/**
 * A field default as Kafka's generator interprets it. Jackson hands the generator the default as
 * text (a JSON number -1 becomes "-1"; a JSON null becomes the empty string, which is NOT the same
 * as the text "null"), and the meaning of that text depends on the field type.
 */
export function normaliseDefault(value: Json | undefined, type: string): string {
  const text = value === undefined || value === null ? '' : typeof value === 'string' ? value : String(value)
  const t = text.trim()
  if (INT_TYPES.has(type)) {
    if (t === '') return 'int:0'
    try {
      const neg = t.startsWith('-')
      const body = neg ? t.slice(1) : t
      const n = body.startsWith('0x') ? BigInt(body) : /^\d+$/.test(body) ? BigInt(body) : null
      if (n === null) return `invalid:${text}`
      return `int:${neg ? -n : n}`
    } catch {
      return `invalid:${text}`
    }
  }
  if (type === 'float64') {
    if (t === '') return 'float:0'
    const n = Number(t)
    return Number.isNaN(n) ? `invalid:${text}` : `float:${n}`
  }
  if (type === 'bool') {
    if (t === '') return 'bool:false'
    if (t === 'true' || t === 'false') return `bool:${t}`
    return `invalid:${text}`
  }
  if (type === 'string') {
    // Strings keep their exact text; only the literal "null" means null.
    return text === 'null' ? 'null' : `string:${text}`
  }
  if (type === 'uuid') {
    return t === '' || t === 'AAAAAAAAAAAAAAAAAAAAAA' ? 'uuid:zero' : `uuid:${t}`
  }
  // bytes, records, arrays and structs: only "" (empty / all defaults) and "null" are meaningful.
  if (t === '') return 'empty'
  if (t === 'null') return 'null'
  return `invalid:${text}`
}

function normaliseFact(key: string, value: Json | undefined, type: string): string {
  if (key === 'default') return normaliseDefault(value, type)
  if (FALSE_BY_DEFAULT.has(key)) return value === undefined ? 'false' : JSON.stringify(value)
  if (NONE_BY_DEFAULT.has(key) && value === undefined) return 'none'
  if (VERSION_KEYS.has(key)) return value === undefined ? '(absent)' : normaliseVersions(value)
  if (key === 'entityType' && (value === undefined || value === 'unknown')) return 'unknown'
  return value === undefined ? '(absent)' : JSON.stringify(value)
}

/** Compares the plain facts of two objects, leaving out nested field lists. */
function compareFacts(path: string, ours: JsonObject, ref: JsonObject, problems: string[]): void {
  const keys: string[] = []
  for (const k of [...Object.keys(ref), ...Object.keys(ours)]) {
    if (!keys.includes(k) && !IGNORED_KEYS.has(k) && k !== 'fields' && k !== 'commonStructs') keys.push(k)
  }
  const type = typeof ref.type === 'string' ? ref.type : typeof ours.type === 'string' ? ours.type : ''
  for (const key of keys) {
    if (normaliseFact(key, ours[key], type) !== normaliseFact(key, ref[key], type)) {
      problems.push(`${path}${key}: ours ${show(ours[key])} vs reference ${show(ref[key])}`)
    }
  }
}

function fieldName(f: Json): string {
  return isObject(f) && typeof f.name === 'string' ? f.name : '?'
}

/** Compares two field lists by name, then position, then each matched pair recursively. */
function compareFieldLists(
  path: string,
  key: 'fields' | 'commonStructs',
  ours: Json | undefined,
  ref: Json | undefined,
  problems: string[],
): void {
  if (ours === undefined && ref === undefined) return
  if (!Array.isArray(ours) || !Array.isArray(ref)) {
    problems.push(`${path}${key}: ours ${show(ours)} vs reference ${show(ref)}`)
    return
  }
  const ourNames = ours.map(fieldName)
  const refNames = ref.map(fieldName)
  ref.forEach((refItem, i) => {
    const name = refNames[i]
    const at = `${path}${key}[${i}] ${name}`
    const j = ourNames.indexOf(name)
    if (j === -1) {
      problems.push(`${at}: missing in ours`)
      return
    }
    if (j !== i) problems.push(`${at}: position ours ${j} vs reference ${i}`)
    const ourItem = ours[j]
    if (!isObject(ourItem) || !isObject(refItem)) {
      problems.push(`${at}: not an object`)
      return
    }
    compareNode(`${at}.`, ourItem, refItem, problems)
  })
  ours.forEach((_, j) => {
    const name = ourNames[j]
    if (!refNames.includes(name)) problems.push(`${path}${key}[${j}] ${name}: not in the reference`)
  })
}

function compareNode(path: string, ours: JsonObject, ref: JsonObject, problems: string[]): void {
  compareFacts(path, ours, ref, problems)
  compareFieldLists(path, 'fields', ours.fields, ref.fields, problems)
  compareFieldLists(path, 'commonStructs', ours.commonStructs, ref.commonStructs, problems)
}

/**
 * Compares one of our schema objects with Kafka's. Returns one line per difference, each starting
 * with `file: ` and naming the path of the differing fact, e.g.
 * `X.json: fields[7] TopologyDescriptionRequired.versions: ours "0+" vs reference "1+"`.
 */
export function compareSchema(file: string, ours: JsonObject, reference: JsonObject): string[] {
  const problems: string[] = []
  compareNode('', ours, reference, problems)
  return problems.map((p) => `${file}: ${p}`)
}

export interface CheckResult {
  /** Comparisons made (a file compared with both reference folders counts twice). */
  files: number
  /** Every difference found, one line each. */
  problems: string[]
  /** Reference folders that do not exist and were therefore not compared with. */
  notFound: string[]
}

function jsonFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => e.name)
    .sort()
}

/** Every JSON file under `dir` (any depth), by file name; a name found twice is reported. */
function jsonFilesDeep(dir: string, problems: string[]): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((x, y) => (x.name < y.name ? -1 : 1))) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile() && e.name.endsWith('.json')) {
        if (out.has(e.name))
          problems.push(`reference ${dir} holds ${e.name} twice: ${out.get(e.name)} and ${p}`)
        else out.set(e.name, p)
      }
    }
  }
  if (existsSync(dir)) walk(dir)
  return out
}

/**
 * Checks our schemas against both reference folders: every file of ours against its counterpart in
 * the full set, and every file of the core set against ours. A folder that does not exist is listed
 * in `notFound` and skipped.
 */
export function checkSchemas(
  options: { referenceDir?: string; allDir?: string; schemasDir?: string } = {},
): CheckResult {
  const referenceDir = options.referenceDir ?? DEFAULT_REFERENCE_DIR
  const allDir = options.allDir ?? DEFAULT_ALL_DIR
  const schemasDir = options.schemasDir ?? DEFAULT_SCHEMAS_DIR
  const result: CheckResult = { files: 0, problems: [], notFound: [] }
  const categories = [
    {
      label: 'messages',
      ours: join(schemasDir, 'messages'),
      core: referenceDir,
      all: join(allDir, 'messages'),
    },
    {
      label: 'records',
      ours: join(schemasDir, 'records'),
      core: join(referenceDir, 'records'),
      all: join(allDir, 'records'),
    },
  ]

  // 1. The full set: each file of ours has a counterpart and equals it.
  if (!existsSync(allDir)) result.notFound.push(allDir)
  else {
    for (const cat of categories) {
      const reference = jsonFilesDeep(cat.all, result.problems)
      for (const name of jsonFiles(cat.ours)) {
        const label = `${cat.label}/${name}`
        const ref = reference.get(name)
        result.files++
        if (ref === undefined) result.problems.push(`${label}: no counterpart in ${cat.all}`)
        else compareFile(label, join(cat.ours, name), ref, result)
      }
    }
  }

  // 2. The core set: each reference file is ours too, and equal.
  if (!existsSync(referenceDir)) result.notFound.push(referenceDir)
  else {
    for (const cat of categories) {
      const ourFiles = jsonFiles(cat.ours)
      for (const name of jsonFiles(cat.core)) {
        const label = `${cat.label}/${name}`
        result.files++
        if (!ourFiles.includes(name)) result.problems.push(`${label}: missing in ${cat.ours}`)
        else compareFile(label, join(cat.ours, name), join(cat.core, name), result)
      }
    }
  }
  // The two folders hold the same files for the core set, so a difference is found twice.
  result.problems = [...new Set(result.problems)]
  return result
}

function compareFile(label: string, oursPath: string, refPath: string, result: CheckResult): void {
  let ours: JsonObject
  let ref: JsonObject
  try {
    ref = parseSchemaText(readFileSync(refPath, 'utf8'))
  } catch (e) {
    result.problems.push(`${label}: reference file does not parse: ${(e as Error).message}`)
    return
  }
  try {
    ours = parseSchemaText(readFileSync(oursPath, 'utf8'))
  } catch (e) {
    result.problems.push(`${label}: our file does not parse: ${(e as Error).message}`)
    return
  }
  result.problems.push(...compareSchema(label, ours, ref))
}

function main(argv: string[]): number {
  let referenceDir: string | undefined
  let allDir: string | undefined
  let schemasDir: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--reference' || a === '--all' || a === '--schemas') {
      const v = argv[++i]
      if (v === undefined) {
        console.error(`${a} needs a directory`)
        return 2
      }
      if (a === '--reference') referenceDir = resolve(v)
      else if (a === '--all') allDir = resolve(v)
      else schemasDir = resolve(v)
    } else {
      console.error(`unknown argument: ${a}`)
      console.error('usage: check-schemas [--all DIR] [--reference DIR] [--schemas DIR]')
      return 2
    }
  }
  const { files, problems, notFound } = checkSchemas({ referenceDir, allDir, schemasDir })
  if (problems.length > 0) {
    for (const p of problems) console.error(p)
    console.error(`schemas: ${problems.length} difference(s) from the reference`)
    return 1
  }
  if (files === 0) {
    // CI sets TOPOGRAPH_REQUIRE_SHARED=1: there a missing reference fails instead of passing unrun.
    if (process.env.TOPOGRAPH_REQUIRE_SHARED === '1') {
      console.error(
        `schemas: no reference folder found (${notFound.join(', ')}) and TOPOGRAPH_REQUIRE_SHARED=1`,
      )
      return 1
    }
    console.log(`schemas: NOT RUN: no reference folder found (${notFound.join(', ')})`)
    return 0
  }
  console.log(`schemas: ${files} comparisons, all equal to the reference`)
  for (const d of notFound) console.log(`schemas: not compared with ${d} (not found)`)
  return 0
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2))
}
