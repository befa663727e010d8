/**
 * Builds the Java side of the cross-check from a Kafka source tree, into tools/kafka-crosscheck/.build
 * (git-ignored):
 *
 * 1. Kafka's message generator (generator/src/main/java) is compiled without its command-line front
 *    end (MessageGenerator.main needs argparse4j; our GenerateMessages calls processDirectories).
 * 2. It generates the Data classes and JSON converters for exactly the schemas under schemas/messages
 *    (Kafka's clients/src/main/resources/common/message) and schemas/records (Kafka's
 *    group-coordinator/ and transaction-coordinator/src/main/resources/common/message, all into the
 *    group records' package), and ApiMessageType for the header versions.
 * 3. javac compiles those classes and our harness with clients/src/main/java as source path, so only
 *    the Kafka runtime classes they reach are compiled (about 60: protocol, protocol.types, Uuid,
 *    utils, errors, and through utils.Utils parts of config and security). Two substitutions:
 *    - the record layer (record.internal.BaseRecords/MemoryRecords/UnalignedMemoryRecords), named by
 *      Readable/Writable/Type for "records" fields only, would pull in compression codecs and KRaft
 *      control records; java/stubs has compile-time stand-ins, and the driver refuses schemas with a
 *      "records" field;
 *    - messages that runtime classes name (DefaultPrincipalData, used by the principal builder that
 *      Utils reaches) are generated from Kafka's own JSON as well: missing ones are found from
 *      javac's errors.
 *
 * Needs javac/java (17+) and jackson-databind, -core, -annotations, jackson-datatype-jdk8 and
 * slf4j-api jars: --classpath / KAFKA_CROSSCHECK_CLASSPATH, else found under ~/.m2/repository or
 * /usr/share/java. The build is reused while its inputs (hashed) are unchanged.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const TOOL_DIR = dirname(fileURLToPath(import.meta.url))
export const REPO_ROOT = join(TOOL_DIR, '..', '..')
const JAVA_DIR = join(TOOL_DIR, 'java')

const CLIENT_MESSAGES = 'clients/src/main/resources/common/message'
const GROUP_RECORDS = 'group-coordinator/src/main/resources/common/message'
/** The transaction coordinator's records (TransactionLogKey/Value), generated into the same package. */
const TXN_RECORDS = 'transaction-coordinator/src/main/resources/common/message'
const CLIENT_JAVA = 'clients/src/main/java'
const GENERATOR_JAVA = 'generator/src/main/java'
const MESSAGE_PACKAGE = 'org.apache.kafka.common.message'
const RECORD_PACKAGE = 'org.apache.kafka.coordinator.group.generated'

export interface BuildOptions {
  /** a Kafka source tree, or a git repository (bare or not) to read `ref` from */
  kafka: string
  ref?: string
  classpath?: string
  buildDir?: string
  log?: (line: string) => void
}

export interface Build {
  /** classpath to run topograph.crosscheck.CrosscheckHarness */
  classpath: string
  /** commit of the Kafka tree, when known */
  kafkaCommit: string | null
  /** schema names (file names without .json) found in Kafka, per kind */
  messages: string[]
  records: string[]
  /** our schema names with no Kafka file of that name */
  missing: string[]
  /** other Kafka messages generated because runtime classes name them */
  extraMessages: string[]
  reused: boolean
}

function run(cmd: string, args: string[], cwd?: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  if (r.error) throw r.error
  if (r.status !== 0) {
    throw new Error(
      `${cmd} ${args.slice(0, 6).join(' ')}… failed (exit ${r.status}):\n${r.stdout}${r.stderr}`,
    )
  }
  return r.stdout
}

function listFiles(dir: string, suffix: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith(suffix)) out.push(p)
    }
  }
  if (existsSync(dir)) walk(dir)
  return out.sort()
}

function ourSchemaNames(kind: 'messages' | 'records'): string[] {
  return readdirSync(join(REPO_ROOT, 'schemas', kind))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort()
}

