// Start-up collects the garbage of its loads once, before it listens, where the process allows a
// full collection (`--expose-gc` gives `globalThis.gc`), and carries on without one where it does not.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { test } from 'node:test'
import { collectLoadGarbage } from '../../src/server/server.js'
import { startTestServer, tempDataDir } from './harness.js'

const g = globalThis as { gc?: unknown }

test('start-up runs one full collection after loading, before it listens', async () => {
  const dataDir = tempDataDir()
  const first = await startTestServer({}, {}, dataDir)
  await first.stop(true)
  const saved = g.gc
  const calls: number[] = []
  g.gc = () => {
    calls.push(Date.now())
  }
  let server: Awaited<ReturnType<typeof startTestServer>> | undefined
  try {
    // Restarted on the data written by the first start: the coordinator's logs load first.
    server = await startTestServer({}, {}, dataDir)
  } finally {
    g.gc = saved
  }
  try {
    assert.equal(calls.length, 1)
    const socket = connect({ host: '127.0.0.1', port: server.port })
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    socket.destroy()
  } finally {
    await server.stop()
  }
})

test('collectLoadGarbage: nothing without globalThis.gc', () => {
  const saved = g.gc
  try {
    g.gc = undefined
    assert.equal(collectLoadGarbage(), undefined)
    let called = 0
    g.gc = () => {
      called++
    }
    const collected = collectLoadGarbage()
    assert.equal(called, 1)
    assert.ok(collected !== undefined && collected.heapUsedBefore > 0 && collected.heapUsedAfter > 0)
  } finally {
    g.gc = saved
  }
})
