// The Node options of the CLI's #! line (test/cli/node-options.test.ts) in a real process: an option
// this Node's V8 does not know would stop `topograph start` before it runs anything.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { cliNodeOptions } from '../helpers/topograph-process.js'

test("Node runs with every option of the CLI's #! line", () => {
  const r = spawnSync(process.execPath, [...cliNodeOptions(), '-e', 'process.exitCode = 7'], {
    encoding: 'utf8',
  })
  assert.equal(r.status, 7, r.stderr)
  assert.equal(r.stderr, '')
})
