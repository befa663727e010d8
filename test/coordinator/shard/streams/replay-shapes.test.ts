// A shard reloaded after a restart keeps state built from records decoded from the store; a live
// shard, from the records its handlers returned. Both go through `replay`, and the objects they
// build must have the same hidden classes (V8's maps): a heartbeat's code optimised for one shape
// turns polymorphic, or slower, on another. The check runs in a child process with
// --allow-natives-syntax (`%HaveSameMap`).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const child = fileURLToPath(new URL('./fixtures/replay-shapes-child.ts', import.meta.url))

test('state replayed from the store has the shapes of state built live', () => {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', child], {
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.deepEqual(JSON.parse(out.trim().split('\n').at(-1)!), {})
})
