// The check:schemas command without its reference folders: it says it was not run and succeeds,
// unless TOPOGRAPH_REQUIRE_SHARED=1 requires them (CI), and then it fails.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DEFAULT_ALL_DIR, DEFAULT_REFERENCE_DIR } from '../../tools/codegen/check-schemas.js'

const CLI = fileURLToPath(new URL('../../tools/codegen/check-schemas.ts', import.meta.url))

it('prints NOT RUN and succeeds without the reference folders; fails when they are required', () => {
  const none = join(tmpdir(), 'check-schemas-absent-reference')
  const args = ['--import', 'tsx', CLI, '--all', join(none, 'all'), '--reference', join(none, 'core')]
  const env = { ...process.env, TOPOGRAPH_REQUIRE_SHARED: '' }
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', env })
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, /^schemas: NOT RUN: no reference folder found/)
  const required = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    env: { ...env, TOPOGRAPH_REQUIRE_SHARED: '1' },
  })
  assert.equal(required.status, 1)
  assert.match(required.stderr, /TOPOGRAPH_REQUIRE_SHARED=1/)
  // The defaults are the folders beside the repository.
  assert.ok(DEFAULT_ALL_DIR.endsWith(join('shared', 'reference', 'kafka-all')))
  assert.ok(DEFAULT_REFERENCE_DIR.endsWith(join('shared', 'reference', 'kafka-messages')))
})
