/** Turns the schema folder into the full set of generated files (path → content). Pure and deterministic. */
import { emitSchema, header } from './emit.js'
import { type SchemaDef, loadSchemas } from './schema.js'

export const GENERATED_DIR = 'src/protocol/generated'

function apiName(requestName: string): string {
  return requestName.replace(/Request$/, '')
}

function emitRegistry(schemas: SchemaDef[]): string {
  const requests = schemas.filter((s) => s.type === 'request').sort((a, b) => a.apiKey! - b.apiKey!)
  const responses = new Map(schemas.filter((s) => s.type === 'response').map((s) => [s.apiKey!, s]))
  const L: string[] = []
  L.push(header('schemas/messages/*Request.json, *Response.json'))
  L.push("import type { Reader } from '../reader.js'")
  L.push("import type { Writer } from '../writer.js'")
  for (const rq of requests) {
    const rs = responses.get(rq.apiKey!)
    if (!rs) throw new Error(`no response schema for ${rq.name}`)
    const fns = (n: string) => `type ${n}, create${n}, read${n}, write${n}`
    L.push(`import { ${fns(rq.name)} } from './messages/${rq.name}.js'`)
    L.push(`import { ${fns(rs.name)} } from './messages/${rs.name}.js'`)
  }
  L.push('')
  L.push('/** Kafka API keys of every API with a schema, by Kafka name. */')
  L.push('export const ApiKeys = {')
  for (const rq of requests) L.push(`  ${apiName(rq.name)}: ${rq.apiKey},`)
  L.push('} as const')
  L.push('export type ApiKey = (typeof ApiKeys)[keyof typeof ApiKeys]')
  L.push('')
  L.push('/** One API: its version range, first flexible version and body codecs. */')
  L.push('export interface ApiDefinition<Req = unknown, Res = unknown> {')
  L.push('  readonly name: string')
  L.push('  readonly apiKey: number')
  L.push('  readonly minVersion: number')
  L.push('  readonly maxVersion: number')
  L.push('  /** null when no valid version is flexible */')
  L.push('  readonly firstFlexibleVersion: number | null')
  L.push('  createRequest(init?: Partial<Req>): Req')
  L.push('  readRequest(r: Reader, version: number): Req')
  L.push('  writeRequest(w: Writer, m: Req, version: number): void')
  L.push('  createResponse(init?: Partial<Res>): Res')
  L.push('  readResponse(r: Reader, version: number): Res')
  L.push('  writeResponse(w: Writer, m: Res, version: number): void')
  L.push('}')
  L.push('')
  L.push('/** Request and response body types by API key. */')
  L.push('export interface ApiMessageTypes {')
  for (const rq of requests) {
    const rs = responses.get(rq.apiKey!)!
    L.push(`  ${rq.apiKey}: { request: ${rq.name}; response: ${rs.name} }`)
  }
  L.push('}')
  L.push('')
  L.push('export const API_DEFINITIONS: {')
  L.push(
    '  readonly [K in keyof ApiMessageTypes]: ApiDefinition<ApiMessageTypes[K]["request"], ApiMessageTypes[K]["response"]>',
  )
  L.push('} = {')
  for (const rq of requests) {
    const rs = responses.get(rq.apiKey!)!
    if (rq.validVersions.lo !== rs.validVersions.lo || rq.validVersions.hi !== rs.validVersions.hi)
      throw new Error(`${rq.name} and ${rs.name} disagree on validVersions`)
    const ff = rq.flexibleVersions === null ? null : Math.max(rq.flexibleVersions.lo, rq.validVersions.lo)
    const flex = ff !== null && ff <= rq.validVersions.hi ? ff : null
    L.push(`  ${rq.apiKey}: {`)
    L.push(`    name: '${apiName(rq.name)}',`)
    L.push(`    apiKey: ${rq.apiKey},`)
    L.push(`    minVersion: ${rq.validVersions.lo},`)
    L.push(`    maxVersion: ${rq.validVersions.hi},`)
    L.push(`    firstFlexibleVersion: ${flex},`)
    L.push(`    createRequest: create${rq.name},`)
    L.push(`    readRequest: read${rq.name},`)
    L.push(`    writeRequest: write${rq.name},`)
    L.push(`    createResponse: create${rs.name},`)
    L.push(`    readResponse: read${rs.name},`)
    L.push(`    writeResponse: write${rs.name},`)
    L.push('  },')
  }
  L.push('}')
  L.push('')
  L.push('const BY_KEY = new Map<number, ApiDefinition>(')
  L.push('  Object.values(API_DEFINITIONS).map((d: ApiDefinition) => [d.apiKey, d]),')
  L.push(')')
  L.push('')
  L.push('/** The definition of `apiKey`, or undefined when the API has no schema here. */')
  L.push('export function apiDefinition(apiKey: number): ApiDefinition | undefined {')
  L.push('  return BY_KEY.get(apiKey)')
  L.push('}')
  L.push('')
  L.push('/** All API definitions, by ascending API key. */')
  L.push('export function allApiDefinitions(): ApiDefinition[] {')
  L.push('  return [...BY_KEY.values()]')
  L.push('}')
  L.push('')
  L.push('function isFlexible(apiKey: number, version: number): boolean {')
  L.push('  const d = BY_KEY.get(apiKey)')
  L.push("  if (d === undefined) throw new RangeError('unknown API key ' + apiKey)")
  L.push('  return d.firstFlexibleVersion !== null && version >= d.firstFlexibleVersion')
  L.push('}')
  L.push('')
  L.push('/** Request header version: 2 for a flexible API version, else 1. */')
  L.push('export function requestHeaderVersion(apiKey: number, version: number): number {')
  L.push('  return isFlexible(apiKey, version) ? 2 : 1')
  L.push('}')
  L.push('')
  L.push(
    '/** Response header version: 1 for a flexible API version, else 0; ApiVersions always answers with v0. */',
  )
  L.push('export function responseHeaderVersion(apiKey: number, version: number): number {')
  L.push(`  if (apiKey === ${requests.find((r) => r.name === 'ApiVersionsRequest')?.apiKey ?? 18}) return 0`)
  L.push('  return isFlexible(apiKey, version) ? 1 : 0')
  L.push('}')
  return `${L.join('\n')}\n`
}

