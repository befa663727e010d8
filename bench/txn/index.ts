/**
 * Transactions against plain production: Kafka's Java producer (kafka-java) against a
 * `topograph start` process on a throwaway data directory, and against the ceiling (ceiling.ts: a
 * bare server in this process that answers every request of the producer at once, with no storage),
 * in one run: an idempotent producer (acks=all) as fast as it goes, the same flushing every 100
 * records, and a transactional producer committing every 100 records; 10 partitions, 100-byte
 * values. Each round runs the three modes against Topograph and against the ceiling, the servers
 * taking turns to go first; three rounds (BENCH_ROUNDS). With BENCH_BASELINE_DIR (a checkout of
 * another commit, e.g. from `git archive`, with node_modules) a second Topograph server runs from
 * there and gets its three modes in every round too: a before/after in the same sitting.
 *
 * The table has one row per round: the range of the load average when its modes ended; per
 * server its records/s in each mode, the transactional/plain ratio, commit latency p50/p99 and the
 * server process's CPU time per 100 records without and with transactions (from /proc; the ceiling
 * runs in this process, which does nothing else meanwhile); then each Topograph's transactional
 * rate as a share of the ceiling's. The last row has the medians. Not part of the test gate.
 *
 * Run: npm run bench -- txn       (BENCH_SECONDS=10, BENCH_WARMUP_SECONDS=3, BENCH_ROUNDS=3)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  createTopics,
  InteropServer,
  kafkaBin,
  kafkaJavaSkip,
  killAll,
  ManagedProcess,
  run,
} from '../../test/helpers/interop.js'
import { freeLoopbackPort } from '../../test/helpers/topograph-process.js'
import { startTxnCeiling } from './ceiling.js'

interface ModeResult {
  readonly target: string
  readonly mode: string
  /** One-minute load average when the mode's run ended. */
  readonly load: number
  readonly records: number
  readonly seconds: number
  readonly recordsPerSec: number
  readonly commits?: number
  readonly commitP50Ms?: number
  readonly commitP99Ms?: number
  /** The server process's CPU time (user + system) per 100 records of the measured window. */
  readonly serverCpuMsPer100?: number
}

interface Modes {
  readonly plain: ModeResult
  readonly flush: ModeResult
  readonly txn: ModeResult
}

/** Per round, each target's three modes. */
type Round = ReadonlyMap<string, Modes>

const TOPIC = 'bench-txn'
const PARTITIONS = 10
const MODES = ['plain', 'plain+flush', 'txn'] as const
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const baselineDir = process.env.BENCH_BASELINE_DIR

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const pct = (x: number): string => `${(x * 100).toFixed(0)} %`
const rate = (x: number): string => Math.round(x).toLocaleString('en-US')
const ms = (x: number | undefined): string => (x === undefined ? '—' : x.toFixed(2))
const cpu = (x: number | undefined): string => (x === undefined ? '—' : x.toFixed(3))

/** Groups the JSON lines into rounds: per round, each target's three modes (targets take turns to go first). */
function roundsOf(results: readonly ModeResult[], targets: readonly string[]): Round[] {
  const out: Round[] = []
  const per = MODES.length * targets.length
  for (let i = 0; i + per - 1 < results.length; i += per) {
    const lines = results.slice(i, i + per)
    const round = new Map<string, Modes>()
    for (const target of targets) {
      const of = (mode: string): ModeResult => {
        const m = lines.find((l) => l.target === target && l.mode === mode)
        if (m === undefined) throw new Error(`round ${out.length + 1} has no ${target} ${mode}`)
        return m
      }
      round.set(target, { plain: of('plain'), flush: of('plain+flush'), txn: of('txn') })
    }
    out.push(round)
  }
  return out
}

/**
 * One row per round: the runs of a round ran back to back, so their ratios are taken within the
 * round (the machine's load moves between rounds); then the median of each column.
 */
