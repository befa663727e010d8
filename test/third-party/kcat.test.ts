// kcat (librdkafka) lists the cluster and a created topic.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const run = promisify(execFile)
let ts: TestServer
before(async () => {
  ts = await startTestServer()
})
after(async () => {
  await ts.stop()
})

test('kcat -L sees the broker and the topics', { timeout: 30_000 }, async () => {
  const c = await WireClient.connect(ts.port)
  try {
    await c.request(19, 7, {
      topics: [{ name: 'kcat-topic', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
  } finally {
    c.close()
  }
  const { stdout } = await run('kcat', ['-L', '-b', `127.0.0.1:${ts.port}`, '-m', '10'], { timeout: 20_000 })
  assert.match(stdout, new RegExp(`broker 1 at 127\\.0\\.0\\.1:${ts.port}`))
  assert.match(stdout, /topic "kcat-topic" with 2 partitions:/)
  assert.match(stdout, /partition 0, leader 1, replicas: 1, isrs: 1/)
  assert.match(stdout, /partition 1, leader 1, replicas: 1, isrs: 1/)
})
