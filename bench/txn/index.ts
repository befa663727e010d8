/**
 * Transactions against plain production: Kafka's Java producer (kafka-java) against a
 * `topograph start` process on a throwaway data directory, in one run: an idempotent producer
 * (acks=all) as fast as it goes, the same flushing every 100 records, and a transactional producer
 * committing every 100 records; 10 partitions, 100-byte values. The modes run in turn, three rounds
 * (BENCH_ROUNDS); the table shows each mode's median round: records/s, against the plain rate, and
 * the commit latency p50/p99. Not part of the test gate.
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

/** The round with the median records/s of each mode, in the order the modes first ran. */
function medians(results: readonly ModeResult[]): ModeResult[] {
  const modes = [...new Set(results.map((x) => x.mode))]
  return modes.map((mode) => {
    const runs = results.filter((x) => x.mode === mode).sort((a, b) => a.recordsPerSec - b.recordsPerSec)
    return runs[Math.floor(runs.length / 2)]!
  })
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
  const results = medians(
    r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as ModeResult),
  )
  const plain = results.find((x) => x.mode === 'plain')!.recordsPerSec
  const rows = [
    '| producer | records/s | vs plain | commits | commit p50 | commit p99 |',
    '|---|---|---|---|---|---|',
    ...results.map(
      (x) =>
        `| ${x.mode} | ${x.recordsPerSec.toFixed(0)} | ${((x.recordsPerSec / plain) * 100).toFixed(0)} % | ${x.commits ?? '—'} | ${x.commitP50Ms === undefined ? '—' : `${x.commitP50Ms.toFixed(2)} ms`} | ${x.commitP99Ms === undefined ? '—' : `${x.commitP99Ms.toFixed(2)} ms`} |`,
    ),
  ]
  console.log(rows.join('\n'))
} finally {
  await server.close()
  await killAll()
}
