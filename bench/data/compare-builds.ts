// Two compiled builds of Topograph side by side in one process, next to the append ceiling: the
// Produce load of throughput.ts (acks=1 and acks=-1) against each, in the order ceiling, before,
// after, after, before, ceiling (half the time each), and the server CPU per request of each. For
// a change's before/after on a machine too busy for absolute figures: both builds meet the same
// moments of load. `before` and `after` are checkouts with `npm run build` done (`after` defaults to
// this one).
//
// BENCH_COMPARE=fetch compares the Fetch load of throughput.ts instead (no ceiling): each server is
// first filled with the same 256 MiB, then 1 MiB answers at offsets spread over them, before,
// after, after, before; reported as server CPU per answer and per MB answered.
//
//   node --import tsx bench/data/compare-builds.ts <before-checkout> [after-checkout=.] [seconds=4] [runs=3]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { fetchRequest, produceRequest } from '../../test/helpers/data-plane.js'
import { requestFrame, WireClient } from '../../test/server/wire-client.js'
import { appendCeiling } from './ceilings.js'
import {
  benchBatch,
  createTopic,
  loadAverage,
  type Measured,
  merged,
  RECORDS_PER_BATCH,
  runLoad,
} from './load.js'

const [beforeArg, afterArg = '.', secondsArg = '4', runsArg = '3'] = process.argv.slice(2)
if (beforeArg === undefined) {
  console.error('usage: compare-builds.ts <before-checkout> [after-checkout=.] [seconds] [runs]')
  process.exit(2)
}
const seconds = Number(secondsArg)
const runs = Number(runsArg)
const TOPIC = 'bench-data'
async function start(checkout: string) {
  const at = (file: string) => pathToFileURL(join(resolve(checkout), 'dist/src/server', file)).href
  const server = await import(at('server.js'))
  const config = await import(at('config.js'))
  const logger = await import(at('logger.js'))
  const dir = mkdtempSync(join(tmpdir(), 'topograph-bench-compare-'))
  const s = await server.startServer(
    config.parseConfig({ listeners: 'PLAINTEXT://127.0.0.1:0', 'data.dir': dir, 'console.listener': 'none' }),
    { logger: logger.createLogger({ level: 'silent' }) },
  )
  const client = await WireClient.connect(s.address.port)
  await createTopic(client, TOPIC, 1)
  return { s, dir, client, port: s.address.port as number }
}
const base = await start(beforeArg)
const next = await start(afterArg)
const { batch } = benchBatch()
const frame = (acks: number) =>
  requestFrame(0, 12, 1, produceRequest([{ topic: TOPIC, partition: 0, records: batch }], acks))