/** Finds the jars: explicit classpath, else the newest matching jars in ~/.m2 or /usr/share/java. */
export function findClasspath(explicit?: string): string {
  const given = explicit ?? process.env.KAFKA_CROSSCHECK_CLASSPATH
  if (given) return given
  const wanted: [string, string][] = [
    ['com/fasterxml/jackson/core/jackson-databind', 'jackson-databind'],
    ['com/fasterxml/jackson/core/jackson-core', 'jackson-core'],
    ['com/fasterxml/jackson/core/jackson-annotations', 'jackson-annotations'],
    ['com/fasterxml/jackson/datatype/jackson-datatype-jdk8', 'jackson-datatype-jdk8'],
    ['org/slf4j/slf4j-api', 'slf4j-api'],
  ]
  const m2 = join(homedir(), '.m2', 'repository')
  const jars: string[] = []
  const missing: string[] = []
  for (const [path, artifact] of wanted) {
    let jar: string | null = null
    const dir = join(m2, path)
    if (existsSync(dir)) {
      const versions = readdirSync(dir)
        .filter((v) => existsSync(join(dir, v, `${artifact}-${v}.jar`)))
        .sort(compareVersions)
      const v = versions.at(-1)
      if (v !== undefined) jar = join(dir, v, `${artifact}-${v}.jar`)
    }
    if (jar === null) {
      const debian = join('/usr/share/java', `${artifact}.jar`)
      if (existsSync(debian)) jar = debian
    }
    if (jar === null) missing.push(artifact)
    else jars.push(jar)
  }
  if (missing.length > 0) {
    throw new Error(
      `jars not found: ${missing.join(', ')} (looked in ${m2} and /usr/share/java; ` +
        'pass --classpath or KAFKA_CROSSCHECK_CLASSPATH)',
    )
  }
  return jars.join(delimiter)
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/)
  const pb = b.split(/[.-]/)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? ''
    const y = pb[i] ?? ''
    const nx = Number(x)
    const ny = Number(y)
    if (!Number.isNaN(nx) && !Number.isNaN(ny) && x !== '' && y !== '') {
      if (nx !== ny) return nx - ny
    } else if (x !== y) {
      return x < y ? -1 : 1
    }
  }
  return 0
}

function isSourceTree(p: string): boolean {
  return existsSync(join(p, CLIENT_JAVA)) && existsSync(join(p, GENERATOR_JAVA))
}

