// Server memory while one partition grows to a large size: Produce of 16 × 1 KiB batches into one
// partition (4 connections × 8 in flight) until it holds `gigabytes` GB, sampling the server's
// (this process's) RSS and V8 heap at every step. With no per-record or per-batch state kept beyond
// the sparse indexes (one offset and one time entry per 4 KiB of log, index.interval.bytes, of the
// active segment only: closed segments keep theirs on disk), both stay flat.
//
//   node --import tsx bench/data/growth.ts [gigabytes=5] [steps=10]
//
// The data goes to BENCH_DATA_DIR (default the OS temp dir) and is removed at the end; check the
// free space first (`df -h`).
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { produceRequest } from '../../test/helpers/data-plane.js'
import { requestFrame } from '../../test/server/wire-client.js'
import { benchBatch, createTopic, f1, loadAverage, mb, runLoad, startBench } from './load.js'

const gigabytes = Number(process.argv[2] ?? 5)
const steps = Number(process.argv[3] ?? 10)
const TOPIC = 'bench-growth'
const { server, dataDir, client } = await startBench()
await createTopic(client, TOPIC, 1)
const { batch } = benchBatch()
const frame = requestFrame(0, 12, 1, produceRequest([{ topic: TOPIC, partition: 0, records: batch }], 1))
const errorCodeAt = 4 + 1 + 1 + 1 + TOPIC.length + 1 + 4
const log = server.context.data.logs.partition(TOPIC, 0)
if (log === undefined) throw new Error('no partition')

const target = gigabytes * 1e9
const perStep = Math.ceil(target / steps / batch.byteLength)
const sample = () => {
  const m = process.memoryUsage()
  return { rss: mb(m.rss), heap: mb(m.heapUsed), external: mb(m.external + m.arrayBuffers) }
}
console.log(`load average ${loadAverage()}`)
console.log(
  '| log size GB | segments | server RSS MB | V8 heap used MB | external + array buffers MB | MB/s this step |',
)
console.log('| ---: | ---: | ---: | ---: | ---: | ---: |')
const row = (size: number, segs: number, s: ReturnType<typeof sample>, rate: string) =>
  console.log(
    `| ${(size / 1e9).toFixed(2)} | ${segs} | ${f1(s.rss)} | ${f1(s.heap)} | ${f1(s.external)} | ${rate} |`,
  )
const segments = () =>
  readdirSync(join(dataDir, 'logs', `${TOPIC}-0`)).filter((f) => f.endsWith('.log')).length
row(log.sizeInBytes, segments(), sample(), '—')
let peakRss = 0
let peakHeap = 0
const sampler = setInterval(() => {
  const s = sample()
  peakRss = Math.max(peakRss, s.rss)
  peakHeap = Math.max(peakHeap, s.heap)
}, 250)
const started = performance.now()
for (let step = 0; step < steps; step++) {
  const before = log.sizeInBytes
  const t0 = performance.now()
  const r = await runLoad({
    mode: 'closed',
    port: server.address.port,
    frames: [frame],
    seconds: 3600,
    warmupSeconds: 0,
    connections: 4,
    depth: 8,
    maxRequests: perStep,
    errorCodeAt,
  })
  if (r.errors > 0) throw new Error(`Produce error ${r.firstErrorCode}`)
  const rate = mb(log.sizeInBytes - before) / ((performance.now() - t0) / 1000)
  row(log.sizeInBytes, segments(), sample(), f1(rate))
}
clearInterval(sampler)
console.log(
  `\n${(log.sizeInBytes / 1e9).toFixed(2)} GB in ${((performance.now() - started) / 1000).toFixed(0)} s; peak RSS ${f1(peakRss)} MB, peak heap ${f1(peakHeap)} MB (sampled every 250 ms); load average ${loadAverage()}`,
)
client.close()
await server.close()
rmSync(dataDir, { recursive: true, force: true })
