/**
 * Builds Kafka's Java admin client and `kafka-streams-groups` tool from a Kafka source tree, into
 * tools/kafka-interop/.build (git-ignored):
 *
 * 1. Kafka's message generator (generator/src/main/java) without its command-line front end, as the
 *    cross-check does (tools/kafka-crosscheck/build.ts: withoutCommandLine, GenerateMessages.java).
 * 2. Every message of clients/src/main/resources/common/message generated as Kafka's Gradle build does
 *    (MessageDataGenerator, JsonConverterGenerator, ApiMessageTypeGenerator).
 * 3. javac compiles the whole `clients` module (clients/src/main/java and the generated classes), plus
 *    its resources (META-INF/services) and a kafka/kafka-version.properties written from the tree's
 *    gradle.properties and commit, as Kafka's createVersionFile task does.
 * 4. javac compiles StreamsGroupCommand, our Admin harness (java/AdminHarness.java) and logging
 *    provider (java/ToolsLogProvider.java) with
 *    tools/src/main/java and server-common/src/main/java as source path: only the classes they reach
 *    are compiled (StreamsGroupCommandOptions, TopologyDescriptionFormatter, GroupOffsetsResetter,
 *    CsvUtils, ToolsUtils, CommandLineUtils, CommandDefaultOptions, …).
 *
 * Third-party libraries that are not available offline get compile-time stand-ins (java/stubs): every
 * method throws, and none is reached by the commands this tool runs (no compression, no client
 * telemetry — enable.metrics.push is false by default for the admin client — no ACL CIDR matching,
 * no CSV, so --reset-offsets --export and --from-file are not compared). See STAND_INS below and
 * docs/cli.md.
 *
 * Jars (from ~/.m2/repository or /usr/share/java, or all of them from --classpath /
 * KAFKA_INTEROP_CLASSPATH): jackson-databind/-core/-annotations/-datatype-jdk8 and slf4j-api 2.x (found
 * by the cross-check's findClasspath), jopt-simple, zstd-jni and jose4j (which clients needs to compile). Logging goes
 * through java/ToolsLogProvider.java, an SLF4J provider that prints what Kafka's tools-log4j2.yaml
 * prints (WARN and above on stderr, "[%d] %p %m (%c)%n").
 *
 * The build is reused while its inputs (Kafka commit or hashed sources, our Java files, jars) are
 * unchanged.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  TOOL_DIR as CROSSCHECK_DIR,
  REPO_ROOT,
  findClasspath,
  withoutCommandLine,
} from '../kafka-crosscheck/build.js'

export { REPO_ROOT }
export const TOOL_DIR = dirname(fileURLToPath(import.meta.url))
const JAVA_DIR = join(TOOL_DIR, 'java')
const STUBS_DIR = join(JAVA_DIR, 'stubs')
const GENERATE_MESSAGES = join(CROSSCHECK_DIR, 'java', 'GenerateMessages.java')

const CLIENT_JAVA = 'clients/src/main/java'
const CLIENT_RESOURCES = 'clients/src/main/resources'
const CLIENT_MESSAGES = 'clients/src/main/resources/common/message'
const GENERATOR_JAVA = 'generator/src/main/java'
const SERVER_COMMON_JAVA = 'server-common/src/main/java'
const TOOLS_JAVA = 'tools/src/main/java'
const KAFKA_PATHS = [
  GENERATOR_JAVA,
  CLIENT_JAVA,
  CLIENT_RESOURCES,
  SERVER_COMMON_JAVA,
  TOOLS_JAVA,
  'gradle.properties',
]
export const STREAMS_GROUP_COMMAND = 'org.apache.kafka.tools.streams.StreamsGroupCommand'
export const ADMIN_HARNESS = 'topograph.interop.AdminHarness'
const LOG_PROVIDER = 'topograph.interop.ToolsLogProvider'

/** Third-party packages replaced by compile-time stand-ins, and who names them. */
export const STAND_INS: readonly {
  readonly library: string
  readonly classes: string
  readonly usedBy: string
}[] = [
  {
    library: 'lz4-java (net.jpountz)',
    classes:
      'LZ4Compressor, LZ4Exception, LZ4Factory, LZ4SafeDecompressor, XXHash32, XXHashFactory, util.SafeUtils',
    usedBy: 'clients: common.compress.Lz4BlockInputStream/Lz4BlockOutputStream (LZ4 compression)',
  },
  {
    library: 'snappy-java (org.xerial.snappy)',
    classes: 'SnappyInputStream, SnappyOutputStream',
    usedBy: 'clients: common.compress.SnappyCompression',
  },
  {
    library: 'opentelemetry-proto (io.opentelemetry.proto)',
    classes:
      'AnyValue, KeyValue, Resource, Metric, MetricsData, ResourceMetrics, ScopeMetrics, Sum, Gauge, NumberDataPoint, AggregationTemporality',
    usedBy: 'clients: common.telemetry.internals (client telemetry push, KIP-714)',
  },
  {
    library: 'commons-net (org.apache.commons.net.util)',
    classes: 'SubnetUtils, SubnetUtils6',
    usedBy: 'clients: server.authorizer.internals.CidrUtils (broker-side ACL host matching)',
  },
  {
    library: 'jackson-dataformat-csv (com.fasterxml.jackson.dataformat.csv)',
    classes: 'CsvMapper, CsvSchema',
    usedBy: 'tools: consumer.group.CsvUtils (--reset-offsets --export / --from-file)',
  },
]

