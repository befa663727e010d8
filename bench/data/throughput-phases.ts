// The throughput phases of throughput.ts (its warm-up, then per run the Produce loads, acks=1 and
// acks=-1, and the Fetch load, each against its ceiling), on a Topograph server the caller started:
// throughput.ts measures with them, and latency-trace.ts runs them before its latency runs to see
// the latency load after what throughput.ts does before its own (BENCH_BEFORE=throughput).
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { FetchResponse } from '../../src/protocol/generated/messages/FetchResponse.js'
import { fetchRequest, produceRequest } from '../../test/helpers/data-plane.js'
import { decodeResponse, requestFrame } from '../../test/server/wire-client.js'
import { appendCeiling, readCeiling } from './ceilings.js'
import {
  type BenchServer,
  benchBatch,
  f1,
  f2,
  fillLog,
  loadAverage,
  type Measured,
  mb,
  pct,
  RECORDS_PER_BATCH,
  runLoad,
  sideBySide,
} from './load.js'
import { kernelCounters, pageCache, since } from './kernel-state.js'

const PRODUCE_VERSION = 12
const FETCH_VERSION = 12
export const PARTITION_MAX_BYTES = 1 << 20

export interface Row {
  readonly ceiling: Measured
  readonly topograph: Measured
}

export interface ThroughputPhases {
  /** Produce v12 frames of the bench batch to partition 0, by acks (1 and -1). */
  readonly frames: Record<number, Buffer>
  /** Where the batch starts in each frame, and the stamp in the batch. */
  readonly recordsAt: number
  readonly stampAt: number
  readonly batchBytes: number
  /** Runs the warm-up, not measured (done before the first run). */
  warmUp(): Promise<void>
  /** One run's Produce loads, in `acksOrder`, each against the append ceiling. */
  produce(run: number, acksOrder: readonly number[]): Promise<Record<string, Row>>
  /** One run's Fetch load against the read ceiling. */
  fetch(run: number): Promise<Row>
}

export const mbps = (m: Measured, bytesPerRequest: number): number =>
  mb(m.requests * bytesPerRequest) / m.seconds

/** Fetch MB/s of a measure: each answer holds as many whole batches as PARTITION_MAX_BYTES takes. */
export const fetchedMb = (m: Measured, batchBytes: number): number =>
  mb(m.requests * Math.floor(PARTITION_MAX_BYTES / batchBytes) * batchBytes) / m.seconds

/**
 * The phases on `bench`'s server and `topic` (one partition, created by the caller); every phase
 * prints its line as throughput.ts always has.
 */
export async function throughputPhases(
  bench: BenchServer,
  topic: string,
  seconds: number,
): Promise<ThroughputPhases> {
  const { server, dataDir, client } = bench
  const port = server.address.port
  const { batch, stampAt } = benchBatch()
  const batchBytes = batch.byteLength
  const produceFrame = (acks: number) =>
    requestFrame(0, PRODUCE_VERSION, 1, produceRequest([{ topic, partition: 0, records: batch }], acks))
  const frames = { 1: produceFrame(1), [-1]: produceFrame(-1) } as Record<number, Buffer>
  const recordsAt = frames[1].indexOf(Buffer.from(batch))
  // ProduceResponse v12: correlation id, header tags, responses (1), name, partitions (1), index.
  const errorCodeAt = 4 + 1 + 1 + 1 + topic.length + 1 + 4

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
  const spec = { mode: 'closed' as const, seconds, warmupSeconds: 1, connections: 4, depth: 8 }

  return {
    frames,
    recordsAt,
    stampAt,
    batchBytes,
    // Warm-up, not measured: the first seconds of a fresh server compile its hot path, which on a
    // loaded machine (compiler threads waiting for a core) takes far longer than a load's warm-up.
    // The ceiling takes turns with Topograph in it: both run Node's own stream code in this
    // process, and the first ceiling phase after a Topograph-only warm-up deoptimized that code
    // and, with it, the connection code compiled on top of it, to be compiled again in the first
    // measured phase.
    async warmUp() {
      const file = join(dataDir, 'ceiling-warm-up.bin')
      const ceiling = await appendCeiling(file, recordsAt, batchBytes, produceAnswer)
      for (let i = 0; i < 2; i++) {
        await runLoad({ ...spec, seconds: 1.5, frames: [frames[1]], port, errorCodeAt })
        await runLoad({ ...spec, seconds: 1.5, frames: [frames[1]], port: ceiling.port, errorCodeAt })
      }
      await ceiling.close()
      rmSync(file, { force: true })
    },

    async produce(run, acksOrder) {
      const rows: Record<string, Row> = {}
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
        rows[String(acks)] = { ceiling: c, topograph: t }
        console.log(
          `run ${run + 1} produce acks=${acks}: ceiling ${f1(mbps(c, batchBytes))} MB/s, Topograph ${f1(mbps(t, batchBytes))} MB/s (${pct(mbps(t, 1) / mbps(c, 1))}); CPU µs/request ${f1(c.cpuUsPerRequest)} / ${f1(t.cpuUsPerRequest)}; load ${loadAverage()}`,
        )
      }
      return rows
    },

    // Fetch: offsets over the first 256 MiB of the log (all in its first segment).
    async fetch(run) {
      const log = server.context.data.logs.partition(topic, 0)
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
                topic,
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
        throw new Error(
          `Fetch answered ${records?.byteLength} bytes, expected ${batchesPerFetch * batchBytes}`,
        )
      const recordsStart = answer.indexOf(Buffer.from(records.subarray(0, 64)))
      const segment = join(dataDir, 'logs', `${topic}-0`, '00000000000000000000.log')
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
      const fetched = (m: Measured) => fetchedMb(m, batchBytes)
      console.log(
        `run ${run + 1} fetch: ceiling ${f1(fetched(c))} MB/s, Topograph ${f1(fetched(t))} MB/s (${pct(fetched(t) / fetched(c))}); answers ${c.requests} / ${t.requests}, p50 ${f2(c.p50)} / ${f2(t.p50)} ms; CPU µs/answer ${f1(c.cpuUsPerRequest)} / ${f1(t.cpuUsPerRequest)}; load ${loadAverage()}`,
      )
      return { ceiling: c, topograph: t }
    },
  }
}

