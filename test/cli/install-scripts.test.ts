// `npm start` and `npm ci` on a fresh clone: npm (11.16 and later) lists every dependency whose
// install script package.json's `allowScripts` does not name, and npm 12 skips those scripts, which
// would leave better-sqlite3 (the embedded storage) without its native module.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>

test('allowScripts names every locked package that has an install script, and only those', () => {
  const lock = json('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> }
  const withScripts = Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && p.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
    .sort()
  assert.ok(withScripts.includes('better-sqlite3'), 'the lock file marks install scripts')
  const allowed = (json('package.json').allowScripts ?? {}) as Record<string, boolean>
  assert.deepEqual(Object.keys(allowed).sort(), withScripts)
  for (const name of withScripts) assert.equal(allowed[name], true, name)
})