const errorCodeAt = 4 + 1 + 1 + 1 + TOPIC.length + 1 + 4
const f1 = frame(1)
const recordsAt = f1.indexOf(Buffer.from(batch))
next.client.write(f1)
const ans = (await next.client.nextFrame()) as Buffer
const answer = Buffer.alloc(4 + ans.length)
answer.writeInt32BE(ans.length, 0)
answer.set(ans, 4)
const spec = {
  mode: 'closed' as const,
  seconds: seconds / 2,
  warmupSeconds: 1,
  connections: 4,
  depth: 8,
  errorCodeAt,
}
{
  // Warm-up with the ceiling in turn: it runs Node's stream code in this process too, and its first
  // phase after a warm-up without it deoptimizes that code and the servers' code built on it.
  const file = join(base.dir, 'ceiling-warm-up.bin')
  const ceiling = await appendCeiling(file, recordsAt, batch.byteLength, answer)
  for (const port of [base.port, next.port, ceiling.port, base.port, next.port, ceiling.port])
    await runLoad({ ...spec, seconds: 1.5, frames: [f1], port })
  await ceiling.close()
  rmSync(file, { force: true })
}
if (process.env.BENCH_COMPARE === 'fetch') await compareFetch()
const rows: { acks: number; c: Measured; b: Measured; n: Measured }[] = []
for (let run = 0; run < runs; run++) {
  for (const acks of [1, -1]) {
    const file = join(base.dir, `ceiling-append-${acks}.bin`)
    const ceiling = await appendCeiling(file, recordsAt, batch.byteLength, answer)
    const load = { ...spec, frames: [frame(acks)] }
    const c1 = await runLoad({ ...load, port: ceiling.port })
    const b1 = await runLoad({ ...load, port: base.port })
    const n1 = await runLoad({ ...load, port: next.port })
    const n2 = await runLoad({ ...load, port: next.port })
    const b2 = await runLoad({ ...load, port: base.port })
    const c2 = await runLoad({ ...load, port: ceiling.port })
    await ceiling.close()
    rmSync(file, { force: true })
    const c = merged(c1, c2),
      b = merged(b1, b2),
      n = merged(n1, n2)
    rows.push({ acks, c, b, n })
    const mbps = (m: Measured) => ((m.requests * batch.byteLength) / 1e6 / m.seconds).toFixed(1)
    console.log(
      `run ${run + 1} acks=${acks}: MB/s ceiling ${mbps(c)} before ${mbps(b)} after ${mbps(n)}; CPU µs/request ceiling ${c.cpuUsPerRequest.toFixed(1)} before ${b.cpuUsPerRequest.toFixed(1)} after ${n.cpuUsPerRequest.toFixed(1)} (×${(b.cpuUsPerRequest / c.cpuUsPerRequest).toFixed(2)} → ×${(n.cpuUsPerRequest / c.cpuUsPerRequest).toFixed(2)}); load ${loadAverage()}`,
    )
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const acks of [1, -1]) {
  const r = rows.filter((x) => x.acks === acks)
  console.log(
    `acks=${acks} medians: CPU µs/request ceiling ${med(r.map((x) => x.c.cpuUsPerRequest)).toFixed(1)} before ${med(r.map((x) => x.b.cpuUsPerRequest)).toFixed(1)} after ${med(r.map((x) => x.n.cpuUsPerRequest)).toFixed(1)}; ratio to ceiling before ×${med(r.map((x) => x.b.cpuUsPerRequest / x.c.cpuUsPerRequest)).toFixed(2)} after ×${med(r.map((x) => x.n.cpuUsPerRequest / x.c.cpuUsPerRequest)).toFixed(2)}`,
  )
}
async function compareFetch(): Promise<never> {
  // The same log in both: 256 MiB past what the warm-up wrote.
  const batches = Math.ceil((256 << 20) / batch.byteLength)
  for (const t of [base, next])
    await runLoad({
      ...spec,
      seconds: 600,
      warmupSeconds: 0,
      frames: [f1],
      port: t.port,
      maxRequests: batches,
    })
  const perAnswer = Math.floor((1 << 20) / batch.byteLength)
  const fetchFrames = Array.from({ length: Math.floor(batches / perAnswer) - 1 }, (_, k) =>
    requestFrame(
      1,
      12,
      1,
      fetchRequest(
        [{ topic: TOPIC, partition: 0, offset: k * perAnswer * RECORDS_PER_BATCH, maxBytes: 1 << 20 }],
        {},
      ),
    ),
  )
  const load = { mode: 'closed' as const, seconds: seconds / 2, warmupSeconds: 1, connections: 4, depth: 2 }
  const mb = (m: Measured) => (m.requests * perAnswer * batch.byteLength) / 1e6
  const cpuPerMb = (m: Measured) => (m.cpuUsPerRequest * m.requests) / mb(m)
  const out: { b: Measured; n: Measured }[] = []
  for (let run = 0; run < runs; run++) {
    const b1 = await runLoad({ ...load, frames: fetchFrames, port: base.port })
    const n1 = await runLoad({ ...load, frames: fetchFrames, port: next.port })
    const n2 = await runLoad({ ...load, frames: fetchFrames, port: next.port })
    const b2 = await runLoad({ ...load, frames: fetchFrames, port: base.port })
    const b = merged(b1, b2),
      n = merged(n1, n2)
    out.push({ b, n })
    console.log(
      `run ${run + 1} fetch: MB/s before ${(mb(b) / b.seconds).toFixed(1)} after ${(mb(n) / n.seconds).toFixed(1)}; CPU µs/answer before ${b.cpuUsPerRequest.toFixed(0)} after ${n.cpuUsPerRequest.toFixed(0)}; CPU µs/MB before ${cpuPerMb(b).toFixed(0)} after ${cpuPerMb(n).toFixed(0)} (after ÷ before ${(cpuPerMb(n) / cpuPerMb(b)).toFixed(2)}); load ${loadAverage()}`,
    )
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  console.log(
    `fetch medians: CPU µs/MB before ${med(out.map((x) => cpuPerMb(x.b))).toFixed(0)} after ${med(out.map((x) => cpuPerMb(x.n))).toFixed(0)}; after ÷ before ${med(out.map((x) => cpuPerMb(x.n) / cpuPerMb(x.b))).toFixed(2)}`,
  )
  await close()
  process.exit(0)
}

async function close(): Promise<void> {
  for (const t of [base, next]) {
    t.client.close()
    await t.s.close()
    rmSync(t.dir, { recursive: true, force: true })
  }
}
await close()
process.exit(0)
