/**
 * Runs Kafka's StreamsGroupCommand and our kafka-streams-groups with the same arguments and compares
 * stdout, stderr and the exit code byte for byte. Both run in the current directory, the Topograph
 * checkout under test (our command is its src/cli/kafka-streams-groups.ts).
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { STREAMS_GROUP_COMMAND } from './build.js'

export interface ToolRun {
  readonly stdout: Buffer
  readonly stderr: Buffer
  readonly code: number | null
  readonly ms: number
}

export interface Comparison {
  /** stdout, stderr and exit code equal byte for byte */
  readonly identical: boolean
  /** equal once the time stamps of log lines ("[yyyy-MM-dd HH:mm:ss,SSS] WARN …") are masked */
  readonly identicalButLogTimes: boolean
  readonly stdoutSame: boolean
  readonly stderrSame: boolean
  readonly codeSame: boolean
  /**
   * stdout and exit code equal, and stderr equal up to the usage text (both print the same message
   * line, then a usage table starting with "Option", which differs)
   */
  readonly usageTextOnly: boolean
  /** stderr equal once Java stack frames ("\tat …", "\t... n more") are left out of both */
  readonly stderrSameWithoutStackFrames: boolean
  /** unified diffs and first differing bytes, for the streams that differ */
  readonly details: string
}

/**
 * JVM options: quick start-up, and what kafka-run-class.sh gives a tool (headless; logging at WARN on
 * stderr, here through java/ToolsLogProvider.java).
 */
function javaArgs(classpath: string): string[] {
  return [
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    '-Xshare:auto',
    '-Djava.awt.headless=true',
    '-cp',
    classpath,
  ]
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env }
  // the JVM announces these on stderr ("Picked up …"), which would spoil the comparison
  for (const k of ['JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS']) delete env[k]
  return env
}

function runProcess(cmd: string, args: readonly string[], timeoutMs: number): Promise<ToolRun> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: process.cwd(), env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (d: Buffer) => out.push(d))
    child.stderr.on('data', (d: Buffer) => err.push(d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), code, ms: Date.now() - started })
    })
  })
}

export function runKafka(classpath: string, args: readonly string[], timeoutMs = 120_000): Promise<ToolRun> {
  return runProcess('java', [...javaArgs(classpath), STREAMS_GROUP_COMMAND, ...args], timeoutMs)
}

export function runOurs(args: readonly string[], timeoutMs = 120_000): Promise<ToolRun> {
  return runProcess(
    process.execPath,
    ['--import', 'tsx', join(process.cwd(), 'src', 'cli', 'kafka-streams-groups.ts'), ...args],
    timeoutMs,
  )
}

const LOG_TIME = /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (?=(TRACE|DEBUG|INFO|WARN|ERROR) )/gm
const maskLogTimes = (b: Buffer): string => b.toString('utf8').replace(LOG_TIME, '[<time>] ')

const withoutStackFrames = (b: Buffer): string =>
  b
    .toString('utf8')
    .split('\n')
    .filter((l) => !/^\s+at \S/.test(l) && !/^\s+\.\.\. \d+ more$/.test(l))
    .join('\n')

/** Index of the first differing byte, and both sides around it (JSON-escaped). */
export function firstDifference(a: Buffer, b: Buffer): string {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  const from = Math.max(0, i - 20)
  const show = (x: Buffer) =>
    i >= x.length ? '(end)' : JSON.stringify(x.subarray(from, Math.min(x.length, i + 40)).toString('utf8'))
  return `first difference at byte ${i} (line ${a.subarray(0, i).toString('utf8').split('\n').length}): kafka ${show(a)} | ours ${show(b)}`
}

/** `diff -u` of the two byte streams, written under `dir`. */
function unifiedDiff(dir: string, name: string, kafka: Buffer, ours: Buffer): string {
  mkdirSync(dir, { recursive: true })
  const k = join(dir, `kafka.${name}`)
  const o = join(dir, `ours.${name}`)
  writeFileSync(k, kafka)
  writeFileSync(o, ours)
  const r = spawnSync('diff', ['-u', '--label', `kafka ${name}`, '--label', `ours ${name}`, k, o], {
    encoding: 'utf8',
  })
  return r.stdout
}

export function compare(kafka: ToolRun, ours: ToolRun, dir: string): Comparison {
  const stdoutSame = kafka.stdout.equals(ours.stdout)
  const stderrSame = kafka.stderr.equals(ours.stderr)
  const codeSame = kafka.code === ours.code
  const details: string[] = []
  mkdirSync(dir, { recursive: true })
  // both outputs are kept, identical or not
  writeFileSync(join(dir, 'kafka.stdout'), kafka.stdout)
  writeFileSync(join(dir, 'kafka.stderr'), kafka.stderr)
  writeFileSync(join(dir, 'ours.stdout'), ours.stdout)
  writeFileSync(join(dir, 'ours.stderr'), ours.stderr)
  if (!codeSame) details.push(`exit code: kafka ${kafka.code}, ours ${ours.code}`)
  for (const [name, k, o, same] of [
    ['stdout', kafka.stdout, ours.stdout, stdoutSame],
    ['stderr', kafka.stderr, ours.stderr, stderrSame],
  ] as const) {
    if (same) continue
    details.push(firstDifference(k, o))
    details.push(unifiedDiff(dir, name, k, o).trimEnd())
  }
  const [kFirst, kSecond] = kafka.stderr.toString('utf8').split('\n')
  const [oFirst, oSecond] = ours.stderr.toString('utf8').split('\n')
  return {
    identical: stdoutSame && stderrSame && codeSame,
    usageTextOnly:
      stdoutSame &&
      codeSame &&
      !stderrSame &&
      kFirst === oFirst &&
      (kSecond ?? '').startsWith('Option ') &&
      (oSecond ?? '').startsWith('Option '),
    identicalButLogTimes:
      codeSame &&
      maskLogTimes(kafka.stdout) === maskLogTimes(ours.stdout) &&
      maskLogTimes(kafka.stderr) === maskLogTimes(ours.stderr),
    stdoutSame,
    stderrSame,
    codeSame,
    stderrSameWithoutStackFrames: withoutStackFrames(kafka.stderr) === withoutStackFrames(ours.stderr),
    details: details.join('\n'),
  }
}
