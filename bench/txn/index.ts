/**
 * Transactions against plain production: Kafka's Java producer (kafka-java) against a
 * `topograph start` process on a throwaway data directory, in one run: an idempotent producer
 * (acks=all) as fast as it goes, the same flushing every 100 records, and a transactional producer
 * committing every 100 records; 10 partitions, 100-byte values. The modes run in turn, three rounds
 * (BENCH_ROUNDS); the table has one row per round (the load average when its first and last mode
 * ended, each mode's records/s, the transactional rate against the plain one and against the
 * flushing one within the round, transactions/s, commit latency p50/p99), then the medians. Not
 * part of the test gate.
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

interface ModeResult {
  readonly mode: string
  /** One-minute load average when the mode's run ended. */
  readonly load: number
  readonly records: number
  readonly seconds: number
  readonly recordsPerSec: number
  readonly commits?: number
  readonly commitP50Ms?: number
  readonly commitP99Ms?: number
}

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)

const pct = (x: number, of: number): string => `${((x / of) * 100).toFixed(0)} %`
const ms = (x: number | undefined): string => (x === undefined ? '—' : `${x.toFixed(2)} ms`)

/**
 * One row per round: the three modes of a round ran back to back, so their ratios are taken within
 * the round (the machine's load moves between rounds); then the median of each column.
 */
function table(results: readonly ModeResult[]): string {
  const rounds: { plain: ModeResult; flush: ModeResult; txn: ModeResult }[] = []
  for (let i = 0; i + 2 < results.length; i += 3) {
    const [plain, flush, txn] = results.slice(i, i + 3) as [ModeResult, ModeResult, ModeResult]
    if (plain.mode !== 'plain' || flush.mode !== 'plain+flush' || txn.mode !== 'txn')
      throw new Error(`unexpected mode order: ${plain.mode}, ${flush.mode}, ${txn.mode}`)
    rounds.push({ plain, flush, txn })
  }
  const median = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const rows = rounds.map(
    (r, i) =>
      `| ${i + 1} | ${r.plain.load}–${r.txn.load} | ${r.plain.recordsPerSec.toFixed(0)} | ${r.flush.recordsPerSec.toFixed(0)} | ${r.txn.recordsPerSec.toFixed(0)} | ${pct(r.txn.recordsPerSec, r.plain.recordsPerSec)} | ${pct(r.txn.recordsPerSec, r.flush.recordsPerSec)} | ${(r.txn.recordsPerSec / 100).toFixed(0)} | ${ms(r.txn.commitP50Ms)} | ${ms(r.txn.commitP99Ms)} |`,
  )
  const m = (f: (r: (typeof rounds)[0]) => number) => median(rounds.map(f))
  rows.push(
    `| median | | ${m((r) => r.plain.recordsPerSec).toFixed(0)} | ${m((r) => r.flush.recordsPerSec).toFixed(0)} | ${m((r) => r.txn.recordsPerSec).toFixed(0)} | ${pct(
      m((r) => r.txn.recordsPerSec / r.plain.recordsPerSec),
      1,
    )} | ${pct(
      m((r) => r.txn.recordsPerSec / r.flush.recordsPerSec),
      1,
    )} | ${m((r) => r.txn.recordsPerSec / 100).toFixed(0)} | ${ms(m((r) => r.txn.commitP50Ms ?? 0))} | ${ms(m((r) => r.txn.commitP99Ms ?? 0))} |`,
  )
  return [
    '| round | load | plain rec/s | plain+flush rec/s | txn rec/s | txn / plain | txn / plain+flush | txn/s | commit p50 | commit p99 |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n')
}

if (kafkaJavaSkip) {
  console.log(`skipped: ${kafkaJavaSkip}`)
  process.exit(0)
}
const server = await InteropServer.start()
try {
  await createTopics(server.bootstrap, [{ name: 'bench-txn', partitions: 10 }])
  const program = fileURLToPath(new URL('./TxnBench.java', import.meta.url))
  const r = await run(
    kafkaBin('kafka-run-class'),
    [program, server.bootstrap, 'bench-txn', String(seconds), String(warmup), String(rounds)],
    { timeoutMs: (seconds + warmup) * 3 * rounds * 1000 + 120_000 },
  )
  if (r.code !== 0) throw new Error(`TxnBench exited with ${r.code}:\n${r.stdout}${r.stderr}`)
  const results = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as ModeResult)
  console.log(table(results))
} finally {
  await server.close()
  await killAll()
}