/** Returns a directory holding the Kafka sources the build reads, and the commit when known. */
function kafkaSources(opts: BuildOptions, buildDir: string): { root: string; commit: string | null } {
  const src = opts.kafka
  const gitCommit = (): string | null => {
    try {
      return execFileSync('git', ['-C', src, 'rev-parse', `${opts.ref ?? 'HEAD'}^{commit}`], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim()
    } catch {
      return null
    }
  }
  if (isSourceTree(src) && opts.ref === undefined) return { root: src, commit: gitCommit() }
  const commit = gitCommit()
  if (commit === null) {
    throw new Error(`${src} is neither a Kafka source tree (${CLIENT_JAVA}) nor a git repository`)
  }
  const root = join(buildDir, 'kafka-src', commit)
  if (!existsSync(join(root, '.complete'))) {
    rmSync(root, { recursive: true, force: true })
    mkdirSync(root, { recursive: true })
    const paths = [GENERATOR_JAVA, CLIENT_JAVA, CLIENT_MESSAGES, GROUP_RECORDS, TXN_RECORDS]
    const tar = spawnSync('git', ['-C', src, 'archive', '--format=tar', commit, ...paths], {
      maxBuffer: 1024 * 1024 * 1024,
    })
    if (tar.status !== 0) throw new Error(`git archive failed: ${tar.stderr}`)
    const x = spawnSync('tar', ['-x', '-C', root], { input: tar.stdout })
    if (x.status !== 0) throw new Error(`tar failed: ${x.stderr}`)
    writeFileSync(join(root, '.complete'), `${commit}\n`)
  }
  return { root, commit }
}

/** MessageGenerator without its argparse4j imports and main method (the only users of argparse4j). */
export function withoutCommandLine(source: string): string {
  let s = source.replace(/^import (static )?net\.sourceforge\.argparse4j\..*\n/gm, '')
  const start = s.indexOf('    public static void main(String[] args)')
  if (start < 0) throw new Error('MessageGenerator: main method not found')
  let i = s.indexOf('{', start)
  let depth = 0
  for (; i < s.length; i++) {
    if (s[i] === '{') depth++
    else if (s[i] === '}' && --depth === 0) break
  }
  s = s.slice(0, start) + s.slice(i + 1)
  if (s.includes('argparse4j')) throw new Error('MessageGenerator: argparse4j still referenced')
  return s
}

function hashInputs(files: string[], extra: string[]): string {
  const h = createHash('sha256')
  for (const x of extra) h.update(`${x}\n`)
  for (const f of files) {
    h.update(`${f}\n`)
    h.update(readFileSync(f))
  }
  return h.digest('hex').slice(0, 16)
}

function javac(classpath: string, out: string, args: string[], sources: string[]): string {
  mkdirSync(out, { recursive: true })
  const argFile = `${out}.sources`
  writeFileSync(argFile, sources.map((s) => `"${s}"`).join('\n'))
  const r = spawnSync(
    'javac',
    ['-nowarn', '-encoding', 'UTF-8', '-d', out, '-cp', classpath, ...args, `@${argFile}`],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  )
  if (r.error) throw r.error
  return r.status === 0 ? '' : `${r.stdout}${r.stderr}` || `javac exit ${r.status}`
}

export function build(opts: BuildOptions): Build {
  const log = opts.log ?? (() => {})
  const buildDir = opts.buildDir ?? join(TOOL_DIR, '.build')
  mkdirSync(buildDir, { recursive: true })
  // the build holds Kafka's sources and JSON files (with // comments): keep the linter out of it
  const lintConfig = join(buildDir, 'biome.json')
  if (!existsSync(lintConfig))
    writeFileSync(lintConfig, '{ "root": false, "files": { "includes": ["!**"] } }\n')
  const jars = findClasspath(opts.classpath)
  const { root, commit } = kafkaSources(opts, buildDir)

  const ourMessages = ourSchemaNames('messages')
  const ourRecords = ourSchemaNames('records')
  const messages = ourMessages.filter((n) => existsSync(join(root, CLIENT_MESSAGES, `${n}.json`)))
  /** The Kafka directory holding a record schema of ours (group or transaction coordinator). */
  const recordDir = (n: string): string | undefined =>
    [GROUP_RECORDS, TXN_RECORDS].find((d) => existsSync(join(root, d, `${n}.json`)))
  const records = ourRecords.filter((n) => recordDir(n) !== undefined)
  const missing = [
    ...ourMessages.filter((n) => !messages.includes(n)),
    ...ourRecords.filter((n) => !records.includes(n)),
  ]

  const generatorSources = listFiles(join(root, GENERATOR_JAVA), '.java').filter(
    (f) => !f.includes(`${join('org', 'apache', 'kafka', 'message', 'checker')}`),
  )
  const inputs = [
    ...generatorSources,
    ...messages.map((n) => join(root, CLIENT_MESSAGES, `${n}.json`)),
    ...records.map((n) => join(root, recordDir(n)!, `${n}.json`)),
    ...listFiles(join(root, CLIENT_JAVA), '.java'),
    ...listFiles(JAVA_DIR, '.java'),
  ]
  const key = hashInputs(inputs, [jars, ...messages, '|', ...records])
  const out = join(buildDir, 'out')
  const stamp = join(out, 'stamp.json')
  const classes = join(out, 'classes')
  const classpath = [classes, jars].join(delimiter)
  if (existsSync(stamp)) {
    const s = JSON.parse(readFileSync(stamp, 'utf8')) as { key: string; extraMessages: string[] }
    if (s.key === key) {
      return {
        classpath,
        kafkaCommit: commit,
        messages,
        records,
        missing,
        extraMessages: s.extraMessages,
        reused: true,
      }
    }
  }
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })

  // 1. the generator, without argparse4j
  log('compiling Kafka message generator')
  const genSrc = join(out, 'generator-src')
  for (const f of generatorSources) {
    const rel = relative(join(root, GENERATOR_JAVA), f)
    const dest = join(genSrc, rel)
    mkdirSync(dirname(dest), { recursive: true })
    const text = readFileSync(f, 'utf8')
    writeFileSync(dest, rel.endsWith('MessageGenerator.java') ? withoutCommandLine(text) : text)
  }
  const genClasses = join(out, 'generator-classes')
  const genErr = javac(
    jars,
    genClasses,
    [],
    [...listFiles(genSrc, '.java'), join(JAVA_DIR, 'GenerateMessages.java')],
  )
  if (genErr) throw new Error(`compiling the message generator failed:\n${genErr}`)

  // 2. generate Data classes and JSON converters for our schemas
  const generate = (
    pkg: string,
    names: string[],
    fromDir: (n: string) => string,
    label: string,
    typeClasses: string,
  ) => {
    const input = join(out, 'schemas', label)
    mkdirSync(input, { recursive: true })
    for (const n of names) cpSync(join(root, fromDir(n), `${n}.json`), join(input, `${n}.json`))
    const dest = join(out, 'generated', label)
    run('java', [
      '-cp',
      [genClasses, jars].join(delimiter),
      'topograph.crosscheck.GenerateMessages',
      pkg,
      dest,
      input,
      typeClasses,
      'MessageDataGenerator',
      'JsonConverterGenerator',
    ])
    return dest
  }
  log(`generating ${messages.length} message and ${records.length} record classes`)
  const generated = [
    generate(MESSAGE_PACKAGE, messages, () => CLIENT_MESSAGES, 'messages', 'ApiMessageTypeGenerator'),
    generate(RECORD_PACKAGE, records, (n) => recordDir(n)!, 'records', '-'),
  ]

  // 3. compile them with the Kafka runtime classes they reach
  const extraMessages: string[] = []
  for (let attempt = 0; ; attempt++) {
    log('compiling generated classes, the Kafka runtime classes they need, and the harness')
    rmSync(classes, { recursive: true, force: true })
    const sources = [
      ...generated.flatMap((d) => listFiles(d, '.java')),
      ...(extraMessages.length > 0 ? listFiles(join(out, 'generated', 'extra'), '.java') : []),
      join(JAVA_DIR, 'CrosscheckHarness.java'),
    ]
    const err = javac(
      jars,
      classes,
      ['-implicit:class', '-sourcepath', [join(JAVA_DIR, 'stubs'), join(root, CLIENT_JAVA)].join(delimiter)],
      sources,
    )
    if (!err) break
    const wanted = new Set<string>()
    for (const m of err.matchAll(/import org\.apache\.kafka\.common\.message\.(\w+);/g)) wanted.add(m[1]!)
    for (const m of err.matchAll(
      /symbol: +(?:class|variable) (\w+)\n\s*location: (?:package|class) [\w.]+/g,
    )) {
      if (existsSync(join(root, CLIENT_MESSAGES, `${m[1]}.json`))) wanted.add(m[1]!)
    }
    const add = [...wanted].filter((n) => !extraMessages.includes(n) && !messages.includes(n))
    const addable = add.filter((n) => existsSync(join(root, CLIENT_MESSAGES, `${n}.json`)))
    if (attempt >= 5 || addable.length === 0) throw new Error(`compiling Kafka's classes failed:\n${err}`)
    log(`  runtime classes name other messages; generating ${addable.join(', ')}`)
    extraMessages.push(...addable)
    const input = join(out, 'schemas', 'extra')
    mkdirSync(input, { recursive: true })
    for (const n of extraMessages) cpSync(join(root, CLIENT_MESSAGES, `${n}.json`), join(input, `${n}.json`))
    run('java', [
      '-cp',
      [genClasses, jars].join(delimiter),
      'topograph.crosscheck.GenerateMessages',
      MESSAGE_PACKAGE,
      join(out, 'generated', 'extra'),
      input,
      '-',
      'MessageDataGenerator',
    ])
  }
  const runtime = listFiles(classes, '.class')
    .map((f) => relative(classes, f).replace(/\$.*$|\.class$/g, ''))
    .filter((c) => !c.startsWith('org/apache/kafka/common/message/') && !c.includes('/group/generated/'))
    .filter((c, i, a) => a.indexOf(c) === i && c.startsWith('org/apache/kafka/'))
  writeFileSync(join(out, 'runtime-classes.txt'), `${runtime.join('\n')}\n`)
  log(
    `  ${runtime.length} Kafka runtime classes compiled (list: ${relative(REPO_ROOT, out)}/runtime-classes.txt)`,
  )
  writeFileSync(stamp, JSON.stringify({ key, extraMessages, kafkaCommit: commit }))
  return { classpath, kafkaCommit: commit, messages, records, missing, extraMessages, reused: false }
}
