// The benchmarks' server runs in the benchmark's own process (bench/server/target.ts): with
// runAsTheCli, as `topograph start` runs it, with the Node options of the CLI's #! line (the run
// itself: target.e2e.test.ts).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { missingCliNodeOptions } from '../../bench/server/target.js'
import { cliNodeOptions } from '../helpers/topograph-process.js'

test("missingCliNodeOptions: the CLI's options a process lacks", () => {
  assert.deepEqual(missingCliNodeOptions(['--import', 'tsx']), cliNodeOptions())
  assert.deepEqual(missingCliNodeOptions([...cliNodeOptions(), '--import', 'tsx']), [])
})
