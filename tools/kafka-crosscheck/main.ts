/**
 * Cross-checks our wire codec (src/protocol/generated) against Kafka's own generated message classes.
 *
 *   npm run crosscheck:kafka -- <kafka-source-tree-or-git-repo> [options]
 *
 * For every schema under schemas/messages and schemas/records that Kafka also has, and every version
 * both support, random valid messages (arbitrary.ts) go through two directions:
 *
 * - ours → Kafka: our encoding is decoded by Kafka's class (every byte consumed) and re-encoded by it;
 *   the bytes must be equal, and the field values Kafka read (its JSON converter's view) must be ours.
 *   Kafka's bytes are then decoded and re-encoded by our codec.
 * - Kafka → ours: the same message (less unknown tagged fields) is built by Kafka's JSON converter and
 *   encoded by Kafka; we decode those bytes (values must be the message's) and they must equal our
 *   encoding.
 *
 * Also every field's default value (our create…() against a new instance of Kafka's class, tagged
 * fields included, which the bytes cannot show), and per version: Kafka's default message (new XData()) against our create…(), the supported
 * version ranges, and for APIs the request/response header versions (Kafka's ApiMessageType).
 *
 * Options: --runs N (instances per schema version, default 200), --seed N, --only A,B (schema names),
 * --ref REF (with a git repository, default HEAD), --classpath CP (jackson + slf4j-api jars),
 * --report FILE (JSON report, default tools/kafka-crosscheck/.build/report.json), --no-shrink.
 * The Kafka path may also come from KAFKA_SRC. Exit code 1 when anything differs.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import fc from 'fast-check'
import { requestHeaderVersion, responseHeaderVersion } from '../../src/protocol/generated/index.js'
import { type FieldType, type SchemaDef, type StructDef, loadSchemas } from '../codegen/schema.js'
import { defaultOf, generated, inRange, isTaggedAt, messageArb } from './arbitrary.js'
import { REPO_ROOT, TOOL_DIR, build } from './build.js'

// ---------------------------------------------------------------------------------------------
// the Java harness

class Harness {
  private readonly proc: ChildProcessWithoutNullStreams
  private readonly waiting: { resolve: (line: string) => void; reject: (e: Error) => void }[] = []
  private buffer = ''
  private failed: Error | null = null

  constructor(classpath: string) {
    this.proc = spawn('java', ['-Xss8m', '-cp', classpath, 'topograph.crosscheck.CrosscheckHarness'])
    this.proc.stdout.setEncoding('utf8')
    this.proc.stdout.on('data', (chunk: string) => {
      this.buffer += chunk
      let nl = this.buffer.indexOf('\n')
      while (nl >= 0) {
        const line = this.buffer.slice(0, nl)
        this.buffer = this.buffer.slice(nl + 1)
        this.waiting.shift()?.resolve(line)
        nl = this.buffer.indexOf('\n')
      }
    })
    this.proc.stderr.on('data', (d: Buffer) => process.stderr.write(d))
    this.proc.on('exit', (code) => {
      this.failed = new Error(`the Java harness exited (${code})`)
      for (const w of this.waiting.splice(0)) w.reject(this.failed)
    })
  }

  ask(line: string): Promise<string> {
    if (this.failed) return Promise.reject(this.failed)
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject })
      this.proc.stdin.write(`${line}\n`)
    })
  }

  close(): void {
    this.proc.stdin.end()
  }
}

interface Answer {
  ok: boolean
  hex: string
  json: unknown
  error: string
}

function parseAnswer(line: string): Answer {
  if (line.startsWith('ERR ')) return { ok: false, hex: '', json: null, error: line.slice(4) }
  if (!line.startsWith('OK ')) return { ok: false, hex: '', json: null, error: `unexpected answer: ${line}` }
  const sp = line.indexOf(' ', 3)
  const hex = line.slice(3, sp < 0 ? undefined : sp)
  const json = sp < 0 ? null : JSON.parse(line.slice(sp + 1))
  return { ok: true, hex: hex === '-' ? '' : hex, json, error: '' }
}

const toHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')
const wireHex = (h: string): string => (h === '' ? '-' : h)

// ---------------------------------------------------------------------------------------------
// our messages in the form of Kafka's JSON converters

type Json = null | boolean | number | string | bigint | Json[] | { [k: string]: Json }

function valueJson(t: FieldType, v: number, x: unknown, all = false): Json {
  if (x === null || x === undefined) return null
  if (t.kind === 'array') return (x as unknown[]).map((e) => valueJson(t.elem, v, e, all))
  if (t.kind === 'struct') return structJson(t.struct, v, x as Record<string, unknown>, all)
  switch (t.prim) {
    case 'bytes':
      return Buffer.from(x as Uint8Array).toString('base64')
    case 'int64':
      return x as bigint
    default:
      return x as Json
  }
}

/**
 * The fields present at version v, as Kafka's JSON converter writes them: tagged fields only away
 * from their default, unless `all` (Kafka's converter reads them either way).
 */
