/**
 * Runs Apache Kafka's own Java admin client and kafka-streams-groups tool against a Topograph server.
 *
 *   npm run interop:kafka -- <kafka-source-tree-or-git-repo> [options]
 *
 * 1. Builds Kafka's clients module and StreamsGroupCommand from the tree (build.ts; nothing from Kafka
 *    is kept in this repository).
 * 2. Starts `topograph start` from this repository and sets up streams groups with live members that
 *    pushed their topology descriptions, an empty group, a classic group and committed offsets
 *    (scenario.ts).
 * 3. Runs every command line of cli-cases.ts with Kafka's StreamsGroupCommand and with our
 *    kafka-streams-groups (src/cli/kafka-streams-groups.ts), back to back against the same state, and
 *    compares stdout, stderr and the exit code byte for byte. When the server state changed between the
 *    two runs (checked with a fingerprint of groups, descriptions and offsets) the pair is run again.
 * 4. Runs Kafka's Admin API (java/AdminHarness.java) call by call (admin.ts): does Kafka's client accept
 *    Topograph's answers, and does it see what our admin client sees?
 *
 * Options: --ref REF (with a git repository, default HEAD), --classpath CP (every jar, see build.ts),
 * --topograph DIR (the Topograph checkout whose server and kafka-streams-groups are run, default this
 * one; it needs node_modules, a symbolic link to this checkout's will do),
 * --only a,b (case ids or groups: list, describe, all-groups, unknown, validation, offsets, delete,
 * admin), --report FILE (JSON, default tools/kafka-interop/.build/report.json), --show (print both
 * outputs of every case). The Kafka path may also come from KAFKA_SRC. Outputs of every case are kept
 * under tools/kafka-interop/.build/results/. Exit status 1 when a command differs or Kafka's client
 * fails where it should not.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { type AdminResult, adminCases, runAdminCases } from './admin.js'
import { build, REPO_ROOT, STAND_INS, TOOL_DIR } from './build.js'
import { type CliCase, cliCases, COMMAND_CONFIG, COMMAND_CONFIG_TEXT } from './cli-cases.js'
import { type Comparison, compare, runKafka, runOurs, type ToolRun } from './compare.js'
import { Scenario } from './scenario.js'

interface CaseResult {
  readonly id: string
  readonly group: string
  readonly args: readonly string[]
  readonly comparison: Comparison
  readonly kafka: { code: number | null; ms: number }
  readonly ours: { code: number | null; ms: number }
  readonly attempts: number
  readonly stateStable: boolean
  /** Kafka's output names a stand-in's exception: the comparison says nothing (see build.ts) */
  readonly kafkaReachedStandIn: boolean
  /**
   * Set when stdout differs only in the order of its lines: how often Kafka's command ran, how many
   * distinct stdouts it printed, and whether one of them is ours byte for byte (Kafka's row order can
   * vary from one JVM to the next: ImmutableCollections.MapN iterates in a per-JVM random order, and
   * it decides the insertion order of some HashMaps the tool prints)
   */
  readonly rowOrder?: { kafkaRuns: number; kafkaVariants: number; oursIsOne: boolean }
}

const MAX_ATTEMPTS = 3
/**
 * More runs of Kafka's command when stdout differs only in row order: stops once ours was seen, or
 * when Kafka printed one order only in MIN_RUNS runs
 */
const KAFKA_RERUNS = 20
const MIN_RUNS = 5

const sortedLines = (b: Buffer): string => b.toString('utf8').split('\n').sort().join('\n')

async function runCase(
  c: CliCase,
  scenario: Scenario,
  classpath: string,
  resultsDir: string,
): Promise<{ result: CaseResult; kafka: ToolRun; ours: ToolRun }> {
  const args = c.noBootstrap ? [...c.args] : ['--bootstrap-server', scenario.bootstrap, ...c.args]
  const dir = join(resultsDir, c.id)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  let last: { result: CaseResult; kafka: ToolRun; ours: ToolRun } | null = null
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    await c.setup?.(scenario)
    const before = c.setup ? '' : await scenario.fingerprint()
    const kafka = await runKafka(classpath, args)
    await c.setup?.(scenario)
    const ours = await runOurs(args)
    const after = c.setup ? '' : await scenario.fingerprint()
    const comparison = compare(kafka, ours, dir)
    const stateStable = before === after
    last = {
      result: {
        id: c.id,
        group: c.group,
        args,
        comparison,
        kafka: { code: kafka.code, ms: kafka.ms },
        ours: { code: ours.code, ms: ours.ms },
        attempts: attempt,
        stateStable,
        kafkaReachedStandIn: /stand-in/.test(`${kafka.stdout}${kafka.stderr}`),
      },
      kafka,
      ours,
    }
    if (comparison.identicalButLogTimes || stateStable) break
  }
  const r = last!
  const cmp = r.result.comparison
  if (
    !cmp.stdoutSame &&
    cmp.stderrSame &&
    cmp.codeSame &&
    sortedLines(r.kafka.stdout) === sortedLines(r.ours.stdout)
  ) {
    const variants = new Set([r.kafka.stdout.toString('base64')])
    const oursKey = r.ours.stdout.toString('base64')
    let runs = 1
    for (; runs <= KAFKA_RERUNS && !c.setup && !variants.has(oursKey); runs++) {
      if (variants.size === 1 && runs >= MIN_RUNS) break
      const again = await runKafka(classpath, args)
      variants.add(again.stdout.toString('base64'))
    }
    const rowOrder = { kafkaRuns: runs, kafkaVariants: variants.size, oursIsOne: variants.has(oursKey) }
    return { ...r, result: { ...r.result, rowOrder } }
  }
  return r
}

