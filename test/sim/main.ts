/**
 * `npm run sim -- --seeds N [--first S] [--steps K]` runs seeds S … S+N−1 (default 1 … N);
 * `--seed S` runs one seed; `--steps-list "op a b; op a b"` runs a given step list (what a shrunk
 * failure prints). A failure prints its seed, the violation and the shortest step list found that
 * reproduces it; the exit status is 1 when any seed failed.
 */
import { formatStep, generate, parseSteps, runSteps, shrink } from './sim.js'

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}

const steps = Number(arg('steps') ?? 120)
const one = arg('seed')
const list = arg('steps-list')
const seeds = one !== undefined ? 1 : Number(arg('seeds') ?? 100)
const first = one !== undefined ? Number(one) : Number(arg('first') ?? 1)
const noShrink = process.argv.includes('--no-shrink')

let failed = 0
const totals: Record<string, number> = {}
const started = Date.now()
for (let seed = first; seed < first + seeds; seed++) {
  const plan = list !== undefined ? parseSteps(list) : generate(seed, steps)
  const r = await runSteps(seed, plan)
  for (const [k, v] of Object.entries(r.stats)) totals[k] = (totals[k] ?? 0) + v
  if ((seed - first + 1) % 100 === 0)
    console.log(`… ${seed - first + 1} seeds, ${failed} failed, ${Date.now() - started} ms`)
  if (r.violation === undefined) continue
  failed++
  console.log(`FAIL seed ${seed} at step ${r.stepIndex} of ${plan.length}: ${r.violation.message}`)
  if (!noShrink) {
    const shortest = await shrink(seed, plan.slice(0, r.stepIndex + 1), r.violation.kind)
    const again = await runSteps(seed, shortest)
    console.log(`  shortest (${shortest.length} steps): ${shortest.map(formatStep).join('; ')}`)
    console.log(`  it fails with: ${again.violation?.message.split('\n')[0]}`)
    console.log(
      `  reproduce: npm run sim -- --seed ${seed} --steps-list "${shortest.map(formatStep).join('; ')}"`,
    )
  }
}
const ms = Date.now() - started
console.log(`${seeds} seeds × ${list !== undefined ? 'given' : steps} steps: ${failed} failed, ${ms} ms`)
if (process.argv.includes('--stats'))
  console.log(
    Object.entries(totals)
      .sort()
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
  )
process.exitCode = failed > 0 ? 1 : 0