function structJson(s: StructDef, v: number, m: Record<string, unknown>, all = false): { [k: string]: Json } {
  const out: { [k: string]: Json } = {}
  for (const f of s.fields) {
    if (!inRange(f.versions, v)) continue
    const x = m[f.camel]
    if (!all && isTaggedAt(f, v) && sameJson(valueJson(f.type, v, x), valueJson(f.type, v, defaultOf(s, f))))
      continue
    out[f.camel] = valueJson(f.type, v, x, all)
  }
  return out
}

/** JSON text for Kafka's converters: int64 as plain numbers */
function serialize(j: Json): string {
  if (j === null) return 'null'
  if (typeof j === 'bigint') return j.toString()
  if (typeof j === 'number' || typeof j === 'boolean' || typeof j === 'string') return JSON.stringify(j)
  if (Array.isArray(j)) return `[${j.map(serialize).join(',')}]`
  return `{${Object.entries(j)
    .map(([k, x]) => `${JSON.stringify(k)}:${serialize(x)}`)
    .join(',')}}`
}

/** the form the harness answers in: int64 as strings */
function normal(j: Json): unknown {
  if (typeof j === 'bigint') return j.toString()
  if (Array.isArray(j)) return j.map(normal)
  if (j !== null && typeof j === 'object')
    return Object.fromEntries(Object.entries(j).map(([k, x]) => [k, normal(x)]))
  return j
}

function sameJson(a: Json, b: Json): boolean {
  return firstDifference(normal(a), normal(b), '') === null
}

/** what a JSON form without the field means: a tagged field left out at its default */
const AT_DEFAULT = '(tagged field at its default)'

