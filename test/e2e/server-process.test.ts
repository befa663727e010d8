// The real `topograph start` process: the topic catalog and the cluster id survive a restart, and
// SIGTERM stops it gracefully with exit status 0.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
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
