// Runs every test file under test/ with Node's own test runner (TypeScript through tsx).
// Arguments narrow the run to files whose path contains any of them.
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

function walk(dir) {
  const out = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...walk(p))
    else if (/\.test\.ts$/.test(name)) out.push(p)
  }
  return out
}

const filters = process.argv.slice(2)
const files = walk('test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort()
if (files.length === 0) {
  console.error('no test files matched')
  process.exit(1)
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2'
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
)
process.exit(r.status ?? 1)