/** path and both values of the first difference, or null */
function firstDifference(
  a: unknown,
  b: unknown,
  path: string,
): { path: string; ours: unknown; kafka: unknown } | null {
  if (a === b) return null
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return { path: `${path}.length`, ours: a.length, kafka: b.length }
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`)
      if (d) return d
    }
    return null
  }
  if (
    a !== null &&
    b !== null &&
    typeof a === 'object' &&
    typeof b === 'object' &&
    !Array.isArray(a) &&
    !Array.isArray(b)
  ) {
    const ao = a as Record<string, unknown>
    const bo = b as Record<string, unknown>
    for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
      if (!(k in ao)) return { path: `${path}.${k}`, ours: AT_DEFAULT, kafka: bo[k] }
      if (!(k in bo)) return { path: `${path}.${k}`, ours: ao[k], kafka: AT_DEFAULT }
      const d = firstDifference(ao[k], bo[k], `${path}.${k}`)
      if (d) return d
    }
    return null
  }
  return { path: path || '.', ours: a, kafka: b }
}

function withoutUnknownTags(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(withoutUnknownTags)
  if (x !== null && typeof x === 'object' && !(x instanceof Uint8Array)) {
    const out: Record<string, unknown> = {}
    for (const [k, y] of Object.entries(x)) if (k !== 'unknownTaggedFields') out[k] = withoutUnknownTags(y)
    return out
  }
  return x
}

/** a message shown in a report: bigints as "123n", bytes as hex */
function display(m: unknown): string {
  return JSON.stringify(m, (_k, x) => {
    if (typeof x === 'bigint') return `${x}n`
    if (x instanceof Uint8Array) return `0x${toHex(x)}`
    if (x && typeof x === 'object' && x.type === 'Buffer' && Array.isArray(x.data))
      return `0x${Buffer.from(x.data).toString('hex')}`
    return x
  })
}

function firstByteDifference(ours: string, kafka: string): string {
  let i = 0
  while (i < ours.length && i < kafka.length && ours[i] === kafka[i]) i++
  const at = Math.floor(i / 2)
  const around = (h: string) => h.slice(Math.max(0, at - 8) * 2, (at + 8) * 2) || '(end)'
  return `lengths ${ours.length / 2}/${kafka.length / 2}, first difference at byte ${at}: ours …${around(ours)}… kafka …${around(kafka)}…`
}

// ---------------------------------------------------------------------------------------------
// checks

interface Mismatch {
  kind: string
  /** field path or error class, for grouping */
  where: string
  detail: string
}

const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e))
/** an error message with the numbers taken out, for grouping */
const shape = (t: string) => t.replace(/-?\d+/g, 'N').slice(0, 160)
const pathShape = (p: string) => p.replace(/\[\d+\]/g, '[]')

async function checkMessage(
  h: Harness,
  s: SchemaDef,
  v: number,
  m: Record<string, unknown>,
): Promise<Mismatch[]> {
  const encode = generated(`encode${s.name}`)
  const decode = generated(`decode${s.name}`)
  const out: Mismatch[] = []
  let ours: string
  try {
    ours = toHex(encode(m, v) as Uint8Array)
  } catch (e) {
    return [{ kind: 'our encoder rejects a valid message', where: shape(errorText(e)), detail: errorText(e) }]
  }

  // ours → Kafka → ours
  const forward = parseAnswer(await h.ask(`${s.name} ${v} ${wireHex(ours)}`))
  if (!forward.ok) {
    out.push({
      kind: 'Kafka cannot decode our bytes',
      where: shape(forward.error),
      detail: `${forward.error}; our bytes ${ours}`,
    })
  } else {
    if (forward.hex !== ours) {
      out.push({
        kind: "Kafka's re-encoding differs from our bytes",
        where: '',
        detail: firstByteDifference(ours, forward.hex),
      })
    }
    const d = firstDifference(normal(structJson(s.root, v, m)), forward.json, '')
    if (d) {
      out.push({
        kind: 'Kafka reads other field values from our bytes',
        where: pathShape(d.path),
        detail: `${d.path}: ours ${JSON.stringify(d.ours)}, Kafka ${JSON.stringify(d.kafka)}`,
      })
    }
    try {
      const again = toHex(encode(decode(Buffer.from(forward.hex, 'hex'), v), v) as Uint8Array)
      if (again !== forward.hex) {
        out.push({
          kind: "our decode → encode of Kafka's bytes differs",
          where: '',
          detail: firstByteDifference(again, forward.hex),
        })
      }
    } catch (e) {
      out.push({
        kind: "we cannot decode Kafka's re-encoding",
        where: shape(errorText(e)),
        detail: errorText(e),
      })
    }
  }

  // Kafka (from the values) → ours
  const plain = withoutUnknownTags(m) as Record<string, unknown>
  const plainJson = structJson(s.root, v, plain)
  const reverse = parseAnswer(
    await h.ask(`FROMJSON ${s.name} ${v} ${serialize(structJson(s.root, v, plain, true))}`),
  )
  if (!reverse.ok) {
    out.push({
      kind: 'Kafka rejects the message built from our values',
      where: shape(reverse.error),
      detail: reverse.error,
    })
    return out
  }
  try {
    const decoded = decode(Buffer.from(reverse.hex, 'hex'), v) as Record<string, unknown>
    const d = firstDifference(normal(structJson(s.root, v, decoded)), normal(plainJson), '')
    if (d) {
      out.push({
        kind: "we read other field values from Kafka's encoding",
        where: pathShape(d.path),
        detail: `${d.path}: ours ${JSON.stringify(d.ours)}, Kafka ${JSON.stringify(d.kafka)}`,
      })
    }
  } catch (e) {
    out.push({
      kind: "we cannot decode Kafka's encoding",
      where: shape(errorText(e)),
      detail: `${errorText(e)}; Kafka's bytes ${reverse.hex}`,
    })
  }
  const ourPlain = toHex(encode(plain, v) as Uint8Array)
  if (ourPlain !== reverse.hex) {
    out.push({
      kind: "Kafka's encoding of the same values differs from ours",
      where: '',
      detail: firstByteDifference(ourPlain, reverse.hex),
    })
  }
  return out
}

