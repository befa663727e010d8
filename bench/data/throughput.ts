// Produce and Fetch throughput against Topograph (file log engine, the default) next to the
// ceilings (ceilings.ts), measured in the same run; then produce-to-consume latency at half of
// Topograph's measured Produce throughput.
//
// - Produce v12, one partition, one batch of 16 × 1 KiB records per request (no producer id),
//   acks=1 and acks=-1 (one node: both answer after the append), 4 connections × 8 in flight.
//   MB/s counts record-batch bytes appended.
// - Fetch v12 (no session), one partition, partition max bytes 1 MiB (a Java consumer's
//   max.partition.fetch.bytes), offsets spread over the first 256 MiB of the data just produced,
//   4 connections × 2 in flight. MB/s counts record-batch bytes answered.
// - Latency: an open-loop producer at half of the median acks=1 Produce rate, a consumer long
//   polling (MaxWaitMs 500, MinBytes 1); p50/p99/max from the send of a batch to the read of the
//   Fetch answer holding it.
//
// Each measure runs the ceiling and Topograph in the order ceiling, Topograph, Topograph, ceiling
// (half the time each), so that what else the machine runs weighs on both alike; the ratio of a run
// is Topograph's MB/s over the ceiling's, and the report gives the median over the runs. The
// servers run in this process's one JavaScript thread; the load comes from a forked child.
// TOPOGRAPH_BENCH_BUILD=dist runs the compiled server (bench/server/target.ts); BENCH_PROFILE=<dir>
// writes a CPU profile of the server for each measured Topograph phase; BENCH_ACKS=-1,1 swaps the
// order of the two Produce loads in each run; BENCH_PHASES=1 prints the CPU per request of each
// half-phase (ceiling, Topograph, Topograph, ceiling) as it ends.
//
//   node --import tsx bench/data/throughput.ts [seconds=4] [runs=3]
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { FetchResponse } from '../../src/protocol/generated/messages/FetchResponse.js'
import { fetchRequest, produceRequest } from '../../test/helpers/data-plane.js'
import { decodeResponse, requestFrame } from '../../test/server/wire-client.js'
import { appendCeiling, readCeiling } from './ceilings.js'
import {
  benchBatch,
  createTopic,
  f1,
  f2,
  latencyLoad,
  loadAverage,
  loopbackMBps,
  type Measured,
  mb,
  median,
  pct,
  RECORDS_PER_BATCH,
  runLoad,
  sideBySide,
  startBench,
} from './load.js'

const seconds = Number(process.argv[2] ?? 4)
const runs = Number(process.argv[3] ?? 3)
/** BENCH_DATA_ONLY=produce runs the Produce loads only (for profiles). */
const produceOnly = process.env.BENCH_DATA_ONLY === 'produce'
/** BENCH_ACKS=-1,1 runs the Produce loads of each run in that order (default 1,-1). */
const acksOrder = (process.env.BENCH_ACKS ?? '1,-1').split(',').map(Number)
if (acksOrder.some((a) => a !== 1 && a !== -1)) {
  console.error('BENCH_ACKS: a list of 1 and -1')
  process.exit(2)
}
if (!(seconds > 0) || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: throughput.ts [seconds>0] [runs>=1]')
  process.exit(2)
}
const TOPIC = 'bench-data'
const PRODUCE_VERSION = 12
const FETCH_VERSION = 12
const PARTITION_MAX_BYTES = 1 << 20

const loads: string[] = [loadAverage()]
const wire = [await loopbackMBps()]
const bench = await startBench()
const { server, dataDir, client } = bench
const port = server.address.port
await createTopic(client, TOPIC, 1)
const { batch, stampAt } = benchBatch()
const batchBytes = batch.byteLength

const produceFrame = (acks: number) =>
  requestFrame(0, PRODUCE_VERSION, 1, produceRequest([{ topic: TOPIC, partition: 0, records: batch }], acks))
const frames = { 1: produceFrame(1), [-1]: produceFrame(-1) } as Record<number, Buffer>
const recordsAt = frames[1].indexOf(Buffer.from(batch))
// ProduceResponse v12: correlation id, header tags, responses (1), name, partitions (1), index.
const errorCodeAt = 4 + 1 + 1 + 1 + TOPIC.length + 1 + 4

/** Topograph's answer to a frame, as a complete frame; checks the error code when asked. */
async function answerOf(frame: Buffer, checkAt?: number): Promise<Buffer> {
  client.write(frame)
  const f = (await client.nextFrame()) as Buffer
  if (checkAt !== undefined && f.readInt16BE(checkAt) !== 0)
    throw new Error(`error ${f.readInt16BE(checkAt)}`)
  const out = Buffer.alloc(4 + f.length)
  out.writeInt32BE(f.length, 0)
  out.set(f, 4)
  return out
}
const produceAnswer = await answerOf(frames[1], errorCodeAt)

