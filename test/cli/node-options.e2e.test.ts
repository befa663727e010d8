// The Node options of the CLI's #! line (test/cli/node-options.test.ts) in a real process: an option
// this Node's V8 does not know would stop `topograph start` before it runs anything, and the helper
// pool's size is seen in the threads the process starts.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { test } from 'node:test'
import { cliNodeOptions } from '../helpers/topograph-process.js'

test("Node runs with every option of the CLI's #! line", () => {
  const r = spawnSync(process.execPath, [...cliNodeOptions(), '-e', 'process.exitCode = 7'], {
    encoding: 'utf8',
  })
  assert.equal(r.status, 7, r.stderr)
  assert.equal(r.stderr, '')
})

test("the #! line's --v8-pool-size=0 leaves V8 one helper thread fewer than the CPUs, at least one", () => {
  // Threads of a process that has started: the main thread, Node's own and V8's helper pool (4 by
  // Node's default). Linux's /proc lists them.
  const threads = (options: readonly string[]) => {
    const r = spawnSync(
      process.execPath,
      [...options, '-e', "console.log(require('node:fs').readdirSync('/proc/self/task').length)"],
      { encoding: 'utf8' },
    )
    assert.equal(r.status, 0, r.stderr)
    return Number(r.stdout.trim())
  }
  const helpers = Math.max(1, availableParallelism() - 1)
  assert.equal(threads(cliNodeOptions()), threads([]) - 4 + helpers)
})
