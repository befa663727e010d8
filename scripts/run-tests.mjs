// Runs test files under test/ with Node's own test runner (TypeScript through tsx), by tier and on
// one or more Node versions.
//
//   node scripts/run-tests.mjs [--tier unit|e2e|interop]... [--node 20|22|24]... [--matrix] [--list]
//                              [path-substring]...
//
// Tiers (the rule is in scripts/lib/tiers.mjs and the README, "Tests"; it goes by folder and name
// only, so a new file needs no registration):
//   interop  test/interop/**, test/third-party/**, *.interop.test.ts
//   e2e      test/e2e/**, *.e2e.test.ts (sockets, processes, PostgreSQL)
//   unit     every other *.test.ts; scripts/lib/unit-guard.mjs fails a unit file that opens a socket
//            or spawns a process.
// Without --tier every tier runs. Substrings narrow the run to files whose path contains one of
// them. --node runs on that major version (fetched into a cache when it is not the running one:
// scripts/lib/node-versions.mjs); without it, the running Node. --matrix runs the release matrix
// below (what `npm test` does). --list prints the selected files with their tier and runs nothing.
//
// Each run is one `node --test` process; the output ends with the node:test summary lines of every
// run, and the exit status is non-zero when any run failed.
import { execFileSync, spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureNode, envFor } from './lib/node-versions.mjs'
import { TIERS, tierOf } from './lib/tiers.mjs'

/** The release matrix: every tier on the newest supported Node, unit and e2e on the others. */
const MATRIX = [
  { node: 24, tiers: ['unit', 'e2e', 'interop'] },
  { node: 22, tiers: ['unit', 'e2e'] },
  { node: 20, tiers: ['unit', 'e2e'] },
]

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const GUARD = fileURLToPath(new URL('./lib/unit-guard.mjs', import.meta.url))
process.chdir(ROOT)

function walk(dir) {
  const out = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...walk(p))
    else if (name.endsWith('.test.ts')) out.push(relative(ROOT, p))
  }
  return out
}

function usage(message) {
  console.error(
    `${message}\nusage: node scripts/run-tests.mjs [--tier ${TIERS.join('|')}]... [--node MAJOR]... [--matrix] [--list] [path-substring]...`,
  )
  process.exit(2)
}

const tiers = []
const nodes = []
const filters = []
let matrix = false
let list = false
const args = process.argv.slice(2)
for (let i = 0; i < args.length; i++) {
  const a = args[i]
  const [flag, inline] = a.startsWith('--') ? a.split(/=(.*)/s) : [a]
  const value = () => inline ?? args[++i] ?? usage(`${flag} needs a value`)
  if (flag === '--tier') tiers.push(...value().split(','))
  else if (flag === '--node') nodes.push(...value().split(',').map(Number))
  else if (flag === '--matrix') matrix = true
  else if (flag === '--list') list = true
  else if (flag.startsWith('--')) usage(`unknown option ${flag}`)
  else filters.push(a)
}
for (const t of tiers) if (!TIERS.includes(t)) usage(`unknown tier ${t}`)
for (const n of nodes) if (!Number.isInteger(n)) usage('--node takes a major version, e.g. 22')
if (matrix && (tiers.length > 0 || nodes.length > 0))
  usage('--matrix chooses the tiers and Node versions itself')

const all = walk('test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort()
if (all.length === 0) usage('no test files matched')

const current = Number(process.versions.node.split('.')[0])
const plan = matrix
  ? MATRIX
  : (nodes.length > 0 ? nodes : [current]).map((node) => ({ node, tiers: tiers.length > 0 ? tiers : TIERS }))

if (list) {
  const chosen = new Set(plan.flatMap((r) => r.tiers))
  for (const f of all) if (chosen.has(tierOf(f))) console.log(`${tierOf(f).padEnd(8)}${f}`)
  process.exit(0)
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: strips the colour codes of the reporter
const ANSI = /\u001b\[[0-9;]*m/g
const SUMMARY = /^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /
/** In the failing-tests block: the file line and each failed test's own line. */
const FAILED_TEST = /^(test at |\s*✖ )/
const MAX_FAILURES = 200
/** Lines of each failed test's error kept (its message and the diff of an assertion, no stack). */
const ERROR_LINES = 12

/** One `node --test` process; resolves with its exit status and its closing summary lines. */
function runOnce(bin, env, files) {
  const concurrency = process.env.TEST_CONCURRENCY ?? '2'
  const child = spawn(
    bin,
    [
      '--import',
      'tsx',
      '--import',
      GUARD,
      '--test',
      `--test-concurrency=${concurrency}`,
      '--test-reporter=spec',
      ...files,
    ],
    { env: process.stdout.isTTY ? { ...env, FORCE_COLOR: '1' } : env, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let summary = []
  // The spec reporter repeats every failure after "✖ failing tests:"; that block is kept so the
  // closing report names what failed even when only the tail of the output is read.
  let failures = []
  let inFailures = false
  let errorLines = 0
  let partial = ''
  child.stdout.on('data', (chunk) => {
    process.stdout.write(chunk)
    const lines = (partial + chunk.toString('utf8')).split('\n')
    partial = lines.pop()
    for (const raw of lines) {
      const line = raw.replace(ANSI, '')
      if (SUMMARY.test(line)) {
        inFailures = false
        if (line.startsWith('ℹ tests ')) summary = []
        summary.push(line)
      } else if (line.startsWith('✖ failing tests:')) {
        inFailures = true
        failures = []
      } else if (inFailures && failures.length < MAX_FAILURES) {
        // Each failed test's line and the first lines of its error
        if (FAILED_TEST.test(line)) {
          failures.push(line.trim())
          errorLines = 0
        } else if (
          errorLines < ERROR_LINES &&
          failures.at(-1) !== undefined &&
          !failures.at(-1).startsWith('test at ') &&
          line.trim() !== '' &&
          !/^\s*at /.test(line)
        ) {
          failures.push(`  ${line.trim().slice(0, 300)}`)
          errorLines++
        }
      }
    }
  })
  return new Promise((resolve) => {
    child.on('close', (code, signal) => resolve({ status: code ?? 1, signal, summary, failures }))
  })
}

const results = []
for (const run of plan) {
  const files = all.filter((f) => run.tiers.includes(tierOf(f)))
  if (files.length === 0) continue
  const bin = ensureNode(run.node)
  const env = envFor(bin)
  const version = execFileSync(bin, ['-v'], { encoding: 'utf8' }).trim()
  const label = `node ${version} · ${run.tiers.filter((t) => files.some((f) => tierOf(f) === t)).join(', ')} · ${files.length} files`
  console.log(`\n== tests: ${label}`)
  const started = Date.now()
  const r = await runOnce(bin, env, files)
  results.push({ label, seconds: Math.round((Date.now() - started) / 1000), ...r })
}
if (results.length === 0) usage('no test files of the chosen tiers matched')

const failed = results.filter((r) => r.status !== 0 || r.summary.length === 0)
console.log('\n== test runs')
for (const r of results) {
  const outcome = r.status === 0 ? 'passed' : r.signal ? `killed by ${r.signal}` : `FAILED (exit ${r.status})`
  console.log(`${r.label} · ${outcome} in ${r.seconds} s`)
  if (r.summary.length === 0) console.log('ℹ no node:test summary (the runner did not finish)')
  for (const line of r.summary) console.log(line)
  if (r.failures.length > 0) console.log(`failed:\n  ${r.failures.join('\n  ')}`)
}
process.exit(failed.length === 0 ? 0 : 1)