interface Row {
  readonly ceiling: Measured
  readonly topograph: Measured
}
const produceRows: Record<string, Row[]> = { '1': [], '-1': [] }
const fetchRows: Row[] = []
const latencyRows: Measured[] = []
const spec = { mode: 'closed' as const, seconds, warmupSeconds: 1, connections: 4, depth: 8 }

// Warm-up, not measured: the first seconds of a fresh server compile its hot path, which on a
// loaded machine (compiler threads waiting for a core) takes far longer than a load's warm-up. The
// ceiling takes turns with Topograph in it: both run Node's own stream code in this process, and
// the first ceiling phase after a Topograph-only warm-up deoptimized that code and, with it, the
// connection code compiled on top of it, to be compiled again in the first measured phase.
{
  const file = join(dataDir, 'ceiling-warm-up.bin')
  const ceiling = await appendCeiling(file, recordsAt, batchBytes, produceAnswer)
  for (let i = 0; i < 2; i++) {
    await runLoad({ ...spec, seconds: 1.5, frames: [frames[1]], port, errorCodeAt })
    await runLoad({ ...spec, seconds: 1.5, frames: [frames[1]], port: ceiling.port, errorCodeAt })
  }
  await ceiling.close()
  rmSync(file, { force: true })
}

for (let run = 0; run < runs; run++) {
  for (const acks of acksOrder) {
    const file = join(dataDir, `ceiling-append-${acks}.bin`)
    const ceiling = await appendCeiling(file, recordsAt, batchBytes, produceAnswer)
    const load = { ...spec, frames: [frames[acks]], errorCodeAt }
    const { ceiling: c, topograph: t } = await sideBySide(
      { ...load, port: ceiling.port },
      { ...load, port },
      `produce-acks${acks}-run${run + 1}`,
    )
    await ceiling.close()
    rmSync(file, { force: true })
    if (c.errors + t.errors > 0) throw new Error(`Produce errors: ${t.firstErrorCode}`)
    produceRows[String(acks)].push({ ceiling: c, topograph: t })
    console.log(
      `run ${run + 1} produce acks=${acks}: ceiling ${f1(mbps(c, batchBytes))} MB/s, Topograph ${f1(mbps(t, batchBytes))} MB/s (${pct(mbps(t, 1) / mbps(c, 1))}); CPU µs/request ${f1(c.cpuUsPerRequest)} / ${f1(t.cpuUsPerRequest)}; load ${loadAverage()}`,
    )
  }

  if (produceOnly) continue
  // Fetch: offsets over the first 256 MiB of the log (all in its first segment).
  const log = server.context.data.logs.partition(TOPIC, 0)
  if (log === undefined) throw new Error('no partition')
  const batchesPerFetch = Math.floor(PARTITION_MAX_BYTES / batchBytes)
  const spread = Math.min(256, Math.floor(log.logEndOffset / RECORDS_PER_BATCH / batchesPerFetch) - 1)
  if (spread < 8) throw new Error(`only ${log.logEndOffset} records produced`)
  const fetchFrames = Array.from({ length: spread }, (_, k) =>
    requestFrame(
      1,
      FETCH_VERSION,
      1,
      fetchRequest(
        [
          {
            topic: TOPIC,
            partition: 0,
            offset: k * batchesPerFetch * RECORDS_PER_BATCH,
            maxBytes: PARTITION_MAX_BYTES,
          },
        ],
        {},
      ),
    ),
  )
  const probe = Buffer.alloc(8)
  probe.writeBigInt64BE(BigInt(batchesPerFetch * RECORDS_PER_BATCH))
  const offsetAt = fetchFrames[1].indexOf(probe)
  const answer = await answerOf(fetchFrames[0])
  const decoded = decodeResponse<FetchResponse>(1, FETCH_VERSION, answer.subarray(4)).body
  const records = decoded.responses[0].partitions[0].records
  if (records === null || records.byteLength !== batchesPerFetch * batchBytes)
    throw new Error(`Fetch answered ${records?.byteLength} bytes, expected ${batchesPerFetch * batchBytes}`)
  const recordsStart = answer.indexOf(Buffer.from(records.subarray(0, 64)))
  const segment = join(dataDir, 'logs', `${TOPIC}-0`, '00000000000000000000.log')
  const ceiling = await readCeiling(
    segment,
    offsetAt,
    RECORDS_PER_BATCH,
    batchBytes,
    batchesPerFetch,
    answer.subarray(0, recordsStart),
    answer.subarray(recordsStart + records.byteLength),
  )
  const fetchSpec = { ...spec, depth: 2, frames: fetchFrames }
  const { ceiling: c, topograph: t } = await sideBySide(
    { ...fetchSpec, port: ceiling.port },
    { ...fetchSpec, port },
    `fetch-run${run + 1}`,
  )
  await ceiling.close()
  if (c.bytes === 0 || t.bytes === 0) throw new Error('no Fetch answers')
  fetchRows.push({ ceiling: c, topograph: t })
  const fetched = (m: Measured) => mb(m.requests * batchesPerFetch * batchBytes) / m.seconds
  console.log(
    `run ${run + 1} fetch: ceiling ${f1(fetched(c))} MB/s, Topograph ${f1(fetched(t))} MB/s (${pct(fetched(t) / fetched(c))}); answers ${c.requests} / ${t.requests}, p50 ${f2(c.p50)} / ${f2(t.p50)} ms; CPU µs/answer ${f1(c.cpuUsPerRequest)} / ${f1(t.cpuUsPerRequest)}; load ${loadAverage()}`,
  )
  loads.push(loadAverage())
}

