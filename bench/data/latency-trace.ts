// Where the produce-to-consume latency tail comes from: the latency load of throughput.ts (an
// open-loop producer, a consumer long polling from the log end) while the server process records,
// on one clock with the load's send stamps, every event-loop stall (a 1 ms interval timer that fired
// late), every garbage collection and every segment roll. The slow batches are grouped into
// episodes (sent within 5 ms of each other) and each episode is printed with what the server was
// doing from 50 ms before its first send to its last answer.
//
//   node --import tsx bench/data/latency-trace.ts [rate=4370] [seconds=4] [runs=3] [fill-seconds=10]
//
// `fill-seconds` of closed-loop Produce come first (as the throughput runs before the latency runs
// of throughput.ts fill the log), so that the run sees a log of that size and its page cache.
import { type PerformanceEntry, PerformanceObserver, performance } from 'node:perf_hooks'
import { produceRequest } from '../../test/helpers/data-plane.js'
import { requestFrame } from '../../test/server/wire-client.js'
import { benchBatch, createTopic, f1, f2, latencyLoad, loadAverage, mb, runLoad, startBench } from './load.js'

const rate = Number(process.argv[2] ?? 4370)
const seconds = Number(process.argv[3] ?? 4)
const runs = Number(process.argv[4] ?? 3)
const fillSeconds = Number(process.argv[5] ?? 10)
const TOPIC = 'bench-latency'
const SLOW_MS = 5

const bench = await startBench()
const { server, client } = bench
const port = server.address.port
await createTopic(client, TOPIC, 1)
const { batch, stampAt } = benchBatch()
const frame = requestFrame(0, 12, 1, produceRequest([{ topic: TOPIC, partition: 0, records: batch }], 1))
const recordsAt = frame.indexOf(Buffer.from(batch))
const errorCodeAt = 4 + 1 + 1 + 1 + TOPIC.length + 1 + 4
if (fillSeconds > 0)
  await runLoad({
    mode: 'closed',
    port,
    frames: [frame],
    seconds: fillSeconds,
    warmupSeconds: 0,
    connections: 4,
    depth: 8,
    errorCodeAt,
  })

interface Event {
  readonly at: number
  readonly ms: number
  readonly what: string
}
const events: Event[] = []
const epoch = () => performance.timeOrigin + performance.now()

// Event-loop stalls: a 1 ms timer that fires more than 3 ms late.
let last = epoch()
const tick = setInterval(() => {
  const now = epoch()
  if (now - last > 4) events.push({ at: last, ms: now - last, what: 'event loop stalled' })
  last = now
}, 1)
const gcKinds: Record<number, string> = {
  1: 'scavenge',
  2: 'mark-sweep-compact',
  4: 'incremental',
  8: 'weak',
}
const gc = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0) as number
    events.push({
      at: performance.timeOrigin + e.startTime,
      ms: e.duration,
      what: `GC ${gcKinds[kind] ?? kind}`,
    })
  }
})
gc.observe({ entryTypes: ['gc'] })
const log = server.context.data.logs.partition(TOPIC, 0)!
// The partition's store (PartitionLogImpl's, not on the PartitionLog interface) counts segments.
const store = (log as unknown as { store: { segmentCount: number } }).store
let segments = store.segmentCount
const rolls = setInterval(() => {
  const n = store.segmentCount
  if (n !== segments) events.push({ at: epoch(), ms: 0, what: `segments ${segments} → ${n}` })
  segments = n
}, 5)

for (let run = 0; run < runs; run++) {
  events.length = 0
  const m = await latencyLoad({
    port,
    produceFrame: frame,
    batchAt: recordsAt,
    stampAt,
    topic: TOPIC,
    fromOffset: log.logEndOffset,
    rate,
    seconds,
    slowMs: SLOW_MS,
  })
  const slow = [...(m.slow ?? [])].sort((a, b) => a.at - b.at)
  const stalls = events.filter((e) => e.what === 'event loop stalled')
  const gcs = events.filter((e) => e.what.startsWith('GC'))
  console.log(
    `run ${run + 1} at ${rate} batches/s (${f1(mb(rate * batch.byteLength))} MB/s): p50 ${f2(m.p50)} ms, p99 ${f2(m.p99)} ms, max ${f2(m.max)} ms, ${slow.length} of ${m.requests} batches over ${SLOW_MS} ms; load ${loadAverage()}`,
  )
  console.log(
    `  server: ${stalls.length} stalls > 4 ms (longest ${f1(Math.max(0, ...stalls.map((e) => e.ms)))} ms), ${gcs.length} GCs (${f1(gcs.reduce((a, e) => a + e.ms, 0))} ms in all, longest ${f1(Math.max(0, ...gcs.map((e) => e.ms)))} ms)`,
  )
  // Episodes of slow batches and the server events around them.
  const episodes: { from: number; to: number; n: number; worst: number }[] = []
  for (const s of slow) {
    const e = episodes[episodes.length - 1]
    if (e !== undefined && s.at - e.to <= 5) {
      e.to = s.at
      e.n++
      e.worst = Math.max(e.worst, s.ms)
    } else episodes.push({ from: s.at, to: s.at, n: 1, worst: s.ms })
  }
  episodes.sort((a, b) => b.n - a.n)
  for (const e of episodes.slice(0, 8)) {
    const around = events.filter((x) => x.at + x.ms >= e.from - 50 && x.at <= e.to + e.worst)
    console.log(`  episode: ${e.n} slow batches over ${f1(e.to - e.from)} ms, worst ${f1(e.worst)} ms`)
    for (const x of around.slice(0, 8))
      console.log(`    ${f1(x.at - e.from)} ms: ${x.what}${x.ms > 0 ? ` (${f1(x.ms)} ms)` : ''}`)
    if (around.length === 0) console.log('    (nothing in the server process)')
  }
}
clearInterval(tick)
clearInterval(rolls)
gc.disconnect()
client.close()
await server.close()
