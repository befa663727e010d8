/**
 * Runs every benchmark folder that has an `index.ts` (bench/<area>/index.ts), one after another,
 * each in its own process so one area's heap and JIT state do not colour the next.
 *
 * Run: npm run bench [-- area ...]     e.g. `npm run bench -- codec`
 *
 * An area may need a newer Node than the one running (NEWER_NODE): it then runs on that major
 * version, fetched into the test runner's cache when missing (scripts/lib/node-versions.mjs).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureNode, envFor } from '../scripts/lib/node-versions.mjs'

/**
 * Areas that run on a newer Node than the running one, and why. The codec area measures
 * @platformatic/kafka 2.x, which needs Node 22 or newer; it runs on Node 24, the newest supported.
 */
const NEWER_NODE: Readonly<Record<string, number>> = { codec: 24 }
const runningMajor = Number(process.versions.node.split('.')[0])

const root = dirname(fileURLToPath(import.meta.url))
const wanted = process.argv.slice(2)
const areas = readdirSync(root, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'index.ts')))
  .map((d) => d.name)
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort()

if (areas.length === 0) {
  console.error(`no benchmark folder with an index.ts${wanted.length ? ` among: ${wanted.join(', ')}` : ''}`)
  process.exit(1)
}
let failed = 0
for (const area of areas) {
  const major = NEWER_NODE[area]
  const node = major !== undefined && major > runningMajor ? ensureNode(major) : process.execPath
  console.log(`\n## ${area} (Node ${spawnSync(node, ['-v'], { encoding: 'utf8' }).stdout.trim()})\n`)
  const r = spawnSync(node, ['--import', 'tsx', join(root, area, 'index.ts')], {
    stdio: 'inherit',
    env: node === process.execPath ? process.env : envFor(node),
  })
  if (r.status !== 0) {
    console.error(`bench/${area} exited with ${r.status ?? r.signal}`)
    failed++
  }
}
process.exit(failed === 0 ? 0 : 1)
