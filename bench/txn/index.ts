/**
 * Transactions against plain production: Kafka's Java producer (kafka-java) against a
 * `topograph start` process on a throwaway data directory, and against the ceiling (ceiling.ts: a
 * bare server in this process that answers every request of the producer at once, with no storage),
 * in one run: an idempotent producer (acks=all) as fast as it goes, the same flushing every 100
 * records, and a transactional producer committing every 100 records; 10 partitions, 100-byte
 * values. Each round runs the three modes against Topograph, then against the ceiling; three rounds
 * (BENCH_ROUNDS). The table has one row per round: the load average when its first and last mode
 * ended, each server's records/s and transactional/plain ratio, Topograph's transactional rate as a
 * share of the ceiling's, commit latency p50/p99 on each, and each server process's CPU time per 100
 * records with and without transactions (from /proc; the ceiling runs in this process, which does
 * nothing else meanwhile); then the medians.
 * Not part of the test gate.
 *
 * Run: npm run bench -- txn       (BENCH_SECONDS=10, BENCH_WARMUP_SECONDS=3, BENCH_ROUNDS=3)
 */
import { fileURLToPath } from 'node:url'
import {
  createTopics,
  InteropServer,
  kafkaBin,
  kafkaJavaSkip,
  killAll,
  run,
} from '../../test/helpers/interop.js'
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

interface Round {
  readonly topograph: Modes
  readonly ceiling: Modes
}

const TOPIC = 'bench-txn'
const PARTITIONS = 10
const TARGETS = ['topograph', 'ceiling'] as const
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)

const pct = (x: number): string => `${(x * 100).toFixed(0)} %`
const rate = (x: number): string => Math.round(x).toLocaleString('en-US')
const cpu = (m: Modes): string =>
  `${(m.plain.serverCpuMsPer100 ?? Number.NaN).toFixed(3)} / ${(m.txn.serverCpuMsPer100 ?? Number.NaN).toFixed(3)}`
const lat = (m: { commitP50Ms?: number; commitP99Ms?: number }): string =>
  m.commitP50Ms === undefined ? '—' : `${m.commitP50Ms.toFixed(2)} / ${(m.commitP99Ms ?? 0).toFixed(2)} ms`

/** Groups the JSON lines into rounds: per round, Topograph's three modes, then the ceiling's. */
function roundsOf(results: readonly ModeResult[]): Round[] {
  const out: Round[] = []
  const per = 3 * TARGETS.length
  for (let i = 0; i + per - 1 < results.length; i += per) {
    const modes = (at: number, target: string): Modes => {
      const [plain, flush, txn] = results.slice(at, at + 3) as [ModeResult, ModeResult, ModeResult]
      for (const [m, want] of [
        [plain, 'plain'],
        [flush, 'plain+flush'],
        [txn, 'txn'],
      ] as const) {
        if (m.mode !== want || m.target !== target)
          throw new Error(`unexpected result order: ${m.target} ${m.mode}, wanted ${target} ${want}`)
      }
      return { plain, flush, txn }
    }
    out.push({ topograph: modes(i, 'topograph'), ceiling: modes(i + 3, 'ceiling') })
  }
  return out
}

/**
 * One row per round: the six runs of a round ran back to back, so their ratios are taken within the
 * round (the machine's load moves between rounds); then the median of each column.
 */
function table(rs: readonly Round[]): string {
  const median = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const cells = (r: Round): number[] => [
    r.topograph.plain.recordsPerSec,
    r.topograph.flush.recordsPerSec,
    r.topograph.txn.recordsPerSec,
    r.topograph.txn.recordsPerSec / r.topograph.plain.recordsPerSec,
    r.ceiling.plain.recordsPerSec,
    r.ceiling.flush.recordsPerSec,
    r.ceiling.txn.recordsPerSec,
    r.ceiling.txn.recordsPerSec / r.ceiling.plain.recordsPerSec,
    r.topograph.txn.recordsPerSec / r.ceiling.txn.recordsPerSec,
  ]
  const fmt = (c: number[]): string =>
    [
      rate(c[0]!),
      rate(c[1]!),
      rate(c[2]!),
      pct(c[3]!),
      rate(c[4]!),
      rate(c[5]!),
      rate(c[6]!),
      pct(c[7]!),
      pct(c[8]!),
    ].join(' | ')
  const rows = rs.map(
    (r, i) =>
      `| ${i + 1} | ${r.topograph.plain.load}–${r.ceiling.txn.load} | ${fmt(cells(r))} | ${lat(r.topograph.txn)} | ${lat(r.ceiling.txn)} | ${cpu(r.topograph)} | ${cpu(r.ceiling)} |`,
  )
  const all = rs.map(cells)
  const med = all[0]!.map((_, j) => median(all.map((c) => c[j]!)))
  const medLat = (t: 'topograph' | 'ceiling') =>
    lat({
      commitP50Ms: median(rs.map((r) => r[t].txn.commitP50Ms ?? 0)),
      commitP99Ms: median(rs.map((r) => r[t].txn.commitP99Ms ?? 0)),
    })
  const medCpu = (t: 'topograph' | 'ceiling') =>
    `${median(rs.map((r) => r[t].plain.serverCpuMsPer100 ?? 0)).toFixed(3)} / ${median(rs.map((r) => r[t].txn.serverCpuMsPer100 ?? 0)).toFixed(3)}`
  rows.push(
    `| median | | ${fmt(med)} | ${medLat('topograph')} | ${medLat('ceiling')} | ${medCpu('topograph')} | ${medCpu('ceiling')} |`,
  )
  return [
    '| round | load | Topograph plain rec/s | plain+flush | txn | **txn / plain** | ceiling plain rec/s | plain+flush | txn | **txn / plain** | Topograph txn / ceiling txn | Topograph commit p50 / p99 | ceiling commit p50 / p99 | Topograph CPU ms / 100 rec, plain / txn | ceiling CPU ms / 100 rec, plain / txn |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n')
}

if (kafkaJavaSkip) {
  console.log(`skipped: ${kafkaJavaSkip}`)
  process.exit(0)
}
const server = await InteropServer.start()
const ceiling = await startTxnCeiling(TOPIC, PARTITIONS)
try {
  await createTopics(server.bootstrap, [{ name: TOPIC, partitions: PARTITIONS }])
  const program = fileURLToPath(new URL('./TxnBench.java', import.meta.url))
  const r = await run(
    kafkaBin('kafka-run-class'),
    [
      program,
      TOPIC,
      String(seconds),
      String(warmup),
      String(rounds),
      `topograph=${server.bootstrap}@${server.process.child.pid}`,
      `ceiling=${ceiling.bootstrap}@${process.pid}`,
    ],
    { timeoutMs: (seconds + warmup) * 3 * TARGETS.length * rounds * 1000 + 120_000 },
  )
  if (r.code !== 0) throw new Error(`TxnBench exited with ${r.code}:\n${r.stdout}${r.stderr}`)
  const results = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as ModeResult)
  console.log(table(roundsOf(results)))
} finally {
  await ceiling.close()
  await server.close()
  await killAll()
}