export interface BuildOptions {
  /** a Kafka source tree, or a git repository (bare or not) to read `ref` from */
  kafka: string
  ref?: string
  /** the complete jar classpath (else found under ~/.m2/repository or /usr/share/java) */
  classpath?: string
  buildDir?: string
  log?: (line: string) => void
}

export interface Build {
  /** classpath for StreamsGroupCommand and the Admin harness */
  classpath: string
  kafkaCommit: string | null
  kafkaVersion: string
  reused: boolean
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

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  if (r.error) throw r.error
  if (r.status !== 0) {
    throw new Error(
      `${cmd} ${args.slice(0, 6).join(' ')}… failed (exit ${r.status}):\n${r.stdout}${r.stderr}`,
    )
  }
  return r.stdout
}

function javac(classpath: string, out: string, args: string[], sources: string[]): string {
  mkdirSync(out, { recursive: true })
  const argFile = `${out}.sources`
  writeFileSync(argFile, sources.map((s) => `"${s}"`).join('\n'))
  const r = spawnSync(
    'javac',
    [
      '-J-Xmx3g',
      '-nowarn',
      '-Xmaxerrs',
      '10000',
      '-encoding',
      'UTF-8',
      '--release',
      '17',
      '-proc:none',
      '-d',
      out,
      '-cp',
      classpath,
      ...args,
      `@${argFile}`,
    ],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  )
  if (r.error) throw r.error
  return r.status === 0 ? '' : `${r.stdout}${r.stderr}` || `javac exit ${r.status}`
}

function gitCommit(src: string, ref: string): string | null {
  const r = spawnSync('git', ['-C', src, 'rev-parse', `${ref}^{commit}`], { encoding: 'utf8' })
  return r.status === 0 ? r.stdout.trim() : null
}

/** A directory holding the Kafka sources the build reads, and the commit when known. */
function kafkaSources(opts: BuildOptions, buildDir: string): { root: string; commit: string | null } {
  const src = opts.kafka
  const isTree = existsSync(join(src, CLIENT_JAVA)) && existsSync(join(src, TOOLS_JAVA))
  if (isTree && opts.ref === undefined) return { root: src, commit: gitCommit(src, 'HEAD') }
  const commit = gitCommit(src, opts.ref ?? 'HEAD')
  if (commit === null)
    throw new Error(`${src} is neither a Kafka source tree (${CLIENT_JAVA}) nor a git repository`)
  const root = join(buildDir, 'kafka-src', commit)
  if (!existsSync(join(root, '.complete'))) {
    rmSync(root, { recursive: true, force: true })
    mkdirSync(root, { recursive: true })
    const tar = spawnSync('git', ['-C', src, 'archive', '--format=tar', commit, ...KAFKA_PATHS], {
      maxBuffer: 1024 * 1024 * 1024,
    })
    if (tar.status !== 0) throw new Error(`git archive failed: ${tar.stderr}`)
    const x = spawnSync('tar', ['-x', '-C', root], { input: tar.stdout })
    if (x.status !== 0) throw new Error(`tar failed: ${x.stderr}`)
    writeFileSync(join(root, '.complete'), `${commit}\n`)
  }
  return { root, commit }
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/)
  const pb = b.split(/[.-]/)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? ''
    const y = pb[i] ?? ''
    const nx = Number(x)
    const ny = Number(y)
    if (x !== '' && y !== '' && !Number.isNaN(nx) && !Number.isNaN(ny)) {
      if (nx !== ny) return nx - ny
    } else if (x !== y) return x < y ? -1 : 1
  }
  return 0
}

/** The newest jar of a Maven artifact in ~/.m2 (optionally with a version prefix), else /usr/share/java. */
function findJar(groupPath: string, artifact: string, versionPrefix = ''): string | null {
  const dir = join(homedir(), '.m2', 'repository', groupPath, artifact)
  if (existsSync(dir)) {
    const v = readdirSync(dir)
      .filter((x) => x.startsWith(versionPrefix) && existsSync(join(dir, x, `${artifact}-${x}.jar`)))
      .sort(compareVersions)
      .at(-1)
    if (v !== undefined) return join(dir, v, `${artifact}-${v}.jar`)
  }
  const debian = join('/usr/share/java', `${artifact}.jar`)
  return existsSync(debian) ? debian : null
}