/**
 * What a latency benchmark runs before its latency runs, on `topic` (one partition), as
 * BENCH_BEFORE says: `fill` (the default), `fillSeconds` of closed-loop Produce of `frame`; or
 * `throughput[:seconds[:runs]]`, throughput.ts's throughput phases (default 4 s and 3 runs, as
 * `throughput.ts 4 3`), so that the latency runs start from what throughput.ts leaves for its own.
 */
export async function beforeLatencyRuns(
  bench: BenchServer,
  topic: string,
  frame: Uint8Array,
  fillSeconds: number,
): Promise<void> {
  const before = (process.env.BENCH_BEFORE ?? 'fill').split(':')
  if (before[0] === 'fill') return fillLog(bench.server.address.port, frame, topic, fillSeconds)
  if (before[0] !== 'throughput') throw new Error('BENCH_BEFORE: fill or throughput[:seconds[:runs]]')
  const k0 = kernelCounters()
  const t0 = performance.now()
  const phases = await throughputPhases(bench, topic, Number(before[1] ?? 4))
  await phases.warmUp()
  for (let run = 0; run < Number(before[2] ?? 3); run++) {
    await phases.produce(run, [1, -1])
    await phases.fetch(run)
  }
  const s = (performance.now() - t0) / 1000
  const d = pageCache()
  console.log(
    `throughput phases: ${f1(s)} s; ${since(k0, kernelCounters(), s)}; now Dirty ${f1(d.dirty)} MB, Writeback ${f1(d.writeback)} MB`,
  )
}

/**
 * BENCH_SETTLE=<run>:<seconds>[:nosync]: before latency run <run> (1-based), `sync` (not with
 * nosync), then a pause of that many seconds; runs before it and from it compare the two.
 */
export async function settleBefore(run: number): Promise<void> {
  const [at, seconds, how] = (process.env.BENCH_SETTLE ?? '').split(':')
  if (at === '' || Number(at) !== run) return
  const d0 = pageCache()
  const t0 = performance.now()
  if (how !== 'nosync') spawnSync('sync')
  const synced = performance.now() - t0
  await new Promise((r) => setTimeout(r, Number(seconds ?? 0) * 1000))
  const d1 = pageCache()
  console.log(
    `before run ${run}: ${how !== 'nosync' ? `sync (${f1(synced)} ms), then ` : ''}a pause of ${seconds ?? 0} s (Dirty ${f1(d0.dirty)} → ${f1(d1.dirty)} MB, Writeback ${f1(d0.writeback)} → ${f1(d1.writeback)} MB); load ${loadAverage()}`,
  )
}