function gitHead(dir: string): string | null {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
  } catch {
    return null
  }
}

function gitDirty(dir: string): boolean {
  try {
    return (
      execFileSync('git', ['-C', dir, 'status', '--porcelain', '--', 'src'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() !== ''
    )
  } catch {
    return false
  }
}

const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      ref: { type: 'string' },
      classpath: { type: 'string' },
      only: { type: 'string' },
      report: { type: 'string' },
      show: { type: 'boolean', default: false },
      topograph: { type: 'string' },
    },
  })
  const kafkaSrc = positionals[0] ?? process.env.KAFKA_SRC
  if (!kafkaSrc) {
    process.stderr.write(
      'usage: npm run interop:kafka -- <kafka-source-tree-or-git-repo> [--only ids] [--show]\n',
    )
    return 2
  }
  const topographDir = resolve(values.topograph ?? REPO_ROOT)
  // the server (test/helpers/topograph-process.ts) and both commands run in the checkout under test
  process.chdir(topographDir)
  const buildDir = join(TOOL_DIR, '.build')
  const started = Date.now()
  const b = build({
    kafka: kafkaSrc,
    ref: values.ref,
    classpath: values.classpath,
    buildDir,
    log: (l) => process.stdout.write(`${l}\n`),
  })
  process.stdout.write(
    `Kafka ${b.kafkaVersion} (${b.kafkaCommit ?? 'unknown commit'}), build ${b.reused ? 'reused' : 'done'} in ${Math.round((Date.now() - started) / 1000)} s\n`,
  )
  process.stdout.write(
    `compile-time stand-ins (never reached by these commands): ${STAND_INS.map((x) => x.library).join(', ')}\n`,
  )
  const filters = values.only?.split(',').map((x) => x.trim()) ?? []
  const only = (id: string, group: string) =>
    filters.length === 0 || filters.includes(id) || filters.includes(group)

  const commandConfig = join(buildDir, COMMAND_CONFIG)
  writeFileSync(commandConfig, COMMAND_CONFIG_TEXT)
  const resultsDir = join(buildDir, 'results')
  const scenario = await Scenario.start((l) => process.stdout.write(`${l}\n`))
  const results: CaseResult[] = []
  let admin: { results: AdminResult[]; harnessStderr: string } = { results: [], harnessStderr: '' }
  try {
    const cases = cliCases(commandConfig).filter((c) => only(c.id, c.group))
    process.stdout.write(
      `\n${cases.length} command lines, each run by Kafka's StreamsGroupCommand and by ours\n`,
    )
    for (const c of cases) {
      const { result, kafka, ours } = await runCase(c, scenario, b.classpath, resultsDir)
      results.push(result)
      const cmp = result.comparison
      process.stdout.write(
        `${verdictOf(result)}  ${c.id}  [exit ${kafka.code}${kafka.code === ours.code ? '' : `/${ours.code}`}]${result.stateStable ? '' : '  (server state changed during the runs)'}\n`,
      )
      if (!cmp.identical) {
        process.stdout.write(
          `  kafka-streams-groups ${result.args.map(quote).join(' ')}\n${indent(cmp.details)}\n`,
        )
      }
      if (values.show) {
        process.stdout.write(
          `  --- kafka stdout\n${indent(kafka.stdout.toString())}\n  --- kafka stderr\n${indent(kafka.stderr.toString())}\n`,
        )
      }
    }
    const adminWanted = (id: string) =>
      filters.length === 0 || filters.includes('admin') || filters.includes(id)
    if (adminCases().some((c) => adminWanted(c.id))) {
      process.stdout.write(
        `\nKafka's Admin client (java/AdminHarness.java), next to Topograph's admin client\n`,
      )
      admin = await runAdminCases(b.classpath, scenario, adminWanted)
      for (const r of admin.results) {
        const kafkaSide = summarize(r.kafka)
        process.stdout.write(
          `${r.asExpected ? 'accepted' : 'UNEXPECTED'}  ${r.id}: ${kafkaSide}${r.same === null ? '' : r.same ? '; same as ours' : '; DIFFERS from ours'}\n`,
        )
        if (!r.asExpected) process.stdout.write(`  expected ${r.expectation}\n`)
        if (r.same === false) {
          process.stdout.write(`  kafka: ${JSON.stringify(r.kafka)}\n  ours:  ${JSON.stringify(r.ours)}\n`)
        }
      }
      if (admin.harnessStderr.trim() !== '')
        process.stdout.write(`  harness stderr:\n${indent(admin.harnessStderr)}\n`)
    }
  } finally {
    await scenario.close()
  }

  const valid = results.filter((r) => !r.kafkaReachedStandIn)
  const invalid = results.length - valid.length
  const identical = valid.filter((r) => r.comparison.identical).length
  const logTimes = valid.filter((r) => !r.comparison.identical && r.comparison.identicalButLogTimes).length
  const kafkaOrder = valid.filter((r) => r.rowOrder?.oursIsOne === true).length
  const differing = valid.length - identical - logTimes - kafkaOrder
  const adminOk = admin.results.filter((r) => r.asExpected).length
  const adminSame = admin.results.filter((r) => r.same === true).length
  const adminCompared = admin.results.filter((r) => r.same !== null).length
  process.stdout.write(
    `\n${results.length} command lines: ${identical} identical (stdout, stderr, exit code), ` +
      `${logTimes} identical but for the time stamps of log lines, ` +
      `${kafkaOrder} equal to one of Kafka's own run-to-run row orders, ${differing} differing` +
      `${invalid > 0 ? `, ${invalid} INVALID (a stand-in was reached)` : ''}; ` +
      `Kafka's Admin client: ${adminOk}/${admin.results.length} calls as expected, ` +
      `${adminSame}/${adminCompared} equal to Topograph's admin client\n`,
  )
  const reportFile = values.report ?? join(buildDir, 'report.json')
  mkdirSync(dirname(reportFile), { recursive: true })
  writeFileSync(
    reportFile,
    `${JSON.stringify(
      {
        kafkaCommit: b.kafkaCommit,
        kafkaVersion: b.kafkaVersion,
        topographDir,
        topographCommit: gitHead(topographDir),
        topographSrcModified: gitDirty(topographDir),
        date: new Date().toISOString(),
        standIns: STAND_INS,
        cli: results,
        admin: admin.results,
      },
      null,
      2,
    )}\n`,
  )
  process.stdout.write(`report: ${reportFile}; outputs: ${resultsDir}\n`)
  return differing === 0 && invalid === 0 && adminOk === admin.results.length ? 0 : 1
}

