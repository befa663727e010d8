// bench/data: Produce and Fetch throughput against the append and read ceilings and the
// produce-to-consume latency at half load; server memory while one partition grows; opening 1,000
// partitions after a clean shutdown; the cost of compaction. Each part runs in its own process, one
// after the other, so one part's heap and page cache do not colour the next.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const parts: readonly (readonly string[])[] = [
  ['throughput.ts'],
  ['growth.ts', process.env.BENCH_GROWTH_GB ?? '5'],
  ['open.ts', '1000', '32'],
  ['compaction.ts'],
]
let failed = 0
for (const [file, ...args] of parts) {
  console.log(`\n### ${file}\n`)
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL(file, import.meta.url)), ...args],
    {
      stdio: 'inherit',
    },
  )
  if (r.status !== 0) {
    console.error(`bench/data/${file} exited with ${r.status ?? r.signal}`)
    failed++
  }
}
process.exit(failed === 0 ? 0 : 1)
