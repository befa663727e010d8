// The real `topograph start` process: the topic catalog and the cluster id survive a restart, and
// SIGTERM stops it gracefully with exit status 0.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { test } from 'node:test'
import { tempDataDir } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

interface Proc {
  readonly child: ChildProcess
  readonly port: number
  readonly exited: Promise<number | null>
}

async function startProcess(dataDir: string): Promise<Proc> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli/topograph.ts',
      'start',
      '--override',
      'listeners=PLAINTEXT://127.0.0.1:0',
      '--override',
      `data.dir=${dataDir}`,
      '--override',
      'console.listener=none',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let out = ''
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line in time:\n${out}`)), 20_000)
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /Listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString()
    })
    exited.then(() => reject(new Error(`process exited:\n${out}`)))
  })
  return { child, port, exited }
}

test('topics and cluster id survive a restart; SIGTERM exits 0', { timeout: 90_000 }, async () => {
  const dataDir = tempDataDir()
  const procs: Proc[] = []
  try {
    const first = await startProcess(dataDir)
    procs.push(first)
    const c1 = await WireClient.connect(first.port)
    const created = await c1.request<AnyBody>(19, 7, {
      topics: [{ name: 'durable', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)
    const before = await c1.request<AnyBody>(3, 12, { topics: null })
    c1.close()
    first.child.kill('SIGTERM')
    assert.equal(await first.exited, 0)

    const second = await startProcess(dataDir)
    procs.push(second)
    const c2 = await WireClient.connect(second.port)
    const after = await c2.request<AnyBody>(3, 12, { topics: null })
    assert.equal(after.body.clusterId, before.body.clusterId)
    const t = after.body.topics.find((x: AnyBody) => x.name === 'durable')
    assert.ok(t)
    assert.equal(t.topicId, created.body.topics[0].topicId)
    assert.equal(t.partitions.length, 2)
    c2.close()
    second.child.kill('SIGTERM')
    assert.equal(await second.exited, 0)
  } finally {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  }
})
