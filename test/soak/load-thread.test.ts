// The soak's members' threads run with the server's fixed young generation (the CLI's `#!` line),
// not with one V8 sizes by each thread's allocation: the load's own GC pauses are in the latencies
// it measures.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadThreadHeapFlags, loadWorker } from '../../tools/soak/load-thread.js'
import { cliNodeOptions } from '../helpers/topograph-process.js'

test('loadThreadHeapFlags: the semi-space sizes of the CLI, nothing else', () => {
  const flags = loadThreadHeapFlags()
  assert.ok(flags.length >= 2, `flags ${JSON.stringify(flags)}`)
  for (const f of flags) assert.ok(cliNodeOptions().includes(f), f)
  assert.ok(flags.every((f) => /^--(min|max)-semi-space-size=\d+$/.test(f)))
})

test('loadWorker: a thread that makes short-lived garbage keeps the fixed young generation', async () => {
  const semiSpaceMb = Number(
    (loadThreadHeapFlags().find((f) => f.startsWith('--max-semi-space-size=')) as string).split('=')[1],
  )
  // As a members' thread allocates: small objects that die young, many scavenges' worth. Left to
  // itself, V8 keeps such a thread's young generation at a few MB (4 MB here), and a members'
  // thread at 1 MB scavenged a few times a second.
  const worker = loadWorker(
    `const { parentPort } = require('node:worker_threads')
     const { getHeapSpaceStatistics } = require('node:v8')
     let live = []
     for (let i = 0; i < 3e6; i++) { live.push({ i }); if (live.length > 100) live = [] }
     parentPort.postMessage(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576)`,
    { eval: true },
  )
  try {
    const newSpaceMb = await new Promise((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
    // Two semi-spaces of the fixed size.
    assert.equal(newSpaceMb, 2 * semiSpaceMb)
  } finally {
    await worker.terminate()
  }
})
