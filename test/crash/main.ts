/**
 * The crash-point campaign: kill -9 of a real `topograph start` process at seeded moments of each
 * operation, then one checker of the coordinator and data-plane invariants after the restart.
 *
 *   npm run crash -- [--runs N] [--from R] [--ops a,b] [--seed S] [--only RUN] [--entry dist] [--keep] [--verbose]
 *
 * N runs per operation (default 100), numbered from R (default 0: `--from 25 --runs 100` makes runs
 * 25 to 99, to carry on a campaign that was stopped); operations: push, delete, cleanup, conversion, produce,
 * retention, compaction, transaction (default all). Run r of operation o in a campaign with seed S
 * draws everything random (the kill trigger, batch sizes, commit or abort) from a generator seeded
 * with (S, o, r) alone, so `--ops o --seed S --only r` runs it again. The moment of the kill is a
 * count of acknowledgements plus a delay, so a rerun kills at the same point of the operation's
 * progress, not at the same instruction. `--entry dist` starts the built CLI
 * (`dist/src/cli/topograph.js`, `npm run build` first: it starts faster than the sources through
 * tsx). The exit status is 1 when any run found a violation.
 */
import { parseArgs } from 'node:util'
import { parseSeed } from '../../tools/fuzz/rng.js'
import { OPERATIONS } from './ops.js'
import { type RunResult, runOne } from './run.js'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100' },
    from: { type: 'string', default: '0' },
    ops: { type: 'string' },
    seed: { type: 'string' },
    only: { type: 'string' },
    entry: { type: 'string' },
    verbose: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
})

const seed = parseSeed(values.seed ?? String(Date.now() % 2 ** 31))
const runs = Number(values.runs)
const names = values.ops?.split(',').map((x) => x.trim()) ?? OPERATIONS.map((o) => o.name)
for (const n of names)
  if (!OPERATIONS.some((o) => o.name === n)) {
    console.error(`unknown operation ${n} (known: ${OPERATIONS.map((o) => o.name).join(', ')})`)
    process.exit(2)
  }
const ops = OPERATIONS.filter((o) => names.includes(o.name))
const entry = values.entry === 'dist' ? ['dist/src/cli/topograph.js'] : undefined
const from = Number(values.from)
if (!Number.isInteger(from) || from < 0 || !Number.isInteger(runs) || runs < 0) {
  console.error('--runs and --from take whole numbers')
  process.exit(2)
}
const indices =
  values.only !== undefined
    ? [Number(values.only)]
    : Array.from({ length: Math.max(0, runs - from) }, (_, i) => from + i)

console.log(
  `crash points: seed ${seed}, ${indices.length} run(s) of ${ops.map((o) => o.name).join(', ')}${entry ? ' (built CLI)' : ''}`,
)
const started = Date.now()
let failed = 0
let notStarted = 0
const done = new Map<string, { runs: number; failed: number; ms: number }>()
// Round-robin over the operations, so a campaign stopped early has run each about as often.
for (const run of indices) {
  for (const op of ops) {
    let r: RunResult
    try {
      r = await runOne(op, run, seed, { entry, keep: values.keep })
    } catch (e) {
      // The process did not start: nothing was killed or checked; not counted as a run.
      console.log(
        `${op.name} run ${run}: not run, the server did not start: ${(e as Error).message.split('\n')[0]}`,
      )
      notStarted++
      continue
    }
    const d = done.get(op.name) ?? { runs: 0, failed: 0, ms: 0 }
    d.runs++
    d.ms += r.ms
    done.set(op.name, d)
    const line = `${op.name} run ${run}: ${r.violations.length === 0 ? 'ok' : 'VIOLATION'} (kill ${r.trigger}, ${r.acksAtKill} acks at the kill, ${r.ms} ms: ${r.phases.join('/')})`
    if (values.verbose || r.violations.length > 0) console.log(line)
    if (r.violations.length > 0) {
      failed++
      d.failed++
      for (const v of r.violations) console.log(`  ${v.split('\n').join('\n  ')}`)
      console.log(`  reproduce: npm run crash -- --ops ${op.name} --seed ${seed} --only ${run}`)
    }
  }
  if (!values.verbose)
    console.log(
      `… run ${run} of every operation done, ${failed} violation(s), ${Math.round((Date.now() - started) / 1000)} s`,
    )
}
for (const [name, d] of done)
  console.log(
    `${name}: ${d.runs} run(s), ${d.failed} with violations, ${Math.round(d.ms / d.runs)} ms per run`,
  )
console.log(
  `${failed === 0 ? 'no violations' : `${failed} run(s) with violations`}${notStarted > 0 ? `, ${notStarted} not run (the server did not start)` : ''}, ${Math.round((Date.now() - started) / 1000)} s`,
)
process.exit(failed === 0 ? 0 : 1)
