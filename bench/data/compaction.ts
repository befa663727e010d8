// The cost of compaction: two identical compacted topics (cleanup.policy=compact, 16 MiB segments)
// get `megabytes` MB each of 16 × 1 KiB-record batches over 1,024 keys. The cleaner cleans the
// first alone (MB/s cleaned, the longest time it held the event loop); then Produce runs on a third,
// uncompacted topic (4 connections × 8 in flight) for the same time without and then with the
// cleaner cleaning the second topic: the Produce MB/s with and without, and the cleaner's rate
// while it shares the thread.
//
// `longest event-loop hold` is the cleaner's own count (its longest slice); `longest loop delay`
// is measured beside it, by a 1-ms timer's delay (perf_hooks.monitorEventLoopDelay) over the clean.
// With `cold` the page cache is emptied before each clean (`sync`, then `1` written to
// /proc/sys/vm/drop_caches: root only, and it empties the machine's whole page cache), so the
// cleaner reads its segments from the disk.
//
//   node --import tsx bench/data/compaction.ts [megabytes=256] [cold]
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { LogManagerImpl } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import { produceRequest } from '../../test/helpers/data-plane.js'
import { requestFrame } from '../../test/server/wire-client.js'
import { benchBatch, createTopic, f1, loadAverage, mb, runLoad, startBench } from './load.js'

const megabytes = Number(process.argv[2] ?? 256)
const cold = process.argv[3] === 'cold'
const KEYS = 1024
const COMPACTED = ['bench-compact-a', 'bench-compact-b']
const LOAD = 'bench-compact-load'
console.log(`load average ${loadAverage()}`)
// The cleaner runs only when this benchmark calls it.
const { server, client } = await startBench({ 'log.cleaner.backoff.ms': '3600000' })
const port = server.address.port
for (const t of COMPACTED)
  await createTopic(client, t, 1, { 'cleanup.policy': 'compact', 'segment.bytes': String(16 << 20) })
await createTopic(client, LOAD, 1)

const keyed = Array.from(
  { length: KEYS / 16 },
  (_, b) => benchBatch((i) => `key-${String(b * 16 + i).padStart(5, '0')}`).batch,
)
const batchBytes = keyed[0].byteLength
const fill = (topic: string) =>
  keyed.map((batch) => requestFrame(0, 12, 1, produceRequest([{ topic, partition: 0, records: batch }], 1)))
const errorCodeAt = (topic: string) => 4 + 1 + 1 + 1 + topic.length + 1 + 4
for (const topic of COMPACTED) {
  const r = await runLoad({
    mode: 'closed',
    port,
    frames: fill(topic),
    seconds: 3600,
    warmupSeconds: 0,
    connections: 4,
    depth: 8,
    maxRequests: Math.ceil((megabytes * 1e6) / batchBytes),
    errorCodeAt: errorCodeAt(topic),
  })
  if (r.errors > 0) throw new Error(`Produce error ${r.firstErrorCode}`)
}
const logs = server.context.data.logs as LogManagerImpl
const cleaner = logs.cleaner
if (cleaner === undefined) throw new Error('no cleaner')
const partition = (t: string) => logs.partition(t, 0) as PartitionLogImpl

function dropPageCache(): void {
  execFileSync('sync')
  writeFileSync('/proc/sys/vm/drop_caches', '1')
}

async function clean(topic: string) {
  const p = partition(topic)
  const before = p.sizeInBytes
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const t0 = performance.now()
  const stats = await cleaner!.clean(p, Date.now())
  const seconds = (performance.now() - t0) / 1000
  delay.disable()
  if (stats === null) throw new Error(`nothing to clean in ${topic}`)
  return { seconds, before, after: p.sizeInBytes, stats, longestDelayMs: delay.max / 1e6 }
}

if (cold) dropPageCache()

const alone = await clean(COMPACTED[0])
const loadSeconds = Math.max(2, alone.seconds)
const produceSpec = {
  mode: 'closed' as const,
  port,
  frames: [requestFrame(0, 12, 1, produceRequest([{ topic: LOAD, partition: 0, records: keyed[0] }], 1))],
  seconds: loadSeconds,
  warmupSeconds: 0.5,
  connections: 4,
  depth: 8,
  errorCodeAt: errorCodeAt(LOAD),
}
const without = await runLoad(produceSpec)
// The load's measured window starts after its warm-up; the clean starts with it.
if (cold) dropPageCache()
const withLoad = runLoad(produceSpec)
await new Promise((r) => setTimeout(r, 500))
const shared = await clean(COMPACTED[1])
const withCleaner = await withLoad
const rate = (m: typeof without) => mb(m.requests * batchBytes) / m.seconds

console.log(
  `\n${COMPACTED.length} compacted topics of ${f1(mb(alone.before))} MB each (${KEYS} keys, ${batchBytes} B batches, 16 MiB segments)${cold ? ', page cache emptied before each clean' : ''}\n`,
)
console.log(
  '| Clean | segments | before → after MB | seconds | MB/s cleaned | longest event-loop hold ms | longest loop delay ms |',
)
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const [name, c] of [
  ['alone', alone],
  ['during Produce', shared],
] as const)
  console.log(
    `| ${name} | ${c.stats.segments} | ${f1(mb(c.stats.bytesBefore))} → ${f1(mb(c.stats.bytesAfter))} | ${c.seconds.toFixed(2)} | ${f1(mb(c.stats.bytesBefore) / c.seconds)} | ${c.stats.longestSliceMs.toFixed(1)} | ${c.longestDelayMs.toFixed(1)} |`,
  )
console.log(
  `\nProduce (acks=1, 4 × 8 in flight) over ${loadSeconds.toFixed(1)} s: ${f1(rate(without))} MB/s without the cleaner, ${f1(rate(withCleaner))} MB/s while it cleans (${Math.round((100 * rate(withCleaner)) / rate(without))} %); p99 ${without.p99.toFixed(2)} → ${withCleaner.p99.toFixed(2)} ms; load average ${loadAverage()}`,
)
client.close()
await server.close()
