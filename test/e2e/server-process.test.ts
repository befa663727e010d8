// The real `topograph start` process: the topic catalog and the cluster id survive a restart, and
// SIGTERM stops it gracefully with exit status 0; a second server on the same log directory is refused.
import assert from 'node:assert/strict'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { startTopographProcess, type TopographProcess } from '../helpers/topograph-process.js'
import { tempDataDir } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

test('topics and cluster id survive a restart; SIGTERM exits 0', { timeout: 90_000 }, async () => {
  const dataDir = tempDataDir()
  const procs: TopographProcess[] = []
  try {
    const first = await startTopographProcess({ 'data.dir': dataDir })
    procs.push(first)
    const c1 = await WireClient.connect(first.port)
    const created = await c1.request<AnyBody>(19, 7, {
      topics: [{ name: 'durable', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)
    const before = await c1.request<AnyBody>(3, 12, { topics: null })
    c1.close()
    assert.equal((await first.stop()).code, 0)

    const second = await startTopographProcess({ 'data.dir': dataDir })
    procs.push(second)
    const c2 = await WireClient.connect(second.port)
    const after = await c2.request<AnyBody>(3, 12, { topics: null })
    assert.equal(after.body.clusterId, before.body.clusterId)
    const t = after.body.topics.find((x: AnyBody) => x.name === 'durable')
    assert.ok(t)
    assert.equal(t.topicId, created.body.topics[0].topicId)
    assert.equal(t.partitions.length, 2)
    c2.close()
    assert.equal((await second.stop()).code, 0)
  } finally {
    for (const p of procs) await p.kill()
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('a second server on the same log directory is refused; the first keeps serving it', {
  timeout: 90_000,
}, async () => {
  const dataDir = tempDataDir()
  const otherDataDir = tempDataDir()
  const logDir = join(dataDir, 'logs')
  const procs: TopographProcess[] = []
  try {
    // The coordinator in memory: only the log directory is shared between the two.
    const first = await startTopographProcess({ 'data.dir': dataDir, 'coordinator.storage': 'memory' })
    procs.push(first)
    const c1 = await WireClient.connect(first.port)
    const created = await c1.request<AnyBody>(19, 7, {
      topics: [{ name: 'kept', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)

    await assert.rejects(
      startTopographProcess({
        'data.dir': otherDataDir,
        'log.dirs': logDir,
        'coordinator.storage': 'memory',
      }),
      (e: Error) => {
        assert.match(e.message, /exited \(code 1/)
        assert.match(
          e.message,
          /Failed to acquire lock on file \.lock in .*logs\. Another Topograph server is using this directory\./,
        )
        return true
      },
    )
    assert.ok(existsSync(join(logDir, 'kept-0')) && existsSync(join(logDir, 'kept-1')))
    const offsets = await c1.request<AnyBody>(2, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: 'kept',
          partitions: [0, 1].map((partitionIndex) => ({
            partitionIndex,
            currentLeaderEpoch: -1,
            timestamp: -1n,
          })),
        },
      ],
      timeoutMs: 1000,
    })
    assert.deepEqual(
      offsets.body.topics[0].partitions.map((p: AnyBody) => p.errorCode),
      [0, 0],
    )
    c1.close()
    assert.equal((await first.stop()).code, 0)

    // Once the first has stopped, the directory is free.
    const second = await startTopographProcess({
      'data.dir': otherDataDir,
      'log.dirs': logDir,
      'coordinator.storage': 'memory',
    })
    procs.push(second)
    assert.equal((await second.stop()).code, 0)
  } finally {
    for (const p of procs) await p.kill()
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(otherDataDir, { recursive: true, force: true })
  }
})
