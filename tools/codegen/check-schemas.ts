// Compares Topograph's schema files (schemas/messages, schemas/records) with Kafka's reference
// definitions. Every fact must be equal as Kafka's message generator would read it; only the
// "about" texts (and the reference's comments) are ignored.
//
// Usage: npx tsx tools/codegen/check-schemas.ts [--reference DIR] [--schemas DIR] [--kafka DIR]
//   --reference  Kafka's message directory (records in its records/ subfolder);
//                default ../shared/reference/kafka-messages relative to the repository root.
//   --schemas    our schema directory (messages/ and records/); default schemas/.
//   --kafka      the message directory of a Kafka source tree
//                (clients/src/main/resources/common/message); the files listed in SUPPLEMENTARY
//                are compared with it. Default: $TOPOGRAPH_KAFKA_MESSAGES, if set.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const DEFAULT_REFERENCE_DIR = resolve(REPO_ROOT, '../shared/reference/kafka-messages')
export const DEFAULT_SCHEMAS_DIR = resolve(REPO_ROOT, 'schemas')

/**
 * Message schemas of ours that the reference directory does not hold (APIs beyond the streams-group
 * core: configuration and offset look-ups). Their facts come from Kafka's own message directory;
 * they are compared with it when one is given (--kafka), and otherwise reported as not compared.
 * Any other file without a counterpart is an error.
 */
export const SUPPLEMENTARY = new Set([
  'DescribeConfigsRequest.json',
  'DescribeConfigsResponse.json',
  'IncrementalAlterConfigsRequest.json',
  'IncrementalAlterConfigsResponse.json',
  'ListOffsetsRequest.json',
  'ListOffsetsResponse.json',
])

/**
 * Record schemas of Kafka's transaction coordinator. The reference directory holds the group
 * coordinator's records only; these are compared with the transaction-coordinator record directory of
 * the full reference (`kafka-all/records/transaction-coordinator`), and reported as not compared when
 * that directory is absent.
 */
export const TRANSACTION_RECORDS = new Set(['TransactionLogKey.json', 'TransactionLogValue.json'])
export const DEFAULT_TRANSACTION_RECORDS_DIR = resolve(
  REPO_ROOT,
  '../shared/reference/kafka-all/records/transaction-coordinator',
)

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
  /** Reference files compared. */
  files: number
  /** Every difference found, one line each. */
  problems: string[]
  /** Supplementary files that could not be compared (no Kafka message directory given). */
  unchecked: string[]
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => e.name)
    .sort()
}

/** Checks both categories (messages, records) of our schemas against the reference directory. */
export function checkSchemas(
  options: {
    referenceDir?: string
    schemasDir?: string
    kafkaMessagesDir?: string
    transactionRecordsDir?: string
  } = {},
): CheckResult {
  const referenceDir = options.referenceDir ?? DEFAULT_REFERENCE_DIR
  const schemasDir = options.schemasDir ?? DEFAULT_SCHEMAS_DIR
  const kafkaDir = options.kafkaMessagesDir
  const txnDir = options.transactionRecordsDir ?? DEFAULT_TRANSACTION_RECORDS_DIR
  const result: CheckResult = { files: 0, problems: [], unchecked: [] }
  if (!existsSync(referenceDir)) {
    result.problems.push(`reference directory not found: ${referenceDir}`)
    return result
  }
  const categories = [
    { ref: referenceDir, ours: join(schemasDir, 'messages'), label: 'messages' },
    { ref: join(referenceDir, 'records'), ours: join(schemasDir, 'records'), label: 'records' },
  ]
  for (const cat of categories) {
    if (!existsSync(cat.ref)) continue
    const refFiles = jsonFiles(cat.ref)
    if (refFiles.length === 0) continue
    const ourFiles = existsSync(cat.ours) ? jsonFiles(cat.ours) : []
    for (const name of refFiles) {
      const label = `${cat.label}/${name}`
      result.files++
      if (!ourFiles.includes(name)) {
        result.problems.push(`${label}: missing in ${cat.ours}`)
        continue
      }
      compareFile(label, join(cat.ours, name), join(cat.ref, name), result)
    }
    for (const name of ourFiles) {
      if (refFiles.includes(name)) continue
      const label = `${cat.label}/${name}`
      if (cat.label === 'records' && TRANSACTION_RECORDS.has(name)) {
        if (!existsSync(join(txnDir, name))) {
          result.unchecked.push(label)
        } else {
          result.files++
          compareFile(label, join(cat.ours, name), join(txnDir, name), result)
        }
      } else if (cat.label !== 'messages' || !SUPPLEMENTARY.has(name)) {
        result.problems.push(`${label}: no reference counterpart`)
      } else if (kafkaDir === undefined) {
        result.unchecked.push(label)
      } else if (!existsSync(join(kafkaDir, name))) {
        result.problems.push(`${label}: not found in the Kafka message directory ${kafkaDir}`)
      } else {
        result.files++
        compareFile(label, join(cat.ours, name), join(kafkaDir, name), result)
      }
    }
  }
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
  let schemasDir: string | undefined
  const fromEnv = process.env.TOPOGRAPH_KAFKA_MESSAGES
  let kafkaMessagesDir = fromEnv ? resolve(fromEnv) : undefined
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--reference' || a === '--schemas' || a === '--kafka') {
      const v = argv[++i]
      if (v === undefined) {
        console.error(`${a} needs a directory`)
        return 2
      }
      if (a === '--reference') referenceDir = resolve(v)
      else if (a === '--schemas') schemasDir = resolve(v)
      else kafkaMessagesDir = resolve(v)
    } else {
      console.error(`unknown argument: ${a}`)
      console.error('usage: check-schemas [--reference DIR] [--schemas DIR] [--kafka DIR]')
      return 2
    }
  }
  const { files, problems, unchecked } = checkSchemas({ referenceDir, schemasDir, kafkaMessagesDir })
  if (problems.length > 0) {
    for (const p of problems) console.error(p)
    console.error(`schemas: ${problems.length} difference(s) from the reference`)
    return 1
  }
  console.log(`schemas: ${files} files match the reference`)
  if (unchecked.length > 0) {
    console.log(
      `schemas: ${unchecked.length} supplementary file(s) not compared (pass --kafka with a Kafka message directory): ${unchecked.join(', ')}`,
    )
  }
  return 0
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2))
}