export function findJars(explicit?: string): string {
  const given = explicit ?? process.env.KAFKA_INTEROP_CLASSPATH
  if (given) return given
  const base = findClasspath().split(delimiter)
  if (!base.some((j) => /slf4j-api-2\./.test(j) || j.endsWith('/slf4j-api.jar'))) {
    throw new Error(
      `slf4j-api 2.x is needed (java/ToolsLogProvider.java is an SLF4J 2 provider): ${base.join(delimiter)}`,
    )
  }
  const wanted: [string, string, string][] = [
    ['net/sf/jopt-simple', 'jopt-simple', ''],
    ['com/github/luben', 'zstd-jni', ''],
    ['org/bitbucket/b_c', 'jose4j', ''],
  ]
  const missing: string[] = []
  const jars = [...base]
  for (const [group, artifact, prefix] of wanted) {
    const jar = findJar(group, artifact, prefix)
    if (jar === null) missing.push(artifact)
    else jars.push(jar)
  }
  if (missing.length > 0) {
    throw new Error(
      `jars not found: ${missing.join(', ')} (looked in ~/.m2/repository and /usr/share/java; ` +
        'pass --classpath or KAFKA_INTEROP_CLASSPATH with every jar)',
    )
  }
  return jars.join(delimiter)
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

function kafkaVersion(root: string): string {
  const props = join(root, 'gradle.properties')
  if (!existsSync(props)) return 'unknown'
  return /^version=(.*)$/m.exec(readFileSync(props, 'utf8'))?.[1]?.trim() ?? 'unknown'
}

export function build(opts: BuildOptions): Build {
  const log = opts.log ?? (() => {})
  const buildDir = opts.buildDir ?? join(TOOL_DIR, '.build')
  mkdirSync(buildDir, { recursive: true })
  // the build holds Kafka's sources and JSON files (with // comments): keep the linter out of it
  const lintConfig = join(buildDir, 'biome.json')
  if (!existsSync(lintConfig))
    writeFileSync(lintConfig, '{ "root": false, "files": { "includes": ["!**"] } }\n')
  const jars = findJars(opts.classpath)
  const { root, commit } = kafkaSources(opts, buildDir)
  const version = kafkaVersion(root)

  const kafkaInputs =
    commit !== null && root.startsWith(buildDir)
      ? [] // a commit extracted by git archive: the commit names the inputs
      : KAFKA_PATHS.flatMap((p) => (p.includes('.') ? [join(root, p)] : listFiles(join(root, p), '')))
  // two stages, each reused while its inputs are unchanged: the clients module, then the tool classes
  const clientsKey = hashInputs(
    [...listFiles(STUBS_DIR, '.java'), GENERATE_MESSAGES, ...kafkaInputs],
    [jars, commit ?? '-', version],
  )
  const toolsKey = hashInputs(
    readdirSync(JAVA_DIR)
      .filter((f) => f.endsWith('.java'))
      .map((f) => join(JAVA_DIR, f)),
    [clientsKey],
  )
  const out = join(buildDir, 'out')
  const clientClasses = join(out, 'clients-classes')
  const toolClasses = join(out, 'tools-classes')
  const clientsStamp = join(out, 'clients-stamp.json')
  const toolsStamp = join(out, 'tools-stamp.json')
  const classpath = [toolClasses, clientClasses, jars].join(delimiter)
  const stampMatches = (file: string, key: string): boolean =>
    existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { key: string }).key === key
  const clientsReused = stampMatches(clientsStamp, clientsKey)
  if (clientsReused && stampMatches(toolsStamp, toolsKey))
    return { classpath, kafkaCommit: commit, kafkaVersion: version, reused: true }
  if (!clientsReused) {
    rmSync(out, { recursive: true, force: true })
    mkdirSync(out, { recursive: true })
    buildClients(root, out, jars, clientClasses, commit, version, log)
    writeFileSync(
      clientsStamp,
      JSON.stringify({ key: clientsKey, kafkaCommit: commit, kafkaVersion: version }),
    )
  }
  rmSync(toolClasses, { recursive: true, force: true })
  rmSync(toolsStamp, { force: true })
  buildTools(root, out, jars, clientClasses, toolClasses, log)
  writeFileSync(toolsStamp, JSON.stringify({ key: toolsKey }))
  return { classpath, kafkaCommit: commit, kafkaVersion: version, reused: false }
}

