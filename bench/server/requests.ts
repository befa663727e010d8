// Requests per second on one core: ApiVersions and Metadata against the Topograph server, next to a
// bare Node server written only for this benchmark (it frames requests and answers fixed bytes, the
// ceiling for any server on this runtime). Servers run in this process's one JavaScript thread (one
// core); the load comes from a child process. Run: node --import tsx bench/server/requests.ts [seconds]
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, connect, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseConfig } from '../../src/server/config.js'
import { createLogger } from '../../src/server/logger.js'
import { startServer } from '../../src/server/server.js'
import { requestFrame } from '../../test/server/wire-client.js'

interface LoadSpec {
  readonly port: number
  readonly frame: Uint8Array
  readonly seconds: number
  readonly connections: number
  readonly depth: number
}
interface LoadResult {
  readonly requests: number
  readonly seconds: number
  readonly p50: number
  readonly p99: number
}

/** Worker: keeps `depth` requests in flight on each connection for `seconds`. */
async function load(spec: LoadSpec): Promise<LoadResult> {
  const frame = Buffer.from(spec.frame)
  const latencies: number[] = []
  let requests = 0
  const end = performance.now() + spec.seconds * 1000
  const start = performance.now()
  await Promise.all(
    Array.from(
      { length: spec.connections },
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = connect({ host: '127.0.0.1', port: spec.port })
          socket.setNoDelay(true)
          const sent: number[] = []
          let buf: Buffer = Buffer.alloc(0)
          const send = () => {
            sent.push(performance.now())
            socket.write(frame)
          }
          socket.on('connect', () => {
            for (let i = 0; i < spec.depth; i++) send()
          })
          socket.on('error', reject)
          socket.on('data', (chunk: Buffer) => {
            buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
            let off = 0
            while (buf.length - off >= 4) {
              const size = buf.readInt32BE(off)
              if (buf.length - off < 4 + size) break
              off += 4 + size
              const now = performance.now()
              latencies.push(now - (sent.shift() as number))
              requests++
              if (now < end) send()
            }
            buf = buf.subarray(off)
            if (sent.length === 0) {
              socket.destroy()
              resolve()
            }
          })
        }),
    ),
  )
  const seconds = (performance.now() - start) / 1000
  latencies.sort((a, b) => a - b)
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]
  return { requests, seconds, p50: q(0.5), p99: q(0.99) }
}

if (process.argv[2] === '--load') {
  process.once('message', (spec: LoadSpec) => {
    load({ ...spec, frame: Buffer.from(spec.frame as unknown as string, 'base64') }).then((r) => {
      process.send?.(r, () => process.exit(0))
    })
  })
} else {
  const seconds = Number(process.argv[2] ?? 3)
  const run = (spec: LoadSpec) =>
    new Promise<LoadResult>((resolve, reject) => {
      const child = fork(fileURLToPath(import.meta.url), ['--load'], { execArgv: ['--import', 'tsx'] })
      child.once('message', (m: LoadResult) => resolve(m))
      child.once('error', reject)
      child.send({ ...spec, frame: Buffer.from(spec.frame).toString('base64') })
    })

  const dataDir = mkdtempSync(join(tmpdir(), 'topograph-bench-'))
  const server = await startServer(
    parseConfig({
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'data.dir': dataDir,
      'coordinator.storage': 'memory',
    }),
    { logger: createLogger({ level: 'silent' }) },
  )
  const apiVersions = requestFrame(18, 3, 1, { clientSoftwareName: 'bench', clientSoftwareVersion: '1' })
  const metadata = requestFrame(3, 12, 1, { topics: null })
  // Ten topics with three partitions each, so Metadata has something to list.
  const { WireClient } = await import('../../test/server/wire-client.js')
  const c = await WireClient.connect(server.address.port)
  await c.request(19, 7, {
    topics: Array.from({ length: 10 }, (_, i) => ({
      name: `bench-${i}`,
      numPartitions: 3,
      replicationFactor: 1,
      assignments: [],
      configs: [],
    })),
    timeoutMs: 1000,
  })
  c.close()

  // The ceiling: frames requests and answers the bytes Topograph answers, with no decoding at all.
  const fixedFrom = async (frame: Buffer): Promise<Buffer> => {
    const probe = await WireClient.connect(server.address.port)
    probe.write(frame)
    const f = (await probe.nextFrame()) as Buffer
    probe.close()
    const out = Buffer.alloc(4 + f.length)
    out.writeInt32BE(f.length, 0)
    f.copy(out, 4)
    return out
  }
  const bare = async (answer: Buffer): Promise<Server> => {
    const s = createServer({ noDelay: true }, (socket) => {
      let buf: Buffer = Buffer.alloc(0)
      socket.on('data', (chunk: Buffer) => {
        buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
        let off = 0
        const out: Buffer[] = []
        while (buf.length - off >= 4) {
          const size = buf.readInt32BE(off)
          if (buf.length - off < 4 + size) break
          off += 4 + size
          out.push(answer)
        }
        buf = buf.subarray(off)
        for (const o of out) socket.write(o)
      })
      socket.on('error', () => undefined)
    })
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
    return s
  }

  const rows: string[] = []
  for (const [name, frame] of [
    ['ApiVersions v3', apiVersions],
    ['Metadata v12 (10 topics)', metadata],
  ] as const) {
    const bareServer = await bare(await fixedFrom(frame))
    const barePort = (bareServer.address() as { port: number }).port
    const spec = { frame, seconds, connections: 4, depth: 16 }
    const ceiling = await run({ ...spec, port: barePort })
    const ours = await run({ ...spec, port: server.address.port })
    bareServer.close()
    const rps = (r: LoadResult) => Math.round(r.requests / r.seconds)
    rows.push(
      `| ${name} | ${rps(ours)} | ${ours.p50.toFixed(2)} / ${ours.p99.toFixed(2)} | ${rps(ceiling)} | ${ceiling.p50.toFixed(2)} / ${ceiling.p99.toFixed(2)} | ${((100 * rps(ours)) / rps(ceiling)).toFixed(0)} % |`,
    )
  }
  console.log('| Request | Topograph req/s | p50 / p99 ms | bare server req/s | p50 / p99 ms | ratio |')
  console.log('|---|---|---|---|---|---|')
  for (const r of rows) console.log(r)
  await server.close()
  rmSync(dataDir, { recursive: true, force: true })
}
