// Memory and fairness of a real `topograph start` under requests that used to take it down: a
// CreateTopics for 2147483647 partitions followed by Metadata (the server used to grow to 4 GB and
// die), an all-topics Metadata at max.partitions, and 10,000 requests pipelined on one connection
// while another connection keeps working. The bounds are generous: they tell a bounded server from
// one that allocates per partition or per pipelined request, not fast from slow.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ErrorCode } from '../../src/protocol/errors.js'
import { startTopographProcess, type TopographProcess } from '../helpers/topograph-process.js'
import { decodeResponse, openSocket, requestFrame } from '../server/wire-client.js'

/** Resident memory of a process, in MB. */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  assert.ok(m, 'VmRSS in /proc/<pid>/status')
  return Number(m[1]) / 1024
}

/**
 * Response frames of one connection, split as they arrive (only the unread tail of the previous
 * chunk is copied, so a flood of answers costs linear time in the test process too).
 */
class Frames {
  readonly socket: Socket
  #tail: Buffer = Buffer.alloc(0)
  readonly #ready: Buffer[] = []
  #head = 0
  #waiter: ((f: Buffer) => void) | null = null
  count = 0

  constructor(socket: Socket) {
    this.socket = socket
    socket.on('data', (chunk: Buffer) => {
      let buf = this.#tail.length === 0 ? chunk : Buffer.concat([this.#tail, chunk])
      while (buf.length >= 4) {
        const size = buf.readInt32BE(0)
        if (buf.length < 4 + size) break
        this.#ready.push(buf.subarray(4, 4 + size))
        this.count++
        buf = buf.subarray(4 + size)
      }
      this.#tail = buf
      this.#hand()
    })
  }

  #hand(): void {
    if (this.#waiter === null || this.#head === this.#ready.length) return
    const frame = this.#ready[this.#head++]!
    if (this.#head === this.#ready.length) {
      this.#ready.length = 0
      this.#head = 0
    }
    const w = this.#waiter
    this.#waiter = null
    w(frame)
  }

  next(timeoutMs = 10_000): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no response in time')), timeoutMs)
      this.#waiter = (f) => {
        clearTimeout(t)
        resolve(f)
      }
      this.#hand()
    })
  }
}

async function connect(port: number): Promise<Frames> {
  return new Frames(await openSocket(port))
}

const hex = (s: string) => Buffer.from(s, 'hex')

/** Time a process has spent runnable but waiting for a CPU, in ms (/proc/<pid>/schedstat). */
function runQueueWaitMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6
}

describe('a real server stays bounded', () => {
  let server: TopographProcess
  let dataDir: string

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'topograph-limits-'))
    server = await startTopographProcess({ 'data.dir': dataDir })
  })
  after(async () => {
    await server.kill()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('CreateTopics for 2147483647 partitions, then Metadata: answered within a second, memory unchanged', async () => {
    const pid = server.child.pid!
    const before = rssMb(pid)
    const c = await connect(server.port)
    let t = Date.now()
    c.socket.write(hex('000000240013000200000001ffff000000010001747fffffffffff0000000000000000000003e800'))
    const created = decodeResponse<{ topics: { errorCode: number }[] }>(19, 2, await c.next())
    assert.ok(Date.now() - t < 1000)
    assert.equal(created.body.topics[0]!.errorCode, ErrorCode.POLICY_VIOLATION)
    t = Date.now()
    c.socket.write(hex('000000110003000100000001ffff00000001000174'))
    decodeResponse(3, 1, await c.next())
    // Metadata v12 for all topics, the request that used to run out of memory.
    c.socket.write(requestFrame(3, 12, 2, { topics: null }))
    decodeResponse(3, 12, await c.next())
    assert.ok(Date.now() - t < 1000)
    assert.ok(rssMb(pid) - before < 100, `RSS grew from ${before} to ${rssMb(pid)} MB`)
    c.socket.destroy()
  })

  it('at max.partitions, an all-topics Metadata is answered in bounded memory', async () => {
    const pid = server.child.pid!
    const c = await connect(server.port)
    // 10 topics of topic.max.partitions (10000) partitions: max.partitions (100000) in all.
    for (let i = 0; i < 10; i++) {
      c.socket.write(
        requestFrame(19, 7, i, {
          topics: [
            { name: `full-${i}`, numPartitions: 10_000, replicationFactor: -1, assignments: [], configs: [] },
          ],
          timeoutMs: 5000,
        }),
      )
      const r = decodeResponse<{ topics: { errorCode: number }[] }>(19, 7, await c.next())
      assert.equal(r.body.topics[0]!.errorCode, ErrorCode.NONE)
    }
    c.socket.write(
      requestFrame(19, 7, 10, {
        topics: [{ name: 'one-more', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [] }],
        timeoutMs: 5000,
      }),
    )
    const refused = decodeResponse<{ topics: { errorCode: number }[] }>(19, 7, await c.next())
    assert.equal(refused.body.topics[0]!.errorCode, ErrorCode.POLICY_VIOLATION)
    for (let i = 0; i < 2; i++) {
      c.socket.write(requestFrame(3, 12, 20 + i, { topics: null }))
      const md = decodeResponse<{ topics: { partitions: unknown[] }[] }>(3, 12, await c.next())
      assert.equal(
        md.body.topics.reduce((n, t) => n + t.partitions.length, 0),
        100_000,
      )
    }
    assert.ok(rssMb(pid) < 400, `RSS ${rssMb(pid)} MB`)
    c.socket.destroy()
  })

  it('10,000 requests pipelined on one connection: answered in order; another connection keeps a p99 under 10 ms', async () => {
    const pid = server.child.pid!
    const flood = await connect(server.port)
    const other = await connect(server.port)
    const N = 10_000
    const frames: Buffer[] = []
    for (let i = 0; i < N; i++) frames.push(requestFrame(3, 1, i, { topics: [{ name: 't' }] }))
    flood.socket.write(Buffer.concat(frames))
    const floodDone = (async () => {
      for (let i = 0; i < N; i++) {
        const f = await flood.next(60_000)
        assert.equal(f.readInt32BE(0), i, 'answers in request order')
      }
    })()
    // The latency the server causes: the round trip less the time the server and this process
    // waited for a CPU meanwhile (on a machine busy with other work, that wait is the machine's).
    const latencies: number[] = []
    let duringFlood = 0
    for (let i = 0; i < 300; i++) {
      const waited = runQueueWaitMs(pid) + runQueueWaitMs(process.pid)
      const t = performance.now()
      other.socket.write(requestFrame(18, 3, i, { clientSoftwareName: 'p99', clientSoftwareVersion: '1' }))
      await other.next()
      const elapsed = performance.now() - t
      latencies.push(Math.max(0, elapsed - (runQueueWaitMs(pid) + runQueueWaitMs(process.pid) - waited)))
      if (flood.count < N) duringFlood++
    }
    await floodDone
    assert.ok(duringFlood > 0, 'the other connection was answered while the flood ran')
    latencies.sort((a, b) => a - b)
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!
    assert.ok(p99 < 10, `p99 ${p99.toFixed(2)} ms (${duringFlood} answers during the flood)`)
    assert.ok(rssMb(pid) < 400, `RSS ${rssMb(pid)} MB`)
    flood.socket.destroy()
    other.socket.destroy()
  })
})