/**
 * Records of Kafka's transaction coordinator (`__transaction_state`). Their type ids are a namespace
 * of their own (TransactionLogKey is type 0, as LegacyOffsetCommitKey is in `__consumer_offsets`), so
 * they stay out of the group coordinator's record table; src/protocol/transaction-log.ts frames them.
 */
export const TRANSACTION_LOG_RECORDS: ReadonlySet<string> = new Set([
  'TransactionLogKey',
  'TransactionLogValue',
])

function emitRecordTable(schemas: SchemaDef[]): string {
  const group = schemas.filter((s) => !TRANSACTION_LOG_RECORDS.has(s.name))
  const keys = group.filter((s) => s.type === 'coordinator-key').sort((a, b) => a.apiKey! - b.apiKey!)
  const values = new Map(group.filter((s) => s.type === 'coordinator-value').map((s) => [s.apiKey!, s]))
  const L: string[] = []
  L.push(header('schemas/records/*.json'))
  L.push("import type { Reader } from '../reader.js'")
  L.push("import type { Writer } from '../writer.js'")
  for (const k of keys) {
    const v = values.get(k.apiKey!)
    if (!v) throw new Error(`no value schema for ${k.name}`)
    L.push(`import { type ${k.name}, read${k.name}, write${k.name} } from './records/${k.name}.js'`)
    L.push(`import { type ${v.name}, read${v.name}, write${v.name} } from './records/${v.name}.js'`)
  }
  L.push('')
  L.push('/** A coordinator record: key and value (null = tombstone), tagged with the record name. */')
  L.push('export type CoordinatorRecord =')
  for (const k of keys) {
    const v = values.get(k.apiKey!)!
    const name = k.name.replace(/Key$/, '')
    L.push(`  | { type: '${name}'; key: ${k.name}; value: ${v.name} | null; valueVersion?: number }`)
  }
  L.push('')
  L.push('export type CoordinatorRecordType = CoordinatorRecord["type"]')
  L.push('')
  L.push("/** Record framing facts per key type id (the key schema's apiKey). */")
  L.push('export interface CoordinatorRecordDefinition {')
  L.push('  readonly type: CoordinatorRecordType')
  L.push('  readonly typeId: number')
  L.push('  readonly minValueVersion: number')
  L.push('  readonly maxValueVersion: number')
  L.push('  readKey(r: Reader, version: number): unknown')
  L.push('  writeKey(w: Writer, m: never, version: number): void')
  L.push('  readValue(r: Reader, version: number): unknown')
  L.push('  writeValue(w: Writer, m: never, version: number): void')
  L.push('}')
  L.push('')
  L.push('export const COORDINATOR_RECORDS: readonly CoordinatorRecordDefinition[] = [')
  for (const k of keys) {
    const v = values.get(k.apiKey!)!
    L.push('  {')
    L.push(`    type: '${k.name.replace(/Key$/, '')}',`)
    L.push(`    typeId: ${k.apiKey},`)
    L.push(`    minValueVersion: ${v.validVersions.lo},`)
    L.push(`    maxValueVersion: ${v.validVersions.hi},`)
    L.push(`    readKey: read${k.name},`)
    L.push(`    writeKey: write${k.name} as (w: Writer, m: never, version: number) => void,`)
    L.push(`    readValue: read${v.name},`)
    L.push(`    writeValue: write${v.name} as (w: Writer, m: never, version: number) => void,`)
    L.push('  },')
  }
  L.push(']')
  return `${L.join('\n')}\n`
}

function emitIndex(schemas: SchemaDef[]): string {
  const L: string[] = [header('schemas/**/*.json')]
  for (const s of schemas) {
    const dir = s.kind === 'message' ? 'messages' : 'records'
    L.push(`export * from './${dir}/${s.name}.js'`)
  }
  L.push("export * from './registry.js'")
  L.push("export * from './coordinator-records.js'")
  return `${L.join('\n')}\n`
}

/** Every generated file, keyed by its path relative to the repository root. */
export function generateAll(root: string): Map<string, string> {
  const schemas = loadSchemas(root)
  const out = new Map<string, string>()
  for (const s of schemas) {
    const dir = s.kind === 'message' ? 'messages' : 'records'
    out.set(`${GENERATED_DIR}/${dir}/${s.name}.ts`, emitSchema(s))
  }
  out.set(`${GENERATED_DIR}/registry.ts`, emitRegistry(schemas))
  out.set(`${GENERATED_DIR}/coordinator-records.ts`, emitRecordTable(schemas))
  out.set(`${GENERATED_DIR}/index.ts`, emitIndex(schemas))
  return out
}
