/**
 * Runs every benchmark folder that has an `index.ts` (bench/<area>/index.ts), one after another,
 * each in its own process so one area's heap and JIT state do not colour the next.
 *
 * Run: npm run bench [-- area ...]     e.g. `npm run bench -- codec`
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

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
  console.log(`\n## ${area}\n`)
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, area, 'index.ts')], {
    stdio: 'inherit',
  })
  if (r.status !== 0) {
    console.error(`bench/${area} exited with ${r.status ?? r.signal}`)
    failed++
  }
}
process.exit(failed === 0 ? 0 : 1)