function table(rs: readonly Round[], targets: readonly string[]): string {
  const servers = targets.filter((t) => t !== 'ceiling')
  const head = ['round', 'load']
  for (const t of targets) {
    head.push(
      `${t} plain rec/s`,
      'plain+flush',
      'txn',
      '**txn / plain**',
      'commit p50 / p99 ms',
      'CPU ms / 100 rec, plain / txn',
    )
  }
  for (const t of servers) head.push(`${t} txn / ceiling txn`)
  /** A row's numbers: per target 8, then one share per server. */
  const numbers = (r: Round): number[] => {
    const out: number[] = []
    for (const t of targets) {
      const m = r.get(t)!
      out.push(
        m.plain.recordsPerSec,
        m.flush.recordsPerSec,
        m.txn.recordsPerSec,
        m.txn.recordsPerSec / m.plain.recordsPerSec,
        m.txn.commitP50Ms ?? Number.NaN,
        m.txn.commitP99Ms ?? Number.NaN,
        m.plain.serverCpuMsPer100 ?? Number.NaN,
        m.txn.serverCpuMsPer100 ?? Number.NaN,
      )
    }
    for (const t of servers) out.push(r.get(t)!.txn.recordsPerSec / r.get('ceiling')!.txn.recordsPerSec)
    return out
  }
  const cells = (n: readonly number[]): string[] => {
    const out: string[] = []
    targets.forEach((_, t) => {
      const [plain, flush, txn, ratio, p50, p99, cpuPlain, cpuTxn] = n.slice(8 * t, 8 * t + 8) as number[]
      out.push(
        rate(plain!),
        rate(flush!),
        rate(txn!),
        pct(ratio!),
        `${ms(p50)} / ${ms(p99)}`,
        `${cpu(cpuPlain)} / ${cpu(cpuTxn)}`,
      )
    })
    for (const share of n.slice(8 * targets.length)) out.push(pct(share))
    return out
  }
  const all = rs.map(numbers)
  const rows = rs.map((r, i) => {
    const loads = targets.flatMap((t) => [r.get(t)!.plain.load, r.get(t)!.txn.load])
    const range = `${Math.min(...loads)}–${Math.max(...loads)}`
    return ['', String(i + 1), range, ...cells(all[i]!), ''].join(' | ').trim()
  })
  const medians = all[0]!.map((_, j) => median(all.map((n) => n[j]!)))
  rows.push(['', 'median', '', ...cells(medians), ''].join(' | ').trim())
  return [
    `| ${head.join(' | ')} |`,
    `|---|---|${head
      .slice(2)
      .map(() => '---:')
      .join('|')}|`,
    ...rows,
  ].join('\n')
}

/** `topograph start` from another checkout (BENCH_BASELINE_DIR), on its own data directory. */
async function startBaseline(
  dir: string,
): Promise<{ bootstrap: string; pid: number; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'topograph-bench-baseline-'))
  const port = await freeLoopbackPort()
  const settings = {
    listeners: `PLAINTEXT://127.0.0.1:${port}`,
    'console.listener': 'none',
    'data.dir': dataDir,
  }
  const args = ['--import', 'tsx', 'src/cli/topograph.ts', 'start']
  for (const [k, v] of Object.entries(settings)) args.push('--override', `${k}=${v}`)
  const proc = new ManagedProcess('baseline topograph start', process.execPath, args, { cwd: dir })
  await proc.waitFor(/Listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/, 90_000, { stream: 'all' })
  return {
    bootstrap: `127.0.0.1:${port}`,
    pid: proc.child.pid!,
    close: async () => {
      try {
        await proc.stop(20_000)
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    },
  }
}

if (kafkaJavaSkip) {
  console.log(`skipped: ${kafkaJavaSkip}`)
  process.exit(0)
}
const server = await InteropServer.start()
const baseline = baselineDir === undefined ? undefined : await startBaseline(baselineDir)
const ceiling = await startTxnCeiling(TOPIC, PARTITIONS)
try {
  const targets = [
    `topograph=${server.bootstrap}@${server.process.child.pid}`,
    ...(baseline === undefined ? [] : [`baseline=${baseline.bootstrap}@${baseline.pid}`]),
    `ceiling=${ceiling.bootstrap}@${process.pid}`,
  ]
  await createTopics(server.bootstrap, [{ name: TOPIC, partitions: PARTITIONS }])
  if (baseline !== undefined)
    await createTopics(baseline.bootstrap, [{ name: TOPIC, partitions: PARTITIONS }])
  const program = fileURLToPath(new URL('./TxnBench.java', import.meta.url))
  const r = await run(
    kafkaBin('kafka-run-class'),
    [program, TOPIC, String(seconds), String(warmup), String(rounds), ...targets],
    { timeoutMs: (seconds + warmup) * MODES.length * targets.length * rounds * 1000 + 120_000 },
  )
  if (r.code !== 0) throw new Error(`TxnBench exited with ${r.code}:\n${r.stdout}${r.stderr}`)
  const results = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as ModeResult)
  const names = targets.map((t) => t.slice(0, t.indexOf('=')))
  console.log(table(roundsOf(results, names), names))
} finally {
  await ceiling.close()
  await baseline?.close()
  await server.close()
  await killAll()
}
