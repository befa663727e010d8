// Replays every input of the fuzz corpus (test/fuzz-corpus/) against a fresh `topograph start`
// process of its own: each frame must be answered or its connection closed, the process must
// survive with a bounded RSS, and it must go on answering ApiVersions, Metadata for every topic and
// ListGroups on another connection. A process (not a server in this one) so that an input that
// blocks the event loop or exhausts memory fails its own test and nothing else.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, test } from 'node:test'
import { readCorpus, replayEntry } from '../../tools/fuzz/corpus.js'
import { startTopographProcess } from '../helpers/topograph-process.js'

const CORPUS = fileURLToPath(new URL('../fuzz-corpus', import.meta.url))
const TIMEOUT_MS = 10_000
const MAX_RSS_MB = 512

/** Resident memory of a process in MB (Linux /proc). */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  assert.ok(m, 'VmRSS not found')
  return Number(m[1]) / 1024
}

describe('fuzz corpus', () => {
  for (const entry of readCorpus(CORPUS)) {
    test(`${entry.name}: ${entry.about}`, { timeout: 120_000 }, async () => {
      const server = await startTopographProcess({
        'coordinator.storage': 'memory',
        'group.initial.rebalance.delay.ms': '0',
      })
      try {
        const problems = await replayEntry(server.port, entry, TIMEOUT_MS)
        if (server.child.exitCode !== null || server.child.signalCode !== null) {
          problems.push(
            `the server exited (${server.child.exitCode ?? server.child.signalCode}):\n${server.output()}`,
          )
        } else {
          const rss = rssMb(server.child.pid!)
          if (rss >= MAX_RSS_MB) problems.push(`server RSS ${rss.toFixed(0)} MB, above ${MAX_RSS_MB} MB`)
        }
        assert.deepEqual(problems, [])
      } finally {
        await server.kill()
      }
    })
  }
})
