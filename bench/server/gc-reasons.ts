// Counts V8's --trace-gc lines by kind and reason, and the starts of incremental marking by reason
// (--trace-incremental-marking), per latency run: reads the output of `BENCH_TRACE_GC=1 …
// bench/data/latency-trace.ts` or `… bench/server/commit-trace.ts` (a line "latency run N begins"
// opens each run, see `traceGcDuring` in gc-events.ts).
// How many collections of each kind a run makes, and why V8 started them (an allocation failure in
// the young generation, incremental marking finalized, external memory pressure, …), depends little
// on the machine's load, unlike the latency.
//
//   npx tsx bench/server/gc-reasons.ts <log>
import { readFileSync } from 'node:fs'

const file = process.argv[2]
if (file === undefined) throw new Error('usage: gc-reasons.ts <log>')
// "[pid:0x…]   1234 ms: Mark-Compact 80.1 (100.2) -> 60.0 (90.3) MB, …, 3.2 / 0.0 ms  (+ …) (average mu = …) reason; reason"
const LINE =
  /ms: ([A-Za-z-]+(?: \([a-z]+\))?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, .*?([\d.]+) \/ [\d.]+ ms .*\) ([^()]*)$/
let run = ''
const counts = new Map<string, Map<string, { n: number; ms: number }>>()
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const begin = /^latency run (\d+) begins/.exec(line)
  if (begin !== null) {
    run = `run ${begin[1]}`
    counts.set(run, new Map())
    continue
  }
  if (run === '') continue
  const start = /\[IncrementalMarking\] Start \(([^)]*)\)/.exec(line)
  const m = start === null ? LINE.exec(line) : null
  if (start === null && m === null) continue
  const key =
    m === null ? `incremental marking started: ${start![1]}` : `${m[1]}: ${m[3].replace(/;\s*$/, '').trim()}`
  const byKey = counts.get(run)!
  const c = byKey.get(key) ?? { n: 0, ms: 0 }
  c.n++
  c.ms += m === null ? 0 : Number(m[2])
  byKey.set(key, c)
}
for (const [r, byKey] of counts) {
  console.log(r)
  for (const [k, c] of [...byKey].sort((a, b) => b[1].n - a[1].n))
    console.log(`  ${String(c.n).padStart(5)}  ${c.ms.toFixed(1).padStart(8)} ms  ${k}`)
}