function verdictOf(r: CaseResult): string {
  const cmp = r.comparison
  if (r.kafkaReachedStandIn) return 'INVALID (Kafka reached a compile-time stand-in)'
  if (cmp.identical) return 'identical'
  if (cmp.identicalButLogTimes) return 'identical (log time stamps masked)'
  if (r.rowOrder) {
    const { kafkaRuns, kafkaVariants, oursIsOne } = r.rowOrder
    const seen = `Kafka printed ${kafkaVariants} order${kafkaVariants === 1 ? '' : 's'} in ${kafkaRuns} run${kafkaRuns === 1 ? '' : 's'}`
    return oursIsOne
      ? `same as one of Kafka's row orders (${seen}, ours among them)`
      : `DIFFERS (row order only; ${seen}, ours not among them)`
  }
  if (cmp.usageTextOnly) return 'DIFFERS (usage text only: same message line, other usage table)'
  const parts = [
    !cmp.stdoutSame && 'stdout',
    !cmp.stderrSame && `stderr${cmp.stderrSameWithoutStackFrames ? ' (stack frames only)' : ''}`,
    !cmp.codeSame && 'exit code',
  ].filter(Boolean)
  return `DIFFERS (${parts.join(', ')})`
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')
}

function summarize(o: AdminResult['kafka']): string {
  if (!o.ok) return `${o.error?.class}: ${o.error?.message}`
  const r = o.result
  if (
    r !== null &&
    typeof r === 'object' &&
    !Array.isArray(r) &&
    Object.values(r).every((v) => v !== null && typeof v === 'object' && 'ok' in (v as object))
  ) {
    return Object.entries(r)
      .map(([k, v]) => {
        const x = v as unknown as AdminResult['kafka']
        return `${k} → ${x.ok ? 'ok' : `${x.error?.class?.replace(/^.*\./, '')}: ${x.error?.message}`}`
      })
      .join('; ')
  }
  const text = JSON.stringify(r)
  return text.length > 160 ? `ok (${text.slice(0, 157)}…)` : `ok ${text}`
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    process.exit(1)
  },
)
