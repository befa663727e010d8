/**
 * bench/quotas: one flooding producer against one well-behaved producer on a real `topograph
 * start` process, with and without a producer_byte_rate quota on the flooder's client id.
 *
 * - The flooder (a process of its own) pipelines Produce requests of 64 KB batches as fast as the
 *   server reads them (acks=1, client id `flood`); it ignores ThrottleTimeMs, so only the server's
 *   muting of its connection can hold it back.
 * - The well-behaved client (this process, client id `good`) sends one Produce of one small record
 *   every 20 ms and measures each round trip.
 *
 * Phases of PHASE_MS each: the good client alone; with the flood; with the flood under a quota of
 * QUOTA bytes/s (set by AlterClientQuotas on clients/flood). Printed: the good client's p50/p99/max,
 * the flooder's bytes/s and the largest ThrottleTimeMs it was sent.
 *
 * Run: npm run bench -- quotas   (PHASE_MS, QUOTA override the defaults)
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeBatch, produceRequest } from '../../test/helpers/data-plane.js'
import { startTopographProcess } from '../../test/helpers/topograph-process.js'
import { decodeResponse, requestFrame, WireClient } from '../../test/server/wire-client.js'

const PHASE_MS = Number(process.env.PHASE_MS ?? 10_000)
const QUOTA = Number(process.env.QUOTA ?? 1_048_576)

/** The flooder: argv port, a file holding the request frame. Prints "bytes <n> throttle <maxMs>" every second. */
const FLOODER = `
const net = require('node:net')
const [port, file] = process.argv.slice(1)
const frame = require('node:fs').readFileSync(file)
const s = net.connect(Number(port), '127.0.0.1')
let sent = 0, answered = 0, maxThrottle = 0, tail = Buffer.alloc(0)
let draining = false
function pump() {
  if (draining) return
  while (sent - answered < 64) {
    sent++
    if (!s.write(frame)) { draining = true; s.once('drain', () => { draining = false; pump() }); return }
  }
}
s.on('connect', pump)
s.on('data', (chunk) => {
  let b = tail.length ? Buffer.concat([tail, chunk]) : chunk
  while (b.length >= 4) {
    const n = b.readInt32BE(0)
    if (b.length < 4 + n) break
    // Produce v9 answer: correlation id, header tags, topics…, then ThrottleTimeMs before the
    // trailing tags; read it from the end: int32 then one tag byte.
    maxThrottle = Math.max(maxThrottle, b.readInt32BE(4 + n - 5))
    answered++
    b = b.subarray(4 + n)
  }
  tail = b
  pump()
})
s.on('error', () => process.exit(1))
setInterval(() => {
  process.stdout.write('bytes ' + answered * frame.length + ' throttle ' + maxThrottle + '\\n')
}, 1000)
`

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN
}

const dataDir = mkdtempSync(join(tmpdir(), 'topograph-bench-quotas-'))
const server = await startTopographProcess({
  'data.dir': dataDir,
  'log.storage': 'memory',
  'coordinator.storage': 'memory',
})
try {
  const admin = await WireClient.connect(server.port)
  await admin.request(19, 7, {
    topics: [
      { name: 'flood', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [] },
      { name: 'good', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [] },
    ],
    timeoutMs: 5000,
  })
  const floodFrame = requestFrame(
    0,
    9,
    1,
    produceRequest(
      [
        {
          topic: 'flood',
          partition: 0,
          records: makeBatch([{ key: null, value: 'x'.repeat(65_536), timestamp: Date.now() }]),
        },
      ],
      1,
    ),
    'flood',
  )
  const floodFile = join(dataDir, 'flood-frame.bin')
  writeFileSync(floodFile, floodFrame)
  const goodBody = produceRequest(
    [
      {
        topic: 'good',
        partition: 0,
        records: makeBatch([{ key: null, value: 'hello', timestamp: Date.now() }]),
      },
    ],
    1,
  )
  const good = await WireClient.connect(server.port)
  let correlation = 1
  const goodRound = async (): Promise<number> => {
    const t = performance.now()
    good.write(requestFrame(0, 9, correlation++, goodBody, 'good'))
    const f = await good.nextFrame(30_000)
    if (f === null) throw new Error('good client closed')
    decodeResponse(0, 9, f)
    return performance.now() - t
  }

  const phase = async (name: string, flood: boolean): Promise<void> => {
    let floodBytes = 0
    let floodThrottle = 0
    let child: ReturnType<typeof spawn> | undefined
    if (flood) {
      child = spawn(process.execPath, ['-e', FLOODER, String(server.port), floodFile], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      child.stdout?.on('data', (d: Buffer) => {
        const m = /bytes (\d+) throttle (\d+)\s*$/.exec(d.toString().trim())
        if (m) {
          floodBytes = Number(m[1])
          floodThrottle = Number(m[2])
        }
      })
      await new Promise((r) => setTimeout(r, 1000))
    }
    const start = floodBytes
    const t0 = performance.now()
    const latencies: number[] = []
    while (performance.now() - t0 < PHASE_MS) {
      latencies.push(await goodRound())
      await new Promise((r) => setTimeout(r, 20))
    }
    const seconds = (performance.now() - t0) / 1000
    child?.kill()
    latencies.sort((a, b) => a - b)
    const rate = flood ? `${((floodBytes - start) / seconds / 1_048_576).toFixed(2)} MB/s` : '—'
    console.log(
      `| ${name} | ${latencies.length} | ${percentile(latencies, 0.5).toFixed(2)} | ${percentile(latencies, 0.99).toFixed(2)} | ${latencies[latencies.length - 1].toFixed(2)} | ${rate} | ${flood ? floodThrottle : '—'} |`,
    )
    await new Promise((r) => setTimeout(r, 500))
  }

  console.log(`Phases of ${PHASE_MS} ms; quota ${QUOTA} bytes/s on clients/flood in the last.\n`)
  console.log(
    '| phase | good requests | good p50 ms | good p99 ms | good max ms | flood rate | flood max ThrottleTimeMs |',
  )
  console.log('|---|---|---|---|---|---|---|')
  await phase('good client alone', false)
  await phase('with the flood, no quota', true)
  const r = await admin.request<{ entries: { errorCode: number }[] }>(49, 1, {
    entries: [
      {
        entity: [{ entityType: 'client-id', entityName: 'flood' }],
        ops: [{ key: 'producer_byte_rate', value: QUOTA, remove: false }],
      },
    ],
    validateOnly: false,
  })
  if (r.body.entries[0].errorCode !== 0) throw new Error(`AlterClientQuotas: ${r.body.entries[0].errorCode}`)
  await phase(`with the flood, producer_byte_rate ${QUOTA}`, true)
  good.close()
  admin.close()
} finally {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