if (produceOnly) {
  client.close()
  await server.close()
  rmSync(dataDir, { recursive: true, force: true })
  process.exit(0)
}
// Latency at half of the median acks=1 throughput.
const maxRate = median(produceRows['1'].map((r) => r.topograph.requests / r.topograph.seconds))
const rate = Math.round(maxRate / 2)
for (let run = 0; run < runs; run++) {
  const log = server.context.data.logs.partition(TOPIC, 0)!
  const m = await latencyLoad({
    port,
    produceFrame: frames[1],
    batchAt: recordsAt,
    stampAt,
    topic: TOPIC,
    fromOffset: log.logEndOffset,
    rate,
    seconds,
  })
  if (m.errors > 0) throw new Error(`latency run: ${m.errors} errors, first ${m.firstErrorCode}`)
  latencyRows.push(m)
  console.log(
    `run ${run + 1} latency at ${rate} batches/s (${f1(mb(rate * batchBytes))} MB/s): p50 ${f2(m.p50)} ms, p99 ${f2(m.p99)} ms, max ${f2(m.max)} ms over ${m.requests} batches; load ${loadAverage()}`,
  )
}
loads.push(loadAverage())
wire.push(await loopbackMBps())

function mbps(m: Measured, bytesPerRequest: number): number {
  return mb(m.requests * bytesPerRequest) / m.seconds
}

// Report: medians over the runs; ratios are the median of the per-run ratios.
const batchesPerFetch = Math.floor(PARTITION_MAX_BYTES / batchBytes)
const fetchedMb = (m: Measured) => mb(m.requests * batchesPerFetch * batchBytes) / m.seconds
console.log(
  `\nbatch ${batchBytes} B (${RECORDS_PER_BATCH} × 1 KiB values), ${runs} run(s) of ${seconds} s, load average ${loads.join(' → ')}`,
)
console.log(
  `loopback TCP alone (1 MiB writes to a discarding reader, one process): ${wire.map(f1).join(' MB/s before, ')} MB/s after`,
)
console.log(
  '| Measure | ceiling MB/s | p50 / p99 ms | Topograph MB/s | p50 / p99 ms | ratio (runs) | CPU µs/request ceiling / Topograph |',
)
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
const line = (name: string, rows: Row[], rate: (m: Measured) => number) => {
  const m = (pick: (r: Row) => number) => median(rows.map(pick))
  const ratios = rows.map((r) => rate(r.topograph) / rate(r.ceiling))
  console.log(
    `| ${name} | ${f1(m((r) => rate(r.ceiling)))} | ${f2(m((r) => r.ceiling.p50))} / ${f2(m((r) => r.ceiling.p99))} | ${f1(m((r) => rate(r.topograph)))} | ${f2(m((r) => r.topograph.p50))} / ${f2(m((r) => r.topograph.p99))} | **${pct(median(ratios))}** (${ratios.map((x) => Math.round(100 * x)).join(', ')}) | ${f1(m((r) => r.ceiling.cpuUsPerRequest))} / ${f1(m((r) => r.topograph.cpuUsPerRequest))} |`,
  )
}
line('Produce acks=1', produceRows['1'], (x) => mbps(x, batchBytes))
line('Produce acks=-1', produceRows['-1'], (x) => mbps(x, batchBytes))
line('Fetch, 1 MiB per partition', fetchRows, fetchedMb)
console.log(
  `\nProduce-to-consume latency at ${rate} batches/s (${f1(mb(rate * batchBytes))} MB/s, half of ${Math.round(maxRate)}): p50 ${f2(median(latencyRows.map((r) => r.p50)))} ms, p99 ${f2(median(latencyRows.map((r) => r.p99)))} ms (runs: ${latencyRows.map((r) => f2(r.p99)).join(', ')}), max ${f2(Math.max(...latencyRows.map((r) => r.max)))} ms`,
)

client.close()
await server.close()
rmSync(dataDir, { recursive: true, force: true })