/** Steps 1–3: the generator, the generated messages and the clients module. */
function buildClients(
  root: string,
  out: string,
  jars: string,
  clientClasses: string,
  commit: string | null,
  version: string,
  log: (line: string) => void,
): void {
  // 1. the message generator, without argparse4j
  log('compiling Kafka message generator')
  const genSrc = join(out, 'generator-src')
  const generatorSources = listFiles(join(root, GENERATOR_JAVA), '.java').filter(
    (f) => !f.includes(join('org', 'apache', 'kafka', 'message', 'checker')),
  )
  for (const f of generatorSources) {
    const rel = relative(join(root, GENERATOR_JAVA), f)
    const dest = join(genSrc, rel)
    mkdirSync(dirname(dest), { recursive: true })
    const text = readFileSync(f, 'utf8')
    writeFileSync(dest, rel.endsWith('MessageGenerator.java') ? withoutCommandLine(text) : text)
  }
  const genClasses = join(out, 'generator-classes')
  const genErr = javac(jars, genClasses, [], [...listFiles(genSrc, '.java'), GENERATE_MESSAGES])
  if (genErr) throw new Error(`compiling the message generator failed:\n${genErr}`)

  // 2. every client message, as Kafka's clients:processMessages task generates them
  const generated = join(out, 'generated')
  const messageCount = listFiles(join(root, CLIENT_MESSAGES), '.json').length
  log(`generating ${messageCount} message classes`)
  run('java', [
    '-cp',
    [genClasses, jars].join(delimiter),
    'topograph.crosscheck.GenerateMessages',
    'org.apache.kafka.common.message',
    join(generated, 'org', 'apache', 'kafka', 'common', 'message'),
    join(root, CLIENT_MESSAGES),
    'ApiMessageTypeGenerator',
    'MessageDataGenerator',
    'JsonConverterGenerator',
  ])

  // 3. the clients module
  const clientSources = listFiles(join(root, CLIENT_JAVA), '.java')
  log(`compiling the clients module (${clientSources.length} sources and the generated classes)`)
  const clientErr = javac(
    jars,
    clientClasses,
    ['-implicit:class', '-sourcepath', STUBS_DIR],
    [...clientSources, ...listFiles(generated, '.java')],
  )
  if (clientErr) throw new Error(`compiling Kafka's clients module failed:\n${clientErr}`)
  for (const f of listFiles(join(root, CLIENT_RESOURCES), '')) {
    const rel = relative(join(root, CLIENT_RESOURCES), f)
    if (rel.startsWith(join('common', 'message'))) continue
    mkdirSync(dirname(join(clientClasses, rel)), { recursive: true })
    cpSync(f, join(clientClasses, rel))
  }
  mkdirSync(join(clientClasses, 'kafka'), { recursive: true })
  writeFileSync(
    join(clientClasses, 'kafka', 'kafka-version.properties'),
    `commitId=${commit === null ? 'unknown' : commit.slice(0, 16)}\nversion=${version}`,
  )
}

/** Step 4: StreamsGroupCommand and the Admin harness, with what they reach of tools and server-common. */
function buildTools(
  root: string,
  out: string,
  jars: string,
  clientClasses: string,
  toolClasses: string,
  log: (line: string) => void,
): void {
  log('compiling StreamsGroupCommand, the tools and server-common classes it needs, and the Admin harness')
  const toolErr = javac(
    [clientClasses, jars].join(delimiter),
    toolClasses,
    [
      '-implicit:class',
      '-sourcepath',
      [join(root, TOOLS_JAVA), join(root, SERVER_COMMON_JAVA), STUBS_DIR].join(delimiter),
    ],
    [
      join(root, TOOLS_JAVA, ...STREAMS_GROUP_COMMAND.split('.')) + '.java',
      join(JAVA_DIR, 'AdminHarness.java'),
      join(JAVA_DIR, 'ToolsLogProvider.java'),
    ],
  )
  if (toolErr) throw new Error(`compiling StreamsGroupCommand failed:\n${toolErr}`)
  // the tools' logging: WARN lines on stderr in Kafka's tools-log4j2.yaml pattern
  const services = join(toolClasses, 'META-INF', 'services')
  mkdirSync(services, { recursive: true })
  writeFileSync(join(services, 'org.slf4j.spi.SLF4JServiceProvider'), `${LOG_PROVIDER}\n`)
  const toolList = listFiles(toolClasses, '.class')
    .map((f) => relative(toolClasses, f).replace(/\$.*$|\.class$/g, ''))
    .filter((c, i, a) => a.indexOf(c) === i)
  writeFileSync(join(out, 'tools-classes.txt'), `${toolList.join('\n')}\n`)
  log(`  ${toolList.length} classes outside clients (list: ${relative(REPO_ROOT, out)}/tools-classes.txt)`)
}