async function checkDefault(h: Harness, s: SchemaDef, v: number): Promise<Mismatch[]> {
  const k = parseAnswer(await h.ask(`DEFAULT ${s.name} ${v}`))
  let ours: string | null = null
  let oursError = ''
  try {
    ours = toHex(generated(`encode${s.name}`)(generated(`create${s.root.tsName}`)(), v) as Uint8Array)
  } catch (e) {
    oursError = errorText(e)
  }
  if (!k.ok && ours === null) return []
  if (!k.ok) return [{ kind: 'default message: only Kafka refuses to encode it', where: '', detail: k.error }]
  if (ours === null)
    return [{ kind: 'default message: only we refuse to encode it', where: '', detail: oursError }]
  if (ours === k.hex) return []
  const d = firstDifference(
    normal(structJson(s.root, v, generated(`create${s.root.tsName}`)() as Record<string, unknown>)),
    k.json,
    '',
  )
  return [
    {
      kind: 'default message encodes differently',
      where: d ? pathShape(d.path) : '',
      detail: `${firstByteDifference(ours, k.hex)}${d ? `; ${d.path}: ours ${JSON.stringify(d.ours)}, Kafka ${JSON.stringify(d.kafka)}` : ''}`,
    },
  ]
}

/** every field's default, per struct: our create…() against a new instance of Kafka's class */
async function checkDefaultValues(h: Harness, s: SchemaDef): Promise<Mismatch[]> {
  const out: Mismatch[] = []
  const asPlain = (t: FieldType, x: unknown): unknown => {
    if (x === null || x === undefined) return null
    if (t.kind === 'struct') return '{struct}'
    if (t.kind === 'array') return (x as unknown[]).map((e) => asPlain(t.elem, e))
    if (t.prim === 'bytes') return Buffer.from(x as Uint8Array).toString('base64')
    if (t.prim === 'int64') return (x as bigint).toString()
    return x
  }
  for (const st of s.structs) {
    if (st.fields.length === 0) continue
    const java = st === s.root ? '-' : st.name
    const k = parseAnswer(
      await h.ask(`DEFAULTOF ${s.name} ${java} ${st.fields.map((f) => f.camel).join(',')}`),
    )
    if (!k.ok) {
      out.push({ kind: "cannot read the defaults of Kafka's class", where: st.name, detail: k.error })
      continue
    }
    const ours = generated(`create${st.tsName}`)() as Record<string, unknown>
    const theirs = k.json as Record<string, unknown>
    for (const f of st.fields) {
      const d = firstDifference(asPlain(f.type, ours[f.camel]), theirs[f.camel], '')
      if (d) {
        const path = st === s.root ? f.camel : `${st.name}.${f.camel}`
        out.push({
          kind: 'default value differs',
          where: path,
          detail: `${path}${d.path === '.' ? '' : d.path}: ours ${JSON.stringify(d.ours)}, Kafka ${JSON.stringify(d.kafka)}`,
        })
      }
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// the run

interface Row {
  schema: string
  versions: { version: number; instances: number; mismatching: number }[]
  instances: number
  mismatches: number
}

interface Finding {
  schema: string
  /** null: not tied to a version */
  version: number | null
  kind: string
  where: string
  count: number
  detail: string
  example?: string
  exampleBytes?: string
}

function usesRecords(t: FieldType, seen = new Set<StructDef>()): boolean {
  if (t.kind === 'prim') return t.prim === 'records'
  if (t.kind === 'array') return usesRecords(t.elem, seen)
  if (seen.has(t.struct)) return false
  seen.add(t.struct)
  return t.struct.fields.some((f) => usesRecords(f.type, seen))
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: 'string', default: '200' },
      seed: { type: 'string', default: '20260101' },
      only: { type: 'string' },
      ref: { type: 'string' },
      classpath: { type: 'string' },
      report: { type: 'string', default: join(TOOL_DIR, '.build', 'report.json') },
      'no-shrink': { type: 'boolean', default: false },
    },
  })
  const kafka = positionals[0] ?? process.env.KAFKA_SRC
  if (!kafka) {
    console.error(
      'usage: npm run crosscheck:kafka -- <kafka source tree or git repository> [--runs N] [--seed N] [--only A,B]',
    )
    return 2
  }
  const runs = Number(values.runs)
  const seed = Number(values.seed)
  const started = Date.now()
  const b = build({ kafka, ref: values.ref, classpath: values.classpath, log: (l) => console.log(l) })
  console.log(
    `Kafka ${b.kafkaCommit ?? '(commit unknown)'}: ${b.messages.length} message and ${b.records.length} record classes` +
      `${b.reused ? ' (build reused)' : ''}; jars ${b.classpath.split(':').slice(1).join(', ')}`,
  )
  if (b.missing.length > 0) console.log(`not in Kafka, not checked: ${b.missing.join(', ')}`)

  const only = values.only ? new Set(values.only.split(',')) : null
  const schemas = loadSchemas(REPO_ROOT).filter(
    (s) => (only === null || only.has(s.name)) && (b.messages.includes(s.name) || b.records.includes(s.name)),
  )
  for (const s of schemas) {
    if (s.root.fields.some((f) => usesRecords(f.type))) {
      throw new Error(`${s.name} has a "records" field: the cross-check build stubs Kafka's record layer`)
    }
  }

  const h = new Harness(b.classpath)
  const rows: Row[] = []
  const findings: Finding[] = []
  const notes: string[] = []
  let totalInstances = 0
  let totalVersions = 0
  let totalMismatches = 0

  for (const s of schemas) {
    const [lo, hi] = (await h.ask(`VERSIONS ${s.name}`)).split(' ').slice(1).map(Number) as [number, number]
    const ours = s.validVersions
    if (ours.lo !== lo || ours.hi !== hi) {
      notes.push(`${s.name}: versions ours ${ours.lo}-${ours.hi}, Kafka ${lo}-${hi}; checked the common ones`)
    }
    const row: Row = { schema: s.name, versions: [], instances: 0, mismatches: 0 }
    rows.push(row)
    for (const x of await checkDefaultValues(h, s)) {
      findings.push({
        schema: s.name,
        version: null,
        kind: x.kind,
        where: x.where,
        count: 1,
        detail: x.detail,
      })
    }
    for (let v = Math.max(lo, ours.lo); v <= Math.min(hi, ours.hi); v++) {
      totalVersions++
      const groups = new Map<string, Finding & { first: Record<string, unknown> | null }>()
      const record = (ms: Mismatch[], m: Record<string, unknown> | null) => {
        for (const x of ms) {
          const key = `${x.kind}|${x.where}`
          const g = groups.get(key)
          if (g) g.count++
          else
            groups.set(key, {
              schema: s.name,
              version: v,
              kind: x.kind,
              where: x.where,
              count: 1,
              detail: x.detail,
              first: m,
            })
        }
      }
      record(await checkDefault(h, s, v), null)
      if (s.apiKey !== null && s.type === 'request') {
        const [rq, rs] = (await h.ask(`HEADERS ${s.apiKey} ${v}`)).split(' ').slice(1).map(Number)
        const ourRq = requestHeaderVersion(s.apiKey, v)
        const ourRs = responseHeaderVersion(s.apiKey, v)
        if (rq !== ourRq || rs !== ourRs) {
          record(
            [
              {
                kind: 'header versions differ',
                where: '',
                detail: `request/response header versions ours ${ourRq}/${ourRs}, Kafka ${rq}/${rs}`,
              },
            ],
            null,
          )
        }
      }
      const arb = messageArb(s, v)
      const instances = fc.sample(arb, { numRuns: runs, seed: seed + v })
      const results = await Promise.all(instances.map((m) => checkMessage(h, s, v, m)))
      results.forEach((ms, i) => {
        record(ms, instances[i]!)
      })
      const failing = results.filter((ms) => ms.length > 0).length
      row.versions.push({ version: v, instances: instances.length, mismatching: failing })
      row.instances += instances.length
      row.mismatches += failing
      totalInstances += instances.length
      totalMismatches += failing

      for (const g of groups.values()) {
        const finding: Finding = {
          schema: g.schema,
          version: g.version,
          kind: g.kind,
          where: g.where,
          count: g.count,
          detail: g.detail,
        }
        let example = g.first
        if (example !== null && !values['no-shrink']) {
          const key = `${g.kind}|${g.where}`
          const result = await fc.check(
            fc.asyncProperty(
              arb,
              async (m) => !(await checkMessage(h, s, v, m)).some((x) => `${x.kind}|${x.where}` === key),
            ),
            { numRuns: runs, seed: seed + v, interruptAfterTimeLimit: 60_000 },
          )
          if (result.failed && result.counterexample) {
            example = result.counterexample[0]
            const again = (await checkMessage(h, s, v, example)).find((x) => `${x.kind}|${x.where}` === key)
            if (again) finding.detail = again.detail
          }
        }
        if (example !== null) {
          finding.example = display(example)
          try {
            finding.exampleBytes = toHex(generated(`encode${s.name}`)(example, v) as Uint8Array)
          } catch {
            // the finding's detail says why
          }
        }
        findings.push(finding)
      }
    }
    const vs =
      row.versions.length > 0
        ? `v${row.versions[0]!.version}-${row.versions.at(-1)!.version}`
        : 'none in common'
    const bad = row.versions.filter((x) => x.mismatching > 0).map((x) => `v${x.version}: ${x.mismatching}`)
    console.log(
      `${s.name.padEnd(46)} ${vs.padEnd(7)} ${String(row.versions.length).padStart(2)} versions × ${runs} = ` +
        `${String(row.instances).padStart(5)} instances, ${row.mismatches} mismatching${bad.length > 0 ? ` (${bad.join(', ')})` : ''}`,
    )
  }
  h.close()

  const seconds = Math.round((Date.now() - started) / 1000)
  console.log('')
  for (const n of notes) console.log(`note: ${n}`)
  console.log(
    `${rows.length} schemas, ${totalVersions} schema versions, ${totalInstances} instances ` +
      `(${runs} per version, seed ${seed}), each checked both ways: ${totalMismatches} mismatching instances, ` +
      `${findings.length} distinct findings, ${seconds}s`,
  )
  for (const f of findings) {
    console.log(
      `\n✗ ${f.schema}${f.version === null ? '' : ` v${f.version}`}: ${f.kind}${f.where ? ` [${f.where}]` : ''} (${f.count}×)`,
    )
    console.log(`  ${f.detail}`)
    if (f.example) console.log(`  minimal example: ${f.example}`)
    if (f.exampleBytes !== undefined) console.log(`  our bytes: ${f.exampleBytes || '(none)'}`)
  }
  mkdirSync(dirname(values.report!), { recursive: true })
  writeFileSync(
    values.report!,
    `${JSON.stringify({ kafkaCommit: b.kafkaCommit, runs, seed, totalVersions, totalInstances, totalMismatches, notes, rows, findings }, null, 2)}\n`,
  )
  console.log(`\nreport: ${values.report}`)
  return findings.length > 0 ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e)
    process.exit(2)
  },
)
