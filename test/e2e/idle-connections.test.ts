// 10,000 idle connections and 200 slow senders (each dribbling a frame one byte at a time) against a
// real `topograph start` process: the server's memory stays bounded and a well-behaved client is
// still answered. The connection count is capped by the file descriptors this process may open
// (`ulimit -n`; the server is a process of its own with its own limit). Bounds are generous: they
// tell a bounded server from one that buffers per connection; the figures (reported as test
// diagnostics) go to RELIABILITY.md, "Isolation and limits".
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { startTopographProcess, type TopographProcess } from '../helpers/topograph-process.js'
import { decodeResponse, requestFrame, WireClient } from '../server/wire-client.js'

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  assert.ok(m, 'VmRSS in /proc/<pid>/status')
  return Number(m[1]) / 1024
}

/** The descriptors this process may open. */
function fdLimit(): number {
  const out = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim()
  return out === 'unlimited' ? 1_000_000 : Number(out)
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s))
    s.once('error', reject)
  })
}

describe('idle connections and slow senders cost bounded memory', () => {
  let server: TopographProcess
  let dataDir: string
  const sockets: Socket[] = []

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'topograph-idle-'))
    server = await startTopographProcess({
      'data.dir': dataDir,
      'log.storage': 'memory',
      'coordinator.storage': 'memory',
    })
  })
  after(async () => {
    for (const s of sockets) s.destroy()
    await server.kill()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('10,000 idle connections and 200 dribbling senders; a well-behaved client is still answered', async (t) => {
    const pid = server.child.pid!
    // Leave room for the runner's own descriptors.
    const idle = Math.min(10_000, fdLimit() - 500)
    const dribblers = 200
    const well = await WireClient.connect(server.port)
    const apiVersions = { clientSoftwareName: 'idle', clientSoftwareVersion: '1' }
    // Warm the server's request path, then take the baseline.
    for (let i = 0; i < 50; i++) await well.request(18, 3, apiVersions)
    const baseline = rssMb(pid)

    const opened = performance.now()
    for (let i = 0; i < idle; i += 250) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(250, idle - i) }, () => open(server.port)),
      )
      sockets.push(...batch)
    }
    const openMs = performance.now() - opened
    // Slow senders: a Metadata request frame, one byte every 50 ms (a frame never completes in
    // the test's time, so each keeps a partial frame buffered).
    const frame = requestFrame(3, 12, 1, { topics: null })
    const slow: Socket[] = []
    for (let i = 0; i < dribblers; i++) slow.push(await open(server.port))
    sockets.push(...slow)
    let offset = 0
    const dribble = setInterval(() => {
      if (offset < frame.length - 1) {
        for (const s of slow) s.write(frame.subarray(offset, offset + 1))
        offset++
      }
    }, 50)
    try {
      // The well-behaved client meanwhile: round trips of ApiVersions and Metadata.
      const latencies: number[] = []
      for (let i = 0; i < 300; i++) {
        const t0 = performance.now()
        const r = await well.request<{ errorCode: number }>(18, 3, apiVersions)
        assert.equal(r.body.errorCode, ErrorCode.NONE)
        const m = decodeResponse(
          3,
          12,
          await (async () => {
            well.write(requestFrame(3, 12, 10_000 + i, { topics: null }))
            const f = await well.nextFrame(10_000)
            assert.ok(f !== null)
            return f
          })(),
        )
        assert.equal(m.correlationId, 10_000 + i)
        latencies.push(performance.now() - t0)
      }
      latencies.sort((a, b) => a - b)
      const p50 = latencies[Math.floor(latencies.length * 0.5)]
      const p99 = latencies[Math.floor(latencies.length * 0.99)]
      const after = rssMb(pid)
      const perConnKb = ((after - baseline) * 1024) / (idle + dribblers)
      t.diagnostic(
        `${idle} idle + ${dribblers} dribbling connections (fd limit ${fdLimit()}), opened in ${openMs.toFixed(0)} ms; ` +
          `server RSS ${baseline.toFixed(1)} → ${after.toFixed(1)} MB (${perConnKb.toFixed(1)} KB per connection); ` +
          `well-behaved round trip (ApiVersions + Metadata) p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${latencies[latencies.length - 1].toFixed(2)} ms`,
      )
      // Generous: 20 KB per connection would be 200 MB.
      assert.ok(after - baseline < 250, `RSS grew from ${baseline} to ${after} MB`)
      assert.ok(p99 < 1000, `p99 ${p99.toFixed(1)} ms`)
      // Every idle connection is still open and served: one of them answers.
      const probe = sockets[Math.floor(idle / 2)]
      const answered = new Promise<Buffer>((resolve) => probe.once('data', resolve))
      probe.write(requestFrame(18, 3, 5, apiVersions))
      const reply = await answered
      assert.equal(reply.readInt32BE(4), 5)
    } finally {
      clearInterval(dribble)
      well.close()
    }
  })
})
